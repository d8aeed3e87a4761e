// SPDX-License-Identifier: GPL-2.0-only
/*
 * The stepper's path planner on real x86_64 instruction bytes, decoded by the stepper's own
 * decoder: which addresses become breakpoints (leaves), which run unseen, and that no
 * breakpoint is ever planned inside an instruction a path runs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "arch/arch.h"
#include "step/planner.h"

#define BASE 0x401000ull
#define CODE_MAX 256

/* A program as the planner sees it: code at BASE, the sections, the rseq_cs field. */
struct prog {
	uint8_t code[CODE_MAX];
	size_t len;
	struct elfscan_decoder *dec;
	struct elfscan_insn insn[CODE_MAX];
	bool decoded[CODE_MAX];
	uint64_t sec_start, sec_end; /* one critical section, [start, end) */
	uint64_t store_ea;	     /* where a store writes, as the root's registers say */
	uint64_t memw_ea;	     /* where any other memory write goes, the same way */
	uint64_t sp, ret_word;	     /* the stack pointer at the root and the word there */
	uint64_t ways[4];	     /* the section's ways out when a tree may run it */
	size_t nways;
	uint32_t sec_wregs; /* the registers the section writes (section_wregs) */
	uint64_t arm_addr;  /* the store there writes rseq_cs, every other one store_ea */
	struct plan_env env;
	struct plan plan;
};

static bool in_code(const struct prog *pr, uint64_t addr)
{
	return addr >= BASE && addr < BASE + pr->len;
}

static const struct elfscan_insn *env_insn(void *ctx, uint64_t addr)
{
	struct prog *pr = ctx;
	size_t off = addr - BASE;

	if (!in_code(pr, addr))
		return NULL;
	if (!pr->decoded[off]) {
		elfscan_decode_one(pr->dec, pr->code + off, pr->len - off, addr, &pr->insn[off]);
		pr->decoded[off] = true;
	}
	return &pr->insn[off];
}

static unsigned int env_insn_len(void *ctx, uint64_t addr)
{
	const struct elfscan_insn *in = env_insn(ctx, addr);

	return in ? in->size : 0;
}

static bool env_in_section(void *ctx, uint64_t addr)
{
	struct prog *pr = ctx;

	return addr >= pr->sec_start && addr < pr->sec_end;
}

static bool env_can_plant(void *ctx, uint64_t addr)
{
	return in_code(ctx, addr);
}

static bool env_store_addr(void *ctx, const struct elfscan_insn *in, uint64_t *ea)
{
	struct prog *pr = ctx;

	*ea = pr->arm_addr && in->addr == pr->arm_addr ? pr->env.rseq_cs : pr->store_ea;
	return true;
}

static bool env_memw_addr(void *ctx, const struct elfscan_insn *in, uint64_t *ea)
{
	struct prog *pr = ctx;

	*ea = pr->memw_ea;
	return in->memw == ELFSCAN_MEMW_OP;
}

static bool env_ret_slot(void *ctx, uint64_t *sp, uint64_t *word)
{
	struct prog *pr = ctx;

	*sp = pr->sp;
	*word = pr->ret_word;
	return true;
}

static size_t env_section_ways(void *ctx, uint64_t addr, uint64_t *ways, size_t max)
{
	struct prog *pr = ctx;

	if (addr != pr->sec_start || pr->nways > max)
		return 0;
	memcpy(ways, pr->ways, pr->nways * sizeof(*ways));
	return pr->nways;
}

static uint32_t env_section_wregs(void *ctx, uint64_t addr)
{
	struct prog *pr = ctx;

	return pr->sec_wregs;
}

static struct prog *prog_new(const uint8_t *code, size_t len)
{
	struct prog *pr = calloc(1, sizeof(*pr));

	assert_non_null(pr);
	assert_true(len <= CODE_MAX);
	memcpy(pr->code, code, len);
	pr->len = len;
	assert_int_equal(elfscan_decoder_new(RD_ARCH_EM, 64, false, &pr->dec), 0);
	pr->env = (struct plan_env){
	    .ctx = pr,
	    .insn = env_insn,
	    .insn_len = env_insn_len,
	    .in_section = env_in_section,
	    .can_plant = env_can_plant,
	    .store_addr = env_store_addr,
	    .memw_addr = env_memw_addr,
	    .section_ways = env_section_ways,
	};
	return pr;
}

static void prog_free(struct prog *pr)
{
	elfscan_decoder_free(pr->dec);
	free(pr);
}

/* Plan from the instruction at BASE + off, whose successors the stepper computed exactly
 * from the registers (here: the decoded fall-through and target). */
static bool plan(struct prog *pr, size_t off, uint64_t left)
{
	const struct elfscan_insn *root = env_insn(pr, BASE + off);
	uint64_t succ[2];
	size_t n = 0;

	assert_non_null(root);
	assert_int_not_equal(root->size, 0);
	if (root->flow == ELFSCAN_FLOW_NEXT || root->flow == ELFSCAN_FLOW_COND)
		succ[n++] = root->addr + root->size;
	if ((root->flags & ELFSCAN_INSN_HAS_TARGET))
		succ[n++] = root->target;
	return rd_plan_build(&pr->plan, &pr->env, root, succ, n, left);
}

static bool is_leaf(const struct prog *pr, uint64_t addr)
{
	int k = rd_plan_find(&pr->plan, addr);

	return k >= 0 && !pr->plan.n[k].dead && pr->plan.n[k].leaf;
}

static bool is_live(const struct prog *pr, uint64_t addr)
{
	int k = rd_plan_find(&pr->plan, addr);

	return k >= 0 && !pr->plan.n[k].dead;
}

static int live_leaves(const struct prog *pr)
{
	int n = 0;

	for (int i = 0; i < pr->plan.nn; i++)
		n += !pr->plan.n[i].dead && pr->plan.n[i].leaf;
	return n;
}

/* What every tree must hold: the leaf count is right, a live node's parent is live, and no
 * leaf lies inside the instruction of a live node. */
static void assert_tree_sound(struct prog *pr)
{
	const struct plan *p = &pr->plan;

	assert_int_equal(live_leaves(pr), p->nleaves);
	for (int i = 1; i < p->nn; i++) {
		if (p->n[i].dead)
			continue;
		assert_false(p->n[p->n[i].parent].dead);
		assert_true(p->n[i].parent < i);
	}
	for (int i = 0; i < p->nn; i++) {
		if (p->n[i].dead || !p->n[i].leaf)
			continue;
		for (int j = 0; j < p->nn; j++) {
			uint64_t a = p->n[j].addr;
			unsigned int size = env_insn_len(pr, a);

			if (p->n[j].dead || j == i)
				continue;
			assert_false(p->n[i].addr > a && p->n[i].addr < a + size);
		}
	}
}

/* "nop; je 1f; lock; 1: cmpxchg": the branch skips the lock prefix. A breakpoint on the
 * cmpxchg would be inside "lock cmpxchg" on the other path, which then runs "lock int3",
 * an illegal instruction: the je where the paths part must be the leaf. */
static void test_jump_over_lock_prefix_plants_no_leaf_inside(void **state)
{
	static const uint8_t code[] = {
	    0x90,			  /* 0: nop */
	    0x74, 0x01,			  /* 1: je 4 */
	    0xf0, 0x48, 0x0f, 0xb1, 0x0f, /* 3: lock cmpxchg [rdi], rcx */
	    0xc3,			  /* 8: ret */
	};
	struct prog *pr = prog_new(code, sizeof(code));

	assert_true(plan(pr, 0, UINT64_MAX));
	assert_tree_sound(pr);
	assert_true(is_leaf(pr, BASE + 1));
	assert_false(is_live(pr, BASE + 4));
	assert_false(is_live(pr, BASE + 3));
	assert_int_equal(pr->plan.nleaves, 1);
	prog_free(pr);
}

/* The same from the je itself: the paths part at the root, so there is no tree (the stepper
 * single-steps instead). */
static void test_jump_over_lock_prefix_at_root_gives_no_tree(void **state)
{
	static const uint8_t code[] = {
	    0x74, 0x01,			  /* 0: je 3 */
	    0xf0, 0x48, 0x0f, 0xb1, 0x0f, /* 2: lock cmpxchg [rdi], rcx */
	    0xc3,			  /* 7: ret */
	};
	struct prog *pr = prog_new(code, sizeof(code));

	assert_false(plan(pr, 0, UINT64_MAX));
	prog_free(pr);
}

/* "test; je 1f; call 0; 1: ret": a call to an undefined weak function targets 0, which no
 * mapping covers. No breakpoint can go there: the call is a leaf. */
static void test_call_to_zero_is_not_planted(void **state)
{
	uint8_t code[] = {
	    0x48, 0x85, 0xc0,		  /* 0: test rax, rax */
	    0x74, 0x05,			  /* 3: je 10 */
	    0xe8, 0x00, 0x00, 0x00, 0x00, /* 5: call 0 (rel32 filled below) */
	    0xc3,			  /* 10: ret */
	};
	int32_t rel = (int32_t)(0 - (int64_t)(BASE + 10));
	struct prog *pr;

	memcpy(code + 6, &rel, sizeof(rel));
	pr = prog_new(code, sizeof(code));
	assert_true(plan(pr, 0, UINT64_MAX));
	assert_tree_sound(pr);
	assert_int_equal(env_insn(pr, BASE + 5)->target, 0);
	assert_int_equal(rd_plan_find(&pr->plan, 0), -1);
	assert_true(is_leaf(pr, BASE + 5));
	assert_true(is_leaf(pr, BASE + 10));
	assert_int_equal(pr->plan.nleaves, 2);
	prog_free(pr);
}

/* A conditional branch: both ways are planned, each to its own leaf. */
static void test_conditional_branch_gives_both_leaves(void **state)
{
	static const uint8_t code[] = {
	    0x90,	/* 0: nop */
	    0x75, 0x02, /* 1: jne 5 */
	    0x90,	/* 3: nop */
	    0xc3,	/* 4: ret */
	    0xc3,	/* 5: ret */
	};
	struct prog *pr = prog_new(code, sizeof(code));
	int jne, k;

	assert_true(plan(pr, 0, UINT64_MAX));
	assert_tree_sound(pr);
	jne = rd_plan_find(&pr->plan, BASE + 1);
	assert_true(jne > 0);
	assert_false(pr->plan.n[jne].leaf);
	assert_true(is_leaf(pr, BASE + 4));
	assert_true(is_leaf(pr, BASE + 5));
	assert_int_equal(pr->plan.nleaves, 2);
	k = rd_plan_find(&pr->plan, BASE + 5);
	assert_int_equal(pr->plan.n[k].parent, jne);
	assert_int_equal(pr->plan.n[k].depth, 2);
	k = rd_plan_find(&pr->plan, BASE + 4);
	assert_int_equal(pr->plan.n[pr->plan.n[k].parent].addr, BASE + 3);
	assert_int_equal(pr->plan.n[k].depth, 3);
	prog_free(pr);
}

/* A path into a critical section stops in front of it: the section is run through to its
 * exits by the step-over, never by the tree. */
static void test_path_into_section_stops_before_it(void **state)
{
	static const uint8_t code[] = {
	    0x90,	/* 0: nop */
	    0xeb, 0x01, /* 1: jmp 4 */
	    0x90,	/* 3: nop */
	    0x90,	/* 4: nop (section start) */
	    0x90,	/* 5: nop */
	    0xc3,	/* 6: ret (post_commit) */
	};
	struct prog *pr = prog_new(code, sizeof(code));

	pr->sec_start = BASE + 4;
	pr->sec_end = BASE + 6;
	assert_true(plan(pr, 0, UINT64_MAX));
	assert_tree_sound(pr);
	assert_true(is_leaf(pr, BASE + 1));
	assert_int_equal(rd_plan_find(&pr->plan, BASE + 4), -1);
	assert_int_equal(rd_plan_find(&pr->plan, BASE + 5), -1);
	/* From the jmp itself the next instruction is in the section: no tree. */
	assert_false(plan(pr, 1, UINT64_MAX));
	prog_free(pr);
}

/* The exits a passage plants breakpoints at, besides post_commit and abort: branch targets
 * outside the section, found by decoding its bytes. */
static void test_section_exits_are_branches_out(void **state)
{
	static const uint8_t code[] = {
	    0x48, 0x39, 0xc8,		  /* 0: cmp rax, rcx (section start) */
	    0x75, 0xeb,			  /* 3: jne -0x10 (out, before the start) */
	    0x74, 0x00,			  /* 5: je 7 (inside) */
	    0x48, 0x89, 0x07,		  /* 7: mov [rdi], rax */
	    0xeb, 0xe4,			  /* 10: jmp -0x10 (out, again) */
	    0xe9, 0x00, 0x01, 0x00, 0x00, /* 12: jmp 17 + 0x100 (out, after the end) */
	};
	uint64_t out[8];
	struct prog *pr = prog_new(code, sizeof(code));
	size_t n;

	n = rd_section_branch_exits(pr->dec, code, BASE, BASE + sizeof(code), out, 8);
	assert_int_equal(n, 2);
	assert_int_equal(out[0], BASE - 0x10);
	assert_int_equal(out[1], BASE + 17 + 0x100);
	prog_free(pr);
}

/* A 64-bit store runs unseen only when it provably misses rseq_cs: one to it, or one whose
 * address register the path wrote, stops in front of it (it may arm a section). */
static void test_store_to_rseq_cs_is_a_leaf(void **state)
{
	static const uint8_t code[] = {
	    0x90,	      /* 0: nop */
	    0x48, 0x89, 0x07, /* 1: mov [rdi], rax */
	    0x48, 0x89, 0xf7, /* 4: mov rdi, rsi */
	    0x48, 0x89, 0x07, /* 7: mov [rdi], rax */
	    0xc3,	      /* 10: ret */
	};
	struct prog *pr = prog_new(code, sizeof(code));

	pr->env.rseq_cs = 0x7000;
	pr->store_ea = 0x7000;
	assert_true(plan(pr, 0, UINT64_MAX));
	assert_true(is_leaf(pr, BASE + 1));
	assert_int_equal(pr->plan.nleaves, 1);

	pr->store_ea = 0x8000; /* misses it, as long as rdi holds what it held */
	assert_true(plan(pr, 0, UINT64_MAX));
	assert_tree_sound(pr);
	assert_false(is_leaf(pr, BASE + 1));
	assert_true(is_leaf(pr, BASE + 7));
	assert_int_equal(pr->plan.nleaves, 1);
	prog_free(pr);
}

/* A section whose ways out are all known runs inside the tree: the store that arms it and
 * falls into it runs unseen, the section is one node that counts as no instruction, and its
 * ways out are nodes. A return after it is a leaf (it may have written the return address).
 * When a way out is the root, or the count ends before it, the store is the leaf again. */
static void test_section_runs_inside_tree(void **state)
{
	static const uint8_t code[] = {
	    0x90,	      /* 0: nop */
	    0x48, 0x89, 0x07, /* 1: mov [rdi], rax (arms) */
	    0x90,	      /* 4: nop (section start) */
	    0x75, 0x02,	      /* 5: jne 9 (exit) */
	    0x90,	      /* 7: nop */
	    0x90,	      /* 8: nop (post_commit) */
	    0x90,	      /* 9: nop (exit) */
	    0x90,	      /* 10: nop (abort handler) */
	    0xc3,	      /* 11: ret */
	};
	struct prog *pr = prog_new(code, sizeof(code));
	int k;

	pr->sec_start = BASE + 4;
	pr->sec_end = BASE + 8;
	pr->env.rseq_cs = 0x7000;
	pr->store_ea = 0x7000;
	pr->env.ret_slot = env_ret_slot;
	pr->sp = 0x7ff0;
	pr->memw_ea = 0x9000;
	pr->ret_word = BASE;
	/* Not foldable: the store stops in front of the section, as before. */
	assert_true(plan(pr, 0, UINT64_MAX));
	assert_true(is_leaf(pr, BASE + 1));
	assert_int_equal(pr->plan.nleaves, 1);

	pr->ways[0] = BASE + 8;
	pr->ways[1] = BASE + 10;
	pr->ways[2] = BASE + 9;
	pr->nways = 3;
	assert_true(plan(pr, 0, UINT64_MAX));
	assert_tree_sound(pr);
	assert_false(is_leaf(pr, BASE + 1));
	k = rd_plan_find(&pr->plan, BASE + 4);
	assert_true(k >= 0 && pr->plan.n[k].sect && !pr->plan.n[k].leaf);
	assert_int_equal(rd_plan_find(&pr->plan, BASE + 5), -1);
	/* The ways out: the commit and the exit run into nodes already planned, the abort
	 * handler runs on to the return, which the section bars from being read. */
	assert_true(is_leaf(pr, BASE + 8));
	assert_true(is_leaf(pr, BASE + 9));
	assert_false(is_leaf(pr, BASE + 10));
	assert_true(is_leaf(pr, BASE + 11));
	assert_int_equal(pr->plan.nleaves, 3);
	/* nop and store ran before the commit; the section is no instruction. */
	assert_int_equal(pr->plan.n[rd_plan_find(&pr->plan, BASE + 8)].depth, 2);
	assert_int_equal(pr->plan.n[rd_plan_find(&pr->plan, BASE + 8)].parent, k);

	/* From the commit: the return is read, the way back to the section reaches it again,
	 * and the commit, a way out, is the root: the store is the leaf, the section not
	 * planned. */
	assert_true(plan(pr, 8, UINT64_MAX));
	assert_tree_sound(pr);
	assert_false(is_leaf(pr, BASE + 11));
	assert_true(is_leaf(pr, BASE + 1));
	assert_false(is_live(pr, BASE + 4));
	assert_int_equal(pr->plan.nleaves, 1);

	/* The count ends with the store: no instruction of the section is counted, but the
	 * section must not become a leaf: the store does. */
	assert_true(plan(pr, 0, 2));
	assert_tree_sound(pr);
	assert_true(is_leaf(pr, BASE + 1));
	assert_false(is_live(pr, BASE + 4));
	prog_free(pr);
}

/* After a section that ran inside the tree, a store through a register that the section's
 * code does not write still provably misses rseq_cs: it runs unseen. Through one the section
 * writes, or with no word on what the section writes, it is a leaf. */
static void test_store_after_section_keeps_unwritten_registers(void **state)
{
	static const uint8_t code[] = {
	    0x90,				      /* 0: nop */
	    0x48, 0x89, 0x07,			      /* 1: mov [rdi], rax (arms) */
	    0x48, 0xc7, 0xc1, 0x01, 0x00, 0x00, 0x00, /* 4: mov rcx, 1 (section) */
	    0x48, 0x89, 0x07,			      /* 11: mov [rdi], rax (post_commit) */
	    0xc3,				      /* 14: ret */
	    0x90,				      /* 15: nop (abort handler) */
	    0xc3,				      /* 16: ret */
	};
	struct prog *pr = prog_new(code, sizeof(code));

	pr->sec_start = BASE + 4;
	pr->sec_end = BASE + 11;
	pr->ways[0] = BASE + 11;
	pr->ways[1] = BASE + 15;
	pr->nways = 2;
	pr->env.rseq_cs = 0x7000;
	pr->arm_addr = BASE + 1;
	pr->store_ea = 0x8000;
	/* Every register, as without the callback. */
	assert_true(plan(pr, 0, UINT64_MAX));
	assert_tree_sound(pr);
	assert_true(is_leaf(pr, BASE + 11));
	assert_true(is_leaf(pr, BASE + 16));

	pr->env.section_wregs = env_section_wregs;
	pr->sec_wregs = env_insn(pr, BASE + 4)->writes; /* rcx */
	assert_true(plan(pr, 0, UINT64_MAX));
	assert_tree_sound(pr);
	assert_false(is_leaf(pr, BASE + 11));
	assert_true(is_leaf(pr, BASE + 14)); /* a return after a section is never read */
	assert_true(is_leaf(pr, BASE + 16));
	assert_int_equal(pr->plan.nleaves, 2);

	pr->sec_wregs |= env_insn(pr, BASE + 11)->st.regs; /* rdi too */
	assert_true(plan(pr, 0, UINT64_MAX));
	assert_tree_sound(pr);
	assert_true(is_leaf(pr, BASE + 11));
	prog_free(pr);
}

/* --count: the tree goes no deeper than the instructions left; --until is always a leaf. */
static void test_count_and_until_bound_the_tree(void **state)
{
	static const uint8_t code[] = {0x90, 0x90, 0x90, 0x90, 0x90, 0xc3};
	struct prog *pr = prog_new(code, sizeof(code));

	assert_true(plan(pr, 0, 2));
	assert_tree_sound(pr);
	assert_true(is_leaf(pr, BASE + 2));
	assert_int_equal(rd_plan_find(&pr->plan, BASE + 3), -1);

	pr->env.until = BASE + 3;
	assert_true(plan(pr, 0, UINT64_MAX));
	assert_true(is_leaf(pr, BASE + 3));
	assert_int_equal(pr->plan.nleaves, 1);
	prog_free(pr);
}

/* A loop runs back into the tree: an address is planned once, so the backward branch whose
 * target is already a node is a leaf. */
static void test_loop_back_edge_is_a_leaf(void **state)
{
	static const uint8_t code[] = {
	    0x48, 0xff, 0xc9, /* 0: dec rcx */
	    0x75, 0xfb,	      /* 3: jne 0 */
	    0xc3,	      /* 5: ret */
	};
	struct prog *pr = prog_new(code, sizeof(code));

	assert_true(plan(pr, 0, UINT64_MAX));
	assert_tree_sound(pr);
	assert_true(is_leaf(pr, BASE + 3));
	assert_int_equal(pr->plan.nn, 2);
	prog_free(pr);
}

/* A return whose slot nothing on the path can have changed goes where the word at the root's
 * stack pointer says: read at plan time, it runs unseen. A push, pop or lea of the stack
 * pointer on the way (it moved), a store that may reach the slot, or a store through a
 * register the path wrote makes it a leaf, as does a second return (the first moved the
 * stack pointer). */
static void test_return_target_read_at_plan_time(void **state)
{
	static const uint8_t code[] = {
	    0x90,			  /* 0: nop */
	    0x48, 0x89, 0x07,		  /* 1: mov [rdi], rax */
	    0xc3,			  /* 4: ret (to 5, the word at sp) */
	    0x90,			  /* 5: nop */
	    0xc3,			  /* 6: ret */
	    0x50,			  /* 7: push rax */
	    0xc3,			  /* 8: ret */
	    0x48, 0x89, 0xe7,		  /* 9: mov rdi, rsp */
	    0x48, 0x89, 0x07,		  /* 12: mov [rdi], rax */
	    0xc3,			  /* 15: ret */
	    0x48, 0x8d, 0x64, 0x24, 0x08, /* 16: lea rsp, [rsp + 8] */
	    0xc3,			  /* 21: ret */
	};
	struct prog *pr = prog_new(code, sizeof(code));

	pr->sp = 0x7ff0;
	pr->ret_word = BASE + 5;
	pr->memw_ea = 0x9000;

	/* no ret_slot: every return is a leaf */
	assert_true(plan(pr, 0, UINT64_MAX));
	assert_true(is_leaf(pr, BASE + 4));

	pr->env.ret_slot = env_ret_slot;
	assert_true(plan(pr, 0, UINT64_MAX));
	assert_tree_sound(pr);
	assert_false(is_leaf(pr, BASE + 4));
	assert_true(is_live(pr, BASE + 5));
	assert_int_equal(pr->plan.n[rd_plan_find(&pr->plan, BASE + 5)].parent,
			 rd_plan_find(&pr->plan, BASE + 4));
	assert_true(is_leaf(pr, BASE + 6));
	assert_int_equal(pr->plan.nleaves, 1);

	/* the store reaches the slot: [sp, sp + 8) overlaps [ea, ea + 8) */
	pr->memw_ea = pr->sp + 4;
	assert_true(plan(pr, 0, UINT64_MAX));
	assert_true(is_leaf(pr, BASE + 4));
	pr->memw_ea = pr->sp + 8; /* the word above it: misses */
	assert_true(plan(pr, 0, UINT64_MAX));
	assert_false(is_leaf(pr, BASE + 4));
	pr->memw_ea = pr->sp - 8; /* the word below it: misses */
	assert_true(plan(pr, 0, UINT64_MAX));
	assert_false(is_leaf(pr, BASE + 4));

	/* push moves the stack pointer */
	assert_true(plan(pr, 7, UINT64_MAX));
	assert_true(is_leaf(pr, BASE + 8));
	assert_int_equal(rd_plan_find(&pr->plan, BASE + 5), -1);

	/* lea moves the stack pointer without writing memory */
	assert_true(plan(pr, 16, UINT64_MAX));
	assert_true(is_leaf(pr, BASE + 21));
	assert_int_equal(rd_plan_find(&pr->plan, BASE + 5), -1);

	/* the store's address register was written on the path: its address is not known */
	pr->memw_ea = 0x9000;
	assert_true(plan(pr, 9, UINT64_MAX));
	assert_true(is_leaf(pr, BASE + 15));
	assert_int_equal(rd_plan_find(&pr->plan, BASE + 5), -1);

	/* a return into a section stops in front of the return */
	pr->sec_start = BASE + 5;
	pr->sec_end = BASE + 6;
	assert_true(plan(pr, 0, UINT64_MAX));
	assert_true(is_leaf(pr, BASE + 4));
	assert_int_equal(rd_plan_find(&pr->plan, BASE + 5), -1);
	prog_free(pr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_jump_over_lock_prefix_plants_no_leaf_inside),
	    cmocka_unit_test(test_jump_over_lock_prefix_at_root_gives_no_tree),
	    cmocka_unit_test(test_call_to_zero_is_not_planted),
	    cmocka_unit_test(test_conditional_branch_gives_both_leaves),
	    cmocka_unit_test(test_path_into_section_stops_before_it),
	    cmocka_unit_test(test_section_exits_are_branches_out),
	    cmocka_unit_test(test_store_to_rseq_cs_is_a_leaf),
	    cmocka_unit_test(test_count_and_until_bound_the_tree),
	    cmocka_unit_test(test_loop_back_edge_is_a_leaf),
	    cmocka_unit_test(test_return_target_read_at_plan_time),
	    cmocka_unit_test(test_section_runs_inside_tree),
	    cmocka_unit_test(test_store_after_section_keeps_unwritten_registers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
