/* SPDX-License-Identifier: GPL-2.0-only */
/* Where an instruction can go next, and where a critical section can be left: the decoding
 * behind the step-over rule. Everything specific to the architecture lives in rseqdbg/arch/:
 * ARCH-decode.c decodes (with libelfscan), ARCH.c reads registers: x86 (x86_64) and arm64
 * (aarch64). The Makefile builds the files of the target's architecture only. */
#ifndef RSEQDBG_ARCH_H
#define RSEQDBG_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include <elf.h>
#include <signal.h>

struct rd_tracee;

/* What differs between the architectures, beside rseqdbg/arch/ARCH*.c:
 *   RD_ARCH_EM                         the ELF machine its decoder reads (decoder.c)
 *   RD_ARCH_BP_LEN, RD_ARCH_INSN_MAX   the breakpoint instruction's length, the longest one
 *   RD_ARCH_BP_CODE                    the si_code of the SIGTRAP a breakpoint raises
 *   RD_ARCH_COMPAT_PC                  the pc's word in a 32-bit program's registers
 *   RD_ARCH_STEPS_UPROBES              whether a single step over a uprobe's instruction
 *                                      traps after it
 *   RD_REG_SP                          the stack pointer's bit in a register set (wregs) */
#if defined(__x86_64__)
typedef struct user_regs_struct rd_regs_t;
#define RD_ARCH_BP_LEN 1
#define RD_ARCH_INSN_MAX 16
#define RD_ARCH_EM EM_X86_64
#define RD_ARCH_BP_CODE SI_KERNEL /* int3 */
#define RD_ARCH_STEPS_UPROBES 1
#define RD_ARCH_COMPAT_PC 12 /* i386: eip */
#define RD_REG_SEG (1u << 16)
#define RD_REG_SP (1u << 7) /* rsp, as wregs bit */
#elif defined(__aarch64__)
typedef struct user_regs_struct rd_regs_t; /* regs[31], sp, pc, pstate */
#define RD_ARCH_BP_LEN 4
#define RD_ARCH_INSN_MAX 4
#define RD_ARCH_EM EM_AARCH64
#define RD_ARCH_BP_CODE TRAP_BRKPT /* brk */
/* A single step of an instruction that a uprobe runs out of line ends nowhere: the kernel
 * turns stepping off once the instruction ran, and the thread runs on. */
#define RD_ARCH_STEPS_UPROBES 0
#define RD_ARCH_COMPAT_PC 15 /* arm: r15 */
#define RD_REG_SP (1u << 31)
#else
#error "rseqdbg step: no backend for this architecture in rseqdbg/arch/ (x86_64 and aarch64)"
#endif

/* The software breakpoint instruction. */
extern const uint8_t rd_arch_bp_insn[RD_ARCH_BP_LEN];
/* Whether bytes (RD_ARCH_BP_LEN of them) hold a breakpoint instruction, ours or another's
 * (a uprobe's). */
bool rd_arch_is_bp(const uint8_t *bytes);

uint64_t rd_arch_pc(const rd_regs_t *r);
void rd_arch_set_pc(rd_regs_t *r, uint64_t pc);
uint64_t rd_arch_sp(const rd_regs_t *r);
/* The value of general register reg (numbered as the decoder numbers it); false for one
 * that is not a general register. */
bool rd_arch_reg(const rd_regs_t *r, int reg, uint64_t *v);
/* Hardware breakpoints (execution), for an address where another tool's uprobe sits: the
 * kernel takes the trap of any breakpoint instruction there for the uprobe, runs its
 * handler and the instruction, and the debugger never sees it. A hardware breakpoint traps
 * before the instruction, with the pc on it (SIGTRAP, TRAP_HWBKPT). They live in one
 * thread's debug registers: how many thread tid has (0: none usable), and set or clear
 * slot. 0 or -errno; the thread must be stopped. */
int rd_arch_hwbp_slots(pid_t tid);
int rd_arch_hwbp_set(pid_t tid, int slot, uint64_t addr);
int rd_arch_hwbp_clear(pid_t tid, int slot);
/* The address of the breakpoint that trapped, from the pc reported at the trap. */
uint64_t rd_arch_bp_addr(uint64_t trap_pc);
/* Whether the system call about to run (regs at the syscall instruction) maps memory. */
bool rd_arch_maps_memory(const rd_regs_t *r);
/* Whether the thread stopped in a system call that it restarts when resumed (a stop that
 * interrupted a blocking call): it then runs the system call again before the instruction
 * at its pc. */
bool rd_arch_syscall_restarts(const rd_regs_t *r);
/* Whether a thread already single-stepping (last resumed by PTRACE_SINGLESTEP) runs one
 * instruction before its next step trap. Not on arm64 after a step that the kernel ended
 * itself, over an svc or into a signal handler: the step state stays pending (PSTATE.SS
 * clear) and the next step traps at once, at the same pc. Writing the registers back
 * (PTRACE_SETREGSET) re-arms it. */
bool rd_arch_step_armed(const rd_regs_t *r);

enum rd_insn_kind {
	RD_INSN_OTHER,
	RD_INSN_JMP, /* unconditional jump */
	RD_INSN_JCC, /* conditional jump or loop */
	RD_INSN_CALL,
	RD_INSN_RET,
	RD_INSN_SYSCALL,
};

/* A memory operand; registers numbered as the architecture's decoder numbers them
 * (elfscan-decode.h): enum elfscan_x86_reg, or 0..31 on aarch64 (seg, scale unused, no
 * register -1). */
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
	/* The general registers it writes: on x86_64 bit i for the i-th of rax rbx rcx rdx rsi
	 * rdi rbp rsp r8..r15 (any part of it), RD_REG_SEG for a segment register or base; on
	 * aarch64 bit n for xn, bit 31 for sp. */
	uint32_t wregs;
	/* A 64-bit store "mov MEM, REG|IMM" (how a section's descriptor is armed). */
	bool store;
	struct rd_mem st_mem;
	int st_reg;	  /* 0 when the stored value is st_imm (aarch64: register + 1) */
	uint32_t st_regs; /* what st_mem's address reads, as wregs bits (rip-relative: none) */
	int64_t st_imm;
	/* The memory it writes: none, only mw_mem (mw_size bytes; its address reads mw_regs,
	 * as wregs bits), or more or not known. */
	enum { RD_MEMW_NONE, RD_MEMW_OP, RD_MEMW_ANY } memw;
	struct rd_mem mw_mem;
	uint32_t mw_regs;
	unsigned int mw_size;
	/* A load-exclusive (aarch64): the sequence to its store-exclusive fails every time it
	 * is stepped, so it runs whole (rd_exclusive_ends). */
	bool excl;
	char text[200];
};

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

/* Where the exclusive sequence that the load-exclusive at addr opens can end: ends[0] the
 * instruction after its store-exclusive, then the targets of branches out before it (code
 * holds len bytes from addr). 0, or a negative errno when it cannot be run as a unit. */
int rd_exclusive_ends(struct rd_decoder *d, const uint8_t *code, size_t len, uint64_t addr,
		      uint64_t *ends, size_t max, size_t *n);

#endif
