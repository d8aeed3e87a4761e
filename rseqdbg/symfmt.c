// SPDX-License-Identifier: GPL-2.0-only
/* Printing a program location, shared by every command that shows addresses. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "symfmt.h"

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
			r = snprintf(buf, len, "%s+%#" PRIx64, loc->func, loc->func_off);
		else
			r = snprintf(buf, len, "%s", loc->func);
		n = r < 0 ? 0 : ((size_t)r >= len ? len - 1 : (size_t)r);
	}
	if (loc->file && loc->line > 0)
		snprintf(buf + n, len - n, n ? " (%s:%d)" : "%s:%d", base_name(loc->file),
			 loc->line);
	else if (!n)
		snprintf(buf, len, "?");
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

void rd_json_kloc(struct jw *w, const char *key, struct elfscan *es, uint64_t addr,
		  uint64_t bias)
{
	jw_key(w, key);
	rd_json_loc(w, es, addr, bias);
}
