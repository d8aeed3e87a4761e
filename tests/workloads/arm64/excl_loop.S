/* SPDX-License-Identifier: GPL-2.0-only */
/* excl_loop's increments on aarch64: excl_calls(n) adds 1 to excl_counter n times, each by a
 * load-exclusive/store-exclusive loop; a failed store-exclusive adds 1 to excl_retries and
 * tries again. From excl_calls to its return: 5 + 7n + 9 * retries instructions. */
	.text
	.globl excl_calls
	.type excl_calls, @function
excl_calls:
	adrp	x1, excl_counter
	add	x1, x1, :lo12:excl_counter
	adrp	x5, excl_retries
1:	cbz	x0, 4f
2:	ldxr	x3, [x1]
	add	x3, x3, #1
	stxr	w4, x3, [x1]
	cbz	w4, 3f
	b	5f
3:	sub	x0, x0, #1
	b	1b
4:	ret
5:	ldr	x6, [x5, :lo12:excl_retries]	/* the store-exclusive failed */
	add	x6, x6, #1
	str	x6, [x5, :lo12:excl_retries]
	b	2b
	.size excl_calls, . - excl_calls

	.data
	.balign 8
	.globl excl_counter, excl_retries
excl_counter:
	.quad 0
excl_retries:
	.quad 0
	.section .note.GNU-stack, "", %progbits
