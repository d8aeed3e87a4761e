// SPDX-License-Identifier: GPL-2.0-only
/* The x86_64 instruction decoder of the stepper, on libelfscan's decoder: what an instruction
 * does to control flow, which registers it writes, whether it stores a 64-bit word. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/decoder.h"
#include "elfscan-decode.h"

static void set_mem(struct rd_mem *m, const struct elfscan_x86_mem *em)
{
	m->seg = em->seg;
	m->base = em->base;
	m->index = em->index;
	m->scale = em->scale;
	m->disp = em->disp;
}

static enum rd_insn_kind kind_of(enum elfscan_x86_flow flow)
{
	switch (flow) {
	case ELFSCAN_X86_JMP:
		return RD_INSN_JMP;
	case ELFSCAN_X86_JCC:
		return RD_INSN_JCC;
	case ELFSCAN_X86_CALL:
		return RD_INSN_CALL;
	case ELFSCAN_X86_RET:
		return RD_INSN_RET;
	case ELFSCAN_X86_SYSCALL:
		return RD_INSN_SYSCALL;
	default:
		return RD_INSN_OTHER;
	}
}

void rd_decode(struct rd_decoder *d, const uint8_t *buf, size_t len, uint64_t addr,
	       struct rd_insn *in)
{
	struct elfscan_insn ei;
	struct elfscan_x86 x;

	memset(in, 0, sizeof(*in));
	in->addr = addr;
	if (elfscan_decode_x86(d->d, buf, len, addr, &ei, &x)) {
		strcpy(in->text, "(bad)");
		return;
	}
	in->size = ei.size;
	snprintf(in->text, sizeof(in->text), "%s", x.text);
	in->kind = kind_of(x.flow);
	in->rep = x.flags & ELFSCAN_X86_REP;
	in->late_trap = x.flags & ELFSCAN_X86_CPUID;
	/* Runs unseen between breakpoints only if nothing about it needs looking at. */
	in->plain = in->kind == RD_INSN_OTHER &&
		    !(x.flags & (ELFSCAN_X86_REP | ELFSCAN_X86_KERNEL | ELFSCAN_X86_SEGBASE |
				 ELFSCAN_X86_TSX | ELFSCAN_X86_WRITES_UNKNOWN));
	in->wregs = x.writes;
	in->has_target = ei.flags & ELFSCAN_INSN_HAS_TARGET;
	in->target = ei.target;
	in->ind_reg = x.ind_reg != ELFSCAN_X86_NOREG;
	in->reg = x.ind_reg;
	in->ind_mem = x.ind_mem;
	set_mem(&in->mem, &x.ind);
	in->store = x.store;
	set_mem(&in->st_mem, &x.st);
	in->st_regs = x.st.regs;
	in->st_reg = x.st_reg;
	in->st_imm = x.st_imm;
	in->memw = x.memw == ELFSCAN_X86_MEMW_NONE ? RD_MEMW_NONE
		   : x.memw == ELFSCAN_X86_MEMW_OP ? RD_MEMW_OP
						   : RD_MEMW_ANY;
	set_mem(&in->mw_mem, &x.memw_op);
	in->mw_regs = x.memw_op.regs;
	in->mw_size = x.memw_size;
}

int rd_exclusive_ends(struct rd_decoder *d, const uint8_t *code, size_t len, uint64_t addr,
		      uint64_t *ends, size_t max, size_t *n)
{
	*n = 0;
	return -ENOENT; /* x86 has no exclusive monitor */
}
