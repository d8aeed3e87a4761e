// SPDX-License-Identifier: GPL-2.0-only
/*
 * excl_loop: N increments of a counter by excl_calls (excl_loop.S): on aarch64 each is a
 * load-exclusive/store-exclusive loop (ldxr, add, stxr, a retry when the store fails). Stepped
 * one instruction at a time such a loop never ends: the trap between the load and the store
 * clears the exclusive monitor, so the store fails every time. A debugger must run the
 * sequence as a unit. Step it with --from excl_calls --finish: the instructions from there
 * to the return are 5 + 7N + 9R on aarch64 (R: the retries this prints), 3 + 5N on x86_64.
 *
 * Usage: excl_loop [N]  (default 100)
 * Prints calls=N counter=C retries=R result=ok|FAIL; exit 0 when the counter is N.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

void excl_calls(uint64_t n);
extern volatile uint64_t excl_counter, excl_retries;

int main(int argc, char **argv)
{
	uint64_t n = 100;
	char *end;

	if (argc > 2 || (argc == 2 && (n = strtoull(argv[1], &end, 0), *end || !*argv[1]))) {
		fprintf(stderr, "usage: excl_loop [N]\n");
		return 2;
	}
	excl_calls(n);
	printf("calls=%llu counter=%llu retries=%llu result=%s\n", (unsigned long long)n,
	       (unsigned long long)excl_counter, (unsigned long long)excl_retries,
	       excl_counter == n ? "ok" : "FAIL");
	return excl_counter == n ? 0 : 1;
}
