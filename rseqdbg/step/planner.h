/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The path planner of the stepper. From the current instruction it builds the tree of the
 * paths ahead (through fall-throughs, direct jumps and calls, both ways of conditional
 * branches, and the known critical sections whose ways out are all known) in which each
 * address appears once; the stepper plants breakpoints at the leaves and lets the thread
 * run, and where it stops names the one path it took.
 *
 * Pure logic: the program is seen only through struct plan_env, so tests feed it decoded
 * bytes and no process.
 */
#ifndef RSEQDBG_STEP_PLANNER_H
#define RSEQDBG_STEP_PLANNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"

#define PLAN_NODES 192 /* instructions in one run's tree */
#define PLAN_LEAVES 24 /* breakpoints of one run */
#define PLAN_HASH 512  /* well above PLAN_NODES: short probes */
#define PLAN_WAYS 8    /* ways out of a section run inside a tree, at most */

/* One instruction of a run's tree. */
struct pnode {
	uint64_t addr;
	uint32_t depth; /* instructions run before it on the way from the root */
	uint32_t wregs; /* registers written on that way */
	int parent;
	uint8_t size; /* of its instruction; 0 while not decoded */
	bool leaf;    /* a breakpoint: the thread stops in front of it */
	bool dead;    /* cut off with a branch made a leaf: not part of the tree */
	/* The start of a critical section that runs unseen: its children are its ways out
	 * (commit, abort handler, exits). It counts as no instruction, writes every register
	 * and may write any memory. */
	bool sect;
};

struct plan {
	struct pnode n[PLAN_NODES]; /* n[0] is the root; a parent comes before its children */
	int nn, nleaves;
	int16_t hash[PLAN_HASH]; /* node index + 1 by address */
};

/* What the planner may know of the program. */
struct plan_env {
	void *ctx;
	/* The decoded instruction at addr if it is code that may run unseen (module code,
	 * which does not change under us), else NULL: a leaf. */
	const struct elfscan_insn *(*insn)(void *ctx, uint64_t addr);
	/* The length of the instruction at addr wherever it is; 0 when it cannot be read. */
	unsigned int (*insn_len)(void *ctx, uint64_t addr);
	/* Whether addr lies inside a known critical section. */
	bool (*in_section)(void *ctx, uint64_t addr);
	/* Whether a breakpoint can go at addr (a mapping covers it). */
	bool (*can_plant)(void *ctx, uint64_t addr);
	/* The address a 64-bit store writes, from the registers at the root; false when it
	 * cannot be computed. */
	bool (*store_addr)(void *ctx, const struct elfscan_insn *in, uint64_t *ea);
	/* The memory operand address of in (ELFSCAN_MEMW_OP), from the registers at the root; false
	 * when it cannot be computed. */
	bool (*memw_addr)(void *ctx, const struct elfscan_insn *in, uint64_t *ea);
	/* The stack pointer at the root and the word there (a return address); false when it
	 * cannot be read. NULL: every return is a leaf. */
	bool (*ret_slot)(void *ctx, uint64_t *sp, uint64_t *word);
	/* The value of register reg at the root (a return to a register: aarch64's x30);
	 * false when it is not known. NULL: every such return is a leaf. */
	bool (*reg_at_root)(void *ctx, int reg, uint64_t *v);
	/* The ways out of the critical section that starts at addr (its commit, its abort
	 * handler, its exits, at most max) when it may run unseen inside a tree: its code is
	 * decoded and has no way out that decoding cannot see. 0 when it may not: the
	 * instruction that enters it is a leaf. NULL: no section runs inside a tree. */
	size_t (*section_ways)(void *ctx, uint64_t addr, uint64_t *ways, size_t max);
	/* The registers (wregs bits) that the section at addr may write on any way out of it:
	 * an abort leaves them as the aborted instruction found them, a signal's handler as
	 * it found them. NULL: every register. */
	uint32_t (*section_wregs)(void *ctx, uint64_t addr);
	uint64_t rseq_cs; /* address of the thread's rseq_cs field; 0 when unknown */
	uint64_t until;	  /* an address that is always a leaf (--until) */
};

/*
 * The tree of the paths ahead of root (the current instruction, whose successors succ are
 * exact), at most left instructions deep. Every address appears once, so the address the
 * thread stops at names its path. No leaf lies inside an instruction of the tree. False when
 * no tree of more than one step can be built.
 */
bool rd_plan_build(struct plan *p, const struct plan_env *env, const struct elfscan_insn *root,
		   const uint64_t *succ, size_t nsucc, uint64_t left);
/* The node at addr, or -1. */
int rd_plan_find(const struct plan *p, uint64_t addr);
/* The node of the tree whose instruction covers addr without starting there, or -1. */
int rd_plan_covering(struct plan *p, const struct plan_env *env, uint64_t addr);

/* The ways out of the section [start, post_commit) besides post_commit and abort: the targets
 * of branches in code (the section's bytes, at runtime address start) that lie outside it.
 * Returns how many were stored (duplicates removed). */
size_t rd_section_branch_exits(struct elfscan_decoder *d, const uint8_t *code, uint64_t start,
			       uint64_t post_commit, uint64_t *out, size_t max);

#endif
