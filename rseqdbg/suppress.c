// SPDX-License-Identifier: GPL-2.0-only
/* Reading audit suppression rules and matching findings against them (suppress.h). */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "elfscan-audit.h"
#include "suppress.h"

/* The next field of the line at *p, NUL-terminated in place; NULL when there is none. */
static char *field(char **p)
{
	char *s = *p, *e;

	while (*s && isspace((unsigned char)*s))
		s++;
	if (!*s)
		return NULL;
	for (e = s; *e && !isspace((unsigned char)*e); e++)
		;
	*p = *e ? e + 1 : e;
	*e = '\0';
	return s;
}

static bool is_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* Parse one rule from line (modified); where names it in messages ("FILE:LINE" or
 * "--suppress"). */
static int parse_rule(struct rd_suppressions *s, char *line, const char *where, const char *file,
		      unsigned int lineno)
{
	char *p = line, *check, *module, *func, *reason, *end;
	struct rd_suppression *nv, *r;

	check = field(&p);
	module = field(&p);
	func = field(&p);
	if (!func) {
		rd_seterr("%s: a rule is CHECK MODULE FUNCTION [REASON], e.g. 'RSEQ037 "
			  "libtcmalloc.so* tcmalloc::*  no exit points declared'",
			  where);
		return -EINVAL;
	}
	if (!is_glob(check) && !elfscan_audit_find_check(check)) {
		rd_seterr("%s: unknown check '%s' (see 'rseqdbg audit --list-checks')", where,
			  check);
		return -EINVAL;
	}
	while (*p && isspace((unsigned char)*p))
		p++;
	reason = p;
	for (end = reason + strlen(reason); end > reason && isspace((unsigned char)end[-1]); end--)
		;
	*end = '\0';
	nv = realloc(s->v, (s->n + 1) * sizeof(*nv));
	if (!nv) {
		rd_seterr("out of memory");
		return -ENOMEM;
	}
	s->v = nv;
	r = &nv[s->n];
	*r = (struct rd_suppression){
	    .check = strdup(check),
	    .module = strdup(module),
	    .func = strdup(func),
	    .reason = strdup(reason),
	    .file = file ? strdup(file) : NULL,
	    .line = lineno,
	};
	s->n++;
	if (!r->check || !r->module || !r->func || !r->reason || (file && !r->file)) {
		rd_seterr("out of memory");
		return -ENOMEM;
	}
	return 0;
}

int rd_suppressions_add(struct rd_suppressions *s, const char *rule)
{
	char *line = strdup(rule);
	int err;

	if (!line) {
		rd_seterr("out of memory");
		return -ENOMEM;
	}
	err = parse_rule(s, line, "--suppress", NULL, 0);
	free(line);
	return err;
}

int rd_suppressions_load(struct rd_suppressions *s, const char *path)
{
	FILE *f = fopen(path, "re");
	char *line = NULL, *p, where[4096];
	unsigned int lineno = 0;
	size_t cap = 0;
	ssize_t n;
	int err = 0;

	if (!f) {
		err = -errno;
		rd_seterr("%s: %s", path, strerror(-err));
		return err;
	}
	errno = 0;
	while (!err && (n = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (strlen(line) != (size_t)n) {
			rd_seterr("%s:%u: a NUL byte: not a text file", path, lineno);
			err = -EINVAL;
			break;
		}
		for (p = line; *p && isspace((unsigned char)*p); p++)
			;
		if (!*p || *p == '#')
			continue;
		snprintf(where, sizeof(where), "%s:%u", path, lineno);
		err = parse_rule(s, p, where, path, lineno);
	}
	if (!err && ferror(f)) {
		/* a directory reads as EISDIR */
		err = -(errno ? errno : EIO);
		rd_seterr("%s: %s", path, strerror(-err));
	}
	free(line);
	fclose(f);
	return err;
}

static bool module_matches(const char *glob, const char *path)
{
	const char *base = strrchr(path, '/');

	if (strchr(glob, '/'))
		return !fnmatch(glob, path, 0);
	return !fnmatch(glob, base ? base + 1 : path, 0);
}

const struct rd_suppression *rd_suppressions_match(const struct rd_suppressions *s,
						   const char *check, const char *path,
						   const char *func)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct rd_suppression *r = &s->v[i];

		if (!fnmatch(r->check, check, FNM_CASEFOLD) && module_matches(r->module, path) &&
		    !fnmatch(r->func, func, 0))
			return r;
	}
	return NULL;
}

void rd_suppressions_free(struct rd_suppressions *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].check);
		free(s->v[i].module);
		free(s->v[i].func);
		free(s->v[i].reason);
		free(s->v[i].file);
	}
	free(s->v);
	s->v = NULL;
	s->n = 0;
}
