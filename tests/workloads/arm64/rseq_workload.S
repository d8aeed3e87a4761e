/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The three rseq critical sections of ../rseq_workload.S, for aarch64, written the way
 * librseq's arm64 code is: the descriptor's address stored into the thread's rseq_cs field
 * arms a section, and the abort signature (0xd428bc00, the one glibc registers) is the
 * instruction word just before each abort handler, a brk that never runs.
 *
 *   wl_counter_add    librseq style: the expected CPU is read before the section, compared
 *                     inside it; a mismatch leaves through an exit point registered in
 *                     __rseq_exit_point_array. The abort handler counts the abort and retries.
 *   wl_tcmalloc_push  tcmalloc style: cpu_id is read inside the section (no compare needed);
 *                     the abort trampoline, behind the signature, sits before the start and
 *                     branches back to retry. No exit-point entry.
 *   wl_condexit       left by a conditional branch to a label outside it that is neither the
 *                     post-commit address nor the abort handler, and not in any table.
 *
 * Every attempt increments the section's iteration counter before arming, and ends in
 * exactly one of commit, abort or exit, each counted: iterations = commits + aborts + exits.
 * Labels rseq_{start,post_commit,abort,exit}_<name> are global so tests can find them.
 * x0 is the struct wl_thread, x1 the second argument; only x9-x15 are written besides.
 */
#include "rseq_workload.h"

#define ABORT_SIG	.inst WL_RSEQ_SIG

/* One of the thread's counters: WL_CNT(sect, which) bytes into *x0. */
.macro	count off
	ldr	x15, [x0, #\off]
	add	x15, x15, #1
	str	x15, [x0, #\off]
.endm

/* rseq->rseq_cs = &desc (x9: the thread's struct rseq) */
.macro	arm desc
	adrp	x13, \desc
	add	x13, x13, :lo12:\desc
	str	x13, [x9, #WL_RSEQ_CS]
.endm

	.text

/* void wl_counter_add(struct wl_thread *t) */
	.globl	wl_counter_add
	.type	wl_counter_add, %function
	.p2align 4
wl_counter_add:
	.cfi_startproc
	ldr	x9, [x0, #WL_T_RSEQ]
	ldr	x10, [x0, #WL_T_PCPU]
.Lcounter_retry:
	count	WL_CNT(WL_SECT_COUNTER, WL_CNT_ITER)
	ldr	w12, [x9, #WL_RSEQ_CPU_ID]
	arm	wl_cs_counter
	.globl	rseq_start_counter
rseq_start_counter:
	ldr	w14, [x9, #WL_RSEQ_CPU_ID]
	cmp	w14, w12
	b.ne	rseq_exit_counter
	add	x14, x10, x12, lsl #WL_PCPU_SHIFT
	ldr	x11, [x14, #WL_PCPU_COUNTER]
	add	x11, x11, #1
	str	x11, [x14, #WL_PCPU_COUNTER]
	.globl	rseq_post_commit_counter
rseq_post_commit_counter:
	count	WL_CNT(WL_SECT_COUNTER, WL_CNT_COMMIT)
	ret
	ABORT_SIG
	.globl	rseq_abort_counter
rseq_abort_counter:
	count	WL_CNT(WL_SECT_COUNTER, WL_CNT_ABORT)
	b	.Lcounter_retry
	.globl	rseq_exit_counter
rseq_exit_counter:
	count	WL_CNT(WL_SECT_COUNTER, WL_CNT_EXIT)
	b	.Lcounter_retry
	.cfi_endproc
	.size	wl_counter_add, . - wl_counter_add

/* void wl_tcmalloc_push(struct wl_thread *t, uint64_t item) */
	.globl	wl_tcmalloc_push
	.type	wl_tcmalloc_push, %function
	.p2align 4
wl_tcmalloc_push:
	.cfi_startproc
	ldr	x9, [x0, #WL_T_RSEQ]
	ldr	x10, [x0, #WL_T_PCPU]
.Ltcmalloc_retry:
	count	WL_CNT(WL_SECT_TCMALLOC, WL_CNT_ITER)
	b	.Ltcmalloc_prepare
	ABORT_SIG
	.globl	rseq_abort_tcmalloc
rseq_abort_tcmalloc:
	count	WL_CNT(WL_SECT_TCMALLOC, WL_CNT_ABORT)
	b	.Ltcmalloc_retry
.Ltcmalloc_prepare:
	arm	wl_cs_tcmalloc
	.globl	rseq_start_tcmalloc
rseq_start_tcmalloc:
	ldr	w11, [x9, #WL_RSEQ_CPU_ID]
	add	x11, x10, x11, lsl #WL_PCPU_SHIFT
	ldr	x12, [x11, #WL_PCPU_TC_COUNT]
	and	x14, x12, #(WL_TC_NSLOTS - 1)
	add	x14, x11, x14, lsl #3
	str	x1, [x14, #WL_PCPU_TC_SLOTS]
	add	x12, x12, #1
	str	x12, [x11, #WL_PCPU_TC_COUNT]
	.globl	rseq_post_commit_tcmalloc
rseq_post_commit_tcmalloc:
	count	WL_CNT(WL_SECT_TCMALLOC, WL_CNT_COMMIT)
	ret
	.cfi_endproc
	.size	wl_tcmalloc_push, . - wl_tcmalloc_push

/* int wl_condexit(struct wl_thread *t, uint64_t op) */
	.globl	wl_condexit
	.type	wl_condexit, %function
	.p2align 4
wl_condexit:
	.cfi_startproc
	ldr	x9, [x0, #WL_T_RSEQ]
	ldr	x10, [x0, #WL_T_PCPU]
.Lcondexit_retry:
	count	WL_CNT(WL_SECT_CONDEXIT, WL_CNT_ITER)
	arm	wl_cs_condexit
	.globl	rseq_start_condexit
rseq_start_condexit:
	ldr	w11, [x9, #WL_RSEQ_CPU_ID]
	add	x11, x10, x11, lsl #WL_PCPU_SHIFT
	tst	x1, #WL_CONDEXIT_MASK
	b.eq	rseq_exit_condexit
	ldr	x12, [x11, #WL_PCPU_COND]
	add	x12, x12, #1
	str	x12, [x11, #WL_PCPU_COND]
	.globl	rseq_post_commit_condexit
rseq_post_commit_condexit:
	count	WL_CNT(WL_SECT_CONDEXIT, WL_CNT_COMMIT)
	mov	w0, #1
	ret
	ABORT_SIG
	.globl	rseq_abort_condexit
rseq_abort_condexit:
	count	WL_CNT(WL_SECT_CONDEXIT, WL_CNT_ABORT)
	b	.Lcondexit_retry
	.globl	rseq_exit_condexit
rseq_exit_condexit:
	count	WL_CNT(WL_SECT_CONDEXIT, WL_CNT_EXIT)
	mov	w0, #0
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

	.section .note.GNU-stack, "", %progbits
