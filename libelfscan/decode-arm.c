// SPDX-License-Identifier: LGPL-2.1-or-later
/* The arm decoder (ARM state; Thumb code is decoded as far as ARM encodings make sense):
 * control flow, traps, stores and the stack pointer, for the audit. */
#include <elf.h>
#include <string.h>

#include "decode-backend.h"

static void arm_mode(uint16_t machine, int elfclass, bool big_endian, struct es_isa_mode *m)
{
	m->arch = CS_ARCH_ARM;
	m->mode |= CS_MODE_ARM;
}

static void arm_classify(struct elfscan_decoder *d, const cs_insn *ci, struct elfscan_insn *in)
{
	static const char *const stores[] = {"str",  "stm", "stl",   "stc", "stre",
					     "push", "vst", "vpush", "swp", "srs"};
	const cs_arm *a = &ci->detail->arm;
	const char *m = ci->mnemonic;

	if (es_cs_group(ci, CS_GRP_JUMP)) {
		in->flags |= ELFSCAN_INSN_BRANCH;
		if (a->cc != ARM_CC_AL && a->cc != ARM_CC_INVALID)
			in->flags |= ELFSCAN_INSN_COND;
	}
	if (es_cs_group(ci, CS_GRP_CALL) || ci->id == ARM_INS_BL || ci->id == ARM_INS_BLX) {
		in->flags |= ELFSCAN_INSN_CALL;
		in->flags &= ~ELFSCAN_INSN_BRANCH;
	}
	/* bx lr and pop {..., pc} return */
	if (es_cs_group(ci, CS_GRP_RET) ||
	    (ci->id == ARM_INS_BX && a->op_count == 1 && a->operands[0].reg == ARM_REG_LR) ||
	    ((ci->id == ARM_INS_POP || ci->id == ARM_INS_LDM) &&
	     es_cs_writes(d, ci, ARM_REG_PC, 0))) {
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
	if (es_starts_any(m, stores, ES_NELEM(stores)))
		in->flags |= ELFSCAN_INSN_STORE;
	if (es_cs_writes(d, ci, ARM_REG_SP, 0) ||
	    (a->op_count >= 1 && a->operands[0].type == ARM_OP_REG &&
	     a->operands[0].reg == ARM_REG_SP && !(in->flags & ELFSCAN_INSN_STORE) &&
	     !es_starts(m, "cmp") && !es_starts(m, "cmn") && !es_starts(m, "tst") &&
	     !es_starts(m, "ldm")))
		in->flags |= ELFSCAN_INSN_WRITES_SP;
	if (a->writeback)
		for (int i = 0; i < a->op_count; i++)
			if ((a->operands[i].type == ARM_OP_MEM &&
			     a->operands[i].mem.base == ARM_REG_SP) ||
			    (i == 0 && a->operands[i].type == ARM_OP_REG &&
			     a->operands[i].reg == ARM_REG_SP))
				in->flags |= ELFSCAN_INSN_WRITES_SP;
}

const struct es_isa es_isa_arm = {.mode = arm_mode, .classify = arm_classify};
