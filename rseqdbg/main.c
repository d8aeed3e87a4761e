// SPDX-License-Identifier: GPL-2.0-only
/* rseqdbg: dispatch to the subcommands. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "symfmt.h"

struct rd_global rd;
static const char *cur_cmd;

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
	fprintf(f, "Usage: rseqdbg [-j|--json] [-p|--pretty] COMMAND [ARGS...]\n"
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
	if (cur_cmd)
		fprintf(stderr, "rseqdbg: %s: %s\n", cur_cmd, rd_safe(msg));
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

void rd_warn(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "rseqdbg: %s%swarning: %s\n", cur_cmd ? cur_cmd : "", cur_cmd ? ": " : "",
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

bool rd_parse_u64(const char *s, unsigned long long *v)
{
	char *end;

	if (!s || !*s || *s == '-')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno == 0 && *end == '\0';
}

int main(int argc, char **argv)
{
	int i = 1, ret;

	/* Global options before the command; each command also accepts -j/-p itself. */
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-j") || !strcmp(a, "--json")) {
			rd.json = true;
		} else if (!strcmp(a, "-p") || !strcmp(a, "--pretty")) {
			rd.json = rd.pretty = true;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return EXIT_OK;
		} else if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
			printf("rseqdbg %s\n", RSEQDBG_VERSION);
			return EXIT_OK;
		} else {
			fprintf(stderr, "rseqdbg: unknown option '%s'\n", a);
			usage(stderr);
			return EXIT_ERROR;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return EXIT_ERROR;
	}
	for (size_t c = 0; c < sizeof(cmds) / sizeof(cmds[0]); c++) {
		if (strcmp(argv[i], cmds[c].name))
			continue;
		cur_cmd = cmds[c].name;
		rd.jw = jw_new(stdout, false);
		if (!rd.jw)
			return rd_error("out of memory");
		ret = cmds[c].fn(argc - i, argv + i);
		jw_free(rd.jw);
		return ret;
	}
	fprintf(stderr, "rseqdbg: unknown command '%s' (try 'rseqdbg --help')\n", argv[i]);
	return EXIT_ERROR;
}
