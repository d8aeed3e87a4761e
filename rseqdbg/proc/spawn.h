/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The command a tracer runs: forked now, held before exec until the tracer is ready (attached
 * with ptrace, or its BPF filter knows the pid), then let go. A failed exec is reported with
 * its errno. If the tracer dies first, the child exits without running anything.
 */
#ifndef RSEQDBG_PROC_SPAWN_H
#define RSEQDBG_PROC_SPAWN_H

#include <sys/types.h>

struct rd_spawn {
	pid_t pid;  /* 0 when none */
	int go_fd;  /* written once to let the child exec; -1 after */
	int err_fd; /* the errno of a failed exec, or end of file after a good one; -1 after */
};

#define RD_SPAWN_INIT                                                                              \
	{                                                                                          \
		.pid = 0, .go_fd = -1, .err_fd = -1                                                \
	}

/* Fork a child that waits, then execs argv (PATH searched). 0 or -errno. */
int rd_spawn(char **argv, struct rd_spawn *c);
/* Let the child exec. 0, or -errno when it cannot be told (it exited). */
int rd_spawn_go(struct rd_spawn *c);
/* Once the child exec'd or died: -errno of a failed exec, 0 when it ran. A traced child is
 * asked only after its exec stop or its exit: before, it may be stopped and never answer. */
int rd_spawn_result(struct rd_spawn *c);
/* rd_spawn_go, then rd_spawn_result: for a child nobody ptraces. */
int rd_spawn_release(struct rd_spawn *c);
/* Never let it go: the child exits without running anything and is reaped. */
void rd_spawn_abort(struct rd_spawn *c);

#endif
