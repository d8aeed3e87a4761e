// SPDX-License-Identifier: GPL-2.0-only
/*
 * main_exit: a process whose main thread has exited while another thread runs on. The main
 * thread starts a worker, which adds to a per-CPU counter in an rseq critical section
 * (pcpu_addv of percpu_ops.h) in a loop, then calls pthread_exit. Once the kernel shows the
 * main thread as a zombie, the worker prints its ready line; /proc/PID's memory and mappings
 * are then gone with the main thread, and only /proc/PID/task/TID reaches them.
 *
 * Usage: main_exit [--seconds S]
 * Prints "ready pid=PID tid=TID" (TID: the worker) once the main thread has exited, and runs
 * until SIGTERM or SIGINT, its parent's exit (then SIGTERM) or S seconds (default 600), then
 * prints "commits=C aborts=A result=ok|FAIL": the counters must add up to the C increments
 * committed.
 * Exit status: 0 result=ok, 1 result=FAIL, 2 bad usage or setup error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__aarch64__)
#include "arm64/percpu_ops.h"
#else
#include "percpu_ops.h"
#endif

#define MAX_CPUS 1024

static struct {
	intptr_t v;
	char pad[56];
} pcpu[MAX_CPUS] __attribute__((aligned(64)));
static volatile sig_atomic_t stop;
static pid_t main_tid;
static long seconds = 600;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

/* Until /proc says the main thread is a zombie: its memory and mappings are gone by then. */
static int wait_main_exited(void)
{
	const struct timespec ms = {0, 1000000};
	char path[64], line[128];

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)main_tid);
	for (int i = 0; i < 60000; i++) {
		FILE *f = fopen(path, "re");
		char state = '?';

		if (!f)
			return 0; /* reaped: gone entirely */
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "State: %c", &state) == 1)
				break;
		fclose(f);
		if (state == 'Z' || state == 'X')
			return 0;
		nanosleep(&ms, NULL);
	}
	return -1;
}

static void *worker(void *arg)
{
	uint64_t commits = 0, aborts = 0, branches = 0, sum = 0;
	struct timespec t0, now;

	(void)arg;
	/* A test that dies leaves no spinning thread behind. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (wait_main_exited()) {
		fprintf(stderr, "main_exit: the main thread did not exit\n");
		exit(2);
	}
	printf("ready pid=%d tid=%d\n", (int)getpid(), (int)syscall(SYS_gettid));
	fflush(stdout);
	for (uint64_t i = 1; !stop; i++) {
		int cpu = pcpu_cpu();

		if (pcpu_addv(&pcpu[cpu & (MAX_CPUS - 1)].v, 1, cpu, &branches))
			aborts++;
		else
			commits++;
		if (!(i & 0xfffff)) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec - t0.tv_sec >= seconds)
				break;
		}
	}
	for (int c = 0; c < MAX_CPUS; c++)
		sum += (uint64_t)pcpu[c].v;
	printf("commits=%llu aborts=%llu result=%s\n", (unsigned long long)commits,
	       (unsigned long long)aborts, sum == commits && commits ? "ok" : "FAIL");
	fflush(stdout);
	exit(sum == commits && commits ? 0 : 1);
}

int main(int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = on_stop};
	pthread_t t;
	int err;

	if (argc == 3 && !strcmp(argv[1], "--seconds"))
		seconds = atol(argv[2]);
	else if (argc != 1)
		seconds = 0;
	if (seconds <= 0) {
		fprintf(stderr, "Usage: main_exit [--seconds S]\n");
		return 2;
	}
	if (!__rseq_size) {
		fprintf(stderr, "main_exit: glibc did not register rseq\n");
		return 2;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	main_tid = getpid();
	err = pthread_create(&t, NULL, worker, NULL);
	if (err) {
		fprintf(stderr, "main_exit: pthread_create: %s\n", strerror(err));
		return 2;
	}
	pthread_exit(NULL);
}
