/* SPDX-License-Identifier: GPL-2.0-only */
/* The process the user sees and may kill is not the tracer: killing it, even with SIGKILL,
 * makes the tracer clean up and detach instead of leaving breakpoints in the program. */
#ifndef RSEQDBG_STEP_GUARD_H
#define RSEQDBG_STEP_GUARD_H

#include <signal.h>

/*
 * Fork. The child returns -1 and goes on as the tracer, with on_quit handling SIGINT,
 * SIGTERM, SIGHUP and SIGQUIT; its parent's death, whatever the cause, is delivered to it as
 * SIGHUP. The parent relays those four signals to the child, waits for it and returns its exit
 * status, or dies of the signal that killed it. If fork fails, returns -1 unguarded.
 */
int rd_guard_fork(void (*on_quit)(int));

#endif
