// SPDX-License-Identifier: GPL-2.0-only
/*
 * percpu_lib: a per-CPU counter and per-CPU lists built on percpu_ops.h, whose operations are
 * inlined into the workers. Every --stale-every'th operation is given a stale CPU number, so
 * its section branches to its own abort handler; a signal timer (--signal-us) makes the
 * kernel abort others. The workload counts, per section, every entry into the abort handler
 * and the entries that were its own branches (the stub before the handler counts them): the
 * kernel's aborts are the difference. It checks its result: the counters add up to the
 * increments committed, the lists hold the nodes pushed.
 *
 * Usage: percpu_lib [--threads N] [--iters N] [--seconds S] [--stale-every K]
 *                   [--signal-us N] [--out FILE] [--wait]
 * --wait: print "ready" on stderr and start once standard input reaches its end (a tracer
 * attached with -p then sees the sections from their first run).
 * Exit status: 0 result=ok, 1 result=FAIL, 2 bad usage or setup error.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__aarch64__)
#include "arm64/percpu_ops.h"
#else
#include "percpu_ops.h"
#endif

#define MAX_CPUS 1024
#define STALE_BIT 0x40000000 /* no CPU has this number */

enum { OP_ADDV, OP_PUSH, NOPS };
static const char *const op_names[NOPS] = {"pcpu_addv", "pcpu_cmpeqv_storev"};

struct op_counts {
	uint64_t commits;
	uint64_t handler_entries; /* every return through the abort handler */
	uint64_t user_branches;	  /* counted by the stub: entries that were our own branches */
};

struct worker {
	pthread_t thread;
	struct op_counts c[NOPS];
	struct pcpu_node *nodes;
	uint64_t signals;
};

static struct {
	int threads;
	uint64_t iters;
	double seconds;
	uint64_t stale_every;
	long signal_us;
	const char *out;
	bool wait;
} opt = {.threads = 2, .iters = 200000, .stale_every = 1000};

static struct {
	intptr_t v;
	struct pcpu_node *head;
	char pad[48];
} pcpu[MAX_CPUS] __attribute__((aligned(64)));
static volatile int stop;
static volatile sig_atomic_t signals_seen;

static void on_tick(int sig)
{
	(void)sig;
	signals_seen++;
}

/* A CLOCK_MONOTONIC timer that signals this thread every --signal-us. */
static int thread_timer(timer_t *tm)
{
	struct sigevent sev = {.sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGUSR1};
	struct itimerspec its = {0};

	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_MONOTONIC, &sev, tm))
		return -1;
	its.it_interval.tv_sec = opt.signal_us / 1000000;
	its.it_interval.tv_nsec = (opt.signal_us % 1000000) * 1000;
	its.it_value = its.it_interval;
	return timer_settime(*tm, 0, &its, NULL);
}

/* The CPU to give the i'th operation: a stale one on schedule. */
static int op_cpu(uint64_t i)
{
	int cpu = pcpu_cpu();

	return opt.stale_every && i % opt.stale_every == 0 ? cpu ^ STALE_BIT : cpu;
}

static void worker_addv(struct worker *w, uint64_t i)
{
	struct op_counts *c = &w->c[OP_ADDV];
	int cpu = op_cpu(i);

	while (pcpu_addv(&pcpu[cpu & (MAX_CPUS - 1)].v, 1, cpu, &c->user_branches)) {
		c->handler_entries++;
		cpu = pcpu_cpu();
	}
	c->commits++;
}

static void worker_push(struct worker *w, uint64_t i)
{
	struct op_counts *c = &w->c[OP_PUSH];
	struct pcpu_node *node = &w->nodes[i];
	int cpu = op_cpu(i), ret;

	for (;;) {
		struct pcpu_node **head = &pcpu[cpu & (MAX_CPUS - 1)].head;

		ret = pcpu_cmpeqv_storev(head, __atomic_load_n(head, __ATOMIC_RELAXED), node, cpu,
					 &c->user_branches);
		if (!ret)
			break;
		if (ret < 0)
			c->handler_entries++;
		cpu = pcpu_cpu();
	}
	c->commits++;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct timespec t0, now;
	timer_t tm;
	uint64_t i;

	if (opt.signal_us > 0 && thread_timer(&tm)) {
		perror("percpu_lib: timer_create");
		exit(2);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; (opt.seconds > 0 || i < opt.iters) && !stop; i++) {
		worker_addv(w, i);
		if (i < opt.iters) /* a node is pushed once: --seconds pushes 2^21 at most */
			worker_push(w, i);
		if (opt.seconds > 0 && !(i & 1023)) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if ((double)(now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) / 1e9 >=
			    opt.seconds)
				break;
		}
	}
	if (opt.signal_us > 0)
		timer_delete(tm);
	return NULL;
}

static void usage(void)
{
	fprintf(stderr, "Usage: percpu_lib [--threads N] [--iters N] [--seconds S] "
			"[--stale-every K] [--signal-us N] [--out FILE] [--wait]\n");
	exit(2);
}

static void parse(int argc, char **argv)
{
	static const struct option lo[] = {
	    {"threads", required_argument, NULL, 't'},
	    {"iters", required_argument, NULL, 'i'},
	    {"seconds", required_argument, NULL, 's'},
	    {"stale-every", required_argument, NULL, 'k'},
	    {"signal-us", required_argument, NULL, 'u'},
	    {"out", required_argument, NULL, 'o'},
	    {"wait", no_argument, NULL, 'w'},
	    {0},
	};
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 't':
			opt.threads = atoi(optarg);
			break;
		case 'i':
			opt.iters = strtoull(optarg, NULL, 0);
			break;
		case 's':
			opt.seconds = atof(optarg);
			opt.iters = UINT64_MAX;
			break;
		case 'k':
			opt.stale_every = strtoull(optarg, NULL, 0);
			break;
		case 'u':
			opt.signal_us = atol(optarg);
			break;
		case 'o':
			opt.out = optarg;
			break;
		case 'w':
			opt.wait = true;
			break;
		default:
			usage();
		}
	}
	if (optind != argc || opt.threads < 1 || opt.threads > 256 || !opt.iters)
		usage();
	if (opt.seconds > 0)
		opt.iters = 1u << 21; /* the nodes each thread may push, at most */
}

/* The per-CPU data must hold exactly what the sections committed. */
static const char *check(struct worker *w, struct op_counts *tot)
{
	uint64_t sum = 0, nodes = 0;

	for (int c = 0; c < MAX_CPUS; c++) {
		sum += (uint64_t)pcpu[c].v;
		for (struct pcpu_node *n = pcpu[c].head; n; n = n->next)
			nodes++;
	}
	for (int t = 0; t < opt.threads; t++)
		for (int o = 0; o < NOPS; o++) {
			tot[o].commits += w[t].c[o].commits;
			tot[o].handler_entries += w[t].c[o].handler_entries;
			tot[o].user_branches += w[t].c[o].user_branches;
		}
	if (sum != tot[OP_ADDV].commits)
		return "the counters do not add up to the increments committed";
	if (nodes != tot[OP_PUSH].commits)
		return "the lists do not hold the nodes pushed";
	for (int o = 0; o < NOPS; o++)
		if (tot[o].user_branches > tot[o].handler_entries)
			return "more branches to a handler than entries into it";
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = on_tick};
	struct op_counts tot[NOPS] = {0};
	struct worker *w;
	const char *why;
	FILE *f = stdout;

	parse(argc, argv);
	if (!__rseq_size) {
		fprintf(stderr, "percpu_lib: glibc did not register rseq\n");
		return 2;
	}
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	w = calloc((size_t)opt.threads, sizeof(*w));
	if (!w)
		return 2;
	if (opt.wait) {
		char buf[256];

		fprintf(stderr, "ready pid=%d\n", (int)getpid());
		while (read(0, buf, sizeof(buf)) > 0)
			;
	}
	for (int t = 0; t < opt.threads; t++) {
		w[t].nodes = calloc(opt.iters, sizeof(*w[t].nodes));
		if (!w[t].nodes || pthread_create(&w[t].thread, NULL, worker_main, &w[t]))
			return 2;
	}
	for (int t = 0; t < opt.threads; t++)
		pthread_join(w[t].thread, NULL);
	why = check(w, tot);
	if (opt.out && !(f = fopen(opt.out, "w")))
		return 2;
	for (int o = 0; o < NOPS; o++) {
		fprintf(f, "section.%s.commits=%llu\n", op_names[o],
			(unsigned long long)tot[o].commits);
		fprintf(f, "section.%s.handler_entries=%llu\n", op_names[o],
			(unsigned long long)tot[o].handler_entries);
		fprintf(f, "section.%s.user_branches=%llu\n", op_names[o],
			(unsigned long long)tot[o].user_branches);
		fprintf(f, "section.%s.kernel_aborts=%llu\n", op_names[o],
			(unsigned long long)(tot[o].handler_entries - tot[o].user_branches));
	}
	fprintf(f, "signals=%llu\n", (unsigned long long)signals_seen);
	if (why)
		fprintf(f, "result=FAIL: %s\n", why);
	else
		fprintf(f, "result=ok\n");
	if (f != stdout)
		fclose(f);
	return why ? 1 : 0;
}
