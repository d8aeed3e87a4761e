// SPDX-License-Identifier: GPL-2.0-only
/*
 * malloc_churn: every thread allocates and frees in rounds and checks its own memory. A
 * round allocates a batch of chunks of one small size, writes a tag of (thread, round,
 * index) at both ends of each, then frees the batch after checking the tags: more chunks than
 * glibc's per-thread cache keeps, so the rest go through _int_free to the fast bins, whose
 * atomic operations glibc guards with "je 1f; lock; 1: cmpxchg" (the prefix skipped while
 * the process is single-threaded). Some rounds add a large chunk (free's slow path).
 *
 * Usage: malloc_churn [--threads N] [--once-threaded] [--seconds S] [--rounds R] [--ready FILE]
 *   --threads N   threads besides the main one, which churns too (default 3; 0: the process
 *                 stays single-threaded)
 *   --once-threaded  first start and join one thread: glibc, which never forgets that a
 *                 thread was created, then runs the lock prefix of its atomics even with
 *                 one thread left
 *   --seconds S   run for S seconds (default 0: use --rounds)
 *   --rounds R    rounds per thread (default 1000)
 *   --ready FILE  write "ready" to FILE once every thread runs
 * Prints "threads=T rounds=R chunks=C errors=E result=ok|FAIL"; rounds and chunks summed
 * over the threads, chunks = the chunks allocated and freed, errors = tags found changed
 * (two live chunks overlapping, or a chunk written after its free) or allocations that
 * failed.
 * Exit status: 0 result=ok, 1 result=FAIL, 2 bad usage or setup error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_THREADS 64
#define BATCH 24

struct worker {
	pthread_t th;
	unsigned int id;
	uint64_t rounds, chunks, errors;
};

static uint64_t rounds_each = 1000;
static double seconds;
static struct timespec t_end;
static atomic_uint running;

static bool time_up(void)
{
	struct timespec now;

	if (seconds <= 0)
		return false;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > t_end.tv_sec ||
	       (now.tv_sec == t_end.tv_sec && now.tv_nsec >= t_end.tv_nsec);
}

static uint64_t tag(const struct worker *w, uint64_t round, size_t i)
{
	return ((uint64_t)w->id << 48) ^ (round << 8) ^ i ^ 0x5a5a000000000000ull;
}

/* Tag both ends of a chunk of len >= 16 bytes. */
static void mark(uint8_t *p, size_t len, uint64_t t)
{
	memcpy(p, &t, sizeof(t));
	memcpy(p + len - sizeof(t), &t, sizeof(t));
}

/* Check both tags, then free the chunk. */
static void release(struct worker *w, uint8_t *p, size_t len, uint64_t t)
{
	uint64_t a, b;

	memcpy(&a, p, sizeof(a));
	memcpy(&b, p + len - sizeof(b), sizeof(b));
	if (a != t || b != t)
		w->errors++;
	free(p);
}

static void *churn(void *arg)
{
	struct worker *w = arg;
	uint8_t *batch[BATCH];

	atomic_fetch_add(&running, 1);
	for (uint64_t r = 0; seconds > 0 ? !time_up() : r < rounds_each; r++) {
		/* Sizes of the fast bins (at most 128 bytes on 64-bit). */
		size_t len = 16 + (size_t)((r * 24 + w->id * 8) % 112), big = 0;
		uint8_t *large = NULL;

		for (size_t i = 0; i < BATCH; i++) {
			batch[i] = malloc(len);
			if (batch[i])
				mark(batch[i], len, tag(w, r, i));
			else
				w->errors++;
		}
		if (r % 8 == 0) {
			big = 4096 + (size_t)(r % 5) * 1000;
			large = malloc(big);
			if (large)
				mark(large, big, tag(w, r, BATCH));
			else
				w->errors++;
		}
		for (size_t i = 0; i < BATCH; i++)
			if (batch[i]) {
				release(w, batch[i], len, tag(w, r, i));
				w->chunks++;
			}
		if (large) {
			release(w, large, big, tag(w, r, BATCH));
			w->chunks++;
		}
		w->rounds++;
	}
	return NULL;
}

static void *nothing(void *arg)
{
	return arg;
}

static double parse_num(const char *name, const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v < 0) {
		fprintf(stderr, "malloc_churn: %s: '%s' is not a non-negative number\n", name, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
	    {"threads", required_argument, NULL, 't'}, {"seconds", required_argument, NULL, 's'},
	    {"rounds", required_argument, NULL, 'r'},  {"ready", required_argument, NULL, 'R'},
	    {"once-threaded", no_argument, NULL, 'o'}, {0},
	};
	static struct worker w[MAX_THREADS + 1];
	unsigned int nthreads = 3;
	uint64_t rounds = 0, chunks = 0, errors = 0;
	const char *ready = NULL;
	bool once = false;
	int opt;

	while ((opt = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (opt) {
		case 't':
			nthreads = (unsigned int)parse_num("--threads", optarg);
			if (nthreads > MAX_THREADS) {
				fprintf(stderr, "malloc_churn: --threads: at most %d\n",
					MAX_THREADS);
				return 2;
			}
			break;
		case 's':
			seconds = parse_num("--seconds", optarg);
			break;
		case 'r':
			rounds_each = (uint64_t)parse_num("--rounds", optarg);
			break;
		case 'R':
			ready = optarg;
			break;
		case 'o':
			once = true;
			break;
		default:
			fprintf(stderr, "usage: malloc_churn [--threads N] [--once-threaded] "
					"[--seconds S] [--rounds R] [--ready FILE]\n");
			return 2;
		}
	}
	if (once) {
		pthread_t th;
		int e = pthread_create(&th, NULL, nothing, NULL);

		if (e || (e = pthread_join(th, NULL))) {
			fprintf(stderr, "malloc_churn: a first thread: %s\n", strerror(e));
			return 2;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t_end);
	t_end.tv_sec += (time_t)seconds;
	t_end.tv_nsec += (long)((seconds - (double)(time_t)seconds) * 1e9);
	if (t_end.tv_nsec >= 1000000000) {
		t_end.tv_sec++;
		t_end.tv_nsec -= 1000000000;
	}
	for (unsigned int i = 0; i <= nthreads; i++)
		w[i].id = i;
	for (unsigned int i = 1; i <= nthreads; i++) {
		int e = pthread_create(&w[i].th, NULL, churn, &w[i]);

		if (e) {
			fprintf(stderr, "malloc_churn: pthread_create: %s\n", strerror(e));
			return 2;
		}
	}
	while (atomic_load(&running) < nthreads)
		;
	if (ready) {
		FILE *f = fopen(ready, "w");

		if (!f || fputs("ready\n", f) < 0 || fclose(f)) {
			fprintf(stderr, "malloc_churn: %s: %s\n", ready, strerror(errno));
			return 2;
		}
	}
	churn(&w[0]);
	for (unsigned int i = 1; i <= nthreads; i++)
		pthread_join(w[i].th, NULL);
	for (unsigned int i = 0; i <= nthreads; i++) {
		rounds += w[i].rounds;
		chunks += w[i].chunks;
		errors += w[i].errors;
	}
	printf("threads=%u rounds=%" PRIu64 " chunks=%" PRIu64 " errors=%" PRIu64 " result=%s\n",
	       nthreads + 1, rounds, chunks, errors, errors ? "FAIL" : "ok");
	return errors ? 1 : 0;
}
