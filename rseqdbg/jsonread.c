// SPDX-License-Identifier: GPL-2.0-only
/* Reading a JSON document into a tree (jsonread.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "jsonread.h"

#define JV_MAX_DEPTH 256

struct parser {
	const char *p, *start, *end;
	int err; /* first error: -EINVAL or -ENOMEM */
};

static int fail(struct parser *ps, const char *what)
{
	size_t line = 1;

	if (ps->err)
		return ps->err;
	for (const char *q = ps->start; q < ps->p; q++)
		line += *q == '\n';
	if (ps->p >= ps->end)
		rd_seterr("line %zu: unexpected end of the document, expected %s", line, what);
	else
		rd_seterr("line %zu: expected %s", line, what);
	ps->err = -EINVAL;
	return ps->err;
}

static int nomem(struct parser *ps)
{
	rd_seterr("out of memory");
	ps->err = -ENOMEM;
	return ps->err;
}

static void skip_ws(struct parser *ps)
{
	while (ps->p < ps->end &&
	       (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static bool literal(struct parser *ps, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n))
		return false;
	ps->p += n;
	return true;
}

static int hex4(struct parser *ps, uint32_t *v)
{
	*v = 0;
	if (ps->end - ps->p < 4)
		return fail(ps, "4 hex digits after \\u");
	for (int i = 0; i < 4; i++) {
		char c = *ps->p++;

		*v <<= 4;
		if (c >= '0' && c <= '9')
			*v |= (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			*v |= (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			*v |= (uint32_t)(c - 'A' + 10);
		else
			return fail(ps, "4 hex digits after \\u");
	}
	return 0;
}

static size_t put_utf8(char *o, uint32_t c)
{
	if (c < 0x80) {
		o[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		o[0] = (char)(0xc0 | c >> 6);
		o[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		o[0] = (char)(0xe0 | c >> 12);
		o[1] = (char)(0x80 | (c >> 6 & 0x3f));
		o[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | c >> 18);
	o[1] = (char)(0x80 | (c >> 12 & 0x3f));
	o[2] = (char)(0x80 | (c >> 6 & 0x3f));
	o[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

static int escape(struct parser *ps, char **o)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *k;
	uint32_t c, lo;
	int err;

	if (ps->p >= ps->end)
		return fail(ps, "an escape");
	k = *ps->p ? strchr(from, *ps->p) : NULL;
	if (k) {
		*(*o)++ = to[k - from];
		ps->p++;
		return 0;
	}
	if (*ps->p++ != 'u')
		return fail(ps, "an escape (\\\", \\\\, \\/, \\b, \\f, \\n, \\r, \\t or \\u)");
	err = hex4(ps, &c);
	if (err)
		return err;
	if (c >= 0xd800 && c < 0xdc00) { /* a surrogate pair */
		if (!literal(ps, "\\u"))
			return fail(ps, "the low surrogate of a pair");
		err = hex4(ps, &lo);
		if (err)
			return err;
		if (lo < 0xdc00 || lo > 0xdfff)
			return fail(ps, "the low surrogate of a pair");
		c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
	} else if (c >= 0xdc00 && c < 0xe000) {
		c = 0xfffd;
	}
	*o += put_utf8(*o, c);
	return 0;
}

/* At the opening quote. Escapes never grow: the result fits in the quoted text's length. */
static int string(struct parser *ps, char **res)
{
	const char *q = ps->p + 1;
	char *s, *o;
	int err;

	while (q < ps->end && *q != '"')
		q += *q == '\\' && q + 1 < ps->end ? 2 : 1;
	s = malloc((size_t)(q - ps->p) + 1);
	if (!s)
		return nomem(ps);
	o = s;
	ps->p++;
	while (ps->p < ps->end && *ps->p != '"') {
		if ((unsigned char)*ps->p < 0x20) {
			free(s);
			return fail(ps, "no control character in a string");
		}
		if (*ps->p != '\\') {
			*o++ = *ps->p++;
			continue;
		}
		ps->p++;
		err = escape(ps, &o);
		if (err) {
			free(s);
			return err;
		}
	}
	if (ps->p >= ps->end) {
		free(s);
		return fail(ps, "the closing quote of a string");
	}
	ps->p++;
	*o = '\0';
	*res = s;
	return 0;
}

static int number(struct parser *ps, struct jv *v)
{
	const char *b = ps->p;
	size_t n;

	if (ps->p < ps->end && *ps->p == '-')
		ps->p++;
	if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
		return fail(ps, "a value");
	while (ps->p < ps->end && strchr("0123456789+-.eE", *ps->p) && *ps->p)
		ps->p++;
	n = (size_t)(ps->p - b);
	v->s = malloc(n + 1);
	if (!v->s)
		return nomem(ps);
	memcpy(v->s, b, n);
	v->s[n] = '\0';
	v->type = JV_NUMBER;
	return 0;
}

static int value(struct parser *ps, struct jv *v, int depth);

/* An array's elements or an object's members, after the opening bracket. */
static int members(struct parser *ps, struct jv *v, bool obj, int depth)
{
	char close = obj ? '}' : ']';
	size_t cap = 0;
	int err;

	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		return 0;
	}
	for (;;) {
		if (v->n == cap) {
			size_t nc = cap ? 2 * cap : 8;
			struct jv *nv = realloc(v->v, nc * sizeof(*nv));
			char **nk;

			if (!nv)
				return nomem(ps);
			v->v = nv;
			if (obj) {
				nk = realloc(v->keys, nc * sizeof(*nk));
				if (!nk)
					return nomem(ps);
				v->keys = nk;
			}
			cap = nc;
		}
		memset(&v->v[v->n], 0, sizeof(v->v[v->n]));
		skip_ws(ps);
		if (obj) {
			v->keys[v->n] = NULL;
			if (ps->p >= ps->end || *ps->p != '"')
				return fail(ps, "a member name");
			err = string(ps, &v->keys[v->n]);
			if (err)
				return err;
			skip_ws(ps);
			if (ps->p >= ps->end || *ps->p != ':') {
				v->n++;
				return fail(ps, "':'");
			}
			ps->p++;
		}
		err = value(ps, &v->v[v->n], depth + 1);
		v->n++;
		if (err)
			return err;
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == close) {
			ps->p++;
			return 0;
		}
		return fail(ps, obj ? "',' or '}'" : "',' or ']'");
	}
}

static int value(struct parser *ps, struct jv *v, int depth)
{
	if (depth > JV_MAX_DEPTH)
		return fail(ps, "at most 256 nested levels");
	skip_ws(ps);
	if (ps->p >= ps->end)
		return fail(ps, "a value");
	switch (*ps->p) {
	case '{':
	case '[':
		v->type = *ps->p == '{' ? JV_OBJECT : JV_ARRAY;
		ps->p++;
		return members(ps, v, v->type == JV_OBJECT, depth);
	case '"':
		v->type = JV_STRING;
		return string(ps, &v->s);
	case 't':
	case 'f':
		v->type = JV_BOOL;
		v->b = *ps->p == 't';
		return literal(ps, v->b ? "true" : "false") ? 0 : fail(ps, "a value");
	case 'n':
		return literal(ps, "null") ? 0 : fail(ps, "a value");
	default:
		return number(ps, v);
	}
}

static void jv_clear(struct jv *v)
{
	for (size_t i = 0; i < v->n; i++) {
		jv_clear(&v->v[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->v);
	free(v->keys);
	free(v->s);
}

void jv_free(struct jv *v)
{
	if (!v)
		return;
	jv_clear(v);
	free(v);
}

int jv_parse(const char *text, size_t len, struct jv **res)
{
	struct parser ps = {.p = text, .start = text, .end = text + len};
	struct jv *v = calloc(1, sizeof(*v));
	int err;

	if (!v)
		return nomem(&ps);
	err = value(&ps, v, 0);
	if (!err) {
		skip_ws(&ps);
		if (ps.p < ps.end)
			err = fail(&ps, "the end of the document");
	}
	if (err) {
		jv_free(v);
		return err;
	}
	*res = v;
	return 0;
}

const struct jv *jv_get(const struct jv *v, const char *key)
{
	if (!v || v->type != JV_OBJECT)
		return NULL;
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->keys[i], key))
			return &v->v[i];
	return NULL;
}

const char *jv_str(const struct jv *v)
{
	return v && v->type == JV_STRING ? v->s : NULL;
}
