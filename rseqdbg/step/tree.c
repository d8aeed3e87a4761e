// SPDX-License-Identifier: GPL-2.0-only
/*
 * Running between breakpoints outside sections. The thread runs from the current instruction
 * to the leaves of the tree the planner builds; where it stops names the one path it took, so
 * the instructions it ran are known and counted exactly. Module code is read once a page and
 * decoded once an address: it does not change under us.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "step/breakpoint.h"
#include "step/stepper.h"

/* The bytes at pc (at most len), original bytes under our breakpoints. Returns how many.
 * A page is kept as the program's bytes: one read while some of our breakpoints are planted
 * (planting a tree's leaves one by one) would otherwise keep an int3 after its removal. */
static size_t fetch_code(struct stepper *st, uint64_t pc, uint8_t *buf, size_t len)
{
	size_t n = 0;

	while (n < len) {
		uint64_t a = pc + n, page = a & ~4095ull;
		struct codepage *c = &st->code[(page >> 12) % CODECACHE];
		size_t k = 4096 - (a - page);

		if (c->page != page + 1) {
			if (pread(st->tr.memfd, c->bytes, sizeof(c->bytes), (off_t)page) !=
			    sizeof(c->bytes)) {
				c->page = 0;
				break;
			}
			rd_bp_unpatch(page, c->bytes, sizeof(c->bytes));
			c->page = page + 1;
		}
		if (k > len - n)
			k = len - n;
		memcpy(buf + n, c->bytes + (a - page), k);
		n += k;
	}
	return n;
}

/* Whether a breakpoint can go at addr: a mapping covers it. A direct call to an undefined
 * weak function targets 0, behind a test that skips it: a path decoded, never taken. */
static bool can_plant(struct stepper *st, uint64_t addr)
{
	uint8_t b;

	if (rd_modules_find(&st->mods, addr))
		return fetch_code(st, addr, &b, 1) == 1;
	return pread(st->tr.memfd, &b, 1, (off_t)addr) == 1;
}

bool rd_step_page_checked(struct stepper *st, uint64_t pc)
{
	uint64_t page = pc >> 12;

	for (size_t i = 0; i < st->nunknown; i++)
		if (st->unknown_pages[i] == page)
			return true;
	if (st->nunknown < sizeof(st->unknown_pages) / sizeof(st->unknown_pages[0]))
		st->unknown_pages[st->nunknown++] = page;
	else
		return true;
	return false;
}

/* The decoded instruction at pc, module code only (it does not change under us). */
const struct elfscan_insn *rd_step_insn_at(struct stepper *st, uint64_t pc)
{
	struct dcache_ent *e = &st->dcache[(pc ^ (pc >> 13)) % DCACHE];
	uint8_t buf[RD_ARCH_INSN_MAX];
	size_t n;

	if (e->addr == pc)
		return &e->in;
	n = fetch_code(st, pc, buf, sizeof(buf));
	elfscan_decode_one(st->dec, buf, n, pc, &e->in);
	e->addr = pc;
	return &e->in;
}

/* ---- the planner's view of the process ------------------------------------------------ */

static const struct elfscan_insn *env_insn(void *ctx, uint64_t addr)
{
	struct stepper *st = ctx;

	return rd_modules_find(&st->mods, addr) ? rd_step_insn_at(st, addr) : NULL;
}

/* Leaves past the count or outside every module are decoded only when the planner asks. */
static unsigned int env_insn_len(void *ctx, uint64_t addr)
{
	struct stepper *st = ctx;
	uint8_t buf[RD_ARCH_INSN_MAX];
	struct elfscan_insn in;
	ssize_t got;

	if (rd_modules_find(&st->mods, addr))
		return rd_step_insn_at(st, addr)->size;
	got = pread(st->tr.memfd, buf, sizeof(buf), (off_t)addr);
	if (got <= 0)
		return 0;
	rd_bp_unpatch(addr, buf, (size_t)got);
	elfscan_decode_one(st->dec, buf, (size_t)got, addr, &in);
	return in.size;
}

static bool env_in_section(void *ctx, uint64_t addr)
{
	return rd_step_sec_find(ctx, addr) != NULL;
}

static bool env_can_plant(void *ctx, uint64_t addr)
{
	return can_plant(ctx, addr);
}

static bool env_store_addr(void *ctx, const struct elfscan_insn *in, uint64_t *ea)
{
	struct stepper *st = ctx;
	uint64_t val;

	return rd_store_eval(&st->tr, in, st->penv_regs, ea, &val);
}

static bool env_memw_addr(void *ctx, const struct elfscan_insn *in, uint64_t *ea)
{
	struct stepper *st = ctx;

	return rd_memw_addr(in, st->penv_regs, ea);
}

/* Read once a tree: every return the tree plans through reads the same word. */
static bool env_ret_slot(void *ctx, uint64_t *sp, uint64_t *word)
{
	struct stepper *st = ctx;

	*sp = rd_arch_sp(st->penv_regs);
	if (!st->slot_read) {
		st->slot_read = true;
		st->slot_ok = rd_pt_peek(&st->tr, *sp, &st->slot_word, sizeof(*word)) == 0;
	}
	*word = st->slot_word;
	return st->slot_ok;
}

static bool env_reg_at_root(void *ctx, int reg, uint64_t *v)
{
	struct stepper *st = ctx;

	return rd_arch_reg(st->penv_regs, reg, v);
}

/* Whether section s may run inside a tree: it is a table's, no other section overlaps it,
 * and its code decodes to its end with no way out but its commit, its abort handler and
 * direct branches (no call, return, indirect branch or system call), so the tree's
 * breakpoints at its ways out see the thread leave it. */
static bool sec_foldable(struct stepper *st, struct section *s)
{
	uint64_t a;

	if (s->fold)
		return s->fold > 0;
	s->fold = -1;
	if (s->src != SRC_TABLE || !rd_modules_find(&st->mods, s->start))
		return false;
	for (size_t i = 0; i < st->nsecs; i++) {
		const struct section *o = &st->secs[i];

		if (o != s && o->start < s->post_commit && s->start < o->post_commit)
			return false;
	}
	if (!s->exits_known)
		rd_step_compute_exits(st, s);
	s->wregs = 0;
	for (a = s->start; a < s->post_commit;) {
		const struct elfscan_insn *in = rd_step_insn_at(st, a);

		if (!in->size ||
		    !((in->run & ELFSCAN_RUN_PLAIN) ||
		      ((in->flow == ELFSCAN_FLOW_JUMP || in->flow == ELFSCAN_FLOW_COND) &&
		       (in->flags & ELFSCAN_INSN_HAS_TARGET))))
			return false;
		s->wregs |= in->writes;
		a += in->size;
	}
	if (a != s->post_commit)
		return false;
	s->fold = 1;
	return true;
}

static size_t env_section_ways(void *ctx, uint64_t addr, uint64_t *ways, size_t max)
{
	struct stepper *st = ctx;
	struct section *s = rd_step_sec_find(st, addr);
	size_t n = 0;

	/* A section in a retry loop runs to its commit at full speed, as a passage. */
	if (!s || s->start != addr || s->retry_loop || !sec_foldable(st, s))
		return 0;
	for (size_t i = 0; i < s->nexits + 2; i++) {
		uint64_t w = i == 0 ? s->post_commit : i == 1 ? s->abort : s->exits[i - 2];

		if (addr_in(w, ways, n))
			continue;
		if (n == max)
			return 0;
		ways[n++] = w;
	}
	return n;
}

static uint32_t env_section_wregs(void *ctx, uint64_t addr)
{
	struct stepper *st = ctx;
	struct section *s = rd_step_sec_find(st, addr);

	return s && s->start == addr && sec_foldable(st, s) ? s->wregs : ~0u;
}

void rd_step_tree_env_init(struct stepper *st)
{
	st->penv = (struct plan_env){
	    .ctx = st,
	    .insn = env_insn,
	    .insn_len = env_insn_len,
	    .in_section = env_in_section,
	    .can_plant = env_can_plant,
	    .store_addr = env_store_addr,
	    .memw_addr = env_memw_addr,
	    .section_ways = env_section_ways,
	    .section_wregs = env_section_wregs,
	};
}

/* Plan the tree ahead of root, the current instruction (registers regs, successors succ). */
bool rd_step_tree_plan(struct stepper *st, const struct elfscan_insn *root, const rd_regs_t *regs,
		       const uint64_t *succ, size_t nsucc, uint64_t left)
{
	st->penv.rseq_cs = st->have_rcfg && st->rcfg.abi_ptr ? st->rcfg.abi_ptr + 8 : 0;
	st->penv.until = st->until_addr;
	/* --finish counts calls and returns at stops */
	st->penv.ret_slot = st->o.finish ? NULL : env_ret_slot;
	st->penv.reg_at_root = st->o.finish ? NULL : env_reg_at_root;
	st->penv_regs = regs;
	st->slot_read = false;
	return rd_plan_build(&st->plan, &st->penv, root, succ, nsucc, left);
}

/* Count (and print) the instructions the thread ran from the root to node k, exclusive, and
 * the passages of the sections on the way (ns: the tree's run). */
static void account_path(struct stepper *st, const struct elfscan_insn *root, int k, uint64_t ns)
{
	int path[PLAN_NODES], n = 0;

	for (int i = st->plan.n[k].parent; i >= 0; i = st->plan.n[i].parent)
		path[n++] = i;
	while (n-- > 0) {
		const struct pnode *x = &st->plan.n[path[n]];
		const struct elfscan_insn *in;

		if (x->sect) {
			/* Left by the way the next node on the path names. */
			rd_step_passage_in_tree(st, rd_step_sec_find(st, x->addr),
						st->plan.n[n ? path[n - 1] : k].addr, ns);
			continue;
		}
		in = path[n] ? rd_step_insn_at(st, x->addr) : root;
		rd_step_print_step(st, in);
		st->steps++;
		if (st->o.finish && in->flow == ELFSCAN_FLOW_CALL)
			st->depth++;
		else if (st->o.finish && in->flow == ELFSCAN_FLOW_RET)
			st->depth--;
	}
}

/* The section node of the tree whose section holds pc (a signal or an interrupt stopped
 * the thread in it), or -1. */
static int sect_at(struct stepper *st, uint64_t pc)
{
	const struct section *s = rd_step_sec_find(st, pc);
	int k = s ? rd_plan_find(&st->plan, s->start) : -1;

	return k >= 0 && st->plan.n[k].sect && !st->plan.n[k].dead ? k : -1;
}

/* Whether a breakpoint left from the last tree may stay: it is a leaf of this one, or lies
 * where this tree never runs (not on or inside an instruction of its paths). Beyond a bound
 * only leaves stay. */
static bool tree_keeps(uint64_t addr, void *arg)
{
	struct stepper *st = arg;
	const struct plan *p = &st->plan;
	int k = rd_plan_find(p, addr);

	if (rd_step_sec_find(st, addr)) /* a section of the tree runs unseen */
		return false;
	if (k >= 0 && !p->n[k].dead)
		return p->n[k].leaf;
	if (rd_bp_count() > KEEP_BPS)
		return false;
	k = rd_plan_covering(&st->plan, &st->penv, addr);
	return k < 0 || p->n[k].leaf;
}

/* Plant the planned tree's leaves. On failure none stays planted and the caller steps the
 * root alone: a single step needs no breakpoint. */
bool rd_step_tree_plant(struct stepper *st)
{
	struct plan *p = &st->plan;
	int ret = 0;

	/* The last trees' breakpoints stay where this tree cannot run into them (a loop runs
	 * the same tree again): planting and removing are most of a stop's system calls. */
	rd_bp_remove_unless(tree_keeps, st);
	for (int i = 0; i < p->nn && !ret; i++)
		if (p->n[i].leaf)
			ret = rd_bp_plant(p->n[i].addr);
	if (ret)
		rd_bp_remove_all();
	return ret == 0;
}

/* Run the planted tree: let the thread go, see where it stopped. */
enum step_status rd_step_tree_run(struct stepper *st, const struct elfscan_insn *root)
{
	struct plan *p = &st->plan;
	struct rd_event ev;
	enum step_status res = STEP_OK;
	int ret = 0, k = -1, sig = 0;
	uint64_t bp, t0 = rd_step_now_ns();
	bool quit = false, inside = false;
	rd_regs_t regs;

	if (rd_step_resume_cur(st, HOW_CONT, 0) < 0)
		return rd_step_cur_lost(st);
	for (;;) {
		if (!quit) {
			ret = rd_step_wait_cur(st, &ev, 0, HOW_CONT, false);
		} else {
			/* Asked to quit: the thread stops wherever it is on the tree. */
			ret = rd_step_wait_quitting(st, &ev, HOW_CONT);
		}
		if (ret < 0 || (quit && ev.kind == RD_EV_NONE))
			return rd_step_cur_lost(st);
		if (ev.kind == RD_EV_NONE) {
			if (rd_pt_quit) {
				quit = true;
				rd_pt_interrupt(rd_step_cur(st));
			}
			continue;
		}
		if (ev.kind == RD_EV_EXITED) {
			rd_bp_remove_all();
			rd_step_release_held(st);
			return rd_step_cur_gone(st, &ev);
		}
		/* An exec is not from the tree (no system call runs unseen): another thread's. */
		if (ev.kind == RD_EV_EXEC)
			return rd_step_cur_exec(st, &ev);
		bp = rd_step_undo_bp_trap(st->cur_tid, &ev, &regs, false);
		if (bp) {
			k = rd_plan_find(p, bp);
			break;
		}
		if (rd_pt_getregs(st->cur_tid, &regs) < 0)
			return rd_step_cur_lost(st);
		if (ev.kind == RD_EV_SIGNAL) {
			sig = ev.sig;
			k = rd_plan_find(p, rd_arch_pc(&regs));
			break;
		}
		if (quit && ev.kind == RD_EV_STOP) {
			if (rd_step_trap_queued(&regs)) {
				rd_step_resume_cur(st, HOW_CONT, 0);
				continue;
			}
			k = rd_plan_find(p, rd_arch_pc(&regs));
			break;
		}
		/* A trap left over from an earlier single-step, or a late interrupt. */
		rd_step_resume_cur(st, HOW_CONT, 0);
	}
	/* Stopped inside a section the tree runs (by a signal, or to quit): the instructions
	 * up to it were run, the passage goes on from here. */
	if (k < 0 && (sig || quit)) {
		k = sect_at(st, rd_arch_pc(&regs));
		inside = k >= 0;
	}
	/* The breakpoints stay for the next tree, unless another thread waits at one. */
	if (k < 0 || quit || rd_step_any_held(st)) {
		rd_bp_remove_all();
		rd_step_release_held(st);
	}
	/* Stopped at a leaf, registers read and set: the next step need not read them. */
	st->regs = regs;
	st->regs_valid = k >= 0 && !quit && !sig;
	if (k < 0) {
		rd_seterr("thread %d left the decoded paths at %#" PRIx64 " %s: cannot count its "
			  "instructions",
			  st->cur_tid, rd_arch_pc(&regs), rd_step_place(st, rd_arch_pc(&regs)));
		return STEP_ERR;
	}
	account_path(st, root, k, rd_step_now_ns() - t0);
	st->last_store = false;
	if (inside && !quit) {
		/* Delivered as the passage resumes it: the kernel aborts the section first. */
		st->signals++;
		rd_step_print_event(st, "signal", st->cur_tid, "%s during the passage%s",
				    strsignal(sig), st->o.no_signals ? " (not delivered)" : "");
		st->cur_sig = st->o.no_signals ? 0 : sig;
		return rd_step_over(st, rd_step_sec_find(st, rd_arch_pc(&regs)), rd_arch_pc(&regs),
				    NULL, 0);
	}
	if (sig) {
		/* Delivered with the next step, which then stops in the handler. */
		st->signals++;
		rd_step_print_event(st, "signal", st->cur_tid, "%s%s", strsignal(sig),
				    st->o.no_signals ? " (not delivered)" : "");
		st->cur_sig = st->o.no_signals ? 0 : sig;
	}
	if (quit) {
		if (sig && !st->o.no_signals)
			rd_step_cur(st)->pending_sig = sig;
		st->cur_sig = 0;
		st->end = "interrupted";
		res = STEP_END;
	}
	return res;
}
