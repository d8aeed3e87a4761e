/* SPDX-License-Identifier: GPL-2.0-only */
/* A streaming JSON writer: one object per document, compact or pretty. */
#ifndef RSEQDBG_JSON_H
#define RSEQDBG_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct jw;

struct jw *jw_new(FILE *f, bool pretty);
void jw_free(struct jw *w); /* NULL-safe; does not close f */
/* Containers. Inside an object, call jw_key() before each value. */
void jw_obj_open(struct jw *w);
void jw_obj_close(struct jw *w);
void jw_arr_open(struct jw *w);
void jw_arr_close(struct jw *w);
void jw_key(struct jw *w, const char *key);
/* Values */
void jw_str(struct jw *w, const char *s); /* NULL writes null */
void jw_u64(struct jw *w, uint64_t v);
void jw_i64(struct jw *w, int64_t v);
void jw_double(struct jw *w, double v);
void jw_bool(struct jw *w, bool v);
void jw_null(struct jw *w);
/* key + value in one call */
void jw_kstr(struct jw *w, const char *key, const char *s);
void jw_ku64(struct jw *w, const char *key, uint64_t v);
void jw_ki64(struct jw *w, const char *key, int64_t v);
void jw_kdouble(struct jw *w, const char *key, double v);
void jw_kbool(struct jw *w, const char *key, bool v);
/* UTF-8 as the writer judges it. At s (NUL-terminated): the length of one well-formed
 * sequence (1 to 4), or minus the length of the ill-formed bytes (maximal subpart, Unicode
 * ch. 3) to replace by one U+FFFD. */
int jw_utf8_seq(const char *s);
/* The code point of the well-formed sequence of n bytes at s. */
uint32_t jw_utf8_code(const char *s, int n);
/* Ends a top-level document with a newline (JSON lines) and flushes. */
void jw_end(struct jw *w);

#endif
