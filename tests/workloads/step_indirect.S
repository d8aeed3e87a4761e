/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A critical section that can leave through an indirect jump, for x86_64.
 *
 *   si_indirect       when its second argument is non-zero, the section jumps through %rax to
 *                     rseq_exit_indirect: outside the section, neither the post-commit address
 *                     nor the abort handler, in no table, and not the target of any direct
 *                     branch, so decoding the section cannot find it. Otherwise it adds one to
 *                     the per-CPU counter and commits. The abort handler counts and retries.
 *
 * Every attempt increments the iteration counter before arming and ends in exactly one of
 * commit, abort or exit, each counted (the counters of section 0 of struct wl_thread).
 */
#include "rseq_workload.h"

	.text

/* int si_indirect(struct wl_thread *t, uint64_t leave): 1 committed, 0 left indirectly */
	.globl	si_indirect
	.type	si_indirect, @function
	.p2align 4
si_indirect:
	.cfi_startproc
	movq	WL_T_RSEQ(%rdi), %r9
	movq	WL_T_PCPU(%rdi), %r8
	leaq	rseq_exit_indirect(%rip), %r10	/* loaded outside the section */
.Lindirect_retry:
	incq	WL_CNT(0, WL_CNT_ITER)(%rdi)
	leaq	si_cs_indirect(%rip), %rax
	movq	%rax, WL_RSEQ_CS(%r9)
	.globl	rseq_start_indirect
rseq_start_indirect:
	movl	WL_RSEQ_CPU_ID(%r9), %ecx
	shlq	$WL_PCPU_SHIFT, %rcx
	addq	%r8, %rcx
	testq	%rsi, %rsi
	jz	.Lindirect_commit
	movq	%r10, %rax
	jmp	*%rax
.Lindirect_commit:
	movq	WL_PCPU_COUNTER(%rcx), %rdx
	addq	$1, %rdx
	movq	%rdx, WL_PCPU_COUNTER(%rcx)
	.globl	rseq_post_commit_indirect
rseq_post_commit_indirect:
	incq	WL_CNT(0, WL_CNT_COMMIT)(%rdi)
	movl	$1, %eax
	ret
	.byte	0x0f, 0xb9, 0x3d
	.long	WL_RSEQ_SIG
	.globl	rseq_abort_indirect
rseq_abort_indirect:
	incq	WL_CNT(0, WL_CNT_ABORT)(%rdi)
	jmp	.Lindirect_retry
	.cfi_endproc
	.size	si_indirect, . - si_indirect

/* Where the indirect jump lands: count the exit and return 0 to si_indirect's caller. */
	.globl	rseq_exit_indirect
	.type	rseq_exit_indirect, @function
	.p2align 4
rseq_exit_indirect:
	.cfi_startproc
	incq	WL_CNT(0, WL_CNT_EXIT)(%rdi)
	xorl	%eax, %eax
	ret
	.cfi_endproc
	.size	rseq_exit_indirect, . - rseq_exit_indirect
	.globl	si_text_end
si_text_end:

/* struct rseq_cs {u32 version, flags; u64 start_ip, post_commit_offset, abort_ip} */
	.pushsection __rseq_cs, "aw"
	.balign	32
si_cs_indirect:
	.long	0, 0
	.quad	rseq_start_indirect, rseq_post_commit_indirect - rseq_start_indirect
	.quad	rseq_abort_indirect
	.popsection

	.pushsection __rseq_cs_ptr_array, "aw"
	.quad	si_cs_indirect
	.popsection

	.section .note.GNU-stack, "", @progbits
