// SPDX-License-Identifier: GPL-2.0-only
/*
 * Symbolization against independent sources: function symbols read here with libelf, source
 * lines found by their "MARK: name" comments in tests/fixtures/src/symtest.c, and libdw's own
 * address lookup. Fixtures: tests/fixtures/bin/symbols/ (scripts/gen-symbol-fixtures.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <elfutils/libdw.h>

#include "elfscan.h"
#include "unit.h"

#define FIX FIXTURE_DIR "/bin/symbols/"
#define SRC FIXTURE_DIR "/src/symtest.c"
#define DEBUG_DIR FIX "debug"

struct fsym {
	char name[128];
	uint64_t addr, size;
};

struct symlist {
	struct fsym *s;
	size_t n;
};

/* Sized STT_FUNC symbols of path's .symtab; in a .o laid out as the library documents:
 * SHF_ALLOC sections in index order from 0, each at its sh_addralign. */
static struct symlist read_funcs(const char *path)
{
	struct symlist l = {0};
	uint64_t *secaddr, off = 0;
	Elf_Scn *scn = NULL;
	GElf_Ehdr ehdr;
	GElf_Shdr shdr;
	size_t shnum;
	Elf *elf;
	int fd;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	assert_non_null(gelf_getehdr(elf, &ehdr));
	assert_int_equal(elf_getshdrnum(elf, &shnum), 0);
	secaddr = calloc(shnum, sizeof(*secaddr));
	assert_non_null(secaddr);
	while ((scn = elf_nextscn(elf, scn))) {
		uint64_t align;

		assert_non_null(gelf_getshdr(scn, &shdr));
		if (ehdr.e_type != ET_REL || !(shdr.sh_flags & SHF_ALLOC))
			continue;
		align = shdr.sh_addralign ? shdr.sh_addralign : 1;
		off = (off + align - 1) / align * align;
		secaddr[elf_ndxscn(scn)] = off;
		off += shdr.sh_size;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t i, n;

		assert_non_null(gelf_getshdr(scn, &shdr));
		if (shdr.sh_type != SHT_SYMTAB)
			continue;
		data = elf_getdata(scn, NULL);
		n = shdr.sh_size / shdr.sh_entsize;
		l.s = calloc(n, sizeof(*l.s));
		assert_non_null(l.s);
		for (i = 0; i < n; i++) {
			GElf_Sym sym;
			struct fsym *f = &l.s[l.n];

			assert_non_null(gelf_getsym(data, i, &sym));
			if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_size ||
			    sym.st_shndx == SHN_UNDEF)
				continue;
			snprintf(f->name, sizeof(f->name), "%s",
				 elf_strptr(elf, shdr.sh_link, sym.st_name));
			f->addr =
			    sym.st_value + (ehdr.e_type == ET_REL ? secaddr[sym.st_shndx] : 0);
			if (ehdr.e_machine == EM_ARM)
				f->addr &= ~1ull; /* the Thumb bit names no instruction */
			f->size = sym.st_size;
			l.n++;
		}
	}
	free(secaddr);
	elf_end(elf);
	close(fd);
	assert_true(l.n > 0);
	return l;
}

static const struct fsym *find_func(const struct symlist *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->s[i].name, name))
			return &l->s[i];
	fail_msg("no symbol %s", name);
	return NULL;
}

/* The sized function covering addr with the greatest start (what the library promises). */
static const struct fsym *covering(const struct symlist *l, uint64_t addr)
{
	const struct fsym *best = NULL;
	size_t i;

	for (i = 0; i < l->n; i++)
		if (addr - l->s[i].addr < l->s[i].size && (!best || l->s[i].addr > best->addr))
			best = &l->s[i];
	return best;
}

/* Line number of the "MARK: name" comment in a fixture's source. */
static int marker_in(const char *src, const char *name)
{
	char buf[512], want[128];
	FILE *f = fopen(src, "r");
	int line = 0;

	assert_non_null(f);
	snprintf(want, sizeof(want), "MARK: %s */", name);
	while (fgets(buf, sizeof(buf), f)) {
		line++;
		if (strstr(buf, want)) {
			fclose(f);
			return line;
		}
	}
	fclose(f);
	fail_msg("no marker %s in %s", name, src);
	return 0;
}

static int marker(const char *name)
{
	return marker_in(SRC, name);
}

static struct elfscan *open_fix(const char *name, const char *debug_dirs, bool no_debuginfo)
{
	struct elfscan_opts opts = {
	    .sz = sizeof(opts), .debug_dirs = debug_dirs, .no_debuginfo = no_debuginfo};
	struct elfscan *es = NULL;
	char path[PATH_MAX];
	int err;

	snprintf(path, sizeof(path), FIX "%s", name);
	err = elfscan_open(path, &opts, &es);
	if (err)
		fail_msg("open %s: %s", path, elfscan_errmsg());
	return es;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

/* Strip a compiler clone suffix: what the source calls the function. */
static void source_name(const char *sym, char *out, size_t len)
{
	snprintf(out, len, "%s", sym);
	out[strcspn(out, ".")] = 0;
}

/* Functions of symtest.c (the others, from the C library's start files, have no DWARF). */
static bool from_source(const char *name)
{
	static const char *const names[] = {
	    "sink", "helper", "scale.constprop.0", "checked", "checked.cold", "fail", "main"};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

/* Every address of every sized function symbolizes to that function, and its range is the
 * symbol's; with dwarf_names, the name is the source's (from DW_TAG_subprogram). */
static void check_functions(struct elfscan *es, const struct symlist *l, bool dwarf_names)
{
	size_t i, checked = 0;

	for (i = 0; i < l->n; i++) {
		const struct fsym *f = &l->s[i];
		uint64_t a;

		for (a = f->addr; a < f->addr + f->size; a++) {
			const struct fsym *want = covering(l, a);
			struct elfscan_loc loc;
			uint64_t lo, hi;
			char name[128];

			if (want != f || (dwarf_names && !from_source(f->name)))
				continue;
			assert_int_equal(elfscan_symbolize(es, a, &loc), 0);
			assert_non_null(loc.func);
			if (dwarf_names) {
				source_name(f->name, name, sizeof(name));
				if (strcmp(loc.func, name))
					fail_msg("0x%" PRIx64 ": %s, expected %s", a, loc.func,
						 name);
				checked++;
				continue;
			}
			if (strcmp(loc.func, f->name))
				fail_msg("0x%" PRIx64 ": %s, expected %s", a, loc.func, f->name);
			assert_int_equal(loc.func_addr, f->addr);
			assert_int_equal(loc.func_off, a - f->addr);
			assert_int_equal(elfscan_func_range(es, a, &lo, &hi), 0);
			assert_int_equal(lo, f->addr);
			assert_int_equal(hi, f->addr + f->size);
			checked++;
		}
	}
	assert_true(checked > 0);
}

struct mark {
	const char *mark, *func, *alt;
};

/* FILE:LINE of each marked line resolves into the function that holds it, and that address
 * symbolizes back to the marked line. */
static void check_marks(struct elfscan *es, const struct symlist *l, const char *src,
			const struct mark *marks, size_t n)
{
	const char *base = strrchr(src, '/') + 1;
	size_t i;

	assert_true(elfscan_has_dwarf(es));
	for (i = 0; i < n; i++) {
		const struct fsym *f;
		struct elfscan_loc loc;
		char spec[64];
		uint64_t addr;
		int line = marker_in(src, marks[i].mark);

		snprintf(spec, sizeof(spec), "%s:%d", base, line);
		if (elfscan_resolve(es, spec, &addr))
			fail_msg("%s: %s", spec, elfscan_errmsg());
		f = covering(l, addr);
		assert_non_null(f);
		if (strcmp(f->name, marks[i].func) &&
		    (!marks[i].alt || strcmp(f->name, marks[i].alt)))
			fail_msg("%s at 0x%" PRIx64 " is in %s, expected %s", spec, addr, f->name,
				 marks[i].func);
		assert_int_equal(elfscan_symbolize(es, addr, &loc), 0);
		assert_int_equal(loc.line, line);
		assert_non_null(loc.file);
		assert_true(ends_with(loc.file, base - 1));
	}
}

static void check_lines(struct elfscan *es, const struct symlist *l)
{
	static const struct mark marks[] = {
	    {"sink-body", "sink", NULL},
	    {"helper-call", "helper", NULL},
	    {"scale-loop", "scale.constprop.0", NULL},
	    {"after-nocode", "checked", NULL},
	    {"checked-cold", "checked.cold", "checked"},
	    {"main-print", "main", NULL},
	};

	check_marks(es, l, SRC, marks, sizeof(marks) / sizeof(marks[0]));
}

static void test_functions_from_symtab(void **state)
{
	struct symlist l = read_funcs(FIX "symtest");
	struct elfscan *es = open_fix("symtest", NULL, false);

	check_functions(es, &l, false);
	assert_null(elfscan_debug_file(es));
	elfscan_close(es);
	free(l.s);
}

static void test_lines_at_markers(void **state)
{
	struct symlist l = read_funcs(FIX "symtest");
	struct elfscan *es = open_fix("symtest", NULL, false);

	check_lines(es, &l);
	elfscan_close(es);
	free(l.s);
}

/* Whether some row at line's address that begins a statement has line number lineno. */
static bool stmt_row_at(Dwarf_Die *cudie, Dwarf_Line *line, int lineno)
{
	Dwarf_Addr at, a;
	Dwarf_Lines *lines;
	size_t n, i;

	assert_int_equal(dwarf_lineaddr(line, &at), 0);
	assert_int_equal(dwarf_getsrclines(cudie, &lines, &n), 0);
	for (i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		bool stmt = false;
		int no = 0;

		dwarf_lineaddr(l, &a);
		dwarf_linebeginstatement(l, &stmt);
		dwarf_lineno(l, &no);
		if (a == at && stmt && no == lineno)
			return true;
	}
	return false;
}

/*
 * Every address inside a function gets the line libdw's own lookup gives; where libdw picks
 * a row that does not begin a statement and another row at that address does, the library
 * answers as a debugger does, with that statement's line.
 */
static void test_lines_match_libdw(void **state)
{
	struct symlist l = read_funcs(FIX "symtest");
	struct elfscan *es = open_fix("symtest", NULL, false);
	int fd = open(FIX "symtest", O_RDONLY);
	Dwarf *dbg = dwarf_begin(fd, DWARF_C_READ);
	size_t i, compared = 0;

	assert_non_null(dbg);
	for (i = 0; i < l.n; i++) {
		uint64_t a;

		for (a = l.s[i].addr; a < l.s[i].addr + l.s[i].size; a++) {
			struct elfscan_loc loc;
			Dwarf_Die cudie;
			Dwarf_Line *line;
			bool stmt = false;
			int lineno = 0;

			if (!dwarf_addrdie(dbg, a, &cudie) || !(line = dwarf_getsrc_die(&cudie, a)))
				continue;
			assert_int_equal(dwarf_lineno(line, &lineno), 0);
			assert_int_equal(dwarf_linebeginstatement(line, &stmt), 0);
			assert_int_equal(elfscan_symbolize(es, a, &loc), 0);
			assert_non_null(loc.file);
			assert_string_equal(loc.file, dwarf_linesrc(line, NULL, NULL));
			if (loc.line != lineno && (stmt || !stmt_row_at(&cudie, line, loc.line)))
				fail_msg("0x%" PRIx64 ": line %d, libdw says %d", a, loc.line,
					 lineno);
			compared++;
		}
	}
	assert_true(compared > 100);
	dwarf_end(dbg);
	close(fd);
	elfscan_close(es);
	free(l.s);
}

/* A line without code stands for the next line with code, as in a debugger. */
static void test_line_without_code(void **state)
{
	struct elfscan *es = open_fix("symtest", NULL, false);
	uint64_t a, b;
	char spec[64];

	snprintf(spec, sizeof(spec), "symtest.c:%d", marker("nocode"));
	assert_int_equal(elfscan_resolve(es, spec, &a), 0);
	snprintf(spec, sizeof(spec), "tests/fixtures/src/symtest.c:%d", marker("after-nocode"));
	assert_int_equal(elfscan_resolve(es, spec, &b), 0);
	assert_int_equal(a, b);
	elfscan_close(es);
}

/* Every place of a name: a function with no inlined copy has its one address; a number and
 * FILE:LINE one each; an unknown name none. */
static void test_resolve_all(void **state)
{
	struct elfscan *es = open_fix("symtest", NULL, false);
	uint64_t a, v[4];
	char spec[64];

	assert_int_equal(elfscan_resolve(es, "helper", &a), 0);
	assert_int_equal(elfscan_resolve_all(es, "helper", v, 4), 1);
	assert_int_equal(v[0], a);
	assert_int_equal(elfscan_resolve(es, "scale", &a), 0);
	assert_int_equal(elfscan_resolve_all(es, "scale", v, 4), 1);
	assert_int_equal(v[0], a);
	assert_int_equal(elfscan_resolve_all(es, "0x1234", v, 4), 1);
	assert_int_equal(v[0], 0x1234);
	snprintf(spec, sizeof(spec), "symtest.c:%d", marker("nocode"));
	assert_int_equal(elfscan_resolve(es, spec, &a), 0);
	assert_int_equal(elfscan_resolve_all(es, spec, v, 4), 1);
	assert_int_equal(v[0], a);
	assert_int_equal(elfscan_resolve_all(es, "no_such_function", v, 4), -ENOENT);
	assert_int_equal(elfscan_resolve_all(es, "symtest.c:99999", v, 4), -ENOENT);
	assert_int_equal(elfscan_resolve_all(es, "helper", v, 0), -EINVAL);
	elfscan_close(es);
}

static void test_resolve_names(void **state)
{
	struct symlist l = read_funcs(FIX "symtest");
	struct elfscan *es = open_fix("symtest", NULL, false);
	uint64_t a;

	assert_int_equal(elfscan_resolve(es, "helper", &a), 0); /* static */
	assert_int_equal(a, find_func(&l, "helper")->addr);
	assert_int_equal(elfscan_resolve(es, "scale", &a), 0); /* only the clone exists */
	assert_int_equal(a, find_func(&l, "scale.constprop.0")->addr);
	assert_int_equal(elfscan_resolve(es, "scale.constprop.0", &a), 0);
	assert_int_equal(a, find_func(&l, "scale.constprop.0")->addr);
	assert_int_equal(elfscan_resolve(es, "checked", &a), 0); /* not checked.cold */
	assert_int_equal(a, find_func(&l, "checked")->addr);
	assert_int_equal(elfscan_resolve(es, "main", &a), 0);
	assert_int_equal(a, find_func(&l, "main")->addr);
	assert_int_equal(elfscan_resolve(es, "0x1234", &a), 0);
	assert_int_equal(a, 0x1234);
	assert_int_equal(elfscan_resolve(es, "4660", &a), 0);
	assert_int_equal(a, 4660);
	assert_int_equal(elfscan_resolve(es, "010", &a), 0); /* decimal, not octal */
	assert_int_equal(a, 10);
	assert_int_equal(elfscan_resolve(es, "0x", &a), -ENOENT);
	assert_int_equal(elfscan_resolve(es, "12abc", &a), -ENOENT);

	assert_int_equal(elfscan_resolve(es, "no_such_function", &a), -ENOENT);
	assert_non_null(strstr(elfscan_errmsg(), "no_such_function"));
	assert_int_equal(elfscan_resolve(es, "scal", &a), -ENOENT);
	assert_int_equal(elfscan_resolve(es, "symtest.c:99999", &a), -ENOENT);
	assert_non_null(strstr(elfscan_errmsg(), "symtest.c:99999"));
	assert_int_equal(elfscan_resolve(es, "other.c:20", &a), -ENOENT);
	assert_int_equal(elfscan_resolve(es, "mtest.c:20", &a), -ENOENT); /* not a path suffix */
	assert_int_equal(elfscan_resolve(es, "", &a), -EINVAL);
	elfscan_close(es);
	free(l.s);
}

/* A stripped file with no debug file reachable: no name, no line, nothing made up. */
static void test_stripped_invents_nothing(void **state)
{
	struct symlist l = read_funcs(FIX "symtest");
	struct elfscan *es = open_fix("symtest-stripped", "/nonexistent", false);
	uint64_t lo = UINT64_MAX, hi = 0, a, flo, fhi;
	size_t i;

	for (i = 0; i < l.n; i++) {
		lo = l.s[i].addr < lo ? l.s[i].addr : lo;
		hi = l.s[i].addr + l.s[i].size > hi ? l.s[i].addr + l.s[i].size : hi;
	}
	assert_false(elfscan_has_dwarf(es));
	assert_null(elfscan_debug_file(es));
	for (a = lo; a < hi; a++) {
		struct elfscan_loc loc;

		/* no symbol and no line: at most the section that holds the address */
		int err = elfscan_symbolize(es, a, &loc);

		assert_true(err == -ENOENT || (!err && loc.section));
		assert_null(loc.func);
		assert_null(loc.file);
		assert_int_equal(loc.line, 0);
		assert_int_equal(elfscan_func_range(es, a, &flo, &fhi), -ENOENT);
	}
	assert_int_equal(elfscan_resolve(es, "helper", &a), -ENOENT);
	elfscan_close(es);
	free(l.s);
}

static void test_debug_file_by_build_id(void **state)
{
	struct symlist l = read_funcs(FIX "symtest");
	struct elfscan *es = open_fix("symtest-stripped", "/nonexistent:" DEBUG_DIR, false);
	const char *dbg;
	char want[256];

	dbg = elfscan_debug_file(es);
	assert_non_null(dbg);
	snprintf(want, sizeof(want), "/.build-id/%.2s/%s.debug", elfscan_build_id(es),
		 elfscan_build_id(es) + 2);
	assert_true(ends_with(dbg, want));
	check_functions(es, &l, false);
	check_lines(es, &l);
	elfscan_close(es);
	free(l.s);
}

static void test_debug_file_by_debuglink(void **state)
{
	struct symlist l = read_funcs(FIX ".debug/symtest-link.debug");
	struct elfscan *es = open_fix("symtest-link", "/nonexistent", false);
	const char *dbg;

	assert_null(elfscan_build_id(es));
	dbg = elfscan_debug_file(es);
	assert_non_null(dbg);
	assert_true(ends_with(dbg, "/.debug/symtest-link.debug"));
	check_functions(es, &l, false);
	check_lines(es, &l);
	elfscan_close(es);
	free(l.s);
}

/* A debug file whose CRC does not match the link belongs to another build. */
static void test_debuglink_crc_mismatch(void **state)
{
	struct elfscan *es = open_fix("symtest-badcrc", "/nonexistent", false);
	struct elfscan_loc loc;
	uint64_t a;

	assert_null(elfscan_debug_file(es));
	assert_false(elfscan_has_dwarf(es));
	assert_int_equal(elfscan_resolve(es, "main", &a), -ENOENT);
	elfscan_close(es);
	/* The right file under that name is taken, found the same way. */
	es = open_fix("symtest-link", "/nonexistent", false);
	assert_int_equal(elfscan_resolve(es, "main", &a), 0);
	assert_int_equal(elfscan_symbolize(es, a, &loc), 0);
	assert_string_equal(loc.func, "main");
	elfscan_close(es);
}

/* Without a symbol table, names come from DW_TAG_subprogram: the source's names. */
static void test_dwarf_names_without_symtab(void **state)
{
	struct symlist l = read_funcs(FIX "symtest");
	struct elfscan *es = open_fix("symtest-nosymtab", NULL, false);
	uint64_t a, lo, hi;

	check_functions(es, &l, true);
	assert_int_equal(elfscan_func_range(es, find_func(&l, "main")->addr + 1, &lo, &hi), 0);
	assert_int_equal(lo, find_func(&l, "main")->addr);
	assert_int_equal(hi, find_func(&l, "main")->addr + find_func(&l, "main")->size);
	assert_int_equal(elfscan_resolve(es, "scale", &a), 0);
	assert_int_equal(a, find_func(&l, "scale.constprop.0")->addr);
	assert_int_equal(elfscan_resolve(es, "helper", &a), 0);
	assert_int_equal(a, find_func(&l, "helper")->addr);
	assert_int_equal(elfscan_resolve(es, "checked", &a), 0); /* the entry, not .cold */
	assert_int_equal(a, find_func(&l, "checked")->addr);
	check_lines(es, &l);
	elfscan_close(es);
	free(l.s);
}

/* A .o: symbol values and DWARF addresses are section-relative and relocated. */
static void test_relocatable(void **state)
{
	struct symlist l = read_funcs(FIX "symtest.o");
	struct elfscan *es = open_fix("symtest.o", NULL, false);
	uint64_t a;

	check_functions(es, &l, false);
	check_lines(es, &l);
	assert_int_equal(elfscan_resolve(es, "fail", &a), 0); /* in .text.unlikely */
	assert_int_equal(a, find_func(&l, "fail")->addr);
	elfscan_close(es);
	free(l.s);
}

enum what { VALUE, END, SECTION_END };

/* A symbol's value or end (value + size), or the end of a section, in FIX "symlabels". */
static uint64_t where(const char *name, enum what what)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	size_t shstrndx;
	uint64_t v = 0;
	bool found = false;
	Elf *elf;
	int fd = open(FIX "symlabels", O_RDONLY);

	assert_true(fd >= 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while (!found && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t i;

		assert_non_null(gelf_getshdr(scn, &shdr));
		if (what == SECTION_END) {
			found = !strcmp(elf_strptr(elf, shstrndx, shdr.sh_name), name);
			v = shdr.sh_addr + shdr.sh_size;
			continue;
		}
		if (shdr.sh_type != SHT_SYMTAB)
			continue;
		data = elf_getdata(scn, NULL);
		for (i = 0; i < shdr.sh_size / shdr.sh_entsize && !found; i++) {
			GElf_Sym sym;

			assert_non_null(gelf_getsym(data, i, &sym));
			found = !strcmp(elf_strptr(elf, shdr.sh_link, sym.st_name), name);
			v = sym.st_value + (what == END ? sym.st_size : 0);
		}
	}
	elf_end(elf);
	close(fd);
	if (!found)
		fail_msg("symlabels: no %s", name);
	return v;
}

/* Every address of [lo, hi) symbolizes to the symbol func (NULL: to nothing). */
static void expect_span(struct elfscan *es, uint64_t lo, uint64_t hi, const char *func)
{
	uint64_t a, start = func ? where(func, VALUE) : 0;

	assert_true(lo < hi);
	for (a = lo; a < hi; a++) {
		struct elfscan_loc loc;
		int err = elfscan_symbolize(es, a, &loc);

		if (!func) {
			/* at most the section that holds the address */
			if ((err != -ENOENT && (err || !loc.section)) || loc.func)
				fail_msg("0x%" PRIx64 ": %s, expected nothing", a, loc.func);
			continue;
		}
		assert_int_equal(err, 0);
		if (!loc.func || strcmp(loc.func, func))
			fail_msg("0x%" PRIx64 ": %s, expected %s", a,
				 loc.func ? loc.func : "nothing", func);
		assert_int_equal(loc.func_addr, start);
		assert_int_equal(loc.func_off, a - start);
	}
}

static void expect_range(struct elfscan *es, uint64_t addr, uint64_t lo, uint64_t hi)
{
	uint64_t l, h;

	assert_int_equal(elfscan_func_range(es, addr, &l, &h), 0);
	assert_int_equal(l, lo);
	assert_int_equal(h, hi);
}

/* Untyped labels name code up to the next symbol within their section, never past the end
 * of a sized function; aliases give the global name; .L labels never name code. */
static void test_labels_and_aliases(void **state)
{
	struct elfscan *es = open_fix("symlabels", NULL, false);
	uint64_t a;

	expect_span(es, where("sized_f", VALUE), where("sized_f", END), "sized_f");
	expect_span(es, where("sized_f", END), where("label_a", VALUE), NULL);
	expect_span(es, where("label_a", VALUE), where("local_label", VALUE), "label_a");
	expect_span(es, where("local_label", VALUE), where("global_name", VALUE), "local_label");
	expect_span(es, where("global_name", VALUE), where("global_name", END), "global_name");
	expect_span(es, where("global_name", END), where("ifunc_f", VALUE), NULL);
	expect_span(es, where("ifunc_f", VALUE), where("ifunc_f", END), "ifunc_f");
	expect_span(es, where("outer", VALUE), where("outer", END), "outer");
	expect_span(es, where("outer", END), where("label_c", VALUE), NULL);
	expect_span(es, where("label_c", VALUE), where("nested_f", VALUE), "label_c");
	expect_span(es, where("nested_f", VALUE), where("nested_f", END), "nested_f");
	expect_span(es, where("nested_f", END), where("_start", VALUE), NULL);
	expect_span(es, where("tail_label", VALUE), where(".text", SECTION_END), "tail_label");
	expect_span(es, where(".text", SECTION_END), where("other_text", SECTION_END), NULL);

	expect_range(es, where("sized_f", VALUE) + 1, where("sized_f", VALUE),
		     where("sized_f", END));
	expect_range(es, where("label_a", VALUE) + 1, where("label_a", VALUE),
		     where("local_label", VALUE));
	expect_range(es, where("tail_label", VALUE), where("tail_label", VALUE),
		     where(".text", SECTION_END));

	assert_int_equal(elfscan_resolve(es, "weak_alias", &a), 0);
	assert_int_equal(a, where("global_name", VALUE));
	assert_int_equal(elfscan_resolve(es, "inner_label", &a), 0);
	assert_int_equal(a, where("inner_label", VALUE));
	assert_int_equal(elfscan_resolve(es, ".Lhidden", &a), -ENOENT);
	elfscan_close(es);
}

/* arm Thumb: symbol values carry bit 0; the code starts one byte lower. */
static void test_arm_thumb(void **state)
{
	static const struct mark marks[] = {
	    {"thumb-leaf", "thumb_leaf", NULL},
	    {"thumb-twice", "thumb_twice", NULL},
	};
	struct symlist l = read_funcs(FIX "symthumb");
	struct elfscan *es = open_fix("symthumb", NULL, false);
	uint64_t a;

	check_functions(es, &l, false);
	check_marks(es, &l, FIXTURE_DIR "/src/symthumb.c", marks, sizeof(marks) / sizeof(marks[0]));
	assert_int_equal(elfscan_resolve(es, "thumb_leaf", &a), 0);
	assert_int_equal(a, find_func(&l, "thumb_leaf")->addr);
	assert_int_equal(a & 1, 0);
	elfscan_close(es);
	free(l.s);
}

static void copy_file(const char *from, const char *to)
{
	char buf[65536];
	ssize_t n;
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);

	assert_true(in >= 0);
	assert_true(out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, n), n);
	assert_int_equal(n, 0);
	close(in);
	close(out);
}

static void mkdirs(const char *path)
{
	char buf[PATH_MAX], *p;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		mkdir(buf, 0755);
		*p = '/';
	}
	mkdir(buf, 0755);
}

/* The two other places a debuglink is looked for: beside the file, and under a debug
 * directory followed by the file's own directory. */
static void test_debuglink_places(void **state)
{
	char tmpl[] = "/tmp/test_symbols.XXXXXX", bin[PATH_MAX], dbg[PATH_MAX], dir[PATH_MAX];
	char *top = mkdtemp(tmpl), cmd[PATH_MAX + 16];
	struct elfscan_opts opts = {.sz = sizeof(opts), .debug_dirs = dir};
	struct symlist l = read_funcs(FIX ".debug/symtest-link.debug");
	struct elfscan *es;

	assert_non_null(top);
	snprintf(bin, sizeof(bin), "%s/bin", top);
	mkdirs(bin);
	snprintf(bin, sizeof(bin), "%s/bin/symtest-link", top);
	copy_file(FIX "symtest-link", bin);

	/* Under a debug directory + the file's directory. */
	snprintf(dir, sizeof(dir), "%s/dbg", top);
	snprintf(dbg, sizeof(dbg), "%s/dbg%s/bin", top, top);
	mkdirs(dbg);
	snprintf(dbg, sizeof(dbg), "%s/dbg%s/bin/symtest-link.debug", top, top);
	copy_file(FIX ".debug/symtest-link.debug", dbg);
	assert_int_equal(elfscan_open(bin, &opts, &es), 0);
	assert_non_null(elfscan_debug_file(es));
	assert_string_equal(elfscan_debug_file(es), dbg);
	check_functions(es, &l, false);
	check_lines(es, &l);
	elfscan_close(es);

	/* Beside the file, which comes first. */
	snprintf(dbg, sizeof(dbg), "%s/bin/symtest-link.debug", top);
	copy_file(FIX ".debug/symtest-link.debug", dbg);
	assert_int_equal(elfscan_open(bin, &opts, &es), 0);
	assert_non_null(elfscan_debug_file(es));
	assert_string_equal(elfscan_debug_file(es), dbg);
	assert_true(elfscan_has_dwarf(es));
	elfscan_close(es);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	assert_int_equal(system(cmd), 0);
	free(l.s);
}

/* The debug file of symtest-stripped under DEBUG_DIR, named by its build-id. */
static void stripped_debug_file(char *buf, size_t len)
{
	struct elfscan_opts opts = {.sz = sizeof(opts), .no_debuginfo = true};
	struct elfscan *es;
	const char *id;

	assert_int_equal(elfscan_open(FIX "symtest-stripped", &opts, &es), 0);
	id = elfscan_build_id(es);
	assert_non_null(id);
	snprintf(buf, len, DEBUG_DIR "/.build-id/%.2s/%s.debug", id, id + 2);
	elfscan_close(es);
}

/* A process's own root (sysroot): its debug directories, then the file's own directory
 * there for a debuglink, each before ours. */
static void test_sysroot(void **state)
{
	char tmpl[] = "/tmp/test_symbols.XXXXXX", dbg[PATH_MAX], src[PATH_MAX], cmd[PATH_MAX + 16];
	char *top = mkdtemp(tmpl);
	struct elfscan_opts opts = {.sz = sizeof(opts), .debug_dirs = "/usr/lib/debug"};
	struct symlist l = read_funcs(FIX "symtest");
	struct elfscan *es;
	const char *id;

	assert_non_null(top);
	opts.sysroot = top;
	assert_int_equal(elfscan_open(FIX "symtest-stripped", &opts, &es), 0);
	assert_null(elfscan_debug_file(es));
	id = elfscan_build_id(es);
	snprintf(dbg, sizeof(dbg), "%s/usr/lib/debug/.build-id/%.2s", top, id);
	mkdirs(dbg);
	snprintf(dbg, sizeof(dbg), "%s/usr/lib/debug/.build-id/%.2s/%s.debug", top, id, id + 2);
	stripped_debug_file(src, sizeof(src));
	copy_file(src, dbg);
	elfscan_close(es);
	assert_int_equal(elfscan_open(FIX "symtest-stripped", &opts, &es), 0);
	assert_non_null(elfscan_debug_file(es));
	assert_string_equal(elfscan_debug_file(es), dbg);
	check_functions(es, &l, false);
	check_lines(es, &l);
	elfscan_close(es);

	/* Beside the file as the root has it, before the host's .debug beside the opened one. */
	opts.sysroot_path = "/opt/app/symtest-link";
	snprintf(dbg, sizeof(dbg), "%s/opt/app", top);
	mkdirs(dbg);
	snprintf(dbg, sizeof(dbg), "%s/opt/app/symtest-link.debug", top);
	copy_file(FIX ".debug/symtest-link.debug", dbg);
	assert_int_equal(elfscan_open(FIX "symtest-link", &opts, &es), 0);
	assert_non_null(elfscan_debug_file(es));
	assert_string_equal(elfscan_debug_file(es), dbg);
	assert_true(elfscan_has_dwarf(es));
	elfscan_close(es);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	assert_int_equal(system(cmd), 0);
	free(l.s);
}

struct finder {
	const char *give; /* the file find_debuginfo names */
	char id[256];	  /* the build-id it was asked for */
	int calls;
};

static int find_debuginfo(const char *build_id, char **path, void *ctx)
{
	struct finder *f = ctx;

	f->calls++;
	snprintf(f->id, sizeof(f->id), "%s", build_id);
	if (!f->give)
		return -ENOENT;
	*path = strdup(f->give);
	return *path ? 0 : -ENOMEM;
}

/* find_debuginfo is asked once, with the build-id, and only when nothing local has the file;
 * what it gives is checked like a local file (a wrong build-id is refused). */
static void test_find_debuginfo(void **state)
{
	char give[PATH_MAX];
	struct finder f = {.give = give};
	struct elfscan_opts opts = {.sz = sizeof(opts),
				    .debug_dirs = "/nonexistent",
				    .find_debuginfo = find_debuginfo,
				    .find_debuginfo_ctx = &f};
	struct symlist l = read_funcs(FIX "symtest");
	struct elfscan *es;

	stripped_debug_file(give, sizeof(give));
	assert_int_equal(elfscan_open(FIX "symtest-stripped", &opts, &es), 0);
	assert_int_equal(f.calls, 0);
	assert_non_null(elfscan_debug_file(es));
	assert_string_equal(elfscan_debug_file(es), f.give);
	assert_string_equal(f.id, elfscan_build_id(es));
	check_functions(es, &l, false);
	check_lines(es, &l);
	assert_int_equal(f.calls, 1);
	elfscan_close(es);

	f.calls = 0;
	f.give = FIX ".debug/symtest-link.debug";
	assert_int_equal(elfscan_open(FIX "symtest-stripped", &opts, &es), 0);
	assert_null(elfscan_debug_file(es));
	assert_false(elfscan_has_dwarf(es));
	assert_int_equal(f.calls, 1);
	elfscan_close(es);

	f.calls = 0;
	opts.debug_dirs = DEBUG_DIR;
	assert_int_equal(elfscan_open(FIX "symtest-stripped", &opts, &es), 0);
	assert_non_null(elfscan_debug_file(es));
	assert_int_equal(f.calls, 0);
	elfscan_close(es);
	free(l.s);
}

static void *slurp(const char *path, size_t *len)
{
	struct stat sb;
	void *buf;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &sb), 0);
	buf = malloc(sb.st_size);
	assert_non_null(buf);
	assert_int_equal(read(fd, buf, sb.st_size), sb.st_size);
	close(fd);
	*len = sb.st_size;
	return buf;
}

/* Compressed debug sections, from a file and from a read-only buffer that must stay
 * untouched (libelf decompresses by rewriting section headers). */
static void test_compressed_debug_sections(void **state)
{
	struct elfscan_opts opts = {.sz = sizeof(opts)};
	struct symlist l = read_funcs(FIX "symtest-gz");
	struct elfscan *es = open_fix("symtest-gz", NULL, false);
	size_t len;
	void *buf = slurp(FIX "symtest-gz", &len), *ro;

	check_functions(es, &l, false);
	check_lines(es, &l);
	elfscan_close(es);

	ro = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(ro != MAP_FAILED);
	memcpy(ro, buf, len);
	assert_int_equal(mprotect(ro, len, PROT_READ), 0);
	assert_int_equal(elfscan_open_mem(ro, len, &opts, &es), 0);
	check_lines(es, &l);
	elfscan_close(es);
	assert_memory_equal(ro, buf, len);
	munmap(ro, len);
	free(buf);
	free(l.s);
}

/* A buffer has no path: a debug file is found by build-id only. */
static void test_memory_buffer(void **state)
{
	struct elfscan_opts opts = {.sz = sizeof(opts), .debug_dirs = DEBUG_DIR};
	struct symlist l = read_funcs(FIX "symtest");
	struct elfscan *es;
	size_t len;
	void *buf = slurp(FIX "symtest-stripped", &len);

	assert_int_equal(elfscan_open_mem(buf, len, &opts, &es), 0);
	assert_non_null(elfscan_debug_file(es));
	check_functions(es, &l, false);
	elfscan_close(es);
	free(buf);

	buf = slurp(FIX "symtest-link", &len);
	assert_int_equal(elfscan_open_mem(buf, len, &opts, &es), 0);
	assert_null(elfscan_debug_file(es));
	assert_false(elfscan_has_dwarf(es));
	elfscan_close(es);
	free(buf);
	free(l.s);
}

static void test_no_debuginfo(void **state)
{
	struct symlist l = read_funcs(FIX "symtest");
	struct elfscan *es = open_fix("symtest", NULL, true);
	struct elfscan_loc loc;

	assert_false(elfscan_has_dwarf(es));
	check_functions(es, &l, false);
	assert_int_equal(elfscan_symbolize(es, find_func(&l, "main")->addr, &loc), 0);
	assert_null(loc.file);
	elfscan_close(es);

	es = open_fix("symtest-stripped", DEBUG_DIR, true);
	assert_null(elfscan_debug_file(es));
	elfscan_close(es);
	free(l.s);
}

/* Past the last function, nothing covers the address and loc is zeroed. */
static void test_nothing_covers(void **state)
{
	struct elfscan *es = open_fix("symtest", NULL, false);
	struct elfscan_loc loc;
	uint64_t lo, hi;

	memset(&loc, 0xff, sizeof(loc));
	assert_int_equal(elfscan_symbolize(es, 0x7fffffff0000ull, &loc), -ENOENT);
	assert_null(loc.func);
	assert_null(loc.file);
	assert_int_equal(loc.line, 0);
	assert_int_equal(loc.func_off, 0);
	assert_int_equal(elfscan_func_range(es, 0x7fffffff0000ull, &lo, &hi), -ENOENT);
	assert_int_equal(elfscan_symbolize(es, 0, &loc), -ENOENT);
	elfscan_close(es);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_functions_from_symtab),
	    cmocka_unit_test(test_lines_at_markers),
	    cmocka_unit_test(test_lines_match_libdw),
	    cmocka_unit_test(test_line_without_code),
	    cmocka_unit_test(test_resolve_names),
	    cmocka_unit_test(test_resolve_all),
	    cmocka_unit_test(test_stripped_invents_nothing),
	    cmocka_unit_test(test_debug_file_by_build_id),
	    cmocka_unit_test(test_debug_file_by_debuglink),
	    cmocka_unit_test(test_debuglink_crc_mismatch),
	    cmocka_unit_test(test_dwarf_names_without_symtab),
	    cmocka_unit_test(test_relocatable),
	    cmocka_unit_test(test_labels_and_aliases),
	    cmocka_unit_test(test_arm_thumb),
	    cmocka_unit_test(test_debuglink_places),
	    cmocka_unit_test(test_sysroot),
	    cmocka_unit_test(test_find_debuginfo),
	    cmocka_unit_test(test_memory_buffer),
	    cmocka_unit_test(test_compressed_debug_sections),
	    cmocka_unit_test(test_no_debuginfo),
	    cmocka_unit_test(test_nothing_covers),
	};

	return UNIT_MAIN(tests);
}
