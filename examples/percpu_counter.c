// SPDX-License-Identifier: GPL-2.0-only
/*
 * percpu_counter: threads increment a per-CPU counter through two rseq critical sections
 * (percpu_counter.S), then the program checks that the per-CPU counters add up.
 *
 * Usage: percpu_counter [--threads N] [--iters N] [--wait]
 *   --wait  print each section as "cs <function> start=0x.. post_commit=0x.. abort=0x.."
 *           (runtime addresses), then "ready", and wait for SIGTERM or the end of stdin
 *           before running: a debugger or tracer can attach in the meantime.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#define MAX_CPUS 1024
/* glibc's <sys/rseq.h> names the signature it registers: 0xd428bc00 on arm64 (see
 * arm64/percpu_counter.S). */
#ifndef RSEQ_SIG
#define RSEQ_SIG 0x53053053
#endif

struct rseq_cs_desc {
	uint32_t version;
	uint32_t flags;
	uint64_t start_ip;
	uint64_t post_commit_offset;
	uint64_t abort_ip;
};

struct pc_thread {
	struct rseq *rseq;
	uint64_t *counters;
	uint64_t aborts;
	uint64_t exits;
	pthread_t id;
} __attribute__((aligned(64)));

void percpu_inc(struct pc_thread *t);
void percpu_add(struct pc_thread *t, uint64_t n);
extern const struct rseq_cs_desc percpu_cs_inc, percpu_cs_add;

static uint64_t counters[MAX_CPUS * 8] __attribute__((aligned(64)));
static uint64_t iters = 100000;
static volatile sig_atomic_t term_seen;
static __thread struct rseq own_rseq __attribute__((aligned(32)));

static void on_term(int sig)
{
	(void)sig;
	term_seen = 1;
}

static void *worker(void *arg)
{
	struct pc_thread *t = arg;
	int own = __rseq_size == 0;

	if (own) {
		if (syscall(__NR_rseq, &own_rseq, 32, 0, RSEQ_SIG)) {
			fprintf(stderr, "percpu_counter: rseq registration: %s\n", strerror(errno));
			exit(2);
		}
		t->rseq = &own_rseq;
	} else {
		t->rseq = (struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
	}
	for (uint64_t i = 0; i < iters; i++) {
		if (i & 1)
			percpu_add(t, 1);
		else
			percpu_inc(t);
	}
	if (own)
		syscall(__NR_rseq, &own_rseq, 32, 1, RSEQ_SIG);
	return NULL;
}

static void print_cs(const char *func, const struct rseq_cs_desc *cs)
{
	printf("cs %s start=0x%llx post_commit=0x%llx abort=0x%llx\n", func,
	       (unsigned long long)cs->start_ip,
	       (unsigned long long)(cs->start_ip + cs->post_commit_offset),
	       (unsigned long long)cs->abort_ip);
}

static void wait_for_start(void)
{
	struct sigaction sa = { .sa_handler = on_term };
	char buf[256];
	ssize_t n;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	print_cs("percpu_inc", &percpu_cs_inc);
	print_cs("percpu_add", &percpu_cs_add);
	printf("ready\n");
	fflush(stdout);
	while (!term_seen) {
		n = read(STDIN_FILENO, buf, sizeof(buf));
		if (n == 0 || (n < 0 && errno != EINTR))
			break;
	}
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "iters", required_argument, NULL, 'i' },
		{ "wait", no_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	uint64_t sum = 0, aborts = 0, exits = 0;
	struct pc_thread *threads;
	int nthreads = 2, wait = 0, c;
	char *end;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			nthreads = (int)strtol(optarg, &end, 0);
			if (*end || nthreads < 1 || nthreads > 1024) {
				fprintf(stderr, "percpu_counter: --threads: '%s' is not in 1..1024\n",
					optarg);
				return 2;
			}
			break;
		case 'i':
			iters = strtoull(optarg, &end, 0);
			if (*end || optarg[0] == '-' || !optarg[0]) {
				fprintf(stderr, "percpu_counter: --iters: '%s' is not a number\n",
					optarg);
				return 2;
			}
			break;
		case 'w':
			wait = 1;
			break;
		case 'h':
			printf("Usage: percpu_counter [--threads N] [--iters N] [--wait]\n");
			return 0;
		default:
			fprintf(stderr, "Usage: percpu_counter [--threads N] [--iters N] [--wait]\n");
			return 2;
		}
	}
	if (get_nprocs_conf() > MAX_CPUS) {
		fprintf(stderr, "percpu_counter: more than %d CPUs\n", MAX_CPUS);
		return 2;
	}
	if (wait)
		wait_for_start();

	threads = calloc(nthreads, sizeof(*threads));
	if (!threads) {
		fprintf(stderr, "percpu_counter: out of memory\n");
		return 2;
	}
	for (int i = 0; i < nthreads; i++) {
		threads[i].counters = counters;
		if (pthread_create(&threads[i].id, NULL, worker, &threads[i])) {
			fprintf(stderr, "percpu_counter: pthread_create failed\n");
			return 2;
		}
	}
	for (int i = 0; i < nthreads; i++) {
		pthread_join(threads[i].id, NULL);
		aborts += threads[i].aborts;
		exits += threads[i].exits;
	}
	for (int cpu = 0; cpu < MAX_CPUS; cpu++)
		sum += counters[cpu * 8];
	printf("threads=%d iterations=%llu total=%llu aborts=%llu exits=%llu\n", nthreads,
	       (unsigned long long)iters, (unsigned long long)sum, (unsigned long long)aborts,
	       (unsigned long long)exits);
	free(threads);
	if (sum != (uint64_t)nthreads * iters) {
		printf("result=FAIL: per-CPU counters sum to %llu, expected %llu\n",
		       (unsigned long long)sum, (unsigned long long)nthreads * iters);
		return 1;
	}
	printf("result=ok\n");
	return 0;
}
