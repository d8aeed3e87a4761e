// SPDX-License-Identifier: GPL-2.0-only
/*
 * libpcpu_lock.so: a per-CPU spinlock library built on percpu_ops.h (pcpu_lock.h declares
 * it). Its critical section is inlined into pcpu_lock_acquire, its abort handler and
 * stale-cpu stub sit in __rseq_failure, and the descriptors in the shared object's own
 * __rseq_cs tables: a program that links it, or loads it with dlopen, carries no rseq code
 * of its own.
 */
#include "pcpu_lock.h"
#if defined(__aarch64__)
#include "arm64/percpu_ops.h"
#else
#include "percpu_ops.h"
#endif

#define STALE_BIT 0x40000000 /* no CPU has this number */

static struct {
	intptr_t word;
	char pad[56];
} locks[PCPU_LOCK_MAX_CPUS] __attribute__((aligned(64)));

int pcpu_lock_register_current_thread(void)
{
	/* glibc registered the area already (a negative cpu_id: not registered, or failed); a
	 * library that finds none cannot run its sections. */
	if (!__rseq_size || pcpu_cpu() < 0)
		return -1;
	return 0;
}

int pcpu_lock_acquire(struct pcpu_lock_counts *c, uint64_t delay, int stale)
{
	int cpu = pcpu_cpu(), ret;

	if (stale)
		cpu ^= STALE_BIT;
	for (;;) {
		ret = pcpu_lock_delay(&locks[cpu & (PCPU_LOCK_MAX_CPUS - 1)].word, delay, cpu,
				      &c->user_branches);
		if (!ret)
			break;
		if (ret < 0)
			c->handler_entries++;
		else
			c->busy++;
		cpu = pcpu_cpu();
	}
	/* What the lock protects is read after the commit: acquire, as a lock must. */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	c->commits++;
	return cpu;
}

void pcpu_lock_release(int cpu)
{
	__atomic_store_n(&locks[cpu & (PCPU_LOCK_MAX_CPUS - 1)].word, 0, __ATOMIC_RELEASE);
}
