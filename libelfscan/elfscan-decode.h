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

/*
 * x86_64: what a debugger needs to run code between breakpoints and to compute where an
 * instruction goes from the registers. Registers are numbered as enum elfscan_x86_reg;
 * "families" are bit sets with bit i for the i-th general register (any part of it:
 * rax, eax, ax, al, ah) and ELFSCAN_X86_SEG_BIT for a segment register or base.
 */
enum elfscan_x86_reg {
	ELFSCAN_X86_NOREG,
	ELFSCAN_X86_RAX, /* the 64-bit general registers, in this order */
	ELFSCAN_X86_RBX,
	ELFSCAN_X86_RCX,
	ELFSCAN_X86_RDX,
	ELFSCAN_X86_RSI,
	ELFSCAN_X86_RDI,
	ELFSCAN_X86_RBP,
	ELFSCAN_X86_RSP,
	ELFSCAN_X86_R8,
	ELFSCAN_X86_R9,
	ELFSCAN_X86_R10,
	ELFSCAN_X86_R11,
	ELFSCAN_X86_R12,
	ELFSCAN_X86_R13,
	ELFSCAN_X86_R14,
	ELFSCAN_X86_R15,
	ELFSCAN_X86_RIP, /* reads as the address of the next instruction */
	ELFSCAN_X86_FS,
	ELFSCAN_X86_GS,
	ELFSCAN_X86_OTHER, /* a part of a general register, another segment, a vector register */
};

#define ELFSCAN_X86_SEG_BIT (1u << 16)
/* The family bit of a 64-bit general register (ELFSCAN_X86_RAX .. ELFSCAN_X86_R15). */
#define ELFSCAN_X86_FAMILY(reg) (1u << ((reg)-ELFSCAN_X86_RAX))

/* How control leaves the instruction. */
enum elfscan_x86_flow {
	ELFSCAN_X86_NEXT, /* to the next instruction (or stays, repeated) */
	ELFSCAN_X86_JMP,  /* unconditional jump */
	ELFSCAN_X86_JCC,  /* conditional jump or loop */
	ELFSCAN_X86_CALL,
	ELFSCAN_X86_RET,     /* near or far return (not iret) */
	ELFSCAN_X86_SYSCALL, /* the syscall instruction */
};

enum elfscan_x86_flag {
	ELFSCAN_X86_REP = 1 << 0,     /* rep or repne prefix */
	ELFSCAN_X86_KERNEL = 1 << 1,  /* traps, enters or leaves the kernel, privileged, hlt */
	ELFSCAN_X86_SEGBASE = 1 << 2, /* wrfsbase, wrgsbase */
	ELFSCAN_X86_TSX = 1 << 3,     /* xbegin, xend, xabort */
	ELFSCAN_X86_CPUID = 1 << 4,   /* a hypervisor may emulate it, dropping a step trap */
	ELFSCAN_X86_WRITES_UNKNOWN = 1 << 5, /* the registers it writes are not known */
};

struct elfscan_x86_mem {
	enum elfscan_x86_reg seg, base, index;
	int scale;
	int64_t disp;
	uint32_t regs; /* families its address reads */
};

/* The memory an instruction writes. */
enum elfscan_x86_memw {
	ELFSCAN_X86_MEMW_NONE, /* none */
	ELFSCAN_X86_MEMW_OP,   /* only its operand memw_op, memw_size bytes from its address */
	ELFSCAN_X86_MEMW_ANY,  /* more, or not known (the stack of a push or call, a string) */
};

struct elfscan_x86 {
	enum elfscan_x86_flow flow;
	uint32_t flags;	 /* OR of enum elfscan_x86_flag */
	uint32_t writes; /* families written */
	/* The operand of an indirect jump or call: a register or a memory word. */
	enum elfscan_x86_reg ind_reg;
	bool ind_mem;
	struct elfscan_x86_mem ind;
	/* A 64-bit store "mov MEM, REG|IMM". */
	bool store;
	struct elfscan_x86_mem st;
	enum elfscan_x86_reg st_reg; /* ELFSCAN_X86_NOREG when the value is st_imm */
	int64_t st_imm;
	enum elfscan_x86_memw memw;
	struct elfscan_x86_mem memw_op;
	unsigned int memw_size;
	char text[200]; /* "mnemonic operands", not shortened */
};

/* elfscan_decode_one() and the x86 facts above, for a decoder of 64-bit x86 code.
 * Returns 0, -EILSEQ when the bytes are no valid instruction, -EINVAL for another machine. */
int elfscan_decode_x86(struct elfscan_decoder *d, const void *buf, size_t len, uint64_t addr,
		       struct elfscan_insn *insn, struct elfscan_x86 *x);

/*
 * aarch64: the same facts. Registers are numbered 0..30 for x0..x30 (w0..w30 alike) and
 * ELFSCAN_A64_SP for sp; register sets have bit n for register n. xzr and wzr are no
 * register (ELFSCAN_A64_NOREG): they read as zero.
 */
#define ELFSCAN_A64_SP 31
#define ELFSCAN_A64_NOREG (-1)

/* How control leaves the instruction. */
enum elfscan_a64_flow {
	ELFSCAN_A64_NEXT,
	ELFSCAN_A64_B,	   /* b: unconditional direct jump */
	ELFSCAN_A64_BCOND, /* b.cond, cbz, cbnz, tbz, tbnz */
	ELFSCAN_A64_BL,	   /* direct call */
	ELFSCAN_A64_BR,	   /* indirect jump through ind_reg */
	ELFSCAN_A64_BLR,   /* indirect call through ind_reg */
	ELFSCAN_A64_RET,   /* to ind_reg (x30 unless named) */
	ELFSCAN_A64_SVC,   /* the system call instruction */
};

enum elfscan_a64_flag {
	ELFSCAN_A64_KERNEL = 1 << 0, /* brk, hlt, udf, hvc, smc, eret: traps or privileged */
	ELFSCAN_A64_LDEX = 1 << 1,   /* a load-exclusive: opens an exclusive monitor */
	ELFSCAN_A64_STEX = 1 << 2,   /* a store-exclusive: fails unless the monitor held */
	ELFSCAN_A64_WRITES_UNKNOWN = 1 << 3, /* the registers it writes are not known */
};

struct elfscan_a64_mem {
	int base;      /* a register number, ELFSCAN_A64_NOREG for a literal (pc-relative) */
	int index;     /* ELFSCAN_A64_NOREG when none */
	int64_t disp;  /* the literal's address when base is ELFSCAN_A64_NOREG */
	uint32_t regs; /* what its address reads */
};

enum elfscan_a64_memw {
	ELFSCAN_A64_MEMW_NONE,
	ELFSCAN_A64_MEMW_OP,  /* only memw_op, memw_size bytes from its address */
	ELFSCAN_A64_MEMW_ANY, /* more, or not known: atomics, exclusives, vector structures,
			       * a base register written back */
};

struct elfscan_a64 {
	enum elfscan_a64_flow flow;
	uint32_t flags;	 /* OR of enum elfscan_a64_flag */
	uint32_t writes; /* registers written, sp and the link register of calls included */
	int ind_reg;	 /* the target register of br, blr and ret */
	/* A 64-bit store "str Xt|xzr, [Xn{, #imm}]" without writeback. */
	bool store;
	struct elfscan_a64_mem st;
	int st_reg; /* ELFSCAN_A64_NOREG: xzr, the value 0 */
	enum elfscan_a64_memw memw;
	struct elfscan_a64_mem memw_op;
	unsigned int memw_size;
	char text[200];
};

/* elfscan_decode_one() and the aarch64 facts above, for a decoder of 64-bit arm code.
 * Returns 0, -EILSEQ when the bytes are no valid instruction, -EINVAL for another machine. */
int elfscan_decode_a64(struct elfscan_decoder *d, const void *buf, size_t len, uint64_t addr,
		       struct elfscan_insn *insn, struct elfscan_a64 *a);

/*
 * A load-exclusive/store-exclusive sequence never completes when it is single-stepped: the
 * trap between the two clears the exclusive monitor and the store-exclusive fails, every
 * time. Run from a load-exclusive at addr (code holds len bytes from addr), the sequence
 * leaves at the instruction after its store-exclusive (the 16 instructions after the
 * load at most) or at a conditional or direct branch before it to outside the sequence.
 * Those addresses are stored in ends (up to max, *n set): where to stop after running it
 * whole. 0; -ENOENT when no store-exclusive follows within the bound; -EINVAL when the
 * sequence calls, branches indirectly, returns, traps or enters the kernel before it, or
 * addr holds no load-exclusive; -EILSEQ on bytes that are no instruction; -ENOSPC when ends
 * is too small.
 */
int elfscan_a64_exclusive_ends(struct elfscan_decoder *d, const void *code, size_t len,
			       uint64_t addr, uint64_t *ends, size_t max, size_t *n);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif /* ELFSCAN_DECODE_H */
