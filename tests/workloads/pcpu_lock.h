/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pcpu_lock.h: the interface of libpcpu_lock.so, a per-CPU spinlock library shaped like
 * librseq's (its operation, pcpu_lock_delay of percpu_ops.h, inlined into the library's
 * functions). Taking the lock of the current CPU is one restartable sequence that checks the
 * CPU, leaves by an exit point when the lock is held, turns a delay loop inside the section
 * and stores 1. The caller counts what happened on its way in.
 */
#ifndef PCPU_LOCK_H
#define PCPU_LOCK_H

#include <stdint.h>

#define PCPU_LOCK_MAX_CPUS 1024

/* What one thread's acquisitions went through. Kernel aborts: handler_entries - user_branches. */
struct pcpu_lock_counts {
	uint64_t commits;	  /* locks taken */
	uint64_t handler_entries; /* every return through the abort handler */
	uint64_t user_branches;	  /* stale cpu_id: counted by the stub before the handler */
	uint64_t busy;		  /* the lock was held: left by the exit point */
};

/* 0 when the calling thread has an rseq area registered (by glibc), -1 otherwise. */
int pcpu_lock_register_current_thread(void);

/* Take the lock of the CPU the thread runs on, turning delay iterations of the delay loop in
 * the section; with stale set, the first attempt is given a CPU number no CPU has. Spins
 * until taken. Returns the CPU whose lock is held. */
int pcpu_lock_acquire(struct pcpu_lock_counts *c, uint64_t delay, int stale);

/* Release the lock pcpu_lock_acquire returned, from any CPU. */
void pcpu_lock_release(int cpu);

#endif
