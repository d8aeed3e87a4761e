// SPDX-License-Identifier: LGPL-2.1-or-later
/* Decode instructions with capstone and classify what each does to control flow and memory. */
#include <capstone.h>
#include <elf.h>
#include <errno.h>
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
	for (size_t i = 0; i < sizeof(stores) / sizeof(stores[0]); i++)
		if (starts(m, stores[i]))
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
	for (size_t i = 0; i < sizeof(stores) / sizeof(stores[0]); i++)
		if (starts(m, stores[i]))
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
