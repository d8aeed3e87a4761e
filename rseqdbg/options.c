// SPDX-License-Identifier: GPL-2.0-only
/* The options every command shares, and the values several commands take (numbers, PIDs). */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
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

/* The optimal string alignment distance of a and b: the fewest insertions, deletions,
 * substitutions and swaps of two neighbours that turn one into the other. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), d[RD_NAME_MAX + 1][RD_NAME_MAX + 1];

	if (la > RD_NAME_MAX || lb > RD_NAME_MAX)
		return SIZE_MAX;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			size_t v = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	}
	return d[la][lb];
}

const char *rd_closest(const char *word, const char *const *names, size_t n, size_t len)
{
	const char *best = NULL, *longer = NULL;
	size_t bestd = SIZE_MAX, nlonger = 0;
	char w[RD_NAME_MAX + 1];

	if (len > RD_NAME_MAX)
		return NULL;
	memcpy(w, word, len);
	w[len] = '\0';
	for (size_t i = 0; i < n; i++) {
		size_t d = edit_distance(w, names[i]);

		if (d < bestd) {
			best = names[i];
			bestd = d;
		}
		if (len && !strncmp(names[i], w, len)) {
			longer = names[i];
			nlonger++;
		}
	}
	if (bestd == 0) /* a name itself: what is wrong is not its spelling */
		return NULL;
	/* One typo in four letters, at least one; never most of what was written. */
	if (best && bestd <= (strlen(best) >= 8 ? strlen(best) / 4 : 1) && bestd < len)
		return best;
	return nlonger == 1 ? longer : NULL;
}

const char *rd_closest_option(const char *arg, const struct option *longopts)
{
	const char *names[MAX_LONGOPTS];
	size_t n = 0;

	if (strncmp(arg, "--", 2) || !arg[2])
		return NULL;
	for (; longopts->name && n < MAX_LONGOPTS; longopts++)
		names[n++] = longopts->name;
	arg += 2;
	return rd_closest(arg, names, n, strcspn(arg, "="));
}

/* Whether "--name=value" names an option that takes no value. */
static bool takes_no_argument(const char *arg, const struct option *all)
{
	size_t len = strcspn(arg + 2, "=");

	for (; all->name; all++)
		if (strlen(all->name) == len && !strncmp(all->name, arg + 2, len))
			return all->has_arg == no_argument;
	return false;
}

/* Whether "--name" is the start of several options (getopt takes a start naming one), listed
 * into list[len]. */
static bool ambiguous(const char *arg, const struct option *all, char *list, size_t len)
{
	size_t n = strcspn(arg + 2, "="), used = 0, count = 0;

	if (strncmp(arg, "--", 2) || !n)
		return false;
	list[0] = '\0';
	for (; all->name; all++) {
		if (strncmp(all->name, arg + 2, n) || used >= len)
			continue;
		used += snprintf(list + used, len - used, "%s--%s", count ? ", " : "", all->name);
		count++;
	}
	return count > 1;
}

static int usage_error(char **argv, int c, const struct option *all)
{
	char buf[8], list[256];
	const char *opt = opt_text(argv, c, buf, sizeof(buf)), *near, *eq;

	if (c == ':')
		rd_error("%s: missing argument (try 'rseqdbg %s --help')", opt, rd.cmd);
	else if (optopt == 'p') /* -p meant --pretty before it meant --pid */
		rd_error("unknown option '-p' (indented JSON is --pretty; try 'rseqdbg %s --help')",
			 rd.cmd);
	else if (!strncmp(opt, "--", 2) && (eq = strchr(opt, '=')) && takes_no_argument(opt, all))
		rd_error("option '%.*s' takes no argument", (int)(eq - opt), opt);
	else if (ambiguous(opt, all, list, sizeof(list)))
		rd_error("option '%s' is ambiguous: %s", opt, list);
	else if ((near = rd_closest_option(opt, all)))
		rd_error("unknown option '%s'; did you mean '--%s'?", opt, near);
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
			return usage_error(argv, c, all);
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
