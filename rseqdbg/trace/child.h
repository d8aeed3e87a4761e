/* SPDX-License-Identifier: GPL-2.0-only */
/* The command that trace and stat run: started held, released once the tracer is attached. */
#ifndef RSEQDBG_TRACE_CHILD_H
#define RSEQDBG_TRACE_CHILD_H

#include <sys/types.h>

/* `-- CMD ARGS`: fork a child that waits on a pipe before exec, so the caller can put its
 * pid in the filter and attach first. */
struct rd_child {
	pid_t pid;
	int go_fd;  /* write end: closing it after a byte lets the child exec */
	int err_fd; /* read end: errno of a failed exec, EOF on success */
};
int rd_child_spawn(char **argv, struct rd_child *c);
/* Let the child exec; returns 0 or the exec's -errno. */
int rd_child_release(struct rd_child *c);
/* Kill a child that will not be released. */
void rd_child_abort(struct rd_child *c);
/* The shell-style exit status of a waitpid() status (128 + signal when killed). */
int rd_wait_status(int status);

/* SIGINT/SIGTERM set this; the poll loops stop. */
extern volatile int rd_tracer_stop;
void rd_tracer_signals(void);

#endif
