/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libelfscan: decode machine instructions (capstone) and say what each one does to control
 * flow, memory and the stack pointer: what an rseq audit and a stepper need to know.
 *
 * x86_64, i386 and aarch64 are decoded fully; arm (ARM state), ppc and s390x as far as
 * capstone 4 goes. RISC-V is not decoded (capstone 4 has no RISC-V): elfscan_decoder_new()
 * returns -EOPNOTSUPP for it and for any other machine. Every machine's instructions are
 * described by the same struct elfscan_insn: what is particular to one stays inside the
 * library.
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

/*
 * What a debugger needs to run code between breakpoints and to compute where an instruction
 * goes from the registers: how control leaves it, how it runs, the registers it writes and
 * the memory it writes. Filled for 64-bit x86 and aarch64 code (elfscan_decode_runs()); for
 * the others flow follows the flags above, run is 0 and the operands are empty.
 *
 * Registers are numbered per machine; a register set has bit n for register n:
 *   x86_64   0..15 rax rbx rcx rdx rsi rdi rbp rsp r8..r15 (any part of the register: eax,
 *            ax, al, ah), 16 fs and 17 gs (the segment or its base), 18 rip (reads as the
 *            address of the next instruction; in no set), 19 any other register
 *   aarch64  0..30 x0..x30 (w0..w30 alike), 31 sp; xzr and wzr are no register
 * ELFSCAN_NOREG is no register.
 */
#define ELFSCAN_NOREG (-1)
#define ELFSCAN_X86_RAX 0
#define ELFSCAN_X86_RBX 1
#define ELFSCAN_X86_RCX 2
#define ELFSCAN_X86_RDX 3
#define ELFSCAN_X86_RSI 4
#define ELFSCAN_X86_RDI 5
#define ELFSCAN_X86_RBP 6
#define ELFSCAN_X86_RSP 7
#define ELFSCAN_X86_R8 8 /* r8..r15 follow */
#define ELFSCAN_X86_FS 16
#define ELFSCAN_X86_GS 17
#define ELFSCAN_X86_RIP 18
#define ELFSCAN_X86_OTHER 19
#define ELFSCAN_A64_LR 30
#define ELFSCAN_A64_SP 31

/* How control leaves the instruction. */
enum elfscan_flow {
	ELFSCAN_FLOW_NEXT,    /* to the next instruction (or stays: ELFSCAN_RUN_REPEATS) */
	ELFSCAN_FLOW_JUMP,    /* unconditional jump */
	ELFSCAN_FLOW_COND,    /* conditional jump or loop: target or the next instruction */
	ELFSCAN_FLOW_CALL,    /* to target or the indirect operand, link register written */
	ELFSCAN_FLOW_RET,     /* to the return address: ind_reg, or the word at the stack pointer */
	ELFSCAN_FLOW_SYSCALL, /* the system call instruction */
};

/* How it runs (OR of these). */
enum elfscan_insn_run {
	/* Falls through to the next instruction, cannot trap by design, and the registers it
	 * writes are known: it may run unseen between breakpoints. */
	ELFSCAN_RUN_PLAIN = 1 << 0,
	ELFSCAN_RUN_REPEATS = 1 << 1,	 /* may run again at its own address (rep prefix) */
	ELFSCAN_RUN_KERNEL = 1 << 2,	 /* traps, enters or leaves the kernel, privileged, hlt */
	ELFSCAN_RUN_LATE_TRAP = 1 << 3,	 /* cpuid: an emulating hypervisor may drop its step trap */
	ELFSCAN_RUN_EXCL_LOAD = 1 << 4,	 /* a load-exclusive: opens an exclusive monitor */
	ELFSCAN_RUN_EXCL_STORE = 1 << 5, /* a store-exclusive: fails unless the monitor held */
	ELFSCAN_RUN_WRITES_UNKNOWN = 1 << 6, /* the registers it writes are not known */
};

/* A memory operand: seg + base + index * scale + disp; a literal (pc-relative on aarch64)
 * has base ELFSCAN_NOREG and its address in disp. An aarch64 index register's extend and
 * shift are not recorded. */
struct elfscan_mem {
	int seg, base, index;
	int scale;
	int64_t disp;
	uint32_t regs; /* the registers its address reads (a register set) */
};

/* The memory an instruction writes. */
enum elfscan_memw {
	ELFSCAN_MEMW_NONE, /* none */
	ELFSCAN_MEMW_OP,   /* only its operand memw_op, memw_size bytes from its address */
	ELFSCAN_MEMW_ANY,  /* more, or not known: the stack of a push or call, a string, an
			    * atomic, an exclusive, a vector structure, a base written back */
};

struct elfscan_insn {
	uint64_t addr;
	uint32_t size;	 /* 0 when the bytes are no instruction */
	uint32_t flags;	 /* OR of enum elfscan_insn_flag */
	uint64_t target; /* with ELFSCAN_INSN_HAS_TARGET */
	char text[200];	 /* "mnemonic operands"; "(bad)" for no instruction */

	enum elfscan_flow flow;
	uint32_t run;	 /* OR of enum elfscan_insn_run */
	uint32_t writes; /* the registers it writes (a set), the stack pointer and the link
			  * register of calls included */
	/* The operand of an indirect jump, call or return: a register or a memory word. */
	int ind_reg;
	bool ind_mem;
	struct elfscan_mem ind;
	/* A 64-bit store of a general register or an immediate, "mov MEM, REG|IMM" or
	 * "str Xt|xzr, [Xn{, #imm}]" without writeback: how an rseq descriptor is armed. */
	bool store;
	struct elfscan_mem st;
	int st_reg; /* ELFSCAN_NOREG when the value is st_imm (xzr: 0) */
	int64_t st_imm;
	enum elfscan_memw memw;
	struct elfscan_mem memw_op;
	unsigned int memw_size;
};

/* A decoder for a machine; elfclass 32 or 64. -EOPNOTSUPP when the machine is not decoded. */
int elfscan_decoder_new(uint16_t machine, int elfclass, bool big_endian,
			struct elfscan_decoder **res);
/* A decoder for the file's machine, class and byte order. */
int elfscan_decoder_for(const struct elfscan *es, struct elfscan_decoder **res);
void elfscan_decoder_free(struct elfscan_decoder *d);
/* Whether a machine can be decoded at all ("not decoded" otherwise). */
bool elfscan_decode_supported(uint16_t machine);
/* Whether the decoder fills flow, run, writes and the operands of struct elfscan_insn
 * (x86_64 and aarch64). */
bool elfscan_decode_runs(const struct elfscan_decoder *d);
/* Smallest instruction size of the machine (1 on x86, 2 on s390x, 4 on the others). */
unsigned int elfscan_decoder_min_insn(const struct elfscan_decoder *d);

/* Decode one instruction from buf (len bytes available) located at addr.
 * Returns 0, or -EILSEQ when the bytes are no valid instruction (insn->size 0). */
int elfscan_decode_one(struct elfscan_decoder *d, const void *buf, size_t len, uint64_t addr,
		       struct elfscan_insn *insn);

/* Decode the instructions of [lo, hi) read with elfscan_read(), linearly from lo.
 * *insns (free() it) receives n instructions; the last may end past hi when hi is not an
 * instruction boundary. Returns 0; -EFAULT when the bytes are not in the file; -EILSEQ when
 * decoding stops on an invalid instruction (the ones before it are returned, *n set). */
int elfscan_decode_range(struct elfscan_decoder *d, const struct elfscan *es, uint64_t lo,
			 uint64_t hi, struct elfscan_insn **insns, size_t *n);

/*
 * A load-exclusive/store-exclusive sequence never completes when it is single-stepped: the
 * trap between the two clears the exclusive monitor and the store-exclusive fails, every
 * time. Run from a load-exclusive at addr (code holds len bytes from addr), the sequence
 * leaves at the instruction after its store-exclusive (the 16 instructions after the
 * load at most) or at a conditional or direct branch before it to outside the sequence.
 * Those addresses are stored in ends (up to max, *n set): where to stop after running it
 * whole. 0; -ENOENT when no store-exclusive follows within the bound; -EINVAL when the
 * sequence calls, branches indirectly, returns, traps or enters the kernel before it, or
 * addr holds no load-exclusive (never on a machine without them); -EILSEQ on bytes that
 * are no instruction; -ENOSPC when ends is too small.
 */
int elfscan_exclusive_ends(struct elfscan_decoder *d, const void *code, size_t len, uint64_t addr,
			   uint64_t *ends, size_t max, size_t *n);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif /* ELFSCAN_DECODE_H */
