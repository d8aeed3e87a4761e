/* SPDX-License-Identifier: GPL-2.0-only */
/* fnptr_flip's calls through memory: flip_calls(n) calls *flip_fp n times; flip_one and
 * flip_two are the same two instructions on different counters, so the stretch from
 * flip_calls to its return is 5n + 3 instructions whichever one each call reaches. */
	.text
	.globl flip_calls
	.type flip_calls, @function
flip_calls:
	test %rdi, %rdi
	jz 2f
1:	call *flip_fp(%rip)
	dec %rdi
	jnz 1b
2:	ret
	.size flip_calls, . - flip_calls

	.globl flip_one
	.type flip_one, @function
flip_one:
	incq flip_n1(%rip)
	ret
	.size flip_one, . - flip_one

	.globl flip_two
	.type flip_two, @function
flip_two:
	incq flip_n2(%rip)
	ret
	.size flip_two, . - flip_two

	.data
	.balign 8
	.globl flip_fp, flip_n1, flip_n2
flip_fp:
	.quad flip_one
flip_n1:
	.quad 0
flip_n2:
	.quad 0

	.section .note.GNU-stack, "", @progbits
