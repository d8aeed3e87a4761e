// SPDX-License-Identifier: GPL-2.0-only
/* Printing a program location, shared by every command that shows addresses. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
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
	return loc->func || loc->section;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Appends to buf[*n..len) like snprintf, keeping *n within the buffer. */
static void put(char *buf, size_t len, size_t *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void put(char *buf, size_t len, size_t *n, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (*n >= len - 1)
		return;
	va_start(ap, fmt);
	r = vsnprintf(buf + *n, len - *n, fmt, ap);
	va_end(ap);
	if (r > 0)
		*n = (size_t)r >= len - *n ? len - 1 : *n + (size_t)r;
}

/* "name+0x12", or "name" at offset 0. */
static void put_name(char *buf, size_t len, size_t *n, const char *name, uint64_t off)
{
	if (off)
		put(buf, len, n, "%s+%#" PRIx64, rd_safe(name), off);
	else
		put(buf, len, n, "%s", rd_safe(name));
}

const char *rd_loc_str(const struct elfscan_loc *loc, char *buf, size_t len)
{
	bool line = loc->file && loc->line > 0;
	size_t n = 0;

	if (!len)
		return buf;
	buf[0] = '\0';
	if (loc->func && loc->inlined) {
		/* "inlined (bits.h:35) inlined in func+0x9b (test.c:120)" */
		put(buf, len, &n, "%s", rd_safe(loc->inlined));
		if (line)
			put(buf, len, &n, " (%s:%d)", rd_safe(base_name(loc->file)), loc->line);
		put(buf, len, &n, " inlined in ");
		put_name(buf, len, &n, loc->func, loc->func_off);
		if (loc->call_file && loc->call_line > 0)
			put(buf, len, &n, " (%s:%d)", rd_safe(base_name(loc->call_file)),
			    loc->call_line);
		return buf;
	}
	if (loc->func)
		put_name(buf, len, &n, loc->func, loc->func_off);
	else if (loc->section)
		put_name(buf, len, &n, loc->section, loc->section_off);
	if (line)
		put(buf, len, &n, n ? " (%s:%d)" : "%s:%d", rd_safe(base_name(loc->file)),
		    loc->line);
	else if (!n)
		put(buf, len, &n, "?");
	return buf;
}

const char *rd_modoff_str(const char *path, uint64_t off, char *buf, size_t len)
{
	snprintf(buf, len, "%s+%#" PRIx64, rd_safe(base_name(path)), off);
	return buf;
}

const char *rd_modsym_str(struct elfscan *es, const char *path, uint64_t addr, char *buf,
			  size_t len)
{
	struct elfscan_loc loc;

	if (rd_symbolize(es, addr, &loc))
		return rd_loc_str(&loc, buf, len);
	return rd_modoff_str(path, addr, buf, len);
}

const char *rd_sym_str(struct elfscan *es, uint64_t addr, char *buf, size_t len)
{
	struct elfscan_loc loc;

	rd_symbolize(es, addr, &loc);
	return rd_loc_str(&loc, buf, len);
}

void rd_json_inlined(struct jw *w, struct elfscan *es, uint64_t addr, const struct elfscan_loc *loc)
{
	struct elfscan_inline in[64];
	size_t n = loc->inlined ? elfscan_inlines(es, addr, in, 64) : 0;

	jw_key(w, "inlined");
	jw_arr_open(w);
	for (size_t i = 0; i < n && i < 64; i++) {
		jw_obj_open(w);
		jw_kstr(w, "function", in[i].func);
		jw_kstr(w, "call_file", in[i].call_file);
		jw_key(w, "call_line");
		if (in[i].call_line > 0)
			jw_u64(w, (uint64_t)in[i].call_line);
		else
			jw_null(w);
		jw_obj_close(w);
	}
	jw_arr_close(w);
}

/* The members of a location object for addr, which loc symbolizes. */
static void loc_members(struct jw *w, struct elfscan *es, uint64_t addr, uint64_t bias,
			const char *module, const struct elfscan_loc *loc)
{
	bool have_line = loc->file && loc->line > 0;

	jw_ku64(w, "addr", addr + bias);
	if (module)
		jw_kstr(w, "module", module);
	jw_kstr(w, "function", loc->func);
	jw_key(w, "offset");
	if (loc->func)
		jw_u64(w, loc->func_off);
	else if (loc->section)
		jw_u64(w, loc->section_off);
	else
		jw_null(w);
	jw_kstr(w, "section", loc->func ? NULL : loc->section);
	jw_kstr(w, "file", have_line ? loc->file : NULL);
	jw_key(w, "line");
	if (have_line)
		jw_u64(w, (uint64_t)loc->line);
	else
		jw_null(w);
	rd_json_inlined(w, es, addr, loc);
}

void rd_json_loc_members(struct jw *w, struct elfscan *es, uint64_t addr, uint64_t bias,
			 const char *module)
{
	struct elfscan_loc loc;

	rd_symbolize(es, addr, &loc);
	loc_members(w, es, addr, bias, module, &loc);
}

void rd_json_kloc(struct jw *w, const char *key, struct elfscan *es, uint64_t addr, uint64_t bias,
		  const char *module)
{
	jw_key(w, key);
	jw_obj_open(w);
	rd_json_loc_members(w, es, addr, bias, module);
	jw_obj_close(w);
}

void rd_json_section_members(struct jw *w, struct elfscan *es, uint64_t bias, const char *module,
			     uint64_t start_ip, uint64_t post_commit_offset, uint64_t abort_ip,
			     const struct elfscan_loc *start)
{
	uint64_t post_commit_ip = start_ip + post_commit_offset;

	jw_ku64(w, "start_ip", start_ip);
	jw_ku64(w, "post_commit_offset", post_commit_offset);
	jw_ku64(w, "post_commit_ip", post_commit_ip);
	jw_ku64(w, "abort_ip", abort_ip);
	if (start) {
		jw_key(w, "start");
		jw_obj_open(w);
		loc_members(w, es, start_ip - bias, bias, module, start);
		jw_obj_close(w);
	} else {
		rd_json_kloc(w, "start", es, start_ip - bias, bias, module);
	}
	rd_json_kloc(w, "post_commit", es, post_commit_ip - bias, bias, module);
	rd_json_kloc(w, "abort", es, abort_ip - bias, bias, module);
}
