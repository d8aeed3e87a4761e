/* SPDX-License-Identifier: GPL-2.0-only */
/* Where an instruction can go next, and where a critical section can be left: the decoding
 * behind the step-over rule. Everything specific to the architecture lives in rseqdbg/arch/:
 * x86-decode.c decodes (with libelfscan), x86.c reads registers. */
#ifndef RSEQDBG_ARCH_H
#define RSEQDBG_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/user.h>

typedef struct user_regs_struct rd_regs_t;
struct rd_tracee;

/* The software breakpoint instruction and its length. */
#define RD_ARCH_BP_LEN 1
extern const uint8_t rd_arch_bp_insn[RD_ARCH_BP_LEN];
#define RD_ARCH_INSN_MAX 16

uint64_t rd_arch_pc(const rd_regs_t *r);
void rd_arch_set_pc(rd_regs_t *r, uint64_t pc);
uint64_t rd_arch_sp(const rd_regs_t *r);
/* The address of the breakpoint that trapped, from the pc reported at the trap. */
uint64_t rd_arch_bp_addr(uint64_t trap_pc);
/* Whether the system call about to run (regs at the syscall instruction) maps memory. */
bool rd_arch_maps_memory(const rd_regs_t *r);
/* Whether the thread stopped in a system call that it restarts when resumed (a stop that
 * interrupted a blocking call): it then runs the system call again before the instruction
 * at its pc. */
bool rd_arch_syscall_restarts(const rd_regs_t *r);

enum rd_insn_kind {
	RD_INSN_OTHER,
	RD_INSN_JMP, /* unconditional jump */
	RD_INSN_JCC, /* conditional jump or loop */
	RD_INSN_CALL,
	RD_INSN_RET,
	RD_INSN_SYSCALL,
};

/* A memory operand; registers numbered as enum elfscan_x86_reg (elfscan-decode.h). */
struct rd_mem {
	int seg, base, index, scale;
	int64_t disp;
};

struct rd_insn {
	uint64_t addr;
	unsigned int size; /* 0: could not decode */
	enum rd_insn_kind kind;
	bool rep;	 /* a repeated string instruction: may stay on itself */
	bool has_target; /* direct branch target known */
	uint64_t target;
	/* Indirect branch operand: a register or a memory word. */
	bool ind_reg, ind_mem;
	int reg;
	struct rd_mem mem;
	/* Runs between breakpoints: falls through to the next instruction, cannot trap by
	 * design (no int, syscall, ud2, privileged or repeated instruction). */
	bool plain;
	/* Single-stepping it may run the next instruction too: a hypervisor emulates it and
	 * drops the trap (cpuid under some). */
	bool late_trap;
	/* The general registers it writes: bit i for the i-th of rax rbx rcx rdx rsi rdi rbp
	 * rsp r8..r15 (any part of it), RD_REG_SEG for a segment register or base. */
	uint32_t wregs;
	/* A 64-bit store "mov MEM, REG|IMM" (how a section's descriptor is armed). */
	bool store;
	struct rd_mem st_mem;
	int st_reg;	  /* 0 when the stored value is st_imm */
	uint32_t st_regs; /* what st_mem's address reads, as wregs bits (rip-relative: none) */
	int64_t st_imm;
	/* The memory it writes: none, only mw_mem (mw_size bytes; its address reads mw_regs,
	 * as wregs bits), or more or not known. */
	enum { RD_MEMW_NONE, RD_MEMW_OP, RD_MEMW_ANY } memw;
	struct rd_mem mw_mem;
	uint32_t mw_regs;
	unsigned int mw_size;
	char text[200];
};

#define RD_REG_SEG (1u << 16)
#define RD_REG_SP (1u << 7) /* rsp, as wregs bit */

struct rd_decoder;

int rd_decoder_open(struct rd_decoder **d);
void rd_decoder_close(struct rd_decoder *d);
/* Decode the instruction at addr from buf; in->size is 0 when it is not one. */
void rd_decode(struct rd_decoder *d, const uint8_t *buf, size_t len, uint64_t addr,
	       struct rd_insn *in);

/* Where the thread goes after executing in (registers at in). Returns how many addresses
 * were stored in out; *unknown is set when an indirect target could not be computed. */
size_t rd_successors(struct rd_tracee *tr, const struct rd_insn *in, const rd_regs_t *r,
		     uint64_t *out, size_t max, bool *unknown);
/* The address of the memory operand in writes (RD_MEMW_OP), from the registers at in. */
bool rd_memw_addr(const struct rd_insn *in, const rd_regs_t *r, uint64_t *ea);
/* Effective address and value of a 64-bit store; false when in is not one. */
bool rd_store_eval(struct rd_tracee *tr, const struct rd_insn *in, const rd_regs_t *r, uint64_t *ea,
		   uint64_t *val);

/* The ways out of the section [start, post_commit) besides post_commit and abort: the
 * targets of branches in code (the section's bytes, at runtime address start) that lie
 * outside it. Returns how many were stored (duplicates removed). */
size_t rd_section_branch_exits(struct rd_decoder *d, const uint8_t *code, uint64_t start,
			       uint64_t post_commit, uint64_t *out, size_t max);

#endif
