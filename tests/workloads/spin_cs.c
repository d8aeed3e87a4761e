// SPDX-License-Identifier: GPL-2.0-only
/*
 * spin_cs: N operations of spin_op (spin_cs.S), whose critical section spins --spin times
 * before it commits. With --signal-us U, a second thread looks at the first every U
 * microseconds and signals it (SIGUSR1, a handler that counts it) once in each odd attempt
 * it sees in two looks in a row; an odd attempt spins 64 times longer, so that the signal
 * lands inside its section. The second thread keeps off the first one's CPU while that one
 * is held on a single CPU (as a debugger that pins it does): waking up beside it, it would
 * switch it out, and the kernel would abort the section before the signal came. Under a
 * debugger the kernel aborts the section before the handler runs, and the handler returns
 * to the abort handler, which retries. Even attempts are never signalled, so every
 * operation commits by its second attempt unless the kernel preempts it: the run ends
 * however slow the machine. Every attempt ends in a commit or an abort, each counted:
 * iterations = commits + aborts, and the per-CPU counters add up to N.
 *
 * Usage: spin_cs [--iters N] [--spin S] [--signal-us U] [--out FILE]
 *   (defaults 100, 100000, 0: no signals, stdout)
 * Reports iterations=, commits=, aborts=, signals=, result=ok|FAIL; exit 0 when ok.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "rseq_workload.h"

#define MAX_CPUS 1024

_Static_assert(offsetof(struct rseq, cpu_id) == WL_RSEQ_CPU_ID, "struct rseq cpu_id");
_Static_assert(offsetof(struct rseq, rseq_cs) == WL_RSEQ_CS, "struct rseq rseq_cs");
_Static_assert(offsetof(struct wl_thread, cnt) == WL_T_CNT, "wl_thread cnt");
_Static_assert(sizeof(struct wl_pcpu) == 1 << WL_PCPU_SHIFT, "wl_pcpu size");

void spin_op(struct wl_thread *t, uint64_t spin, uint64_t odd_spin);

static struct wl_pcpu pcpu[MAX_CPUS] __attribute__((aligned(64)));
static struct wl_thread thread;
static volatile sig_atomic_t signals, done;
static pid_t main_tid;
static uint64_t signal_us;

static void on_usr1(int sig)
{
	(void)sig;
	signals++;
}

/* Keep the calling thread off the main thread's CPU while the main thread is held on one
 * CPU: woken beside it, it would switch it out, and the kernel would abort its section
 * before the signal reached it. */
static void step_aside(void)
{
	cpu_set_t main_mask, mask;

	if (sched_getaffinity(main_tid, sizeof(main_mask), &main_mask) < 0 ||
	    sched_getaffinity(0, sizeof(mask), &mask) < 0 || CPU_COUNT(&main_mask) != 1)
		return;
	CPU_ZERO(&mask);
	for (int cpu = 0; cpu < get_nprocs_conf() && cpu < CPU_SETSIZE; cpu++)
		if (!CPU_ISSET(cpu, &main_mask))
			CPU_SET(cpu, &mask);
	if (CPU_COUNT(&mask))
		sched_setaffinity(0, sizeof(mask), &mask);
}

static void *signaller(void *arg)
{
	const uint64_t *attempts = &thread.cnt[WL_SECT_COUNTER].iterations;
	uint64_t seen = 0, signalled = 0;

	(void)arg;
	while (!done) {
		uint64_t n = __atomic_load_n(attempts, __ATOMIC_RELAXED);

		if (n % 2 && n == seen && n != signalled) {
			syscall(SYS_tgkill, getpid(), main_tid, SIGUSR1);
			signalled = n;
		}
		seen = n;
		step_aside();
		usleep((useconds_t)signal_us);
	}
	return NULL;
}

static uint64_t arg_u64(const char *name, const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 0);

	if (!*s || *end || *s == '-') {
		fprintf(stderr, "spin_cs: %s: '%s' is not a non-negative integer\n", name, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"iters", required_argument, NULL, 'i'},
	    {"spin", required_argument, NULL, 's'},
	    {"signal-us", required_argument, NULL, 'u'},
	    {"out", required_argument, NULL, 'o'},
	    {0},
	};
	uint64_t iters = 100, spin = 100000, sum = 0;
	struct wl_counts *c = &thread.cnt[WL_SECT_COUNTER];
	FILE *out = stdout;
	pthread_t tid;
	bool ok;
	int opt;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'i':
			iters = arg_u64("--iters", optarg);
			break;
		case 's':
			spin = arg_u64("--spin", optarg);
			if (!spin)
				spin = 1;
			break;
		case 'u':
			signal_us = arg_u64("--signal-us", optarg);
			break;
		case 'o':
			out = fopen(optarg, "w");
			if (!out) {
				perror(optarg);
				return 2;
			}
			break;
		default:
			fprintf(stderr, "usage: spin_cs [--iters N] [--spin S] [--signal-us U] "
					"[--out FILE]\n");
			return 2;
		}
	}
	if (!__rseq_size) {
		fprintf(stderr, "spin_cs: glibc registered no rseq area for this thread\n");
		return 2;
	}
	thread.rseq = (char *)__builtin_thread_pointer() + __rseq_offset;
	thread.pcpu = pcpu;
	main_tid = (pid_t)syscall(SYS_gettid);
	signal(SIGUSR1, on_usr1);
	if (signal_us && pthread_create(&tid, NULL, signaller, NULL)) {
		fprintf(stderr, "spin_cs: pthread_create failed\n");
		return 2;
	}
	for (uint64_t i = 0; i < iters; i++)
		spin_op(&thread, spin, signal_us ? spin * 64 : spin);
	done = 1;
	if (signal_us)
		pthread_join(tid, NULL);
	for (size_t i = 0; i < MAX_CPUS; i++)
		sum += pcpu[i].counter;
	ok = sum == iters && c->commits == iters && c->iterations == c->commits + c->aborts;
	fprintf(out, "iterations=%llu\ncommits=%llu\naborts=%llu\nsignals=%llu\nresult=%s\n",
		(unsigned long long)c->iterations, (unsigned long long)c->commits,
		(unsigned long long)c->aborts, (unsigned long long)signals, ok ? "ok" : "FAIL");
	if (out != stdout)
		fclose(out);
	return ok ? 0 : 1;
}
