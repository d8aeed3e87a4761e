/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Three rseq critical sections in the styles found in the field, for x86_64.
 *
 *   wl_counter_add    librseq style: the expected CPU is read before the section, compared
 *                     inside it; a mismatch leaves through an exit point registered in
 *                     __rseq_exit_point_array. The abort handler follows the ud1-wrapped
 *                     signature, counts the abort and retries.
 *   wl_tcmalloc_push  tcmalloc style: cpu_id is read inside the section (no compare needed);
 *                     the abort trampoline, behind a nopl-wrapped signature, sits before the
 *                     start and jumps back to retry. No exit-point entry.
 *   wl_condexit       left by a conditional branch to a label outside it that is neither the
 *                     post-commit address nor the abort handler, and not in any table.
 *
 * Every attempt increments the section's iteration counter before arming, and ends in
 * exactly one of commit, abort or exit, each counted: iterations = commits + aborts + exits.
 * Labels rseq_{start,post_commit,abort,exit}_<name> are global so tests can find them.
 */
#include "rseq_workload.h"

#define ABORT_SIG_UD1	.byte 0x0f, 0xb9, 0x3d; .long WL_RSEQ_SIG
#define ABORT_SIG_NOPL	.byte 0x0f, 0x1f, 0x05; .long WL_RSEQ_SIG

	.text

/* void wl_counter_add(struct wl_thread *t) */
	.globl	wl_counter_add
	.type	wl_counter_add, @function
	.p2align 4
wl_counter_add:
	.cfi_startproc
	movq	WL_T_RSEQ(%rdi), %rsi
	movq	WL_T_PCPU(%rdi), %r8
.Lcounter_retry:
	incq	WL_CNT(WL_SECT_COUNTER, WL_CNT_ITER)(%rdi)
	movl	WL_RSEQ_CPU_ID(%rsi), %edx
	leaq	wl_cs_counter(%rip), %rax
	movq	%rax, WL_RSEQ_CS(%rsi)
	.globl	rseq_start_counter
rseq_start_counter:
	cmpl	WL_RSEQ_CPU_ID(%rsi), %edx
	jne	rseq_exit_counter
	movl	%edx, %ecx
	shlq	$WL_PCPU_SHIFT, %rcx
	movq	WL_PCPU_COUNTER(%r8,%rcx), %rax
	addq	$1, %rax
	movq	%rax, WL_PCPU_COUNTER(%r8,%rcx)
	.globl	rseq_post_commit_counter
rseq_post_commit_counter:
	incq	WL_CNT(WL_SECT_COUNTER, WL_CNT_COMMIT)(%rdi)
	ret
	ABORT_SIG_UD1
	.globl	rseq_abort_counter
rseq_abort_counter:
	incq	WL_CNT(WL_SECT_COUNTER, WL_CNT_ABORT)(%rdi)
	jmp	.Lcounter_retry
	.globl	rseq_exit_counter
rseq_exit_counter:
	incq	WL_CNT(WL_SECT_COUNTER, WL_CNT_EXIT)(%rdi)
	jmp	.Lcounter_retry
	.cfi_endproc
	.size	wl_counter_add, . - wl_counter_add

/* void wl_tcmalloc_push(struct wl_thread *t, uint64_t item) */
	.globl	wl_tcmalloc_push
	.type	wl_tcmalloc_push, @function
	.p2align 4
wl_tcmalloc_push:
	.cfi_startproc
	movq	WL_T_RSEQ(%rdi), %r9
	movq	WL_T_PCPU(%rdi), %r8
.Ltcmalloc_retry:
	incq	WL_CNT(WL_SECT_TCMALLOC, WL_CNT_ITER)(%rdi)
	jmp	.Ltcmalloc_prepare
	ABORT_SIG_NOPL
	.globl	rseq_abort_tcmalloc
rseq_abort_tcmalloc:
	incq	WL_CNT(WL_SECT_TCMALLOC, WL_CNT_ABORT)(%rdi)
	jmp	.Ltcmalloc_retry
.Ltcmalloc_prepare:
	leaq	wl_cs_tcmalloc(%rip), %rax
	movq	%rax, WL_RSEQ_CS(%r9)
	.globl	rseq_start_tcmalloc
rseq_start_tcmalloc:
	movl	WL_RSEQ_CPU_ID(%r9), %eax
	shlq	$WL_PCPU_SHIFT, %rax
	addq	%r8, %rax
	movq	WL_PCPU_TC_COUNT(%rax), %rcx
	movq	%rcx, %rdx
	andl	$(WL_TC_NSLOTS - 1), %edx
	movq	%rsi, WL_PCPU_TC_SLOTS(%rax,%rdx,8)
	addq	$1, %rcx
	movq	%rcx, WL_PCPU_TC_COUNT(%rax)
	.globl	rseq_post_commit_tcmalloc
rseq_post_commit_tcmalloc:
	incq	WL_CNT(WL_SECT_TCMALLOC, WL_CNT_COMMIT)(%rdi)
	ret
	.cfi_endproc
	.size	wl_tcmalloc_push, . - wl_tcmalloc_push

/* int wl_condexit(struct wl_thread *t, uint64_t op) */
	.globl	wl_condexit
	.type	wl_condexit, @function
	.p2align 4
wl_condexit:
	.cfi_startproc
	movq	WL_T_RSEQ(%rdi), %r9
	movq	WL_T_PCPU(%rdi), %r8
.Lcondexit_retry:
	incq	WL_CNT(WL_SECT_CONDEXIT, WL_CNT_ITER)(%rdi)
	leaq	wl_cs_condexit(%rip), %rax
	movq	%rax, WL_RSEQ_CS(%r9)
	.globl	rseq_start_condexit
rseq_start_condexit:
	movl	WL_RSEQ_CPU_ID(%r9), %eax
	shlq	$WL_PCPU_SHIFT, %rax
	addq	%r8, %rax
	testq	$WL_CONDEXIT_MASK, %rsi
	jz	rseq_exit_condexit
	movq	WL_PCPU_COND(%rax), %rcx
	addq	$1, %rcx
	movq	%rcx, WL_PCPU_COND(%rax)
	.globl	rseq_post_commit_condexit
rseq_post_commit_condexit:
	incq	WL_CNT(WL_SECT_CONDEXIT, WL_CNT_COMMIT)(%rdi)
	movl	$1, %eax
	ret
	ABORT_SIG_UD1
	.globl	rseq_abort_condexit
rseq_abort_condexit:
	incq	WL_CNT(WL_SECT_CONDEXIT, WL_CNT_ABORT)(%rdi)
	jmp	.Lcondexit_retry
	.globl	rseq_exit_condexit
rseq_exit_condexit:
	incq	WL_CNT(WL_SECT_CONDEXIT, WL_CNT_EXIT)(%rdi)
	xorl	%eax, %eax
	ret
	.cfi_endproc
	.size	wl_condexit, . - wl_condexit

/* Descriptors: struct rseq_cs {u32 version, flags; u64 start_ip, post_commit_offset, abort_ip} */
	.pushsection __rseq_cs, "aw"
	.balign	32
wl_cs_counter:
	.long	0, 0
	.quad	rseq_start_counter, rseq_post_commit_counter - rseq_start_counter
	.quad	rseq_abort_counter
	.balign	32
wl_cs_tcmalloc:
	.long	0, 0
	.quad	rseq_start_tcmalloc, rseq_post_commit_tcmalloc - rseq_start_tcmalloc
	.quad	rseq_abort_tcmalloc
	.balign	32
wl_cs_condexit:
	.long	0, 0
	.quad	rseq_start_condexit, rseq_post_commit_condexit - rseq_start_condexit
	.quad	rseq_abort_condexit
	.popsection

	.pushsection __rseq_cs_ptr_array, "aw"
	.quad	wl_cs_counter, wl_cs_tcmalloc, wl_cs_condexit
	.popsection

/* Exit points: {u64 start_ip, u64 exit_ip}; only the counter registers its exit. */
	.pushsection __rseq_exit_point_array, "aw"
	.quad	rseq_start_counter, rseq_exit_counter
	.popsection

	.section .note.GNU-stack, "", @progbits
