// SPDX-License-Identifier: GPL-2.0-only
/*
 * slab_cache: allocations through sc_alloc (slab_cache.S), whose critical section commits
 * only while a flag it keeps in rseq->cpu_id_start survives; the kernel clears it each time
 * the thread is switched out. Prints its own counts.
 *
 *   slab_cache [--iters N]     N allocations on the main thread (default 100)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <unistd.h>

struct sc_thread {
	void *rseq;
	uint64_t *pcpu;
	uint64_t iterations, commits, aborts, exits;
};

long sc_alloc(struct sc_thread *t);

static struct rseq own_rseq __attribute__((aligned(32)));

/* Called once the allocations are done: where a stepper can stop. */
__attribute__((noinline)) void sc_done(const struct sc_thread *t)
{
	__asm__ volatile("" : : "r"(t) : "memory");
}

int main(int argc, char **argv)
{
	struct sc_thread t = {0};
	long iters = 100, cpus = sysconf(_SC_NPROCESSORS_CONF);

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
			iters = strtol(argv[++i], NULL, 10);
		} else {
			fprintf(stderr, "usage: slab_cache [--iters N]\n");
			return 2;
		}
	}
	if (__rseq_size > 0) {
		t.rseq = (char *)__builtin_thread_pointer() + __rseq_offset;
	} else if (syscall(__NR_rseq, &own_rseq, 32, 0, RSEQ_SIG) == 0) {
		t.rseq = &own_rseq;
	} else {
		fprintf(stderr, "slab_cache: rseq registration failed: %s\n", strerror(errno));
		return 1;
	}
	t.pcpu = calloc((size_t)(cpus > 0 ? cpus : 1024) * 8, sizeof(uint64_t));
	if (!t.pcpu)
		return 1;
	for (long i = 0; i < iters; i++)
		sc_alloc(&t);
	sc_done(&t);
	printf("iterations=%lu\ncommits=%lu\naborts=%lu\nexits=%lu\n", (unsigned long)t.iterations,
	       (unsigned long)t.commits, (unsigned long)t.aborts, (unsigned long)t.exits);
	printf("result=%s\n",
	       t.iterations == t.commits + t.aborts + t.exits && t.commits == (uint64_t)iters
		   ? "ok"
		   : "bad");
	return 0;
}
