// SPDX-License-Identifier: GPL-2.0-only
/* rseqdbg: dispatch to the subcommands. */
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "symfmt.h"

struct rd_global rd;

static const struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} cmds[] = {
	{ "scan", cmd_scan, "decode the rseq descriptor tables of ELF files or a process" },
	{ "audit", cmd_audit, "check rseq tables and critical-section code" },
	{ "step", cmd_step, "single-step a program, stepping over critical sections" },
	{ "trace", cmd_trace, "trace rseq aborts, migrations and cpu_id updates live (eBPF)" },
	{ "stat", cmd_stat, "run a command and summarize its rseq activity (eBPF)" },
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: rseqdbg [-j|--json] [--pretty] COMMAND [ARGS...]\n"
		   "       rseqdbg COMMAND --help\n"
		   "       rseqdbg --version\n\n"
		   "Debugging and tracing for Linux restartable sequences (rseq).\n\nCommands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-7s %s\n", cmds[i].name, cmds[i].help);
	fprintf(f, "\nExit status: 0 success, 1 checks failed (audit), 2 error.\n"
		   "See rseqdbg(1) and rseqdbg-COMMAND(1).\n");
}

int rd_error(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* Escaped: a name from a file must not break the one line or reach the terminal raw. */
	if (rd.cmd)
		fprintf(stderr, "rseqdbg: %s: %s\n", rd.cmd, rd_safe(msg));
	else
		fprintf(stderr, "rseqdbg: %s\n", rd_safe(msg));
	if (rd.json && rd.jw) {
		jw_obj_open(rd.jw);
		jw_kstr(rd.jw, "error", msg);
		jw_obj_close(rd.jw);
		jw_end(rd.jw);
	}
	return EXIT_ERROR;
}

void rd_file_error(const char *path, const char *msg)
{
	size_t plen = strlen(path);
	char line[1024];
	bool json = rd.json;

	if (!strncmp(msg, path, plen) && !strncmp(msg + plen, ": ", 2))
		snprintf(line, sizeof(line), "%s", msg);
	else
		snprintf(line, sizeof(line), "%s: %s", path, msg);
	fflush(stdout);
	rd.json = false;
	rd_error("%s", line);
	rd.json = json;
	if (json) {
		jw_obj_open(rd.jw);
		jw_kstr(rd.jw, "path", path);
		jw_kstr(rd.jw, "error", line);
		jw_obj_close(rd.jw);
	}
}

static __thread char errmsg[512];

void rd_seterr(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errmsg, sizeof(errmsg), fmt, ap);
	va_end(ap);
}

const char *rd_errmsg(void)
{
	return errmsg;
}

void rd_warn(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "rseqdbg: %s%swarning: %s\n", rd.cmd ? rd.cmd : "", rd.cmd ? ": " : "",
		rd_safe(msg));
}

int rd_json_writer(void)
{
	struct jw *w = jw_new(stdout, rd.pretty);

	if (!w)
		return rd_error("out of memory");
	jw_free(rd.jw);
	rd.jw = w;
	return EXIT_OK;
}

/* Options before the command; each command takes them again after its name. */
static int global_opts(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },   { "pretty", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },   { "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+jhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			rd.json = true;
			break;
		case 'P':
			rd.json = rd.pretty = true;
			break;
		case 'h':
			usage(stdout);
			return RD_OPT_HELP;
		case 'V':
			printf("rseqdbg %s\n", RSEQDBG_VERSION);
			return RD_OPT_HELP;
		default:
			if (optopt == 'p')
				rd_error("unknown option '-p' (indented JSON is --pretty; -p PID "
					 "follows the command)");
			else
				rd_error("unknown option '%s'", argv[optind - 1]);
			usage(stderr);
			return RD_OPT_ERROR;
		}
	}
	return RD_OPT_END;
}

int main(int argc, char **argv)
{
	int c = global_opts(argc, argv), i = optind, ret;

	if (c != RD_OPT_END)
		return rd_opt_exit(c);
	if (i >= argc) {
		usage(stderr);
		return EXIT_ERROR;
	}
	for (size_t n = 0; n < sizeof(cmds) / sizeof(cmds[0]); n++) {
		if (strcmp(argv[i], cmds[n].name))
			continue;
		rd.cmd = cmds[n].name;
		rd.jw = jw_new(stdout, rd.pretty);
		if (!rd.jw)
			return rd_error("out of memory");
		optind = 0; /* getopt starts over, with the command's ordering rules */
		ret = cmds[n].fn(argc - i, argv + i);
		jw_free(rd.jw);
		return ret;
	}
	fprintf(stderr, "rseqdbg: unknown command '%s' (try 'rseqdbg --help')\n", argv[i]);
	return EXIT_ERROR;
}
