/* SPDX-License-Identifier: GPL-2.0-only */
/* Audit suppressions: rules "CHECK MODULE FUNCTION [REASON]" that accept the findings of a
 * check in the functions of a module (rseqdbg-audit(1), SUPPRESSIONS). */
#ifndef RSEQDBG_SUPPRESS_H
#define RSEQDBG_SUPPRESS_H

#include <stddef.h>

struct rd_suppression {
	char *check;  /* glob over check ids, case-insensitive */
	char *module; /* glob over the path, or with no '/' over its last component */
	char *func;   /* glob over the function name */
	char *reason; /* "" when the rule gives none */
	char *file;   /* where the rule was written: a file, or NULL for --suppress */
	unsigned int line;
};

struct rd_suppressions {
	struct rd_suppression *v;
	size_t n;
};

/* Add the rules of the file path (one a line; '#' starts a comment line). Returns 0 or
 * -errno; rd_errmsg() names path and line. */
int rd_suppressions_load(struct rd_suppressions *s, const char *path);
/* Add one rule given on the command line. Returns 0 or -EINVAL / -ENOMEM (rd_errmsg()). */
int rd_suppressions_add(struct rd_suppressions *s, const char *rule);
/* The first rule that accepts a finding of check in function func ("" when it has none) of
 * the module at path; NULL when none does. */
const struct rd_suppression *rd_suppressions_match(const struct rd_suppressions *s,
						   const char *check, const char *path,
						   const char *func);
void rd_suppressions_free(struct rd_suppressions *s);

#endif
