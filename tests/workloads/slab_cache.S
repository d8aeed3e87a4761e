/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A per-CPU allocation fast path that keeps a "cache valid" flag where the kernel writes:
 * bit 31 of rseq->cpu_id_start, as tcmalloc does. The kernel rewrites cpu_id_start each time
 * the thread returns to user space after it was switched out, clearing the bit, and with it
 * the flag. The section commits only while the bit is set; otherwise it leaves through the
 * exit point sc_refill, which sets the bit again and retries.
 *
 * long sc_alloc(struct sc_thread *t)
 *
 * Every attempt counts in t->iterations, then ends in one of commit, abort or exit, each
 * counted: iterations = commits + aborts + exits.
 */
#define SC_SIG 0x53053053
#define SC_RSEQ 0   /* struct rseq * */
#define SC_PCPU 8   /* uint64_t per-CPU counters, 64 bytes apart */
#define SC_ITER 16
#define SC_COMMIT 24
#define SC_ABORT 32
#define SC_EXIT 40
#define RSEQ_CPU_ID_START 0
#define RSEQ_CPU_ID 4
#define RSEQ_CS 8

	.text
	.globl	sc_alloc
	.type	sc_alloc, @function
	.p2align 4
sc_alloc:
	.cfi_startproc
	movq	SC_RSEQ(%rdi), %r9
.Lsc_retry:
	incq	SC_ITER(%rdi)
	leaq	sc_cs(%rip), %rax
	movq	%rax, RSEQ_CS(%r9)
	.globl	rseq_start_slab
rseq_start_slab:
	movl	RSEQ_CPU_ID_START(%r9), %eax
	btl	$31, %eax
	jnc	sc_refill
	andl	$0x7fffffff, %eax
	shlq	$6, %rax
	addq	SC_PCPU(%rdi), %rax
	incq	(%rax)
	.globl	rseq_post_commit_slab
rseq_post_commit_slab:
	incq	SC_COMMIT(%rdi)
	movl	$1, %eax
	ret
	.byte	0x0f, 0xb9, 0x3d
	.long	SC_SIG
	.globl	rseq_abort_slab
rseq_abort_slab:
	incq	SC_ABORT(%rdi)
	jmp	.Lsc_retry
	/* The cache is stale: mark it valid again for the CPU the kernel names, retry. */
	.globl	sc_refill
sc_refill:
	incq	SC_EXIT(%rdi)
	movl	RSEQ_CPU_ID(%r9), %eax
	orl	$0x80000000, %eax
	movl	%eax, RSEQ_CPU_ID_START(%r9)
	jmp	.Lsc_retry
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

	.section .note.GNU-stack, "", @progbits
