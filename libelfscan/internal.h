/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared between the library's files; never installed. */
#ifndef ELFSCAN_INTERNAL_H
#define ELFSCAN_INTERNAL_H

#include <gelf.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "elfscan.h"

struct es_symtab; /* symbols.c */
struct es_dwarf;  /* dwarf.c */
struct es_isa;	  /* decode-backend.h */

/* Refuse tables larger than this many entries: no real binary comes close. */
#define ES_MAX_ENTRIES (16u << 20)

/*
 * What a section may declare before the file is refused rather than walked (load_sections()):
 * far above what a linker writes, far below what would take minutes or gigabytes of page
 * cache to read. A sparse file can declare 50 GiB of zeros at no cost to its maker.
 */
#define ES_MAX_BUILD_ID_NOTE 4096u   /* .note.gnu.build-id: one note, a digest of <= 256 bytes */
#define ES_MAX_NOTE_WALK (64u << 10) /* bytes of other notes searched for the build-id */
#define ES_MAX_SYMBOLS (32u << 20)   /* entries of a symbol table */
#define ES_MAX_RELOCS (64u << 20)    /* entries of a relocation section */
#define ES_MAX_CODE (1ull << 30)     /* bytes of executable code, all sections together */
#define ES_MAX_STRTAB (1ull << 32)   /* a string table: names are 32-bit offsets into it */
#define ES_MAX_HEADERS (16u << 20)   /* sections, or segments, by extended numbering */

/* Which rseq table a section holds, by its name. */
enum es_tab_kind {
	ES_TAB_CS,	 /* __rseq_cs */
	ES_TAB_PTRS,	 /* __rseq_cs_ptr_array */
	ES_TAB_EXITS,	 /* __rseq_exit_point_array */
	ES_TAB_TABLE,	 /* __rseq_table (2018 or 2016 layout) */
	ES_TAB_SECTIONS, /* __rseq_sections (2015) */
};

/* A table section: a private copy of its bytes, relocated, at its load address. */
struct es_tab {
	enum es_tab_kind kind;
	size_t ndx; /* section index */
	const char *name;
	uint64_t addr, size, align, entsize;
	unsigned char *data; /* size bytes, relocations applied */
};

/* Loaded bytes as the file holds them: a PT_LOAD's file part, or an ET_REL section. */
struct es_region {
	uint64_t addr, size;
	const unsigned char *data;
};

struct elfscan {
	char *path;
	const unsigned char *image; /* the file (mapped or read) up to the end of what its
				     * headers refer to, or the caller's buffer */
	size_t size;
	bool unmap;	     /* image came from mmap() */
	struct stat st;	     /* of the file mapped, to map it again (dwarf.c) */
	unsigned char *copy; /* image, when it is a private copy of the caller's buffer */
	Elf *elf;
	GElf_Ehdr ehdr;
	size_t shnum, shstrndx;
	/* Address of each section: sh_addr, or for ET_REL a layout in index order of the
	 * SHF_ALLOC sections at sh_addralign from 0 (what the lookups and symbols use). */
	uint64_t *secaddr;
	GElf_Shdr *shdrs; /* every section header, converted */
	bool big_endian;
	int wordsz; /* 4 or 8 */

	struct es_tab *tabs; /* the rseq table sections, relocated, in index order */
	size_t ntabs;
	struct es_tab **tab_by_addr; /* the non-empty ones, sorted by address */
	size_t ntab_by_addr;
	struct es_tab **tab_of;	   /* per section index: its table, or NULL */
	struct es_region *regions; /* sorted by addr */
	size_t nregions;
	struct es_region *exec; /* executable ranges (data unused), sorted by addr */
	size_t nexec;

	struct elfscan_segment *segs;
	size_t nsegs;
	bool has_interp;
	uint64_t dt_flags_1;
	uint64_t dt_relr, dt_relrsz, dt_relrent;
	bool has_dt_relr;

	struct elfscan_cs *cs; /* sorted by start_ip, desc_addr */
	size_t ncs;
	uint64_t *maxend; /* maxend[i] = max post_commit_ip over cs[0..i] (interval lookup) */
	struct elfscan_site *sites;
	struct elfscan_exit *exits; /* sorted by start_ip, addr */
	size_t nexits;
	uint32_t sources;
	char *build_id;
	char arch_buf[16];

	struct elfscan_opts opts;
	struct es_symtab *syms; /* built on first use */
	struct es_dwarf *dw;	/* opened on first use; dw_tried once looked for */
	bool dw_tried;
};

/* error.c: record the thread's last failure and return -err (err > 0). The message says
 * what is wrong and where in the file (section, offset, address), never the file's path:
 * the caller names the file it opened. */
int es_err(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Byte-order aware loads and stores of the file's integers (p need not be aligned). */
static inline uint64_t es_bswap(uint64_t v, unsigned int n, bool swap)
{
	if (!swap)
		return v;
	switch (n) {
	case 2:
		return __builtin_bswap16((uint16_t)v);
	case 4:
		return __builtin_bswap32((uint32_t)v);
	default:
		return __builtin_bswap64(v);
	}
}

static inline bool es_swap(const struct elfscan *es)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return !es->big_endian;
#else
	return es->big_endian;
#endif
}

static inline uint64_t es_load(const struct elfscan *es, const void *p, unsigned int n)
{
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	switch (n) {
	case 2:
		memcpy(&v16, p, 2);
		return es_bswap(v16, 2, es_swap(es));
	case 4:
		memcpy(&v32, p, 4);
		return es_bswap(v32, 4, es_swap(es));
	default:
		memcpy(&v64, p, 8);
		return es_bswap(v64, 8, es_swap(es));
	}
}

static inline void es_store(const struct elfscan *es, void *p, unsigned int n, uint64_t v)
{
	uint32_t v32;

	if (n == 4) {
		v32 = (uint32_t)es_bswap((uint32_t)v, 4, es_swap(es));
		memcpy(p, &v32, 4);
	} else {
		v = es_bswap(v, 8, es_swap(es));
		memcpy(p, &v, 8);
	}
}

/* elf.c */
const char *es_secname(const struct elfscan *es, size_t ndx);
/* The table section holding addr, NULL when none. O(log n). */
struct es_tab *es_tab_at(const struct elfscan *es, uint64_t addr);
/* elfscan_read() without setting the error text: 0 or -EFAULT. */
int es_read(const struct elfscan *es, uint64_t addr, void *buf, size_t len);
/* The file's own (unrelocated) bytes for [addr, addr + len) when one region holds them all. */
const unsigned char *es_loaded(const struct elfscan *es, uint64_t addr, uint64_t len);
/* Whether addr lies in executable code (PF_X segment, or SHF_EXECINSTR section). */
bool es_in_exec(const struct elfscan *es, uint64_t addr);

/* reloc.c: apply the relocations that touch the table sections' copies. */
int es_relocate(struct elfscan *es);

/* formats.c: decode every table into es->cs / es->sites / es->exits (unsorted). */
int es_decode(struct elfscan *es);

/* qsort() for arrays that may be empty: qsort(NULL, 0, ...) is undefined behaviour, and an
 * empty table's array is often NULL. */
static inline void es_qsort(void *base, size_t n, size_t size,
			    int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

/* lookup.c: qsort() that is linear when the array is sorted or two sorted runs, as tables
 * usually are; 0 or -ENOMEM. */
int es_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
/* lookup.c: sort sections and exits, build the interval index, attach exits. */
int es_index(struct elfscan *es);

/* arch.c */
enum es_rkind {
	ES_R_NONE,     /* leaves the word alone (R_*_NONE; machines whose types we do not map) */
	ES_R_UNKNOWN,  /* a type that cannot describe a table word: the file is wrong */
	ES_R_RELATIVE, /* B + A */
	ES_R_ABS,      /* S + A */
	ES_R_ADD,      /* in place + S + A */
	ES_R_SUB,      /* in place - (S + A) */
};
/* How relocation type applies on machine, and how many bytes it writes. */
enum es_rkind es_reloc_kind(uint16_t machine, int wordsz, uint32_t type, unsigned int *width);
const char *es_machine_name(uint16_t machine); /* NULL when unknown */
/* The signatures a file of this machine and byte order may carry. */
size_t es_known_signatures(uint16_t machine, bool big_endian, uint32_t *sigs, size_t max);
/* Whether the machine's signature is the operand of an instruction (x86) rather than an
 * instruction of its own, and whether the ES_SIG_OPCODE bytes before a signature are the
 * opcode of that instruction. */
#define ES_SIG_OPCODE 3
bool es_sig_in_insn(uint16_t machine);
bool es_sig_opcode(uint16_t machine, const unsigned char *before);
/* Whether the machine's compilers leave an inline copy of a descriptor in .text (arm, mips). */
bool es_inline_descriptors(uint16_t machine);
/* The machine's instruction decoder (decode-backend.h); NULL when it is not decoded. */
const struct es_isa *es_machine_isa(uint16_t machine);

/* symbols.c, dwarf.c: free what they hung on es (NULL-safe). */
void es_symtab_free(struct es_symtab *st);
void es_dwarf_free(struct es_dwarf *dw);

#endif
