// SPDX-License-Identifier: GPL-2.0-only
/* Reading an audit baseline and matching this run's findings against it (baseline.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "baseline.h"
#include "common.h"
#include "jsonread.h"

/* The SARIF fingerprint key audit writes (sarif_result) and reads here. */
#define FP_KEY "rseqdbg/v1"
/* A baseline larger than this is no output of audit anyone keeps. */
#define MAX_BASELINE (1ULL << 30)

struct entry {
	struct rd_baseline_entry e;
	size_t next_fp; /* the next entry with the same fingerprint, +1; 0: none */
	size_t mod;	/* its module in mods */
};

struct module {
	const char *name;
	bool audited;
};

/* Open addressing: slot holds an index + 1 (0: empty), keyed by a string of that index. */
struct table {
	size_t *slot;
	size_t mask;
};

struct rd_baseline {
	struct jv *doc; /* the strings of the entries live in it */
	struct entry *v;
	size_t n, cap;
	struct module *mods;
	size_t nmods;
	struct table by_fp, by_mod;
};

const char *rd_basename(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static uint64_t hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

static int table_init(struct table *t, size_t n)
{
	size_t cap = 16;

	while (cap < 2 * n)
		cap *= 2;
	t->slot = calloc(cap, sizeof(*t->slot));
	t->mask = cap - 1;
	return t->slot ? 0 : -ENOMEM;
}

static const char *fp_key(const struct rd_baseline *b, size_t i)
{
	return b->v[i].e.fp;
}

static const char *mod_key(const struct rd_baseline *b, size_t i)
{
	return b->mods[i].name;
}

/* The slot of key: holding its index + 1, or 0 where it would go. */
static size_t *table_find(const struct rd_baseline *b, const struct table *t, const char *key,
			  const char *(*key_of)(const struct rd_baseline *, size_t))
{
	size_t i = hash(key) & t->mask;

	while (t->slot[i] && strcmp(key_of(b, t->slot[i] - 1), key))
		i = (i + 1) & t->mask;
	return &t->slot[i];
}

static int loaded(const char *path, const char *what)
{
	rd_seterr("%s: %s", path, what);
	return -EINVAL;
}

static int add(struct rd_baseline *b, const char *fp, const char *check, const char *path,
	       const char *message)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 64;
		struct entry *nv = realloc(b->v, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		b->v = nv;
		b->cap = cap;
	}
	b->v[b->n++] = (struct entry){
	    .e = {.fp = fp,
		  .check = check,
		  .path = path,
		  .module = rd_basename(path),
		  .message = message},
	};
	return 0;
}

/* A SARIF log: the results of every run, but those a baseline run reported absent. */
static int load_sarif(struct rd_baseline *b, const char *path, const struct jv *runs)
{
	if (runs->type != JV_ARRAY)
		return loaded(path, "\"runs\" is not an array");
	for (size_t r = 0; r < runs->n; r++) {
		const struct jv *res = jv_get(&runs->v[r], "results");

		if (!res)
			continue;
		if (res->type != JV_ARRAY)
			return loaded(path, "\"results\" is not an array");
		for (size_t i = 0; i < res->n; i++) {
			const struct jv *x = &res->v[i];
			const char *state = jv_str(jv_get(x, "baselineState"));
			const char *fp = jv_str(jv_get(jv_get(x, "partialFingerprints"), FP_KEY));
			const char *bin = jv_str(jv_get(jv_get(x, "properties"), "binary"));
			const char *check = jv_str(jv_get(x, "ruleId"));

			if (state && !strcmp(state, "absent"))
				continue;
			if (!fp)
				fp = jv_str(jv_get(jv_get(x, "fingerprints"), FP_KEY));
			if (!fp || !bin || !check) {
				rd_seterr(
				    "%s: result %zu of run %zu has no " FP_KEY
				    " fingerprint, ruleId or properties.binary (not a log of "
				    "rseqdbg audit --sarif, or of a version before baselines)",
				    path, i, r);
				return -EINVAL;
			}
			if (add(b, fp, check, bin, jv_str(jv_get(jv_get(x, "message"), "text"))))
				return -ENOMEM;
		}
	}
	return 0;
}

/* rseqdbg audit --json: the findings of every file or module that could be audited. */
static int load_json(struct rd_baseline *b, const char *path, const struct jv *units)
{
	if (units->type != JV_ARRAY)
		return loaded(path, "\"files\" or \"modules\" is not an array");
	for (size_t u = 0; u < units->n; u++) {
		const struct jv *unit = &units->v[u], *fs = jv_get(unit, "findings");
		const char *upath = jv_str(jv_get(unit, "path"));

		if (jv_get(unit, "error"))
			continue;
		if (!upath || !fs || fs->type != JV_ARRAY)
			return loaded(path, "an entry of \"files\" without a path or findings");
		for (size_t i = 0; i < fs->n; i++) {
			const struct jv *x = &fs->v[i];
			const char *fp = jv_str(jv_get(x, "fingerprint"));
			const char *check = jv_str(jv_get(x, "check"));

			if (!fp || !check) {
				rd_seterr("%s: finding %zu of %s has no fingerprint or check (not "
					  "rseqdbg audit --json output, or of a version before "
					  "baselines)",
					  path, i, upath);
				return -EINVAL;
			}
			if (add(b, fp, check, upath, jv_str(jv_get(x, "message"))))
				return -ENOMEM;
		}
	}
	return 0;
}

static int read_all(const char *path, char **res, size_t *len)
{
	FILE *f = fopen(path, "re");
	struct stat st;
	char *buf;
	size_t n;
	int err;

	if (!f) {
		err = -errno;
		rd_seterr("%s: %s", path, strerror(-err));
		return err;
	}
	if (fstat(fileno(f), &st)) {
		err = -errno;
		fclose(f);
		rd_seterr("%s: %s", path, strerror(-err));
		return err;
	}
	if (!S_ISREG(st.st_mode) || (unsigned long long)st.st_size > MAX_BASELINE) {
		fclose(f);
		rd_seterr("%s: %s", path,
			  S_ISDIR(st.st_mode) ? "is a directory"
					      : "not a regular file of 1 GiB at most");
		return -EINVAL;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		fclose(f);
		rd_seterr("out of memory");
		return -ENOMEM;
	}
	n = fread(buf, 1, (size_t)st.st_size, f);
	err = ferror(f) ? -EIO : 0;
	fclose(f);
	if (err) {
		free(buf);
		rd_seterr("%s: %s", path, strerror(-err));
		return err;
	}
	buf[n] = '\0';
	*res = buf;
	*len = n;
	return 0;
}

/* The tables, once every entry is read. */
static int index_entries(struct rd_baseline *b)
{
	if (table_init(&b->by_fp, b->n) || table_init(&b->by_mod, b->n))
		return -ENOMEM;
	b->mods = calloc(b->n ? b->n : 1, sizeof(*b->mods));
	if (!b->mods)
		return -ENOMEM;
	for (size_t i = 0; i < b->n; i++) {
		size_t *s = table_find(b, &b->by_fp, b->v[i].e.fp, fp_key);

		/* Entries of one fingerprint chain from the first, in order. */
		if (*s) {
			size_t j = *s - 1;

			while (b->v[j].next_fp)
				j = b->v[j].next_fp - 1;
			b->v[j].next_fp = i + 1;
		} else {
			*s = i + 1;
		}
		s = table_find(b, &b->by_mod, b->v[i].e.module, mod_key);
		if (!*s) {
			b->mods[b->nmods].name = b->v[i].e.module;
			*s = ++b->nmods;
		}
		b->v[i].mod = *s - 1;
	}
	return 0;
}

int rd_baseline_load(const char *path, struct rd_baseline **res)
{
	struct rd_baseline *b = calloc(1, sizeof(*b));
	const struct jv *runs, *units;
	char *text = NULL;
	size_t len = 0;
	int err;

	if (!b) {
		rd_seterr("out of memory");
		return -ENOMEM;
	}
	err = read_all(path, &text, &len);
	if (err)
		goto fail;
	err = jv_parse(text, len, &b->doc);
	free(text);
	if (err) {
		if (err == -EINVAL) { /* rd_errmsg() holds where */
			char where[256];

			snprintf(where, sizeof(where), "%s", rd_errmsg());
			rd_seterr("%s: not JSON: %s", path, where);
		}
		goto fail;
	}
	runs = jv_get(b->doc, "runs");
	units = jv_get(b->doc, "files");
	if (!units)
		units = jv_get(b->doc, "modules");
	if (runs)
		err = load_sarif(b, path, runs);
	else if (units)
		err = load_json(b, path, units);
	else if (jv_get(b->doc, "error"))
		err = loaded(path, "an error document of a run that failed, not its findings");
	else
		err = loaded(path, "neither a SARIF log nor the JSON document of rseqdbg audit");
	if (!err)
		err = index_entries(b);
	if (err == -ENOMEM)
		rd_seterr("out of memory");
	if (err)
		goto fail;
	*res = b;
	return 0;
fail:
	rd_baseline_free(b);
	return err;
}

void rd_baseline_free(struct rd_baseline *b)
{
	if (!b)
		return;
	jv_free(b->doc);
	free(b->v);
	free(b->mods);
	free(b->by_fp.slot);
	free(b->by_mod.slot);
	free(b);
}

bool rd_baseline_match(struct rd_baseline *b, const char *fp)
{
	size_t i = *table_find(b, &b->by_fp, fp, fp_key);

	for (; i; i = b->v[i - 1].next_fp) {
		if (!b->v[i - 1].e.matched) {
			b->v[i - 1].e.matched = true;
			return true;
		}
	}
	return false;
}

void rd_baseline_audited(struct rd_baseline *b, const char *module)
{
	size_t i = *table_find(b, &b->by_mod, module, mod_key);

	if (i)
		b->mods[i - 1].audited = true;
}

size_t rd_baseline_count(const struct rd_baseline *b)
{
	return b->n;
}

const struct rd_baseline_entry *rd_baseline_entry(const struct rd_baseline *b, size_t i)
{
	return &b->v[i].e;
}

bool rd_baseline_absent(const struct rd_baseline *b, size_t i)
{
	return !b->v[i].e.matched && b->mods[b->v[i].mod].audited;
}
