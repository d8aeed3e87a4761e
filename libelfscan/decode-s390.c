// SPDX-License-Identifier: LGPL-2.1-or-later
/* The s390x decoder: control flow, traps, stores and the stack pointer (r15), for the audit;
 * capstone 4 gives few groups here, so the mnemonic says most. */
#include <elf.h>
#include <string.h>

#include "decode-backend.h"

static void s390_mode(uint16_t machine, int elfclass, bool big_endian, struct es_isa_mode *m)
{
	m->arch = CS_ARCH_SYSZ;
	m->mode = CS_MODE_BIG_ENDIAN;
	m->min_insn = 2;
}

static void s390_classify(struct elfscan_decoder *d, const cs_insn *ci, struct elfscan_insn *in)
{
	const cs_sysz *s = &ci->detail->sysz;
	const char *m = ci->mnemonic;

	if (es_starts(m, "bras") || es_starts(m, "basr") || es_starts(m, "bal") ||
	    !strcmp(m, "bas")) {
		in->flags |= ELFSCAN_INSN_CALL;
	} else if (!strcmp(m, "br") && s->op_count == 1 && s->operands[0].reg == SYSZ_REG_14) {
		in->flags |= ELFSCAN_INSN_RET;
	} else if (m[0] == 'j' || es_starts(m, "br") || es_starts(m, "bc") || !strcmp(m, "b")) {
		in->flags |= ELFSCAN_INSN_BRANCH;
		if (strcmp(m, "j") && strcmp(m, "jg") && strcmp(m, "br") && strcmp(m, "b"))
			in->flags |= ELFSCAN_INSN_COND;
	}
	if (in->flags & (ELFSCAN_INSN_BRANCH | ELFSCAN_INSN_CALL)) {
		if (s->op_count >= 1 && s->operands[s->op_count - 1].type == SYSZ_OP_IMM &&
		    (m[0] == 'j' || es_starts(m, "bras") || es_starts(m, "brc") ||
		     es_starts(m, "brct"))) {
			in->flags |= ELFSCAN_INSN_HAS_TARGET;
			in->target = (uint64_t)s->operands[s->op_count - 1].imm;
		} else {
			in->flags |= ELFSCAN_INSN_INDIRECT;
		}
	}
	if (!strcmp(m, "svc"))
		in->flags |= ELFSCAN_INSN_SYSCALL;
	else if (es_starts(m, "trap") || !strcmp(m, "j .") || es_starts(m, "ct"))
		in->flags |= ELFSCAN_INSN_TRAP;
	if ((es_starts(m, "st") && strcmp(m, "stck") && strcmp(m, "stfle")) ||
	    es_starts(m, "mvc") || es_starts(m, "cs") || es_starts(m, "xc") || es_starts(m, "oc") ||
	    es_starts(m, "nc"))
		in->flags |= ELFSCAN_INSN_STORE;
	if (s->op_count >= 1 && s->operands[0].type == SYSZ_OP_REG &&
	    s->operands[0].reg == SYSZ_REG_15 && !(in->flags & ELFSCAN_INSN_STORE) &&
	    !es_starts(m, "c") && !es_starts(m, "t"))
		in->flags |= ELFSCAN_INSN_WRITES_SP;
	if (es_starts(m, "lm") && s->op_count >= 2 && s->operands[0].type == SYSZ_OP_REG &&
	    s->operands[1].type == SYSZ_OP_REG && s->operands[0].reg <= SYSZ_REG_15 &&
	    s->operands[1].reg >= SYSZ_REG_15)
		in->flags |= ELFSCAN_INSN_WRITES_SP;
	(void)d;
}

const struct es_isa es_isa_s390 = {.mode = s390_mode, .classify = s390_classify};
