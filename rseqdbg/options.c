// SPDX-License-Identifier: GPL-2.0-only
/* The options every command shares, and the values several commands take (numbers, PIDs). */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

/* Each command's own options plus these; a command never lists them itself. */
static const struct option common_longopts[] = {
    {"json", no_argument, NULL, 'j'},
    {"pretty", no_argument, NULL, RD_OPT_PRETTY},
    {"help", no_argument, NULL, 'h'},
};
#define NCOMMON (sizeof(common_longopts) / sizeof(common_longopts[0]))
#define MAX_LONGOPTS 48

/* Whether the option just returned was written in its short form (-p rather than --pid). */
static bool opt_was_short;

/* "+:jh" + the command's letters, keeping its leading '+' (stop at the first operand). */
static void build_shortopts(char *buf, size_t len, const char *own)
{
	bool stop = own && own[0] == '+';

	snprintf(buf, len, "%s:jh%s", stop ? "+" : "", own ? own + stop : "");
}

static size_t build_longopts(struct option *all, const struct option *own)
{
	size_t n = 0;

	for (; own && own->name && n < MAX_LONGOPTS - NCOMMON - 1; own++)
		all[n++] = *own;
	memcpy(all + n, common_longopts, sizeof(common_longopts));
	n += NCOMMON;
	memset(all + n, 0, sizeof(*all));
	return n;
}

/* The option as the user wrote it, for a message about it. */
static const char *opt_text(char **argv, int c, char *buf, size_t len)
{
	const char *a = argv[optind - 1];

	if (c == '?' && optopt && a[0] == '-' && a[1] != '-') {
		snprintf(buf, len, "-%c", optopt);
		return buf;
	}
	return a;
}

static int usage_error(char **argv, int c)
{
	char buf[8];
	const char *opt = opt_text(argv, c, buf, sizeof(buf));

	if (c == ':')
		rd_error("%s: missing argument (try 'rseqdbg %s --help')", opt, rd.cmd);
	else if (optopt == 'p') /* -p meant --pretty before it meant --pid */
		rd_error("unknown option '-p' (indented JSON is --pretty; try 'rseqdbg %s --help')",
			 rd.cmd);
	else
		rd_error("unknown option '%s' (try 'rseqdbg %s --help')", opt, rd.cmd);
	return RD_OPT_ERROR;
}

int rd_getopt(int argc, char **argv, const struct rd_cmdline *cl)
{
	struct option all[MAX_LONGOPTS];
	char shortopts[64];
	int c, before;

	build_shortopts(shortopts, sizeof(shortopts), cl->shortopts);
	build_longopts(all, cl->longopts);
	opterr = 0;
	for (;;) {
		before = optind ? optind : 1;
		c = getopt_long(argc, argv, shortopts, all, NULL);
		opt_was_short = before < argc && argv[before][0] == '-' && argv[before][1] != '-';
		switch (c) {
		case 'j':
			rd.json = true;
			continue;
		case RD_OPT_PRETTY:
			rd.json = rd.pretty = true;
			continue;
		case 'h':
			cl->usage(stdout);
			return RD_OPT_HELP;
		case ':':
		case '?':
			return usage_error(argv, c);
		case -1:
			if (rd.pretty && rd_json_writer()) {
				rd_error("%s", rd_errmsg());
				return RD_OPT_ERROR;
			}
			return RD_OPT_END;
		default:
			return c;
		}
	}
}

int rd_opt_exit(int c)
{
	return c == RD_OPT_HELP ? EXIT_OK : EXIT_ERROR;
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

int rd_parse_pid(const char *opt, const char *what, const char *s, pid_t *pid)
{
	unsigned long long v;
	bool number = rd_parse_u64(s, &v);
	char name[4];

	if (number && v > 0 && v <= RD_PID_MAX) {
		*pid = (pid_t)v;
		return 0;
	}
	if (!opt_was_short) {
		rd_seterr("%s: '%s' is not a %s id", opt, s, what);
		return -EINVAL;
	}
	snprintf(name, sizeof(name), "-%c", opt[2]);
	/* Someone used to -p as --pretty wrote `-p FILE`: tell them what -p is now. */
	rd_seterr("%s: '%s' is not a %s id%s", name, s, what,
		  !number && !strcmp(opt, "--pid") ? " (-p is --pid; indented JSON is --pretty)"
						   : "");
	return -EINVAL;
}
