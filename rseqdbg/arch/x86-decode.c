// SPDX-License-Identifier: GPL-2.0-only
/* The x86_64 instruction decoder of the stepper (capstone): what an instruction does to
 * control flow, which registers it writes, whether it stores a 64-bit word, and the ways out
 * of a critical section found by decoding it. */
#include <capstone.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"

struct rd_decoder {
	csh h;
	cs_insn *ci;
	uint32_t regbit[X86_REG_ENDING]; /* capstone register -> RD_REG_BIT of its family */
};

/* The 64-bit general registers, each with the names of its parts. */
static const char *const gpr_names[16][5] = {
	{ "rax", "eax", "ax", "al", "ah" },  { "rbx", "ebx", "bx", "bl", "bh" },
	{ "rcx", "ecx", "cx", "cl", "ch" },  { "rdx", "edx", "dx", "dl", "dh" },
	{ "rsi", "esi", "si", "sil", NULL }, { "rdi", "edi", "di", "dil", NULL },
	{ "rbp", "ebp", "bp", "bpl", NULL }, { "rsp", "esp", "sp", "spl", NULL },
	{ "r8", "r8d", "r8w", "r8b", NULL },	 { "r9", "r9d", "r9w", "r9b", NULL },
	{ "r10", "r10d", "r10w", "r10b", NULL }, { "r11", "r11d", "r11w", "r11b", NULL },
	{ "r12", "r12d", "r12w", "r12b", NULL }, { "r13", "r13d", "r13w", "r13b", NULL },
	{ "r14", "r14d", "r14w", "r14b", NULL }, { "r15", "r15d", "r15w", "r15b", NULL },
};

static void fill_regbits(struct rd_decoder *d)
{
	for (int r = 1; r < X86_REG_ENDING; r++) {
		const char *name = cs_reg_name(d->h, (unsigned int)r);

		if (!name)
			continue;
		if (r == X86_REG_FS || r == X86_REG_GS)
			d->regbit[r] = RD_REG_SEG;
		for (int f = 0; f < 16; f++)
			for (int k = 0; k < 5 && gpr_names[f][k]; k++)
				if (!strcmp(name, gpr_names[f][k]))
					d->regbit[r] = 1u << f;
	}
}

/* Instructions that are not branches but must never run unseen between breakpoints. */
static bool traps_or_leaves(unsigned int id)
{
	switch (id) {
	case X86_INS_HLT:
	case X86_INS_INT:
	case X86_INS_INT1:
	case X86_INS_INT3:
	case X86_INS_INTO:
	case X86_INS_SYSCALL:
	case X86_INS_SYSENTER:
	case X86_INS_SYSEXIT:
	case X86_INS_SYSRET:
	case X86_INS_UD0:
	case X86_INS_UD2:
	case X86_INS_UD2B:
	case X86_INS_WRFSBASE:
	case X86_INS_WRGSBASE:
	case X86_INS_XABORT:
	case X86_INS_XBEGIN:
	case X86_INS_XEND:
		return true;
	default:
		return false;
	}
}

int rd_decoder_open(struct rd_decoder **res)
{
	struct rd_decoder *d = calloc(1, sizeof(*d));

	*res = NULL;
	if (!d)
		return -ENOMEM;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &d->h) != CS_ERR_OK) {
		free(d);
		return -EINVAL;
	}
	cs_option(d->h, CS_OPT_DETAIL, CS_OPT_ON);
	fill_regbits(d);
	d->ci = cs_malloc(d->h);
	if (!d->ci) {
		cs_close(&d->h);
		free(d);
		return -ENOMEM;
	}
	*res = d;
	return 0;
}

void rd_decoder_close(struct rd_decoder *d)
{
	if (!d)
		return;
	cs_free(d->ci, 1);
	cs_close(&d->h);
	free(d);
}

static bool in_group(const cs_insn *ci, uint8_t g)
{
	for (uint8_t i = 0; i < ci->detail->groups_count; i++)
		if (ci->detail->groups[i] == g)
			return true;
	return false;
}

static void set_mem(struct rd_mem *m, const x86_op_mem *om)
{
	m->seg = om->segment;
	m->base = om->base;
	m->index = om->index;
	m->scale = om->scale;
	m->disp = om->disp;
}

void rd_decode(struct rd_decoder *d, const uint8_t *buf, size_t len, uint64_t addr,
	       struct rd_insn *in)
{
	const uint8_t *code = buf;
	uint64_t a = addr;
	const cs_x86 *x;
	cs_insn *ci = d->ci;

	memset(in, 0, sizeof(*in));
	in->addr = addr;
	if (!cs_disasm_iter(d->h, &code, &len, &a, ci)) {
		strcpy(in->text, "(bad)");
		return;
	}
	in->size = ci->size;
	snprintf(in->text, sizeof(in->text), "%s%s%s", ci->mnemonic, ci->op_str[0] ? " " : "",
		 ci->op_str);
	x = &ci->detail->x86;
	in->rep = x->prefix[0] == X86_PREFIX_REP || x->prefix[0] == X86_PREFIX_REPNE;
	if (in_group(ci, CS_GRP_RET)) {
		in->kind = RD_INSN_RET;
	} else if (in_group(ci, CS_GRP_CALL)) {
		in->kind = RD_INSN_CALL;
	} else if (in_group(ci, CS_GRP_JUMP)) {
		in->kind = ci->id == X86_INS_JMP || ci->id == X86_INS_LJMP ? RD_INSN_JMP
									 : RD_INSN_JCC;
	} else if (ci->id == X86_INS_SYSCALL) {
		in->kind = RD_INSN_SYSCALL;
	}
	in->late_trap = ci->id == X86_INS_CPUID;
	in->plain = in->kind == RD_INSN_OTHER && !in->rep && !traps_or_leaves(ci->id) &&
		    !in_group(ci, CS_GRP_INT) && !in_group(ci, CS_GRP_IRET) &&
		    !in_group(ci, CS_GRP_PRIVILEGE);
	{
		cs_regs rr, rw;
		uint8_t nr = 0, nw = 0;

		if (cs_regs_access(d->h, ci, rr, &nr, rw, &nw) == CS_ERR_OK) {
			for (uint8_t i = 0; i < nw; i++)
				in->wregs |= rw[i] < X86_REG_ENDING ? d->regbit[rw[i]] : RD_REG_SEG;
		} else {
			in->plain = false; /* what it writes is unknown */
		}
		if (ci->id == X86_INS_WRFSBASE || ci->id == X86_INS_WRGSBASE)
			in->wregs |= RD_REG_SEG;
	}
	if ((in->kind == RD_INSN_JMP || in->kind == RD_INSN_JCC || in->kind == RD_INSN_CALL) &&
	    x->op_count >= 1) {
		const cs_x86_op *op = &x->operands[0];

		if (op->type == X86_OP_IMM) {
			in->has_target = true;
			in->target = (uint64_t)op->imm;
		} else if (op->type == X86_OP_REG) {
			in->ind_reg = true;
			in->reg = op->reg;
		} else if (op->type == X86_OP_MEM) {
			in->ind_mem = true;
			set_mem(&in->mem, &op->mem);
		}
	}
	if (ci->id == X86_INS_MOV && x->op_count == 2 && x->operands[0].type == X86_OP_MEM &&
	    x->operands[0].size == 8) {
		const cs_x86_op *src = &x->operands[1];

		if (src->type == X86_OP_REG || src->type == X86_OP_IMM) {
			in->store = true;
			set_mem(&in->st_mem, &x->operands[0].mem);
			in->st_regs = d->regbit[in->st_mem.base] | d->regbit[in->st_mem.index] |
				      d->regbit[in->st_mem.seg];
			if (src->type == X86_OP_REG)
				in->st_reg = src->reg;
			else
				in->st_imm = src->imm;
		}
	}
}


size_t rd_section_branch_exits(struct rd_decoder *d, const uint8_t *code, uint64_t start,
			       uint64_t post_commit, uint64_t *out, size_t max)
{
	uint64_t addr = start;
	size_t n = 0;

	while (addr < post_commit) {
		struct rd_insn in;
		size_t off = addr - start;

		rd_decode(d, code + off, post_commit - addr, addr, &in);
		if (!in.size) {
			addr++;
			continue;
		}
		if (in.has_target && (in.target < start || in.target >= post_commit)) {
			bool dup = false;

			for (size_t i = 0; i < n; i++)
				dup |= out[i] == in.target;
			if (!dup && n < max)
				out[n++] = in.target;
		}
		addr += in.size;
	}
	return n;
}
