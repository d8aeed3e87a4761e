/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared between the library's files; never installed. */
#ifndef ELFSCAN_INTERNAL_H
#define ELFSCAN_INTERNAL_H

#include <gelf.h>
#include <stdarg.h>

#include "elfscan.h"

struct es_symtab; /* symbols.c */
struct es_dwarf;  /* dwarf.c */

struct elfscan {
	char *path;
	const unsigned char *image; /* the whole file (mapped or the caller's buffer) */
	size_t size;
	bool unmap;		    /* image came from mmap() */
	Elf *elf;
	GElf_Ehdr ehdr;
	size_t shnum, shstrndx;
	/* Address of each section: sh_addr, or for ET_REL a layout in index order of the
	 * SHF_ALLOC sections at sh_addralign from 0 (what the lookups and symbols use). */
	uint64_t *secaddr;
	/* Loaded bytes with relocations applied, per SHF_ALLOC section (NULL for NOBITS). */
	unsigned char **secdata;

	struct elfscan_segment *segs;
	size_t nsegs;

	struct elfscan_cs *cs; /* sorted by start_ip, desc_addr */
	size_t ncs;
	uint64_t *maxend; /* maxend[i] = max post_commit_ip over cs[0..i] (interval lookup) */
	struct elfscan_site *sites;
	struct elfscan_exit *exits;
	size_t nexits;
	uint32_t sources;
	char *build_id;

	struct elfscan_opts opts;
	struct es_symtab *syms; /* built on first use */
	struct es_dwarf *dw;	/* opened on first use; dw_tried once looked for */
	bool dw_tried;
};

/* error.c: record the thread's last failure and return -err (err > 0). */
int es_err(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* symbols.c, dwarf.c: free what they hung on es (NULL-safe). */
void es_symtab_free(struct es_symtab *st);
void es_dwarf_free(struct es_dwarf *dw);

#endif
