// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * DWARF through libdw: the line table and the subprograms of the file, or of its separate
 * debug file (found by build-id, then by .gnu_debuglink with its CRC checked, in the file's
 * own system root and then ours; last from the caller's find_debuginfo). Both are read
 * once into sorted arrays so that a lookup is a binary search. A .o goes through libdwfl,
 * which applies the relocations of its debug sections.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include <zlib.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "debuginfo.h"
#include "internal.h"

#define DEFAULT_DEBUG_DIRS "/usr/lib/debug"

struct es_line {
	uint64_t addr;
	const char *file; /* full path as libdw composes it (comp_dir, include dir, name) */
	int line, col;
	uint32_t order; /* position in the table, to keep the sort stable */
	bool end_seq, stmt;
};

struct es_range {
	uint64_t lo, hi;
};

struct es_func {
	uint64_t lo, hi;
	uint64_t entry; /* where a call enters: the first range of a function split in parts */
	const char *name;
};

/* A section's addresses as DWARF gives them (in a .o: where libdwfl placed it) and the
 * library's address of its start. */
struct es_relsec {
	uint64_t dwfl_lo, dwfl_hi, addr;
};

struct es_dwarf {
	Elf *src; /* where the DWARF is: es->elf or debug_elf; NULL when none */
	bool opened;
	Dwarf *dbg;
	Elf *self; /* our own handle on the image, so that libdw never alters es->elf */
	Dwfl *dwfl;
	char *copy; /* the image, where libelf is to write into it (see needs_copy()) */
	size_t copy_len;
	bool copy_mapped; /* copy is a private mapping of the file, not a heap copy */
	struct es_relsec *rel;
	size_t nrel;
	uint64_t dwarf_bias;

	char *debug_path; /* separate debug file */
	int debug_fd;
	Elf *debug_elf;

	struct es_line *lines;
	uint64_t *line_addr; /* lines[i].addr, packed: the binary search touches fewer lines */
	size_t nlines;
	bool lines_built;
	struct es_range *units; /* address ranges of the units, sorted, disjoint */
	size_t nunits;
	bool unbounded;	       /* a unit with rows but no ranges: rows are taken as they are */
	struct es_func *funcs; /* sorted by lo */
	uint64_t *func_maxend;
	size_t nfuncs;
	bool funcs_built;
};

void es_dwarf_free(struct es_dwarf *dw)
{
	if (!dw)
		return;
	if (dw->dwfl)
		dwfl_end(dw->dwfl); /* owns dbg */
	else if (dw->dbg)
		dwarf_end(dw->dbg);
	free(dw->rel);
	if (dw->self)
		elf_end(dw->self);
	if (dw->copy_mapped)
		munmap(dw->copy, dw->copy_len);
	else
		free(dw->copy);
	if (dw->debug_elf)
		elf_end(dw->debug_elf);
	if (dw->debug_fd >= 0)
		close(dw->debug_fd);
	free(dw->debug_path);
	free(dw->lines);
	free(dw->line_addr);
	free(dw->units);
	free(dw->funcs);
	free(dw->func_maxend);
	free(dw);
}

/* The NT_GNU_BUILD_ID bytes of elf, as lowercase hex in buf; false when it has none. */
static bool build_id_hex(Elf *elf, char *buf, size_t bufsz)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		GElf_Nhdr nhdr;
		size_t off = 0, noff, doff, i;

		/* A separate debug file is read like the file itself: no note area is walked
		 * past what a build-id note can need (elf.c's note_build_id()). */
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE ||
		    shdr.sh_size > ES_MAX_NOTE_WALK)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		while ((off = gelf_getnote(data, off, &nhdr, &noff, &doff)) > 0) {
			const unsigned char *desc = (const unsigned char *)data->d_buf + doff;

			if (nhdr.n_type != NT_GNU_BUILD_ID || nhdr.n_namesz != 4 ||
			    memcmp((const char *)data->d_buf + noff, "GNU", 4) || !nhdr.n_descsz ||
			    nhdr.n_descsz * 2 + 1 > bufsz)
				continue;
			for (i = 0; i < nhdr.n_descsz; i++)
				snprintf(buf + 2 * i, 3, "%02x", desc[i]);
			return true;
		}
	}
	return false;
}

/* The CRC of a debuglink covers the whole debug file: one larger than this (a file padded
 * to 100 GB, sparse, costs its maker nothing) is not read through to compute it. */
#define DEBUGLINK_CRC_MAX (8ull << 30)

/* Open path as a separate debug file: ELF, with DWARF or a symbol table. */
static bool try_debug_file(struct es_dwarf *dw, const char *path, const char *want_id,
			   bool check_crc, uint32_t crc)
{
	char id[256];
	Elf *elf;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (check_crc) {
		struct stat sb;
		void *map;
		uLong sum;

		if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || !sb.st_size ||
		    (uint64_t)sb.st_size > DEBUGLINK_CRC_MAX)
			goto fail;
		map = mmap(NULL, sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED)
			goto fail;
		sum = crc32_z(0, map, sb.st_size);
		munmap(map, sb.st_size);
		if ((uint32_t)sum != crc)
			goto fail;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		goto fail_elf;
	if (want_id && (!build_id_hex(elf, id, sizeof(id)) || strcmp(id, want_id)))
		goto fail_elf;
	dw->debug_path = strdup(path);
	if (!dw->debug_path)
		goto fail_elf;
	dw->debug_fd = fd;
	dw->debug_elf = elf;
	return true;
fail_elf:
	if (elf)
		elf_end(elf);
fail:
	close(fd);
	return false;
}

/* Call fn for each ':'-separated debug directory, under root ("" for ours), until it returns
 * true. */
static bool each_debug_dir(struct elfscan *es, const char *root,
			   bool (*fn)(struct elfscan *, const char *, void *), void *arg)
{
	const char *dirs = es->opts.debug_dirs ? es->opts.debug_dirs : DEFAULT_DEBUG_DIRS;
	char dir[PATH_MAX];

	while (*dirs) {
		size_t len = strcspn(dirs, ":");
		int n = snprintf(dir, sizeof(dir), "%s%.*s", root, (int)len, dirs);

		if (len && n < (int)sizeof(dir) && fn(es, dir, arg))
			return true;
		dirs += len;
		if (*dirs == ':')
			dirs++;
	}
	return false;
}

static bool by_build_id(struct elfscan *es, const char *dir, void *arg)
{
	const char *id = arg;
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", dir, id, id + 2) >=
	    (int)sizeof(path))
		return false;
	return try_debug_file(es->dw, path, id, false, 0);
}

struct debuglink {
	const char *name; /* the file name the link gives */
	const char *dir;  /* directory of the file itself, as seen from the root searched */
	uint32_t crc;
};

static bool by_debuglink_dir(struct elfscan *es, const char *root, void *arg)
{
	const struct debuglink *link = arg;
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s%s/%s", root, link->dir, link->name) >=
	    (int)sizeof(path))
		return false;
	return try_debug_file(es->dw, path, NULL, true, link->crc);
}

/* The places of a debuglink under root, for a file in directory link->dir of that root: beside
 * the file, in its .debug, then under each debug directory followed by the file's directory. */
static bool debuglink_places(struct elfscan *es, const char *root, const struct debuglink *link)
{
	char path[PATH_MAX];

	/* A file cannot carry its own CRC, so the file itself never matches. */
	if (snprintf(path, sizeof(path), "%s%s/%s", root, link->dir, link->name) <
		(int)sizeof(path) &&
	    try_debug_file(es->dw, path, NULL, true, link->crc))
		return true;
	if (snprintf(path, sizeof(path), "%s%s/.debug/%s", root, link->dir, link->name) <
		(int)sizeof(path) &&
	    try_debug_file(es->dw, path, NULL, true, link->crc))
		return true;
	return each_debug_dir(es, root, by_debuglink_dir, (void *)link);
}

/* .gnu_debuglink: a file name, padding to 4 bytes, the CRC-32 of the debug file. */
static bool by_debuglink(struct elfscan *es)
{
	char real[PATH_MAX], *slash;
	struct debuglink link;
	Elf_Scn *scn = NULL;
	Elf_Data *data;
	GElf_Shdr shdr;
	size_t len, shstrndx;
	const unsigned char *p;
	const char *name;

	if (!es->path || !strcmp(es->path, "<memory>") || elf_getshdrstrndx(es->elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(es->elf, scn))) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_PROGBITS)
			continue;
		name = elf_strptr(es->elf, shstrndx, shdr.sh_name);
		if (name && !strcmp(name, ".gnu_debuglink"))
			break;
	}
	/* A file name, padding and a CRC: a bigger section holds no debuglink to read. */
	if (!scn || shdr.sh_size > NAME_MAX + 8 || !(data = elf_rawdata(scn, NULL)) || !data->d_buf)
		return false;
	p = data->d_buf;
	len = strnlen((const char *)p, data->d_size);
	if (!len || len == data->d_size || strchr((const char *)p, '/'))
		return false;
	len = (len + 4) & ~(size_t)3;
	if (data->d_size < len + 4)
		return false;
	memcpy(&link.crc, p + len, 4);
	if ((es->ehdr.e_ident[EI_DATA] == ELFDATA2MSB) != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__))
		link.crc = __builtin_bswap32(link.crc);
	link.name = (const char *)p;
	/* The file's own system first, where its path is the one its processes see. */
	if (es->opts.sysroot && es->opts.sysroot_path && es->opts.sysroot_path[0] == '/') {
		snprintf(real, sizeof(real), "%s", es->opts.sysroot_path);
		*strrchr(real, '/') = 0;
		link.dir = real;
		if (debuglink_places(es, es->opts.sysroot, &link))
			return true;
	}
	if (!realpath(es->path, real))
		snprintf(real, sizeof(real), "%s", es->path);
	slash = strrchr(real, '/');
	if (slash) {
		*slash = 0;
		link.dir = real;
	} else {
		link.dir = ".";
	}
	return debuglink_places(es, "", &link);
}

/* The local places by build-id, in the file's own system first, then a debuglink; last what
 * the caller's find_debuginfo gives for the build-id (checked like a local file). */
static void find_debug_file(struct elfscan *es)
{
	char id[256], *path = NULL;
	bool have_id = build_id_hex(es->elf, id, sizeof(id)) && strlen(id) > 2;

	if (have_id && es->opts.sysroot && each_debug_dir(es, es->opts.sysroot, by_build_id, id))
		return;
	if (have_id && each_debug_dir(es, "", by_build_id, id))
		return;
	if (by_debuglink(es) || !have_id || !es->opts.find_debuginfo)
		return;
	if (!es->opts.find_debuginfo(id, &path, es->opts.find_debuginfo_ctx) && path)
		try_debug_file(es->dw, path, id, false, 0);
	free(path);
}

static int no_debuginfo_search(Dwfl_Module *mod, void **userdata, const char *modname,
			       Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			       GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	return -1;
}

/*
 * libelf takes a buffer given to elf_memory() as writable: decompressing a debug section
 * rewrites its section header in place, and libdwfl lays a .o out by rewriting sh_addr. The
 * image is read-only (a PROT_READ mapping or the caller's buffer), so those get a copy.
 */
static bool needs_copy(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	size_t shstrndx;
	const char *name;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr))
			continue;
		if (shdr.sh_flags & SHF_COMPRESSED)
			return true;
		name = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (name && !strncmp(name, ".zdebug", 7))
			return true;
	}
	return false;
}

/*
 * A mapped file is mapped once more, copy-on-write: only the pages libelf writes to are
 * copied, never the whole of what the file's headers declare (a sparse file may declare
 * gigabytes). The file must still be the one opened; otherwise no DWARF is read.
 */
static char *remap_image(const struct elfscan *es, struct es_dwarf *dw)
{
	int fd = open(es->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	void *map = MAP_FAILED;
	struct stat st;

	if (fd < 0)
		return NULL;
	if (!fstat(fd, &st) && st.st_dev == es->st.st_dev && st.st_ino == es->st.st_ino &&
	    st.st_size == es->st.st_size && st.st_mtim.tv_sec == es->st.st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == es->st.st_mtim.tv_nsec)
		map = mmap(NULL, es->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_NORESERVE, fd,
			   0);
	close(fd);
	if (map == MAP_FAILED)
		return NULL;
	dw->copy = map;
	dw->copy_len = es->size;
	dw->copy_mapped = true;
	return dw->copy;
}

static char *private_image(struct elfscan *es, struct es_dwarf *dw)
{
	if (es->unmap)
		return remap_image(es, dw);
	dw->copy = malloc(es->size ? es->size : 1);
	if (dw->copy)
		memcpy(dw->copy, es->image, es->size);
	return dw->copy;
}

static int relsec_cmp(const void *a, const void *b)
{
	const struct es_relsec *x = a, *y = b;

	return x->dwfl_lo < y->dwfl_lo ? -1 : x->dwfl_lo > y->dwfl_lo;
}

/* A .o: libdwfl lays its sections out and applies the relocations of the debug sections;
 * map its layout to the library's, section by section. */
static void open_relocatable(struct elfscan *es, struct es_dwarf *dw)
{
	static const Dwfl_Callbacks cb = {
	    .find_debuginfo = no_debuginfo_search,
	    .section_address = dwfl_offline_section_address,
	};
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	Elf *elf;

	dw->dwfl = dwfl_begin(&cb);
	if (!dw->dwfl || !private_image(es, dw))
		return;
	mod = dwfl_report_offline_memory(dw->dwfl, "object", "object", dw->copy, es->size);
	if (!mod || dwfl_report_end(dw->dwfl, NULL, NULL))
		return;
	dw->dbg = dwfl_module_getdwarf(mod, &dw->dwarf_bias);
	elf = dwfl_module_getelf(mod, &bias);
	if (!dw->dbg || !elf || !es->secaddr)
		goto none;
	dw->rel = calloc(es->shnum ? es->shnum : 1, sizeof(*dw->rel));
	if (!dw->rel)
		goto none;
	while ((scn = elf_nextscn(elf, scn))) {
		size_t ndx = elf_ndxscn(scn);

		if (!gelf_getshdr(scn, &shdr) || !(shdr.sh_flags & SHF_ALLOC) || !shdr.sh_size ||
		    ndx >= es->shnum)
			continue;
		dw->rel[dw->nrel].dwfl_lo = shdr.sh_addr + bias;
		dw->rel[dw->nrel].dwfl_hi = shdr.sh_addr + bias + shdr.sh_size;
		dw->rel[dw->nrel].addr = es->secaddr[ndx];
		dw->nrel++;
	}
	es_qsort(dw->rel, dw->nrel, sizeof(*dw->rel), relsec_cmp);
	return;
none:
	dw->dbg = NULL;
}

/* From a DWARF address to the library's; false for code that is in no section (a function
 * discarded by the linker keeps its rows at 0 or at a tombstone value). An end address
 * belongs to the section it ends. */
static bool to_addr(const struct es_dwarf *dw, Dwarf_Addr a, bool at_end, uint64_t *addr)
{
	ssize_t lo = 0, hi = (ssize_t)dw->nrel - 1, j = -1;
	uint64_t key;

	a += dw->dwarf_bias;
	if (!dw->nrel) {
		*addr = a; /* no section headers to check against */
		return !dw->dwfl;
	}
	if (at_end && !a)
		return false;
	key = at_end ? a - 1 : a;
	while (lo <= hi) {
		ssize_t mid = lo + (hi - lo) / 2;

		if (dw->rel[mid].dwfl_lo <= key) {
			j = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	if (j < 0 || key >= dw->rel[j].dwfl_hi)
		return false;
	*addr = a - dw->rel[j].dwfl_lo + dw->rel[j].addr;
	return true;
}

/* Where code can be: the executable sections. */
static void find_text(struct elfscan *es, struct es_dwarf *dw)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	dw->rel = calloc(es->shnum ? es->shnum : 1, sizeof(*dw->rel));
	if (!dw->rel)
		return;
	while ((scn = elf_nextscn(es->elf, scn))) {
		if (!gelf_getshdr(scn, &shdr) || !(shdr.sh_flags & SHF_EXECINSTR) ||
		    !(shdr.sh_flags & SHF_ALLOC) || !shdr.sh_size || dw->nrel >= es->shnum)
			continue;
		dw->rel[dw->nrel].dwfl_lo = shdr.sh_addr;
		dw->rel[dw->nrel].dwfl_hi = shdr.sh_addr + shdr.sh_size;
		dw->rel[dw->nrel].addr = shdr.sh_addr;
		dw->nrel++;
	}
	es_qsort(dw->rel, dw->nrel, sizeof(*dw->rel), relsec_cmp);
}

/* Whether elf carries the DWARF section .debug_<what> (or its old compressed .zdebug_). */
static bool has_debug_section(Elf *elf, const char *what)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	size_t shstrndx;
	const char *name;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS || !shdr.sh_size)
			continue;
		name = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (!name)
			continue;
		if (!strncmp(name, ".zdebug_", 8))
			name += 8;
		else if (!strncmp(name, ".debug_", 7))
			name += 7;
		else
			continue;
		if (!strcmp(name, what))
			return true;
	}
	return false;
}

/*
 * Decide once where DWARF comes from: the file's own sections, else a separate debug file.
 * Nothing is decompressed or parsed yet: a scan asks this of every file, while the tables
 * are only read when an address is symbolized (dwarf_open()).
 */
static struct es_dwarf *dwarf_get(struct elfscan *es)
{
	struct es_dwarf *dw;

	if (es->dw_tried)
		return es->dw;
	es->dw_tried = true;
	dw = calloc(1, sizeof(*dw));
	if (!dw)
		return NULL;
	dw->debug_fd = -1;
	es->dw = dw;
	if (es->opts.no_debuginfo || !es->elf || !es->image)
		return dw;
	if (has_debug_section(es->elf, "info")) {
		dw->src = es->elf;
		return dw;
	}
	if (es->ehdr.e_type == ET_REL)
		return dw;
	find_debug_file(es);
	if (has_debug_section(dw->debug_elf, "info"))
		dw->src = dw->debug_elf;
	return dw;
}

/* Open the DWARF chosen by dwarf_get(), on first need. */
static struct es_dwarf *dwarf_open(struct elfscan *es)
{
	struct es_dwarf *dw = dwarf_get(es);

	if (!dw || dw->opened || !dw->src)
		return dw;
	dw->opened = true;
	if (es->ehdr.e_type == ET_REL) {
		open_relocatable(es, dw);
		return dw;
	}
	find_text(es, dw);
	if (dw->src == dw->debug_elf) {
		dw->dbg = dwarf_begin_elf(dw->debug_elf, DWARF_C_READ, NULL);
		return dw;
	}
	if (!needs_copy(es->elf))
		dw->self = elf_memory((char *)es->image, es->size);
	else if (private_image(es, dw))
		dw->self = elf_memory(dw->copy, es->size);
	if (dw->self)
		dw->dbg = dwarf_begin_elf(dw->self, DWARF_C_READ, NULL);
	return dw;
}

Elf *es_debug_elf(struct elfscan *es)
{
	struct es_dwarf *dw = dwarf_get(es);

	return dw ? dw->debug_elf : NULL;
}

const char *elfscan_debug_file(struct elfscan *es)
{
	struct es_dwarf *dw = es ? dwarf_get(es) : NULL;

	return dw ? dw->debug_path : NULL;
}

static int line_cmp(const void *a, const void *b)
{
	const struct es_line *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* The end of one sequence comes before a row starting the next at that address. */
	if (x->end_seq != y->end_seq)
		return x->end_seq ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int add_unit_lines(struct es_dwarf *dw, Dwarf_Die *cudie, size_t *cap)
{
	Dwarf_Lines *lines;
	size_t n, i;

	if (dwarf_getsrclines(cudie, &lines, &n))
		return 0;
	for (i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		struct es_line *row;
		Dwarf_Addr a;
		bool end_seq = false, stmt = false;

		if (!l || dwarf_lineaddr(l, &a) || dwarf_lineendsequence(l, &end_seq))
			continue;
		if (dw->nlines == *cap) {
			size_t ncap = *cap ? *cap * 2 : 1024;
			struct es_line *p = realloc(dw->lines, ncap * sizeof(*p));

			if (!p)
				return -ENOMEM;
			dw->lines = p;
			*cap = ncap;
		}
		row = &dw->lines[dw->nlines];
		if (!to_addr(dw, a, end_seq, &row->addr))
			continue;
		dwarf_linebeginstatement(l, &stmt);
		row->end_seq = end_seq;
		row->stmt = stmt;
		row->file = dwarf_linesrc(l, NULL, NULL);
		if (dwarf_lineno(l, &row->line))
			row->line = 0;
		if (dwarf_linecol(l, &row->col))
			row->col = 0;
		row->order = dw->nlines;
		dw->nlines++;
	}
	return 0;
}

/* A unit's ranges bound its rows: the last row of a sequence may sit at its end address,
 * covering nothing, and must not claim the padding after the code. */
static int add_unit_ranges(struct es_dwarf *dw, Dwarf_Die *cudie, size_t *cap)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	bool any = false;

	while ((off = dwarf_ranges(cudie, off, &base, &start, &end)) > 0) {
		struct es_range *r;

		if (end <= start)
			continue;
		any = true;
		if (dw->nunits == *cap) {
			size_t ncap = *cap ? *cap * 2 : 64;
			struct es_range *p = realloc(dw->units, ncap * sizeof(*p));

			if (!p)
				return -ENOMEM;
			dw->units = p;
			*cap = ncap;
		}
		r = &dw->units[dw->nunits];
		if (!to_addr(dw, start, false, &r->lo))
			continue;
		r->hi = r->lo + (end - start);
		dw->nunits++;
	}
	if (!any)
		dw->unbounded = true;
	return 0;
}

static int range_cmp(const void *a, const void *b)
{
	const struct es_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

/* Sort the units' ranges and merge those that touch: in_units() is one binary search. */
static void merge_units(struct es_dwarf *dw)
{
	size_t i, n = 0;

	es_qsort(dw->units, dw->nunits, sizeof(*dw->units), range_cmp);
	for (i = 0; i < dw->nunits; i++) {
		if (n && dw->units[i].lo <= dw->units[n - 1].hi) {
			if (dw->units[i].hi > dw->units[n - 1].hi)
				dw->units[n - 1].hi = dw->units[i].hi;
			continue;
		}
		dw->units[n++] = dw->units[i];
	}
	dw->nunits = n;
}

static bool in_units(const struct es_dwarf *dw, uint64_t addr)
{
	ssize_t lo = 0, hi = (ssize_t)dw->nunits - 1, j = -1;

	if (dw->unbounded)
		return true;
	while (lo <= hi) {
		ssize_t mid = lo + (hi - lo) / 2;

		if (dw->units[mid].lo <= addr) {
			j = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return j >= 0 && addr < dw->units[j].hi;
}

/* Whether a unit's ranges reach into the section holding addr. The compiler does not know
 * of code an inline asm puts in a section of its own (librseq's abort handlers in
 * __rseq_failure): no unit's ranges cover it, though the assembler gave it rows. */
static bool section_in_units(const struct es_dwarf *dw, uint64_t addr)
{
	for (size_t i = 0; i < dw->nrel; i++) {
		uint64_t lo = dw->rel[i].addr, hi = lo + (dw->rel[i].dwfl_hi - dw->rel[i].dwfl_lo);

		if (addr < lo || addr >= hi)
			continue;
		for (size_t u = 0; u < dw->nunits; u++)
			if (dw->units[u].lo < hi && dw->units[u].hi > lo)
				return true;
		return false;
	}
	return true; /* in no section we know: the units decide */
}

/* Every row of every unit, sorted by address once: a lookup is then a binary search. */
static struct es_dwarf *lines_get(struct elfscan *es)
{
	struct es_dwarf *dw = dwarf_open(es);
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	Dwarf_Half version;
	uint8_t unit_type;
	size_t cap = 0, ucap = 0, before, i;

	if (!dw || !dw->dbg || dw->lines_built)
		return dw;
	dw->lines_built = true;
	while (dwarf_get_units(dw->dbg, cu, &cu, &version, &unit_type, &cudie, NULL) == 0) {
		/* A split unit's line table stays in its skeleton, in this file. */
		if (unit_type != DW_UT_compile && unit_type != DW_UT_partial &&
		    unit_type != DW_UT_skeleton)
			continue;
		before = dw->nlines;
		if (add_unit_lines(dw, &cudie, &cap))
			goto nomem;
		if (dw->nlines > before && add_unit_ranges(dw, &cudie, &ucap))
			goto nomem;
	}
	es_qsort(dw->lines, dw->nlines, sizeof(*dw->lines), line_cmp);
	dw->line_addr = malloc((dw->nlines + 1) * sizeof(*dw->line_addr));
	if (!dw->line_addr)
		goto nomem;
	for (i = 0; i < dw->nlines; i++)
		dw->line_addr[i] = dw->lines[i].addr;
	merge_units(dw);
	return dw;
nomem:
	es_err(ENOMEM, "out of memory reading the line table");
	free(dw->lines);
	dw->lines = NULL;
	dw->nlines = 0;
	return dw;
}

/* Asked of every file a scan prints: answered from the section headers until the line
 * tables have been read. */
bool elfscan_has_dwarf(struct elfscan *es)
{
	struct es_dwarf *dw = es ? dwarf_get(es) : NULL;

	if (!dw || !dw->src)
		return false;
	if (dw->lines_built)
		return dw->nlines > 0;
	return has_debug_section(dw->src, "line");
}

bool elfscan_has_own_dwarf(struct elfscan *es)
{
	if (!es || es->opts.no_debuginfo || !es->elf)
		return false;
	if (es->dw_tried)
		return es->dw && es->dw->src == es->elf && elfscan_has_dwarf(es);
	return has_debug_section(es->elf, "info") && has_debug_section(es->elf, "line");
}

int es_dwarf_line(struct elfscan *es, uint64_t addr, const char **file, int *line, int *col)
{
	struct es_dwarf *dw = lines_get(es);
	ssize_t lo = 0, hi, res = -1, j;
	const struct es_line *row;

	if (!dw || !dw->nlines)
		return -ENOENT;
	hi = (ssize_t)dw->nlines - 1;
	while (lo <= hi) {
		ssize_t mid = lo + (hi - lo) / 2;

		if (dw->line_addr[mid] <= addr) {
			res = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	if (res < 0)
		return -ENOENT;
	row = &dw->lines[res];
	/* Rows at one address: like a debugger, the last that starts a statement speaks. */
	for (j = res;
	     !row->stmt && j > 0 && !dw->lines[j - 1].end_seq && dw->lines[j - 1].addr == row->addr;
	     j--) {
		if (dw->lines[j - 1].stmt)
			row = &dw->lines[j - 1];
	}
	/* Past the end of its sequence, or code the compiler attributes to no line. */
	if (row->end_seq || !row->line || !row->file ||
	    (!in_units(dw, addr) && section_in_units(dw, addr)))
		return -ENOENT;
	*file = row->file;
	*line = row->line;
	*col = row->col;
	return 0;
}

static bool file_matches(const char *path, const char *spec)
{
	size_t plen = strlen(path), slen = strlen(spec);

	if (!strcmp(path, spec))
		return true;
	/* "x.c" matches ".../x.c" and "dir/x.c" matches ".../dir/x.c". */
	return slen < plen && !strcmp(path + plen - slen, spec) && path[plen - slen - 1] == '/';
}

int es_dwarf_resolve_line(struct elfscan *es, const char *file, int line, uint64_t *addr)
{
	struct es_dwarf *dw = lines_get(es);
	const char *last_file = NULL;
	bool last_match = false, found = false, found_next = false;
	uint64_t best = 0, best_next = 0;
	int next_line = 0;
	size_t i;

	if (!dw)
		return -ENOENT;
	for (i = 0; i < dw->nlines; i++) {
		const struct es_line *row = &dw->lines[i];

		if (row->end_seq || !row->stmt || !row->file || row->line < line)
			continue;
		if (row->file != last_file) {
			last_file = row->file;
			last_match = file_matches(row->file, file);
		}
		if (!last_match)
			continue;
		if (row->line == line) {
			if (!found || row->addr < best)
				best = row->addr;
			found = true;
		} else if (!found_next || row->line < next_line ||
			   (row->line == next_line && row->addr < best_next)) {
			/* Like a debugger: a line without code stands for the next one with. */
			next_line = row->line;
			best_next = row->addr;
			found_next = true;
		}
	}
	if (!found && !found_next)
		return -ENOENT;
	*addr = found ? best : best_next;
	return 0;
}

/* The file and line an inlined call was made from, in the unit's file table. */
static void call_site(Dwarf_Die *die, Dwarf_Die *cudie, struct elfscan_inline *in)
{
	Dwarf_Attribute attr;
	Dwarf_Files *files;
	Dwarf_Word w;
	size_t nfiles;

	in->call_file = NULL;
	in->call_line = in->call_column = 0;
	if (dwarf_attr(die, DW_AT_call_file, &attr) && !dwarf_formudata(&attr, &w) &&
	    !dwarf_getsrcfiles(cudie, &files, &nfiles) && w < nfiles)
		in->call_file = dwarf_filesrc(files, w, NULL, NULL);
	if (dwarf_attr(die, DW_AT_call_line, &attr) && !dwarf_formudata(&attr, &w) && w <= INT_MAX)
		in->call_line = (int)w;
	if (dwarf_attr(die, DW_AT_call_column, &attr) && !dwarf_formudata(&attr, &w) &&
	    w <= INT_MAX)
		in->call_column = (int)w;
}

size_t es_dwarf_inlines(struct elfscan *es, uint64_t addr, struct elfscan_inline *out, size_t max)
{
	struct es_dwarf *dw = dwarf_open(es);
	Dwarf_Die cudie, *scopes = NULL;
	size_t n = 0;
	int nscopes;

	/* In a .o, DWARF addresses are libdwfl's layout, not the library's. */
	if (!dw || !dw->dbg || dw->dwfl || !dwarf_addrdie(dw->dbg, addr, &cudie))
		return 0;
	/* Past an inlined instance dwarf_getscopes() goes on with its abstract origin's scopes;
	 * the instance's own parents (the functions it was inlined into) come from
	 * dwarf_getscopes_die() on the innermost one. */
	nscopes = dwarf_getscopes(&cudie, addr, &scopes);
	for (int i = 0; i < nscopes; i++) {
		int tag = dwarf_tag(&scopes[i]);
		Dwarf_Die inner = scopes[i];

		if (tag == DW_TAG_subprogram)
			break;
		if (tag != DW_TAG_inlined_subroutine)
			continue;
		free(scopes);
		scopes = NULL;
		nscopes = dwarf_getscopes_die(&inner, &scopes);
		break;
	}
	for (int i = 0; i < nscopes; i++) {
		int tag = dwarf_tag(&scopes[i]);
		Dwarf_Attribute attr;

		if (tag == DW_TAG_subprogram)
			break;
		if (tag != DW_TAG_inlined_subroutine)
			continue;
		if (n < max) {
			out[n].func = NULL;
			if (dwarf_attr_integrate(&scopes[i], DW_AT_name, &attr))
				out[n].func = dwarf_formstring(&attr);
			if (!out[n].func)
				out[n].func = "?";
			call_site(&scopes[i], &cudie, &out[n]);
		}
		n++;
	}
	free(scopes);
	return n;
}

static int add_func(struct es_dwarf *dw, Dwarf_Die *die, size_t *cap)
{
	Dwarf_Attribute attr;
	Dwarf_Addr base, start, end, entry;
	ptrdiff_t off = 0;
	const char *name;
	bool have_entry;
	size_t first = dw->nfuncs;

	if (!dwarf_attr_integrate(die, DW_AT_name, &attr) || !(name = dwarf_formstring(&attr)))
		return 0;
	have_entry = !dwarf_entrypc(die, &entry) && to_addr(dw, entry, false, &entry);
	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
		struct es_func *f;

		if (end <= start)
			continue;
		if (dw->nfuncs == *cap) {
			size_t ncap = *cap ? *cap * 2 : 256;
			struct es_func *p = realloc(dw->funcs, ncap * sizeof(*p));

			if (!p)
				return -ENOMEM;
			dw->funcs = p;
			*cap = ncap;
		}
		f = &dw->funcs[dw->nfuncs];
		if (!to_addr(dw, start, false, &f->lo))
			continue;
		f->hi = f->lo + (end - start);
		f->name = name;
		f->entry = have_entry ? entry : dw->funcs[first].lo;
		dw->nfuncs++;
	}
	return 0;
}

static int walk_funcs(struct es_dwarf *dw, Dwarf_Die *parent, size_t *cap, int depth)
{
	Dwarf_Die die;
	int err;

	if (depth > 64 || dwarf_child(parent, &die))
		return 0;
	do {
		switch (dwarf_tag(&die)) {
		case DW_TAG_subprogram:
			err = add_func(dw, &die, cap);
			if (!err)
				err = walk_funcs(dw, &die, cap, depth + 1);
			break;
		case DW_TAG_namespace:
		case DW_TAG_module:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_lexical_block:
			err = walk_funcs(dw, &die, cap, depth + 1);
			break;
		default:
			err = 0;
		}
		if (err)
			return err;
	} while (dwarf_siblingof(&die, &die) == 0);
	return 0;
}

static int func_cmp(const void *a, const void *b)
{
	const struct es_func *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Subprograms are walked only when the symbol table could not answer. */
static struct es_dwarf *funcs_get(struct elfscan *es)
{
	struct es_dwarf *dw = dwarf_open(es);
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	Dwarf_Half version;
	uint8_t unit_type;
	size_t cap = 0, i;

	if (!dw || !dw->dbg || dw->funcs_built)
		return dw;
	dw->funcs_built = true;
	while (dwarf_get_units(dw->dbg, cu, &cu, &version, &unit_type, &cudie, NULL) == 0) {
		if (unit_type != DW_UT_compile && unit_type != DW_UT_partial)
			continue;
		if (walk_funcs(dw, &cudie, &cap, 0))
			goto nomem;
	}
	es_qsort(dw->funcs, dw->nfuncs, sizeof(*dw->funcs), func_cmp);
	dw->func_maxend = calloc(dw->nfuncs + 1, sizeof(*dw->func_maxend));
	if (!dw->func_maxend)
		goto nomem;
	for (i = 0; i < dw->nfuncs; i++)
		dw->func_maxend[i] = i && dw->func_maxend[i - 1] > dw->funcs[i].hi
					 ? dw->func_maxend[i - 1]
					 : dw->funcs[i].hi;
	return dw;
nomem:
	es_err(ENOMEM, "out of memory reading DWARF subprograms");
	free(dw->funcs);
	dw->funcs = NULL;
	dw->nfuncs = 0;
	return dw;
}

const char *es_dwarf_func(struct elfscan *es, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	struct es_dwarf *dw = funcs_get(es);
	ssize_t l = 0, h, j = -1;

	if (!dw || !dw->nfuncs)
		return NULL;
	h = (ssize_t)dw->nfuncs - 1;
	while (l <= h) {
		ssize_t mid = l + (h - l) / 2;

		if (dw->funcs[mid].lo <= addr) {
			j = mid;
			l = mid + 1;
		} else {
			h = mid - 1;
		}
	}
	for (; j >= 0 && dw->func_maxend[j] > addr; j--) {
		if (dw->funcs[j].hi > addr) {
			*lo = dw->funcs[j].lo;
			*hi = dw->funcs[j].hi;
			return dw->funcs[j].name;
		}
	}
	return NULL;
}

int es_dwarf_resolve_func(struct elfscan *es, const char *name, uint64_t *addr)
{
	struct es_dwarf *dw = funcs_get(es);
	bool found = false;
	size_t i;

	if (!dw)
		return -ENOENT;
	for (i = 0; i < dw->nfuncs; i++) {
		if (strcmp(dw->funcs[i].name, name) || (found && dw->funcs[i].entry >= *addr))
			continue;
		*addr = dw->funcs[i].entry;
		found = true;
	}
	return found ? 0 : -ENOENT;
}

/* Where an inlined instance begins: DW_AT_entry_pc when its code holds it, else the start of
 * its first range. GCC may give an entry that only an empty range marks (its instructions
 * scheduled before it): a stop there would be outside the instance. */
static bool inlined_entry(Dwarf_Die *die, Dwarf_Addr *entry)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;

	if (!dwarf_entrypc(die, entry) && dwarf_haspc(die, *entry) > 0)
		return true;
	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
		if (end > start) {
			*entry = start;
			return true;
		}
	}
	return false;
}

/* The inlined instances under parent whose function is name: their entry addresses. */
static void walk_inlined(struct es_dwarf *dw, Dwarf_Die *parent, const char *name, uint64_t *out,
			 size_t max, size_t *n, int depth)
{
	Dwarf_Attribute attr;
	Dwarf_Addr entry;
	const char *fn;
	Dwarf_Die die;

	if (depth > 64 || dwarf_child(parent, &die))
		return;
	do {
		int tag = dwarf_tag(&die);

		if (tag == DW_TAG_inlined_subroutine &&
		    dwarf_attr_integrate(&die, DW_AT_name, &attr) &&
		    (fn = dwarf_formstring(&attr)) && !strcmp(fn, name) &&
		    inlined_entry(&die, &entry) && to_addr(dw, entry, false, &entry)) {
			if (*n < max)
				out[*n] = entry;
			(*n)++;
		}
		switch (tag) {
		case DW_TAG_inlined_subroutine: /* an inlined function may inline others */
		case DW_TAG_subprogram:
		case DW_TAG_namespace:
		case DW_TAG_module:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_lexical_block:
			walk_inlined(dw, &die, name, out, max, n, depth + 1);
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&die, &die) == 0);
}

size_t es_dwarf_resolve_inlined(struct elfscan *es, const char *name, uint64_t *out, size_t max)
{
	struct es_dwarf *dw = dwarf_open(es);
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	Dwarf_Half version;
	uint8_t unit_type;
	size_t n = 0;

	/* In a .o, DWARF addresses are libdwfl's layout, not the library's. */
	if (!dw || !dw->dbg || dw->dwfl)
		return 0;
	while (dwarf_get_units(dw->dbg, cu, &cu, &version, &unit_type, &cudie, NULL) == 0)
		if (unit_type == DW_UT_compile || unit_type == DW_UT_partial)
			walk_inlined(dw, &cudie, name, out, max, &n, 0);
	return n;
}
