// SPDX-License-Identifier: LGPL-2.1-or-later
/* The x86 decoder (x86_64, i386, x32): control flow, traps, stores and the stack pointer for
 * every mode; for 64-bit code also what a debugger runs it by: registers written, indirect
 * operands, the memory written. */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decode-backend.h"

/* A register capstone does not number might be either segment. */
#define SEGS ((1u << ELFSCAN_X86_FS) | (1u << ELFSCAN_X86_GS))

/* What x86_facts() works out, before it becomes flow and run. */
enum {
	X86_REP = 1 << 0,     /* rep or repne prefix */
	X86_KERNEL = 1 << 1,  /* traps, enters or leaves the kernel, privileged, hlt */
	X86_SEGBASE = 1 << 2, /* wrfsbase, wrgsbase */
	X86_TSX = 1 << 3,     /* xbegin, xend, xabort */
	X86_CPUID = 1 << 4,   /* a hypervisor may emulate it, dropping a step trap */
	X86_WRITES_UNKNOWN = 1 << 5,
};

static void x86_mode(uint16_t machine, int elfclass, bool big_endian, struct es_isa_mode *m)
{
	m->arch = CS_ARCH_X86;
	if (machine == EM_386)
		m->mode = CS_MODE_32;
	else
		m->mode = elfclass == 32 ? CS_MODE_32 : CS_MODE_64; /* x32 runs 64-bit code */
	m->min_insn = 1;
	m->runs = m->mode == CS_MODE_64;
}

/* The 64-bit general registers, each with the names of its parts. */
static const char *const x86_gpr_names[16][5] = {
    {"rax", "eax", "ax", "al", "ah"},	   {"rbx", "ebx", "bx", "bl", "bh"},
    {"rcx", "ecx", "cx", "cl", "ch"},	   {"rdx", "edx", "dx", "dl", "dh"},
    {"rsi", "esi", "si", "sil", NULL},	   {"rdi", "edi", "di", "dil", NULL},
    {"rbp", "ebp", "bp", "bpl", NULL},	   {"rsp", "esp", "sp", "spl", NULL},
    {"r8", "r8d", "r8w", "r8b", NULL},	   {"r9", "r9d", "r9w", "r9b", NULL},
    {"r10", "r10d", "r10w", "r10b", NULL}, {"r11", "r11d", "r11w", "r11b", NULL},
    {"r12", "r12d", "r12w", "r12b", NULL}, {"r13", "r13d", "r13w", "r13b", NULL},
    {"r14", "r14d", "r14w", "r14b", NULL}, {"r15", "r15d", "r15w", "r15b", NULL},
};

/* The family bit of every capstone register, by name: capstone numbers the parts of a
 * register apart. */
static int x86_init(struct elfscan_decoder *d)
{
	uint32_t *family;

	if (!d->runs)
		return 0;
	family = calloc(X86_REG_ENDING, sizeof(*family));
	if (!family)
		return -ENOMEM;
	d->priv = family;
	for (int r = 1; r < X86_REG_ENDING; r++) {
		const char *name = cs_reg_name(d->h, (unsigned int)r);

		if (!name)
			continue;
		if (r == X86_REG_FS)
			family[r] = 1u << ELFSCAN_X86_FS;
		if (r == X86_REG_GS)
			family[r] = 1u << ELFSCAN_X86_GS;
		for (int f = 0; f < 16; f++)
			for (int k = 0; k < 5 && x86_gpr_names[f][k]; k++)
				if (!strcmp(name, x86_gpr_names[f][k]))
					family[r] = 1u << f;
	}
	return 0;
}

/* What the audit asks of every machine. */
static void x86_flags(struct elfscan_decoder *d, const cs_insn *ci, struct elfscan_insn *in)
{
	const cs_x86 *x = &ci->detail->x86;

	if (es_cs_group(ci, CS_GRP_JUMP)) {
		in->flags |= ELFSCAN_INSN_BRANCH;
		if (ci->id != X86_INS_JMP && ci->id != X86_INS_LJMP)
			in->flags |= ELFSCAN_INSN_COND;
	}
	if (es_cs_group(ci, CS_GRP_CALL))
		in->flags |= ELFSCAN_INSN_CALL;
	if (es_cs_group(ci, CS_GRP_RET) || es_cs_group(ci, CS_GRP_IRET))
		in->flags |= ELFSCAN_INSN_RET;
	switch (ci->id) {
	case X86_INS_SYSCALL:
	case X86_INS_SYSENTER:
		in->flags |= ELFSCAN_INSN_SYSCALL;
		break;
	case X86_INS_INT:
		if (x->op_count == 1 && x->operands[0].type == X86_OP_IMM &&
		    x->operands[0].imm == 0x80)
			in->flags |= ELFSCAN_INSN_SYSCALL;
		else
			in->flags |= ELFSCAN_INSN_TRAP;
		break;
	case X86_INS_INT1:
	case X86_INS_INT3:
	case X86_INS_INTO:
	case X86_INS_UD2:
	case X86_INS_UD2B: /* capstone 4 spells ud1 (0f b9) this way */
	case X86_INS_UD0:
		in->flags |= ELFSCAN_INSN_TRAP;
		break;
	case X86_INS_PUSH:
	case X86_INS_PUSHAL:
	case X86_INS_PUSHAW:
	case X86_INS_PUSHF:
	case X86_INS_PUSHFD:
	case X86_INS_PUSHFQ:
		in->flags |= ELFSCAN_INSN_STORE;
		break;
	default:
		break;
	}
	if (in->flags & (ELFSCAN_INSN_BRANCH | ELFSCAN_INSN_CALL) && x->op_count >= 1) {
		if (x->operands[0].type == X86_OP_IMM) {
			in->flags |= ELFSCAN_INSN_HAS_TARGET;
			in->target = (uint64_t)x->operands[0].imm;
			if (ci->detail->x86.addr_size == 4)
				in->target &= 0xffffffffu;
		} else {
			in->flags |= ELFSCAN_INSN_INDIRECT;
		}
	}
	for (int i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_MEM && (x->operands[i].access & CS_AC_WRITE) &&
		    ci->id != X86_INS_LEA &&
		    !(in->flags & (ELFSCAN_INSN_BRANCH | ELFSCAN_INSN_CALL)))
			in->flags |= ELFSCAN_INSN_STORE;
	if (es_cs_writes(d, ci, X86_REG_RSP, X86_REG_ESP) || es_cs_writes(d, ci, X86_REG_SP, 0))
		in->flags |= ELFSCAN_INSN_WRITES_SP;
}

/* The register numbers of elfscan-decode.h. */
static int reg_num(unsigned int r)
{
	static const unsigned int gpr[16] = {
	    X86_REG_RAX, X86_REG_RBX, X86_REG_RCX, X86_REG_RDX, X86_REG_RSI, X86_REG_RDI,
	    X86_REG_RBP, X86_REG_RSP, X86_REG_R8,  X86_REG_R9,	X86_REG_R10, X86_REG_R11,
	    X86_REG_R12, X86_REG_R13, X86_REG_R14, X86_REG_R15,
	};

	if (r == X86_REG_INVALID)
		return ELFSCAN_NOREG;
	for (int i = 0; i < 16; i++)
		if (gpr[i] == r)
			return ELFSCAN_X86_RAX + i;
	if (r == X86_REG_RIP)
		return ELFSCAN_X86_RIP;
	if (r == X86_REG_FS)
		return ELFSCAN_X86_FS;
	if (r == X86_REG_GS)
		return ELFSCAN_X86_GS;
	return ELFSCAN_X86_OTHER;
}

/* The register set bit of a capstone register. */
static uint32_t reg_bits(const struct elfscan_decoder *d, unsigned int r)
{
	const uint32_t *family = d->priv;

	return r < X86_REG_ENDING ? family[r] : SEGS;
}

static void x86_mem(const struct elfscan_decoder *d, const x86_op_mem *om, struct elfscan_mem *m)
{
	m->seg = reg_num(om->segment);
	m->base = reg_num(om->base);
	m->index = reg_num(om->index);
	m->scale = om->scale;
	m->disp = om->disp;
	m->regs = reg_bits(d, om->base) | reg_bits(d, om->index) | reg_bits(d, om->segment);
}

static uint32_t x86_facts(const cs_insn *ci)
{
	const cs_x86 *x = &ci->detail->x86;
	uint32_t f = 0;

	if (x->prefix[0] == X86_PREFIX_REP || x->prefix[0] == X86_PREFIX_REPNE)
		f |= X86_REP;
	if (es_cs_group(ci, CS_GRP_INT) || es_cs_group(ci, CS_GRP_IRET) ||
	    es_cs_group(ci, CS_GRP_PRIVILEGE))
		f |= X86_KERNEL;
	switch (ci->id) {
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
		return f | X86_KERNEL;
	case X86_INS_WRFSBASE:
	case X86_INS_WRGSBASE:
		return f | X86_SEGBASE;
	case X86_INS_XABORT:
	case X86_INS_XBEGIN:
	case X86_INS_XEND:
		return f | X86_TSX;
	case X86_INS_CPUID:
		return f | X86_CPUID;
	default:
		return f;
	}
}

static enum elfscan_flow x86_flow(const cs_insn *ci)
{
	if (es_cs_group(ci, CS_GRP_RET))
		return ELFSCAN_FLOW_RET;
	if (es_cs_group(ci, CS_GRP_CALL))
		return ELFSCAN_FLOW_CALL;
	if (es_cs_group(ci, CS_GRP_JUMP))
		return ci->id == X86_INS_JMP || ci->id == X86_INS_LJMP ? ELFSCAN_FLOW_JUMP
								       : ELFSCAN_FLOW_COND;
	return ci->id == X86_INS_SYSCALL ? ELFSCAN_FLOW_SYSCALL : ELFSCAN_FLOW_NEXT;
}

static void x86_operands(const struct elfscan_decoder *d, const cs_insn *ci,
			 struct elfscan_insn *in)
{
	const cs_x86 *cx = &ci->detail->x86;

	if (in->flow == ELFSCAN_FLOW_JUMP || in->flow == ELFSCAN_FLOW_COND ||
	    in->flow == ELFSCAN_FLOW_CALL) {
		const cs_x86_op *op = &cx->operands[0];

		if (cx->op_count >= 1 && op->type == X86_OP_REG) {
			in->ind_reg = reg_num(op->reg);
		} else if (cx->op_count >= 1 && op->type == X86_OP_MEM) {
			in->ind_mem = true;
			x86_mem(d, &op->mem, &in->ind);
		}
	}
	if (ci->id == X86_INS_MOV && cx->op_count == 2 && cx->operands[0].type == X86_OP_MEM &&
	    cx->operands[0].size == 8) {
		const cs_x86_op *src = &cx->operands[1];

		if (src->type == X86_OP_REG || src->type == X86_OP_IMM) {
			in->store = true;
			x86_mem(d, &cx->operands[0].mem, &in->st);
			if (src->type == X86_OP_REG)
				in->st_reg = reg_num(src->reg);
			else
				in->st_imm = src->imm;
		}
	}
}

/* What it writes to memory. Implicit writes are not in the operands: anything that moves the
 * stack pointer (push, call, enter) writes below it, string and masked moves write at rdi. An
 * operand whose access capstone does not know counts as written. */
static void x86_memw(const struct elfscan_decoder *d, const cs_insn *ci, uint32_t facts,
		     struct elfscan_insn *in)
{
	const cs_x86 *cx = &ci->detail->x86;

	switch (ci->id) {
	case X86_INS_LEA:
	case X86_INS_NOP:
		return;
	case X86_INS_MASKMOVQ:
	case X86_INS_MASKMOVDQU:
	case X86_INS_VMASKMOVDQU:
		in->memw = ELFSCAN_MEMW_ANY;
		return;
	default:
		break;
	}
	if ((in->writes & (1u << ELFSCAN_X86_RSP)) || (facts & (X86_REP | X86_WRITES_UNKNOWN)) ||
	    (in->writes & (1u << ELFSCAN_X86_RDI) && cx->op_count == 0)) {
		in->memw = ELFSCAN_MEMW_ANY;
		return;
	}
	for (uint8_t i = 0; i < cx->op_count; i++) {
		const cs_x86_op *op = &cx->operands[i];

		if (op->type != X86_OP_MEM || (op->access && !(op->access & CS_AC_WRITE)))
			continue;
		if (in->memw != ELFSCAN_MEMW_NONE) {
			in->memw = ELFSCAN_MEMW_ANY;
			return;
		}
		in->memw = ELFSCAN_MEMW_OP;
		x86_mem(d, &op->mem, &in->memw_op);
		in->memw_size = op->size;
	}
	/* string instructions with their operands spelled out */
	if (in->memw == ELFSCAN_MEMW_OP &&
	    (cx->prefix[0] || es_starts(ci->mnemonic, "stos") || es_starts(ci->mnemonic, "movs")))
		in->memw = ELFSCAN_MEMW_ANY;
}

static void x86_classify(struct elfscan_decoder *d, const cs_insn *ci, struct elfscan_insn *in)
{
	cs_regs rr, rw;
	uint8_t nr = 0, nw = 0;
	uint32_t facts;

	x86_flags(d, ci, in);
	if (!d->runs)
		return;
	in->flow = x86_flow(ci);
	facts = x86_facts(ci);
	if (cs_regs_access(d->h, ci, rr, &nr, rw, &nw) == CS_ERR_OK) {
		for (uint8_t i = 0; i < nw; i++)
			in->writes |= reg_bits(d, rw[i]);
	} else {
		facts |= X86_WRITES_UNKNOWN;
	}
	if (ci->id == X86_INS_WRFSBASE)
		in->writes |= 1u << ELFSCAN_X86_FS;
	if (ci->id == X86_INS_WRGSBASE)
		in->writes |= 1u << ELFSCAN_X86_GS;
	x86_operands(d, ci, in);
	x86_memw(d, ci, facts, in);
	if (facts & X86_REP)
		in->run |= ELFSCAN_RUN_REPEATS;
	if (facts & X86_KERNEL)
		in->run |= ELFSCAN_RUN_KERNEL;
	if (facts & X86_CPUID)
		in->run |= ELFSCAN_RUN_LATE_TRAP;
	if (facts & X86_WRITES_UNKNOWN)
		in->run |= ELFSCAN_RUN_WRITES_UNKNOWN;
	/* Runs unseen between breakpoints only if nothing about it needs looking at. */
	if (in->flow == ELFSCAN_FLOW_NEXT &&
	    !(facts & (X86_REP | X86_KERNEL | X86_SEGBASE | X86_TSX | X86_WRITES_UNKNOWN)))
		in->run |= ELFSCAN_RUN_PLAIN;
}

const struct es_isa es_isa_x86 = {.mode = x86_mode, .init = x86_init, .classify = x86_classify};
