/* SPDX-License-Identifier: GPL-2.0-only */
/* What /proc says of a process or a thread: its state, parent, tracer, pending signals. */
#ifndef RSEQDBG_PROC_STATUS_H
#define RSEQDBG_PROC_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct rd_proc_status {
	char state;	 /* 'R', 'S', 'T', 'Z', 'X', ...; '?' when not said */
	pid_t ppid;	 /* 0 when not said */
	pid_t tracer;	 /* the pid of the debugger attached, 0 when none */
	bool user_mm;	 /* has user memory: not a kernel thread */
	uint64_t sigpnd; /* signals pending for the thread itself, bit n-1 for signal n */
};

/* /proc/PID/status, or /proc/PID/task/TID/status when tid > 0. 0, or -errno when the process
 * or the thread is gone. */
int rd_proc_status(pid_t pid, pid_t tid, struct rd_proc_status *ps);
/* The CPU time thread tid has run, in ns (/proc/PID/task/TID/schedstat), and its state
 * ('R' running or runnable, 'S' or 'D' asleep in the kernel, ...). 0, or -errno. */
int rd_proc_run_ns(pid_t pid, pid_t tid, uint64_t *ns, char *state);
/* "PID (comm)", or "PID" when the name cannot be read. */
void rd_proc_name(pid_t pid, char *buf, size_t len);

#endif
