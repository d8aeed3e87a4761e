// SPDX-License-Identifier: GPL-2.0-only
/*
 * pcpu_lock: threads that take per-CPU spinlocks of libpcpu_lock.so (pcpu_lock.h), whose
 * critical section turns a delay loop of --delay iterations before its commit, and increment
 * a per-CPU counter under the lock. More threads than CPUs by default, so sections are
 * preempted (aborted by the kernel) and locks found held (exits). Built twice from this file:
 * pcpu_lock links the library at start-up; pcpu_lock_dlopen loads it with dlopen once main
 * runs (from beside the program, or --lib PATH), so its functions are not mapped at start.
 *
 * Usage: pcpu_lock [--threads N] [--iters N] [--delay N] [--stale-every K] [--hold-us N]
 *                  [--out FILE]
 *        pcpu_lock_dlopen [--lib PATH] [same options]
 * --threads: default twice the CPUs online. --iters: each thread's operations at least
 * (default 2000); every thread goes on until each has run its --iters, so a thread that is
 * slowed down (stepped) never runs alone. --delay: iterations of the delay loop inside the
 * section (default 200000). --stale-every K: every K'th operation of a thread first gives
 * its section a CPU number no CPU has, which branches to the abort handler through the
 * counting stub (default 0: never). --hold-us N: each thread sleeps N microseconds holding
 * the lock (default 0), so that the threads on its CPU find it held, as they do when a holder
 * is preempted.
 *
 * Each thread runs the function worker (where `rseqdbg step --from worker` starts). The
 * report (stdout or --out FILE), key=value lines: threads, iters, delay, hold_us; per thread,
 * named by its TID, thread.TID.KEY for ops, commits, handler_entries, user_branches,
 * kernel_aborts (handler_entries - user_branches) and busy; the same totals without the
 * prefix; counter (the sum of the per-CPU counters); result=ok when counter equals the
 * commits, each thread committed once per operation and no thread branched to its handler
 * more often than it entered it, result=FAIL: WHY otherwise.
 * Exit status: 0 result=ok, 1 result=FAIL, 2 bad usage or setup error.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "pcpu_lock.h"

struct lib {
	int (*register_current_thread)(void);
	int (*acquire)(struct pcpu_lock_counts *c, uint64_t delay, int stale);
	void (*release)(int cpu);
};

struct thread {
	pthread_t thread;
	pid_t tid;
	uint64_t ops;
	struct pcpu_lock_counts c;
};

static struct {
	int threads;
	uint64_t iters;
	uint64_t delay;
	uint64_t stale_every;
	long hold_us;
	const char *out;
	const char *lib;
} opt = {.iters = 2000, .delay = 200000};

static struct lib lib;
static int threads_done;

/* What the locks protect: one counter per CPU, incremented with a plain load and store. */
static struct {
	uint64_t n;
	char pad[56];
} counter[PCPU_LOCK_MAX_CPUS] __attribute__((aligned(64)));

__attribute__((noinline)) void *worker(void *arg)
{
	struct thread *t = arg;
	uint64_t i;

	t->tid = gettid();
	if (lib.register_current_thread()) {
		fprintf(stderr, "pcpu_lock: thread %d has no rseq area\n", (int)t->tid);
		exit(2);
	}
	for (i = 0; i < opt.iters || __atomic_load_n(&threads_done, __ATOMIC_RELAXED) < opt.threads;
	     i++) {
		int stale = opt.stale_every && i % opt.stale_every == opt.stale_every - 1;
		int cpu = lib.acquire(&t->c, opt.delay, stale);

		if (opt.hold_us > 0)
			usleep((useconds_t)opt.hold_us);
		counter[cpu & (PCPU_LOCK_MAX_CPUS - 1)].n++;
		lib.release(cpu);
		if (i + 1 == opt.iters)
			__atomic_add_fetch(&threads_done, 1, __ATOMIC_RELAXED);
	}
	t->ops = i;
	return NULL;
}

#ifdef PCPU_LOCK_DLOPEN
/* The library from --lib, or beside the program (its run path is $ORIGIN). */
static int load(void)
{
	const char *name = opt.lib ? opt.lib : "libpcpu_lock.so";
	void *h = dlopen(name, RTLD_NOW);

	if (!h) {
		fprintf(stderr, "pcpu_lock: %s\n", dlerror());
		return -1;
	}
	lib.register_current_thread = (int (*)(void))dlsym(h, "pcpu_lock_register_current_thread");
	lib.acquire =
	    (int (*)(struct pcpu_lock_counts *, uint64_t, int))dlsym(h, "pcpu_lock_acquire");
	lib.release = (void (*)(int))dlsym(h, "pcpu_lock_release");
	if (!lib.register_current_thread || !lib.acquire || !lib.release) {
		fprintf(stderr, "pcpu_lock: %s lacks a pcpu_lock_ function\n", name);
		return -1;
	}
	return 0;
}
#else
static int load(void)
{
	lib.register_current_thread = pcpu_lock_register_current_thread;
	lib.acquire = pcpu_lock_acquire;
	lib.release = pcpu_lock_release;
	return 0;
}
#endif

static void usage(void)
{
	fprintf(stderr, "Usage: pcpu_lock [--threads N] [--iters N] [--delay N] [--stale-every K] "
			"[--hold-us N] [--out FILE]"
#ifdef PCPU_LOCK_DLOPEN
			" [--lib PATH]"
#endif
			"\n");
	exit(2);
}

static void parse(int argc, char **argv)
{
	static const struct option lo[] = {
	    {"threads", required_argument, NULL, 't'},
	    {"iters", required_argument, NULL, 'i'},
	    {"delay", required_argument, NULL, 'd'},
	    {"stale-every", required_argument, NULL, 'k'},
	    {"hold-us", required_argument, NULL, 'h'},
	    {"out", required_argument, NULL, 'o'},
#ifdef PCPU_LOCK_DLOPEN
	    {"lib", required_argument, NULL, 'l'},
#endif
	    {0},
	};
	int c;

	opt.threads = 2 * get_nprocs();
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 't':
			opt.threads = atoi(optarg);
			break;
		case 'i':
			opt.iters = strtoull(optarg, NULL, 0);
			break;
		case 'd':
			opt.delay = strtoull(optarg, NULL, 0);
			break;
		case 'k':
			opt.stale_every = strtoull(optarg, NULL, 0);
			break;
		case 'h':
			opt.hold_us = atol(optarg);
			break;
		case 'o':
			opt.out = optarg;
			break;
		case 'l':
			opt.lib = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc || opt.threads < 1 || opt.threads > 1024 || !opt.iters)
		usage();
}

/* The counters must hold exactly the acquisitions the threads made. */
static const char *check(struct thread *t, struct pcpu_lock_counts *tot, uint64_t *sum)
{
	const char *why = NULL;

	for (int c = 0; c < PCPU_LOCK_MAX_CPUS; c++)
		*sum += counter[c].n;
	for (int i = 0; i < opt.threads; i++) {
		tot->commits += t[i].c.commits;
		tot->handler_entries += t[i].c.handler_entries;
		tot->user_branches += t[i].c.user_branches;
		tot->busy += t[i].c.busy;
		if (t[i].c.commits != t[i].ops)
			why = "a thread's commits differ from its operations";
		if (t[i].c.user_branches > t[i].c.handler_entries)
			why = "more branches to a handler than entries into it";
	}
	if (*sum != tot->commits)
		why = "the counters do not add up to the locks taken";
	return why;
}

static void put(FILE *f, const char *prefix, const struct pcpu_lock_counts *c)
{
	fprintf(f, "%scommits=%llu\n", prefix, (unsigned long long)c->commits);
	fprintf(f, "%shandler_entries=%llu\n", prefix, (unsigned long long)c->handler_entries);
	fprintf(f, "%suser_branches=%llu\n", prefix, (unsigned long long)c->user_branches);
	fprintf(f, "%skernel_aborts=%llu\n", prefix,
		(unsigned long long)(c->handler_entries - c->user_branches));
	fprintf(f, "%sbusy=%llu\n", prefix, (unsigned long long)c->busy);
}

int main(int argc, char **argv)
{
	struct pcpu_lock_counts tot = {0};
	struct thread *t;
	uint64_t sum = 0;
	const char *why;
	FILE *f = stdout;
	char prefix[64];

	parse(argc, argv);
	if (load())
		return 2;
	t = calloc((size_t)opt.threads, sizeof(*t));
	if (!t)
		return 2;
	for (int i = 0; i < opt.threads; i++)
		if (pthread_create(&t[i].thread, NULL, worker, &t[i])) {
			perror("pcpu_lock: pthread_create");
			return 2;
		}
	for (int i = 0; i < opt.threads; i++)
		pthread_join(t[i].thread, NULL);
	why = check(t, &tot, &sum);
	if (opt.out && !(f = fopen(opt.out, "w"))) {
		perror(opt.out);
		return 2;
	}
	fprintf(f, "threads=%d\niters=%llu\ndelay=%llu\nhold_us=%ld\n", opt.threads,
		(unsigned long long)opt.iters, (unsigned long long)opt.delay, opt.hold_us);
	for (int i = 0; i < opt.threads; i++) {
		snprintf(prefix, sizeof(prefix), "thread.%d.", (int)t[i].tid);
		fprintf(f, "%sops=%llu\n", prefix, (unsigned long long)t[i].ops);
		put(f, prefix, &t[i].c);
	}
	put(f, "", &tot);
	fprintf(f, "counter=%llu\n", (unsigned long long)sum);
	if (why)
		fprintf(f, "result=FAIL: %s\n", why);
	else
		fprintf(f, "result=ok\n");
	if (f != stdout)
		fclose(f);
	return why ? 1 : 0;
}
