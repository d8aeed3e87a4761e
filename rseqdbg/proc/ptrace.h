/* SPDX-License-Identifier: GPL-2.0-only */
/* ptrace wrappers: launch or seize a process, track its threads, stop, resume, registers,
 * memory through /proc/PID/mem, and decoded wait events (clone, fork, exec, exit). */
#ifndef RSEQDBG_PROC_PTRACE_H
#define RSEQDBG_PROC_PTRACE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch/arch.h" /* rd_regs_t */

enum rd_tstate {
	RD_T_RUNNING,
	RD_T_STOPPED,
	RD_T_GONE,
};

struct rd_thread {
	pid_t tid;
	enum rd_tstate state;
	int pending_sig; /* delivered on the next resume or at detach */
	bool held;	 /* stopped at one of our breakpoints until they are removed */
	bool group_stop; /* stopped by the program's own stop signal (seen at attach) */
	bool stepping;	 /* single-stepped: its next trap needs no siginfo */
	bool last_step;	 /* last resumed by PTRACE_SINGLESTEP */
	uint64_t stops;	 /* ptrace stops of this thread */
};

struct rd_tracee {
	pid_t pid; /* thread group id */
	bool launched;
	bool exited;	 /* the whole process is gone */
	int exit_status; /* wait status of the thread group leader */
	int memfd;	 /* /proc/PID/mem, read-write */
	struct rd_thread *t;
	size_t nt, capt;
	uint64_t stops; /* ptrace stops reported to us */
};

enum rd_ev_kind {
	RD_EV_NONE,   /* interrupted by a signal to us or the timeout */
	RD_EV_TRAP,   /* SIGTRAP stop: single-step or breakpoint; code = si_code (0 after
			 a single-step, whose trap is not examined) */
	RD_EV_SIGNAL, /* signal-delivery-stop: sig */
	RD_EV_STOP,   /* PTRACE_EVENT_STOP: interrupt, group-stop, new thread */
	RD_EV_CLONE,  /* msg = new thread id */
	RD_EV_FORK,   /* msg = new process id; code = 1 for vfork */
	RD_EV_EXEC,   /* msg = former thread id of the thread that called exec */
	RD_EV_EXITED, /* the thread is gone; status = wait status */
};

struct rd_event {
	enum rd_ev_kind kind;
	pid_t tid;
	int sig;
	int code;
	int status;
	unsigned long msg;
};

/* Set from our signal handlers: a wait returns RD_EV_NONE as soon as it sees it. */
extern volatile sig_atomic_t rd_pt_quit;
/* Async-signal-safe: set rd_pt_quit and make sure a wait about to block returns. */
void rd_pt_request_quit(void);

/* Say in one line why pid cannot be traced (err: -errno from ptrace or /proc): no such
 * process, this process, a zombie, a kernel thread, already traced by another, or the
 * privilege missing. Returns EXIT_ERROR. */
int rd_pid_error(pid_t pid, int err);
/* The debugger that traces pid when it runs this rseqdbg (gdb's extension asking about the
 * process it debugs, directly or through a shell), else 0. */
int rd_debugger_ancestor(pid_t pid);

void rd_tracee_init(struct rd_tracee *tr);
void rd_tracee_free(struct rd_tracee *tr);

/* fork + exec argv with every option set, stopped at the program's first instruction
 * (the exec stop). On error returns -errno, the reason in rd_errmsg(). */
int rd_pt_launch(struct rd_tracee *tr, char **argv);
/* PTRACE_SEIZE every thread of pid (threads keep running). On error returns -errno, the
 * reason in rd_errmsg(). */
int rd_pt_attach(struct rd_tracee *tr, pid_t pid);

struct rd_thread *rd_pt_thread(struct rd_tracee *tr, pid_t tid);
struct rd_thread *rd_pt_add_thread(struct rd_tracee *tr, pid_t tid, enum rd_tstate st);

/* Wait for the next event of any traced thread. timeout_ms 0 = block. Thread states are
 * updated (a stop marks the thread stopped, exits mark it gone, clones add threads). */
int rd_pt_wait(struct rd_tracee *tr, struct rd_event *ev, unsigned int timeout_ms);

int rd_pt_cont(struct rd_tracee *tr, struct rd_thread *t, int sig);
int rd_pt_singlestep(struct rd_tracee *tr, struct rd_thread *t, int sig);
int rd_pt_interrupt(struct rd_thread *t);
int rd_pt_getregs(pid_t tid, rd_regs_t *regs);
int rd_pt_setregs(pid_t tid, const rd_regs_t *regs);
/* The program counter of a stopped thread, of a 64-bit or a 32-bit program. */
int rd_pt_getpc(pid_t tid, uint64_t *pc);
int rd_pt_siginfo(pid_t tid, siginfo_t *si);

/* Memory through /proc/PID/mem (works on read-only text while we trace the process). */
int rd_pt_peek(struct rd_tracee *tr, uint64_t addr, void *buf, size_t len);
int rd_pt_poke(struct rd_tracee *tr, uint64_t addr, const void *buf, size_t len);

/* Detach one stopped thread, delivering its pending signal; a SIGTRAP our single-step left
 * queued is taken first so it never reaches the program. */
int rd_pt_detach(struct rd_tracee *tr, struct rd_thread *t);
/* A new process of a fork event: wait for its first stop. 0 or -errno. */
int rd_pt_child_stopped(pid_t child);
/* Let such a process go untraced. */
void rd_pt_child_detach(pid_t child);
/* Kill the whole process and reap every thread. */
void rd_pt_kill(struct rd_tracee *tr);

#endif
