/* SPDX-License-Identifier: GPL-2.0-only */
/* fnptr_flip's calls through memory for aarch64 (../fnptr_flip.S): flip_calls(n) loads
 * flip_fp and calls it n times; flip_one and flip_two are the same five instructions on
 * different counters, so the stretch from flip_calls to its return is 10n + 7 instructions
 * whichever one each call reaches. The target is loaded into a register before the blr, so
 * the word another thread rewrites is read by the ldr, not by the branch. */
	.text
	.globl flip_calls
	.type flip_calls, %function
flip_calls:
	stp	x29, x30, [sp, #-32]!
	str	x19, [sp, #16]
	mov	x19, x0
	cbz	x19, 2f
1:	adrp	x1, flip_fp
	ldr	x1, [x1, :lo12:flip_fp]
	blr	x1
	subs	x19, x19, #1
	b.ne	1b
2:	ldr	x19, [sp, #16]
	ldp	x29, x30, [sp], #32
	ret
	.size flip_calls, . - flip_calls

	.globl flip_one
	.type flip_one, %function
flip_one:
	adrp	x1, flip_n1
	ldr	x2, [x1, :lo12:flip_n1]
	add	x2, x2, #1
	str	x2, [x1, :lo12:flip_n1]
	ret
	.size flip_one, . - flip_one

	.globl flip_two
	.type flip_two, %function
flip_two:
	adrp	x1, flip_n2
	ldr	x2, [x1, :lo12:flip_n2]
	add	x2, x2, #1
	str	x2, [x1, :lo12:flip_n2]
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

	.section .note.GNU-stack, "", %progbits
