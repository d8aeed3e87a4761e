/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libelfscan: decode the Linux rseq descriptor tables carried by an ELF file.
 *
 * Every address the library returns is the value the dynamic loader would see at load
 * base 0 (relocations applied); add a module's load bias for runtime addresses. Functions
 * that can fail return 0 or a negative errno; the text of the last failure in this thread
 * is in elfscan_errmsg(). The library never prints and never exits.
 */
#ifndef ELFSCAN_H
#define ELFSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility: what this header declares is its API. */
#pragma GCC visibility push(default)

struct elfscan;

/* Where a descriptor was found; a descriptor may be found in several tables. */
enum elfscan_source {
	ELFSCAN_SRC_CS_PTR_ARRAY = 1 << 0,  /* __rseq_cs_ptr_array slot -> __rseq_cs */
	ELFSCAN_SRC_CS = 1 << 1,	    /* __rseq_cs walked by 32-byte stride */
	ELFSCAN_SRC_TABLE_2018 = 1 << 2,    /* __rseq_table, 32-byte struct rseq_cs */
	ELFSCAN_SRC_TABLE_2016 = 1 << 3,    /* __rseq_table, {start, post_commit, abort} words */
	ELFSCAN_SRC_SECTIONS_2015 = 1 << 4, /* __rseq_sections, {begin, end, restart} u64 */
	ELFSCAN_SRC_EXIT_POINTS = 1 << 5,   /* __rseq_exit_point_array present */
};

/* What the 4 bytes before abort_ip say. */
enum elfscan_sig_status {
	ELFSCAN_SIG_MATCH = 0,	      /* a signature known for this architecture */
	ELFSCAN_SIG_MISMATCH = 1,     /* readable, but not a known signature */
	ELFSCAN_SIG_UNREADABLE = 2,   /* abort_ip - 4 is not in the file's loaded bytes */
	ELFSCAN_SIG_UNKNOWN_ARCH = 3, /* no signature known for this machine */
};

struct elfscan_site {
	uint32_t source; /* one enum elfscan_source bit */
	uint64_t addr;	 /* address of the table entry (slot or descriptor) */
};

struct elfscan_exit {
	uint64_t addr; /* address of the {start_ip, exit_ip} entry */
	uint64_t start_ip;
	uint64_t exit_ip;
};

/* One critical section. Owned by the struct elfscan that returned it. */
struct elfscan_cs {
	uint64_t desc_addr; /* the descriptor (struct rseq_cs or legacy triple) */
	uint32_t version;   /* 0 for the legacy triple formats */
	uint32_t flags;
	uint64_t start_ip;
	uint64_t post_commit_offset;
	uint64_t post_commit_ip; /* start_ip + post_commit_offset (wrapping) */
	uint64_t abort_ip;
	uint32_t sources;     /* OR of every site's source */
	uint8_t sig_bytes[4]; /* file bytes at abort_ip - 4, when readable */
	uint32_t signature;   /* sig_bytes read in the file's byte order */
	enum elfscan_sig_status sig_status;
	size_t nsites;
	const struct elfscan_site *sites; /* every table entry that leads here, in file order */
	size_t nexits;
	const struct elfscan_exit *exits; /* exit points whose start_ip is this start_ip */
};

/* A place in the program: function and, with DWARF, source line. */
struct elfscan_loc {
	const char *func;  /* NULL when no symbol covers the address */
	uint64_t func_off; /* address - function start */
	uint64_t func_addr;
	const char *file; /* NULL without DWARF line info */
	int line;	  /* 0 without DWARF line info */
	int column;
	/* No symbol covers addr (func NULL): the ELF section holding it and the offset there,
	 * "__rseq_failure+0x2b" as objdump names such code; NULL otherwise. */
	const char *section;
	uint64_t section_off;
	/* addr is in code inlined into func (DWARF DW_TAG_inlined_subroutine): the innermost
	 * inlined function, whose source file:line above are; the depth of the inline chain
	 * (elfscan_inlines() gives every link); and the call site in func of the outermost
	 * inlined call. NULL and 0 when addr is in no inlined code. */
	const char *inlined;
	unsigned int ninlined;
	const char *call_file;
	int call_line;
};

/* One link of an inline chain: the function inlined, and where it was called from (in the
 * next link's function, or in the containing function for the last). */
struct elfscan_inline {
	const char *func;
	const char *call_file; /* NULL when DWARF does not say */
	int call_line, call_column;
};

/* A PT_LOAD segment. */
struct elfscan_segment {
	uint64_t vaddr, memsz, offset, filesz, align;
	uint32_t flags; /* PF_R | PF_W | PF_X */
};

/* A source of separate debug files beyond the local directories, such as a debuginfod
 * client: given the file's build-id (lowercase hex), set *path to a debug file's name
 * (malloc'd; the library frees it) and return 0, or return a negative errno. The library
 * itself never reaches the network. */
typedef int (*elfscan_find_debuginfo_fn)(const char *build_id, char **path, void *ctx);

struct elfscan_opts {
	size_t sz;		/* sizeof(struct elfscan_opts) */
	const char *debug_dirs; /* ':'-separated roots for separate debug files
				   (default "/usr/lib/debug") */
	bool no_debuginfo;	/* do not look for DWARF at all */
	/* The root directory of the file's own system when it is not ours (a process in a
	 * container: "/proc/PID/root"): debug_dirs are searched under it before ours, and so is
	 * the directory of sysroot_path (the file's path under that root) for .gnu_debuglink. */
	const char *sysroot;
	const char *sysroot_path;
	/* Asked once, when no local debug file was found (NULL: never). */
	elfscan_find_debuginfo_fn find_debuginfo;
	void *find_debuginfo_ctx;
};

/* Open a file or a memory buffer (the buffer must outlive the handle). */
int elfscan_open(const char *path, const struct elfscan_opts *opts, struct elfscan **res);
int elfscan_open_mem(const void *buf, size_t len, const struct elfscan_opts *opts,
		     struct elfscan **res);
void elfscan_close(struct elfscan *es);

/* The text of the last failure in this thread ("" when none). */
const char *elfscan_errmsg(void);

/* The file */
const char *elfscan_path(const struct elfscan *es);	 /* "<memory>" for a buffer */
uint16_t elfscan_machine(const struct elfscan *es);	 /* e_machine */
const char *elfscan_arch_name(const struct elfscan *es); /* "x86_64", ... or "EM_<n>" */
int elfscan_class(const struct elfscan *es);		 /* 32 or 64 */
bool elfscan_big_endian(const struct elfscan *es);
uint16_t elfscan_type(const struct elfscan *es);    /* ET_EXEC, ET_DYN, ET_REL, ... */
bool elfscan_is_pie(const struct elfscan *es);	    /* ET_DYN with DF_1_PIE or PT_INTERP */
bool elfscan_has_interp(const struct elfscan *es);  /* PT_INTERP: not a static executable */
uint32_t elfscan_sources(const struct elfscan *es); /* OR of enum elfscan_source found */
/* Build-id as lowercase hex; NULL when the file has none. */
const char *elfscan_build_id(const struct elfscan *es);

size_t elfscan_nsegments(const struct elfscan *es);
const struct elfscan_segment *elfscan_segment(const struct elfscan *es, size_t i);
/* The address at which file offset off is mapped; -ENOENT when no PT_LOAD maps it. */
int elfscan_offset_to_addr(const struct elfscan *es, uint64_t off, uint64_t *addr);
/* Copy len loaded bytes at addr (relocations applied); -EFAULT when not all in the file. */
int elfscan_read(const struct elfscan *es, uint64_t addr, void *buf, size_t len);

/* Critical sections, sorted by start_ip then desc_addr. */
size_t elfscan_count(const struct elfscan *es);
const struct elfscan_cs *elfscan_get(const struct elfscan *es, size_t i);
/* The section containing addr ([start_ip, post_commit_ip)); NULL when none. O(log n). */
const struct elfscan_cs *elfscan_lookup(const struct elfscan *es, uint64_t addr);
/* Every section containing addr (overlaps), up to max; returns how many there are. */
size_t elfscan_lookup_all(const struct elfscan *es, uint64_t addr, const struct elfscan_cs **out,
			  size_t max);

/* Exit points of the file, including those matching no section. */
size_t elfscan_nexits(const struct elfscan *es);
const struct elfscan_exit *elfscan_exit_point(const struct elfscan *es, size_t i);

/* Symbolize addr: function from the symbol table (or DWARF), file:line from DWARF.
 * Strings live as long as es. Returns -ENOENT (loc zeroed) when nothing covers addr. */
int elfscan_symbolize(struct elfscan *es, uint64_t addr, struct elfscan_loc *loc);
/* The inline chain at addr, innermost first, as DWARF's scopes give it (DW_TAG_inlined_subroutine
 * entries up to the DW_TAG_subprogram): up to max links into out; returns how many there are
 * (0 outside inlined code, without DWARF, or in a relocatable file). Strings live as long as es. */
size_t elfscan_inlines(struct elfscan *es, uint64_t addr, struct elfscan_inline *out, size_t max);
/* Whether DWARF line information was found (in the file or a separate debug file). */
bool elfscan_has_dwarf(struct elfscan *es);
/* Path of the separate debug file used, NULL when none. */
const char *elfscan_debug_file(struct elfscan *es);
/* Resolve a function name as the source spells it (a compiler clone "f.constprop.0" is
 * found as "f"), or "FILE:LINE"; returns the lowest matching address. */
int elfscan_resolve(struct elfscan *es, const char *spec, uint64_t *addr);
/* Every address spec names, ascending, up to max into out: for a function, the address
 * elfscan_resolve() gives (when it has one out of line) and the entry of each of its inlined
 * instances (DWARF DW_TAG_inlined_subroutine), so that a name found only inlined resolves too;
 * for FILE:LINE or a number, the one address. Returns how many there are (possibly more than
 * max), or -ENOENT. */
int elfscan_resolve_all(struct elfscan *es, const char *spec, uint64_t *out, size_t max);
/* Function bounds [lo, hi) covering addr from the symbol table; -ENOENT when none. */
int elfscan_func_range(struct elfscan *es, uint64_t addr, uint64_t *lo, uint64_t *hi);

/* Signatures */
/* The signatures known for e_machine (current first, then pre-2019 0x53053053 where it
 * applied); returns how many, 0 for an unknown machine. */
size_t elfscan_known_signatures(uint16_t machine, uint32_t *sigs, size_t max);
const char *elfscan_source_name(enum elfscan_source src);	 /* "__rseq_cs_ptr_array", ... */
const char *elfscan_sig_status_name(enum elfscan_sig_status st); /* "match", ... */

/* Whether the file itself carries DWARF line information; unlike elfscan_has_dwarf(), no
 * separate debug file is searched for (cheap: section headers only). */
bool elfscan_has_own_dwarf(struct elfscan *es);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif /* ELFSCAN_H */
