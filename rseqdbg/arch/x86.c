// SPDX-License-Identifier: GPL-2.0-only
/* The x86_64 registers of the stepper: program counter, breakpoint instruction, system calls,
 * and where an instruction goes next given the registers (numbered as elfscan-decode.h does). */
#include <errno.h>
#include <stddef.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include "arch/arch.h"
#include "elfscan-decode.h"
#include "proc/ptrace.h"

const uint8_t rd_arch_bp_insn[RD_ARCH_BP_LEN] = {0xcc}; /* int3 */

bool rd_arch_is_bp(const uint8_t *bytes)
{
	return bytes[0] == 0xcc; /* uprobes plant int3 too */
}

uint64_t rd_arch_pc(const rd_regs_t *r)
{
	return r->rip;
}

void rd_arch_set_pc(rd_regs_t *r, uint64_t pc)
{
	r->rip = pc;
}

uint64_t rd_arch_sp(const rd_regs_t *r)
{
	return r->rsp;
}

uint64_t rd_arch_bp_addr(uint64_t trap_pc)
{
	return trap_pc - RD_ARCH_BP_LEN; /* int3 traps after itself */
}

#define DR_OFF(i) ((void *)offsetof(struct user, u_debugreg[i]))

int rd_arch_hwbp_slots(pid_t tid)
{
	(void)tid;
	return 4; /* DR0..DR3 */
}

/* DR7: slot's local enable bit, and its condition and length (00, 00: execution, as the
 * architecture requires for it). */
static int dr7_enable(pid_t tid, int slot, bool on)
{
	long dr7;

	errno = 0;
	dr7 = ptrace(PTRACE_PEEKUSER, tid, DR_OFF(7), NULL);
	if (errno)
		return -errno;
	dr7 &= ~(3L << (2 * slot) | 0xfL << (16 + 4 * slot));
	if (on)
		dr7 |= 1L << (2 * slot);
	return ptrace(PTRACE_POKEUSER, tid, DR_OFF(7), (void *)dr7) < 0 ? -errno : 0;
}

int rd_arch_hwbp_set(pid_t tid, int slot, uint64_t addr)
{
	if (slot < 0 || slot > 3)
		return -EINVAL;
	if (ptrace(PTRACE_POKEUSER, tid, DR_OFF(slot), (void *)addr) < 0)
		return -errno;
	return dr7_enable(tid, slot, true);
}

int rd_arch_hwbp_clear(pid_t tid, int slot)
{
	return slot < 0 || slot > 3 ? -EINVAL : dr7_enable(tid, slot, false);
}

bool rd_arch_maps_memory(const rd_regs_t *r)
{
	return r->rax == SYS_mmap || r->rax == SYS_mremap;
}

bool rd_arch_syscall_restarts(const rd_regs_t *r)
{
	/* -ERESTARTSYS, -ERESTARTNOINTR, -ERESTARTNOHAND, -ERESTART_RESTARTBLOCK: the kernel
	 * moves the thread back onto the syscall instruction when it resumes. */
	int64_t ret = (int64_t)r->rax;

	return (int64_t)r->orig_rax >= 0 &&
	       (ret == -512 || ret == -513 || ret == -514 || ret == -516);
}

bool rd_arch_step_armed(const rd_regs_t *r)
{
	(void)r;
	return true; /* TF traps after the instruction, whatever stopped the thread before */
}

/* The value of a 64-bit general register; false for any other register. */
static bool reg_value(int reg, const rd_regs_t *r, uint64_t next_pc, uint64_t *v)
{
	switch (reg) {
	case ELFSCAN_X86_RAX:
		*v = r->rax;
		break;
	case ELFSCAN_X86_RBX:
		*v = r->rbx;
		break;
	case ELFSCAN_X86_RCX:
		*v = r->rcx;
		break;
	case ELFSCAN_X86_RDX:
		*v = r->rdx;
		break;
	case ELFSCAN_X86_RSI:
		*v = r->rsi;
		break;
	case ELFSCAN_X86_RDI:
		*v = r->rdi;
		break;
	case ELFSCAN_X86_RBP:
		*v = r->rbp;
		break;
	case ELFSCAN_X86_RSP:
		*v = r->rsp;
		break;
	case ELFSCAN_X86_R8:
		*v = r->r8;
		break;
	case ELFSCAN_X86_R8 + 1:
		*v = r->r9;
		break;
	case ELFSCAN_X86_R8 + 2:
		*v = r->r10;
		break;
	case ELFSCAN_X86_R8 + 3:
		*v = r->r11;
		break;
	case ELFSCAN_X86_R8 + 4:
		*v = r->r12;
		break;
	case ELFSCAN_X86_R8 + 5:
		*v = r->r13;
		break;
	case ELFSCAN_X86_R8 + 6:
		*v = r->r14;
		break;
	case ELFSCAN_X86_R8 + 7:
		*v = r->r15;
		break;
	case ELFSCAN_X86_RIP:
		*v = next_pc;
		break;
	default:
		return false;
	}
	return true;
}

bool rd_arch_reg(const rd_regs_t *r, int reg, uint64_t *v)
{
	return reg != ELFSCAN_X86_RIP && reg_value(reg, r, 0, v);
}

static bool mem_ea(const struct elfscan_mem *m, const rd_regs_t *r, uint64_t next_pc, uint64_t *ea)
{
	uint64_t base = 0, index = 0, seg = 0;

	if (m->base != ELFSCAN_NOREG && !reg_value(m->base, r, next_pc, &base))
		return false;
	if (m->index != ELFSCAN_NOREG && !reg_value(m->index, r, next_pc, &index))
		return false;
	if (m->seg == ELFSCAN_X86_FS)
		seg = r->fs_base;
	else if (m->seg == ELFSCAN_X86_GS)
		seg = r->gs_base;
	*ea = seg + base + index * (uint64_t)m->scale + (uint64_t)m->disp;
	return true;
}

size_t rd_successors(struct rd_tracee *tr, const struct elfscan_insn *in, const rd_regs_t *r,
		     uint64_t *out, size_t max, bool *unknown)
{
	uint64_t next = in->addr + in->size, t;
	size_t n = 0;

	*unknown = false;
	if (!in->size || max < 2)
		return 0;
	switch (in->flow) {
	case ELFSCAN_FLOW_RET:
		if (rd_pt_peek(tr, r->rsp, &t, sizeof(t)) == 0)
			out[n++] = t;
		else
			*unknown = true;
		return n;
	case ELFSCAN_FLOW_COND:
		out[n++] = next;
		/* fall through */
	case ELFSCAN_FLOW_JUMP:
	case ELFSCAN_FLOW_CALL:
		if (in->flags & ELFSCAN_INSN_HAS_TARGET) {
			out[n++] = in->target;
		} else if (in->ind_reg != ELFSCAN_NOREG && reg_value(in->ind_reg, r, next, &t)) {
			out[n++] = t;
		} else if (in->ind_mem && mem_ea(&in->ind, r, next, &t) &&
			   rd_pt_peek(tr, t, &t, sizeof(t)) == 0) {
			out[n++] = t;
		} else {
			*unknown = true;
		}
		return n;
	default:
		out[n++] = next;
		/* A repeated string instruction stays on itself until done. */
		if (in->run & ELFSCAN_RUN_REPEATS)
			out[n++] = in->addr;
		return n;
	}
}

bool rd_memw_addr(const struct elfscan_insn *in, const rd_regs_t *r, uint64_t *ea)
{
	return in->memw == ELFSCAN_MEMW_OP && mem_ea(&in->memw_op, r, in->addr + in->size, ea);
}

bool rd_store_eval(struct rd_tracee *tr, const struct elfscan_insn *in, const rd_regs_t *r,
		   uint64_t *ea, uint64_t *val)
{
	uint64_t next = in->addr + in->size;

	(void)tr;
	if (!in->store || !mem_ea(&in->st, r, next, ea))
		return false;
	if (in->st_reg == ELFSCAN_NOREG) {
		*val = (uint64_t)in->st_imm;
		return true;
	}
	return reg_value(in->st_reg, r, next, val);
}
