// SPDX-License-Identifier: GPL-2.0-only
/*
 * The ptrace loop of rseqdbg step: one step of the current thread (single-stepped, or run
 * between breakpoints through a planned tree or a critical section), the events of the other
 * threads while it runs, and stopping every thread at the end.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "step/breakpoint.h"
#include "step/pin.h"
#include "step/stepper.h"

void rd_step_set_cur(struct stepper *st, struct rd_thread *t)
{
	st->cur = t;
	st->cur_tid = t->tid;
	st->regs_valid = false;
	st->have_rcfg = rd_rseq_config(t->tid, &st->rcfg) == 0;
	rd_bp_thread(t->tid);
	if (!st->o.no_pin)
		rd_pin_hold(st->tr.pid, t->tid);
}

/* Re-find cur after the thread array grew (pointers move). */
struct rd_thread *rd_step_cur(struct stepper *st)
{
	st->cur = rd_pt_thread(&st->tr, st->cur_tid);
	return st->cur;
}

void rd_step_report_if_inside(struct stepper *st, pid_t tid)
{
	rd_regs_t r;
	struct section *s;

	if (rd_pt_getregs(tid, &r) < 0)
		return;
	s = rd_step_sec_find(st, rd_arch_pc(&r));
	if (s)
		rd_step_print_inside(st, tid, rd_arch_pc(&r), s);
}

/* A forked child inherited our breakpoints: restore its bytes, report it, let it go. */
void rd_step_release_child(struct stepper *st, const struct rd_event *ev)
{
	pid_t child = (pid_t)ev->msg;

	if (rd_pt_child_stopped(child) == 0) {
		/* After vfork the child shares our tracee's memory: leave it untouched. */
		if (!ev->code && rd_bp_count())
			rd_bp_restore_in(child);
		rd_pin_child(ev->tid, child);
		rd_pt_child_detach(child);
	}
	rd_step_print_event(st, "fork", ev->tid, "%s child %d (not followed, runs on its own)",
			    ev->code ? "vfork" : "fork", child);
}

void rd_step_handle_exec(struct stepper *st, const struct rd_event *ev)
{
	rd_bp_forget();
	rd_bp_attach(st->tr.pid, st->tr.memfd);
	rd_pin_renamed((pid_t)ev->msg, ev->tid);
	st->nseen = 0;
	rd_step_load_modules(st);
	st->in_exec = true;
	rd_step_print_event(st, "exec", ev->tid,
			    "the program called exec (thread %lu); new image %s", ev->msg,
			    st->mods.n ? st->mods.v[0].path : "?");
}

/*
 * If ev is the trap of one of our breakpoints (planted now; with ever, also one removed since,
 * whose trap came late), move thread tid back onto the instruction the breakpoint replaced
 * and return the breakpoint's address; r then holds tid's registers. 0 for any other stop.
 * A hardware breakpoint's trap has the pc on it already.
 */
uint64_t rd_step_undo_bp_trap(pid_t tid, const struct rd_event *ev, rd_regs_t *r, bool ever)
{
	uint64_t bp;

	if (ev->kind != RD_EV_TRAP || (ev->code != RD_ARCH_BP_CODE && ev->code != TRAP_HWBKPT) ||
	    rd_pt_getregs(tid, r) < 0)
		return 0;
	if (ev->code == TRAP_HWBKPT)
		return rd_bp_hw_at(rd_arch_pc(r), ever) ? rd_arch_pc(r) : 0;
	bp = rd_arch_bp_addr(rd_arch_pc(r));
	if (ever ? !rd_bp_was_planted(bp) : !rd_bp_planted(bp))
		return 0;
	rd_arch_set_pc(r, bp);
	rd_pt_setregs(tid, r);
	return bp;
}

/* An event of a thread other than the stepped one. */
static void handle_other(struct stepper *st, const struct rd_event *ev)
{
	struct rd_thread *t = rd_pt_thread(&st->tr, ev->tid);
	uint64_t bp;
	rd_regs_t r;

	if (!t || t->state != RD_T_STOPPED)
		return;
	switch (ev->kind) {
	case RD_EV_TRAP:
		bp = rd_step_undo_bp_trap(t->tid, ev, &r, true);
		if (bp) {
			if (rd_bp_planted(bp)) {
				t->held = true; /* resumed when the step-over removes them */
				return;
			}
			if (!st->o.lock_others)
				rd_pt_cont(&st->tr, t, 0);
			return;
		}
		if (!st->o.lock_others)
			rd_pt_cont(&st->tr, t, ev->code == RD_ARCH_BP_CODE ? SIGTRAP : 0);
		else if (ev->code == RD_ARCH_BP_CODE)
			t->pending_sig = SIGTRAP;
		return;
	case RD_EV_SIGNAL:
		if (st->o.lock_others)
			t->pending_sig = ev->sig;
		else
			rd_pt_cont(&st->tr, t, ev->sig);
		return;
	case RD_EV_CLONE:
		rd_pin_child(ev->tid, (pid_t)ev->msg);
		rd_step_print_event(st, "thread", (pid_t)ev->msg, "new thread (created by %d)",
				    ev->tid);
		break;
	case RD_EV_FORK:
		rd_step_release_child(st, ev);
		break;
	case RD_EV_STOP:
		if (st->o.lock_others)
			return;
		break;
	default:
		break;
	}
	t = rd_pt_thread(&st->tr, ev->tid);
	if (t && !st->o.lock_others)
		rd_pt_cont(&st->tr, t, 0);
}

bool rd_step_any_held(const struct stepper *st)
{
	for (size_t i = 0; i < st->tr.nt; i++)
		if (st->tr.t[i].held)
			return true;
	return false;
}

void rd_step_release_held(struct stepper *st)
{
	for (size_t i = 0; i < st->tr.nt; i++) {
		struct rd_thread *t = &st->tr.t[i];

		if (!t->held)
			continue;
		t->held = false;
		if (!st->o.lock_others && t->state == RD_T_STOPPED)
			rd_pt_cont(&st->tr, t, 0);
	}
}

/* Take one held thread past the breakpoint it waits at (the stepped thread is stopped, so
 * lifting the breakpoint for one step hides nothing from it), then let it go. */
static void pass_one(struct stepper *st, pid_t tid)
{
	struct rd_thread *t = rd_pt_thread(&st->tr, tid);
	struct rd_event ev;
	rd_regs_t r;
	uint64_t bp;

	if (!t || rd_pt_getregs(tid, &r) < 0)
		return;
	bp = rd_arch_pc(&r);
	if (rd_bp_planted(bp))
		rd_bp_remove(bp);
	else
		bp = 0;
	if (rd_pt_singlestep(&st->tr, t, 0) == 0) {
		for (;;) {
			if (rd_pt_wait(&st->tr, &ev, 0) < 0 || ev.kind == RD_EV_NONE)
				break;
			if (ev.tid != tid) {
				handle_other(st, &ev);
				continue;
			}
			if (ev.kind == RD_EV_SIGNAL)
				rd_pt_thread(&st->tr, tid)->pending_sig = ev.sig;
			break;
		}
	}
	if (bp)
		rd_bp_plant(bp);
	t = rd_pt_thread(&st->tr, tid);
	if (t && t->state == RD_T_STOPPED && !st->o.lock_others) {
		rd_pt_cont(&st->tr, t, t->pending_sig);
		t->pending_sig = 0;
	}
}

void rd_step_pass_held(struct stepper *st)
{
	for (size_t i = 0; i < st->tr.nt; i++) {
		if (!st->tr.t[i].held)
			continue;
		st->tr.t[i].held = false;
		pass_one(st, st->tr.t[i].tid);
	}
}

int rd_step_resume_cur(struct stepper *st, enum how how, int sig)
{
	struct rd_thread *t = rd_step_cur(st);

	return how == HOW_STEP ? rd_pt_singlestep(&st->tr, t, sig) : rd_pt_cont(&st->tr, t, sig);
}

/* Milliseconds left until deadline (a rd_step_now_ns() time), at least 1: 0 would wait for ever. */
static unsigned int ms_until(uint64_t deadline)
{
	uint64_t now = rd_step_now_ns();

	return now >= deadline ? 1 : (unsigned int)((deadline - now + 999999) / 1000000);
}

/*
 * Wait for the stepped thread to stop with something for the caller: a trap, a signal, an
 * exec, its end (RD_EV_EXITED), or RD_EV_NONE on timeout or a quit request. Events of other
 * threads and clone/fork events of this one are handled here.
 */
int rd_step_wait_cur(struct stepper *st, struct rd_event *ev, unsigned int timeout_ms, enum how how,
		     bool want_stop)
{
	/* The bound holds from the call: events handled on the way do not extend it. */
	uint64_t deadline = timeout_ms ? rd_step_now_ns() + timeout_ms * 1000000ull : 0;
	int ret;

	for (;;) {
		ret = rd_pt_wait(&st->tr, ev, deadline ? ms_until(deadline) : 0);
		if (ret < 0)
			return ret;
		if (ev->kind == RD_EV_NONE)
			return 0;
		if (ev->tid != st->cur_tid) {
			if (ev->kind == RD_EV_EXEC) /* another thread exec'd: it is ours now */
				return 0;
			handle_other(st, ev);
			continue;
		}
		switch (ev->kind) {
		case RD_EV_CLONE:
			rd_pin_child(ev->tid, (pid_t)ev->msg);
			rd_step_print_event(st, "thread", (pid_t)ev->msg,
					    "new thread (created by %d)", ev->tid);
			rd_step_resume_cur(st, how, 0);
			continue;
		case RD_EV_FORK:
			rd_step_release_child(st, ev);
			rd_step_resume_cur(st, how, 0);
			continue;
		case RD_EV_STOP:
			if (want_stop)
				return 0;
			/* A late interrupt or a group-stop: keep going. */
			rd_step_resume_cur(st, how, 0);
			continue;
		default:
			return 0;
		}
	}
}

/* A thread exec'd: the one that did is stepped on in the new image. */
enum step_status rd_step_cur_exec(struct stepper *st, const struct rd_event *ev)
{
	if (ev->tid != st->cur_tid)
		rd_step_set_cur(st, rd_pt_thread(&st->tr, ev->tid));
	rd_step_handle_exec(st, ev);
	return STEP_OK;
}

/* The stepped thread cannot be resumed or waited for: it is gone. */
enum step_status rd_step_cur_lost(struct stepper *st)
{
	rd_bp_remove_all();
	rd_step_release_held(st);
	st->end = "exited";
	return STEP_END;
}

/* Asked to quit: wait at most a second for the stop the thread is about to make, which a
 * pending quit request would not let rd_step_wait_cur see. */
int rd_step_wait_quitting(struct stepper *st, struct rd_event *ev, enum how how)
{
	int ret;

	rd_pt_quit = 0;
	ret = rd_step_wait_cur(st, ev, 1000, how, true);
	rd_pt_quit = 1;
	return ret;
}

enum step_status rd_step_cur_gone(struct stepper *st, const struct rd_event *ev)
{
	int s = ev->status;

	if (WIFEXITED(s))
		rd_step_print_event(st, "exit", ev->tid, "thread exited with status %d",
				    WEXITSTATUS(s));
	else if (WIFSIGNALED(s))
		rd_step_print_event(st, "exit", ev->tid, "thread killed by signal %d (%s)",
				    WTERMSIG(s), strsignal(WTERMSIG(s)));
	st->end = "exited";
	return STEP_END;
}

/*
 * A thread stopped by an interrupt right after it ran one of our breakpoints: the trap is
 * still queued and reported on the next resume. Left queued, it would reach the program as
 * a SIGTRAP after the detach.
 */
bool rd_step_trap_queued(const rd_regs_t *r)
{
	return rd_bp_was_planted(rd_arch_bp_addr(rd_arch_pc(r)));
}

/* Why a breakpoint could not be planted: /proc/PID/mem answers EIO for an address no mapping
 * covers, which strerror would call an input/output error. */
const char *rd_step_plant_error(int err)
{
	return err == -EIO || err == -EFAULT ? "no mapping there" : strerror(-err);
}

/* A step from the exec stop reports the end of the system call, not an instruction. */
static enum step_status leave_exec(struct stepper *st)
{
	struct rd_event ev;

	st->in_exec = false;
	if (rd_pt_singlestep(&st->tr, rd_step_cur(st), 0) < 0 ||
	    rd_step_wait_cur(st, &ev, 0, HOW_STEP, false) < 0) {
		st->end = "exited";
		return STEP_END;
	}
	if (ev.kind == RD_EV_EXITED)
		return rd_step_cur_gone(st, &ev);
	if (ev.kind == RD_EV_SIGNAL)
		st->cur_sig = st->o.no_signals ? 0 : ev.sig;
	return STEP_OK;
}

/* The instruction at pc. Code outside every module may be generated and rewritten: never
 * cached. */
static void decode_at(struct stepper *st, uint64_t pc, bool known, struct elfscan_insn *in)
{
	uint8_t buf[RD_ARCH_INSN_MAX];
	ssize_t got;
	size_t n;

	if (known) {
		*in = *rd_step_insn_at(st, pc);
		return;
	}
	got = pread(st->tr.memfd, buf, sizeof(buf), (off_t)pc);
	n = got > 0 ? (size_t)got : 0;
	rd_bp_unpatch(pc, buf, n);
	elfscan_decode_one(st->dec, buf, n, pc, in);
}

/* Whether in may arm a section: a store to rseq_cs, or one whose address is unknown. A
 * descriptor it stores is learned, and is *desc (0 when not known). */
static bool arms_section(struct stepper *st, const struct elfscan_insn *in, const rd_regs_t *regs,
			 uint64_t *desc)
{
	uint64_t ea, val;

	*desc = 0;
	if (!in->store || !st->have_rcfg || !st->rcfg.abi_ptr)
		return false;
	if (!rd_store_eval(&st->tr, in, regs, &ea, &val))
		return true;
	if (ea != st->rcfg.abi_ptr + 8)
		return false;
	if (val)
		rd_step_learn_desc(st, val);
	*desc = val;
	return true;
}

/* in enters section s: it runs at the start of the passage. */
static enum step_status enter_section(struct stepper *st, struct section *s,
				      const struct elfscan_insn *in, const uint64_t *succ,
				      size_t nsucc)
{
	uint64_t other[4];
	size_t no = 0;

	/* A breakpoint on the instruction itself would trap before it runs. */
	for (size_t i = 0; i < nsucc; i++)
		if ((succ[i] < s->start || succ[i] >= s->post_commit) && succ[i] != in->addr)
			other[no++] = succ[i];
	rd_step_print_step(st, in);
	st->steps++;
	return rd_step_over(st, s, in->addr, other, no);
}

/* Single-step in (registers regs) and account for it. */
static enum step_status single_step(struct stepper *st, const struct elfscan_insn *in,
				    const rd_regs_t *regs)
{
	bool maps = in->flow == ELFSCAN_FLOW_SYSCALL && rd_arch_maps_memory(regs);
	struct rd_event ev;
	int sig;

	st->last_store = in->store;
	sig = st->cur_sig;
	st->cur_sig = 0;
	if (!sig)
		rd_step_print_step(st, in);
	rd_bp_remove_all(); /* the last tree's: the step may stop in front of one */
	/* After a step over an svc (arm64), this one would trap before the instruction ran and
	 * count it twice. */
	if (rd_step_cur(st)->last_step && !rd_arch_step_armed(regs))
		rd_pt_setregs(st->cur_tid, regs);
	if (rd_pt_singlestep(&st->tr, rd_step_cur(st), sig) < 0 ||
	    rd_step_wait_cur(st, &ev, 0, HOW_STEP, false) < 0) {
		st->end = "exited";
		return STEP_END;
	}
	switch (ev.kind) {
	case RD_EV_NONE:
		/* Asked to quit: the thread stops after this step anyway. */
		rd_step_wait_quitting(st, &ev, HOW_STEP);
		if (ev.kind == RD_EV_EXITED)
			return rd_step_cur_gone(st, &ev);
		if (ev.kind == RD_EV_SIGNAL && !st->o.no_signals)
			rd_step_cur(st)->pending_sig = ev.sig;
		st->steps += ev.kind == RD_EV_TRAP;
		st->end = "interrupted";
		return STEP_END;
	case RD_EV_EXITED:
		return rd_step_cur_gone(st, &ev);
	case RD_EV_EXEC:
		st->steps++;
		return rd_step_cur_exec(st, &ev);
	case RD_EV_SIGNAL:
		/* Delivered with the next step, which then stops in the handler. */
		st->signals++;
		rd_step_print_event(st, "signal", st->cur_tid, "%s%s", strsignal(ev.sig),
				    st->o.no_signals ? " (not delivered)" : "");
		st->cur_sig = st->o.no_signals ? 0 : ev.sig;
		return STEP_OK;
	case RD_EV_TRAP:
		if (!sig)
			st->steps++;
		break;
	default:
		break;
	}
	if (maps)
		st->maps_dirty = true;
	if (st->o.finish && !sig) {
		if (in->flow == ELFSCAN_FLOW_CALL) {
			st->depth++;
		} else if (in->flow == ELFSCAN_FLOW_RET) {
			if (st->depth-- == 0) {
				st->end = "finish";
				return STEP_END;
			}
		}
	}
	return STEP_OK;
}

/* Whether a thread other than the stepped one runs: it may write what the stepped one reads. */
static bool others_run(const struct stepper *st)
{
	for (size_t i = 0; i < st->tr.nt; i++)
		if (st->tr.t[i].tid != st->cur_tid && st->tr.t[i].state == RD_T_RUNNING)
			return true;
	return false;
}

/* One instruction of the current thread, or a run of them between breakpoints: through a
 * section met on the way, or along a planned tree of straight-line code. */
enum step_status rd_step_once(struct stepper *st)
{
	uint64_t succ[4], pc, armed = 0, left;
	struct section *s = NULL;
	struct elfscan_insn in;
	bool unknown, known, arms, restarts, racy, tree;
	size_t nsucc;
	rd_regs_t regs;

	if (st->in_exec && leave_exec(st) != STEP_OK)
		return STEP_END;
	if (st->regs_valid)
		regs = st->regs;
	else if (rd_pt_getregs(st->cur_tid, &regs) < 0) {
		st->end = "exited";
		return STEP_END;
	}
	st->regs_valid = false;
	pc = rd_arch_pc(&regs);
	if (st->until_addr && pc == st->until_addr) {
		st->end = "until";
		return STEP_END;
	}
	known = rd_modules_find(&st->mods, pc) != NULL;
	if (st->maps_dirty || (!known && !rd_step_page_checked(st, pc)))
		rd_step_load_modules(st);
	/* Sections the tables do not know are armed by a store to rseq_cs: look at it after
	 * each store and in code outside every module. */
	if (st->last_store || !known)
		rd_step_check_rseq_cs(st);
	decode_at(st, pc, known, &in);

	s = rd_step_sec_find(st, pc);
	if (s) {
		/* Stopped inside (attach, a signal, a breakpoint of the user): resuming aborts. */
		rd_step_print_inside(st, st->cur_tid, pc, s);
		return rd_step_over(st, s, pc, NULL, 0);
	}
	nsucc = rd_successors(&st->tr, &in, &regs, succ, 4, &unknown);
	arms = arms_section(st, &in, &regs, &armed);
	/* A thread that restarts a blocking system call must not run into the tree: blocked
	 * there, it would keep the threads held at its breakpoints, perhaps the very ones it
	 * waits for. */
	restarts = rd_arch_syscall_restarts(&regs);
	/* A branch through memory goes where the word says when it runs, not when we read it:
	 * a running thread may rewrite it in between (lazy binding fills a GOT entry), and the
	 * thread would leave the tree unseen. Then it is single-stepped. */
	racy = in.ind_mem && others_run(st);
	tree = known && !unknown && !st->cur_sig && !st->o.single_step && !restarts && !racy &&
	       ((in.run & ELFSCAN_RUN_PLAIN) ||
		(in.flow != ELFSCAN_FLOW_NEXT && in.flow != ELFSCAN_FLOW_SYSCALL)) &&
	       !(st->o.finish && in.flow == ELFSCAN_FLOW_RET && st->depth == 0);
	left = st->o.count ? st->o.count - st->steps : UINT64_MAX;
	for (size_t i = 0; i < nsucc && !s; i++)
		s = rd_step_sec_find(st, succ[i]);
	if (s) {
		/* Into a section that runs inside a tree (the planner says whether it may),
		 * armed with its own descriptor if this arms one: its passage and the way on
		 * after it take one stop. */
		if (tree && (!arms || armed == s->desc) &&
		    rd_step_tree_plan(st, &in, &regs, succ, nsucc, left) && rd_step_tree_plant(st))
			return rd_step_tree_run(st, &in);
		return enter_section(st, s, &in, succ, nsucc);
	}
	/* A load-exclusive with no signal to deliver first: the sequence it opens runs whole. */
	if ((in.run & ELFSCAN_RUN_EXCL_LOAD) && !st->cur_sig) {
		bool done;
		enum step_status r = rd_step_exclusive(st, &in, &done);

		if (done)
			return r;
	}
	if (tree && !arms && rd_step_tree_plan(st, &in, &regs, succ, nsucc, left) &&
	    rd_step_tree_plant(st))
		return rd_step_tree_run(st, &in);
	/* An instruction whose single-step trap may come one instruction late, or never (a
	 * uprobe's, on some architectures): run it to breakpoints at its successors instead. */
	if (((in.run & ELFSCAN_RUN_LATE_TRAP) || (!RD_ARCH_STEPS_UPROBES && rd_bp_probed(pc))) &&
	    !unknown && !st->cur_sig && !restarts &&
	    rd_step_tree_plan(st, &in, &regs, succ, nsucc, 1) && rd_step_tree_plant(st))
		return rd_step_tree_run(st, &in);
	return single_step(st, &in, &regs);
}

/* Stop one running thread and wait until it is stopped. Events of other threads are handled
 * as usual, or when tearing down, left as they stopped. */
void rd_step_stop_thread(struct stepper *st, pid_t tid, bool teardown)
{
	struct rd_thread *t = rd_pt_thread(&st->tr, tid);
	struct rd_event ev;
	rd_regs_t r;

	if (!t || t->state != RD_T_RUNNING || rd_pt_interrupt(t) < 0)
		return;
	for (;;) {
		int saved = rd_pt_quit;

		rd_pt_quit = 0;
		if (rd_pt_wait(&st->tr, &ev, 2000) < 0 || ev.kind == RD_EV_NONE) {
			rd_pt_quit = saved;
			return;
		}
		rd_pt_quit = saved;
		if (ev.tid != tid && !teardown) {
			handle_other(st, &ev);
			continue;
		}
		if (ev.tid != tid) {
			struct rd_thread *o = rd_pt_thread(&st->tr, ev.tid);

			/* While tearing down, others stay as they stopped. */
			if (o && o->state == RD_T_STOPPED && ev.kind == RD_EV_SIGNAL)
				o->pending_sig = ev.sig;
			if (o && o->state == RD_T_STOPPED)
				rd_step_undo_bp_trap(o->tid, &ev, &r, true);
			if (ev.kind == RD_EV_CLONE)
				rd_pin_child(ev.tid, (pid_t)ev.msg);
			if (ev.kind == RD_EV_FORK)
				rd_step_release_child(st, &ev);
			continue;
		}
		t = rd_pt_thread(&st->tr, tid);
		if (ev.kind == RD_EV_EXITED)
			return;
		if (ev.kind == RD_EV_STOP && rd_pt_getregs(tid, &r) == 0 &&
		    rd_step_trap_queued(&r)) {
			rd_pt_cont(&st->tr, t, 0); /* take the trap now: handled below */
			continue;
		}
		if (ev.kind == RD_EV_SIGNAL)
			t->pending_sig = ev.sig;
		rd_step_undo_bp_trap(tid, &ev, &r, true);
		if (ev.kind == RD_EV_FORK)
			rd_step_release_child(st, &ev);
		if (ev.kind == RD_EV_CLONE)
			rd_pin_child(ev.tid, (pid_t)ev.msg);
		if (ev.kind == RD_EV_CLONE || ev.kind == RD_EV_FORK) {
			rd_pt_cont(&st->tr, t, 0);
			rd_pt_interrupt(t);
			continue;
		}
		return;
	}
}

void rd_step_stop_all(struct stepper *st)
{
	/* New threads may appear while we stop the others: loop until none runs. */
	for (int pass = 0; pass < 8; pass++) {
		bool running = false;

		for (size_t i = 0; i < st->tr.nt; i++) {
			if (st->tr.t[i].state == RD_T_RUNNING) {
				running = true;
				rd_step_stop_thread(st, st->tr.t[i].tid, true);
			}
		}
		if (!running)
			break;
	}
}

/* Every exit path: restore every byte, then kill (launched) or let the program go. */
void rd_step_finish_tracee(struct stepper *st, bool detach)
{
	rd_bp_remove_all();
	rd_pin_release();
	if (st->tr.exited && !st->tr.launched)
		return;
	if (st->tr.launched && !detach) {
		rd_pt_kill(&st->tr);
		return;
	}
	rd_step_stop_all(st);
	rd_bp_remove_all();
	/* A signal of the stepped thread not yet delivered goes with the detach. */
	if (st->cur_sig && rd_step_cur(st) && !rd_step_cur(st)->pending_sig)
		rd_step_cur(st)->pending_sig = st->cur_sig;
	st->cur_sig = 0;
	for (size_t i = 0; i < st->tr.nt; i++)
		if (st->tr.t[i].state == RD_T_STOPPED)
			rd_pt_detach(&st->tr, &st->tr.t[i]);
	if (st->tr.launched && !st->tr.exited) {
		int status;

		/* Our child: let it run to completion and say how it ended. Threads that
		 * died while traced are reaped here too, or the leader never could be. */
		for (;;) {
			pid_t p = waitpid(-1, &status, __WALL);

			if (p < 0 && errno == EINTR)
				continue;
			if (p < 0)
				break;
			if (p == st->tr.pid && (WIFEXITED(status) || WIFSIGNALED(status))) {
				st->tr.exited = true;
				st->tr.exit_status = status;
				break;
			}
		}
	}
}
