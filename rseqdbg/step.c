// SPDX-License-Identifier: GPL-2.0-only
/*
 * rseqdbg step: single-step a thread with ptrace, never stopping inside an rseq critical
 * section. A stop inside an armed section makes the kernel move the thread to the abort
 * handler on resume, so a section is run at full speed between temporary breakpoints at
 * its exits and reported as one passage.
 *
 * Outside sections the thread runs between breakpoints too: from the current instruction the
 * stepper decodes the paths ahead (through fall-throughs, direct jumps and calls, both ways
 * of conditional branches) as a tree in which each address appears once, plants breakpoints
 * at the tree's leaves and lets the thread run. Where it stops names the one path it took,
 * so the instructions it ran are known and counted exactly. A leaf is anything that must be
 * looked at with the thread stopped in front of it: a return or indirect branch, a system
 * call, an instruction that may enter a section or arm one, the end of --count. No
 * breakpoint goes inside an instruction of the tree (a branch into the middle of one, as
 * in "je 1f; lock; 1: cmpxchg"): where two paths disagree on instruction boundaries, the
 * branch where they part is a leaf.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "breakpoint.h"
#include "common.h"
#include "guard.h"
#include "pin.h"
#include "procmaps.h"
#include "ptrace.h"
#include "rseqarea.h"
#include "arch/arch.h"
#include "symfmt.h"

/* A passage that hits none of its breakpoints within this bound is interrupted. */
#define SAFETY_NET_MS 200
#define MAX_EXITS 32
#define DCACHE 4096    /* decoded instructions of module code, by address */
#define PLAN_NODES 192 /* instructions in one run's tree */
#define PLAN_LEAVES 24 /* breakpoints of one run */
#define PLAN_HASH 512  /* well above PLAN_NODES: short probes */
#define SYMCACHE 4096
#define CODECACHE 32 /* pages of code kept: one pread per page, not per step */
#define KEEP_BPS 64  /* breakpoints left planted between trees, at most */

enum sec_source {
	SRC_TABLE,   /* a descriptor table of a mapped module */
	SRC_RSEQ_CS, /* the descriptor a thread's rseq_cs pointed to */
};

struct section {
	uint64_t start, post_commit, abort, desc;
	enum sec_source src;
	char *func, *file;
	int line;
	uint64_t exits[MAX_EXITS]; /* exit points of the table, then branch targets outside */
	size_t nexits;
	bool exits_known;
};

enum result {
	RES_COMMIT,
	RES_ABORT,
	RES_EXIT,
	RES_LOST, /* left by a way no breakpoint covered: found by the safety net */
	RES_NONE, /* the section was not entered after all */
};

static const char *const res_name[] = { "commit", "abort", "exit", "lost", "none" };

struct opts {
	pid_t pid, tid;
	const char *from, *until;
	uint64_t count;
	bool finish, quiet, detach, lock_others, no_signals, single_step, no_pin;
	char **argv;
};

/* One instruction of a run's tree. */
struct pnode {
	uint64_t addr;
	uint32_t depth; /* instructions run before it on the way from the root */
	uint32_t wregs; /* registers written on that way */
	int parent;
	uint8_t size; /* of its instruction; 0 while not decoded */
	bool leaf;    /* a breakpoint: the thread stops in front of it */
	bool dead;    /* cut off with a branch made a leaf: not part of the tree */
};

struct plan {
	struct pnode n[PLAN_NODES];
	int nn, nleaves;
	int16_t hash[PLAN_HASH]; /* node index + 1 by address */
};

struct dcache_ent {
	uint64_t addr;
	struct rd_insn in;
};

struct symline {
	uint64_t pc;
	char *text; /* "module+0x12 func+0x4 (file.S:42)" */
};

struct stepper {
	struct opts o;
	struct rd_tracee tr;
	struct rd_modules mods;
	struct rd_decoder *dec;
	struct section *secs;
	size_t nsecs, capsecs;
	uint64_t seen_desc[256]; /* rseq_cs values already looked at */
	size_t nseen;
	struct rd_thread *cur;
	pid_t cur_tid;
	struct rd_rseq_config rcfg;
	bool have_rcfg;
	int cur_sig; /* to deliver on the next resume of cur */
	uint64_t until_addr;
	int depth; /* --finish: calls minus returns since the start */
	bool maps_dirty;
	bool in_exec; /* stopped in exec: the first step only leaves the system call */
	bool last_store; /* the last instruction stepped stored a 64-bit word */
	rd_regs_t regs;	 /* the stepped thread's registers, as its last stop left them */
	bool regs_valid;
	uint64_t unknown_pages[256];
	size_t nunknown;
	struct symline *symcache;
	struct codepage {
		uint64_t page; /* page address + 1; 0 when empty */
		uint8_t bytes[4096];
	} *code;
	struct dcache_ent *dcache;
	struct plan plan;
	const char *end;
	/* Counts for the summary. */
	uint64_t steps, passages, res[RES_NONE + 1], stops_in_passages, signals;
	struct timespec t0;
};

static volatile sig_atomic_t got_signal;
/* Why our output could not be written (a closed pipe: SIGPIPE is ignored); 0 while it can. */
static int out_errno;

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
	struct sigaction sa = { .sa_handler = on_quit }; /* no SA_RESTART: waits return */
	static const int fatal[] = { SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		signal(fatal[i], on_fatal);
	atexit(bp_atexit);
}

/* Output that cannot be written ends stepping as SIGINT does: nobody reads what we step. */
static void check_output(void)
{
	if (out_errno || !ferror(stdout))
		return;
	out_errno = errno ? errno : EIO;
	rd_pt_quit = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* ---- sections ------------------------------------------------------------------------ */

static int sec_cmp(const void *a, const void *b)
{
	const struct section *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static void sec_free(struct section *s)
{
	free(s->func);
	free(s->file);
}

static void name_section(struct stepper *st, struct section *s)
{
	const struct rd_module *m = rd_modules_find(&st->mods, s->start);
	struct elfscan_loc loc;

	if (m && m->es && elfscan_symbolize(m->es, s->start - m->bias, &loc) == 0) {
		s->func = loc.func ? strdup(loc.func) : NULL;
		s->file = loc.file ? strdup(base_name(loc.file)) : NULL;
		s->line = loc.line;
	}
}

static struct section *sec_add(struct stepper *st, uint64_t start, uint64_t post_commit,
			       uint64_t abort_ip, uint64_t desc, enum sec_source src)
{
	struct section *s;

	if (st->nsecs == st->capsecs) {
		size_t cap = st->capsecs ? st->capsecs * 2 : 64;
		struct section *v = realloc(st->secs, cap * sizeof(*v));

		if (!v)
			return NULL;
		st->secs = v;
		st->capsecs = cap;
	}
	s = &st->secs[st->nsecs++];
	memset(s, 0, sizeof(*s));
	s->start = start;
	s->post_commit = post_commit;
	s->abort = abort_ip;
	s->desc = desc;
	s->src = src;
	name_section(st, s);
	return s;
}

static struct section *sec_find(struct stepper *st, uint64_t addr)
{
	size_t lo = 0, hi = st->nsecs;

	/* Last section starting at or before addr; sections rarely overlap, look back a few. */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (st->secs[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo, k = 0; i-- > 0 && k < 4; k++)
		if (addr >= st->secs[i].start && addr < st->secs[i].post_commit)
			return &st->secs[i];
	return NULL;
}

/* The sections of every module's tables, at runtime addresses; learned ones are kept. */
static void load_table_sections(struct stepper *st)
{
	size_t keep = 0;

	for (size_t i = 0; i < st->nsecs; i++) {
		if (st->secs[i].src == SRC_TABLE)
			sec_free(&st->secs[i]);
		else
			st->secs[keep++] = st->secs[i];
	}
	st->nsecs = keep;
	for (size_t m = 0; m < st->mods.n; m++) {
		const struct rd_module *mod = &st->mods.v[m];

		for (size_t i = 0; mod->es && i < elfscan_count(mod->es); i++) {
			const struct elfscan_cs *cs = elfscan_get(mod->es, i);
			struct section *s;

			if (!cs->post_commit_offset || cs->post_commit_ip < cs->start_ip)
				continue;
			s = sec_add(st, cs->start_ip + mod->bias, cs->post_commit_ip + mod->bias,
				    cs->abort_ip + mod->bias, cs->desc_addr + mod->bias, SRC_TABLE);
			for (size_t e = 0; s && e < cs->nexits && s->nexits < MAX_EXITS; e++)
				s->exits[s->nexits++] = cs->exits[e].exit_ip + mod->bias;
		}
	}
	/* A section learned at run time and also in a table now: keep the table's. */
	if (st->nsecs) /* secs is NULL while no section is known */
		qsort(st->secs, st->nsecs, sizeof(*st->secs), sec_cmp);
	keep = 0;
	for (size_t i = 0; i < st->nsecs; i++) {
		struct section *s = &st->secs[i];

		if (keep && s->start == st->secs[keep - 1].start &&
		    s->post_commit == st->secs[keep - 1].post_commit) {
			if (s->src == SRC_TABLE && st->secs[keep - 1].src != SRC_TABLE) {
				sec_free(&st->secs[keep - 1]);
				st->secs[keep - 1] = *s;
			} else {
				sec_free(s);
			}
			continue;
		}
		st->secs[keep++] = *s;
	}
	st->nsecs = keep;
}

static void symcache_clear(struct stepper *st)
{
	for (size_t i = 0; st->symcache && i < SYMCACHE; i++) {
		free(st->symcache[i].text);
		st->symcache[i].text = NULL;
		st->symcache[i].pc = 0;
	}
}

static int load_modules(struct stepper *st)
{
	struct elfscan_opts eo = { .sz = sizeof(eo) };
	int ret;

	rd_modules_free(&st->mods);
	ret = rd_modules_load(st->tr.pid, &eo, &st->mods);
	symcache_clear(st);
	if (st->code)
		memset(st->code, 0, CODECACHE * sizeof(*st->code));
	for (size_t i = 0; st->dcache && i < DCACHE; i++)
		st->dcache[i].addr = 0;
	st->nunknown = 0;
	st->maps_dirty = false;
	load_table_sections(st);
	return ret;
}

/* A descriptor the thread armed: add its section unless known. */
static void learn_desc(struct stepper *st, uint64_t desc)
{
	struct {
		uint32_t version, flags;
		uint64_t start, post_commit_offset, abort_ip;
	} d;

	for (size_t i = 0; i < st->nseen; i++)
		if (st->seen_desc[i] == desc)
			return;
	if (st->nseen < sizeof(st->seen_desc) / sizeof(st->seen_desc[0]))
		st->seen_desc[st->nseen++] = desc;
	if (rd_pt_peek(&st->tr, desc, &d, sizeof(d)) < 0 || d.version != 0 ||
	    !d.post_commit_offset || d.post_commit_offset > (1u << 20) ||
	    d.start + d.post_commit_offset < d.start ||
	    (d.abort_ip >= d.start && d.abort_ip < d.start + d.post_commit_offset))
		return;
	for (size_t i = 0; i < st->nsecs; i++)
		if (st->secs[i].start == d.start &&
		    st->secs[i].post_commit == d.start + d.post_commit_offset)
			return;
	if (sec_add(st, d.start, d.start + d.post_commit_offset, d.abort_ip, desc, SRC_RSEQ_CS))
		qsort(st->secs, st->nsecs, sizeof(*st->secs), sec_cmp);
}

/* Read the rseq_cs field of the current thread: a descriptor armed right now. */
static void check_rseq_cs(struct stepper *st)
{
	uint64_t cs;

	if (!st->have_rcfg || !st->rcfg.abi_ptr)
		return;
	if (rd_pt_peek(&st->tr, st->rcfg.abi_ptr + 8, &cs, sizeof(cs)) == 0 && cs)
		learn_desc(st, cs);
}

static void compute_exits(struct stepper *st, struct section *s)
{
	size_t len = s->post_commit - s->start;
	uint8_t *code;

	s->exits_known = true;
	code = malloc(len);
	if (!code)
		return;
	if (rd_pt_peek(&st->tr, s->start, code, len) == 0) {
		rd_bp_unpatch(s->start, code, len);
		s->nexits += rd_section_branch_exits(st->dec, code, s->start, s->post_commit,
						     s->exits + s->nexits, MAX_EXITS - s->nexits);
	}
	free(code);
}

/* ---- output -------------------------------------------------------------------------- */

static const char *place(struct stepper *st, uint64_t pc)
{
	struct symline *c = &st->symcache[(pc ^ (pc >> 12)) % SYMCACHE];
	const struct rd_module *m;
	char buf[RD_LOC_LEN + 300];

	if (c->text && c->pc == pc)
		return c->text;
	m = rd_modules_find(&st->mods, pc);
	if (m) {
		char loc[RD_LOC_LEN];

		snprintf(buf, sizeof(buf), "%s+%#" PRIx64 " %s", rd_safe(base_name(m->path)),
			 pc - m->bias, rd_sym_str(m->es, pc - m->bias, loc, sizeof(loc)));
	} else {
		snprintf(buf, sizeof(buf), "? ?");
	}
	free(c->text);
	c->text = strdup(buf);
	c->pc = pc;
	return c->text ? c->text : "?";
}

static void json_section(struct stepper *st, const struct section *s)
{
	struct jw *w = rd.jw;

	jw_key(w, "section");
	jw_obj_open(w);
	jw_kstr(w, "function", s->func);
	jw_kstr(w, "file", s->file);
	jw_key(w, "line");
	if (s->line > 0)
		jw_u64(w, (uint64_t)s->line);
	else
		jw_null(w);
	jw_ku64(w, "start", s->start);
	jw_ku64(w, "post_commit", s->post_commit);
	jw_ku64(w, "abort", s->abort);
	jw_kstr(w, "source", s->src == SRC_TABLE ? "table" : "rseq_cs");
	jw_obj_close(w);
}

static const char *sec_name(const struct section *s, char *buf, size_t len)
{
	if (s->file && s->line > 0)
		snprintf(buf, len, "%s (%s:%d) [%#" PRIx64 ", %#" PRIx64 ")",
			 s->func ? rd_safe(s->func) : "?", rd_safe(s->file), s->line, s->start,
			 s->post_commit);
	else
		snprintf(buf, len, "%s [%#" PRIx64 ", %#" PRIx64 ")%s",
			 s->func ? rd_safe(s->func) : "?", s->start, s->post_commit,
			 s->src == SRC_RSEQ_CS ? " (from rseq_cs)" : "");
	return buf;
}

static void print_step(struct stepper *st, const struct rd_insn *in)
{
	const struct rd_module *m;
	struct elfscan_loc loc;

	if (st->o.quiet)
		return;
	if (!rd.json) {
		printf("%d %#" PRIx64 " %s  %s\n", st->cur_tid, in->addr, place(st, in->addr),
		       in->text);
		check_output();
		return;
	}
	m = rd_modules_find(&st->mods, in->addr);
	rd_symbolize(m ? m->es : NULL, m ? in->addr - m->bias : 0, &loc);
	jw_obj_open(rd.jw);
	jw_kstr(rd.jw, "type", "step");
	jw_ku64(rd.jw, "tid", (uint64_t)st->cur_tid);
	jw_ku64(rd.jw, "addr", in->addr);
	jw_kstr(rd.jw, "module", m ? m->path : NULL);
	jw_key(rd.jw, "module_offset");
	if (m)
		jw_u64(rd.jw, in->addr - m->bias);
	else
		jw_null(rd.jw);
	jw_kstr(rd.jw, "function", loc.func);
	jw_key(rd.jw, "offset");
	if (loc.func)
		jw_u64(rd.jw, loc.func_off);
	else
		jw_null(rd.jw);
	jw_kstr(rd.jw, "file", loc.file && loc.line > 0 ? loc.file : NULL);
	jw_key(rd.jw, "line");
	if (loc.file && loc.line > 0)
		jw_u64(rd.jw, (uint64_t)loc.line);
	else
		jw_null(rd.jw);
	jw_kstr(rd.jw, "insn", in->text);
	jw_obj_close(rd.jw);
	jw_end(rd.jw);
	check_output();
}

static void print_passage(struct stepper *st, const struct section *s, enum result r,
			  uint64_t at, uint64_t ns, bool net)
{
	char name[512];

	if (rd.json) {
		jw_obj_open(rd.jw);
		jw_kstr(rd.jw, "type", "passage");
		jw_ku64(rd.jw, "tid", (uint64_t)st->cur_tid);
		json_section(st, s);
		jw_kstr(rd.jw, "result", res_name[r]);
		jw_ku64(rd.jw, "at", at);
		jw_ku64(rd.jw, "ns", ns);
		jw_kbool(rd.jw, "safety_net", net);
		jw_obj_close(rd.jw);
		jw_end(rd.jw);
		check_output();
		return;
	}
	sec_name(s, name, sizeof(name));
	switch (r) {
	case RES_COMMIT:
		printf("%d passage %s: committed (%#" PRIx64 ") in %" PRIu64 " ns\n", st->cur_tid,
		       name, at, ns);
		break;
	case RES_ABORT:
		printf("%d passage %s: aborted to the abort handler %#" PRIx64 " in %" PRIu64
		       " ns\n", st->cur_tid, name, at, ns);
		break;
	case RES_EXIT:
		printf("%d passage %s: left through exit %#" PRIx64 " %s in %" PRIu64 " ns\n",
		       st->cur_tid, name, at, place(st, at), ns);
		break;
	default:
		printf("%d passage %s: left at %#" PRIx64 " %s, found by the safety net after %"
		       PRIu64 " ns\n", st->cur_tid, name, at, place(st, at), ns);
		break;
	}
}

static void print_inside(struct stepper *st, pid_t tid, uint64_t pc, const struct section *s)
{
	char name[512];

	if (rd.json) {
		jw_obj_open(rd.jw);
		jw_kstr(rd.jw, "type", "inside");
		jw_ku64(rd.jw, "tid", (uint64_t)tid);
		jw_ku64(rd.jw, "addr", pc);
		json_section(st, s);
		jw_ku64(rd.jw, "resume_aborts_to", s->abort);
		jw_obj_close(rd.jw);
		jw_end(rd.jw);
		return;
	}
	printf("%d stopped at %#" PRIx64 " inside critical section %s: resuming will abort to "
	       "%#" PRIx64 " %s\n", tid, pc, sec_name(s, name, sizeof(name)), s->abort,
	       place(st, s->abort));
}

/* A one-off event: new thread, signal, fork, exec, exit, safety net. */
static void print_event(struct stepper *st, const char *type, pid_t tid, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void print_event(struct stepper *st, const char *type, pid_t tid, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (rd.json) {
		jw_obj_open(rd.jw);
		jw_kstr(rd.jw, "type", type);
		jw_ku64(rd.jw, "tid", (uint64_t)tid);
		jw_kstr(rd.jw, "message", msg);
		jw_obj_close(rd.jw);
		jw_end(rd.jw);
	} else {
		printf("%d %s: %s\n", tid, type, msg);
	}
	check_output();
}

static void print_summary(struct stepper *st)
{
	uint64_t el = now_ns() - ((uint64_t)st->t0.tv_sec * 1000000000ull + st->t0.tv_nsec);
	double secs = el / 1e9, ips = secs > 0 ? st->steps / secs : 0;
	double spp = st->passages ? (double)st->stops_in_passages / st->passages : 0;

	if (rd.json) {
		jw_obj_open(rd.jw);
		jw_kstr(rd.jw, "type", "summary");
		jw_kstr(rd.jw, "end", st->end);
		jw_ku64(rd.jw, "instructions", st->steps);
		jw_ku64(rd.jw, "passages", st->passages);
		jw_ku64(rd.jw, "commits", st->res[RES_COMMIT]);
		jw_ku64(rd.jw, "aborts", st->res[RES_ABORT]);
		jw_ku64(rd.jw, "exits", st->res[RES_EXIT]);
		jw_ku64(rd.jw, "lost", st->res[RES_LOST]);
		jw_ku64(rd.jw, "signals", st->signals);
		jw_ku64(rd.jw, "ptrace_stops", st->tr.stops);
		jw_ku64(rd.jw, "passage_stops", st->stops_in_passages);
		jw_kdouble(rd.jw, "stops_per_passage", spp);
		jw_kdouble(rd.jw, "seconds", secs);
		jw_kdouble(rd.jw, "instructions_per_second", ips);
		jw_obj_close(rd.jw);
		jw_end(rd.jw);
		return;
	}
	printf("summary: %s; %" PRIu64 " instructions stepped, %" PRIu64 " passages (%" PRIu64
	       " committed, %" PRIu64 " aborted, %" PRIu64 " exits, %" PRIu64 " lost), %" PRIu64
	       " signals, %" PRIu64 " ptrace stops (%.2f per passage), %.3f s, %.0f "
	       "instructions/s\n",
	       st->end, st->steps, st->passages, st->res[RES_COMMIT], st->res[RES_ABORT],
	       st->res[RES_EXIT], st->res[RES_LOST], st->signals, st->tr.stops, spp, secs, ips);
}

/* ---- threads and events -------------------------------------------------------------- */

static void set_cur(struct stepper *st, struct rd_thread *t)
{
	st->cur = t;
	st->cur_tid = t->tid;
	st->regs_valid = false;
	st->have_rcfg = rd_rseq_config(t->tid, &st->rcfg) == 0;
	if (!st->o.no_pin)
		rd_pin_hold(st->tr.pid, t->tid);
}

/* Re-find cur after the thread array grew (pointers move). */
static struct rd_thread *cur(struct stepper *st)
{
	st->cur = rd_pt_thread(&st->tr, st->cur_tid);
	return st->cur;
}

static void report_if_inside(struct stepper *st, pid_t tid)
{
	rd_regs_t r;
	struct section *s;

	if (rd_pt_getregs(tid, &r) < 0)
		return;
	s = sec_find(st, rd_arch_pc(&r));
	if (s)
		print_inside(st, tid, rd_arch_pc(&r), s);
}

/* A forked child inherited our breakpoints: restore its bytes, report it, let it go. */
static void release_child(struct stepper *st, const struct rd_event *ev)
{
	pid_t child = (pid_t)ev->msg;

	if (rd_pt_child_stopped(child) == 0) {
		/* After vfork the child shares our tracee's memory: leave it untouched. */
		if (!ev->code && rd_bp_count())
			rd_bp_restore_in(child);
		rd_pin_child(ev->tid, child);
		rd_pt_child_detach(child);
	}
	print_event(st, "fork", ev->tid, "%s child %d (not followed, runs on its own)",
		    ev->code ? "vfork" : "fork", child);
}

static void handle_exec(struct stepper *st, const struct rd_event *ev)
{
	rd_bp_forget();
	rd_bp_attach(st->tr.pid, st->tr.memfd);
	rd_pin_renamed((pid_t)ev->msg, ev->tid);
	st->nseen = 0;
	load_modules(st);
	st->in_exec = true;
	print_event(st, "exec", ev->tid, "the program called exec (thread %lu); new image %s",
		    ev->msg, st->mods.n ? st->mods.v[0].path : "?");
}

/*
 * If ev is the trap of one of our breakpoints (planted now; with ever, also one removed since,
 * whose trap came late), move thread tid back onto the instruction the breakpoint replaced
 * and return the breakpoint's address; r then holds tid's registers. 0 for any other stop.
 */
static uint64_t undo_bp_trap(pid_t tid, const struct rd_event *ev, rd_regs_t *r, bool ever)
{
	uint64_t bp;

	if (ev->kind != RD_EV_TRAP || ev->code != SI_KERNEL || rd_pt_getregs(tid, r) < 0)
		return 0;
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
		bp = undo_bp_trap(t->tid, ev, &r, true);
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
			rd_pt_cont(&st->tr, t, ev->code == SI_KERNEL ? SIGTRAP : 0);
		else if (ev->code == SI_KERNEL)
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
		print_event(st, "thread", (pid_t)ev->msg, "new thread (created by %d)", ev->tid);
		break;
	case RD_EV_FORK:
		release_child(st, ev);
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

static bool any_held(const struct stepper *st)
{
	for (size_t i = 0; i < st->tr.nt; i++)
		if (st->tr.t[i].held)
			return true;
	return false;
}

static void release_held(struct stepper *st)
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

enum how {
	HOW_STEP,
	HOW_CONT,
};

static int resume_cur(struct stepper *st, enum how how, int sig)
{
	struct rd_thread *t = cur(st);

	return how == HOW_STEP ? rd_pt_singlestep(&st->tr, t, sig) : rd_pt_cont(&st->tr, t, sig);
}

/*
 * Wait for the stepped thread to stop with something for the caller: a trap, a signal, an
 * exec, its end (RD_EV_EXITED), or RD_EV_NONE on timeout or a quit request. Events of other
 * threads and clone/fork events of this one are handled here.
 */
static int wait_cur(struct stepper *st, struct rd_event *ev, unsigned int timeout_ms,
		    enum how how, bool want_stop)
{
	int ret;

	for (;;) {
		ret = rd_pt_wait(&st->tr, ev, timeout_ms);
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
			print_event(st, "thread", (pid_t)ev->msg, "new thread (created by %d)",
				    ev->tid);
			resume_cur(st, how, 0);
			continue;
		case RD_EV_FORK:
			release_child(st, ev);
			resume_cur(st, how, 0);
			continue;
		case RD_EV_STOP:
			if (want_stop)
				return 0;
			/* A late interrupt or a group-stop: keep going. */
			resume_cur(st, how, 0);
			continue;
		default:
			return 0;
		}
	}
}

/* ---- stepping ------------------------------------------------------------------------ */

enum step_status {
	STEP_OK,
	STEP_END, /* the end: st->end says why */
	STEP_ERR,
};

static enum step_status cur_gone(struct stepper *st, const struct rd_event *ev)
{
	int s = ev->status;

	if (WIFEXITED(s))
		print_event(st, "exit", ev->tid, "thread exited with status %d", WEXITSTATUS(s));
	else if (WIFSIGNALED(s))
		print_event(st, "exit", ev->tid, "thread killed by signal %d (%s)", WTERMSIG(s),
			    strsignal(WTERMSIG(s)));
	st->end = "exited";
	return STEP_END;
}

static bool in_section_set(uint64_t a, const uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == a)
			return true;
	return false;
}

/*
 * A thread stopped by an interrupt right after it ran one of our breakpoints: the trap is
 * still queued and reported on the next resume. Left queued, it would reach the program as
 * a SIGTRAP after the detach.
 */
static bool trap_queued(const rd_regs_t *r)
{
	return rd_bp_was_planted(rd_arch_bp_addr(rd_arch_pc(r)));
}

/* Why a breakpoint could not be planted: /proc/PID/mem answers EIO for an address no mapping
 * covers, which strerror would call an input/output error. */
static const char *plant_error(int err)
{
	return err == -EIO || err == -EFAULT ? "no mapping there" : strerror(-err);
}

/* Let the thread run through section s between breakpoints at its exits and at the other
 * successors of the current instruction; report the passage. */
static enum step_status step_over(struct stepper *st, struct section *s, const uint64_t *other,
				  size_t nother)
{
	uint64_t stops0 = cur(st)->stops, t0, bp = 0;
	enum result r = RES_NONE;
	struct rd_event ev;
	bool net = false;
	rd_regs_t regs;
	int ret;

	rd_bp_remove_all(); /* the last tree's, which may lie inside the section */
	if (!s->exits_known)
		compute_exits(st, s);
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

		if (i >= s->nexits && sec_find(st, a))
			continue;
		ret = rd_bp_plant(a);
		if (ret == -EIO || ret == -EFAULT)
			ret = 0;
		else if (ret)
			bp = a;
	}
	if (ret) {
		rd_bp_remove_all();
		rd_error("cannot plant a breakpoint at %#" PRIx64 " %s, around the section at %#"
			 PRIx64 ": %s", bp, place(st, bp), s->start, plant_error(ret));
		return STEP_ERR;
	}
	bp = 0;
	t0 = now_ns();
	if (resume_cur(st, HOW_CONT, st->cur_sig) < 0)
		goto gone;
	st->cur_sig = 0;
	for (;;) {
		ret = wait_cur(st, &ev, SAFETY_NET_MS, HOW_CONT, net);
		if (ret < 0)
			goto gone;
		if (ev.kind == RD_EV_NONE) {
			if (rd_pt_quit) {
				/* Stop the thread where it is; it is not inside a section we
				 * know unless the kernel had to abort it. */
				rd_bp_remove_all();
				release_held(st);
				rd_pt_interrupt(cur(st));
				st->end = "interrupted";
				rd_pt_quit = 0;
				wait_cur(st, &ev, 1000, HOW_CONT, true);
				if (ev.kind == RD_EV_STOP && rd_pt_getregs(st->cur_tid, &regs) == 0 &&
				    trap_queued(&regs) && resume_cur(st, HOW_CONT, 0) == 0)
					wait_cur(st, &ev, 1000, HOW_CONT, true);
				rd_pt_quit = 1;
				if (ev.kind == RD_EV_EXITED)
					return cur_gone(st, &ev);
				if (ev.kind == RD_EV_SIGNAL && !st->o.no_signals)
					cur(st)->pending_sig = ev.sig;
				undo_bp_trap(st->cur_tid, &ev, &regs, true);
				return STEP_END;
			}
			if (!net) {
				/* The safety net: stop the thread to see where it is. */
				net = true;
				rd_pt_interrupt(cur(st));
				continue;
			}
			continue;
		}
		if (ev.kind == RD_EV_EXITED) {
			rd_bp_forget();
			return cur_gone(st, &ev);
		}
		if (ev.kind == RD_EV_EXEC) {
			if (ev.tid != st->cur_tid)
				set_cur(st, rd_pt_thread(&st->tr, ev.tid));
			handle_exec(st, &ev);
			return STEP_OK;
		}
		if (ev.kind == RD_EV_SIGNAL) {
			st->signals++;
			print_event(st, "signal", st->cur_tid, "%s during the passage%s",
				    strsignal(ev.sig), st->o.no_signals ? " (not delivered)" : "");
			resume_cur(st, HOW_CONT, st->o.no_signals ? 0 : ev.sig);
			continue;
		}
		bp = undo_bp_trap(st->cur_tid, &ev, &regs, false);
		if (bp) {
			if (bp == s->post_commit)
				r = RES_COMMIT;
			else if (bp == s->abort)
				r = RES_ABORT;
			else if (in_section_set(bp, s->exits, s->nexits))
				r = RES_EXIT;
			else
				r = RES_NONE;
			break;
		}
		if (rd_pt_getregs(st->cur_tid, &regs) < 0)
			goto gone;
		if (ev.kind == RD_EV_TRAP && ev.code == SI_KERNEL) {
			/* The program's own breakpoint instruction. */
			resume_cur(st, HOW_CONT, SIGTRAP);
			continue;
		}
		if (net && ev.kind == RD_EV_STOP) {
			uint64_t pc = rd_arch_pc(&regs);

			if (pc >= s->start && pc < s->post_commit) {
				/* Still running the section (slow or preempted): resuming aborts it
				 * and the abort breakpoint takes the thread. */
				net = false;
				resume_cur(st, HOW_CONT, 0);
				continue;
			}
			bp = pc;
			r = RES_LOST;
			print_event(st, "safety-net", st->cur_tid,
				    "no breakpoint hit within %d ms; stepping resumes at %#" PRIx64
				    " %s", SAFETY_NET_MS, pc, place(st, pc));
			break;
		}
		/* A single-step trap left over, or an interrupt we no longer need. */
		resume_cur(st, HOW_CONT, 0);
	}
	rd_bp_remove_all();
	release_held(st);
	if (r != RES_NONE) {
		st->passages++;
		st->res[r]++;
		/* The stepped thread's stops: others held at a breakpoint do not count. */
		st->stops_in_passages += cur(st)->stops - stops0;
		print_passage(st, s, r, bp, now_ns() - t0, net);
	}
	return STEP_OK;
gone:
	rd_bp_remove_all();
	release_held(st);
	st->end = "exited";
	return STEP_END;
}

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

static bool page_checked(struct stepper *st, uint64_t pc)
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

/* ---- running between breakpoints outside sections ------------------------------------- */

/* The decoded instruction at pc, module code only (it does not change under us). */
static const struct rd_insn *insn_at(struct stepper *st, uint64_t pc)
{
	struct dcache_ent *e = &st->dcache[(pc ^ (pc >> 13)) % DCACHE];
	uint8_t buf[RD_ARCH_INSN_MAX];
	size_t n;

	if (e->addr == pc)
		return &e->in;
	n = fetch_code(st, pc, buf, sizeof(buf));
	rd_decode(st->dec, buf, n, pc, &e->in);
	e->addr = pc;
	return &e->in;
}

static int plan_find(const struct plan *p, uint64_t addr)
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
	p->n[p->nn++] = (struct pnode){ .addr = addr, .depth = depth, .wregs = wregs,
					.parent = parent };
}

/* Whether node x (not the root), module code within the count, may run unseen. */
static bool plan_interior(struct stepper *st, const struct pnode *x, const struct rd_insn *in,
			  const rd_regs_t *regs)
{
	bool branch = (in->kind == RD_INSN_JMP || in->kind == RD_INSN_JCC ||
		       in->kind == RD_INSN_CALL) && in->has_target;

	if (!in->size || (!in->plain && !branch) || sec_find(st, x->addr))
		return false;
	if (in->store && st->have_rcfg && st->rcfg.abi_ptr) {
		/* It must provably miss rseq_cs: its address registers hold what they held at
		 * the root. */
		uint64_t ea, val, cs = st->rcfg.abi_ptr + 8;

		if ((in->st_regs & x->wregs) ||
		    !rd_store_eval(&st->tr, in, regs, &ea, &val) || (ea < cs + 8 && ea + 8 > cs))
			return false;
	}
	return true;
}

/* The length of node k's instruction; leaves past the count or outside every module are
 * decoded only now, for plan_check. 0 when it cannot be decoded. */
static unsigned int plan_size(struct stepper *st, int k)
{
	struct pnode *x = &st->plan.n[k];
	uint8_t buf[RD_ARCH_INSN_MAX];
	struct rd_insn in;
	ssize_t got;

	if (x->size)
		return x->size;
	if (rd_modules_find(&st->mods, x->addr)) {
		x->size = (uint8_t)insn_at(st, x->addr)->size;
		return x->size;
	}
	got = pread(st->tr.memfd, buf, sizeof(buf), (off_t)x->addr);
	if (got <= 0)
		return 0;
	rd_bp_unpatch(x->addr, buf, (size_t)got);
	rd_decode(st->dec, buf, (size_t)got, x->addr, &in);
	x->size = (uint8_t)in.size;
	return x->size;
}

/* The node of the tree whose instruction covers addr without starting there, or -1. */
static int plan_covering(struct stepper *st, uint64_t addr)
{
	for (unsigned int k = 1; k < RD_ARCH_INSN_MAX && k <= addr; k++) {
		int j = plan_find(&st->plan, addr - k);

		if (j >= 0 && !st->plan.n[j].dead && plan_size(st, j) > k)
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
static bool plan_check(struct stepper *st)
{
	struct plan *p = &st->plan;

	for (int i = 1; i < p->nn; i++) {
		int j;

		if (!p->n[i].leaf) /* a leaf is never dead */
			continue;
		j = plan_covering(st, p->n[i].addr);
		if (j < 0)
			continue;
		if (!plan_cut(p, i, j))
			return false;
		i = 0; /* the new leaf and what remains: look again */
	}
	return true;
}

/*
 * The tree of the paths ahead of root (the current instruction, whose successors succ are
 * exact), breadth first. Every address appears once, so the address the thread stops at
 * names its path. False when no tree of more than one step can be built.
 */
static bool plan_build(struct stepper *st, const struct rd_insn *root, const rd_regs_t *regs,
		       const uint64_t *succ, size_t nsucc, uint64_t left)
{
	struct plan *p = &st->plan;
	int head = 0;

	p->nn = 0;
	p->nleaves = 0;
	memset(p->hash, 0, sizeof(p->hash));
	plan_add(p, root->addr, -1, 0, 0);
	while (head < p->nn) {
		int i = head++;
		struct pnode *x = &p->n[i];
		const struct rd_insn *in = root;
		uint64_t s[4];
		size_t ns = 0;
		bool ok = true;

		if (i == 0) {
			x->size = (uint8_t)root->size;
			for (size_t k = 0; k < nsucc && ns < 4; k++)
				if (!ns || s[0] != succ[k]) /* a branch to the next instruction */
					s[ns++] = succ[k];
		} else {
			/* Past the count, at --until or outside every module (never decoded
			 * into the caches): a leaf. */
			bool inner = x->depth < left && x->addr != st->until_addr &&
				     rd_modules_find(&st->mods, x->addr);

			in = inner ? insn_at(st, x->addr) : NULL;
			if (in)
				x->size = (uint8_t)in->size;
			if (!inner || !plan_interior(st, x, in, regs)) {
				x->leaf = true;
				p->nleaves++;
				continue;
			}
			if (in->kind == RD_INSN_OTHER || in->kind == RD_INSN_JCC)
				s[ns++] = x->addr + in->size;
			if (in->kind != RD_INSN_OTHER && !(ns && s[0] == in->target))
				s[ns++] = in->target;
		}
		for (size_t k = 0; k < ns && ok; k++)
			ok = !sec_find(st, s[k]) && plan_find(p, s[k]) < 0 && can_plant(st, s[k]);
		/* The frontier (leaves and nodes still to look at) becomes the breakpoints. */
		if (ok && (p->nn + (int)ns > PLAN_NODES ||
			   p->nleaves + (p->nn - head) + (int)ns > PLAN_LEAVES))
			ok = false;
		if (!ok) {
			if (i == 0)
				return false;
			x->leaf = true;
			p->nleaves++;
			continue;
		}
		for (size_t k = 0; k < ns; k++)
			plan_add(p, s[k], i, x->depth + 1, x->wregs | in->wregs);
	}
	return p->nn > 1 && plan_check(st);
}

/* Count (and print) the instructions the thread ran from the root to node k, exclusive. */
static void plan_account(struct stepper *st, const struct rd_insn *root, int k)
{
	int path[PLAN_NODES], n = 0;

	for (int i = st->plan.n[k].parent; i >= 0; i = st->plan.n[i].parent)
		path[n++] = i;
	while (n-- > 0) {
		const struct rd_insn *in = path[n] ? insn_at(st, st->plan.n[path[n]].addr) : root;

		print_step(st, in);
		st->steps++;
		if (st->o.finish && in->kind == RD_INSN_CALL)
			st->depth++;
		else if (st->o.finish && in->kind == RD_INSN_RET)
			st->depth--;
	}
}

/* Whether a breakpoint left from the last tree may stay: it is a leaf of this one, or lies
 * where this tree never runs (not on or inside an instruction of its paths). Beyond a bound
 * only leaves stay. */
static bool plan_keeps(uint64_t addr, void *arg)
{
	struct stepper *st = arg;
	const struct plan *p = &st->plan;
	int k = plan_find(p, addr);

	if (k >= 0 && !p->n[k].dead)
		return p->n[k].leaf;
	if (rd_bp_count() > KEEP_BPS)
		return false;
	k = plan_covering(st, addr);
	return k < 0 || p->n[k].leaf;
}

/* Plant the planned tree's leaves. On failure none stays planted and the caller steps the
 * root alone: a single step needs no breakpoint. */
static bool plan_plant(struct stepper *st)
{
	struct plan *p = &st->plan;
	int ret = 0;

	/* The last trees' breakpoints stay where this tree cannot run into them (a loop runs
	 * the same tree again): planting and removing are most of a stop's system calls. */
	rd_bp_remove_unless(plan_keeps, st);
	for (int i = 0; i < p->nn && !ret; i++) {
		uint8_t orig[RD_ARCH_BP_LEN];

		if (!p->n[i].leaf)
			continue;
		if (!rd_modules_find(&st->mods, p->n[i].addr)) /* not cached: read it now */
			ret = rd_bp_plant(p->n[i].addr);
		else if (fetch_code(st, p->n[i].addr, orig, sizeof(orig)) != sizeof(orig))
			ret = -EFAULT;
		else
			ret = rd_bp_plant_over(p->n[i].addr, orig);
	}
	if (ret)
		rd_bp_remove_all();
	return ret == 0;
}

/* Run the planted tree: let the thread go, see where it stopped. */
static enum step_status plan_run(struct stepper *st, const struct rd_insn *root)
{
	struct plan *p = &st->plan;
	struct rd_event ev;
	enum step_status res = STEP_OK;
	int ret = 0, k = -1, sig = 0;
	uint64_t bp;
	bool quit = false;
	rd_regs_t regs;

	if (resume_cur(st, HOW_CONT, 0) < 0)
		goto gone;
	for (;;) {
		if (!quit) {
			ret = wait_cur(st, &ev, 0, HOW_CONT, false);
		} else {
			/* Asked to quit: the thread stops wherever it is on the tree. */
			rd_pt_quit = 0;
			ret = wait_cur(st, &ev, 1000, HOW_CONT, true);
			rd_pt_quit = 1;
		}
		if (ret < 0 || (quit && ev.kind == RD_EV_NONE))
			goto gone;
		if (ev.kind == RD_EV_NONE) {
			if (rd_pt_quit) {
				quit = true;
				rd_pt_interrupt(cur(st));
			}
			continue;
		}
		if (ev.kind == RD_EV_EXITED) {
			rd_bp_remove_all();
			release_held(st);
			return cur_gone(st, &ev);
		}
		if (ev.kind == RD_EV_EXEC) {
			/* Not from the tree (no system call runs unseen): another thread's. */
			if (ev.tid != st->cur_tid)
				set_cur(st, rd_pt_thread(&st->tr, ev.tid));
			handle_exec(st, &ev);
			return STEP_OK;
		}
		bp = undo_bp_trap(st->cur_tid, &ev, &regs, false);
		if (bp) {
			k = plan_find(p, bp);
			break;
		}
		if (rd_pt_getregs(st->cur_tid, &regs) < 0)
			goto gone;
		if (ev.kind == RD_EV_SIGNAL) {
			sig = ev.sig;
			k = plan_find(p, rd_arch_pc(&regs));
			break;
		}
		if (quit && ev.kind == RD_EV_STOP) {
			if (trap_queued(&regs)) {
				resume_cur(st, HOW_CONT, 0);
				continue;
			}
			k = plan_find(p, rd_arch_pc(&regs));
			break;
		}
		/* A trap left over from an earlier single-step, or a late interrupt. */
		resume_cur(st, HOW_CONT, 0);
	}
	/* The breakpoints stay for the next tree, unless another thread waits at one. */
	if (k < 0 || quit || any_held(st)) {
		rd_bp_remove_all();
		release_held(st);
	}
	/* Stopped at a leaf, registers read and set: the next step need not read them. */
	st->regs = regs;
	st->regs_valid = k >= 0 && !quit && !sig;
	if (k < 0) {
		rd_error("thread %d left the decoded paths at %#" PRIx64 " %s: cannot count its "
			 "instructions", st->cur_tid, rd_arch_pc(&regs), place(st, rd_arch_pc(&regs)));
		return STEP_ERR;
	}
	plan_account(st, root, k);
	if (sig) {
		/* Delivered with the next step, which then stops in the handler. */
		st->signals++;
		print_event(st, "signal", st->cur_tid, "%s%s", strsignal(sig),
			    st->o.no_signals ? " (not delivered)" : "");
		st->cur_sig = st->o.no_signals ? 0 : sig;
	}
	if (quit) {
		if (sig && !st->o.no_signals)
			cur(st)->pending_sig = sig;
		st->cur_sig = 0;
		st->end = "interrupted";
		res = STEP_END;
	}
	st->last_store = false;
	return res;
gone:
	rd_bp_remove_all();
	release_held(st);
	st->end = "exited";
	return STEP_END;
}

static enum step_status step_once(struct stepper *st)
{
	uint64_t succ[4], pc;
	uint8_t buf[RD_ARCH_INSN_MAX];
	struct section *s = NULL;
	struct rd_event ev;
	struct rd_insn in;
	bool unknown, known, maps = false, arms = false, restarts;
	size_t nsucc, n = 0;
	rd_regs_t regs;
	ssize_t got;
	int sig;

	if (st->in_exec) {
		/* A step from the exec stop reports the end of the system call, not an
		 * instruction. */
		st->in_exec = false;
		if (rd_pt_singlestep(&st->tr, cur(st), 0) < 0 ||
		    wait_cur(st, &ev, 0, HOW_STEP, false) < 0) {
			st->end = "exited";
			return STEP_END;
		}
		if (ev.kind == RD_EV_EXITED)
			return cur_gone(st, &ev);
		if (ev.kind == RD_EV_SIGNAL)
			st->cur_sig = st->o.no_signals ? 0 : ev.sig;
	}
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
	if (st->maps_dirty || (!known && !page_checked(st, pc)))
		load_modules(st);
	/* Sections the tables do not know are armed by a store to rseq_cs: look at it after
	 * each store and in code outside every module. */
	if (st->last_store || !known)
		check_rseq_cs(st);

	/* Code outside every module may be generated and rewritten: never cached. */
	if (known) {
		in = *insn_at(st, pc);
	} else {
		got = pread(st->tr.memfd, buf, sizeof(buf), (off_t)pc);
		n = got > 0 ? (size_t)got : 0;
		rd_bp_unpatch(pc, buf, n);
		rd_decode(st->dec, buf, n, pc, &in);
	}

	s = sec_find(st, pc);
	if (s) {
		/* Stopped inside (attach, a signal, a breakpoint of the user): resuming aborts. */
		print_inside(st, st->cur_tid, pc, s);
		return step_over(st, s, NULL, 0);
	}
	nsucc = rd_successors(&st->tr, &in, &regs, succ, 4, &unknown);
	if (in.store && st->have_rcfg && st->rcfg.abi_ptr) {
		uint64_t ea, val;

		if (!rd_store_eval(&st->tr, &in, &regs, &ea, &val)) {
			arms = true;
		} else if (ea == st->rcfg.abi_ptr + 8) {
			arms = true;
			if (val)
				learn_desc(st, val);
		}
	}
	for (size_t i = 0; i < nsucc && !s; i++)
		s = sec_find(st, succ[i]);
	if (s) {
		uint64_t other[4];
		size_t no = 0;

		/* A breakpoint on the instruction itself would trap before it runs. */
		for (size_t i = 0; i < nsucc; i++)
			if ((succ[i] < s->start || succ[i] >= s->post_commit) && succ[i] != pc)
				other[no++] = succ[i];
		print_step(st, &in);
		st->steps++; /* this instruction runs at the start of the passage */
		return step_over(st, s, other, no);
	}
	/* A thread that restarts a blocking system call must not run into the tree: blocked
	 * there, it would keep the threads held at its breakpoints, perhaps the very ones it
	 * waits for. */
	restarts = rd_arch_syscall_restarts(&regs);
	if (known && !unknown && !arms && !st->cur_sig && !st->o.single_step && !restarts &&
	    (in.plain || (in.kind != RD_INSN_OTHER && in.kind != RD_INSN_SYSCALL)) &&
	    !(st->o.finish && in.kind == RD_INSN_RET && st->depth == 0) &&
	    plan_build(st, &in, &regs, succ, nsucc,
		       st->o.count ? st->o.count - st->steps : UINT64_MAX) &&
	    plan_plant(st))
		return plan_run(st, &in);
	/* An instruction whose single-step trap may come one instruction late: run it to
	 * breakpoints at its successors instead. */
	if (in.late_trap && !unknown && !st->cur_sig && !restarts &&
	    plan_build(st, &in, &regs, succ, nsucc, 1) && plan_plant(st))
		return plan_run(st, &in);
	if (in.kind == RD_INSN_SYSCALL && rd_arch_maps_memory(&regs))
		maps = true;
	st->last_store = in.store;
	sig = st->cur_sig;
	st->cur_sig = 0;
	if (!sig)
		print_step(st, &in);
	rd_bp_remove_all(); /* the last tree's: the step may stop in front of one */
	if (rd_pt_singlestep(&st->tr, cur(st), sig) < 0) {
		st->end = "exited";
		return STEP_END;
	}
	if (wait_cur(st, &ev, 0, HOW_STEP, false) < 0) {
		st->end = "exited";
		return STEP_END;
	}
	switch (ev.kind) {
	case RD_EV_NONE:
		/* Asked to quit: the thread stops after this step anyway. */
		rd_pt_quit = 0;
		wait_cur(st, &ev, 1000, HOW_STEP, true);
		rd_pt_quit = 1;
		if (ev.kind == RD_EV_EXITED)
			return cur_gone(st, &ev);
		if (ev.kind == RD_EV_SIGNAL && !st->o.no_signals)
			cur(st)->pending_sig = ev.sig;
		st->steps += ev.kind == RD_EV_TRAP;
		st->end = "interrupted";
		return STEP_END;
	case RD_EV_EXITED:
		return cur_gone(st, &ev);
	case RD_EV_EXEC:
		if (ev.tid != st->cur_tid)
			set_cur(st, rd_pt_thread(&st->tr, ev.tid));
		st->steps++;
		handle_exec(st, &ev);
		return STEP_OK;
	case RD_EV_SIGNAL:
		/* Delivered with the next step, which then stops in the handler. */
		st->signals++;
		print_event(st, "signal", st->cur_tid, "%s%s", strsignal(ev.sig),
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
		if (in.kind == RD_INSN_CALL) {
			st->depth++;
		} else if (in.kind == RD_INSN_RET) {
			if (st->depth-- == 0) {
				st->end = "finish";
				return STEP_END;
			}
		}
	}
	return STEP_OK;
}

/* ---- setup and teardown -------------------------------------------------------------- */

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

/* Stop one running thread and wait until it is stopped. Events of other threads are handled
 * as usual, or when tearing down, left as they stopped. */
static void stop_thread(struct stepper *st, pid_t tid, bool teardown)
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
				undo_bp_trap(o->tid, &ev, &r, true);
			if (ev.kind == RD_EV_CLONE)
				rd_pin_child(ev.tid, (pid_t)ev.msg);
			if (ev.kind == RD_EV_FORK)
				release_child(st, &ev);
			continue;
		}
		t = rd_pt_thread(&st->tr, tid);
		if (ev.kind == RD_EV_EXITED)
			return;
		if (ev.kind == RD_EV_STOP && rd_pt_getregs(tid, &r) == 0 && trap_queued(&r)) {
			rd_pt_cont(&st->tr, t, 0); /* take the trap now: handled below */
			continue;
		}
		if (ev.kind == RD_EV_SIGNAL)
			t->pending_sig = ev.sig;
		undo_bp_trap(tid, &ev, &r, true);
		if (ev.kind == RD_EV_FORK)
			release_child(st, &ev);
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

static void stop_all(struct stepper *st)
{
	/* New threads may appear while we stop the others: loop until none runs. */
	for (int pass = 0; pass < 8; pass++) {
		bool running = false;

		for (size_t i = 0; i < st->tr.nt; i++) {
			if (st->tr.t[i].state == RD_T_RUNNING) {
				running = true;
				stop_thread(st, st->tr.t[i].tid, true);
			}
		}
		if (!running)
			break;
	}
}

/* Every exit path: restore every byte, then kill (launched) or let the program go. */
static void finish_tracee(struct stepper *st, bool detach)
{
	rd_bp_remove_all();
	rd_pin_release();
	if (st->tr.exited && !st->tr.launched)
		return;
	if (st->tr.launched && !detach) {
		rd_pt_kill(&st->tr);
		return;
	}
	stop_all(st);
	rd_bp_remove_all();
	/* A signal of the stepped thread not yet delivered goes with the detach. */
	if (st->cur_sig && cur(st) && !cur(st)->pending_sig)
		cur(st)->pending_sig = st->cur_sig;
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
	fprintf(f,
		"Usage: rseqdbg step [OPTIONS] -- PROG [ARGS...]\n"
		"       rseqdbg step [OPTIONS] -p PID [-t TID]\n\n"
		"Single-step a thread with ptrace, running every rseq critical section at full\n"
		"speed between breakpoints at its exits and reporting the passage.\n\n"
		"  -p, --pid PID        attach to a running process (PTRACE_SEIZE)\n"
		"  -t, --tid TID        the thread to step (default: the process's main thread)\n"
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
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, 't' },
		{ "from", required_argument, NULL, OPT_FROM },
		{ "count", required_argument, NULL, OPT_COUNT },
		{ "until", required_argument, NULL, OPT_UNTIL },
		{ "finish", no_argument, NULL, OPT_FINISH },
		{ "quiet", no_argument, NULL, 'q' },
		{ "detach", no_argument, NULL, OPT_DETACH },
		{ "lock-others", no_argument, NULL, OPT_LOCK },
		{ "no-signals", no_argument, NULL, OPT_NOSIG },
		{ "single-step", no_argument, NULL, OPT_SINGLE },
		{ "no-pin", no_argument, NULL, OPT_NOPIN },
		{ 0 },
	};
	static const struct rd_cmdline cl = { "+p:t:q", lo, usage };
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
		print_event(st, "end", st->tr.pid, "program exited with status %d",
			    WEXITSTATUS(s));
	else if (WIFSIGNALED(s) && !(WTERMSIG(s) == SIGKILL && !detach))
		print_event(st, "end", st->tr.pid, "program killed by signal %d (%s)",
			    WTERMSIG(s), strsignal(WTERMSIG(s)));
}

int cmd_step(int argc, char **argv)
{
	struct stepper st = { 0 };
	uint64_t from_addr = 0;
	char err[512] = "";
	pid_t first;
	int ret;

	rd_tracee_init(&st.tr);
	ret = parse_opts(&st.o, argc, argv);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	ret = rd_guard_fork(on_quit);
	if (ret >= 0)
		return ret;
	st.symcache = calloc(SYMCACHE, sizeof(*st.symcache));
	st.code = calloc(CODECACHE, sizeof(*st.code));
	st.dcache = calloc(DCACHE, sizeof(*st.dcache));
	st.last_store = true;
	if (!st.symcache || !st.code || !st.dcache || rd_decoder_open(&st.dec) < 0) {
		stepper_free(&st);
		return rd_error("cannot set up the instruction decoder (capstone)");
	}
	install_handlers();
	if (st.o.argv)
		ret = rd_pt_launch(&st.tr, st.o.argv, err, sizeof(err));
	else
		ret = rd_pt_attach(&st.tr, st.o.pid, err, sizeof(err));
	if (ret < 0) {
		stepper_free(&st);
		return rd_error("%s", err);
	}
	rd_bp_attach(st.tr.pid, st.tr.memfd);
	ret = load_modules(&st);
	if (ret < 0)
		rd_warn("reading the modules of process %d: %s (sections only from rseq_cs)",
			st.tr.pid, strerror(-ret));
	if (st.o.tid && !rd_pt_thread(&st.tr, st.o.tid)) {
		ret = rd_error("--tid %d: no such thread in process %d", st.o.tid, st.tr.pid);
		goto out;
	}
	/* Resolve before running anything so a bad name leaves the program untouched. */
	if (st.o.until && resolve(&st, st.o.until, &st.until_addr) < 0) {
		ret = rd_error("--until: unknown symbol '%s' in process %d (%zu modules searched)",
			       st.o.until, st.tr.pid, st.mods.n);
		goto out;
	}
	if (st.o.from && resolve(&st, st.o.from, &from_addr) < 0) {
		ret = rd_error("--from: unknown symbol '%s' in process %d (%zu modules searched)",
			       st.o.from, st.tr.pid, st.mods.n);
		goto out;
	}
	if (st.o.from && sec_find(&st, from_addr)) {
		const struct section *s = sec_find(&st, from_addr);

		rd_warn("--from %s (%#" PRIx64 ") is inside the critical section at %#" PRIx64
			": the stop there aborts it to %#" PRIx64, st.o.from, from_addr, s->start,
			s->abort);
	}
	first = st.o.tid ? st.o.tid : st.tr.pid;
	if (!st.o.tid && !rd_pt_thread(&st.tr, first) && st.tr.nt)
		first = st.tr.t[0].tid; /* the main thread exited, the others run on */

	if (st.o.lock_others || st.o.from == NULL) {
		/* Stop the thread to step now; with --lock-others every thread. */
		stop_thread(&st, first, false);
		if (st.o.lock_others) {
			stop_all(&st);
			for (size_t i = 0; i < st.tr.nt; i++)
				if (st.tr.t[i].tid != first && st.tr.t[i].state == RD_T_STOPPED)
					report_if_inside(&st, st.tr.t[i].tid);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &st.t0);
	st.in_exec = st.tr.launched && !st.o.from;
	if (st.o.from) {
		ret = run_to(&st, from_addr);
		if (ret == -EINTR) {
			st.end = "interrupted";
			ret = EXIT_OK;
			goto summary;
		}
		if (ret == -ESRCH) {
			st.end = "exited";
			ret = rd_error("--from: the program ended before reaching '%s'", st.o.from);
			goto out;
		}
		if (ret)
			goto out;
		if (st.o.lock_others) {
			stop_all(&st);
			for (size_t i = 0; i < st.tr.nt; i++)
				if (st.tr.t[i].tid != st.cur_tid &&
				    st.tr.t[i].state == RD_T_STOPPED)
					report_if_inside(&st, st.tr.t[i].tid);
		}
		clock_gettime(CLOCK_MONOTONIC, &st.t0);
	} else {
		struct rd_thread *t = rd_pt_thread(&st.tr, first);

		if (!t || t->state != RD_T_STOPPED) {
			ret = rd_error(t && t->state == RD_T_GONE ? "thread %d exited before it stopped"
								 : "thread %d did not stop",
				       first);
			goto out;
		}
		set_cur(&st, t);
	}
	ret = EXIT_OK;
	st.end = "count";
	while (!st.o.count || st.steps < st.o.count) {
		enum step_status s;

		if (rd_pt_quit) {
			st.end = "interrupted";
			break;
		}
		s = step_once(&st);
		if (s == STEP_ERR) {
			ret = EXIT_ERROR;
			break;
		}
		if (s == STEP_END)
			break;
	}
summary:
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
		ret = rd_error("writing the output: %s: breakpoints removed, %s",
			       strerror(out_errno),
			       st.tr.launched && !st.o.detach ? "program killed" : "program detached");
	else if (got_signal && !rd.json)
		fprintf(stderr, "rseqdbg: step: %s: breakpoints removed, %s\n",
			strsignal(got_signal),
			st.tr.launched && !st.o.detach ? "program killed" : "program detached");
	stepper_free(&st);
	return ret;
}
