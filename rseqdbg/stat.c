// SPDX-License-Identifier: GPL-2.0-only
/* rseqdbg stat: run a command under the rseq tracer and summarize its rseq activity. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "trace/tracer.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rseqdbg stat [OPTIONS] -- CMD [ARGS...]\n\n"
		"Run CMD (and every thread and child it starts, from its first instruction)\n"
		"under the rseq tracer; when it exits, print its rseq aborts per critical\n"
		"section and cause, migrations, cpu_id updates and abort rate, then exit with\n"
		"CMD's exit status. Needs root, or CAP_BPF and CAP_PERFMON.\n\n"
		"Options:\n"
		"  -o, --output FILE    write the summary to FILE (default: standard error)\n"
		"      --top N          show the N sections with most aborts (default: all)\n"
		"      --no-uprobes     no uprobes on the abort handlers: no handler entries\n"
		"                       counted (each costs a trap into the kernel)\n"
		"  -j, --json           print the summary as one JSON object\n"
		"      --pretty         pretty-printed JSON (implies --json)\n"
		"  -h, --help           print this help\n\n"
		"Exit status: CMD's status (128 + signal when it was killed), 127 when CMD cannot\n"
		"be run, 2 when the tracer cannot run.\n");
}

/* The summary, on out or as JSON: 0, or -errno (rd_errmsg()). */
static int write_summary(struct rd_tracer *t, FILE *out, char **argv, pid_t pid, int status,
			 int top)
{
	struct rd_summary s;
	struct jw *w = rd.jw;
	int err = rd_tracer_summary(t, &s);

	if (err) {
		rd_seterr("reading the BPF maps failed: %s", strerror(-err));
		return err;
	}
	if (!rd.json) {
		fprintf(out, "\nrseqdbg stat: %s (pid %d) exited with status %d\n", argv[0],
			(int)pid, status);
		rd_summary_print(&s, top, out);
		fflush(out);
		rd_summary_free(&s);
		return 0;
	}
	jw_obj_open(w);
	jw_key(w, "command");
	jw_arr_open(w);
	for (char **a = argv; *a; a++)
		jw_str(w, *a);
	jw_arr_close(w);
	jw_ku64(w, "pid", (uint64_t)pid);
	jw_ki64(w, "exit_status", status);
	rd_summary_json(&s, w, top);
	jw_obj_close(w);
	jw_end(w);
	rd_summary_free(&s);
	return 0;
}

static int parse_opts(int argc, char **argv, const char **output, unsigned long long *top,
		      struct rd_tracer_opts *o)
{
	static const struct option longopts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"top", required_argument, NULL, 'T'},
	    {"no-uprobes", no_argument, NULL, 'U'},
	    {0},
	};
	static const struct rd_cmdline cl = {"+o:", longopts, usage};
	int c;

	while ((c = rd_getopt(argc, argv, &cl)) != RD_OPT_END) {
		switch (c) {
		case 'o':
			*output = optarg;
			break;
		case 'T':
			if (!rd_parse_u64(optarg, top) || *top > 1000000)
				return rd_error("--top: '%s' is not a count", optarg);
			break;
		case 'U':
			o->no_uprobes = true;
			break;
		default:
			return c;
		}
	}
	if (optind >= argc)
		return rd_error(
		    "no command to run (usage: rseqdbg stat [OPTIONS] -- CMD [ARGS...])");
	return 0;
}

/* Poll until the command exits; *status is its exit status. Its pidfd wakes the poll when it
 * exits: SIGCHLD alone may not, merged with the one its continuation after a hold sent.
 * 0, or -errno (rd_errmsg()) when polling failed. */
static int wait_command(struct rd_tracer *t, pid_t pid, int *status)
{
	struct pollfd p[2] = {{.fd = rd_tracer_fd(t), .events = POLLIN},
			      {.fd = pidfd_open(pid, 0), .events = POLLIN}};
	int ret = 0, st;

	for (;;) {
		if (poll(p, p[1].fd >= 0 ? 2 : 1, 100) < 0 && errno != EINTR)
			ret = -errno;
		if (!ret)
			ret = rd_tracer_poll(t, 0, NULL, NULL);
		if (ret < 0) {
			rd_tracer_unhold(t);
			kill(pid, SIGTERM);
			waitpid(pid, &st, 0);
			break;
		}
		if (rd_tracer_stop) {
			/* Ctrl-C reaches the whole foreground group; a plain SIGTERM to us is
			 * passed on so that the command still ends and the summary is printed. */
			kill(pid, rd_tracer_stop);
			rd_tracer_stop = 0;
		}
		if (waitpid(pid, &st, WNOHANG) == pid) {
			*status = rd_wait_status(st);
			break;
		}
	}
	if (p[1].fd >= 0)
		close(p[1].fd);
	if (ret < 0) {
		rd_seterr("polling the ring buffer failed: %s", strerror(-ret));
		return ret;
	}
	return 0;
}

int cmd_stat(int argc, char **argv)
{
	struct rd_tracer_opts o = {.follow_forks = true};
	struct rd_spawn child = RD_SPAWN_INIT;
	const char *output = NULL, *missing;
	struct rd_tracer *t = NULL;
	struct rd_features f;
	unsigned long long top = 0;
	FILE *out = stderr;
	int ret, status = 0, code;

	/* The summary and, in JSON mode, an error object go to one stream: stderr or --output. */
	if (rd_json_writer_to(stderr))
		return rd_error("%s", rd_errmsg());
	ret = parse_opts(argc, argv, &output, &top, &o);
	if (ret)
		return ret < 0 ? rd_opt_exit(ret) : ret;
	rd_features_probe(&f);
	missing = rd_tracer_unavailable(&f);
	if (missing)
		return rd_error("%s", missing);
	if (output) {
		out = rd_output_open(output);
		if (!out)
			return rd_error("%s", rd_errmsg());
	}
	ret = rd_tracer_start(&o, &f, argv + optind, &child, &t);
	if (ret) {
		rd_error("%s", rd_errmsg());
		code = ret > 0 ? 127 : EXIT_ERROR;
		goto out;
	}
	if (wait_command(t, child.pid, &status)) {
		code = rd_error("%s", rd_errmsg());
		goto out;
	}
	rd_tracer_poll(t, 0, NULL, NULL);
	if (write_summary(t, out, argv + optind, child.pid, status, (int)top))
		code = rd_error("%s", rd_errmsg());
	else
		code = status;
out:
	rd_tracer_free(t);
	if (out != stderr && rd_output_close(out, output, stderr)) {
		rd_error("%s", rd_errmsg());
		if (!code)
			code = EXIT_ERROR;
	}
	return code;
}
