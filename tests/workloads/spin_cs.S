/* SPDX-License-Identifier: GPL-2.0-only */
/* spin_cs's critical section, x86_64: spin_op(t, n, m) arms it and, inside it, counts n
 * down to zero (m in an odd attempt) before it adds 1 to the counter of the CPU it runs on: a
 * section long enough that a signal sent meanwhile lands in it. Its code has no way out but
 * the commit and the abort handler, which counts the abort and retries. Counters:
 * WL_SECT_COUNTER's block of t. */
#include "rseq_workload.h"

	.text
	.globl	spin_op
	.type	spin_op, @function
	.p2align 4
spin_op:
	.cfi_startproc
	movq	WL_T_RSEQ(%rdi), %r9
	movq	WL_T_PCPU(%rdi), %r8
	movq	%rdx, %r10
.Lspin_retry:
	incq	WL_CNT(WL_SECT_COUNTER, WL_CNT_ITER)(%rdi)
	movq	%rsi, %rcx
	testb	$1, WL_CNT(WL_SECT_COUNTER, WL_CNT_ITER)(%rdi)
	cmovnz	%r10, %rcx
	leaq	spin_cs_desc(%rip), %rax
	movq	%rax, WL_RSEQ_CS(%r9)
	.globl	spin_start
spin_start:
	movl	WL_RSEQ_CPU_ID(%r9), %edx
1:	decq	%rcx
	jnz	1b
	shlq	$WL_PCPU_SHIFT, %rdx
	addq	$1, WL_PCPU_COUNTER(%r8,%rdx)
	.globl	spin_post_commit
spin_post_commit:
	incq	WL_CNT(WL_SECT_COUNTER, WL_CNT_COMMIT)(%rdi)
	ret
	.byte	0x0f, 0xb9, 0x3d
	.long	WL_RSEQ_SIG
	.globl	spin_abort
spin_abort:
	incq	WL_CNT(WL_SECT_COUNTER, WL_CNT_ABORT)(%rdi)
	jmp	.Lspin_retry
	.cfi_endproc
	.size	spin_op, . - spin_op

	.pushsection __rseq_cs, "aw"
	.balign	32
spin_cs_desc:
	.long	0, 0
	.quad	spin_start, spin_post_commit - spin_start, spin_abort
	.popsection

	.pushsection __rseq_cs_ptr_array, "aw"
	.quad	spin_cs_desc
	.popsection

	.section .note.GNU-stack, "", @progbits
