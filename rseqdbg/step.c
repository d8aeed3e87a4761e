// SPDX-License-Identifier: GPL-2.0-only
/*
 * rseqdbg step: single-step a thread with ptrace, never stopping inside an rseq critical
 * section. A stop inside an armed section makes the kernel move the thread to the abort
 * handler on resume, so a section is run at full speed between temporary breakpoints at
 * its exits and reported as one passage (stepover.c). Outside sections the thread runs
 * between breakpoints too, at the leaves of a tree of the paths ahead (planner.c, tree.c).
 *
 * This file holds the command: options, setup, the main loop and teardown.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "common.h"
#include "step/breakpoint.h"
#include "step/guard.h"
#include "step/pin.h"
#include "step/stepper.h"

static volatile sig_atomic_t got_signal;

static void on_quit(int sig)
{
	got_signal = sig;
	rd_pt_request_quit();
}

static void on_fatal(int sig)
{
	/* Nothing of ours may stay in the tracee, even if we crash. */
	rd_bp_remove_all();
	rd_pin_release();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void bp_atexit(void)
{
	rd_bp_remove_all();
	rd_pin_release();
}

static void install_handlers(void)
{
	struct sigaction sa = {.sa_handler = on_quit}; /* no SA_RESTART: waits return */
	static const int fatal[] = {SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE};

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		signal(fatal[i], on_fatal);
	atexit(bp_atexit);
}

/*
 * --from: breakpoints at every place it names, looked for again each time the modules
 * change, as a debugger's pending breakpoint: a name of a library is known only once the
 * dynamic loader mapped it (at startup, or at a dlopen). The loader calls its rendezvous
 * function _dl_debug_state() after each change of its list of objects; a breakpoint there
 * says when to read /proc/PID/maps again.
 */
struct from {
	struct places p;     /* each with a breakpoint */
	bool named;	     /* a function name, not a number or FILE:LINE */
	uint64_t rendezvous; /* _dl_debug_state(), 0 when not planted */
	pid_t over;	     /* the thread single-stepped over the rendezvous breakpoint */
};

static bool from_has(const struct from *f, uint64_t addr)
{
	for (size_t i = 0; i < f->p.n; i++)
		if (f->p.v[i].addr == addr)
			return true;
	return false;
}

static void bp_gone(uint64_t addr)
{
	rd_bp_remove(addr);
}

/* Plant a breakpoint at each place --from names now that is not yet one: 0, or -errno
 * (rd_errmsg()). */
static int from_plant(struct stepper *st, struct from *f)
{
	unsigned long long num;
	const struct section *s;
	int first, ret;

	if (rd_parse_u64(st->o.from, &num)) {
		rd_step_places_free(&f->p);
		f->p.v = calloc(1, sizeof(*f->p.v));
		if (!f->p.v) {
			rd_seterr("--from: out of memory");
			return -ENOMEM;
		}
		f->p.v[0].addr = num;
		f->p.n = 1;
		f->p.seen = true;
		first = 0;
	} else {
		first = rd_step_places_update(st, &f->p, bp_gone);
		if (first < 0) {
			rd_seterr("--from: out of memory");
			return first;
		}
	}
	for (size_t i = (size_t)first; i < f->p.n; i++) {
		uint64_t a = f->p.v[i].addr;

		if (rd_bp_planted(a))
			continue;
		ret = rd_bp_plant(a);
		if (ret < 0) {
			rd_seterr("--from: cannot plant a breakpoint at %#" PRIx64 ": %s", a,
				  rd_step_plant_error(ret));
			return ret;
		}
		s = rd_step_sec_find(st, a);
		if (s)
			rd_warn("--from %s (%#" PRIx64
				") is inside the critical section at %#" PRIx64
				": the stop there aborts it to %#" PRIx64,
				st->o.from, a, s->start, s->abort);
	}
	return 0;
}

/* The breakpoint on the dynamic loader's rendezvous function, in the module that has it (the
 * loader, or a static program itself). */
static void plant_rendezvous(struct stepper *st, struct from *f)
{
	f->rendezvous = 0;
	f->over = 0;
	if (!f->named)
		return;
	for (size_t i = 0; i < st->mods.n; i++) {
		const struct rd_module *m = &st->mods.v[i];
		uint64_t a;

		if (m->es && elfscan_resolve(m->es, "_dl_debug_state", &a) == 0 &&
		    rd_bp_plant(a + m->bias) == 0) {
			f->rendezvous = a + m->bias;
			return;
		}
	}
}

/* Forget the places of an address space that went away (exec), and find them in the new one. */
static int from_exec(struct stepper *st, struct from *f, const struct rd_event *ev)
{
	rd_step_handle_exec(st, ev);
	rd_step_places_free(&f->p);
	f->p.spec = st->o.from;
	plant_rendezvous(st, f);
	return from_plant(st, f);
}

/* Let the threads held at the rendezvous run (into it again, when it is planted). */
static void release_waiting(struct stepper *st)
{
	for (size_t i = 0; i < st->tr.nt; i++) {
		struct rd_thread *t = &st->tr.t[i];

		if (t->held && t->state == RD_T_STOPPED)
			rd_pt_cont(&st->tr, t, 0);
		t->held = false;
	}
}

/* The thread stepped over the rendezvous breakpoint stopped: plant it again. */
static void rendezvous_passed(struct stepper *st, struct from *f)
{
	f->over = 0;
	if (f->rendezvous)
		rd_bp_plant(f->rendezvous);
	release_waiting(st);
}

/* Run everything at full speed to a breakpoint of f; the thread that hits it is ours. 0 with
 * it current, or with st->end set when the program exited or we were asked to quit first;
 * -errno (rd_errmsg()) on failure. */
static int run_to(struct stepper *st, struct from *f)
{
	struct rd_event ev;
	struct rd_thread *t;
	uint64_t bp;
	rd_regs_t r;
	int ret;

	for (size_t i = 0; i < st->tr.nt; i++)
		if (st->tr.t[i].state == RD_T_STOPPED && !st->tr.t[i].held)
			rd_pt_cont(&st->tr, &st->tr.t[i], 0);
	for (;;) {
		ret = rd_pt_wait(&st->tr, &ev, 0);
		if (ret < 0) {
			rd_seterr("waiting for process %d: %s", st->tr.pid, strerror(-ret));
			return ret;
		}
		if (ev.kind == RD_EV_NONE) {
			if (rd_pt_quit) {
				st->end = "interrupted";
				return 0;
			}
			continue;
		}
		if (ev.kind == RD_EV_EXITED) {
			if (st->tr.exited) {
				st->end = "exited";
				return 0;
			}
			if (ev.tid == f->over)
				rendezvous_passed(st, f);
			continue;
		}
		if (ev.kind == RD_EV_EXEC) {
			ret = from_exec(st, f, &ev);
			if (ret)
				return ret;
			rd_pt_cont(&st->tr, rd_pt_thread(&st->tr, ev.tid), 0);
			continue;
		}
		t = rd_pt_thread(&st->tr, ev.tid);
		if (!t)
			continue;
		if (ev.tid == f->over) {
			rendezvous_passed(st, f);
			if (ev.kind == RD_EV_TRAP && ev.code != RD_ARCH_BP_CODE) {
				rd_pt_cont(&st->tr, t, 0); /* the step's own trap */
				continue;
			}
		}
		/* With ever: a thread that hit the rendezvous while it was lifted comes back onto
		 * it too. */
		bp = rd_step_undo_bp_trap(ev.tid, &ev, &r, true);
		if (bp && from_has(f, bp)) {
			for (size_t i = 0; i < f->p.n; i++)
				rd_bp_remove(f->p.v[i].addr);
			if (f->rendezvous && !f->over)
				rd_bp_remove(f->rendezvous);
			f->rendezvous = 0;
			release_waiting(st);
			rd_step_set_cur(st, t);
			/* It ran at full speed: objects mapped since (libc, dlopen) are read on the
			 * first step, so an address there is named. */
			st->maps_dirty = true;
			return 0;
		}
		if (bp && bp == f->rendezvous) {
			if (f->over) {
				t->held = true; /* stepped over when the other one is */
				continue;
			}
			/* The loader's list of objects changed: the new ones are named now. */
			rd_step_load_modules(st);
			ret = from_plant(st, f);
			if (ret)
				return ret;
			rd_bp_remove(f->rendezvous);
			if (rd_pt_singlestep(&st->tr, t, 0) == 0)
				f->over = ev.tid;
			else
				rd_bp_plant(f->rendezvous);
			continue;
		}
		if (bp) {
			rd_pt_cont(&st->tr, t, 0);
			continue;
		}
		if (ev.kind == RD_EV_FORK) {
			rd_step_release_child(st, &ev);
			rd_pt_cont(&st->tr, t, 0);
			continue;
		}
		if (ev.kind == RD_EV_CLONE) {
			rd_pt_cont(&st->tr, t, 0);
			continue;
		}
		rd_pt_cont(&st->tr, t, ev.kind == RD_EV_SIGNAL ? ev.sig : 0);
	}
}

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "Usage: rseqdbg step [OPTIONS] -- PROG [ARGS...]\n"
	    "       rseqdbg step [OPTIONS] -p PID [-t TID]\n\n"
	    "Single-step a thread with ptrace, running every rseq critical section at full\n"
	    "speed between breakpoints at its exits and reporting the passage.\n\n"
	    "  -p, --pid PID        attach to a running process (PTRACE_SEIZE)\n"
	    "  -t, --tid TID        the thread to step (default: the process's main thread, or\n"
	    "                       when it has exited another)\n"
	    "  --from SYM|ADDR      run at full speed to SYM, then step the thread that hit it\n"
	    "  --count N            stop after N instructions (a section passage is one)\n"
	    "  --until SYM|ADDR     stop when the thread reaches SYM\n"
	    "  --finish             stop when the current function returns\n"
	    "  -q, --quiet          no line per step: passages, other events and the summary\n"
	    "  -j, --json           JSON lines\n"
	    "  --pretty             JSON lines, indented\n"
	    "  --detach             at the end let the program run on (default: kill it when\n"
	    "                       launched, detach when attached)\n"
	    "  --lock-others        keep the other threads stopped while stepping\n"
	    "  --no-signals         do not deliver signals to the stepped thread\n"
	    "  --single-step        stop after every instruction (default: run straight-line\n"
	    "                       code between breakpoints, counting the same instructions)\n"
	    "  --no-pin             leave the stepped thread's CPU affinity alone (default: hold\n"
	    "                       it and rseqdbg on one CPU while stepping, then restore it)\n"
	    "  -h, --help           this help\n\n"
	    "SYM is a function name as the source spells it (its inlined copies too), FILE:LINE\n"
	    "or an address. A name no module has yet is looked for again as libraries are\n"
	    "loaded; it is an error only if the program ends first.\n");
}

enum {
	OPT_FROM = 256,
	OPT_COUNT,
	OPT_UNTIL,
	OPT_FINISH,
	OPT_DETACH,
	OPT_LOCK,
	OPT_NOSIG,
	OPT_SINGLE,
	OPT_NOPIN,
};

static int parse_opts(struct opts *o, int argc, char **argv)
{
	static const struct option lo[] = {
	    {"pid", required_argument, NULL, 'p'},
	    {"tid", required_argument, NULL, 't'},
	    {"from", required_argument, NULL, OPT_FROM},
	    {"count", required_argument, NULL, OPT_COUNT},
	    {"until", required_argument, NULL, OPT_UNTIL},
	    {"finish", no_argument, NULL, OPT_FINISH},
	    {"quiet", no_argument, NULL, 'q'},
	    {"detach", no_argument, NULL, OPT_DETACH},
	    {"lock-others", no_argument, NULL, OPT_LOCK},
	    {"no-signals", no_argument, NULL, OPT_NOSIG},
	    {"single-step", no_argument, NULL, OPT_SINGLE},
	    {"no-pin", no_argument, NULL, OPT_NOPIN},
	    {0},
	};
	static const struct rd_cmdline cl = {"+p:t:q", lo, usage};
	unsigned long long v;
	int c;

	while ((c = rd_getopt(argc, argv, &cl)) != RD_OPT_END) {
		switch (c) {
		case 'p':
		case 't':
			if (rd_parse_pid(c == 'p' ? "--pid" : "--tid",
					 c == 'p' ? "process" : "thread", optarg,
					 c == 'p' ? &o->pid : &o->tid))
				return rd_error("%s", rd_errmsg());
			break;
		case OPT_FROM:
			o->from = optarg;
			break;
		case OPT_UNTIL:
			o->until = optarg;
			break;
		case OPT_COUNT:
			if (!rd_parse_u64(optarg, &v) || !v)
				return rd_error("--count: '%s' is not a positive number", optarg);
			o->count = v;
			break;
		case OPT_FINISH:
			o->finish = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case OPT_DETACH:
			o->detach = true;
			break;
		case OPT_LOCK:
			o->lock_others = true;
			break;
		case OPT_NOSIG:
			o->no_signals = true;
			break;
		case OPT_SINGLE:
			o->single_step = true;
			break;
		case OPT_NOPIN:
			o->no_pin = true;
			break;
		default:
			return c == RD_OPT_HELP ? -1 : EXIT_ERROR;
		}
	}
	if (optind < argc)
		o->argv = argv + optind;
	if (!o->argv && !o->pid)
		return rd_error("nothing to step: give a program after '--' or --pid PID");
	if (o->argv && o->pid)
		return rd_error("give either a program or --pid, not both");
	if (o->tid && !o->pid)
		return rd_error("--tid needs --pid");
	return 0;
}

static void stepper_free(struct stepper *st)
{
	for (size_t i = 0; i < st->nsecs; i++)
		rd_step_sec_free(&st->secs[i]);
	free(st->secs);
	rd_step_symcache_clear(st);
	free(st->symcache);
	free(st->code);
	free(st->dcache);
	rd_step_places_free(&st->until_places);
	rd_modules_free(&st->mods);
	elfscan_decoder_free(st->dec);
	rd_tracee_free(&st->tr);
}

static void print_end(struct stepper *st, bool detach)
{
	int s = st->tr.exit_status;

	if (!st->tr.launched || !st->tr.exited)
		return;
	if (WIFEXITED(s))
		rd_step_print_event(st, "end", st->tr.pid, "program exited with status %d",
				    WEXITSTATUS(s));
	else if (WIFSIGNALED(s) && !(WTERMSIG(s) == SIGKILL && !detach))
		rd_step_print_event(st, "end", st->tr.pid, "program killed by signal %d (%s)",
				    WTERMSIG(s), strsignal(WTERMSIG(s)));
}

/* The caches and the decoder. */
static int stepper_init(struct stepper *st)
{
	st->symcache = calloc(SYMCACHE, sizeof(*st->symcache));
	st->code = calloc(CODECACHE, sizeof(*st->code));
	st->dcache = calloc(DCACHE, sizeof(*st->dcache));
	st->last_store = true;
	rd_step_tree_env_init(st);
	if (!st->symcache || !st->code || !st->dcache ||
	    elfscan_decoder_new(RD_ARCH_EM, 64, false, &st->dec) < 0) {
		rd_seterr("cannot set up the instruction decoder (capstone)");
		return -ENOMEM;
	}
	return 0;
}

/* --until and --from as addresses. A number or FILE:LINE is resolved before running anything,
 * so a bad one leaves the program untouched; a function name is looked for again as modules
 * are mapped, and is an error only when the program ends without one that has it. 0, or
 * -errno (rd_errmsg()). */
static int resolve_targets(struct stepper *st, struct from *f)
{
	unsigned long long num;
	int err;

	if (st->o.until && rd_parse_u64(st->o.until, &num)) {
		st->until_addr = num;
	} else if (st->o.until) {
		st->until_places.spec = st->o.until;
		rd_step_until_update(st);
		if (!st->until_places.n && rd_step_spec_is_place(st->o.until)) {
			rd_seterr("--until: no code at '%s' in process %d (%zu modules searched)",
				  st->o.until, st->tr.pid, st->mods.n);
			return -ENOENT;
		}
	}
	if (!st->o.from)
		return 0;
	f->named = !rd_step_spec_is_place(st->o.from);
	f->p.spec = st->o.from;
	err = from_plant(st, f);
	if (err)
		return err;
	if (!f->p.n && !f->named) {
		rd_seterr("--from: no code at '%s' in process %d (%zu modules searched)",
			  st->o.from, st->tr.pid, st->mods.n);
		return -ENOENT;
	}
	plant_rendezvous(st, f);
	if (!f->p.n && !st->tr.launched)
		rd_warn(
		    "--from: no function '%s' in the %zu modules of process %d yet: waiting for "
		    "one that has it to be loaded",
		    st->o.from, st->mods.n, st->tr.pid);
	return 0;
}

/* --lock-others: stop every thread, and say which of the others stopped inside a section. */
static void lock_others(struct stepper *st, pid_t stepped)
{
	rd_step_stop_all(st);
	for (size_t i = 0; i < st->tr.nt; i++)
		if (st->tr.t[i].tid != stepped && st->tr.t[i].state == RD_T_STOPPED)
			rd_step_report_if_inside(st, st->tr.t[i].tid);
}

/* Make the thread to step the current one, stopped: the first thread (a given --tid, else
 * the main thread), or with --from the first thread to reach it. st->end is set when it
 * ends here without an error. 0, or -errno (rd_errmsg()). */
static int start(struct stepper *st, struct from *f)
{
	pid_t first = st->o.tid ? st->o.tid : st->tr.pid;
	struct rd_thread *t;
	int ret;

	if (!st->o.tid && !rd_pt_thread(&st->tr, first) && st->tr.nt)
		first = st->tr.t[0].tid; /* the main thread exited, the others run on */
	if (st->o.lock_others || st->o.from == NULL) {
		/* Stop the thread to step now; with --lock-others every thread. */
		rd_step_stop_thread(st, first, false);
		if (st->o.lock_others)
			lock_others(st, first);
	}
	clock_gettime(CLOCK_MONOTONIC, &st->t0);
	st->in_exec = st->tr.launched && !st->o.from;
	if (!st->o.from) {
		t = rd_pt_thread(&st->tr, first);
		if (!t || t->state != RD_T_STOPPED) {
			rd_seterr(t && t->state == RD_T_GONE ? "thread %d exited before it stopped"
							     : "thread %d did not stop",
				  first);
			return -ESRCH;
		}
		rd_step_set_cur(st, t);
		return 0;
	}
	ret = run_to(st, f);
	if (ret)
		return ret;
	if (st->end && !strcmp(st->end, "exited")) {
		if (!f->p.seen)
			rd_seterr("--from: no function '%s' in process %d: the program ended "
				  "without loading a module that has it (%zu modules searched)",
				  st->o.from, st->tr.pid, st->mods.n);
		else
			rd_seterr("--from: the program ended before reaching '%s'", st->o.from);
		return -ESRCH;
	}
	if (st->end)
		return 0; /* interrupted */
	if (st->o.lock_others)
		lock_others(st, st->cur_tid);
	clock_gettime(CLOCK_MONOTONIC, &st->t0);
	return 0;
}

/* Step until the count, an end, an error (STEP_ERR, rd_errmsg() says why) or a request to
 * quit. */
static enum step_status step_loop(struct stepper *st)
{
	st->end = "count";
	while (!st->o.count || st->steps < st->o.count) {
		enum step_status s;

		if (rd_pt_quit) {
			st->end = "interrupted";
			break;
		}
		s = rd_step_once(st);
		if (s == STEP_ERR)
			return STEP_ERR;
		if (s == STEP_END)
			break;
	}
	return STEP_END;
}

/* The bytes of the file mapped at addr, as loaded (see rd_bp_file_bytes). */
static bool file_bytes(void *ctx, uint64_t addr, uint8_t *buf)
{
	struct stepper *st = ctx;
	const struct rd_module *m = rd_modules_find(&st->mods, addr);

	return m && m->es && !m->image &&
	       elfscan_read(m->es, addr - m->bias, buf, RD_ARCH_BP_LEN) == 0;
}

int cmd_step(int argc, char **argv)
{
	struct stepper st = {0};
	struct from from = {0};
	bool until_missing = false;
	int ret;

	rd_tracee_init(&st.tr);
	ret = parse_opts(&st.o, argc, argv);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	ret = rd_guard_fork(on_quit);
	if (ret >= 0)
		return ret;
	if (stepper_init(&st) < 0) {
		stepper_free(&st);
		return rd_error("%s", rd_errmsg());
	}
	install_handlers();
	if (st.o.argv)
		ret = rd_pt_launch(&st.tr, st.o.argv);
	else
		ret = rd_pt_attach(&st.tr, st.o.pid);
	if (ret < 0) {
		stepper_free(&st);
		return rd_error("%s", rd_errmsg());
	}
	rd_bp_attach(st.tr.pid, st.tr.memfd);
	rd_bp_file_bytes(file_bytes, &st);
	ret = rd_step_load_modules(&st);
	if (ret < 0)
		rd_warn("reading the modules of process %d: %s (sections only from rseq_cs)",
			st.tr.pid, strerror(-ret));
	if (st.o.tid && !rd_pt_thread(&st.tr, st.o.tid)) {
		ret = rd_error("--tid %d: no such thread in process %d", st.o.tid, st.tr.pid);
		goto out;
	}
	if (resolve_targets(&st, &from) || start(&st, &from)) {
		ret = rd_error("%s", rd_errmsg());
		goto out;
	}
	ret = !st.end && step_loop(&st) == STEP_ERR ? rd_error("%s", rd_errmsg()) : EXIT_OK;
	fflush(stdout);
	rd_step_print_summary(&st);
	if (rd_bp_blind())
		rd_warn("%lu breakpoint%s sat on another tool's uprobe with no hardware breakpoint "
			"left: the kernel took their traps for the uprobe's, and the passages "
			"through them were not seen",
			rd_bp_blind(), rd_bp_blind() == 1 ? "" : "s");
	until_missing = !ret && st.until_places.spec && !rd_step_spec_is_place(st.o.until) &&
			!st.until_places.seen && !strcmp(st.end, "exited");
out:
	fflush(stdout);
	rd_step_check_output();
	rd_step_finish_tracee(&st, st.o.detach);
	print_end(&st, st.o.detach);
	fflush(stdout);
	rd_step_check_output();
	if (until_missing && !rd_step_out_errno)
		ret = rd_error("--until: no function '%s' in process %d: the program ended without "
			       "loading a module that has it (%zu modules searched)",
			       st.o.until, st.tr.pid, st.mods.n);
	if (rd_step_out_errno)
		ret = rd_error(
		    "writing the output: %s: breakpoints removed, %s", strerror(rd_step_out_errno),
		    st.tr.launched && !st.o.detach ? "program killed" : "program detached");
	else if (got_signal && !rd.json)
		fprintf(stderr, "rseqdbg: step: %s: breakpoints removed, %s\n",
			strsignal(got_signal),
			st.tr.launched && !st.o.detach ? "program killed" : "program detached");
	rd_step_places_free(&from.p);
	stepper_free(&st);
	return ret;
}
