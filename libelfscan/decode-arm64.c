// SPDX-License-Identifier: LGPL-2.1-or-later
/* The aarch64 decoder: control flow, traps, stores and the stack pointer, and what a debugger
 * runs code by: registers written, indirect operands, the memory written, exclusives. */
#include <elf.h>
#include <string.h>

#include "decode-backend.h"

static void a64_mode(uint16_t machine, int elfclass, bool big_endian, struct es_isa_mode *m)
{
	m->arch = CS_ARCH_ARM64;
	m->runs = true;
}

/* What the audit asks of every machine. */
static void a64_flags(struct elfscan_decoder *d, const cs_insn *ci, struct elfscan_insn *in)
{
	static const char *const stores[] = {"st",     "swp",	 "cas",	  "ldadd",
					     "ldclr",  "ldeor",	 "ldset", "ldsmax",
					     "ldsmin", "ldumax", "ldumin"};
	const cs_arm64 *a = &ci->detail->arm64;
	const char *m = ci->mnemonic;

	if (es_cs_group(ci, CS_GRP_JUMP)) {
		in->flags |= ELFSCAN_INSN_BRANCH;
		if (ci->id != ARM64_INS_B || a->cc != ARM64_CC_INVALID)
			in->flags |= ELFSCAN_INSN_COND;
		if (ci->id == ARM64_INS_BR)
			in->flags &= ~ELFSCAN_INSN_COND;
	}
	if (es_cs_group(ci, CS_GRP_CALL) || ci->id == ARM64_INS_BL || ci->id == ARM64_INS_BLR) {
		in->flags |= ELFSCAN_INSN_CALL;
		in->flags &= ~(ELFSCAN_INSN_BRANCH | ELFSCAN_INSN_COND);
	}
	if (es_cs_group(ci, CS_GRP_RET) || ci->id == ARM64_INS_RET || ci->id == ARM64_INS_ERET) {
		in->flags |= ELFSCAN_INSN_RET;
		in->flags &= ~(ELFSCAN_INSN_BRANCH | ELFSCAN_INSN_COND);
	}
	if (ci->id == ARM64_INS_SVC)
		in->flags |= ELFSCAN_INSN_SYSCALL;
	else if (ci->id == ARM64_INS_BRK || ci->id == ARM64_INS_HLT || ci->id == ARM64_INS_HVC ||
		 ci->id == ARM64_INS_SMC || !strcmp(m, "udf"))
		in->flags |= ELFSCAN_INSN_TRAP;
	if (in->flags & (ELFSCAN_INSN_BRANCH | ELFSCAN_INSN_CALL)) {
		if (a->op_count >= 1 && a->operands[a->op_count - 1].type == ARM64_OP_IMM) {
			in->flags |= ELFSCAN_INSN_HAS_TARGET;
			in->target = (uint64_t)a->operands[a->op_count - 1].imm;
		} else {
			in->flags |= ELFSCAN_INSN_INDIRECT;
		}
	}
	if (es_starts_any(m, stores, ES_NELEM(stores)))
		in->flags |= ELFSCAN_INSN_STORE;
	if (es_cs_writes(d, ci, ARM64_REG_SP, ARM64_REG_WSP))
		in->flags |= ELFSCAN_INSN_WRITES_SP;
	if (a->op_count >= 1 && a->operands[0].type == ARM64_OP_REG &&
	    a->operands[0].reg == ARM64_REG_SP && !(in->flags & ELFSCAN_INSN_STORE) &&
	    !es_starts(m, "cmp") && !es_starts(m, "cmn") && !es_starts(m, "tst"))
		in->flags |= ELFSCAN_INSN_WRITES_SP;
	if (a->writeback)
		for (int i = 0; i < a->op_count; i++)
			if (a->operands[i].type == ARM64_OP_MEM &&
			    a->operands[i].mem.base == ARM64_REG_SP)
				in->flags |= ELFSCAN_INSN_WRITES_SP;
}

static int a64_reg(unsigned int r)
{
	if (r >= ARM64_REG_W0 && r <= ARM64_REG_W30)
		return (int)(r - ARM64_REG_W0);
	if (r >= ARM64_REG_X0 && r <= ARM64_REG_X28)
		return (int)(r - ARM64_REG_X0);
	if (r == ARM64_REG_X29 || r == ARM64_REG_X30)
		return r == ARM64_REG_X29 ? 29 : 30;
	if (r == ARM64_REG_SP || r == ARM64_REG_WSP)
		return ELFSCAN_A64_SP;
	return ELFSCAN_NOREG;
}

static uint32_t a64_bit(int reg)
{
	return reg < 0 ? 0 : 1u << reg;
}

/* Bytes one register of a store holds. */
static unsigned int a64_reg_size(unsigned int r)
{
	if ((r >= ARM64_REG_X0 && r <= ARM64_REG_X28) || r == ARM64_REG_X29 || r == ARM64_REG_X30 ||
	    r == ARM64_REG_XZR || r == ARM64_REG_SP || (r >= ARM64_REG_D0 && r <= ARM64_REG_D31))
		return 8;
	if ((r >= ARM64_REG_W0 && r <= ARM64_REG_W30) || r == ARM64_REG_WZR ||
	    (r >= ARM64_REG_S0 && r <= ARM64_REG_S31))
		return 4;
	if (r >= ARM64_REG_Q0 && r <= ARM64_REG_Q31)
		return 16;
	if (r >= ARM64_REG_H0 && r <= ARM64_REG_H31)
		return 2;
	if (r >= ARM64_REG_B0 && r <= ARM64_REG_B31)
		return 1;
	return 0;
}

static void a64_mem(const arm64_op_mem *m, struct elfscan_mem *out)
{
	out->seg = ELFSCAN_NOREG;
	out->base = a64_reg(m->base);
	out->index = m->index != ARM64_REG_INVALID ? a64_reg(m->index) : ELFSCAN_NOREG;
	out->scale = 1;
	out->disp = m->disp;
	out->regs = a64_bit(out->base) | a64_bit(out->index);
}

/* The memory it writes; a plain 64-bit store. */
static void a64_memw(const cs_insn *ci, bool stex, struct elfscan_insn *a)
{
	/* Only these write exactly their one operand: the others that store are atomics,
	 * exclusives and vector structures. */
	static const char *const plain[] = {"str", "stur", "stp", "stnp", "stlr", "stlur", "sttr"};
	const cs_arm64 *c = &ci->detail->arm64;
	const char *m = ci->mnemonic;
	const arm64_op_mem *mem = NULL;
	size_t len = strlen(m);
	unsigned int size, r;

	if (!(a->flags & ELFSCAN_INSN_STORE))
		return;
	a->memw = ELFSCAN_MEMW_ANY;
	if (!es_starts_any(m, plain, ES_NELEM(plain)) || stex || c->writeback || c->op_count < 2 ||
	    c->operands[0].type != ARM64_OP_REG)
		return;
	for (uint8_t i = 0; i < c->op_count; i++) {
		if (c->operands[i].type != ARM64_OP_MEM)
			continue;
		if (mem)
			return;
		mem = &c->operands[i].mem;
	}
	size = a64_reg_size(c->operands[0].reg);
	if (!mem || !size)
		return;
	if (m[len - 1] == 'b')
		size = 1;
	else if (m[len - 1] == 'h')
		size = 2;
	else if (es_starts(m, "stp") || es_starts(m, "stnp"))
		size *= 2;
	a->memw = ELFSCAN_MEMW_OP;
	a64_mem(mem, &a->memw_op);
	a->memw_size = size;
	/* from a general register: x0..x30 or xzr (the value 0), not d0..d31 */
	r = c->operands[0].reg;
	if ((!strcmp(m, "str") || !strcmp(m, "stur")) &&
	    (r == ARM64_REG_XZR || (a64_reg(r) >= 0 && a64_reg(r) < ELFSCAN_A64_SP && size == 8))) {
		a->store = true;
		a->st = a->memw_op;
		a->st_reg = a64_reg(r);
	}
}

static void a64_classify(struct elfscan_decoder *d, const cs_insn *ci, struct elfscan_insn *in)
{
	static const char *const ldex[] = {"ldxr", "ldxp", "ldaxr", "ldaxp"};
	static const char *const stex[] = {"stxr", "stxp", "stlxr", "stlxp"};
	const cs_arm64 *c = &ci->detail->arm64;
	bool kernel;
	cs_regs rr, rw;
	uint8_t nr = 0, nw = 0;
	int ind = ELFSCAN_NOREG;

	a64_flags(d, ci, in);
	kernel = ci->id == ARM64_INS_ERET || (in->flags & ELFSCAN_INSN_TRAP);
	if (c->op_count >= 1 && c->operands[0].type == ARM64_OP_REG &&
	    (in->flags & (ELFSCAN_INSN_RET | ELFSCAN_INSN_INDIRECT)))
		ind = a64_reg(c->operands[0].reg);
	if (kernel) {
		in->run |= ELFSCAN_RUN_KERNEL;
	} else if (in->flags & ELFSCAN_INSN_RET) {
		in->flow = ELFSCAN_FLOW_RET;
		in->ind_reg = ind == ELFSCAN_NOREG ? ELFSCAN_A64_LR : ind;
	} else if (in->flags & ELFSCAN_INSN_CALL) {
		in->flow = ELFSCAN_FLOW_CALL;
		if (in->flags & ELFSCAN_INSN_INDIRECT)
			in->ind_reg = ind;
		in->writes |= a64_bit(ELFSCAN_A64_LR);
	} else if (in->flags & ELFSCAN_INSN_BRANCH) {
		in->flow =
		    (in->flags & (ELFSCAN_INSN_INDIRECT | ELFSCAN_INSN_COND)) == ELFSCAN_INSN_COND
			? ELFSCAN_FLOW_COND
			: ELFSCAN_FLOW_JUMP;
		if (in->flags & ELFSCAN_INSN_INDIRECT)
			in->ind_reg = ind;
	} else if (in->flags & ELFSCAN_INSN_SYSCALL) {
		in->flow = ELFSCAN_FLOW_SYSCALL;
	}
	if (es_starts_any(ci->mnemonic, ldex, ES_NELEM(ldex)))
		in->run |= ELFSCAN_RUN_EXCL_LOAD;
	if (es_starts_any(ci->mnemonic, stex, ES_NELEM(stex)))
		in->run |= ELFSCAN_RUN_EXCL_STORE;
	if (cs_regs_access(d->h, ci, rr, &nr, rw, &nw) == CS_ERR_OK) {
		for (uint8_t i = 0; i < nw; i++)
			in->writes |= a64_bit(a64_reg(rw[i]));
	} else {
		in->run |= ELFSCAN_RUN_WRITES_UNKNOWN;
	}
	if (in->flags & ELFSCAN_INSN_WRITES_SP)
		in->writes |= a64_bit(ELFSCAN_A64_SP);
	/* A base register written back is not always among the registers written. */
	for (uint8_t i = 0; c->writeback && i < c->op_count; i++)
		if (c->operands[i].type == ARM64_OP_MEM)
			in->writes |= a64_bit(a64_reg(c->operands[i].mem.base));
	a64_memw(ci, in->run & ELFSCAN_RUN_EXCL_STORE, in);
	/* Runs unseen between breakpoints only if nothing about it needs looking at; an
	 * exclusive pair is run as a unit from a stop at its load. */
	if (in->flow == ELFSCAN_FLOW_NEXT &&
	    !(in->run & (ELFSCAN_RUN_KERNEL | ELFSCAN_RUN_EXCL_LOAD | ELFSCAN_RUN_EXCL_STORE |
			 ELFSCAN_RUN_WRITES_UNKNOWN)))
		in->run |= ELFSCAN_RUN_PLAIN;
}

const struct es_isa es_isa_arm64 = {.mode = a64_mode, .classify = a64_classify};
