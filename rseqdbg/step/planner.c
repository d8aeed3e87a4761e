// SPDX-License-Identifier: GPL-2.0-only
/*
 * The path planner: the tree of the paths ahead of the current instruction. A leaf is
 * anything that must be looked at with the thread stopped in front of it: a return or
 * indirect branch, a system call, an instruction that may enter a section or arm one, the
 * end of --count. No breakpoint goes inside an instruction of the tree (a branch into the
 * middle of one, as in "je 1f; lock; 1: cmpxchg"): where two paths disagree on instruction
 * boundaries, the branch where they part is a leaf.
 */
#include <string.h>

#include "step/planner.h"

int rd_plan_find(const struct plan *p, uint64_t addr)
{
	for (size_t i = (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 40) % PLAN_HASH; p->hash[i];
	     i = (i + 1) % PLAN_HASH)
		if (p->n[p->hash[i] - 1].addr == addr)
			return p->hash[i] - 1;
	return -1;
}

static void plan_add(struct plan *p, uint64_t addr, int parent, uint32_t depth, uint32_t wregs)
{
	size_t i = (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 40) % PLAN_HASH;

	while (p->hash[i])
		i = (i + 1) % PLAN_HASH;
	p->hash[i] = (int16_t)(p->nn + 1);
	p->n[p->nn++] =
	    (struct pnode){.addr = addr, .depth = depth, .wregs = wregs, .parent = parent};
}

/* Whether node x, a near return, goes to the word the stack pointer addressed at the root
 * (*target): nothing on the way from the root moved the stack pointer or may have written
 * those 8 bytes. A return from a function called before the root, read at plan time instead
 * of at a stop in front of it. A return to a register, the same from the register. */
static bool plan_ret(const struct plan *p, const struct plan_env *env,
		     const struct elfscan_insn *root, int x, const struct elfscan_insn *in,
		     uint64_t *target)
{
	uint64_t sp, word;
	bool read = false;

	/* A return to a register goes where the register held at the root if nothing on the
	 * way wrote it (wregs: bit n for register n). */
	if (in->ind_reg != ELFSCAN_NOREG)
		return in->ind_reg >= 0 && in->ind_reg < 32 &&
		       !(p->n[x].wregs & (1u << in->ind_reg)) && env->reg_at_root &&
		       env->reg_at_root(env->ctx, in->ind_reg, target);
	if (!env->ret_slot || !strncmp(in->text, "retf", 4))
		return false;
	for (int i = p->n[x].parent; i >= 0; i = p->n[i].parent) {
		const struct elfscan_insn *w = i ? env->insn(env->ctx, p->n[i].addr) : root;
		uint64_t ea;

		if (p->n[i].sect || !w || (w->writes & RD_REG_SP) || w->memw == ELFSCAN_MEMW_ANY)
			return false;
		if (w->memw != ELFSCAN_MEMW_OP)
			continue;
		/* The slot is read once, when a store must be shown to miss it. */
		if (!read && !(read = env->ret_slot(env->ctx, &sp, &word)))
			return false;
		if ((w->memw_op.regs & p->n[i].wregs) || !env->memw_addr(env->ctx, w, &ea) ||
		    (ea < sp + 8 && ea + w->memw_size > sp))
			return false;
	}
	if (!read && !env->ret_slot(env->ctx, &sp, &word))
		return false;
	*target = word;
	return true;
}

/* Whether a critical section starts at addr that may run unseen inside the tree. */
static bool plan_foldable(const struct plan_env *env, uint64_t addr)
{
	uint64_t ways[PLAN_WAYS];

	return env->section_ways && env->section_ways(env->ctx, addr, ways, PLAN_WAYS) > 0;
}

/* Whether node x (not the root), module code within the count, may run unseen. */
static bool plan_interior(const struct plan_env *env, const struct pnode *x,
			  const struct elfscan_insn *in)
{
	bool branch = (in->flow == ELFSCAN_FLOW_JUMP || in->flow == ELFSCAN_FLOW_COND ||
		       in->flow == ELFSCAN_FLOW_CALL) &&
		      (in->flags & ELFSCAN_INSN_HAS_TARGET);

	if (!in->size || (!(in->run & ELFSCAN_RUN_PLAIN) && !branch) ||
	    env->in_section(env->ctx, x->addr))
		return false;
	if (in->store && env->rseq_cs) {
		/* It must provably miss rseq_cs: its address registers hold what they held at
		 * the root. */
		uint64_t ea, cs = env->rseq_cs;

		if ((in->st.regs & x->wregs) || !env->store_addr(env->ctx, in, &ea) ||
		    (ea < cs + 8 && ea + 8 > cs))
			/* Or it arms the section that it falls into, which runs inside the
			 * tree: the stop at the store and the one after the section are one. */
			return in->flow == ELFSCAN_FLOW_NEXT &&
			       plan_foldable(env, x->addr + in->size);
	}
	return true;
}

/* The length of node k's instruction; leaves past the count or outside every module are
 * decoded only now, for plan_check. 0 when it cannot be decoded. */
static unsigned int plan_size(struct plan *p, const struct plan_env *env, int k)
{
	struct pnode *x = &p->n[k];

	if (!x->size)
		x->size = (uint8_t)env->insn_len(env->ctx, x->addr);
	return x->size;
}

int rd_plan_covering(struct plan *p, const struct plan_env *env, uint64_t addr)
{
	for (unsigned int k = 1; k < RD_ARCH_INSN_MAX && k <= addr; k++) {
		int j = rd_plan_find(p, addr - k);

		if (j >= 0 && !p->n[j].dead && plan_size(p, env, j) > k)
			return j;
	}
	return -1;
}

/* Make the branch where the paths to nodes a and b part a leaf, cutting off what lies
 * beyond it. False when that branch is the root: no tree then. */
static bool plan_cut(struct plan *p, int a, int b)
{
	/* A parent comes before its children in the array. */
	while (a != b) {
		if (a > b)
			a = p->n[a].parent;
		else
			b = p->n[b].parent;
	}
	if (a == 0)
		return false;
	if (!p->n[a].leaf) {
		p->n[a].leaf = true;
		p->nleaves++;
	}
	for (int i = a + 1; i < p->nn; i++) {
		struct pnode *x = &p->n[i];

		if (x->dead || (x->parent != a && !p->n[x->parent].dead))
			continue;
		x->dead = true;
		if (x->leaf) {
			x->leaf = false;
			p->nleaves--;
		}
	}
	return true;
}

/*
 * A breakpoint inside an instruction that a path of the tree runs (or that another thread
 * runs at the same address) turns it into another instruction: "lock cmpxchg" with one at
 * its second byte is "lock int3", an illegal instruction. Where a leaf lies inside a node's
 * instruction, the paths to the two disagree on instruction boundaries: stop both at the
 * branch where they part. False when that is the root.
 */
static bool plan_check(struct plan *p, const struct plan_env *env)
{

	for (int i = 1; i < p->nn; i++) {
		int j;

		if (!p->n[i].leaf) /* a leaf is never dead */
			continue;
		j = rd_plan_covering(p, env, p->n[i].addr);
		if (j < 0)
			continue;
		if (!plan_cut(p, i, j))
			return false;
		i = 0; /* the new leaf and what remains: look again */
	}
	return true;
}

/* Whether successor a of a node may become a node: not yet in the tree, plantable, not
 * inside a section unless a section starts there that may run unseen (*sect). */
static bool plan_succ_ok(const struct plan *p, const struct plan_env *env, uint64_t a, bool *sect)
{
	*sect = env->in_section(env->ctx, a);
	if (*sect && !plan_foldable(env, a))
		return false;
	return rd_plan_find(p, a) < 0 && env->can_plant(env->ctx, a);
}

/* Breadth first. */
bool rd_plan_build(struct plan *p, const struct plan_env *env, const struct elfscan_insn *root,
		   const uint64_t *succ, size_t nsucc, uint64_t left)
{
	int head = 0;

	p->nn = 0;
	p->nleaves = 0;
	memset(p->hash, 0, sizeof(p->hash));
	plan_add(p, root->addr, -1, 0, 0);
	while (head < p->nn) {
		int i = head++;
		struct pnode *x = &p->n[i];
		const struct elfscan_insn *in = root;
		uint64_t s[PLAN_WAYS];
		bool sect[PLAN_WAYS];
		uint32_t wregs;
		size_t ns = 0;
		bool ok = true;

		if (x->dead)
			continue;
		if (x->sect) {
			/* Its ways out, or none: then the instruction entering it is a leaf. */
			if (x->depth < left && x->addr != env->until)
				ns = env->section_ways(env->ctx, x->addr, s, PLAN_WAYS);
			ok = ns > 0;
		} else if (i == 0) {
			x->size = (uint8_t)root->size;
			for (size_t k = 0; k < nsucc && ns < 4; k++)
				if (!ns || s[0] != succ[k]) /* a branch to the next instruction */
					s[ns++] = succ[k];
		} else {
			/* Past the count, at --until or outside every module (never decoded
			 * into the caches): a leaf. */
			in = x->depth < left && x->addr != env->until ? env->insn(env->ctx, x->addr)
								      : NULL;
			if (in)
				x->size = (uint8_t)in->size;
			if (in && in->flow == ELFSCAN_FLOW_RET && in->size &&
			    !env->in_section(env->ctx, x->addr) &&
			    plan_ret(p, env, root, i, in, &s[0])) {
				ns = 1;
			} else if (!in || !plan_interior(env, x, in)) {
				x->leaf = true;
				p->nleaves++;
				continue;
			} else {
				if (in->flow == ELFSCAN_FLOW_NEXT || in->flow == ELFSCAN_FLOW_COND)
					s[ns++] = x->addr + in->size;
				if (in->flow != ELFSCAN_FLOW_NEXT && !(ns && s[0] == in->target))
					s[ns++] = in->target;
			}
		}
		for (size_t k = 0; k < ns && ok; k++)
			ok = plan_succ_ok(p, env, s[k], &sect[k]);
		/* The frontier (leaves and nodes still to look at) becomes the breakpoints. */
		if (ok && (p->nn + (int)ns > PLAN_NODES ||
			   p->nleaves + (p->nn - head) + (int)ns > PLAN_LEAVES))
			ok = false;
		if (!ok && x->sect) {
			/* No breakpoint goes at a section's start, where it may be armed. */
			if (!plan_cut(p, x->parent, x->parent))
				return false;
			continue;
		}
		if (!ok) {
			if (i == 0)
				return false;
			x->leaf = true;
			p->nleaves++;
			continue;
		}
		/* A section runs no counted instruction, and writes what its code writes. */
		if (x->sect)
			wregs = x->wregs |
				(env->section_wregs ? env->section_wregs(env->ctx, x->addr) : ~0u);
		else
			wregs = x->wregs | in->writes;
		for (size_t k = 0; k < ns; k++) {
			plan_add(p, s[k], i, x->sect ? x->depth : x->depth + 1, wregs);
			p->n[p->nn - 1].sect = sect[k];
		}
	}
	return p->nn > 1 && plan_check(p, env);
}

size_t rd_section_branch_exits(struct elfscan_decoder *d, const uint8_t *code, uint64_t start,
			       uint64_t post_commit, uint64_t *out, size_t max)
{
	uint64_t addr = start;
	size_t n = 0;

	while (addr < post_commit) {
		struct elfscan_insn in;
		size_t off = addr - start;

		elfscan_decode_one(d, code + off, post_commit - addr, addr, &in);
		if (!in.size) {
			addr++;
			continue;
		}
		if ((in.flags & ELFSCAN_INSN_HAS_TARGET) &&
		    (in.target < start || in.target >= post_commit)) {
			bool dup = false;

			for (size_t i = 0; i < n; i++)
				dup |= out[i] == in.target;
			if (!dup && n < max)
				out[n++] = in.target;
		}
		addr += in.size;
	}
	return n;
}
