// SPDX-License-Identifier: LGPL-2.1-or-later
/* Decode instructions with capstone and classify what each does to control flow and memory. */
#include <capstone.h>
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfscan-decode.h"
#include "internal.h"

struct elfscan_decoder {
	csh h;
	cs_arch arch;
	cs_insn *ci;
	unsigned int min_insn;
	uint32_t *x86_family; /* 64-bit x86: capstone register -> family bit */
};

bool elfscan_decode_supported(uint16_t machine)
{
	switch (machine) {
	case EM_X86_64:
	case EM_386:
	case EM_AARCH64:
	case EM_ARM:
	case EM_PPC:
	case EM_PPC64:
	case EM_S390:
		return true;
	default:
		return false;
	}
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
static int x86_families(struct elfscan_decoder *d)
{
	d->x86_family = calloc(X86_REG_ENDING, sizeof(*d->x86_family));
	if (!d->x86_family)
		return -ENOMEM;
	for (int r = 1; r < X86_REG_ENDING; r++) {
		const char *name = cs_reg_name(d->h, (unsigned int)r);

		if (!name)
			continue;
		if (r == X86_REG_FS || r == X86_REG_GS)
			d->x86_family[r] = ELFSCAN_X86_SEG_BIT;
		for (int f = 0; f < 16; f++)
			for (int k = 0; k < 5 && x86_gpr_names[f][k]; k++)
				if (!strcmp(name, x86_gpr_names[f][k]))
					d->x86_family[r] = 1u << f;
	}
	return 0;
}

int elfscan_decoder_new(uint16_t machine, int elfclass, bool big_endian,
			struct elfscan_decoder **res)
{
	struct elfscan_decoder *d;
	cs_mode mode = big_endian ? CS_MODE_BIG_ENDIAN : CS_MODE_LITTLE_ENDIAN;
	unsigned int min_insn = 4;
	cs_arch arch;

	*res = NULL;
	switch (machine) {
	case EM_X86_64:
		arch = CS_ARCH_X86;
		mode = elfclass == 32 ? CS_MODE_32 : CS_MODE_64; /* x32 runs 64-bit code */
		min_insn = 1;
		break;
	case EM_386:
		arch = CS_ARCH_X86;
		mode = CS_MODE_32;
		min_insn = 1;
		break;
	case EM_AARCH64:
		arch = CS_ARCH_ARM64;
		break;
	case EM_ARM:
		/* ARM state only: Thumb code is decoded as far as ARM encodings make sense. */
		arch = CS_ARCH_ARM;
		mode |= CS_MODE_ARM;
		break;
	case EM_PPC:
	case EM_PPC64:
		arch = CS_ARCH_PPC;
		mode |= machine == EM_PPC64 ? CS_MODE_64 : CS_MODE_32;
		break;
	case EM_S390:
		arch = CS_ARCH_SYSZ;
		mode = CS_MODE_BIG_ENDIAN;
		min_insn = 2;
		break;
	case EM_RISCV:
		return es_err(EOPNOTSUPP, "riscv: not decoded (capstone %d.%d has no RISC-V)",
			      CS_API_MAJOR, CS_API_MINOR);
	default:
		return es_err(EOPNOTSUPP, "EM_%u: not decoded (capstone %d.%d)", machine,
			      CS_API_MAJOR, CS_API_MINOR);
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return es_err(ENOMEM, "out of memory");
	if (cs_open(arch, mode, &d->h) != CS_ERR_OK) {
		free(d);
		return es_err(EOPNOTSUPP, "capstone cannot decode machine %u", machine);
	}
	cs_option(d->h, CS_OPT_DETAIL, CS_OPT_ON);
	d->ci = cs_malloc(d->h);
	if (!d->ci) {
		cs_close(&d->h);
		free(d);
		return es_err(ENOMEM, "out of memory");
	}
	d->arch = arch;
	d->min_insn = min_insn;
	if (arch == CS_ARCH_X86 && mode == CS_MODE_64 && x86_families(d) < 0) {
		elfscan_decoder_free(d);
		return es_err(ENOMEM, "out of memory");
	}
	*res = d;
	return 0;
}

int elfscan_decoder_for(const struct elfscan *es, struct elfscan_decoder **res)
{
	bool be = elfscan_big_endian(es);

	/* BE8 images (linked big-endian ARMv6+) keep instructions little-endian */
	if (elfscan_machine(es) == EM_ARM && (es->ehdr.e_flags & EF_ARM_BE8))
		be = false;
	return elfscan_decoder_new(elfscan_machine(es), elfscan_class(es), be, res);
}

void elfscan_decoder_free(struct elfscan_decoder *d)
{
	if (!d)
		return;
	cs_free(d->ci, 1);
	cs_close(&d->h);
	free(d->x86_family);
	free(d);
}

unsigned int elfscan_decoder_min_insn(const struct elfscan_decoder *d)
{
	return d->min_insn;
}

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* Whether s starts with one of the n prefixes. */
static bool starts_any(const char *s, const char *const *prefixes, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (starts(s, prefixes[i]))
			return true;
	return false;
}

static bool has_group(const cs_insn *ci, uint8_t g)
{
	const cs_detail *dt = ci->detail;

	for (int i = 0; i < dt->groups_count; i++)
		if (dt->groups[i] == g)
			return true;
	return false;
}

/* Registers the instruction writes, explicit and implicit, when capstone knows them. */
static bool writes_reg(struct elfscan_decoder *d, const cs_insn *ci, unsigned int reg1,
		       unsigned int reg2)
{
	cs_regs rd, wr;
	uint8_t nrd = 0, nwr = 0;

	if (cs_regs_access(d->h, ci, rd, &nrd, wr, &nwr) != CS_ERR_OK) {
		for (int i = 0; i < ci->detail->regs_write_count; i++)
			if (ci->detail->regs_write[i] == reg1 || ci->detail->regs_write[i] == reg2)
				return true;
		return false;
	}
	for (int i = 0; i < nwr; i++)
		if (wr[i] == reg1 || wr[i] == reg2)
			return true;
	return false;
}

static void classify_x86(struct elfscan_decoder *d, const cs_insn *ci, struct elfscan_insn *in)
{
	const cs_x86 *x = &ci->detail->x86;

	if (has_group(ci, CS_GRP_JUMP)) {
		in->flags |= ELFSCAN_INSN_BRANCH;
		if (ci->id != X86_INS_JMP && ci->id != X86_INS_LJMP)
			in->flags |= ELFSCAN_INSN_COND;
	}
	if (has_group(ci, CS_GRP_CALL))
		in->flags |= ELFSCAN_INSN_CALL;
	if (has_group(ci, CS_GRP_RET) || has_group(ci, CS_GRP_IRET))
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
			if (d->min_insn == 1 && ci->detail->x86.addr_size == 4)
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
	if (writes_reg(d, ci, X86_REG_RSP, X86_REG_ESP) || writes_reg(d, ci, X86_REG_SP, 0))
		in->flags |= ELFSCAN_INSN_WRITES_SP;
}

static void classify_arm64(struct elfscan_decoder *d, const cs_insn *ci, struct elfscan_insn *in)
{
	static const char *const stores[] = {"st",     "swp",	 "cas",	  "ldadd",
					     "ldclr",  "ldeor",	 "ldset", "ldsmax",
					     "ldsmin", "ldumax", "ldumin"};
	const cs_arm64 *a = &ci->detail->arm64;
	const char *m = ci->mnemonic;

	if (has_group(ci, CS_GRP_JUMP)) {
		in->flags |= ELFSCAN_INSN_BRANCH;
		if (ci->id != ARM64_INS_B || a->cc != ARM64_CC_INVALID)
			in->flags |= ELFSCAN_INSN_COND;
		if (ci->id == ARM64_INS_BR)
			in->flags &= ~ELFSCAN_INSN_COND;
	}
	if (has_group(ci, CS_GRP_CALL) || ci->id == ARM64_INS_BL || ci->id == ARM64_INS_BLR) {
		in->flags |= ELFSCAN_INSN_CALL;
		in->flags &= ~(ELFSCAN_INSN_BRANCH | ELFSCAN_INSN_COND);
	}
	if (has_group(ci, CS_GRP_RET) || ci->id == ARM64_INS_RET || ci->id == ARM64_INS_ERET) {
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
	if (starts_any(m, stores, NELEM(stores)))
		in->flags |= ELFSCAN_INSN_STORE;
	if (writes_reg(d, ci, ARM64_REG_SP, ARM64_REG_WSP))
		in->flags |= ELFSCAN_INSN_WRITES_SP;
	if (a->op_count >= 1 && a->operands[0].type == ARM64_OP_REG &&
	    a->operands[0].reg == ARM64_REG_SP && !(in->flags & ELFSCAN_INSN_STORE) &&
	    !starts(m, "cmp") && !starts(m, "cmn") && !starts(m, "tst"))
		in->flags |= ELFSCAN_INSN_WRITES_SP;
	if (a->writeback)
		for (int i = 0; i < a->op_count; i++)
			if (a->operands[i].type == ARM64_OP_MEM &&
			    a->operands[i].mem.base == ARM64_REG_SP)
				in->flags |= ELFSCAN_INSN_WRITES_SP;
}

static void classify_arm(struct elfscan_decoder *d, const cs_insn *ci, struct elfscan_insn *in)
{
	static const char *const stores[] = {"str",  "stm", "stl",   "stc", "stre",
					     "push", "vst", "vpush", "swp", "srs"};
	const cs_arm *a = &ci->detail->arm;
	const char *m = ci->mnemonic;

	if (has_group(ci, CS_GRP_JUMP)) {
		in->flags |= ELFSCAN_INSN_BRANCH;
		if (a->cc != ARM_CC_AL && a->cc != ARM_CC_INVALID)
			in->flags |= ELFSCAN_INSN_COND;
	}
	if (has_group(ci, CS_GRP_CALL) || ci->id == ARM_INS_BL || ci->id == ARM_INS_BLX) {
		in->flags |= ELFSCAN_INSN_CALL;
		in->flags &= ~ELFSCAN_INSN_BRANCH;
	}
	/* bx lr and pop {..., pc} return */
	if (has_group(ci, CS_GRP_RET) ||
	    (ci->id == ARM_INS_BX && a->op_count == 1 && a->operands[0].reg == ARM_REG_LR) ||
	    ((ci->id == ARM_INS_POP || ci->id == ARM_INS_LDM) &&
	     writes_reg(d, ci, ARM_REG_PC, 0))) {
		in->flags |= ELFSCAN_INSN_RET;
		in->flags &= ~(ELFSCAN_INSN_BRANCH | ELFSCAN_INSN_COND);
	}
	if (ci->id == ARM_INS_SVC)
		in->flags |= ELFSCAN_INSN_SYSCALL;
	else if (ci->id == ARM_INS_BKPT || ci->id == ARM_INS_UDF)
		in->flags |= ELFSCAN_INSN_TRAP;
	if (in->flags & (ELFSCAN_INSN_BRANCH | ELFSCAN_INSN_CALL)) {
		if (a->op_count >= 1 && a->operands[0].type == ARM_OP_IMM) {
			in->flags |= ELFSCAN_INSN_HAS_TARGET;
			in->target = (uint32_t)a->operands[0].imm;
		} else {
			in->flags |= ELFSCAN_INSN_INDIRECT;
		}
	}
	if (starts_any(m, stores, NELEM(stores)))
		in->flags |= ELFSCAN_INSN_STORE;
	if (writes_reg(d, ci, ARM_REG_SP, 0) ||
	    (a->op_count >= 1 && a->operands[0].type == ARM_OP_REG &&
	     a->operands[0].reg == ARM_REG_SP && !(in->flags & ELFSCAN_INSN_STORE) &&
	     !starts(m, "cmp") && !starts(m, "cmn") && !starts(m, "tst") && !starts(m, "ldm")))
		in->flags |= ELFSCAN_INSN_WRITES_SP;
	if (a->writeback)
		for (int i = 0; i < a->op_count; i++)
			if ((a->operands[i].type == ARM_OP_MEM &&
			     a->operands[i].mem.base == ARM_REG_SP) ||
			    (i == 0 && a->operands[i].type == ARM_OP_REG &&
			     a->operands[i].reg == ARM_REG_SP))
				in->flags |= ELFSCAN_INSN_WRITES_SP;
}

/* ppc and s390x: capstone 4 gives few groups there, so the mnemonic says most. */
static void classify_ppc(struct elfscan_decoder *d, const cs_insn *ci, struct elfscan_insn *in)
{
	const cs_ppc *p = &ci->detail->ppc;
	const char *m = ci->mnemonic;
	size_t len = strlen(m);

	if (m[0] == 'b') {
		bool link =
		    len > 1 && (m[len - 1] == 'l' || (len > 2 && !strcmp(m + len - 2, "la")));
		bool to_lr = starts(m, "blr") || starts(m, "bclr") || strstr(m, "lr");
		bool to_ctr = strstr(m, "ctr") != NULL;

		if (!strcmp(m, "blr") || !strcmp(m, "blr+") || !strcmp(m, "blr-")) {
			in->flags |= ELFSCAN_INSN_RET;
		} else if (link && !starts(m, "blr")) {
			in->flags |= ELFSCAN_INSN_CALL;
		} else {
			in->flags |= ELFSCAN_INSN_BRANCH;
			if (strcmp(m, "b") && strcmp(m, "ba") && strcmp(m, "bctr"))
				in->flags |= ELFSCAN_INSN_COND;
			if (to_lr && !to_ctr)
				in->flags |= ELFSCAN_INSN_RET;
		}
		if (in->flags & (ELFSCAN_INSN_BRANCH | ELFSCAN_INSN_CALL)) {
			if (!to_lr && !to_ctr && p->op_count >= 1 &&
			    p->operands[p->op_count - 1].type == PPC_OP_IMM) {
				in->flags |= ELFSCAN_INSN_HAS_TARGET;
				in->target = (uint64_t)p->operands[p->op_count - 1].imm;
			} else if (!(in->flags & ELFSCAN_INSN_RET)) {
				in->flags |= ELFSCAN_INSN_INDIRECT;
			}
		}
	}
	if (!strcmp(m, "sc") || !strcmp(m, "scv"))
		in->flags |= ELFSCAN_INSN_SYSCALL;
	else if (starts(m, "tw") || starts(m, "td") || !strcmp(m, "trap"))
		in->flags |= ELFSCAN_INSN_TRAP;
	if (starts(m, "st") || starts(m, "dcbz"))
		in->flags |= ELFSCAN_INSN_STORE;
	/* r1 written: any instruction whose first operand is r1, except stores (r1 is then
	 * data) unless they update their base (stdu r1, -32(r1)). */
	if (p->op_count >= 1 && p->operands[0].type == PPC_OP_REG &&
	    p->operands[0].reg == PPC_REG_R1 && !(in->flags & ELFSCAN_INSN_STORE) &&
	    !starts(m, "cmp"))
		in->flags |= ELFSCAN_INSN_WRITES_SP;
	if (m[0] && (m[len - 1] == 'u' || (len > 2 && !strcmp(m + len - 2, "ux"))))
		for (int i = 0; i < p->op_count; i++)
			if (p->operands[i].type == PPC_OP_MEM &&
			    p->operands[i].mem.base == PPC_REG_R1)
				in->flags |= ELFSCAN_INSN_WRITES_SP;
	(void)d;
}

static void classify_s390(struct elfscan_decoder *d, const cs_insn *ci, struct elfscan_insn *in)
{
	const cs_sysz *s = &ci->detail->sysz;
	const char *m = ci->mnemonic;

	if (starts(m, "bras") || starts(m, "basr") || starts(m, "bal") || !strcmp(m, "bas")) {
		in->flags |= ELFSCAN_INSN_CALL;
	} else if (!strcmp(m, "br") && s->op_count == 1 && s->operands[0].reg == SYSZ_REG_14) {
		in->flags |= ELFSCAN_INSN_RET;
	} else if (m[0] == 'j' || starts(m, "br") || starts(m, "bc") || !strcmp(m, "b")) {
		in->flags |= ELFSCAN_INSN_BRANCH;
		if (strcmp(m, "j") && strcmp(m, "jg") && strcmp(m, "br") && strcmp(m, "b"))
			in->flags |= ELFSCAN_INSN_COND;
	}
	if (in->flags & (ELFSCAN_INSN_BRANCH | ELFSCAN_INSN_CALL)) {
		if (s->op_count >= 1 && s->operands[s->op_count - 1].type == SYSZ_OP_IMM &&
		    (m[0] == 'j' || starts(m, "bras") || starts(m, "brc") || starts(m, "brct"))) {
			in->flags |= ELFSCAN_INSN_HAS_TARGET;
			in->target = (uint64_t)s->operands[s->op_count - 1].imm;
		} else {
			in->flags |= ELFSCAN_INSN_INDIRECT;
		}
	}
	if (!strcmp(m, "svc"))
		in->flags |= ELFSCAN_INSN_SYSCALL;
	else if (starts(m, "trap") || !strcmp(m, "j .") || starts(m, "ct"))
		in->flags |= ELFSCAN_INSN_TRAP;
	if ((starts(m, "st") && strcmp(m, "stck") && strcmp(m, "stfle")) || starts(m, "mvc") ||
	    starts(m, "cs") || starts(m, "xc") || starts(m, "oc") || starts(m, "nc"))
		in->flags |= ELFSCAN_INSN_STORE;
	if (s->op_count >= 1 && s->operands[0].type == SYSZ_OP_REG &&
	    s->operands[0].reg == SYSZ_REG_15 && !(in->flags & ELFSCAN_INSN_STORE) &&
	    !starts(m, "c") && !starts(m, "t"))
		in->flags |= ELFSCAN_INSN_WRITES_SP;
	if (starts(m, "lm") && s->op_count >= 2 && s->operands[0].type == SYSZ_OP_REG &&
	    s->operands[1].type == SYSZ_OP_REG && s->operands[0].reg <= SYSZ_REG_15 &&
	    s->operands[1].reg >= SYSZ_REG_15)
		in->flags |= ELFSCAN_INSN_WRITES_SP;
	(void)d;
}

int elfscan_decode_one(struct elfscan_decoder *d, const void *buf, size_t len, uint64_t addr,
		       struct elfscan_insn *insn)
{
	const uint8_t *p = buf;
	uint64_t a = addr;
	cs_insn *ci = d->ci;

	memset(insn, 0, sizeof(*insn));
	insn->addr = addr;
	if (!cs_disasm_iter(d->h, &p, &len, &a, ci))
		return -EILSEQ;
	insn->size = ci->size;
	snprintf(insn->text, sizeof(insn->text), "%.40s%s%.38s", ci->mnemonic,
		 ci->op_str[0] ? " " : "", ci->op_str);
	switch (d->arch) {
	case CS_ARCH_X86:
		classify_x86(d, ci, insn);
		break;
	case CS_ARCH_ARM64:
		classify_arm64(d, ci, insn);
		break;
	case CS_ARCH_ARM:
		classify_arm(d, ci, insn);
		break;
	case CS_ARCH_PPC:
		classify_ppc(d, ci, insn);
		break;
	case CS_ARCH_SYSZ:
		classify_s390(d, ci, insn);
		break;
	default:
		break;
	}
	return 0;
}

int elfscan_decode_range(struct elfscan_decoder *d, const struct elfscan *es, uint64_t lo,
			 uint64_t hi, struct elfscan_insn **insns, size_t *n)
{
	struct elfscan_insn *v = NULL, *nv;
	size_t cap = 0, cnt = 0, len, off = 0;
	unsigned char *buf;
	int err = 0;

	*insns = NULL;
	*n = 0;
	if (hi <= lo || hi - lo > (1u << 26))
		return es_err(EINVAL, "cannot decode [0x%llx, 0x%llx)", (unsigned long long)lo,
			      (unsigned long long)hi);
	/* Up to 15 more bytes, as many as the file has, so that an instruction straddling hi
	 * decodes whole. */
	buf = malloc(hi - lo + 15);
	if (!buf)
		return es_err(ENOMEM, "out of memory");
	for (len = hi - lo + 15;; len--) {
		if (!elfscan_read(es, lo, buf, len))
			break;
		if (len == hi - lo) {
			free(buf);
			return es_err(EFAULT, "bytes at 0x%llx..0x%llx are not in the file",
				      (unsigned long long)lo, (unsigned long long)hi);
		}
	}
	while (lo + off < hi) {
		if (cnt == cap) {
			cap = cap ? 2 * cap : 16;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				err = es_err(ENOMEM, "out of memory");
				goto out;
			}
			v = nv;
		}
		if (elfscan_decode_one(d, buf + off, len - off, lo + off, &v[cnt])) {
			err = es_err(EILSEQ, "no valid instruction at 0x%llx",
				     (unsigned long long)(lo + off));
			break;
		}
		off += v[cnt++].size;
	}
out:
	free(buf);
	if (err && err != -EILSEQ) {
		free(v);
		return err;
	}
	*insns = v;
	*n = cnt;
	return err;
}

/* ---- x86_64: the facts a debugger runs code by ---------------------------------------- */

static enum elfscan_x86_reg es_x86_reg(unsigned int r)
{
	static const unsigned int gpr[16] = {
	    X86_REG_RAX, X86_REG_RBX, X86_REG_RCX, X86_REG_RDX, X86_REG_RSI, X86_REG_RDI,
	    X86_REG_RBP, X86_REG_RSP, X86_REG_R8,  X86_REG_R9,	X86_REG_R10, X86_REG_R11,
	    X86_REG_R12, X86_REG_R13, X86_REG_R14, X86_REG_R15,
	};

	if (r == X86_REG_INVALID)
		return ELFSCAN_X86_NOREG;
	for (int i = 0; i < 16; i++)
		if (gpr[i] == r)
			return (enum elfscan_x86_reg)(ELFSCAN_X86_RAX + i);
	if (r == X86_REG_RIP)
		return ELFSCAN_X86_RIP;
	if (r == X86_REG_FS)
		return ELFSCAN_X86_FS;
	if (r == X86_REG_GS)
		return ELFSCAN_X86_GS;
	return ELFSCAN_X86_OTHER;
}

static uint32_t es_x86_family(const struct elfscan_decoder *d, unsigned int r)
{
	return r < X86_REG_ENDING ? d->x86_family[r] : ELFSCAN_X86_SEG_BIT;
}

static void es_x86_mem(const struct elfscan_decoder *d, const x86_op_mem *om,
		       struct elfscan_x86_mem *m)
{
	m->seg = es_x86_reg(om->segment);
	m->base = es_x86_reg(om->base);
	m->index = es_x86_reg(om->index);
	m->scale = om->scale;
	m->disp = om->disp;
	m->regs = es_x86_family(d, om->base) | es_x86_family(d, om->index) |
		  es_x86_family(d, om->segment);
}

static uint32_t es_x86_flags(const cs_insn *ci)
{
	const cs_x86 *x = &ci->detail->x86;
	uint32_t f = 0;

	if (x->prefix[0] == X86_PREFIX_REP || x->prefix[0] == X86_PREFIX_REPNE)
		f |= ELFSCAN_X86_REP;
	if (has_group(ci, CS_GRP_INT) || has_group(ci, CS_GRP_IRET) ||
	    has_group(ci, CS_GRP_PRIVILEGE))
		f |= ELFSCAN_X86_KERNEL;
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
		return f | ELFSCAN_X86_KERNEL;
	case X86_INS_WRFSBASE:
	case X86_INS_WRGSBASE:
		return f | ELFSCAN_X86_SEGBASE;
	case X86_INS_XABORT:
	case X86_INS_XBEGIN:
	case X86_INS_XEND:
		return f | ELFSCAN_X86_TSX;
	case X86_INS_CPUID:
		return f | ELFSCAN_X86_CPUID;
	default:
		return f;
	}
}

static enum elfscan_x86_flow es_x86_flow(const cs_insn *ci)
{
	if (has_group(ci, CS_GRP_RET))
		return ELFSCAN_X86_RET;
	if (has_group(ci, CS_GRP_CALL))
		return ELFSCAN_X86_CALL;
	if (has_group(ci, CS_GRP_JUMP))
		return ci->id == X86_INS_JMP || ci->id == X86_INS_LJMP ? ELFSCAN_X86_JMP
								       : ELFSCAN_X86_JCC;
	return ci->id == X86_INS_SYSCALL ? ELFSCAN_X86_SYSCALL : ELFSCAN_X86_NEXT;
}

static void es_x86_operands(const struct elfscan_decoder *d, const cs_insn *ci,
			    struct elfscan_x86 *x)
{
	const cs_x86 *cx = &ci->detail->x86;

	if (x->flow == ELFSCAN_X86_JMP || x->flow == ELFSCAN_X86_JCC ||
	    x->flow == ELFSCAN_X86_CALL) {
		const cs_x86_op *op = &cx->operands[0];

		if (cx->op_count >= 1 && op->type == X86_OP_REG) {
			x->ind_reg = es_x86_reg(op->reg);
		} else if (cx->op_count >= 1 && op->type == X86_OP_MEM) {
			x->ind_mem = true;
			es_x86_mem(d, &op->mem, &x->ind);
		}
	}
	if (ci->id == X86_INS_MOV && cx->op_count == 2 && cx->operands[0].type == X86_OP_MEM &&
	    cx->operands[0].size == 8) {
		const cs_x86_op *src = &cx->operands[1];

		if (src->type == X86_OP_REG || src->type == X86_OP_IMM) {
			x->store = true;
			es_x86_mem(d, &cx->operands[0].mem, &x->st);
			if (src->type == X86_OP_REG)
				x->st_reg = es_x86_reg(src->reg);
			else
				x->st_imm = src->imm;
		}
	}
}

/* What it writes to memory. Implicit writes are not in the operands: anything that moves the
 * stack pointer (push, call, enter) writes below it, string and masked moves write at rdi. An
 * operand whose access capstone does not know counts as written. */
static void es_x86_memw(const struct elfscan_decoder *d, const cs_insn *ci, struct elfscan_x86 *x)
{
	const cs_x86 *cx = &ci->detail->x86;

	switch (ci->id) {
	case X86_INS_LEA:
	case X86_INS_NOP:
		return;
	case X86_INS_MASKMOVQ:
	case X86_INS_MASKMOVDQU:
	case X86_INS_VMASKMOVDQU:
		x->memw = ELFSCAN_X86_MEMW_ANY;
		return;
	default:
		break;
	}
	if ((x->writes & ELFSCAN_X86_FAMILY(ELFSCAN_X86_RSP)) ||
	    (x->flags & (ELFSCAN_X86_REP | ELFSCAN_X86_WRITES_UNKNOWN)) ||
	    (x->writes & ELFSCAN_X86_FAMILY(ELFSCAN_X86_RDI) && cx->op_count == 0)) {
		x->memw = ELFSCAN_X86_MEMW_ANY;
		return;
	}
	for (uint8_t i = 0; i < cx->op_count; i++) {
		const cs_x86_op *op = &cx->operands[i];

		if (op->type != X86_OP_MEM || (op->access && !(op->access & CS_AC_WRITE)))
			continue;
		if (x->memw != ELFSCAN_X86_MEMW_NONE) {
			x->memw = ELFSCAN_X86_MEMW_ANY;
			return;
		}
		x->memw = ELFSCAN_X86_MEMW_OP;
		es_x86_mem(d, &op->mem, &x->memw_op);
		x->memw_size = op->size;
	}
	/* string instructions with their operands spelled out */
	if (x->memw == ELFSCAN_X86_MEMW_OP && (cx->prefix[0] || !strncmp(ci->mnemonic, "stos", 4) ||
					       !strncmp(ci->mnemonic, "movs", 4)))
		x->memw = ELFSCAN_X86_MEMW_ANY;
}

int elfscan_decode_x86(struct elfscan_decoder *d, const void *buf, size_t len, uint64_t addr,
		       struct elfscan_insn *insn, struct elfscan_x86 *x)
{
	const cs_insn *ci = d->ci;
	cs_regs rr, rw;
	uint8_t nr = 0, nw = 0;
	int ret;

	memset(x, 0, sizeof(*x));
	if (!d->x86_family)
		return es_err(EINVAL, "not a decoder of 64-bit x86 code");
	ret = elfscan_decode_one(d, buf, len, addr, insn);
	if (ret)
		return ret;
	snprintf(x->text, sizeof(x->text), "%s%s%s", ci->mnemonic, ci->op_str[0] ? " " : "",
		 ci->op_str);
	x->flow = es_x86_flow(ci);
	x->flags = es_x86_flags(ci);
	if (cs_regs_access(d->h, ci, rr, &nr, rw, &nw) == CS_ERR_OK) {
		for (uint8_t i = 0; i < nw; i++)
			x->writes |= es_x86_family(d, rw[i]);
	} else {
		x->flags |= ELFSCAN_X86_WRITES_UNKNOWN;
	}
	if (x->flags & ELFSCAN_X86_SEGBASE)
		x->writes |= ELFSCAN_X86_SEG_BIT;
	es_x86_operands(d, ci, x);
	es_x86_memw(d, ci, x);
	return 0;
}

/* aarch64 */

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
	return ELFSCAN_A64_NOREG;
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

static void a64_mem(const arm64_op_mem *m, struct elfscan_a64_mem *out)
{
	out->base = a64_reg(m->base);
	out->index = m->index != ARM64_REG_INVALID ? a64_reg(m->index) : ELFSCAN_A64_NOREG;
	out->disp = m->disp;
	out->regs = a64_bit(out->base) | a64_bit(out->index);
}

/* The memory it writes; a plain 64-bit store. */
static void a64_memw(const cs_insn *ci, const struct elfscan_insn *in, struct elfscan_a64 *a)
{
	/* Only these write exactly their one operand: the others that store are atomics,
	 * exclusives and vector structures. */
	static const char *const plain[] = {"str", "stur", "stp", "stnp", "stlr", "stlur", "sttr"};
	const cs_arm64 *c = &ci->detail->arm64;
	const char *m = ci->mnemonic;
	const arm64_op_mem *mem = NULL;
	size_t len = strlen(m);
	unsigned int size, r;

	if (!(in->flags & ELFSCAN_INSN_STORE))
		return;
	a->memw = ELFSCAN_A64_MEMW_ANY;
	if (!starts_any(m, plain, NELEM(plain)) || (a->flags & ELFSCAN_A64_STEX) || c->writeback ||
	    c->op_count < 2 || c->operands[0].type != ARM64_OP_REG)
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
	else if (starts(m, "stp") || starts(m, "stnp"))
		size *= 2;
	a->memw = ELFSCAN_A64_MEMW_OP;
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

int elfscan_decode_a64(struct elfscan_decoder *d, const void *buf, size_t len, uint64_t addr,
		       struct elfscan_insn *insn, struct elfscan_a64 *a)
{
	static const char *const ldex[] = {"ldxr", "ldxp", "ldaxr", "ldaxp"};
	static const char *const stex[] = {"stxr", "stxp", "stlxr", "stlxp"};
	const cs_insn *ci = d->ci;
	const cs_arm64 *c;
	cs_regs rr, rw;
	uint8_t nr = 0, nw = 0;
	int ret;

	memset(a, 0, sizeof(*a));
	a->ind_reg = ELFSCAN_A64_NOREG;
	a->st_reg = ELFSCAN_A64_NOREG;
	if (d->arch != CS_ARCH_ARM64)
		return es_err(EINVAL, "not a decoder of aarch64 code");
	ret = elfscan_decode_one(d, buf, len, addr, insn);
	if (ret)
		return ret;
	c = &ci->detail->arm64;
	snprintf(a->text, sizeof(a->text), "%s%s%s", ci->mnemonic, ci->op_str[0] ? " " : "",
		 ci->op_str);
	if (c->op_count >= 1 && c->operands[0].type == ARM64_OP_REG &&
	    (insn->flags & (ELFSCAN_INSN_RET | ELFSCAN_INSN_INDIRECT)))
		a->ind_reg = a64_reg(c->operands[0].reg);
	if (ci->id == ARM64_INS_ERET || (insn->flags & ELFSCAN_INSN_TRAP)) {
		a->flags |= ELFSCAN_A64_KERNEL;
	} else if (insn->flags & ELFSCAN_INSN_RET) {
		a->flow = ELFSCAN_A64_RET;
		if (a->ind_reg == ELFSCAN_A64_NOREG)
			a->ind_reg = 30;
	} else if (insn->flags & ELFSCAN_INSN_CALL) {
		a->flow = insn->flags & ELFSCAN_INSN_INDIRECT ? ELFSCAN_A64_BLR : ELFSCAN_A64_BL;
		a->writes |= a64_bit(30);
	} else if (insn->flags & ELFSCAN_INSN_BRANCH) {
		a->flow = insn->flags & ELFSCAN_INSN_INDIRECT ? ELFSCAN_A64_BR
			  : insn->flags & ELFSCAN_INSN_COND   ? ELFSCAN_A64_BCOND
							      : ELFSCAN_A64_B;
	} else if (insn->flags & ELFSCAN_INSN_SYSCALL) {
		a->flow = ELFSCAN_A64_SVC;
	}
	if (starts_any(ci->mnemonic, ldex, NELEM(ldex)))
		a->flags |= ELFSCAN_A64_LDEX;
	if (starts_any(ci->mnemonic, stex, NELEM(stex)))
		a->flags |= ELFSCAN_A64_STEX;
	if (cs_regs_access(d->h, ci, rr, &nr, rw, &nw) == CS_ERR_OK) {
		for (uint8_t i = 0; i < nw; i++)
			a->writes |= a64_bit(a64_reg(rw[i]));
	} else {
		a->flags |= ELFSCAN_A64_WRITES_UNKNOWN;
	}
	if (insn->flags & ELFSCAN_INSN_WRITES_SP)
		a->writes |= a64_bit(ELFSCAN_A64_SP);
	/* A base register written back is not always among the registers written. */
	for (uint8_t i = 0; c->writeback && i < c->op_count; i++)
		if (c->operands[i].type == ARM64_OP_MEM)
			a->writes |= a64_bit(a64_reg(c->operands[i].mem.base));
	a64_memw(ci, insn, a);
	return 0;
}

int elfscan_a64_exclusive_ends(struct elfscan_decoder *d, const void *code, size_t len,
			       uint64_t addr, uint64_t *ends, size_t max, size_t *n)
{
	const uint8_t *p = code;
	uint64_t out[16];
	size_t nout = 0;
	struct elfscan_insn in;
	struct elfscan_a64 a;
	int ret;

	*n = 0;
	ret = elfscan_decode_a64(d, p, len, addr, &in, &a);
	if (ret)
		return ret;
	if (!(a.flags & ELFSCAN_A64_LDEX))
		return es_err(EINVAL, "%#" PRIx64 ": no load-exclusive", addr);
	for (size_t k = 1; k <= 16 && (k + 1) * 4 <= len; k++) {
		uint64_t at = addr + k * 4, end = at + 4;

		ret = elfscan_decode_a64(d, p + k * 4, len - k * 4, at, &in, &a);
		if (ret)
			return ret;
		if (a.flags & ELFSCAN_A64_STEX) {
			/* The instruction after the store-exclusive, then the branches out. */
			if (!max)
				return -ENOSPC;
			ends[(*n)++] = end;
			for (size_t i = 0; i < nout; i++) {
				bool seen = out[i] >= addr && out[i] <= at;

				for (size_t j = 0; j < *n && !seen; j++)
					seen = ends[j] == out[i];
				if (seen)
					continue;
				if (*n == max)
					return -ENOSPC;
				ends[(*n)++] = out[i];
			}
			return 0;
		}
		if ((a.flags & ELFSCAN_A64_KERNEL) ||
		    (a.flow != ELFSCAN_A64_NEXT && a.flow != ELFSCAN_A64_B &&
		     a.flow != ELFSCAN_A64_BCOND))
			return es_err(EINVAL,
				      "%#" PRIx64 ": %s inside the exclusive sequence at %#" PRIx64,
				      at, a.text, addr);
		if (a.flow != ELFSCAN_A64_NEXT)
			out[nout++] = in.target;
	}
	return -ENOENT;
}
