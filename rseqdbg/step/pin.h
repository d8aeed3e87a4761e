/* SPDX-License-Identifier: GPL-2.0-only */
/* Hold the stepped thread and rseqdbg on one CPU while stepping: a ptrace round trip between
 * two tasks on one CPU costs a context switch, between two CPUs a wake-up across them. The
 * thread's own affinity mask is saved and given back exactly, on every exit path. */
#ifndef RSEQDBG_STEP_PIN_H
#define RSEQDBG_STEP_PIN_H

#include <stdbool.h>
#include <sys/types.h>

/* Hold thread tid of process pid on the CPU it last ran on (or the first one its mask and
 * ours share), rseqdbg with it; a thread held before is released first. 0, or -errno when
 * it stays as it was. */
int rd_pin_hold(pid_t pid, pid_t tid);
/* With aside, give the held thread its own mask for a while and move rseqdbg off the CPU it
 * was held on (to the others of its own mask, when there are any); without, hold both on
 * that CPU again. While the thread runs a critical section at full speed it runs where the
 * program would, and rseqdbg waking up beside it (another thread's event, a look at the
 * passage) does not switch it out, which would make the kernel abort the section. */
void rd_pin_aside(bool aside);
/* Give the held thread its mask back, unless the program changed it meanwhile. Safe in a
 * signal handler; does nothing when no thread is held. */
void rd_pin_release(void);
/* A thread or process that the held thread created (also one reported after the release)
 * inherited the one-CPU mask: give it the mask the held thread had. Nothing happens when
 * parent is another thread or the child's mask is another one. */
void rd_pin_child(pid_t parent, pid_t child);
/* The held thread called exec from a thread other than the leader: it now has tid newtid. */
void rd_pin_renamed(pid_t oldtid, pid_t newtid);

#endif
