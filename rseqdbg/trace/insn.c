// SPDX-License-Identifier: GPL-2.0-only
/* The instruction an abort interrupted, decoded with capstone for the event lines. */
#include <errno.h>
#include <stdio.h>

#include <elf.h>

#include "internal.h"

static int cs_setup(struct rd_tracer *t, uint16_t machine)
{
	cs_arch arch;
	cs_mode mode;

	if (t->cs_machine == machine)
		return 0;
	switch (machine) {
	case EM_X86_64:
		arch = CS_ARCH_X86, mode = CS_MODE_64;
		break;
	case EM_386:
		arch = CS_ARCH_X86, mode = CS_MODE_32;
		break;
	case EM_AARCH64:
		arch = CS_ARCH_ARM64, mode = CS_MODE_ARM;
		break;
	default:
		return -ENOTSUP;
	}
	if (t->cs_machine)
		cs_close(&t->cs_handle);
	t->cs_machine = 0;
	if (cs_open(arch, mode, &t->cs_handle) != CS_ERR_OK)
		return -ENOTSUP;
	t->cs_machine = machine;
	return 0;
}

const char *rd_tracer_insn(struct rd_tracer *t, const struct rd_secinfo *si, uint64_t start_ip,
			   uint64_t ip, char *buf, size_t len)
{
	uint8_t code[16];
	uint64_t addr;
	size_t n = sizeof(code);
	cs_insn *insn = NULL;

	snprintf(buf, len, "?");
	if (!si || !si->es || cs_setup(t, elfscan_machine(si->es)))
		return buf;
	addr = si->link_start + (ip - start_ip);
	/* Near the end of the file fewer bytes are readable. */
	while (n && elfscan_read(si->es, addr, code, n))
		n--;
	if (n && cs_disasm(t->cs_handle, code, n, addr, 1, &insn) == 1) {
		if (insn->op_str[0])
			snprintf(buf, len, "%s %s", insn->mnemonic, insn->op_str);
		else
			snprintf(buf, len, "%s", insn->mnemonic);
		cs_free(insn, 1);
	}
	return buf;
}

void rd_tracer_insn_free(struct rd_tracer *t)
{
	if (t->cs_machine)
		cs_close(&t->cs_handle);
	t->cs_machine = 0;
}
