/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Two rseq critical sections updating a per-CPU counter array (aarch64): the sections of
 * ../percpu_counter.S, written the way librseq's arm64 code is.
 *
 *   percpu_inc  reads the CPU number before the section and checks it inside; when the thread
 *               moved in between it leaves through an exit point (__rseq_exit_point_array)
 *               and the caller retries.
 *   percpu_add  reads the CPU number inside the section, so a migration simply aborts it.
 *
 * A section is armed by storing its descriptor's address into the thread's rseq_cs field.
 * Both abort handlers follow the arm64 signature 0xd428bc00 (the one glibc registers, a brk
 * instruction that never runs), count the abort and retry.
 *
 * struct pc_thread (percpu_counter.c): 0 struct rseq *rseq, 8 uint64_t *counters (one 64-byte
 * line per CPU), 16 uint64_t aborts, 24 uint64_t exits. x0 is the thread, x1 the amount.
 */
#define RSEQ_SIG	0xd428bc00
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
	.type	percpu_inc, %function
	.p2align 4
percpu_inc:
	.cfi_startproc
	ldr	x9, [x0, #T_RSEQ]
	ldr	x10, [x0, #T_COUNTERS]
.Linc_retry:
	ldr	w12, [x9, #RSEQ_CPU_ID]
	adrp	x13, cs_inc
	add	x13, x13, :lo12:cs_inc
	str	x13, [x9, #RSEQ_CS]		/* arm */
.Linc_start:
	ldr	w14, [x9, #RSEQ_CPU_ID]
	cmp	w14, w12
	b.ne	.Linc_exit
	add	x14, x10, x12, lsl #LINE_SHIFT
	ldr	x11, [x14]
	add	x11, x11, #1
	str	x11, [x14]			/* commit */
.Linc_post_commit:
	ret
	.inst	RSEQ_SIG
.Linc_abort:
	ldr	x15, [x0, #T_ABORTS]
	add	x15, x15, #1
	str	x15, [x0, #T_ABORTS]
	b	.Linc_retry
.Linc_exit:
	ldr	x15, [x0, #T_EXITS]
	add	x15, x15, #1
	str	x15, [x0, #T_EXITS]
	b	.Linc_retry
	.cfi_endproc
	.size	percpu_inc, . - percpu_inc

/* void percpu_add(struct pc_thread *t, uint64_t n) */
	.globl	percpu_add
	.type	percpu_add, %function
	.p2align 4
percpu_add:
	.cfi_startproc
	ldr	x9, [x0, #T_RSEQ]
	ldr	x10, [x0, #T_COUNTERS]
.Ladd_retry:
	adrp	x13, cs_add
	add	x13, x13, :lo12:cs_add
	str	x13, [x9, #RSEQ_CS]		/* arm */
.Ladd_start:
	ldr	w12, [x9, #RSEQ_CPU_ID]
	add	x14, x10, x12, lsl #LINE_SHIFT
	ldr	x11, [x14]
	add	x11, x11, x1
	str	x11, [x14]			/* commit */
.Ladd_post_commit:
	ret
	.inst	RSEQ_SIG
.Ladd_abort:
	ldr	x15, [x0, #T_ABORTS]
	add	x15, x15, #1
	str	x15, [x0, #T_ABORTS]
	b	.Ladd_retry
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

	.section .note.GNU-stack, "", %progbits
