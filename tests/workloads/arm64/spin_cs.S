/* SPDX-License-Identifier: GPL-2.0-only */
/* spin_cs's critical section for aarch64, as ../spin_cs.S: spin_op(t, n, m) arms it with a
 * str of the descriptor's address and, inside it, counts n down to zero (m in an odd attempt)
 * before it adds 1 to the counter of the CPU it runs on. Its code has no way out but the
 * commit and the abort handler (behind the signature glibc registers, a brk that never runs),
 * which counts the abort and retries. Counters: WL_SECT_COUNTER's block of t (x0); x1 is n,
 * x2 is m. */
#include "rseq_workload.h"

/* t->field += 1 */
.macro	count off
	ldr	x15, [x0, #\off]
	add	x15, x15, #1
	str	x15, [x0, #\off]
.endm

	.text
	.globl	spin_op
	.type	spin_op, %function
	.p2align 4
spin_op:
	.cfi_startproc
	ldr	x9, [x0, #WL_T_RSEQ]
	ldr	x10, [x0, #WL_T_PCPU]
.Lspin_retry:
	count	WL_CNT(WL_SECT_COUNTER, WL_CNT_ITER)
	tst	x15, #1
	csel	x11, x2, x1, ne
	adrp	x13, spin_cs_desc
	add	x13, x13, :lo12:spin_cs_desc
	str	x13, [x9, #WL_RSEQ_CS]
	.globl	spin_start
spin_start:
	ldr	w12, [x9, #WL_RSEQ_CPU_ID]
1:	subs	x11, x11, #1
	b.ne	1b
	add	x14, x10, x12, lsl #WL_PCPU_SHIFT
	ldr	x11, [x14, #WL_PCPU_COUNTER]
	add	x11, x11, #1
	str	x11, [x14, #WL_PCPU_COUNTER]
	.globl	spin_post_commit
spin_post_commit:
	count	WL_CNT(WL_SECT_COUNTER, WL_CNT_COMMIT)
	ret
	.inst	WL_RSEQ_SIG
	.globl	spin_abort
spin_abort:
	count	WL_CNT(WL_SECT_COUNTER, WL_CNT_ABORT)
	b	.Lspin_retry
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

	.section .note.GNU-stack, "", %progbits
