/* SPDX-License-Identifier: GPL-2.0-only */
/* excl_loop's increments: excl_calls(n) adds 1 to excl_counter n times, each by one locked
 * instruction (arm64/excl_loop.S has the load-exclusive loop): from excl_calls to its return,
 * 3 + 5n instructions. */
	.text
	.globl excl_calls
	.type excl_calls, @function
excl_calls:
1:	test	%rdi, %rdi
	jz	2f
	lock incq excl_counter(%rip)
	dec	%rdi
	jmp	1b
2:	ret
	.size excl_calls, . - excl_calls

	.data
	.balign 8
	.globl excl_counter, excl_retries
excl_counter:
	.quad 0
excl_retries:
	.quad 0
	.section .note.GNU-stack, "", @progbits
