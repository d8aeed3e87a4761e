/* SPDX-License-Identifier: GPL-2.0-only */
/* core_crash's critical sections for aarch64, as ../core_crash.S: fault_op(rseq, go) (x0, x1)
 * arms its section and, inside it, waits for *go, then stores to address 0 (a SIGSEGV at
 * cc_fault_insn, before the commit); wait_op(rseq, go) waits inside another for a *go that
 * never comes. An abort goes back to arming the section again. */
#include "rseq_workload.h"

	.text
	.globl	fault_op
	.type	fault_op, %function
	.p2align 4
fault_op:
	.cfi_startproc
	adrp	x2, fault_cs_desc
	add	x2, x2, :lo12:fault_cs_desc
	str	x2, [x0, #WL_RSEQ_CS]
	.globl	cc_fault_start
cc_fault_start:
	ldr	w3, [x1]
	cbz	w3, cc_fault_start
	mov	x4, xzr
	.globl	cc_fault_insn
cc_fault_insn:
	str	x3, [x4]
	str	w3, [x1, #4]
	.globl	cc_fault_post_commit
cc_fault_post_commit:
	ret
	.inst	WL_RSEQ_SIG
	.globl	cc_fault_abort
cc_fault_abort:
	b	fault_op
	.cfi_endproc
	.size	fault_op, . - fault_op

	.globl	wait_op
	.type	wait_op, %function
	.p2align 4
wait_op:
	.cfi_startproc
	adrp	x2, wait_cs_desc
	add	x2, x2, :lo12:wait_cs_desc
	str	x2, [x0, #WL_RSEQ_CS]
	.globl	cc_wait_start
cc_wait_start:
	ldr	w3, [x1]
	cbz	w3, cc_wait_start
	str	w3, [x1, #4]
	.globl	cc_wait_post_commit
cc_wait_post_commit:
	ret
	.inst	WL_RSEQ_SIG
	.globl	cc_wait_abort
cc_wait_abort:
	b	wait_op
	.cfi_endproc
	.size	wait_op, . - wait_op

	.pushsection __rseq_cs, "aw"
	.balign	32
	.globl	fault_cs_desc
fault_cs_desc:
	.long	0, 0
	.quad	cc_fault_start, cc_fault_post_commit - cc_fault_start, cc_fault_abort
	.balign	32
	.globl	wait_cs_desc
wait_cs_desc:
	.long	0, 0
	.quad	cc_wait_start, cc_wait_post_commit - cc_wait_start, cc_wait_abort
	.popsection

	.pushsection __rseq_cs_ptr_array, "aw"
	.quad	fault_cs_desc
	.quad	wait_cs_desc
	.popsection

	.section .note.GNU-stack, "", %progbits
