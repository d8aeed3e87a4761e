/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The critical section of ../step_indirect.S for aarch64: one that can leave through an
 * indirect branch.
 *
 *   si_indirect       when its second argument is non-zero, the section branches through x10
 *                     to rseq_exit_indirect: outside the section, neither the post-commit
 *                     address nor the abort handler, in no table, and not the target of any
 *                     direct branch, so decoding the section cannot find it. Otherwise it adds
 *                     one to the per-CPU counter and commits. The abort handler, behind the
 *                     signature glibc registers on arm64 (0xd428bc00), counts and retries.
 *
 * Every attempt increments the iteration counter before arming (a str of the descriptor's
 * address into rseq_cs) and ends in exactly one of commit, abort or exit, each counted (the
 * counters of section 0 of struct wl_thread).
 */
#include "rseq_workload.h"

/* One of the thread's counters: WL_CNT(0, which) bytes into *x0. */
.macro	count off
	ldr	x15, [x0, #\off]
	add	x15, x15, #1
	str	x15, [x0, #\off]
.endm

	.text

/* int si_indirect(struct wl_thread *t, uint64_t leave): 1 committed, 0 left indirectly */
	.globl	si_indirect
	.type	si_indirect, %function
	.p2align 4
si_indirect:
	.cfi_startproc
	ldr	x9, [x0, #WL_T_RSEQ]
	ldr	x8, [x0, #WL_T_PCPU]
	adrp	x10, rseq_exit_indirect		/* loaded outside the section */
	add	x10, x10, :lo12:rseq_exit_indirect
.Lindirect_retry:
	count	WL_CNT(0, WL_CNT_ITER)
	adrp	x13, si_cs_indirect
	add	x13, x13, :lo12:si_cs_indirect
	str	x13, [x9, #WL_RSEQ_CS]
	.globl	rseq_start_indirect
rseq_start_indirect:
	ldr	w11, [x9, #WL_RSEQ_CPU_ID]
	add	x11, x8, x11, lsl #WL_PCPU_SHIFT
	cbz	x1, .Lindirect_commit
	br	x10
.Lindirect_commit:
	ldr	x12, [x11, #WL_PCPU_COUNTER]
	add	x12, x12, #1
	str	x12, [x11, #WL_PCPU_COUNTER]
	.globl	rseq_post_commit_indirect
rseq_post_commit_indirect:
	count	WL_CNT(0, WL_CNT_COMMIT)
	mov	w0, #1
	ret
	.inst	WL_RSEQ_SIG
	.globl	rseq_abort_indirect
rseq_abort_indirect:
	count	WL_CNT(0, WL_CNT_ABORT)
	b	.Lindirect_retry
	.cfi_endproc
	.size	si_indirect, . - si_indirect

/* Where the indirect branch lands: count the exit and return 0 to si_indirect's caller. */
	.globl	rseq_exit_indirect
	.type	rseq_exit_indirect, %function
	.p2align 4
rseq_exit_indirect:
	.cfi_startproc
	count	WL_CNT(0, WL_CNT_EXIT)
	mov	w0, #0
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

	.section .note.GNU-stack, "", %progbits
