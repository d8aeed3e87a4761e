// SPDX-License-Identifier: LGPL-2.1-or-later
/* The ppc and ppc64 decoder: control flow, traps, stores and the stack pointer (r1), for
 * the audit. */
#include <elf.h>
#include <string.h>

#include "decode-backend.h"

static void ppc_mode(uint16_t machine, int elfclass, bool big_endian, struct es_isa_mode *m)
{
	m->arch = CS_ARCH_PPC;
	m->mode |= machine == EM_PPC64 ? CS_MODE_64 : CS_MODE_32;
}

/* capstone 4 gives few groups here, so the mnemonic says most. */
static void ppc_classify(struct elfscan_decoder *d, const cs_insn *ci, struct elfscan_insn *in)
{
	const cs_ppc *p = &ci->detail->ppc;
	const char *m = ci->mnemonic;
	size_t len = strlen(m);

	if (m[0] == 'b') {
		bool link =
		    len > 1 && (m[len - 1] == 'l' || (len > 2 && !strcmp(m + len - 2, "la")));
		bool to_lr = es_starts(m, "blr") || es_starts(m, "bclr") || strstr(m, "lr");
		bool to_ctr = strstr(m, "ctr") != NULL;

		if (!strcmp(m, "blr") || !strcmp(m, "blr+") || !strcmp(m, "blr-")) {
			in->flags |= ELFSCAN_INSN_RET;
		} else if (link && !es_starts(m, "blr")) {
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
	else if (es_starts(m, "tw") || es_starts(m, "td") || !strcmp(m, "trap"))
		in->flags |= ELFSCAN_INSN_TRAP;
	if (es_starts(m, "st") || es_starts(m, "dcbz"))
		in->flags |= ELFSCAN_INSN_STORE;
	/* r1 written: any instruction whose first operand is r1, except stores (r1 is then
	 * data) unless they update their base (stdu r1, -32(r1)). */
	if (p->op_count >= 1 && p->operands[0].type == PPC_OP_REG &&
	    p->operands[0].reg == PPC_REG_R1 && !(in->flags & ELFSCAN_INSN_STORE) &&
	    !es_starts(m, "cmp"))
		in->flags |= ELFSCAN_INSN_WRITES_SP;
	if (m[0] && (m[len - 1] == 'u' || (len > 2 && !strcmp(m + len - 2, "ux"))))
		for (int i = 0; i < p->op_count; i++)
			if (p->operands[i].type == PPC_OP_MEM &&
			    p->operands[i].mem.base == PPC_REG_R1)
				in->flags |= ELFSCAN_INSN_WRITES_SP;
	(void)d;
}

const struct es_isa es_isa_ppc = {.mode = ppc_mode, .classify = ppc_classify};
