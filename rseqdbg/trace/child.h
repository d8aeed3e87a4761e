/* SPDX-License-Identifier: GPL-2.0-only */
/* The command that trace and stat run: started held, released once the tracer is attached. */
#ifndef RSEQDBG_TRACE_CHILD_H
#define RSEQDBG_TRACE_CHILD_H

#include <sys/types.h>

#include "proc/spawn.h"

/* The shell-style exit status of a waitpid() status (128 + signal when killed). */
int rd_wait_status(int status);

/* SIGINT/SIGTERM set this; the poll loops stop. */
extern volatile int rd_tracer_stop;
void rd_tracer_signals(void);

#endif
