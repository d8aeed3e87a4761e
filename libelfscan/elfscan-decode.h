/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libelfscan: decode machine instructions (capstone) and say what each one does to control
 * flow, memory and the stack pointer: what an rseq audit and a stepper need to know.
 *
 * x86_64, i386 and aarch64 are decoded fully; arm (ARM state), ppc and s390x as far as
 * capstone 4 goes. RISC-V is not decoded (capstone 4 has no RISC-V): elfscan_decoder_new()
 * returns -EOPNOTSUPP for it and for any other machine.
 */
#ifndef ELFSCAN_DECODE_H
#define ELFSCAN_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility: what this header declares is its API. */
#pragma GCC visibility push(default)

struct elfscan;
struct elfscan_decoder;

/* What an instruction does (OR of these). */
enum elfscan_insn_flag {
	ELFSCAN_INSN_BRANCH = 1 << 0,	/* jump (not call): control may go elsewhere */
	ELFSCAN_INSN_COND = 1 << 1,	/* conditional: it may also fall through */
	ELFSCAN_INSN_INDIRECT = 1 << 2, /* branch or call target in a register or memory */
	ELFSCAN_INSN_CALL = 1 << 3,
	ELFSCAN_INSN_RET = 1 << 4,
	ELFSCAN_INSN_SYSCALL = 1 << 5, /* syscall, sysenter, svc, sc, int $0x80 */
	ELFSCAN_INSN_TRAP = 1 << 6,    /* software interrupt or trap: int3, int N, ud2, brk, ... */
	ELFSCAN_INSN_STORE = 1 << 7,   /* writes memory (stores, push, atomics) */
	ELFSCAN_INSN_WRITES_SP = 1 << 8,  /* modifies the stack pointer */
	ELFSCAN_INSN_HAS_TARGET = 1 << 9, /* target holds a direct branch or call target */
};

struct elfscan_insn {
	uint64_t addr;
	uint32_t size;
	uint32_t flags;	 /* OR of enum elfscan_insn_flag */
	uint64_t target; /* with ELFSCAN_INSN_HAS_TARGET */
	char text[80];	 /* "mnemonic operands" */
};

/* A decoder for a machine; elfclass 32 or 64. -EOPNOTSUPP when the machine is not decoded. */
int elfscan_decoder_new(uint16_t machine, int elfclass, bool big_endian,
			struct elfscan_decoder **res);
/* A decoder for the file's machine, class and byte order. */
int elfscan_decoder_for(const struct elfscan *es, struct elfscan_decoder **res);
void elfscan_decoder_free(struct elfscan_decoder *d);
/* Whether a machine can be decoded at all ("not decoded" otherwise). */
bool elfscan_decode_supported(uint16_t machine);
/* Smallest instruction size of the machine (1 on x86, 2 on s390x, 4 on the others). */
unsigned int elfscan_decoder_min_insn(const struct elfscan_decoder *d);

/* Decode one instruction from buf (len bytes available) located at addr.
 * Returns 0, or -EILSEQ when the bytes are no valid instruction. */
int elfscan_decode_one(struct elfscan_decoder *d, const void *buf, size_t len, uint64_t addr,
		       struct elfscan_insn *insn);

/* Decode the instructions of [lo, hi) read with elfscan_read(), linearly from lo.
 * *insns (free() it) receives n instructions; the last may end past hi when hi is not an
 * instruction boundary. Returns 0; -EFAULT when the bytes are not in the file; -EILSEQ when
 * decoding stops on an invalid instruction (the ones before it are returned, *n set). */
int elfscan_decode_range(struct elfscan_decoder *d, const struct elfscan *es, uint64_t lo,
			 uint64_t hi, struct elfscan_insn **insns, size_t *n);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif /* ELFSCAN_DECODE_H */
