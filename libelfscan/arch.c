// SPDX-License-Identifier: LGPL-2.1-or-later
/* What each machine contributes: its name, its rseq abort signatures, and which of its
 * relocation types write the words of an rseq table. */
#include <elf.h>

#include "internal.h"

#ifndef EM_LOONGARCH
#define EM_LOONGARCH 258
#endif

/* Every architecture but aarch64 used this value before mid-2019. */
#define SIG_LEGACY 0x53053053u

static const struct {
	uint16_t machine;
	const char *name;
	uint32_t sig;	 /* current signature */
	uint32_t sig_be; /* the value big-endian data holds, when it differs */
	bool legacy_sig; /* 0x53053053 also accepted */
} machines[] = {
    {EM_X86_64, "x86_64", SIG_LEGACY, 0, false},
    {EM_386, "i386", SIG_LEGACY, 0, false},
    {EM_AARCH64, "aarch64", 0xd428bc00u, 0, false},
    /* ARMv7 big-endian (BE8) keeps instructions little-endian: the udf the signature
     * encodes reads byte-swapped as data. */
    {EM_ARM, "arm", 0xe7f5def3u, 0xf3def5e7u, true},
    {EM_PPC64, "ppc64", 0x0fe5000bu, 0, true},
    {EM_PPC, "ppc", 0x0fe5000bu, 0, true},
    {EM_S390, "s390", 0xb2ff0fffu, 0, true},
    {EM_RISCV, "riscv", 0xf1401073u, 0, true},
    {EM_MIPS, "mips", 0x0350000du, 0, true},
    {EM_LOONGARCH, "loongarch", 0x002a0010u, 0, true},
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

enum es_rkind es_reloc_kind(uint16_t machine, int wordsz, uint32_t type, unsigned int *width)
{
	*width = (unsigned int)wordsz;
	if (type == 0) /* R_*_NONE on every machine */
		return ES_R_NONE;
	switch (machine) {
	case EM_X86_64:
		switch (type) {
		case R_X86_64_RELATIVE:
			return ES_R_RELATIVE;
		case R_X86_64_RELATIVE64:
			*width = 8;
			return ES_R_RELATIVE;
		case R_X86_64_64:
			*width = 8;
			return ES_R_ABS;
		case R_X86_64_32:
		case R_X86_64_32S:
			*width = 4;
			return ES_R_ABS;
		}
		break;
	case EM_386:
		switch (type) {
		case R_386_RELATIVE:
			return ES_R_RELATIVE;
		case R_386_32:
			*width = 4;
			return ES_R_ABS;
		}
		break;
	case EM_AARCH64:
		switch (type) {
		case R_AARCH64_RELATIVE:
			return ES_R_RELATIVE;
		case R_AARCH64_ABS64:
			*width = 8;
			return ES_R_ABS;
		case R_AARCH64_ABS32:
			*width = 4;
			return ES_R_ABS;
		}
		break;
	case EM_ARM:
		switch (type) {
		case R_ARM_RELATIVE:
			return ES_R_RELATIVE;
		case R_ARM_ABS32:
		case R_ARM_TARGET1: /* an absolute word on Linux */
			*width = 4;
			return ES_R_ABS;
		}
		break;
	case EM_PPC64:
	case EM_PPC:
		switch (type) {
		case R_PPC_RELATIVE:
			return ES_R_RELATIVE;
		case R_PPC64_ADDR64:
		case R_PPC64_UADDR64:
			*width = 8;
			return ES_R_ABS;
		case R_PPC_ADDR32:
		case R_PPC_UADDR32:
			*width = 4;
			return ES_R_ABS;
		}
		break;
	case EM_S390:
		switch (type) {
		case R_390_RELATIVE:
			return ES_R_RELATIVE;
		case R_390_64:
			*width = 8;
			return ES_R_ABS;
		case R_390_32:
			*width = 4;
			return ES_R_ABS;
		}
		break;
	case EM_RISCV:
		switch (type) {
		case R_RISCV_RELATIVE:
			return ES_R_RELATIVE;
		case R_RISCV_64:
			*width = 8;
			return ES_R_ABS;
		case R_RISCV_32:
			*width = 4;
			return ES_R_ABS;
		case R_RISCV_ADD64:
			*width = 8;
			return ES_R_ADD;
		case R_RISCV_ADD32:
			*width = 4;
			return ES_R_ADD;
		case R_RISCV_SUB64:
			*width = 8;
			return ES_R_SUB;
		case R_RISCV_SUB32:
			*width = 4;
			return ES_R_SUB;
		}
		break;
	case EM_LOONGARCH:
		switch (type) {
		case R_LARCH_RELATIVE:
			return ES_R_RELATIVE;
		case R_LARCH_64:
			*width = 8;
			return ES_R_ABS;
		case R_LARCH_32:
			*width = 4;
			return ES_R_ABS;
		case R_LARCH_ADD64:
			*width = 8;
			return ES_R_ADD;
		case R_LARCH_ADD32:
			*width = 4;
			return ES_R_ADD;
		case R_LARCH_SUB64:
			*width = 8;
			return ES_R_SUB;
		case R_LARCH_SUB32:
			*width = 4;
			return ES_R_SUB;
		}
		break;
	case EM_MIPS:
		/* Only 32-bit objects: MIPS64 packs r_info differently, and linked MIPS files
		 * relocate through the GOT rather than the tables. */
		if (wordsz == 4 && type == R_MIPS_32) {
			*width = 4;
			return ES_R_ABS;
		}
		return ES_R_NONE;
	default: /* an unknown machine: the bytes as the linker left them */
		return ES_R_NONE;
	}
	return ES_R_UNKNOWN;
}
