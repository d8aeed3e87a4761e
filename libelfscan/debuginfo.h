/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What dwarf.c offers symbols.c: debug information of the file or its separate debug file. */
#ifndef ELFSCAN_DEBUGINFO_H
#define ELFSCAN_DEBUGINFO_H

#include "internal.h"

/* The separate debug file (found by build-id or .gnu_debuglink), NULL when none. Its
 * symbol table stands in for a stripped file's: the addresses are the same. */
Elf *es_debug_elf(struct elfscan *es);

/* Source position of addr from the line table; -ENOENT when no row covers it. */
int es_dwarf_line(struct elfscan *es, uint64_t addr, const char **file, int *line, int *col);

/* The inline chain at addr (elfscan_inlines()). */
size_t es_dwarf_inlines(struct elfscan *es, uint64_t addr, struct elfscan_inline *out, size_t max);

/* The DW_TAG_subprogram covering addr (innermost start); NULL when none. */
const char *es_dwarf_func(struct elfscan *es, uint64_t addr, uint64_t *lo, uint64_t *hi);

/* Lowest entry address of a subprogram named name; -ENOENT when none. */
int es_dwarf_resolve_func(struct elfscan *es, const char *name, uint64_t *addr);

/* The entry addresses of the inlined instances (DW_TAG_inlined_subroutine) of the function
 * name, in DWARF order, up to max into out; returns how many there are. */
size_t es_dwarf_resolve_inlined(struct elfscan *es, const char *name, uint64_t *out, size_t max);

/* Lowest is_stmt address of FILE:LINE, or of the next line with code; -ENOENT when none. */
int es_dwarf_resolve_line(struct elfscan *es, const char *file, int line, uint64_t *addr);

#endif
