// SPDX-License-Identifier: GPL-2.0-only
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "json.h"

#define JW_MAX_DEPTH 64

struct jw {
	FILE *f;
	bool pretty;
	int depth;
	bool first[JW_MAX_DEPTH]; /* nothing written yet at this depth */
	bool after_key;
};

struct jw *jw_new(FILE *f, bool pretty)
{
	struct jw *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->f = f;
	w->pretty = pretty;
	w->first[0] = true;
	return w;
}

void jw_free(struct jw *w)
{
	free(w);
}

static void indent(struct jw *w)
{
	if (!w->pretty)
		return;
	fputc('\n', w->f);
	for (int i = 0; i < w->depth; i++)
		fputs("  ", w->f);
}

/* Separator before a value or key at the current depth. */
static void sep(struct jw *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (!w->first[w->depth])
		fputc(',', w->f);
	w->first[w->depth] = false;
	if (w->depth > 0)
		indent(w);
}

static void open_(struct jw *w, char c)
{
	sep(w);
	fputc(c, w->f);
	if (w->depth < JW_MAX_DEPTH - 1)
		w->depth++;
	w->first[w->depth] = true;
}

static void close_(struct jw *w, char c)
{
	bool empty = w->first[w->depth];

	if (w->depth > 0)
		w->depth--;
	if (!empty)
		indent(w);
	fputc(c, w->f);
}

void jw_obj_open(struct jw *w) { open_(w, '{'); }
void jw_obj_close(struct jw *w) { close_(w, '}'); }
void jw_arr_open(struct jw *w) { open_(w, '['); }
void jw_arr_close(struct jw *w) { close_(w, ']'); }

static void put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		case '\r': fputs("\\r", f); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

void jw_key(struct jw *w, const char *key)
{
	sep(w);
	put_string(w->f, key);
	fputs(w->pretty ? ": " : ":", w->f);
	w->after_key = true;
}

void jw_str(struct jw *w, const char *s)
{
	sep(w);
	if (s)
		put_string(w->f, s);
	else
		fputs("null", w->f);
}

void jw_u64(struct jw *w, uint64_t v)
{
	sep(w);
	fprintf(w->f, "%" PRIu64, v);
}

void jw_i64(struct jw *w, int64_t v)
{
	sep(w);
	fprintf(w->f, "%" PRId64, v);
}

void jw_double(struct jw *w, double v)
{
	sep(w);
	if (isfinite(v))
		fprintf(w->f, "%.6g", v);
	else
		fputs("null", w->f);
}

void jw_bool(struct jw *w, bool v)
{
	sep(w);
	fputs(v ? "true" : "false", w->f);
}

void jw_null(struct jw *w)
{
	sep(w);
	fputs("null", w->f);
}

void jw_kstr(struct jw *w, const char *key, const char *s) { jw_key(w, key); jw_str(w, s); }
void jw_ku64(struct jw *w, const char *key, uint64_t v) { jw_key(w, key); jw_u64(w, v); }
void jw_ki64(struct jw *w, const char *key, int64_t v) { jw_key(w, key); jw_i64(w, v); }
void jw_kdouble(struct jw *w, const char *key, double v) { jw_key(w, key); jw_double(w, v); }
void jw_kbool(struct jw *w, const char *key, bool v) { jw_key(w, key); jw_bool(w, v); }

void jw_end(struct jw *w)
{
	fputc('\n', w->f);
	fflush(w->f);
	w->depth = 0;
	w->first[0] = true;
	w->after_key = false;
}
