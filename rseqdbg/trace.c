// SPDX-License-Identifier: GPL-2.0-only
/* rseqdbg trace: rseq aborts, migrations and cpu_id updates, live or summarized. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "symfmt.h"
#include "trace/output.h"
#include "trace/tracer.h"

static void usage(FILE *f)
{
	fprintf(
	    f, "Usage: rseqdbg trace [OPTIONS] [-- CMD [ARGS...]]\n"
	       "       rseqdbg trace --check\n\n"
	       "Trace rseq critical-section aborts (with their cause, section and interrupted\n"
	       "instruction), migrations and cpu_id updates with eBPF, system-wide or for the\n"
	       "processes chosen below. Ctrl-C, --duration, the end of CMD or of every -p\n"
	       "process ends it and prints a summary.\n"
	       "Needs root, or CAP_BPF and CAP_PERFMON.\n\n"
	       "Filters (applied in the kernel):\n"
	       "  -p, --pid PID         trace process PID (repeatable); end when all have ended\n"
	       "  -t, --tid TID         trace thread TID (repeatable)\n"
	       "      --comm NAME       trace threads whose command name is NAME\n"
	       "      --cgroup PATH     trace tasks in the cgroup v2 directory PATH or below it\n"
	       "  -- CMD ARGS           run CMD and trace it, its threads and its children from\n"
	       "                        its first instruction; exit with its status\n\n"
	       "Output (records on standard output, whole lines, one write each):\n"
	       "  -o, --output FILE     write records and summaries to FILE instead (keeps\n"
	       "                        them apart from CMD's output); errors stay on stderr\n"
	       "      --events LIST     events to print: abort,user-abort,migrate,update,signal\n"
	       "                        or all (default: abort,user-abort,migrate)\n"
	       "      --no-uprobes      no uprobes on the abort handlers: no user-abort events\n"
	       "                        and no handler entries counted\n"
	       "      --summary         print no events, only summaries\n"
	       "      --interval S      with --summary, print one every S seconds (with the\n"
	       "                        rates over the last interval)\n"
	       "      --duration S      stop after S seconds\n"
	       "      --top N           sections shown in a summary (default 10, 0 = all)\n"
	       "      --stack           add the user stack of each aborting thread\n"
	       "      --folded          print aborting stacks folded for flame graphs at the end\n"
	       "      --ringbuf-size B  event ring buffer size in bytes (power of 2, >= 4096)\n"
	       "  -j, --json            JSON lines: one object per event or summary; key \"kind\"\n"
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
		else if (!strcmp(tok, "user-abort"))
			*emit |= 1u << RT_EV_USER_ABORT;
		else if (!strcmp(tok, "all"))
			*emit |= 1u << RT_EV_ABORT | 1u << RT_EV_MIGRATE | 1u << RT_EV_UPDATE |
				 1u << RT_EV_SIGNAL | 1u << RT_EV_USER_ABORT;
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

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* What the command line asks for, besides the tracer's own options. */
struct trace_args {
	struct rd_tracer_opts o;
	const char *output; /* -o */
	pid_t pids[RD_MAX_FILTER], tids[RD_MAX_FILTER];
	double interval, duration;
	unsigned long long top;
	bool check;
};

static int parse_ringbuf_size(const char *s, uint32_t *size)
{
	unsigned long long v;

	if (!rd_parse_u64(s, &v) || v < 4096 || v > (1ULL << 30) || (v & (v - 1)))
		return rd_error("--ringbuf-size: '%s' is not a power of 2 between 4096 and 1 GiB",
				s);
	*size = (uint32_t)v;
	return 0;
}

enum {
	O_EVENTS = 256,
	O_SUMMARY,
	O_INTERVAL,
	O_DURATION,
	O_TOP,
	O_STACK,
	O_FOLDED,
	O_RINGBUF,
	O_CHECK,
	O_NO_UPROBES,
};

/* One option of the command line; 0 or an exit status. */
static int trace_opt(struct trace_args *a, struct rd_trace_out *c, int opt, const char *arg)
{
	switch (opt) {
	case 'o':
		a->output = arg;
		return 0;
	case 'p':
	case 't':
	case RD_FOPT_COMM:
	case RD_FOPT_CGROUP:
		return rd_filter_opt(&a->o, opt, arg) ? rd_error("%s", rd_errmsg()) : 0;
	case O_EVENTS:
		if (parse_events(arg, &a->o.emit))
			return rd_error(
			    "--events: '%s' is not a list of abort, user-abort, migrate, "
			    "update, signal or all",
			    arg);
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
	case O_NO_UPROBES:
		a->o.no_uprobes = true;
		return 0;
	}
	return EXIT_ERROR;
}

static int parse_opts(struct trace_args *a, struct rd_trace_out *c, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"pid", required_argument, NULL, 'p'},
	    {"tid", required_argument, NULL, 't'},
	    {"comm", required_argument, NULL, RD_FOPT_COMM},
	    {"cgroup", required_argument, NULL, RD_FOPT_CGROUP},
	    {"events", required_argument, NULL, O_EVENTS},
	    {"summary", no_argument, NULL, O_SUMMARY},
	    {"interval", required_argument, NULL, O_INTERVAL},
	    {"duration", required_argument, NULL, O_DURATION},
	    {"top", required_argument, NULL, O_TOP},
	    {"stack", no_argument, NULL, O_STACK},
	    {"folded", no_argument, NULL, O_FOLDED},
	    {"ringbuf-size", required_argument, NULL, O_RINGBUF},
	    {"check", no_argument, NULL, O_CHECK},
	    {"no-uprobes", no_argument, NULL, O_NO_UPROBES},
	    {0},
	};
	static const struct rd_cmdline cl = {"+o:p:t:", longopts, usage};
	int opt, ret;

	a->o.pids = a->pids;
	a->o.tids = a->tids;
	a->o.emit = 1u << RT_EV_ABORT | 1u << RT_EV_USER_ABORT | 1u << RT_EV_MIGRATE;
	a->top = 10;
	while ((opt = rd_getopt(argc, argv, &cl)) != RD_OPT_END) {
		if (opt < 0)
			return rd_opt_exit(opt) == EXIT_OK ? -1 : EXIT_ERROR;
		ret = trace_opt(a, c, opt, optarg);
		if (ret)
			return ret;
	}
	return 0;
}

/* --check: what this kernel supports, whether the programs load, the mode they would use. */
static int check_kernel(const struct rd_features *f)
{
	const char *need = rd_tracer_privilege_missing();

	/* A mode is named only once the programs have loaded on this kernel. */
	if (need)
		return rd_error("--check loads the BPF programs: %s", need);
	if (!rd_features_missing(f) && rd_tracer_check(f)) {
		rd_features_print(f, rd_errmsg());
		return EXIT_FINDINGS;
	}
	rd_features_print(f, NULL);
	return rd_features_missing(f) ? EXIT_FINDINGS : EXIT_OK;
}

/* What the options ask of the kernel side; an exit status when they cannot be met. */
static int settle_opts(struct trace_args *a, const struct rd_trace_out *c,
		       const struct rd_features *f)
{
	const char *missing;

	if (a->interval && !c->summary)
		return rd_error("--interval needs --summary");
	if (c->summary && !c->folded)
		a->o.emit = 0; /* the maps have everything a summary needs */
	if (c->folded)
		a->o.emit = 1u << RT_EV_ABORT;
	a->o.stack = c->stack;
	missing = rd_tracer_unavailable(f);
	return missing ? rd_error("%s", missing) : 0;
}

/* The processes of -p, watched through pidfds so that the trace ends with the last of them, as
 * perf and strace do. */
struct pid_watch {
	struct pollfd fds[RD_MAX_FILTER];
	size_t n, live;
};

static void unwatch_pids(struct pid_watch *pw)
{
	for (size_t i = 0; i < pw->n; i++)
		if (pw->fds[i].fd >= 0)
			close(pw->fds[i].fd);
	pw->n = pw->live = 0;
}

static void watch_pids(struct pid_watch *pw, const pid_t *pids, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int fd = (int)syscall(SYS_pidfd_open, pids[i], 0);

		/* ESRCH: gone already. Another error (no pidfd_open before 5.3): none watched, so
		 * that the trace runs on as it would without this. */
		if (fd < 0 && errno != ESRCH) {
			unwatch_pids(pw);
			return;
		}
		pw->fds[pw->n++] = (struct pollfd){.fd = fd, .events = POLLIN};
		pw->live += fd >= 0;
	}
}

/* Whether every watched process has ended (false when none is watched). */
static bool pids_ended(struct pid_watch *pw)
{
	if (!pw->n)
		return false;
	if (pw->live && poll(pw->fds, pw->n, 0) > 0) {
		for (size_t i = 0; i < pw->n; i++) {
			if (pw->fds[i].fd < 0 || !pw->fds[i].revents)
				continue;
			close(pw->fds[i].fd);
			pw->fds[i].fd = -1; /* poll() skips it from now on */
			pw->live--;
		}
	}
	return !pw->live;
}

/* Poll until Ctrl-C, --duration, the end of the command or of the -p processes; *status: the
 * command's. 0, or -errno (rd_errmsg()) when polling failed. */
static int run(const struct trace_args *a, struct rd_trace_out *c, struct rd_spawn *child,
	       struct pid_watch *pw, int *status)
{
	uint64_t start_ms = mono_ms(), interval_ms = (uint64_t)(a->interval * 1000);
	uint64_t next_ms = interval_ms ? start_ms + interval_ms : 0, now;
	int ret, st;

	while (!rd_tracer_stop) {
		ret = rd_tracer_poll(c->t, 100, rd_out_event, c);
		if (ret < 0) {
			rd_seterr("polling the ring buffer failed: %s", strerror(-ret));
			return ret;
		}
		now = mono_ms();
		if (next_ms && now >= next_ms) {
			if (rd_out_summary(c, (int)a->top, false))
				rd_error("%s", rd_errmsg());
			next_ms += interval_ms;
		}
		if (a->duration && now - start_ms >= (uint64_t)(a->duration * 1000))
			break;
		if (child->pid > 0 && waitpid(child->pid, &st, WNOHANG) == child->pid) {
			*status = rd_wait_status(st);
			child->pid = 0;
			break;
		}
		if (pids_ended(pw))
			break;
	}
	return 0;
}

int cmd_trace(int argc, char **argv)
{
	struct trace_args a = {};
	struct rd_spawn child = RD_SPAWN_INIT;
	struct rd_trace_out c = {};
	struct pid_watch pw = {};
	FILE *out = stdout;
	struct rd_features f;
	char **cmd;
	int ret, code, status = 0, st;

	ret = parse_opts(&a, &c, argc, argv);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	cmd = optind < argc ? argv + optind : NULL;
	rd_features_probe(&f);
	if (a.check)
		return check_kernel(&f);
	code = settle_opts(&a, &c, &f);
	if (code)
		return code;
	if (a.output) {
		out = rd_output_open(a.output);
		if (!out)
			return rd_error("%s", rd_errmsg());
	}
	if (rd_out_init(&c, out)) {
		code = rd_error("%s", rd_errmsg());
		goto out;
	}
	ret = rd_tracer_start(&a.o, &f, cmd, &child, &c.t);
	if (ret) {
		rd_error("%s", rd_errmsg());
		code = ret > 0 ? 127 : EXIT_ERROR;
		goto out;
	}
	if (!cmd)
		/* On stderr, also with --json: scripts wait for it before starting work. */
		fprintf(stderr, "rseqdbg: trace: tracing rseq events (mode %s); Ctrl-C to end\n",
			rd_mode_name(rd_tracer_mode(c.t)));
	for (size_t i = 0; i < a.o.npids; i++)
		rd_tracer_learn_pid(c.t, a.pids[i]);
	if (!cmd)
		watch_pids(&pw, a.pids, a.o.npids);
	code = run(&a, &c, &child, &pw, &status) ? rd_error("%s", rd_errmsg()) : EXIT_OK;
	/* Processes held at their exec go on, and the notices still queued are read while the
	 * output is open: rd_tracer_free would otherwise read them after the summary. */
	rd_tracer_unhold(c.t);
	if (child.pid > 0) {
		/* Ctrl-C or --duration: the command ends with us. */
		kill(child.pid, rd_tracer_stop ? rd_tracer_stop : SIGTERM);
		waitpid(child.pid, &st, 0);
		status = rd_wait_status(st);
	}
	rd_tracer_poll(c.t, 0, rd_out_event, &c);
	if (code == EXIT_OK && c.folded)
		rd_out_folded(&c);
	else if (code == EXIT_OK)
		code = rd_out_summary(&c, (int)a.top, true) ? rd_error("%s", rd_errmsg()) : EXIT_OK;
	if (code == EXIT_OK && c.write_err)
		code = rd_error("writing %s failed: %s",
				a.output ? a.output : "the standard output", strerror(c.write_err));
	if (code == EXIT_OK && cmd)
		code = status;
out:
	unwatch_pids(&pw);
	rd_out_free(&c);
	rd_tracer_free(c.t);
	if (out != stdout && rd_output_close(out, a.output, stdout)) {
		rd_error("%s", rd_errmsg());
		if (code == EXIT_OK)
			code = EXIT_ERROR;
	}
	return code;
}
