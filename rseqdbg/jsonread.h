/* SPDX-License-Identifier: GPL-2.0-only */
/* A JSON reader: a document into a tree of values, for the files a command reads back (an
 * audit baseline). Strict RFC 8259; nesting deeper than 256 levels is refused. */
#ifndef RSEQDBG_JSONREAD_H
#define RSEQDBG_JSONREAD_H

#include <stdbool.h>
#include <stddef.h>

enum jv_type { JV_NULL, JV_BOOL, JV_NUMBER, JV_STRING, JV_ARRAY, JV_OBJECT };

struct jv {
	enum jv_type type;
	bool b;	  /* JV_BOOL */
	char *s;  /* JV_STRING: the string, UTF-8; JV_NUMBER: its text */
	size_t n; /* JV_ARRAY, JV_OBJECT: members */
	struct jv *v;
	char **keys; /* JV_OBJECT */
};

/* Parse len bytes of text. Returns 0 (*res the document) or -EINVAL (rd_errmsg() says
 * where and what was expected, without a file name) or -ENOMEM. */
int jv_parse(const char *text, size_t len, struct jv **res);
void jv_free(struct jv *v); /* NULL-safe */
/* The member key of an object; NULL when v is no object or has no such member. */
const struct jv *jv_get(const struct jv *v, const char *key);
/* v's string, NULL when v is NULL or no string. */
const char *jv_str(const struct jv *v);

#endif
