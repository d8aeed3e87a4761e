/* SPDX-License-Identifier: GPL-2.0-only */
/* An audit baseline: the findings of a previous `rseqdbg audit --sarif` or `--json` run, by
 * fingerprint, so that a run reports only the findings that are new. */
#ifndef RSEQDBG_BASELINE_H
#define RSEQDBG_BASELINE_H

#include <stdbool.h>
#include <stddef.h>

struct rd_baseline;

/* One finding of the baseline. */
struct rd_baseline_entry {
	const char *fp;	     /* its fingerprint */
	const char *check;   /* "RSEQ037" */
	const char *path;    /* the file or module it was found in */
	const char *module;  /* path's last component, as fingerprints name it */
	const char *message; /* NULL when the baseline has none */
	bool matched;	     /* a finding of this run has its fingerprint */
};

/* Read path, a SARIF log (a result whose baselineState is "absent" is no finding of it) or a
 * JSON document of rseqdbg audit. Returns 0 or -errno; rd_errmsg() names path and what is
 * wrong with it. */
int rd_baseline_load(const char *path, struct rd_baseline **res);
void rd_baseline_free(struct rd_baseline *b); /* NULL-safe */
/* Match a finding of this run: true when the baseline has an entry with fingerprint fp not
 * yet matched (which is now). */
bool rd_baseline_match(struct rd_baseline *b, const char *fp);
/* This run audited a file or module whose last path component is module: the entries of
 * the baseline in it that no finding matches are absent. */
void rd_baseline_audited(struct rd_baseline *b, const char *module);
/* Every entry, in the baseline's order; absent: not matched, in a module audited. */
size_t rd_baseline_count(const struct rd_baseline *b);
const struct rd_baseline_entry *rd_baseline_entry(const struct rd_baseline *b, size_t i);
bool rd_baseline_absent(const struct rd_baseline *b, size_t i);
/* The last component of a path, as fingerprints and baselines name modules. */
const char *rd_basename(const char *path);

#endif
