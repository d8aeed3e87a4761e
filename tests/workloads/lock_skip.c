// SPDX-License-Identifier: GPL-2.0-only
/*
 * lock_skip: runs the loop of lock_skip.S, whose branches land inside instructions (the
 * glibc "je over lock" pattern and a jump into an immediate), and checks its own result:
 * the word its cmpxchg increments equals the iterations, every mov loaded its immediate
 * intact, and half of the iterations (bit 1 set) took the jump into the immediate.
 *
 * Usage: lock_skip [ITERATIONS]   (default 1000000)
 * Prints "iterations=N word=W inner=I wrong=X result=ok|FAIL".
 * Exit status: 0 result=ok, 1 result=FAIL, 2 bad usage.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

uint64_t ls_run(uint64_t n, uint64_t *word, uint64_t *inner);

int main(int argc, char **argv)
{
	uint64_t n = 1000000, word = 0, inner = 0, wrong, want_inner;
	char *end;
	bool ok;

	if (argc > 2 || (argc == 2 && (n = strtoull(argv[1], &end, 0), *end || !*argv[1]))) {
		fprintf(stderr, "usage: lock_skip [ITERATIONS]\n");
		return 2;
	}
	wrong = ls_run(n, &word, &inner);
	/* Iterations i with bit 1 set: two of every four. */
	want_inner = n / 4 * 2 + (n % 4 > 2 ? n % 4 - 2 : 0);
	ok = word == n && wrong == 0 && inner == want_inner;
	printf("iterations=%" PRIu64 " word=%" PRIu64 " inner=%" PRIu64 " wrong=%" PRIu64
	       " result=%s\n",
	       n, word, inner, wrong, ok ? "ok" : "FAIL");
	return ok ? 0 : 1;
}
