// SPDX-License-Identifier: GPL-2.0-only
/* The aarch64 registers of the stepper: program counter, breakpoint instruction, system calls,
 * and where an instruction goes next given the registers (x0..x30 numbered 0..30, sp 31). */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "arch/arch.h"
#include "elfscan-decode.h"
#include "proc/ptrace.h"

/* brk #0, little-endian: a SIGTRAP (TRAP_BRKPT) with the pc on the brk itself. */
const uint8_t rd_arch_bp_insn[RD_ARCH_BP_LEN] = {0x00, 0x00, 0x20, 0xd4};

bool rd_arch_is_bp(const uint8_t *b)
{
	uint32_t w =
	    (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;

	/* brk #imm, any immediate: uprobes plant brk #0x5 */
	return (w & 0xffe0001fu) == 0xd4200000u;
}

uint64_t rd_arch_pc(const rd_regs_t *r)
{
	return r->pc;
}

void rd_arch_set_pc(rd_regs_t *r, uint64_t pc)
{
	r->pc = pc;
}

uint64_t rd_arch_sp(const rd_regs_t *r)
{
	return r->sp;
}

#ifndef NT_ARM_HW_BREAK
#define NT_ARM_HW_BREAK 0x402
#endif

/* The NT_ARM_HW_BREAK register set (struct user_hwdebug_state). */
struct hwdebug {
	uint32_t dbg_info; /* the number of breakpoint slots in its low byte */
	uint32_t pad;
	struct {
		uint64_t addr;
		uint32_t ctrl;
		uint32_t pad;
	} regs[16];
};

/* A control word: enabled, at EL0, an execution breakpoint over the 4 bytes of an A64
 * instruction (byte address select 0xf). */
#define HWBP_CTRL (0xfu << 5 | 0u << 3 | 2u << 1 | 1u)

static int hwdebug_get(pid_t tid, struct hwdebug *h)
{
	struct iovec iov = {h, sizeof(*h)};

	memset(h, 0, sizeof(*h));
	return ptrace(PTRACE_GETREGSET, tid, (void *)NT_ARM_HW_BREAK, &iov) < 0 ? -errno : 0;
}

int rd_arch_hwbp_slots(pid_t tid)
{
	struct hwdebug h;
	int n;

	if (hwdebug_get(tid, &h) < 0)
		return 0;
	n = (int)(h.dbg_info & 0xff);
	return n > 16 ? 16 : n;
}

static int hwbp_write(pid_t tid, int slot, uint64_t addr, uint32_t ctrl)
{
	struct hwdebug h;
	struct iovec iov = {&h, 0};
	int ret;

	if (slot < 0 || slot >= 16)
		return -EINVAL;
	ret = hwdebug_get(tid, &h);
	if (ret < 0)
		return ret;
	h.regs[slot].addr = addr;
	h.regs[slot].ctrl = ctrl;
	iov.iov_len = offsetof(struct hwdebug, regs) + (size_t)(slot + 1) * sizeof(h.regs[0]);
	return ptrace(PTRACE_SETREGSET, tid, (void *)NT_ARM_HW_BREAK, &iov) < 0 ? -errno : 0;
}

int rd_arch_hwbp_set(pid_t tid, int slot, uint64_t addr)
{
	return hwbp_write(tid, slot, addr, HWBP_CTRL);
}

int rd_arch_hwbp_clear(pid_t tid, int slot)
{
	return hwbp_write(tid, slot, 0, 0);
}

uint64_t rd_arch_bp_addr(uint64_t trap_pc)
{
	return trap_pc; /* brk traps with the pc on itself */
}

bool rd_arch_maps_memory(const rd_regs_t *r)
{
	return r->regs[8] == SYS_mmap || r->regs[8] == SYS_mremap;
}

bool rd_arch_syscall_restarts(const rd_regs_t *r)
{
	/* The kernel moves the pc back onto the svc and x0 back to its argument before the
	 * stop that interrupted the call: the svc at the pc is what runs next, as it looks. */
	(void)r;
	return false;
}

bool rd_arch_step_armed(const rd_regs_t *r)
{
	return r->pstate & (1u << 21); /* PSTATE.SS, software step */
}

/* The value of register reg (0..30, 31 for sp); false for no register. */
static bool reg_value(int reg, const rd_regs_t *r, uint64_t *v)
{
	if (reg >= 0 && reg < 31)
		*v = r->regs[reg];
	else if (reg == ELFSCAN_A64_SP)
		*v = r->sp;
	else
		return false;
	return true;
}

bool rd_arch_reg(const rd_regs_t *r, int reg, uint64_t *v)
{
	return reg_value(reg, r, v);
}

/* The address of a memory operand: base plus offset (a literal: its address). A register
 * offset, whose extend and shift are not recorded, is not computed. */
static bool mem_ea(const struct elfscan_mem *m, const rd_regs_t *r, uint64_t *ea)
{
	uint64_t base;

	if (m->index != ELFSCAN_NOREG)
		return false;
	if (m->base == ELFSCAN_NOREG) {
		*ea = (uint64_t)m->disp;
		return true;
	}
	if (!reg_value(m->base, r, &base))
		return false;
	*ea = base + (uint64_t)m->disp;
	return true;
}

size_t rd_successors(struct rd_tracee *tr, const struct elfscan_insn *in, const rd_regs_t *r,
		     uint64_t *out, size_t max, bool *unknown)
{
	uint64_t next = in->addr + in->size, t;
	size_t n = 0;

	(void)tr;
	*unknown = false;
	if (!in->size || max < 2)
		return 0;
	switch (in->flow) {
	case ELFSCAN_FLOW_COND:
		out[n++] = next;
		/* fall through */
	case ELFSCAN_FLOW_JUMP:
	case ELFSCAN_FLOW_CALL:
	case ELFSCAN_FLOW_RET:
		if (in->flags & ELFSCAN_INSN_HAS_TARGET)
			out[n++] = in->target;
		else if (in->ind_reg != ELFSCAN_NOREG && reg_value(in->ind_reg, r, &t))
			out[n++] = t;
		else
			*unknown = true;
		return n;
	default:
		out[n++] = next;
		return n;
	}
}

bool rd_memw_addr(const struct elfscan_insn *in, const rd_regs_t *r, uint64_t *ea)
{
	return in->memw == ELFSCAN_MEMW_OP && mem_ea(&in->memw_op, r, ea);
}

bool rd_store_eval(struct rd_tracee *tr, const struct elfscan_insn *in, const rd_regs_t *r,
		   uint64_t *ea, uint64_t *val)
{
	(void)tr;
	if (!in->store || !mem_ea(&in->st, r, ea))
		return false;
	if (in->st_reg == ELFSCAN_NOREG) {
		*val = (uint64_t)in->st_imm; /* xzr */
		return true;
	}
	return reg_value(in->st_reg, r, val);
}
