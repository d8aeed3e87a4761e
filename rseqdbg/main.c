// SPDX-License-Identifier: GPL-2.0-only
/* rseqdbg: dispatch to the subcommands. */
#include <getopt.h>
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
    {"scan", cmd_scan, "decode the rseq descriptor tables of ELF files or a process"},
    {"audit", cmd_audit, "check rseq tables and critical-section code"},
    {"step", cmd_step, "single-step a program, stepping over critical sections"},
    {"trace", cmd_trace, "trace rseq aborts, migrations and cpu_id updates live (eBPF)"},
    {"stat", cmd_stat, "run a command and summarize its rseq activity (eBPF)"},
    {"exporter", cmd_exporter, "export rseq counters to Prometheus (eBPF, OpenMetrics)"},
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: rseqdbg [-j|--json] [--pretty] COMMAND [ARGS...]\n"
		   "       rseqdbg COMMAND --help\n"
		   "       rseqdbg --version\n\n"
		   "Debugging and tracing for Linux restartable sequences (rseq).\n\nCommands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].help);
	fprintf(f, "\nExit status: 0 success, 1 checks failed (audit), 2 error.\n"
		   "See rseqdbg(1) and rseqdbg-COMMAND(1).\n");
}

static int unknown_command(const char *word)
{
	const char *names[sizeof(cmds) / sizeof(cmds[0])], *near;

	for (size_t n = 0; n < sizeof(cmds) / sizeof(cmds[0]); n++)
		names[n] = cmds[n].name;
	near = rd_closest(word, names, sizeof(cmds) / sizeof(cmds[0]), strlen(word));
	if (near)
		return rd_error("'%s' is not a command; did you mean '%s'?", word, near);
	return rd_error("'%s' is not a command (try 'rseqdbg --help')", word);
}

/* Options before the command; each command takes them again after its name. */
static int global_opts(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"pretty", no_argument, NULL, 'P'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {0},
	};
	const char *near;
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
			else if ((near = rd_closest_option(argv[optind - 1], longopts)))
				rd_error("unknown option '%s'; did you mean '--%s'?",
					 argv[optind - 1], near);
			else
				rd_error("unknown option '%s' (try 'rseqdbg --help')",
					 argv[optind - 1]);
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
	return unknown_command(argv[i]);
}
