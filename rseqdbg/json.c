// SPDX-License-Identifier: GPL-2.0-only
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#define JW_MAX_DEPTH 64

struct jw {
	FILE *f;
	bool pretty;
	int depth;
	bool first[JW_MAX_DEPTH]; /* nothing written yet at this depth */
	bool after_key;
	size_t len; /* bytes in buf not yet handed to f */
	char buf[64 * 1024];
};

/*
 * Documents can be large (a scan of 100,000 critical sections is ~80 MB): bytes collect in
 * buf and reach f in large unlocked writes, and integers are formatted here rather than by
 * printf. All of it is handed to f when a top-level value is complete, so whatever other code
 * writes to f between documents keeps its place. The writer is used from one thread only.
 */
static void flush_buf(struct jw *w)
{
	if (w->len)
		fwrite_unlocked(w->buf, 1, w->len, w->f);
	w->len = 0;
}

static inline void out_c(struct jw *w, char c)
{
	if (w->len == sizeof(w->buf))
		flush_buf(w);
	w->buf[w->len++] = c;
}

static void out_n(struct jw *w, const char *s, size_t n)
{
	if (n > sizeof(w->buf) - w->len) {
		flush_buf(w);
		if (n > sizeof(w->buf)) {
			fwrite_unlocked(s, 1, n, w->f);
			return;
		}
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
}

static inline void out_s(struct jw *w, const char *s)
{
	out_n(w, s, strlen(s));
}

static void out_u64(struct jw *w, uint64_t v)
{
	char buf[24], *p = buf + sizeof(buf);

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	out_n(w, p, (size_t)(buf + sizeof(buf) - p));
}

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
	if (w)
		flush_buf(w);
	free(w);
}

static void indent(struct jw *w)
{
	if (!w->pretty)
		return;
	static const char spaces[] =
	    "                                                                ";
	size_t n = 2 * (size_t)w->depth;

	out_c(w, '\n');
	while (n) {
		size_t k = n < sizeof(spaces) - 1 ? n : sizeof(spaces) - 1;

		out_n(w, spaces, k);
		n -= k;
	}
}

/* Separator before a value or key at the current depth. */
static void sep(struct jw *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (!w->first[w->depth])
		out_c(w, ',');
	w->first[w->depth] = false;
	if (w->depth > 0)
		indent(w);
}

static void open_(struct jw *w, char c)
{
	sep(w);
	out_c(w, c);
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
	out_c(w, c);
	if (!w->depth)
		flush_buf(w);
}

void jw_obj_open(struct jw *w)
{
	open_(w, '{');
}
void jw_obj_close(struct jw *w)
{
	close_(w, '}');
}
void jw_arr_open(struct jw *w)
{
	open_(w, '[');
}
void jw_arr_close(struct jw *w)
{
	close_(w, ']');
}

int jw_utf8_seq(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned int c = p[0], need, lo = 0x80, hi = 0xbf;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		need = 1;
	} else if (c >= 0xe0 && c <= 0xef) {
		need = 2;
		lo = c == 0xe0 ? 0xa0 : 0x80; /* no overlong form */
		hi = c == 0xed ? 0x9f : 0xbf; /* no surrogate */
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 3;
		lo = c == 0xf0 ? 0x90 : 0x80;
		hi = c == 0xf4 ? 0x8f : 0xbf; /* nothing above U+10FFFF */
	} else {
		return -1;
	}
	/* The terminating NUL is no continuation byte: the loop stops there. */
	for (unsigned int i = 1; i <= need; i++) {
		if (p[i] < lo || p[i] > hi)
			return -(int)i;
		lo = 0x80;
		hi = 0xbf;
	}
	return (int)need + 1;
}

uint32_t jw_utf8_code(const char *s, int n)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t cp = n == 1 ? p[0] : p[0] & (0x7f >> n);

	for (int i = 1; i < n; i++)
		cp = cp << 6 | (p[i] & 0x3f);
	return cp;
}

/* RFC 8259 strings from bytes of any kind: control characters (C0, DEL, C1) and the line
 * separators U+2028/2029 escaped, each ill-formed UTF-8 sequence replaced by U+FFFD. */
static void put_string(struct jw *w, const char *s)
{
	const char *p = s, *run = p;
	char esc[8];

	out_c(w, '"');
	for (;;) {
		unsigned char c = (unsigned char)*p;
		int n = c >= 0x20 && c < 0x7f ? 1 : jw_utf8_seq(p);
		uint32_t cp = n > 0 ? jw_utf8_code(p, n) : 0xfffd;

		if (n > 0 && c != '"' && c != '\\' && cp >= 0x20 && (cp < 0x7f || cp > 0x9f) &&
		    cp != 0x2028 && cp != 0x2029) {
			p += n;
			continue;
		}
		/* Write the plain run before this character, then the character escaped. */
		out_n(w, run, (size_t)(p - run));
		if (!c)
			break;
		p += n > 0 ? n : -n;
		run = p;
		switch (cp) {
		case '"':
			out_n(w, "\\\"", 2);
			break;
		case '\\':
			out_n(w, "\\\\", 2);
			break;
		case '\n':
			out_n(w, "\\n", 2);
			break;
		case '\t':
			out_n(w, "\\t", 2);
			break;
		case '\r':
			out_n(w, "\\r", 2);
			break;
		case 0xfffd:
			out_n(w, "\xef\xbf\xbd", 3);
			break;
		default:
			snprintf(esc, sizeof(esc), "\\u%04x", (unsigned int)cp);
			out_n(w, esc, 6);
		}
	}
	out_c(w, '"');
}

void jw_key(struct jw *w, const char *key)
{
	sep(w);
	put_string(w, key);
	if (w->pretty)
		out_n(w, ": ", 2);
	else
		out_c(w, ':');
	w->after_key = true;
}

void jw_str(struct jw *w, const char *s)
{
	sep(w);
	if (s)
		put_string(w, s);
	else
		out_n(w, "null", 4);
}

void jw_u64(struct jw *w, uint64_t v)
{
	sep(w);
	out_u64(w, v);
}

void jw_i64(struct jw *w, int64_t v)
{
	sep(w);
	if (v < 0) {
		out_c(w, '-');
		out_u64(w, -(uint64_t)v);
	} else {
		out_u64(w, (uint64_t)v);
	}
}

static void out_double(struct jw *w, double v)
{
	char num[32];
	int n = snprintf(num, sizeof(num), "%.6g", v);

	out_n(w, num, n > 0 ? (size_t)n : 0);
}

void jw_double(struct jw *w, double v)
{
	sep(w);
	if (isfinite(v))
		out_double(w, v);
	else
		out_n(w, "null", 4);
}

void jw_bool(struct jw *w, bool v)
{
	sep(w);
	out_s(w, v ? "true" : "false");
}

void jw_null(struct jw *w)
{
	sep(w);
	out_n(w, "null", 4);
}

void jw_kstr(struct jw *w, const char *key, const char *s)
{
	jw_key(w, key);
	jw_str(w, s);
}
void jw_ku64(struct jw *w, const char *key, uint64_t v)
{
	jw_key(w, key);
	jw_u64(w, v);
}
void jw_ki64(struct jw *w, const char *key, int64_t v)
{
	jw_key(w, key);
	jw_i64(w, v);
}
void jw_kdouble(struct jw *w, const char *key, double v)
{
	jw_key(w, key);
	jw_double(w, v);
}
void jw_kbool(struct jw *w, const char *key, bool v)
{
	jw_key(w, key);
	jw_bool(w, v);
}

void jw_end(struct jw *w)
{
	out_c(w, '\n');
	flush_buf(w);
	fflush(w->f);
	w->depth = 0;
	w->first[0] = true;
	w->after_key = false;
}
