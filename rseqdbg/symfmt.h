/* SPDX-License-Identifier: GPL-2.0-only */
/* Printing a program location: "func+0x12 (file.S:42)" for people, a LOC object for JSON. */
#ifndef RSEQDBG_SYMFMT_H
#define RSEQDBG_SYMFMT_H

#include <stddef.h>
#include <stdint.h>

#include "elfscan.h"
#include "json.h"

/* s as text output may carry it: backslash, control characters (C0, DEL, C1) and bytes that
 * are not UTF-8 written as escapes ("\\", "\n", "\t", "\r", "\x1b", "\u0085"), so that a
 * name or path from a file or process neither breaks a one-line format nor sends escape
 * sequences to a terminal. Returns s itself when it needs none; else the escaped copy in one
 * of four per-thread buffers, valid until the fourth rd_safe() call after this one. NULL
 * gives NULL. */
const char *rd_safe(const char *s);

/* Enough for any location rd_loc_str() writes before truncating a long name. */
#define RD_LOC_LEN 512

/* Symbolize addr (a libelfscan address of es); loc is zeroed when nothing covers it or es is
 * NULL. Returns whether a name was found: a function, or the section of code no symbol
 * covers. */
bool rd_symbolize(struct elfscan *es, uint64_t addr, struct elfscan_loc *loc);

/* "func+0x12 (file.S:42)", "func (file.S:42)" at offset 0, "func+0x12" without line
 * information, "__rseq_failure+0x2b (file.S:42)" for code no symbol covers (by section, as
 * objdump names it), "file.S:42" without either, "?" with nothing. Code inlined into func
 * reads "inlined (bits.h:35) inlined in func+0x9b (test.c:120)": the innermost inlined
 * function with its line, then the function and the line of the outermost call. The file is
 * shown by its last path component. Returns buf. */
const char *rd_loc_str(const struct elfscan_loc *loc, char *buf, size_t len);

/* "libfoo.so+0x12": an offset in the module at path, for an address without a symbol. */
const char *rd_modoff_str(const char *path, uint64_t off, char *buf, size_t len);

/* addr (a libelfscan address of es, the module at path) by name when rd_symbolize() finds
 * one, else as rd_modoff_str(): how the tracer names a code address. */
const char *rd_modsym_str(struct elfscan *es, const char *path, uint64_t addr, char *buf,
			  size_t len);

/* rd_symbolize() + rd_loc_str() in one call. */
const char *rd_sym_str(struct elfscan *es, uint64_t addr, char *buf, size_t len);

/* The members of a location object: "addr" (addr + bias: the runtime address of a loaded
 * module, 0 for a file), "module" (the module's absolute path, left out when module is NULL:
 * a location in the file a document is about), "function", "offset", "section", "file",
 * "line" and "inlined", for the libelfscan address addr of es. "section" names the section of
 * code no function covers ("offset" is then in it); "file" is the path as DWARF gives it;
 * "inlined" is the inline chain, innermost first, each {"function", "call_file",
 * "call_line"} (empty outside inlined code). Unknown parts are null; es may be NULL.
 * schemas/common.json describes it. */
void rd_json_loc_members(struct jw *w, struct elfscan *es, uint64_t addr, uint64_t bias,
			 const char *module);

/* The member "inlined" of a location object: loc is addr symbolized in es. */
void rd_json_inlined(struct jw *w, struct elfscan *es, uint64_t addr,
		     const struct elfscan_loc *loc);

/* jw_key(w, key) and a location object. */
void rd_json_kloc(struct jw *w, const char *key, struct elfscan *es, uint64_t addr, uint64_t bias,
		  const char *module);

/* The members of a section object: "start_ip", "post_commit_offset", "post_commit_ip" and
 * "abort_ip" (runtime addresses), and the location objects "start", "post_commit" and
 * "abort". es is the module's file (NULL when unknown), bias its load bias (0 for a file),
 * module its path as rd_json_loc_members() takes it; start, when not NULL, is start_ip
 * symbolized already. */
void rd_json_section_members(struct jw *w, struct elfscan *es, uint64_t bias, const char *module,
			     uint64_t start_ip, uint64_t post_commit_offset, uint64_t abort_ip,
			     const struct elfscan_loc *start);

#endif
