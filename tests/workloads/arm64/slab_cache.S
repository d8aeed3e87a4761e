/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The per-CPU allocation fast path of ../slab_cache.S for aarch64: a "cache valid" flag in
 * bit 31 of rseq->cpu_id_start, as tcmalloc keeps it, which the kernel clears each time the
 * thread returns to user space after it was switched out. The section commits only while the
 * bit is set; otherwise it leaves through the exit point sc_refill, which sets the bit again
 * and retries. Armed with a str of the descriptor's address; the abort handler follows the
 * signature glibc registers on arm64 (0xd428bc00, a brk that never runs).
 *
 * long sc_alloc(struct sc_thread *t)
 *
 * Every attempt counts in t->iterations, then ends in one of commit, abort or exit, each
 * counted: iterations = commits + aborts + exits.
 */
#define SC_SIG 0xd428bc00
#define SC_RSEQ 0   /* struct rseq * */
#define SC_PCPU 8   /* uint64_t per-CPU counters, 64 bytes apart */
#define SC_ITER 16
#define SC_COMMIT 24
#define SC_ABORT 32
#define SC_EXIT 40
#define RSEQ_CPU_ID_START 0
#define RSEQ_CPU_ID 4
#define RSEQ_CS 8

/* t->field += 1 (x0: t) */
.macro	count off
	ldr	x15, [x0, #\off]
	add	x15, x15, #1
	str	x15, [x0, #\off]
.endm

	.text
	.globl	sc_alloc
	.type	sc_alloc, %function
	.p2align 4
sc_alloc:
	.cfi_startproc
	ldr	x9, [x0, #SC_RSEQ]
.Lsc_retry:
	count	SC_ITER
	adrp	x13, sc_cs
	add	x13, x13, :lo12:sc_cs
	str	x13, [x9, #RSEQ_CS]
	.globl	rseq_start_slab
rseq_start_slab:
	ldr	w11, [x9, #RSEQ_CPU_ID_START]
	tbz	w11, #31, sc_refill
	and	w11, w11, #0x7fffffff
	ldr	x12, [x0, #SC_PCPU]
	add	x12, x12, x11, lsl #6
	ldr	x14, [x12]
	add	x14, x14, #1
	str	x14, [x12]
	.globl	rseq_post_commit_slab
rseq_post_commit_slab:
	count	SC_COMMIT
	mov	x0, #1
	ret
	.inst	SC_SIG
	.globl	rseq_abort_slab
rseq_abort_slab:
	count	SC_ABORT
	b	.Lsc_retry
	/* The cache is stale: mark it valid again for the CPU the kernel names, retry. */
	.globl	sc_refill
sc_refill:
	count	SC_EXIT
	ldr	w11, [x9, #RSEQ_CPU_ID]
	orr	w11, w11, #0x80000000
	str	w11, [x9, #RSEQ_CPU_ID_START]
	b	.Lsc_retry
	.cfi_endproc
	.size	sc_alloc, . - sc_alloc

	.pushsection __rseq_cs, "aw"
	.balign	32
sc_cs:
	.long	0, 0
	.quad	rseq_start_slab, rseq_post_commit_slab - rseq_start_slab
	.quad	rseq_abort_slab
	.popsection

	.pushsection __rseq_cs_ptr_array, "aw"
	.quad	sc_cs
	.popsection

	.pushsection __rseq_exit_point_array, "aw"
	.quad	rseq_start_slab, sc_refill
	.popsection

	.section .note.GNU-stack, "", %progbits
