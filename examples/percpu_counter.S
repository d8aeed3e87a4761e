/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Two rseq critical sections updating a per-CPU counter array (x86_64).
 *
 *   percpu_inc  reads the CPU number before the section and checks it inside; when the thread
 *               moved in between it leaves through an exit point (__rseq_exit_point_array)
 *               and the caller retries.
 *   percpu_add  reads the CPU number inside the section, so a migration simply aborts it.
 *
 * Both abort handlers follow the x86 signature (0x53053053, wrapped in a ud1 instruction so it
 * disassembles cleanly), count the abort and retry.
 *
 * struct pc_thread (percpu_counter.c): 0 struct rseq *rseq, 8 uint64_t *counters (one 64-byte
 * line per CPU), 16 uint64_t aborts, 24 uint64_t exits.
 */
#define RSEQ_CPU_ID	4
#define RSEQ_CS		8
#define T_RSEQ		0
#define T_COUNTERS	8
#define T_ABORTS	16
#define T_EXITS		24
#define LINE_SHIFT	6

	.text

/* void percpu_inc(struct pc_thread *t) */
	.globl	percpu_inc
	.type	percpu_inc, @function
	.p2align 4
percpu_inc:
	.cfi_startproc
	movq	T_RSEQ(%rdi), %rsi
	movq	T_COUNTERS(%rdi), %r8
.Linc_retry:
	movl	RSEQ_CPU_ID(%rsi), %edx
	leaq	cs_inc(%rip), %rax
	movq	%rax, RSEQ_CS(%rsi)		/* arm */
.Linc_start:
	cmpl	RSEQ_CPU_ID(%rsi), %edx
	jne	.Linc_exit
	movl	%edx, %ecx
	shlq	$LINE_SHIFT, %rcx
	movq	(%r8,%rcx), %rax
	addq	$1, %rax
	movq	%rax, (%r8,%rcx)		/* commit */
.Linc_post_commit:
	ret
	.byte	0x0f, 0xb9, 0x3d
	.long	0x53053053
.Linc_abort:
	incq	T_ABORTS(%rdi)
	jmp	.Linc_retry
.Linc_exit:
	incq	T_EXITS(%rdi)
	jmp	.Linc_retry
	.cfi_endproc
	.size	percpu_inc, . - percpu_inc

/* void percpu_add(struct pc_thread *t, uint64_t n) */
	.globl	percpu_add
	.type	percpu_add, @function
	.p2align 4
percpu_add:
	.cfi_startproc
	movq	T_RSEQ(%rdi), %r9
	movq	T_COUNTERS(%rdi), %r8
.Ladd_retry:
	leaq	cs_add(%rip), %rax
	movq	%rax, RSEQ_CS(%r9)		/* arm */
.Ladd_start:
	movl	RSEQ_CPU_ID(%r9), %ecx
	shlq	$LINE_SHIFT, %rcx
	movq	(%r8,%rcx), %rax
	addq	%rsi, %rax
	movq	%rax, (%r8,%rcx)		/* commit */
.Ladd_post_commit:
	ret
	.byte	0x0f, 0xb9, 0x3d
	.long	0x53053053
.Ladd_abort:
	incq	T_ABORTS(%rdi)
	jmp	.Ladd_retry
	.cfi_endproc
	.size	percpu_add, . - percpu_add

	.pushsection __rseq_cs, "aw"
	.balign	32
cs_inc:
	.long	0, 0
	.quad	.Linc_start, .Linc_post_commit - .Linc_start, .Linc_abort
	.balign	32
cs_add:
	.long	0, 0
	.quad	.Ladd_start, .Ladd_post_commit - .Ladd_start, .Ladd_abort
	.popsection

	.pushsection __rseq_cs_ptr_array, "aw"
	.quad	cs_inc, cs_add
	.popsection

	.pushsection __rseq_exit_point_array, "aw"
	.quad	.Linc_start, .Linc_exit
	.popsection

/* The program prints the runtime addresses of its sections from these descriptors. */
	.globl	percpu_cs_inc
	.set	percpu_cs_inc, cs_inc
	.globl	percpu_cs_add
	.set	percpu_cs_add, cs_add

	.section .note.GNU-stack, "", @progbits
