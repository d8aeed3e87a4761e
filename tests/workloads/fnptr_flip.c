// SPDX-License-Identifier: GPL-2.0-only
/*
 * fnptr_flip: the main thread calls through a function pointer in memory (flip_calls of
 * fnptr_flip.S) while a second thread points it at flip_one and flip_two in turn, as fast as
 * it can. Each function counts its calls; at the end they add up to --calls.
 *
 * Under a debugger that takes a call's target from the word it read before letting the
 * thread run, the thread reaches the other function about half the time: the stepping of
 * flip_calls (--from flip_calls --finish) is then off, and without a breakpoint there the
 * thread may run on unseen.
 *
 * Usage: fnptr_flip [--calls N] [--out FILE]
 * Prints calls=N one=X two=Y flips=F result=ok|FAIL. Exit status: 0 ok, 1 FAIL, 2 bad usage.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void flip_calls(uint64_t n);
void flip_one(void);
void flip_two(void);
extern void (*volatile flip_fp)(void);
extern volatile uint64_t flip_n1, flip_n2;

static volatile int done, started;
static uint64_t flips;

static void *flipper(void *arg)
{
	(void)arg;
	started = 1;
	while (!done) {
		flip_fp = flip_two;
		flip_fp = flip_one;
		flips++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"calls", required_argument, NULL, 'c'},
	    {"out", required_argument, NULL, 'o'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	uint64_t calls = 1000;
	FILE *out = stdout;
	pthread_t t;
	char *end;
	int opt, ok;

	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			errno = 0;
			calls = strtoull(optarg, &end, 0);
			if (errno || end == optarg || *end || optarg[0] == '-') {
				fprintf(stderr, "fnptr_flip: --calls: '%s' is not a count\n",
					optarg);
				return 2;
			}
			break;
		case 'o':
			out = fopen(optarg, "w");
			if (!out) {
				fprintf(stderr, "fnptr_flip: %s: %s\n", optarg, strerror(errno));
				return 2;
			}
			break;
		case 'h':
			printf("usage: fnptr_flip [--calls N] [--out FILE]\n");
			return 0;
		default:
			return 2;
		}
	}
	if (pthread_create(&t, NULL, flipper, NULL)) {
		fprintf(stderr, "fnptr_flip: pthread_create failed\n");
		return 2;
	}
	while (!started)
		;
	flip_calls(calls);
	done = 1;
	pthread_join(t, NULL);
	ok = flip_n1 + flip_n2 == calls;
	fprintf(out, "calls=%llu\none=%llu\ntwo=%llu\nflips=%llu\nresult=%s\n",
		(unsigned long long)calls, (unsigned long long)flip_n1, (unsigned long long)flip_n2,
		(unsigned long long)flips, ok ? "ok" : "FAIL");
	fclose(out);
	return ok ? 0 : 1;
}
