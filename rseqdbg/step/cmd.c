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

static int resolve(struct stepper *st, const char *spec, uint64_t *addr)
{
	unsigned long long v;

	if (rd_parse_u64(spec, &v)) {
		*addr = v;
		return 0;
	}
	for (size_t i = 0; i < st->mods.n; i++) {
		struct rd_module *m = &st->mods.v[i];
		uint64_t a;

		if (m->es && elfscan_resolve(m->es, spec, &a) == 0) {
			*addr = a + m->bias;
			return 0;
		}
	}
	return -ENOENT;
}

/* Run everything at full speed to a breakpoint at addr; the thread that hits it is ours. */
static int run_to(struct stepper *st, uint64_t addr)
{
	struct rd_event ev;
	rd_regs_t r;
	int ret;

	ret = rd_bp_plant(addr);
	if (ret < 0)
		return rd_error("--from: cannot plant a breakpoint at %#" PRIx64 ": %s", addr,
				plant_error(ret));
	for (size_t i = 0; i < st->tr.nt; i++)
		if (st->tr.t[i].state == RD_T_STOPPED && !st->tr.t[i].held)
			rd_pt_cont(&st->tr, &st->tr.t[i], 0);
	for (;;) {
		ret = rd_pt_wait(&st->tr, &ev, 0);
		if (ret < 0)
			return rd_error("waiting for process %d: %s", st->tr.pid, strerror(-ret));
		if (ev.kind == RD_EV_NONE) {
			if (rd_pt_quit)
				return -EINTR;
			continue;
		}
		if (ev.kind == RD_EV_EXITED) {
			if (st->tr.exited)
				return -ESRCH;
			continue;
		}
		if (ev.kind == RD_EV_EXEC) {
			handle_exec(st, &ev);
			if (resolve(st, st->o.from, &addr) == 0)
				rd_bp_plant(addr);
			rd_pt_cont(&st->tr, rd_pt_thread(&st->tr, ev.tid), 0);
			continue;
		}
		if (undo_bp_trap(ev.tid, &ev, &r, false) == addr) {
			rd_bp_remove(addr);
			set_cur(st, rd_pt_thread(&st->tr, ev.tid));
			/* It ran at full speed: objects mapped since (libc, dlopen) are read on the
			 * first step, so an address there is named. */
			st->maps_dirty = true;
			return 0;
		}
		if (ev.kind == RD_EV_FORK) {
			release_child(st, &ev);
			rd_pt_cont(&st->tr, rd_pt_thread(&st->tr, ev.tid), 0);
			continue;
		}
		if (ev.kind == RD_EV_CLONE) {
			rd_pt_cont(&st->tr, rd_pt_thread(&st->tr, ev.tid), 0);
			continue;
		}
		rd_pt_cont(&st->tr, rd_pt_thread(&st->tr, ev.tid),
			   ev.kind == RD_EV_SIGNAL ? ev.sig : 0);
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
	    "  -q, --quiet          print only section events and the summary\n"
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
	    "SYM is a function name as the source spells it, FILE:LINE or an address.\n");
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
				return EXIT_ERROR;
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
		sec_free(&st->secs[i]);
	free(st->secs);
	symcache_clear(st);
	free(st->symcache);
	free(st->code);
	free(st->dcache);
	rd_modules_free(&st->mods);
	rd_decoder_close(st->dec);
	rd_tracee_free(&st->tr);
}

static void print_end(struct stepper *st, bool detach)
{
	int s = st->tr.exit_status;

	if (!st->tr.launched || !st->tr.exited)
		return;
	if (WIFEXITED(s))
		print_event(st, "end", st->tr.pid, "program exited with status %d", WEXITSTATUS(s));
	else if (WIFSIGNALED(s) && !(WTERMSIG(s) == SIGKILL && !detach))
		print_event(st, "end", st->tr.pid, "program killed by signal %d (%s)", WTERMSIG(s),
			    strsignal(WTERMSIG(s)));
}

/* The caches and the decoder. */
static int stepper_init(struct stepper *st)
{
	st->symcache = calloc(SYMCACHE, sizeof(*st->symcache));
	st->code = calloc(CODECACHE, sizeof(*st->code));
	st->dcache = calloc(DCACHE, sizeof(*st->dcache));
	st->last_store = true;
	tree_env_init(st);
	if (!st->symcache || !st->code || !st->dcache || rd_decoder_open(&st->dec) < 0)
		return rd_error("cannot set up the instruction decoder (capstone)");
	return 0;
}

/* --until and --from as addresses. Resolved before running anything so a bad name leaves the
 * program untouched. */
static int resolve_targets(struct stepper *st, uint64_t *from_addr)
{
	const struct section *s;

	if (st->o.until && resolve(st, st->o.until, &st->until_addr) < 0)
		return rd_error("--until: unknown symbol '%s' in process %d (%zu modules searched)",
				st->o.until, st->tr.pid, st->mods.n);
	if (st->o.from && resolve(st, st->o.from, from_addr) < 0)
		return rd_error("--from: unknown symbol '%s' in process %d (%zu modules searched)",
				st->o.from, st->tr.pid, st->mods.n);
	s = st->o.from ? sec_find(st, *from_addr) : NULL;
	if (s)
		rd_warn("--from %s (%#" PRIx64 ") is inside the critical section at %#" PRIx64
			": the stop there aborts it to %#" PRIx64,
			st->o.from, *from_addr, s->start, s->abort);
	return 0;
}

/* --lock-others: stop every thread, and say which of the others stopped inside a section. */
static void lock_others(struct stepper *st, pid_t stepped)
{
	stop_all(st);
	for (size_t i = 0; i < st->tr.nt; i++)
		if (st->tr.t[i].tid != stepped && st->tr.t[i].state == RD_T_STOPPED)
			report_if_inside(st, st->tr.t[i].tid);
}

/* Make the thread to step the current one, stopped: the first thread (a given --tid, else
 * the main thread), or with --from the first thread to reach it. st->end is set when it
 * ends here without an error. */
static int start(struct stepper *st, uint64_t from_addr)
{
	pid_t first = st->o.tid ? st->o.tid : st->tr.pid;
	struct rd_thread *t;
	int ret;

	if (!st->o.tid && !rd_pt_thread(&st->tr, first) && st->tr.nt)
		first = st->tr.t[0].tid; /* the main thread exited, the others run on */
	if (st->o.lock_others || st->o.from == NULL) {
		/* Stop the thread to step now; with --lock-others every thread. */
		stop_thread(st, first, false);
		if (st->o.lock_others)
			lock_others(st, first);
	}
	clock_gettime(CLOCK_MONOTONIC, &st->t0);
	st->in_exec = st->tr.launched && !st->o.from;
	if (!st->o.from) {
		t = rd_pt_thread(&st->tr, first);
		if (!t || t->state != RD_T_STOPPED)
			return rd_error(t && t->state == RD_T_GONE
					    ? "thread %d exited before it stopped"
					    : "thread %d did not stop",
					first);
		set_cur(st, t);
		return 0;
	}
	ret = run_to(st, from_addr);
	if (ret == -EINTR) {
		st->end = "interrupted";
		return 0;
	}
	if (ret == -ESRCH) {
		st->end = "exited";
		return rd_error("--from: the program ended before reaching '%s'", st->o.from);
	}
	if (ret)
		return ret;
	if (st->o.lock_others)
		lock_others(st, st->cur_tid);
	clock_gettime(CLOCK_MONOTONIC, &st->t0);
	return 0;
}

/* Step until the count, an end, an error or a request to quit. */
static int step_loop(struct stepper *st)
{
	st->end = "count";
	while (!st->o.count || st->steps < st->o.count) {
		enum step_status s;

		if (rd_pt_quit) {
			st->end = "interrupted";
			break;
		}
		s = step_once(st);
		if (s == STEP_ERR)
			return EXIT_ERROR;
		if (s == STEP_END)
			break;
	}
	return EXIT_OK;
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
	uint64_t from_addr = 0;
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
		return EXIT_ERROR;
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
	ret = load_modules(&st);
	if (ret < 0)
		rd_warn("reading the modules of process %d: %s (sections only from rseq_cs)",
			st.tr.pid, strerror(-ret));
	if (st.o.tid && !rd_pt_thread(&st.tr, st.o.tid)) {
		ret = rd_error("--tid %d: no such thread in process %d", st.o.tid, st.tr.pid);
		goto out;
	}
	ret = resolve_targets(&st, &from_addr);
	if (ret)
		goto out;
	ret = start(&st, from_addr);
	if (ret)
		goto out;
	ret = st.end ? EXIT_OK : step_loop(&st);
	fflush(stdout);
	print_summary(&st);
out:
	fflush(stdout);
	check_output();
	finish_tracee(&st, st.o.detach);
	print_end(&st, st.o.detach);
	fflush(stdout);
	check_output();
	if (out_errno)
		ret = rd_error(
		    "writing the output: %s: breakpoints removed, %s", strerror(out_errno),
		    st.tr.launched && !st.o.detach ? "program killed" : "program detached");
	else if (got_signal && !rd.json)
		fprintf(stderr, "rseqdbg: step: %s: breakpoints removed, %s\n",
			strsignal(got_signal),
			st.tr.launched && !st.o.detach ? "program killed" : "program detached");
	stepper_free(&st);
	return ret;
}
