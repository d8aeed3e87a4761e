// SPDX-License-Identifier: GPL-2.0-only
/* rseqdbg trace: rseq aborts, migrations and cpu_id updates, live or summarized. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "symfmt.h"
#include "trace/tracer.h"

#define MAX_FILTER 64

struct folded {
	char *stack;
	uint64_t count;
};

struct trace_ctx {
	struct rd_tracer *t;
	struct jw *w;
	bool summary; /* --summary: no live lines */
	bool stack;
	bool folded;
	struct folded *fold;
	size_t nfold, capfold;
	uint64_t events;
	struct rd_summary prev; /* the last summary printed */
	bool have_prev;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rseqdbg trace [OPTIONS] [-- CMD [ARGS...]]\n"
		"       rseqdbg trace --check\n\n"
		"Trace rseq critical-section aborts (with their cause, section and interrupted\n"
		"instruction), migrations and cpu_id updates with eBPF, system-wide or for the\n"
		"processes chosen below. Ctrl-C (or --duration) ends it and prints a summary.\n"
		"Needs root, or CAP_BPF and CAP_PERFMON.\n\n"
		"Filters (applied in the kernel):\n"
		"  -p, --pid PID         trace process PID (repeatable)\n"
		"  -t, --tid TID         trace thread TID (repeatable)\n"
		"      --comm NAME       trace threads whose command name is NAME\n"
		"      --cgroup PATH     trace tasks in the cgroup v2 directory PATH or below it\n"
		"  -- CMD ARGS           run CMD and trace it, its threads and its children from\n"
		"                        its first instruction; exit with its status\n\n"
		"Output:\n"
		"      --events LIST     events to print: abort,migrate,update,signal or all\n"
		"                        (default: abort,migrate)\n"
		"      --summary         print no events, only summaries\n"
		"      --interval S      with --summary, print one every S seconds (with the\n"
		"                        rates over the last interval)\n"
		"      --duration S      stop after S seconds\n"
		"      --top N           sections shown in a summary (default 10, 0 = all)\n"
		"      --stack           add the user stack of each aborting thread\n"
		"      --folded          print aborting stacks folded for flame graphs at the end\n"
		"      --ringbuf-size B  event ring buffer size in bytes (power of 2, >= 4096)\n"
		"  -j, --json            JSON lines: one object per event, then {\"summary\": ...}\n"
		"      --pretty          pretty-printed JSON (implies --json)\n"
		"      --check           load the programs, print what this kernel supports\n"
		"                        and the mode used\n"
		"  -h, --help            print this help\n\n"
		"Exit status: 0 (with -- CMD: CMD's status), 1 when --check finds the kernel\n"
		"unsupported or the programs do not load, 2 on error.\n");
}

static int parse_events(const char *s, uint32_t *emit)
{
	char buf[128], *tok, *save = NULL;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	*emit = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "abort"))
			*emit |= 1u << RT_EV_ABORT;
		else if (!strcmp(tok, "migrate"))
			*emit |= 1u << RT_EV_MIGRATE;
		else if (!strcmp(tok, "update"))
			*emit |= 1u << RT_EV_UPDATE;
		else if (!strcmp(tok, "signal"))
			*emit |= 1u << RT_EV_SIGNAL;
		else if (!strcmp(tok, "all"))
			*emit |= 1u << RT_EV_ABORT | 1u << RT_EV_MIGRATE | 1u << RT_EV_UPDATE |
				 1u << RT_EV_SIGNAL;
		else
			return -EINVAL;
	}
	return *emit ? 0 : -EINVAL;
}

static bool parse_seconds(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return !errno && end != s && !*end && *v > 0 && *v < 1e7;
}

static const char *event_name(uint32_t type)
{
	switch (type) {
	case RT_EV_ABORT:
		return "abort";
	case RT_EV_MIGRATE:
		return "migrate";
	case RT_EV_UPDATE:
		return "cpu_id";
	case RT_EV_SIGNAL:
		return "signal";
	default:
		return "?";
	}
}

static void fold_add(struct trace_ctx *c, const struct rt_event *e)
{
	char buf[4096], sym[RD_LOC_LEN];
	size_t n;

	n = (size_t)snprintf(buf, sizeof(buf), "%s", rd_safe(e->comm));
	/* Outermost frame first, as flame graph tools expect. */
	for (uint32_t i = e->nstack; i-- > 0 && n < sizeof(buf);) {
		if (!e->stack[i])
			continue;
		rd_tracer_sym(c->t, e->pid, e->stack[i], sym, sizeof(sym));
		for (char *p = sym; *p; p++)
			if (*p == ';' || *p == ' ')
				*p = '_';
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, ";%s", sym);
	}
	for (size_t i = 0; i < c->nfold; i++) {
		if (!strcmp(c->fold[i].stack, buf)) {
			c->fold[i].count++;
			return;
		}
	}
	if (c->nfold == c->capfold) {
		size_t cap = c->capfold ? 2 * c->capfold : 64;
		struct folded *v = realloc(c->fold, cap * sizeof(*v));

		if (!v)
			return;
		c->fold = v;
		c->capfold = cap;
	}
	c->fold[c->nfold].stack = strdup(buf);
	if (c->fold[c->nfold].stack)
		c->fold[c->nfold++].count = 1;
}

static void print_abort_plain(struct trace_ctx *c, const struct rt_event *e,
			      const struct rd_secinfo *si, const char *insn)
{
	char loc[RD_LOC_LEN];

	if (si && si->loc.func)
		rd_loc_str(&si->loc, loc, sizeof(loc));
	else
		snprintf(loc, sizeof(loc), "%#" PRIx64, (uint64_t)e->a1);
	printf("section %s +%#" PRIx64 " cause=%s insn=\"%s\"\n", loc, (uint64_t)(e->a0 - e->a1),
	       rd_cause_name(e->cause), insn);
}

static void json_abort(struct trace_ctx *c, const struct rt_event *e, const struct rd_secinfo *si,
		       const char *insn)
{
	struct jw *w = c->w;
	const struct elfscan_loc *l = si ? &si->loc : NULL;

	jw_key(w, "section");
	jw_obj_open(w);
	jw_kstr(w, "function", l ? l->func : NULL);
	jw_kstr(w, "file", l && l->line > 0 ? l->file : NULL);
	jw_key(w, "line");
	if (l && l->line > 0)
		jw_u64(w, (uint64_t)l->line);
	else
		jw_null(w);
	jw_kstr(w, "module", si ? si->module : NULL);
	jw_ku64(w, "start_ip", e->a1);
	jw_ku64(w, "post_commit_offset", e->a2);
	jw_ku64(w, "abort_ip", e->a3);
	jw_obj_close(w);
	jw_ku64(w, "ip", e->a0);
	jw_ku64(w, "offset", e->a0 - e->a1);
	jw_kstr(w, "insn", insn);
	jw_kstr(w, "cause", rd_cause_name(e->cause));
	jw_ku64(w, "marks", e->marks & 0xff);
	jw_ku64(w, "pending_marks", e->marks >> 8);
	if (!(e->kmask & RT_KEV_VALID)) {
		jw_ku64(w, "kernel_event_mask", e->kmask);
		return;
	}
	/* 6.19+: what task_struct.rseq.event held at the abort. */
	jw_key(w, "kernel_events");
	jw_obj_open(w);
	jw_kbool(w, "sched_switch", e->kmask & RT_KEV_SCHED_SWITCH);
	jw_kbool(w, "ids_changed", e->kmask & RT_KEV_IDS_CHANGED);
	jw_kbool(w, "user_irq", e->kmask & RT_KEV_USER_IRQ);
	jw_obj_close(w);
}

static int on_event(void *ctx, const struct rt_event *e)
{
	struct trace_ctx *c = ctx;
	const struct rd_secinfo *si = NULL;
	char insn[128] = "", sym[RD_LOC_LEN];
	double wall = rd_tracer_walltime(c->t, e->ts);

	c->events++;
	if (e->type == RT_EV_ABORT) {
		si = rd_tracer_section_of(c->t, e->pid, e->a1);
		if (c->folded)
			fold_add(c, e);
		if (c->summary || c->folded)
			return 0;
		rd_tracer_insn(c->t, si, e->a1, e->a0, insn, sizeof(insn));
	} else if (c->summary || c->folded) {
		return 0;
	}
	if (rd.json) {
		struct jw *w = c->w;

		jw_obj_open(w);
		jw_ku64(w, "time_ns", (uint64_t)(wall * 1e6) * 1000);
		jw_ku64(w, "pid", e->pid);
		jw_ku64(w, "tid", e->tid);
		jw_kstr(w, "comm", e->comm);
		jw_ku64(w, "cpu", e->cpu);
		jw_kstr(w, "event", event_name(e->type));
		switch (e->type) {
		case RT_EV_ABORT:
			json_abort(c, e, si, insn);
			if (c->stack) {
				jw_key(w, "stack");
				jw_arr_open(w);
				for (uint32_t i = 0; i < e->nstack && i < RT_MAX_STACK && e->stack[i];
				     i++) {
					jw_obj_open(w);
					jw_ku64(w, "addr", e->stack[i]);
					jw_kstr(w, "symbol", rd_tracer_sym(c->t, e->pid, e->stack[i],
									 sym, sizeof(sym)));
					jw_obj_close(w);
				}
				jw_arr_close(w);
			}
			break;
		case RT_EV_MIGRATE:
			jw_ku64(w, "from_cpu", e->a0);
			jw_ku64(w, "to_cpu", e->a1);
			break;
		case RT_EV_UPDATE:
			jw_ku64(w, "cpu_id", e->a0);
			jw_ku64(w, "node_id", e->a1);
			jw_ku64(w, "mm_cid", e->a2);
			break;
		case RT_EV_SIGNAL:
			jw_ku64(w, "signal", e->a0);
			break;
		}
		jw_obj_close(w);
		jw_end(w);
		return 0;
	}
	{
		time_t sec = (time_t)wall;
		struct tm tm;
		char tbuf[32], who[48];

		localtime_r(&sec, &tm);
		strftime(tbuf, sizeof(tbuf), "%H:%M:%S", &tm);
		snprintf(who, sizeof(who), "%u/%u", e->pid, e->tid);
		printf("%s.%06d %-15s %-16.16s %3u %-8s ", tbuf, (int)((wall - (double)sec) * 1e6),
		       who, rd_safe(e->comm), e->cpu, event_name(e->type));
	}
	switch (e->type) {
	case RT_EV_ABORT:
		print_abort_plain(c, e, si, insn);
		for (uint32_t i = 0; c->stack && i < e->nstack && i < RT_MAX_STACK && e->stack[i];
		     i++)
			printf("        %#018" PRIx64 " %s\n", (uint64_t)e->stack[i],
			       rd_tracer_sym(c->t, e->pid, e->stack[i], sym, sizeof(sym)));
		break;
	case RT_EV_MIGRATE:
		printf("cpu %" PRIu64 " -> %" PRIu64 "\n", (uint64_t)e->a0, (uint64_t)e->a1);
		break;
	case RT_EV_UPDATE:
		printf("cpu_id=%" PRIu64 " node_id=%" PRIu64 " mm_cid=%" PRIu64 "\n",
		       (uint64_t)e->a0, (uint64_t)e->a1, (uint64_t)e->a2);
		break;
	case RT_EV_SIGNAL:
		printf("%s\n", strsignal((int)e->a0));
		break;
	}
	return 0;
}

static int print_summary(struct trace_ctx *c, int top, bool final)
{
	struct rd_summary s;
	int err = rd_tracer_summary(c->t, &s);

	if (err)
		return rd_error("reading the BPF maps failed: %s", strerror(-err));
	if (c->have_prev)
		rd_summary_since(&s, &c->prev);
	if (rd.json) {
		jw_obj_open(c->w);
		jw_key(c->w, "summary");
		jw_obj_open(c->w);
		jw_kbool(c->w, "final", final);
		rd_summary_json(&s, c->w, top);
		jw_obj_close(c->w);
		jw_obj_close(c->w);
		jw_end(c->w);
	} else {
		printf("\n--- summary ---\n");
		rd_summary_print(&s, top, stdout);
		fflush(stdout);
	}
	/* Kept to give the next summary its rates over the interval. */
	rd_summary_free(&c->prev);
	c->prev = s;
	c->have_prev = true;
	return 0;
}

static void print_folded(struct trace_ctx *c)
{
	for (size_t i = 0; i < c->nfold; i++)
		printf("%s %" PRIu64 "\n", c->fold[i].stack, c->fold[i].count);
	fflush(stdout);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* What the command line asks for, besides the tracer's own options. */
struct trace_args {
	struct rd_tracer_opts o;
	pid_t pids[MAX_FILTER], tids[MAX_FILTER];
	double interval, duration;
	unsigned long long top;
	bool check;
};

static int add_pid_filter(struct trace_args *a, int opt, const char *s)
{
	bool pid = opt == 'p';
	size_t *n = pid ? &a->o.npids : &a->o.ntids;

	if (*n >= MAX_FILTER)
		return rd_error("at most %d --%s options", MAX_FILTER, pid ? "pid" : "tid");
	if (rd_parse_pid(pid ? "--pid" : "--tid", pid ? "process" : "thread", s,
			 pid ? &a->pids[*n] : &a->tids[*n]))
		return EXIT_ERROR;
	(*n)++;
	return 0;
}

static int parse_ringbuf_size(const char *s, uint32_t *size)
{
	unsigned long long v;

	if (!rd_parse_u64(s, &v) || v < 4096 || v > (1ULL << 30) || (v & (v - 1)))
		return rd_error("--ringbuf-size: '%s' is not a power of 2 between 4096 and 1 GiB",
				s);
	*size = (uint32_t)v;
	return 0;
}

enum { O_COMM = 256, O_CGROUP, O_EVENTS, O_SUMMARY, O_INTERVAL, O_DURATION, O_TOP,
       O_STACK, O_FOLDED, O_RINGBUF, O_CHECK };

/* One option of the command line; 0 or an exit status. */
static int trace_opt(struct trace_args *a, struct trace_ctx *c, int opt, const char *arg)
{
	switch (opt) {
	case 'p':
	case 't':
		return add_pid_filter(a, opt, arg);
	case O_COMM:
		if (!*arg || strlen(arg) >= RT_COMM_LEN)
			return rd_error("--comm: '%s' is not a command name (1 to %d bytes)", arg,
					RT_COMM_LEN - 1);
		a->o.comm = arg;
		return 0;
	case O_CGROUP:
		a->o.cgroup = arg;
		return 0;
	case O_EVENTS:
		if (parse_events(arg, &a->o.emit))
			return rd_error("--events: '%s' is not a list of abort, migrate, update, "
					"signal or all", arg);
		return 0;
	case O_SUMMARY:
		c->summary = true;
		return 0;
	case O_INTERVAL:
	case O_DURATION:
		if (!parse_seconds(arg, opt == O_INTERVAL ? &a->interval : &a->duration))
			return rd_error("--%s: '%s' is not a number of seconds",
					opt == O_INTERVAL ? "interval" : "duration", arg);
		return 0;
	case O_TOP:
		if (!rd_parse_u64(arg, &a->top) || a->top > 1000000)
			return rd_error("--top: '%s' is not a count", arg);
		return 0;
	case O_FOLDED:
		c->folded = true;
		/* fall through */
	case O_STACK:
		c->stack = true;
		return 0;
	case O_RINGBUF:
		return parse_ringbuf_size(arg, &a->o.ringbuf_size);
	case O_CHECK:
		a->check = true;
		return 0;
	}
	return EXIT_ERROR;
}

static int parse_opts(struct trace_args *a, struct trace_ctx *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, 't' },
		{ "comm", required_argument, NULL, O_COMM },
		{ "cgroup", required_argument, NULL, O_CGROUP },
		{ "events", required_argument, NULL, O_EVENTS },
		{ "summary", no_argument, NULL, O_SUMMARY },
		{ "interval", required_argument, NULL, O_INTERVAL },
		{ "duration", required_argument, NULL, O_DURATION },
		{ "top", required_argument, NULL, O_TOP },
		{ "stack", no_argument, NULL, O_STACK },
		{ "folded", no_argument, NULL, O_FOLDED },
		{ "ringbuf-size", required_argument, NULL, O_RINGBUF },
		{ "check", no_argument, NULL, O_CHECK },
		{ 0 },
	};
	static const struct rd_cmdline cl = { "+p:t:", longopts, usage };
	int opt, ret;

	a->o.pids = a->pids;
	a->o.tids = a->tids;
	a->o.emit = 1u << RT_EV_ABORT | 1u << RT_EV_MIGRATE;
	a->top = 10;
	while ((opt = rd_getopt(argc, argv, &cl)) != RD_OPT_END) {
		if (opt < 0)
			return rd_opt_exit(opt) == EXIT_OK ? -1 : EXIT_ERROR;
		ret = trace_opt(a, c, opt, optarg);
		if (ret)
			return ret;
	}
	c->w = rd.jw;
	return 0;
}

int cmd_trace(int argc, char **argv)
{
	struct trace_args a = {};
	struct rd_child child = { .go_fd = -1, .err_fd = -1 };
	struct trace_ctx c = {};
	struct rd_features f;
	const char *missing;
	char err[512];
	double interval, duration;
	unsigned long long top;
	bool check, have_child = false;
	uint64_t start_ms, next_ms;
	int ret, code = EXIT_OK, status = 0;

	ret = parse_opts(&a, &c, argc, argv);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	interval = a.interval;
	duration = a.duration;
	top = a.top;
	check = a.check;

	rd_features_probe(&f);
	if (check) {
		char why[512];
		const char *need = rd_tracer_privilege_missing();

		/* A mode is named only once the programs have loaded on this kernel. */
		if (need)
			return rd_error("--check loads the BPF programs: %s", need);
		if (!rd_features_missing(&f) && rd_tracer_check(&f, why, sizeof(why))) {
			rd_features_print(&f, why);
			return EXIT_FINDINGS;
		}
		rd_features_print(&f, NULL);
		return rd_features_missing(&f) ? EXIT_FINDINGS : EXIT_OK;
	}
	if (interval && !c.summary)
		return rd_error("--interval needs --summary");
	if (c.summary && !c.folded)
		a.o.emit = 0; /* the maps have everything a summary needs */
	if (c.folded)
		a.o.emit = 1u << RT_EV_ABORT;
	a.o.stack = c.stack;
	missing = rd_tracer_privilege_missing();
	if (missing)
		return rd_error("%s", missing);
	missing = rd_features_missing(&f);
	if (missing)
		return rd_error("%s", missing);

	if (optind < argc) {
		ret = rd_child_spawn(argv + optind, &child);
		if (ret)
			return rd_error("cannot start %s: %s", argv[optind], strerror(-ret));
		have_child = true;
		a.o.follow_forks = true;
	}
	ret = rd_tracer_open(&a.o, &f, &c.t, err, sizeof(err));
	if (!ret && have_child)
		ret = rd_tracer_add_pid(c.t, child.pid);
	if (!ret)
		ret = rd_tracer_attach(c.t, err, sizeof(err));
	if (ret) {
		if (have_child)
			rd_child_abort(&child);
		code = rd_error("%s", err);
		goto out;
	}
	rd_tracer_signals();
	if (have_child) {
		ret = rd_child_release(&child);
		if (ret) {
			waitpid(child.pid, &status, 0);
			rd_error("cannot run %s: %s", argv[optind], strerror(-ret));
			code = 127;
			goto out;
		}
		rd_tracer_learn_pid(c.t, child.pid);
	} else {
		/* On stderr, also with --json: scripts wait for it before starting work. */
		fprintf(stderr, "rseqdbg: trace: tracing rseq events (mode %s); Ctrl-C to end\n",
			rd_mode_name(rd_tracer_mode(c.t)));
	}
	for (size_t i = 0; i < a.o.npids; i++)
		rd_tracer_learn_pid(c.t, a.pids[i]);

	start_ms = mono_ms();
	next_ms = interval ? start_ms + (uint64_t)(interval * 1000) : 0;
	while (!rd_tracer_stop) {
		uint64_t now;

		ret = rd_tracer_poll(c.t, 100, on_event, &c);
		if (ret < 0) {
			code = rd_error("polling the ring buffer failed: %s", strerror(-ret));
			break;
		}
		fflush(stdout);
		now = mono_ms();
		if (next_ms && now >= next_ms) {
			print_summary(&c, (int)top, false);
			next_ms += (uint64_t)(interval * 1000);
		}
		if (duration && now - start_ms >= (uint64_t)(duration * 1000))
			break;
		if (have_child) {
			int st;

			if (waitpid(child.pid, &st, WNOHANG) == child.pid) {
				status = rd_wait_status(st);
				have_child = false;
				break;
			}
		}
	}
	if (have_child) {
		int st;

		/* Ctrl-C or --duration: the command ends with us. */
		kill(child.pid, rd_tracer_stop ? rd_tracer_stop : SIGTERM);
		waitpid(child.pid, &st, 0);
		status = rd_wait_status(st);
	}
	rd_tracer_poll(c.t, 0, on_event, &c);
	if (code == EXIT_OK) {
		if (c.folded)
			print_folded(&c);
		else
			code = print_summary(&c, (int)top, true);
	}
	if (code == EXIT_OK && optind < argc)
		code = status;
out:
	for (size_t i = 0; i < c.nfold; i++)
		free(c.fold[i].stack);
	free(c.fold);
	rd_summary_free(&c.prev);
	rd_tracer_free(c.t);
	return code;
}
