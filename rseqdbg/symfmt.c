// SPDX-License-Identifier: GPL-2.0-only
/* Printing a program location, shared by every command that shows addresses. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symfmt.h"

/* The length of the character at s when it may be printed as it is, else 0. */
static int plain_len(const char *s)
{
	unsigned char c = (unsigned char)*s;
	int n;

	if (c >= 0x20 && c < 0x7f)
		return c == '\\' ? 0 : 1;
	n = jw_utf8_seq(s);
	if (n < 2)
		return 0;
	return n == 2 && jw_utf8_code(s, n) <= 0x9f ? 0 : n; /* C1 controls */
}

const char *rd_safe(const char *s)
{
	static __thread char *slot[4];
	static __thread size_t cap[4];
	static __thread unsigned int next;
	size_t len, need, k;
	const char *p;
	char *out, *o;
	int n;

	if (!s)
		return NULL;
	for (p = s; *p && (n = plain_len(p)); p += n)
		;
	if (!*p)
		return s;
	len = strlen(s);
	need = 4 * len + 1; /* the longest escape: one byte as "\xHH" */
	k = next++ % 4;
	if (cap[k] < need) {
		out = realloc(slot[k], need);
		if (!out)
			return "(name not printable: out of memory)";
		slot[k] = out;
		cap[k] = need;
	}
	o = slot[k];
	memcpy(o, s, (size_t)(p - s));
	o += p - s;
	while (*p) {
		unsigned char c = (unsigned char)*p;

		n = plain_len(p);
		if (n) {
			memcpy(o, p, (size_t)n);
			o += n;
			p += n;
			continue;
		}
		n = jw_utf8_seq(p);
		if (c == '\\' || c == '\n' || c == '\t' || c == '\r') {
			*o++ = '\\';
			*o++ = c == '\\' ? '\\' : c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
			p++;
		} else if (n == 2) { /* a C1 control, well-formed */
			o += sprintf(o, "\\u%04x", (unsigned int)jw_utf8_code(p, n));
			p += 2;
		} else {
			o += sprintf(o, "\\x%02x", c);
			p++;
		}
	}
	*o = '\0';
	return slot[k];
}

bool rd_symbolize(struct elfscan *es, uint64_t addr, struct elfscan_loc *loc)
{
	memset(loc, 0, sizeof(*loc));
	if (!es || elfscan_symbolize(es, addr, loc) < 0) {
		memset(loc, 0, sizeof(*loc));
		return false;
	}
	return loc->func != NULL;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

const char *rd_loc_str(const struct elfscan_loc *loc, char *buf, size_t len)
{
	size_t n = 0;
	int r;

	if (!len)
		return buf;
	buf[0] = '\0';
	if (loc->func) {
		if (loc->func_off)
			r = snprintf(buf, len, "%s+%#" PRIx64, rd_safe(loc->func), loc->func_off);
		else
			r = snprintf(buf, len, "%s", rd_safe(loc->func));
		n = r < 0 ? 0 : ((size_t)r >= len ? len - 1 : (size_t)r);
	}
	if (loc->file && loc->line > 0)
		snprintf(buf + n, len - n, n ? " (%s:%d)" : "%s:%d", rd_safe(base_name(loc->file)),
			 loc->line);
	else if (!n)
		snprintf(buf, len, "?");
	return buf;
}

const char *rd_modoff_str(const char *path, uint64_t off, char *buf, size_t len)
{
	snprintf(buf, len, "%s+%#" PRIx64, rd_safe(base_name(path)), off);
	return buf;
}

const char *rd_sym_str(struct elfscan *es, uint64_t addr, char *buf, size_t len)
{
	struct elfscan_loc loc;

	rd_symbolize(es, addr, &loc);
	return rd_loc_str(&loc, buf, len);
}

void rd_json_loc(struct jw *w, struct elfscan *es, uint64_t addr, uint64_t bias)
{
	struct elfscan_loc loc;
	bool have_func = rd_symbolize(es, addr, &loc);
	bool have_line = loc.file && loc.line > 0;

	jw_obj_open(w);
	jw_ku64(w, "addr", addr + bias);
	jw_kstr(w, "function", loc.func);
	jw_key(w, "offset");
	if (have_func)
		jw_u64(w, loc.func_off);
	else
		jw_null(w);
	jw_kstr(w, "file", have_line ? loc.file : NULL);
	jw_key(w, "line");
	if (have_line)
		jw_u64(w, (uint64_t)loc.line);
	else
		jw_null(w);
	jw_obj_close(w);
}

void rd_json_kloc(struct jw *w, const char *key, struct elfscan *es, uint64_t addr, uint64_t bias)
{
	jw_key(w, key);
	rd_json_loc(w, es, addr, bias);
}
