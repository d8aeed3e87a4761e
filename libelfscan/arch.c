// SPDX-License-Identifier: LGPL-2.1-or-later
/* What each machine contributes: its name, its rseq abort signatures and how code carries
 * them, its instruction decoder (decode-ARCH.c), and which of its relocation types write the
 * words of an rseq table. */
#include <elf.h>

#include "decode-backend.h"
#include "internal.h"

#ifndef EM_LOONGARCH
#define EM_LOONGARCH 258
#endif

/* Every architecture but aarch64 used this value before mid-2019. */
#define SIG_LEGACY 0x53053053u
#define X86_UD1 "\x0f\xb9\x3d"	/* ud1 disp32, %edi */
#define X86_NOPL "\x0f\x1f\x05" /* nopl disp32 */

static const struct {
	uint16_t machine;
	const char *name;
	uint32_t sig;	 /* current signature */
	uint32_t sig_be; /* the value big-endian data holds, when it differs */
	bool legacy_sig; /* 0x53053053 also accepted */
	/* The signature is the 32-bit operand ending an instruction that starts with one of
	 * these opcodes (ES_SIG_OPCODE bytes each), not an instruction of its own. */
	const char *sig_opcodes[2];
	bool inline_desc;	  /* compilers leave an inline copy of a descriptor in .text */
	const struct es_isa *isa; /* NULL: capstone 4 cannot decode it */
} machines[] = {
    /* librseq wraps the signature in ud1, tcmalloc in nopl, both with a 32-bit displacement */
    {EM_X86_64, "x86_64", SIG_LEGACY, 0, false, {X86_UD1, X86_NOPL}, false, &es_isa_x86},
    {EM_386, "i386", SIG_LEGACY, 0, false, {X86_UD1, X86_NOPL}, false, &es_isa_x86},
    {EM_AARCH64, "aarch64", 0xd428bc00u, 0, false, {NULL}, false, &es_isa_arm64},
    /* ARMv7 big-endian (BE8) keeps instructions little-endian: the udf the signature
     * encodes reads byte-swapped as data. */
    {EM_ARM, "arm", 0xe7f5def3u, 0xf3def5e7u, true, {NULL}, true, &es_isa_arm},
    {EM_PPC64, "ppc64", 0x0fe5000bu, 0, true, {NULL}, false, &es_isa_ppc},
    {EM_PPC, "ppc", 0x0fe5000bu, 0, true, {NULL}, false, &es_isa_ppc},
    {EM_S390, "s390", 0xb2ff0fffu, 0, true, {NULL}, false, &es_isa_s390},
    {EM_RISCV, "riscv", 0xf1401073u, 0, true, {NULL}, false, NULL},
    {EM_MIPS, "mips", 0x0350000du, 0, true, {NULL}, true, NULL},
    {EM_LOONGARCH, "loongarch", 0x002a0010u, 0, true, {NULL}, false, NULL},
};

static int machine_index(uint16_t machine)
{
	for (size_t i = 0; i < sizeof(machines) / sizeof(machines[0]); i++)
		if (machines[i].machine == machine)
			return (int)i;
	return -1;
}

const char *es_machine_name(uint16_t machine)
{
	int i = machine_index(machine);

	return i < 0 ? NULL : machines[i].name;
}

const struct es_isa *es_machine_isa(uint16_t machine)
{
	int i = machine_index(machine);

	return i < 0 ? NULL : machines[i].isa;
}

bool es_sig_in_insn(uint16_t machine)
{
	int i = machine_index(machine);

	return i >= 0 && machines[i].sig_opcodes[0];
}

bool es_sig_opcode(uint16_t machine, const unsigned char *before)
{
	int i = machine_index(machine);

	for (size_t k = 0; i >= 0 && k < 2 && machines[i].sig_opcodes[k]; k++)
		if (!memcmp(before, machines[i].sig_opcodes[k], ES_SIG_OPCODE))
			return true;
	return false;
}

bool es_inline_descriptors(uint16_t machine)
{
	int i = machine_index(machine);

	return i >= 0 && machines[i].inline_desc;
}

/* The signatures of machine: all of them, or those valid in byte order ELFDATA2LSB/MSB. */
static size_t known_sigs(uint16_t machine, int order, uint32_t *sigs, size_t max)
{
	int i = machine_index(machine);
	uint32_t v[3];
	size_t n = 0;

	if (i < 0)
		return 0;
	if (order != ELFDATA2MSB || !machines[i].sig_be)
		v[n++] = machines[i].sig;
	if (order != ELFDATA2LSB && machines[i].sig_be)
		v[n++] = machines[i].sig_be;
	if (machines[i].legacy_sig)
		v[n++] = SIG_LEGACY;
	for (size_t k = 0; k < n && k < max; k++)
		sigs[k] = v[k];
	return n;
}

size_t elfscan_known_signatures(uint16_t machine, uint32_t *sigs, size_t max)
{
	return known_sigs(machine, ELFDATANONE, sigs, max);
}

size_t es_known_signatures(uint16_t machine, bool big_endian, uint32_t *sigs, size_t max)
{
	return known_sigs(machine, big_endian ? ELFDATA2MSB : ELFDATA2LSB, sigs, max);
}

/* The relocation types rseq tables carry, per machine; width 0 is the file's word size.
 * EM_PPC shares the rows of EM_PPC64. */
static const struct reloc_type {
	uint16_t machine;
	uint32_t type;
	uint8_t kind; /* enum es_rkind */
	uint8_t width;
} reloc_types[] = {
    {EM_X86_64, R_X86_64_RELATIVE, ES_R_RELATIVE, 0},
    {EM_X86_64, R_X86_64_RELATIVE64, ES_R_RELATIVE, 8},
    {EM_X86_64, R_X86_64_64, ES_R_ABS, 8},
    {EM_X86_64, R_X86_64_32, ES_R_ABS, 4},
    {EM_X86_64, R_X86_64_32S, ES_R_ABS, 4},
    {EM_386, R_386_RELATIVE, ES_R_RELATIVE, 0},
    {EM_386, R_386_32, ES_R_ABS, 4},
    {EM_AARCH64, R_AARCH64_RELATIVE, ES_R_RELATIVE, 0},
    {EM_AARCH64, R_AARCH64_ABS64, ES_R_ABS, 8},
    {EM_AARCH64, R_AARCH64_ABS32, ES_R_ABS, 4},
    {EM_ARM, R_ARM_RELATIVE, ES_R_RELATIVE, 0},
    {EM_ARM, R_ARM_ABS32, ES_R_ABS, 4},
    {EM_ARM, R_ARM_TARGET1, ES_R_ABS, 4}, /* an absolute word on Linux */
    {EM_PPC64, R_PPC_RELATIVE, ES_R_RELATIVE, 0},
    {EM_PPC64, R_PPC64_ADDR64, ES_R_ABS, 8},
    {EM_PPC64, R_PPC64_UADDR64, ES_R_ABS, 8},
    {EM_PPC64, R_PPC_ADDR32, ES_R_ABS, 4},
    {EM_PPC64, R_PPC_UADDR32, ES_R_ABS, 4},
    {EM_S390, R_390_RELATIVE, ES_R_RELATIVE, 0},
    {EM_S390, R_390_64, ES_R_ABS, 8},
    {EM_S390, R_390_32, ES_R_ABS, 4},
    {EM_RISCV, R_RISCV_RELATIVE, ES_R_RELATIVE, 0},
    {EM_RISCV, R_RISCV_64, ES_R_ABS, 8},
    {EM_RISCV, R_RISCV_32, ES_R_ABS, 4},
    {EM_RISCV, R_RISCV_ADD64, ES_R_ADD, 8},
    {EM_RISCV, R_RISCV_ADD32, ES_R_ADD, 4},
    {EM_RISCV, R_RISCV_SUB64, ES_R_SUB, 8},
    {EM_RISCV, R_RISCV_SUB32, ES_R_SUB, 4},
    {EM_LOONGARCH, R_LARCH_RELATIVE, ES_R_RELATIVE, 0},
    {EM_LOONGARCH, R_LARCH_64, ES_R_ABS, 8},
    {EM_LOONGARCH, R_LARCH_32, ES_R_ABS, 4},
    {EM_LOONGARCH, R_LARCH_ADD64, ES_R_ADD, 8},
    {EM_LOONGARCH, R_LARCH_ADD32, ES_R_ADD, 4},
    {EM_LOONGARCH, R_LARCH_SUB64, ES_R_SUB, 8},
    {EM_LOONGARCH, R_LARCH_SUB32, ES_R_SUB, 4},
};

enum es_rkind es_reloc_kind(uint16_t machine, int wordsz, uint32_t type, unsigned int *width)
{
	bool known = false;

	*width = (unsigned int)wordsz;
	if (type == 0) /* R_*_NONE on every machine */
		return ES_R_NONE;
	if (machine == EM_MIPS) {
		/* Only 32-bit objects: MIPS64 packs r_info differently, and linked MIPS files
		 * relocate through the GOT rather than the tables. */
		if (wordsz == 4 && type == R_MIPS_32) {
			*width = 4;
			return ES_R_ABS;
		}
		return ES_R_NONE;
	}
	if (machine == EM_PPC)
		machine = EM_PPC64;
	for (size_t i = 0; i < sizeof(reloc_types) / sizeof(reloc_types[0]); i++) {
		const struct reloc_type *r = &reloc_types[i];

		if (r->machine != machine)
			continue;
		known = true;
		if (r->type != type)
			continue;
		if (r->width)
			*width = r->width;
		return (enum es_rkind)r->kind;
	}
	/* An unknown machine: the bytes as the linker left them. */
	return known ? ES_R_UNKNOWN : ES_R_NONE;
}
