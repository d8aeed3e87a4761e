// SPDX-License-Identifier: GPL-2.0-only
/*
 * thread_churn: threads that come and go. The main thread starts batches of short-lived
 * threads (each adds its share to a counter and exits) and joins them, so at any moment
 * some threads are being created and others are exiting: what a tracer attaching to the
 * process sees in /proc/PID/task changes under it.
 *
 * Usage: thread_churn [--batch N] [--life-us U] [--seconds S] [--ready FILE]
 *   --batch N     threads per batch (default 200)
 *   --life-us U   each thread sleeps U microseconds before it exits (default 1000)
 *   --seconds S   run for S seconds (default 5)
 *   --ready FILE  write "ready" to FILE once the first batch runs
 * Prints "threads=T sum=S result=ok|FAIL": T threads started and joined, S the sum they
 * added (each thread i adds i + 1), checked against T * (T + 1) / 2.
 * Exit status: 0 result=ok, 1 result=FAIL, 2 bad usage or setup error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_BATCH 1000

static atomic_uint_fast64_t sum;
static struct timespec life = {0, 1000000};

static void *work(void *arg)
{
	atomic_fetch_add(&sum, (uintptr_t)arg);
	if (life.tv_nsec || life.tv_sec)
		while (nanosleep(&life, NULL) && errno == EINTR)
			;
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
	    {"batch", required_argument, NULL, 'b'},
	    {"life-us", required_argument, NULL, 'l'},
	    {"seconds", required_argument, NULL, 's'},
	    {"ready", required_argument, NULL, 'r'},
	    {0},
	};
	static pthread_t th[MAX_BATCH];
	unsigned long batch = 200;
	double seconds = 5, end;
	const char *ready = NULL;
	uint64_t started = 0, want;
	char *e;
	int opt;

	while ((opt = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (opt) {
		case 'b':
			batch = strtoul(optarg, &e, 0);
			if (*e || !batch || batch > MAX_BATCH) {
				fprintf(stderr, "thread_churn: --batch: 1 to %d\n", MAX_BATCH);
				return 2;
			}
			break;
		case 'l': {
			unsigned long us = strtoul(optarg, &e, 0);

			if (*e || !*optarg) {
				fprintf(stderr, "thread_churn: --life-us: '%s'\n", optarg);
				return 2;
			}
			life.tv_sec = (time_t)(us / 1000000);
			life.tv_nsec = (long)(us % 1000000) * 1000;
			break;
		}
		case 's':
			seconds = strtod(optarg, &e);
			if (*e || seconds < 0) {
				fprintf(stderr, "thread_churn: --seconds: '%s'\n", optarg);
				return 2;
			}
			break;
		case 'r':
			ready = optarg;
			break;
		default:
			fprintf(stderr,
				"usage: thread_churn [--batch N] [--life-us U] [--seconds S] "
				"[--ready FILE]\n");
			return 2;
		}
	}
	end = now() + seconds;
	do {
		unsigned long n = 0;

		for (; n < batch; n++) {
			int err =
			    pthread_create(&th[n], NULL, work, (void *)(uintptr_t)(started + 1));

			if (err == EAGAIN)
				break;
			if (err) {
				fprintf(stderr, "thread_churn: pthread_create: %s\n",
					strerror(err));
				return 2;
			}
			started++;
		}
		if (ready) {
			FILE *f = fopen(ready, "w");

			if (!f || fputs("ready\n", f) < 0 || fclose(f)) {
				fprintf(stderr, "thread_churn: %s: %s\n", ready, strerror(errno));
				return 2;
			}
			ready = NULL;
		}
		for (unsigned long i = 0; i < n; i++)
			pthread_join(th[i], NULL);
	} while (now() < end);
	want = started * (started + 1) / 2;
	printf("threads=%" PRIu64 " sum=%" PRIu64 " result=%s\n", started,
	       (uint64_t)atomic_load(&sum), atomic_load(&sum) == want ? "ok" : "FAIL");
	return atomic_load(&sum) == want ? 0 : 1;
}
