// SPDX-License-Identifier: GPL-2.0-only
/*
 * The step-over of a critical section. A stop inside an armed section makes the kernel move
 * the thread to the abort handler on resume, so a section is run at full speed between
 * temporary breakpoints at its exits and reported as one passage.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "proc/status.h"
#include "step/breakpoint.h"
#include "step/pin.h"
#include "step/stepper.h"

struct passage_span {
	uint64_t pc; /* the thread's: the passage starts here */
	const struct section *s;
};

/* Whether a breakpoint left from the last tree may stay through the passage: not on or
 * inside the instruction the thread resumes at, not inside the section. */
static bool passage_keeps(uint64_t addr, void *arg)
{
	const struct passage_span *sp = arg;

	return (addr < sp->pc || addr >= sp->pc + RD_ARCH_INSN_MAX) &&
	       (addr < sp->s->start || addr >= sp->s->post_commit);
}

/* Breakpoints at the ways out of section s (its commit, its abort handler, its exits) and
 * at the other successors of the current instruction. 0, -ESRCH when the thread is gone, or
 * another -errno (rd_errmsg() says where) with none planted. */
static int plant_exits(struct stepper *st, struct section *s, uint64_t pc, const uint64_t *other,
		       size_t nother, bool retries)
{
	rd_regs_t regs;
	uint64_t bp;
	int ret;

	/* The last tree's breakpoints stay where the passage cannot stop at them on its way
	 * through the section (the next tree plants most of them again); one the thread meets
	 * after it left by a way decoding cannot see, or in a signal handler, is taken out and
	 * the passage goes on, as if it had not been there. A retry loop runs without them:
	 * a stop on its way back to the section is what it cannot survive. */
	if (retries) {
		rd_bp_remove_all();
	} else {
		struct passage_span span = {.pc = pc, .s = s};

		rd_bp_remove_unless(passage_keeps, &span);
	}
	if (!s->exits_known)
		rd_step_compute_exits(st, s);
	bp = s->post_commit;
	ret = rd_bp_plant(bp);
	if (!ret) {
		bp = s->abort;
		ret = rd_bp_plant(bp);
	}
	/* A branch target that nothing maps (a call to an undefined weak function, decoded
	 * from bytes that are not code) cannot be reached without a fault, which the passage
	 * sees as a signal: no breakpoint is needed there. */
	for (size_t i = 0; !ret && i < s->nexits + nother; i++) {
		uint64_t a = i < s->nexits ? s->exits[i] : other[i - s->nexits];

		if (i >= s->nexits && rd_step_sec_find(st, a))
			continue;
		ret = rd_bp_plant(a);
		if (ret == -EIO || ret == -EFAULT)
			ret = 0;
		else if (ret)
			bp = a;
	}
	if (!ret)
		return 0;
	rd_bp_remove_all();
	/* Killed meanwhile: its memory is gone (EIO), which is the end, not an error. */
	if (rd_pt_getregs(st->cur_tid, &regs) < 0)
		return -ESRCH;
	rd_seterr("cannot plant a breakpoint at %#" PRIx64 " %s, around the section at %#" PRIx64
		  ": %s",
		  bp, rd_step_place(st, bp), s->start, rd_step_plant_error(ret));
	return ret;
}

/* Asked to quit during a passage: stop the thread where it is; it is not inside a section we
 * know unless the kernel had to abort it. */
static enum step_status quit_passage(struct stepper *st)
{
	struct rd_event ev;
	rd_regs_t regs;

	rd_bp_remove_all();
	rd_step_release_held(st);
	rd_pt_interrupt(rd_step_cur(st));
	st->end = "interrupted";
	rd_step_wait_quitting(st, &ev, HOW_CONT);
	if (ev.kind == RD_EV_STOP && rd_pt_getregs(st->cur_tid, &regs) == 0 &&
	    rd_step_trap_queued(&regs) && rd_step_resume_cur(st, HOW_CONT, 0) == 0)
		rd_step_wait_quitting(st, &ev, HOW_CONT);
	if (ev.kind == RD_EV_EXITED)
		return rd_step_cur_gone(st, &ev);
	if (ev.kind == RD_EV_SIGNAL && !st->o.no_signals)
		rd_step_cur(st)->pending_sig = ev.sig;
	rd_step_undo_bp_trap(st->cur_tid, &ev, &regs, true);
	return STEP_END;
}

/* Whether bp is one of the passage's own breakpoints (planted by plant_exits). */
static bool passage_bp(const struct section *s, uint64_t bp, const uint64_t *other, size_t nother)
{
	return bp == s->post_commit || bp == s->abort || addr_in(bp, s->exits, s->nexits) ||
	       addr_in(bp, other, nother);
}

/* Which way a passage ended, from the breakpoint that took the thread. */
static enum result passage_result(const struct section *s, uint64_t bp)
{
	if (bp == s->post_commit)
		return RES_COMMIT;
	if (bp == s->abort)
		return RES_ABORT;
	if (addr_in(bp, s->exits, s->nexits))
		return RES_EXIT;
	return RES_NONE;
}

/*
 * A section that does not commit while stepped, passage after passage, checks something our
 * stops undo: tcmalloc keeps a flag in rseq->cpu_id_start, which the kernel rewrites each time
 * the thread returns to user space after it was switched out; the exit path sets it again,
 * and the stops that step that path clear it. From then on its retries run at full speed,
 * from its entry to its commit.
 */
static void note_result(struct stepper *st, struct section *s, enum result r)
{
	char name[512];

	if (r == RES_COMMIT) {
		s->failed = s->failed_exits = 0;
		return;
	}
	if (r == RES_LOST || s->retry_loop)
		return;
	s->failed_exits += r == RES_EXIT;
	if (++s->failed < RETRY_LOOP_PASSAGES)
		return;
	s->retry_loop = true;
	/* Aborts are the stops' doing; exits are the program's, waiting on something (a lock
	 * another thread holds) that stepping slows down. */
	rd_step_print_event(
	    st, "retry-loop", st->cur_tid,
	    "section %s did not commit in %d passages in a row (%u aborted, %u left by an "
	    "exit): %s; its retries now run at full speed to its commit",
	    rd_step_sec_name(s, name, sizeof(name)), RETRY_LOOP_PASSAGES,
	    s->failed - s->failed_exits, s->failed_exits,
	    s->failed_exits == s->failed
		? "what it waits for (a lock another thread holds) comes slowly under stepping"
		: "what it checks does not survive the stops of stepping");
}

void rd_step_passage_in_tree(struct stepper *st, struct section *s, uint64_t at, uint64_t ns)
{
	enum result r = passage_result(s, at);

	st->passages++;
	st->res[r]++;
	st->stops_in_passages++; /* the tree's stop, shared with its instructions */
	rd_step_print_passage(st, s, r, at, ns, false, false);
	note_result(st, s, r);
}

/* Report the instructions of the exclusive sequence s that the thread ran on its way to bp,
 * which ended it (r): the sequence has no branch back, so the way is its straight line up to
 * the store-exclusive or to the branch out that took it to bp. */
static void exclusive_steps(struct stepper *st, const struct section *s, enum result r, uint64_t bp)
{
	uint8_t code[MAX_EXCLUSIVE];
	size_t len = s->post_commit - s->start;
	ssize_t got;

	got = pread(st->tr.memfd, code, len < sizeof(code) ? len : sizeof(code), (off_t)s->start);
	if (got <= 0)
		return;
	rd_bp_unpatch(s->start, code, (size_t)got);
	for (size_t off = 0; off < (size_t)got;) {
		struct elfscan_insn in;

		elfscan_decode_one(st->dec, code + off, (size_t)got - off, s->start + off, &in);
		rd_step_print_step(st, &in);
		st->steps++;
		/* Lost (the safety net found it elsewhere): only its load is known to have run. */
		if (!in.size || r == RES_LOST ||
		    (r == RES_EXIT && (in.flags & ELFSCAN_INSN_HAS_TARGET) && in.target == bp))
			break;
		off += in.size;
	}
}

/*
 * A load-exclusive opens a sequence that never completes when it is stepped: the trap after
 * each instruction clears the exclusive monitor, so the store-exclusive fails and the loop
 * around it retries forever. The sequence runs whole between breakpoints where it can end,
 * and its instructions are reported as steps. *done is false when it cannot be run so (no
 * store-exclusive within reach): then it is stepped.
 */
enum step_status rd_step_exclusive(struct stepper *st, const struct elfscan_insn *in, bool *done)
{
	struct section s = {.src = SRC_EXCLUSIVE, .start = in->addr, .exits_known = true};
	uint64_t ends[MAX_EXITS];
	uint8_t code[MAX_EXCLUSIVE];
	size_t n = 0;
	ssize_t got;

	*done = false;
	got = pread(st->tr.memfd, code, sizeof(code), (off_t)in->addr);
	if (got <= 0)
		return STEP_OK;
	rd_bp_unpatch(in->addr, code, (size_t)got);
	if (elfscan_exclusive_ends(st->dec, code, (size_t)got, in->addr, ends, MAX_EXITS, &n) < 0 ||
	    !n)
		return STEP_OK;
	/* No abort handler: its place is taken by the end after the store-exclusive. */
	s.post_commit = s.abort = ends[0];
	s.nexits = n - 1;
	memcpy(s.exits, ends + 1, s.nexits * sizeof(ends[0]));
	*done = true;
	return rd_step_over(st, &s, in->addr, NULL, 0);
}

/* Where a passage (or, in a retry loop, the part of it since the last way out) started: its
 * time, the stepped thread's stops and its CPU time then. */
struct passage_mark {
	uint64_t t0, stops, cpu0;
};

static void mark(struct stepper *st, struct passage_mark *m)
{
	char state;

	m->t0 = rd_step_now_ns();
	m->stops = rd_step_cur(st)->stops;
	if (rd_proc_run_ns(st->tr.pid, st->cur_tid, &m->cpu0, &state) < 0)
		m->cpu0 = 0;
}

static void count_passage(struct stepper *st, struct section *s, enum result r, uint64_t at,
			  const struct passage_mark *m, bool net, bool retries)
{
	st->passages++;
	st->res[r]++;
	/* The stepped thread's stops: others held at a breakpoint do not count. */
	st->stops_in_passages += rd_step_cur(st)->stops - m->stops;
	rd_step_print_passage(st, s, r, at, rd_step_now_ns() - m->t0, net, retries);
	note_result(st, s, r);
}

/* Whether the safety net should look at the thread now: it has run the section's bound of
 * CPU time since m, or sleeps in the kernel (no section runs there). *asleep says which. */
static bool net_due(struct stepper *st, const struct section *s, const struct passage_mark *m,
		    bool *asleep)
{
	uint64_t ns;
	char state;

	*asleep = false;
	if (rd_proc_run_ns(st->tr.pid, st->cur_tid, &ns, &state) < 0)
		return true;
	*asleep = state == 'S' || state == 'D';
	return *asleep || ns - m->cpu0 >= s->net_ns;
}

/* How long to wait before the next look, in wall time: the CPU time left to the section's
 * bound cannot run out sooner, and a thread asleep is seen within the first bound. */
static unsigned int net_wait_ms(struct stepper *st, const struct section *s,
				const struct passage_mark *m)
{
	uint64_t ns, left = s->net_ns;
	char state;

	if (rd_proc_run_ns(st->tr.pid, st->cur_tid, &ns, &state) == 0 && ns - m->cpu0 < left)
		left -= ns - m->cpu0;
	if (left > SAFETY_NET_MS * 1000000ull)
		left = SAFETY_NET_MS * 1000000ull;
	return (unsigned int)(left / 1000000) + 1;
}

/* The net found the passage still going (slow, or switched out): the section gets twice the
 * time, so that the net's own stop, which aborts it, cannot end its every passage. */
static void net_grow(struct section *s)
{
	if (s->net_ns < (1ull << 40))
		s->net_ns *= 2;
}

/* Whether the way out at exit, an exit of s, leads straight to its abort handler: a stub
 * in front of the handler (one that counts a stale CPU number) is one way out, not two. */
static bool exit_reaches_abort(struct stepper *st, const struct section *s, uint64_t exit)
{
	uint64_t a = exit;

	for (int n = 0; n < 16 && rd_modules_find(&st->mods, a); n++) {
		const struct elfscan_insn *in = rd_step_insn_at(st, a);

		if (a == s->abort)
			return true;
		if ((in->run & ELFSCAN_RUN_PLAIN))
			a += in->size;
		else if (in->flow == ELFSCAN_FLOW_JUMP && (in->flags & ELFSCAN_INSN_HAS_TARGET))
			a = in->target;
		else
			return false;
		if (!in->size)
			return false;
	}
	return a == s->abort;
}

enum { STEP_PAST, STEP_SIGNAL, STEP_GONE };

/*
 * step_past over another tool's uprobe, where a single step would not come back (see
 * RD_ARCH_STEPS_UPROBES): the thread runs to breakpoints at the successors of the
 * instruction. -1 when they cannot be known (an indirect branch through what cannot be
 * read, an instruction not decoded): the caller steps.
 */
static int run_past(struct stepper *st, uint64_t bp, struct rd_event *ev)
{
	uint8_t code[RD_ARCH_INSN_MAX];
	uint64_t succ[4];
	bool ours[4] = {false}, unknown = false;
	struct elfscan_insn in;
	rd_regs_t r;
	ssize_t got;
	size_t n;
	int ret = STEP_PAST;

	got = pread(st->tr.memfd, code, sizeof(code), (off_t)bp);
	if (got <= 0 || rd_pt_getregs(st->cur_tid, &r) < 0)
		return -1;
	rd_bp_unpatch(bp, code, (size_t)got);
	elfscan_decode_one(st->dec, code, (size_t)got, bp, &in);
	n = in.size ? rd_successors(&st->tr, &in, &r, succ, 4, &unknown) : 0;
	if (!n || unknown || in.flow == ELFSCAN_FLOW_SYSCALL)
		return -1;
	rd_bp_remove(bp);
	for (size_t i = 0; i < n; i++) {
		ours[i] = succ[i] != bp && !rd_bp_planted(succ[i]);
		if (ours[i] && rd_bp_plant(succ[i]) < 0)
			ours[i] = false;
	}
	if (rd_step_resume_cur(st, HOW_CONT, 0) < 0)
		ret = STEP_GONE;
	while (ret == STEP_PAST) {
		if (rd_step_wait_cur(st, ev, 0, HOW_CONT, false) < 0 || ev->kind == RD_EV_EXITED) {
			ret = STEP_GONE;
		} else if (ev->kind == RD_EV_SIGNAL) {
			st->signals++;
			rd_step_print_event(st, "signal", st->cur_tid, "%s%s", strsignal(ev->sig),
					    st->o.no_signals ? " (not delivered)" : "");
			st->cur_sig = st->o.no_signals ? 0 : ev->sig;
			ret = STEP_SIGNAL;
		} else if (ev->kind == RD_EV_TRAP &&
			   rd_step_undo_bp_trap(st->cur_tid, ev, &r, false)) {
			break; /* at a successor, or at a breakpoint it reached first */
		} else if (rd_step_resume_cur(st, HOW_CONT, 0) < 0) {
			ret = STEP_GONE; /* a late interrupt: it goes on */
		}
	}
	for (size_t i = 0; i < n; i++)
		if (ours[i])
			rd_bp_remove(succ[i]);
	return ret == STEP_GONE || rd_bp_plant(bp) == 0 ? ret : STEP_GONE;
}

/*
 * Take the thread, stopped on our breakpoint at bp (outside the section), past it: the
 * breakpoint is lifted for one single step and planted again. STEP_SIGNAL when a signal
 * came first (st->cur_sig: not delivered yet), STEP_GONE when the thread ended (*ev says
 * how).
 */
static int step_past(struct stepper *st, uint64_t bp, struct rd_event *ev)
{
	int ret;

	if (!RD_ARCH_STEPS_UPROBES && rd_bp_probed(bp)) {
		ret = run_past(st, bp, ev);
		if (ret >= 0)
			return ret;
	}
	rd_bp_remove(bp);
	for (int sig = 0;;) {
		if (rd_pt_singlestep(&st->tr, rd_step_cur(st), sig) < 0 ||
		    rd_step_wait_cur(st, ev, 0, HOW_STEP, false) < 0)
			return STEP_GONE;
		if (ev->kind == RD_EV_EXITED)
			return STEP_GONE;
		if (ev->kind == RD_EV_SIGNAL) {
			st->signals++;
			rd_step_print_event(st, "signal", st->cur_tid, "%s%s", strsignal(ev->sig),
					    st->o.no_signals ? " (not delivered)" : "");
			st->cur_sig = st->o.no_signals ? 0 : ev->sig;
			return STEP_SIGNAL;
		}
		if (ev->kind == RD_EV_TRAP)
			break;
		/* A late interrupt: the step is still to be made. */
	}
	return rd_bp_plant(bp) == 0 ? STEP_PAST : STEP_GONE;
}

/* The passage itself (see rd_step_over). */
static enum step_status passage(struct stepper *st, struct section *s, const uint64_t *other,
				size_t nother)
{
	struct passage_mark m;
	uint64_t bp = 0;
	enum result r = RES_NONE;
	struct rd_event ev;
	bool net = false, asleep = false, via_exit = false;
	bool retries = s->retry_loop;
	/* Signal handlers the thread entered during the passage and may still be running */
	unsigned int handlers = st->cur_sig && !st->o.no_signals;
	rd_regs_t regs;
	int ret;

	mark(st, &m);
	if (rd_step_resume_cur(st, HOW_CONT, st->cur_sig) < 0)
		return rd_step_cur_lost(st);
	st->cur_sig = 0;
	for (;;) {
		ret = rd_step_wait_cur(st, &ev, net ? SAFETY_NET_MS : net_wait_ms(st, s, &m),
				       HOW_CONT, net);
		if (ret < 0)
			return rd_step_cur_lost(st);
		if (ev.kind == RD_EV_NONE) {
			if (rd_pt_quit)
				return quit_passage(st);
			if (!net && net_due(st, s, &m, &asleep)) {
				/* The safety net: stop the thread to see where it is. */
				net = true;
				rd_pt_interrupt(rd_step_cur(st));
			}
			continue;
		}
		if (ev.kind == RD_EV_EXITED) {
			rd_bp_forget();
			return rd_step_cur_gone(st, &ev);
		}
		if (ev.kind == RD_EV_EXEC)
			return rd_step_cur_exec(st, &ev);
		if (ev.kind == RD_EV_SIGNAL) {
			st->signals++;
			rd_step_print_event(st, "signal", st->cur_tid, "%s during the passage%s",
					    strsignal(ev.sig),
					    st->o.no_signals ? " (not delivered)" : "");
			rd_step_resume_cur(st, HOW_CONT, st->o.no_signals ? 0 : ev.sig);
			handlers += !st->o.no_signals;
			continue;
		}
		bp = rd_step_undo_bp_trap(st->cur_tid, &ev, &regs, false);
		if (bp && !passage_bp(s, bp, other, nother)) {
			/* One of the last tree's: out of the way. */
			rd_bp_remove(bp);
			rd_step_resume_cur(st, HOW_CONT, 0);
			continue;
		}
		if (bp) {
			r = passage_result(s, bp);
			if (!retries || (r != RES_ABORT && r != RES_EXIT))
				break;
			/* In a retry loop every abort and exit is counted on the way, and the
			 * retry runs on at full speed: these breakpoints lie outside the section
			 * and abort nothing. */
			if (r == RES_EXIT || !via_exit)
				count_passage(st, s, r, bp, &m, false, true);
			via_exit = r == RES_EXIT && exit_reaches_abort(st, s, bp);
			ret = step_past(st, bp, &ev);
			if (ret == STEP_GONE)
				return ev.kind == RD_EV_EXITED ? rd_step_cur_gone(st, &ev)
							       : rd_step_cur_lost(st);
			if (ret == STEP_SIGNAL) {
				/* Delivered by the stepping that goes on from here. */
				r = RES_NONE;
				break;
			}
			/* Threads held at these breakpoints may hold what the retry waits for
			 * (a lock): they go on too. */
			rd_step_pass_held(st);
			/* An interrupt of the net still to come is a late one: it resumes. */
			net = false;
			mark(st, &m);
			rd_step_resume_cur(st, HOW_CONT, 0);
			continue;
		}
		if (rd_pt_getregs(st->cur_tid, &regs) < 0)
			return rd_step_cur_lost(st);
		if (ev.kind == RD_EV_TRAP && ev.code == RD_ARCH_BP_CODE) {
			/* The program's own breakpoint instruction. */
			rd_step_resume_cur(st, HOW_CONT, SIGTRAP);
			continue;
		}
		if (net && ev.kind == RD_EV_STOP) {
			uint64_t at = rd_arch_pc(&regs);

			net = false;
			if (at >= s->start && at < s->post_commit) {
				/* Still running the section (slow or switched out): resuming aborts
				 * it and the abort breakpoint takes the thread. */
				net_grow(s);
				rd_step_resume_cur(st, HOW_CONT, 0);
				continue;
			}
			if (passage_bp(s, at, other, nother)) {
				/* In front of one of ours, not yet run: it takes the thread now. */
				net_grow(s);
				rd_step_resume_cur(st, HOW_CONT, 0);
				continue;
			}
			if (handlers) {
				/* In a signal handler (a slow one, or a machine too busy to run
				 * it): the kernel aborted the section before the handler ran, so
				 * its return goes to the abort breakpoint. Once per handler. */
				handlers--;
				net_grow(s);
				rd_step_resume_cur(st, HOW_CONT, 0);
				continue;
			}
			bp = at;
			r = RES_LOST;
			rd_step_print_event(
			    st, "safety-net", st->cur_tid,
			    "no breakpoint hit after %" PRIu64 " ms of the thread's CPU "
			    "time%s; stepping resumes at %#" PRIx64 " %s",
			    s->net_ns / 1000000, asleep ? " (it sleeps in the kernel)" : "", at,
			    rd_step_place(st, at));
			net = true;
			break;
		}
		/* A single-step trap left over, or an interrupt we no longer need. */
		rd_step_resume_cur(st, HOW_CONT, 0);
	}
	/* The breakpoints stay for the next tree, unless another thread waits at one. */
	if (retries || net || rd_step_any_held(st))
		rd_bp_remove_all();
	rd_step_release_held(st);
	if (s->src == SRC_EXCLUSIVE) {
		exclusive_steps(st, s, r, bp);
		return STEP_OK;
	}
	if (r != RES_NONE)
		count_passage(st, s, r, bp, &m, net, retries);
	return STEP_OK;
}

/*
 * Let the thread run through section s between breakpoints at its ways out and at the other
 * successors of the current instruction, and report the passage. A section that did not
 * commit last time, or that the safety net found slow, runs with rseqdbg off its CPU.
 */
enum step_status rd_step_over(struct stepper *st, struct section *s, uint64_t pc,
			      const uint64_t *other, size_t nother)
{
	bool aside;
	enum step_status res;
	int ret;

	if (!s->net_ns)
		s->net_ns = SAFETY_NET_MS * 1000000ull;
	ret = plant_exits(st, s, pc, other, nother, s->retry_loop);
	if (ret == -ESRCH)
		return rd_step_cur_lost(st);
	if (ret)
		return STEP_ERR;
	aside = s->retry_loop || s->failed || s->net_ns > SAFETY_NET_MS * 1000000ull;
	if (aside)
		rd_pin_aside(true);
	res = passage(st, s, other, nother);
	if (aside)
		rd_pin_aside(false);
	return res;
}
