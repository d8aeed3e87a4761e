/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Branches into the middle of an instruction, for x86_64: the paths after such a branch
 * disagree on where instructions start.
 *
 *   ls_run   runs n iterations over two patterns:
 *            - "je 1f; lock; 1: cmpxchg": the single-thread test glibc's atomics make before
 *              each lock cmpxchg (taken on even iterations: cmpxchg without the prefix;
 *              odd ones run the whole lock cmpxchg);
 *            - a jump into the immediate of "mov $imm32, %eax", whose bytes are
 *              "inc %r9; nop" (taken when bit 1 of the iteration is set; otherwise the
 *              mov must load the immediate intact).
 *            Each iteration adds one to *word with the cmpxchg. Returns the number of
 *            iterations whose mov loaded a wrong value; *inner counts the taken jumps
 *            into the immediate.
 */
	.text

/* uint64_t ls_run(uint64_t n, uint64_t *word, uint64_t *inner) */
	.globl	ls_run
	.type	ls_run, @function
	.p2align 4
ls_run:
	.cfi_startproc
	xorl	%r8d, %r8d		/* iterations done */
	xorl	%r9d, %r9d		/* jumps into the immediate taken */
	xorl	%r10d, %r10d		/* wrong immediates */
	testq	%rdi, %rdi
	jz	.Ldone
.Lloop:
	movq	(%rsi), %rax
.Lretry:
	leaq	1(%rax), %rcx
	testb	$1, %r8b
	je	.Lnolock
	lock
.Lnolock:
	cmpxchgq %rcx, (%rsi)
	jne	.Lretry
	xorl	%eax, %eax
	testb	$2, %r8b
	jne	.Limm + 1
.Limm:
	.byte	0xb8			/* mov $0x90c1ff49, %eax ... */
	incq	%r9			/* ... whose immediate is "inc %r9; nop" */
	nop
	testb	$2, %r8b
	jne	.Lnext
	cmpl	$0x90c1ff49, %eax
	je	.Lnext
	incq	%r10
.Lnext:
	incq	%r8
	cmpq	%rdi, %r8
	jb	.Lloop
.Ldone:
	movq	%r9, (%rdx)
	movq	%r10, %rax
	ret
	.cfi_endproc
	.size	ls_run, . - ls_run

	.section .note.GNU-stack, "", @progbits
