// SPDX-License-Identifier: GPL-2.0-only
/* The aarch64 instruction decoder of the stepper, on libelfscan's decoder: what an instruction
 * does to control flow, which registers it writes, whether it stores a 64-bit word, and where
 * an exclusive sequence ends. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/decoder.h"
#include "elfscan-decode.h"

static void set_mem(struct rd_mem *m, const struct elfscan_a64_mem *em)
{
	m->seg = 0;
	m->base = em->base;
	m->index = em->index;
	m->scale = 1;
	m->disp = em->disp;
}

static enum rd_insn_kind kind_of(enum elfscan_a64_flow flow)
{
	switch (flow) {
	case ELFSCAN_A64_B:
	case ELFSCAN_A64_BR:
		return RD_INSN_JMP;
	case ELFSCAN_A64_BCOND:
		return RD_INSN_JCC;
	case ELFSCAN_A64_BL:
	case ELFSCAN_A64_BLR:
		return RD_INSN_CALL;
	case ELFSCAN_A64_RET:
		return RD_INSN_RET;
	case ELFSCAN_A64_SVC:
		return RD_INSN_SYSCALL;
	default:
		return RD_INSN_OTHER;
	}
}

void rd_decode(struct rd_decoder *d, const uint8_t *buf, size_t len, uint64_t addr,
	       struct rd_insn *in)
{
	struct elfscan_insn ei;
	struct elfscan_a64 a;

	memset(in, 0, sizeof(*in));
	in->addr = addr;
	if (elfscan_decode_a64(d->d, buf, len, addr, &ei, &a)) {
		strcpy(in->text, "(bad)");
		return;
	}
	in->size = ei.size;
	snprintf(in->text, sizeof(in->text), "%s", a.text);
	in->kind = kind_of(a.flow);
	/* Runs unseen between breakpoints only if nothing about it needs looking at; an
	 * exclusive pair is run as a unit from a stop at its load. */
	in->plain = in->kind == RD_INSN_OTHER &&
		    !(a.flags & (ELFSCAN_A64_KERNEL | ELFSCAN_A64_LDEX | ELFSCAN_A64_STEX |
				 ELFSCAN_A64_WRITES_UNKNOWN));
	in->excl = a.flags & ELFSCAN_A64_LDEX;
	in->wregs = a.writes;
	in->has_target = ei.flags & ELFSCAN_INSN_HAS_TARGET;
	in->target = ei.target;
	in->ind_reg =
	    a.ind_reg != ELFSCAN_A64_NOREG &&
	    (a.flow == ELFSCAN_A64_BR || a.flow == ELFSCAN_A64_BLR || a.flow == ELFSCAN_A64_RET);
	in->reg = a.ind_reg;
	in->store = a.store;
	set_mem(&in->st_mem, &a.st);
	in->st_regs = a.st.regs;
	in->st_reg = a.st_reg == ELFSCAN_A64_NOREG ? 0 : a.st_reg + 1;
	in->st_imm = 0;
	in->memw = a.memw == ELFSCAN_A64_MEMW_NONE ? RD_MEMW_NONE
		   : a.memw == ELFSCAN_A64_MEMW_OP ? RD_MEMW_OP
						   : RD_MEMW_ANY;
	set_mem(&in->mw_mem, &a.memw_op);
	in->mw_regs = a.memw_op.regs;
	in->mw_size = a.memw_size;
}

int rd_exclusive_ends(struct rd_decoder *d, const uint8_t *code, size_t len, uint64_t addr,
		      uint64_t *ends, size_t max, size_t *n)
{
	return elfscan_a64_exclusive_ends(d->d, code, len, addr, ends, max, n);
}
