/* SPDX-License-Identifier: GPL-2.0-only */
/* The registers, breakpoint and system calls of the machine the stepper runs on, and where
 * an instruction goes next given the registers: rseqdbg/arch/ARCH.c, x86 (x86_64) and arm64
 * (aarch64); the Makefile builds the target's only. Instructions are decoded by libelfscan
 * (struct elfscan_insn, the same for every machine). */
#ifndef RSEQDBG_ARCH_H
#define RSEQDBG_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include <elf.h>
#include <signal.h>

#include "elfscan-decode.h"

struct rd_tracee;

/* What differs between the architectures, beside rseqdbg/arch/ARCH.c:
 *   RD_ARCH_EM                         the ELF machine of its code (the decoder's)
 *   RD_ARCH_BP_LEN, RD_ARCH_INSN_MAX   the breakpoint instruction's length, the longest one
 *   RD_ARCH_BP_CODE                    the si_code of the SIGTRAP a breakpoint raises
 *   RD_ARCH_COMPAT_PC                  the pc's word in a 32-bit program's registers
 *   RD_ARCH_STEPS_UPROBES              whether a single step over a uprobe's instruction
 *                                      traps after it
 *   RD_REG_SP                          the stack pointer's bit in a register set */
#if defined(__x86_64__)
typedef struct user_regs_struct rd_regs_t;
#define RD_ARCH_BP_LEN 1
#define RD_ARCH_INSN_MAX 16
#define RD_ARCH_EM EM_X86_64
#define RD_ARCH_BP_CODE SI_KERNEL /* int3 */
#define RD_ARCH_STEPS_UPROBES 1
#define RD_ARCH_COMPAT_PC 12 /* i386: eip */
#define RD_REG_SP (1u << ELFSCAN_X86_RSP)
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
#define RD_REG_SP (1u << ELFSCAN_A64_SP)
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
/* The value of general register reg (numbered as elfscan-decode.h numbers it); false for
 * one that is not a general register. */
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

/* Where the thread goes after executing in (registers at in). Returns how many addresses
 * were stored in out; *unknown is set when an indirect target could not be computed. */
size_t rd_successors(struct rd_tracee *tr, const struct elfscan_insn *in, const rd_regs_t *r,
		     uint64_t *out, size_t max, bool *unknown);
/* The address of the memory operand in writes (ELFSCAN_MEMW_OP), from the registers at in. */
bool rd_memw_addr(const struct elfscan_insn *in, const rd_regs_t *r, uint64_t *ea);
/* Effective address and value of a 64-bit store; false when in is not one. */
bool rd_store_eval(struct rd_tracee *tr, const struct elfscan_insn *in, const rd_regs_t *r,
		   uint64_t *ea, uint64_t *val);

#endif
