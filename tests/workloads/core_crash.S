/* SPDX-License-Identifier: GPL-2.0-only */
/* core_crash's critical sections, x86_64. fault_op(rseq, go) arms its section and, inside it,
 * waits for *go, then stores to address 0 (a SIGSEGV at cc_fault_insn, before the commit).
 * wait_op(rseq, go) arms another and waits inside it for a *go that never comes. An abort
 * (a preemption, a migration) goes back to arming the section again. */
#include "rseq_workload.h"

	.text
	.globl	fault_op
	.type	fault_op, @function
	.p2align 4
fault_op:
	.cfi_startproc
	leaq	fault_cs_desc(%rip), %rax
	movq	%rax, WL_RSEQ_CS(%rdi)
	.globl	cc_fault_start
cc_fault_start:
	movl	(%rsi), %eax
	testl	%eax, %eax
	jz	cc_fault_start
	xorl	%ecx, %ecx
	.globl	cc_fault_insn
cc_fault_insn:
	movq	%rax, (%rcx)
	movl	%eax, 4(%rsi)
	.globl	cc_fault_post_commit
cc_fault_post_commit:
	ret
	.byte	0x0f, 0xb9, 0x3d
	.long	WL_RSEQ_SIG
	.globl	cc_fault_abort
cc_fault_abort:
	jmp	fault_op
	.cfi_endproc
	.size	fault_op, . - fault_op

	.globl	wait_op
	.type	wait_op, @function
	.p2align 4
wait_op:
	.cfi_startproc
	leaq	wait_cs_desc(%rip), %rax
	movq	%rax, WL_RSEQ_CS(%rdi)
	.globl	cc_wait_start
cc_wait_start:
	movl	(%rsi), %eax
	testl	%eax, %eax
	jz	cc_wait_start
	movl	%eax, 4(%rsi)
	.globl	cc_wait_post_commit
cc_wait_post_commit:
	ret
	.byte	0x0f, 0xb9, 0x3d
	.long	WL_RSEQ_SIG
	.globl	cc_wait_abort
cc_wait_abort:
	jmp	wait_op
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

	.section .note.GNU-stack, "", @progbits
