// SPDX-License-Identifier: GPL-2.0-only
/*
 * Table decoding, checked against each fixture's own symbols (rseq_start_<id>,
 * rseq_post_commit_<id>, rseq_abort_<id>, rseq_exit_<id>[_N]) read here with libelf, and
 * malformed images built in memory from a valid fixture.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <gelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "elfscan-audit.h"
#include "elfscan.h"
#include "fixture.h"
#include "unit.h"

#define BIN FIXTURE_DIR "/bin/"

struct fsym {
	char name[96];
	uint64_t value;
};

struct syms {
	struct fsym v[256];
	size_t n;
};

/* The rseq_* symbols of path's .symtab, read with libelf alone. */
static void read_syms(const char *path, struct syms *s)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf *elf;
	int fd;

	memset(s, 0, sizeof(*s));
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;

		assert_non_null(gelf_getshdr(scn, &sh));
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		assert_non_null(d);
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			assert_non_null(gelf_getsym(d, (int)i, &sym));
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || strncmp(name, "rseq_", 5) || s->n == 256)
				continue;
			snprintf(s->v[s->n].name, sizeof(s->v[0].name), "%s", name);
			s->v[s->n++].value = sym.st_value;
		}
	}
	elf_end(elf);
	close(fd);
}

static bool sym_value(const struct syms *s, const char *name, uint64_t *v)
{
	for (size_t i = 0; i < s->n; i++) {
		if (!strcmp(s->v[i].name, name)) {
			*v = s->v[i].value;
			return true;
		}
	}
	return false;
}

/* The id of the rseq_start_<id> symbol at addr, NULL when none. */
static const char *start_id(const struct syms *s, uint64_t addr)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strncmp(s->v[i].name, "rseq_start_", 11) && s->v[i].value == addr)
			return s->v[i].name + 11;
	return NULL;
}

static size_t count_prefix(const struct syms *s, const char *prefix)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n; i++)
		n += !strncmp(s->v[i].name, prefix, strlen(prefix));
	return n;
}

/* rseq_exit_<id> or rseq_exit_<id>_<N> */
static bool is_exit_of(const char *name, const char *id)
{
	size_t n = strlen(id);

	if (strncmp(name, "rseq_exit_", 10) || strncmp(name + 10, id, n))
		return false;
	return name[10 + n] == 0 || name[10 + n] == '_';
}

/* Every section has the values of its fixture's symbols, every start symbol has a section,
 * and every section's exit points are exactly its rseq_exit_<id>* symbols. */
static void check_against_symbols(const char *path, struct elfscan *es, size_t expect)
{
	struct syms s;

	read_syms(path, &s);
	assert_int_equal(count_prefix(&s, "rseq_start_"), expect);
	assert_int_equal(elfscan_count(es), expect);
	for (size_t i = 0; i < elfscan_count(es); i++) {
		const struct elfscan_cs *cs = elfscan_get(es, i);
		const char *id = start_id(&s, cs->start_ip);
		char name[128];
		uint64_t v = 0;
		size_t nexit = 0;

		if (!id)
			fail_msg("%s: section %zu start_ip 0x%llx is no rseq_start_ symbol", path,
				 i, (unsigned long long)cs->start_ip);
		snprintf(name, sizeof(name), "rseq_post_commit_%s", id);
		assert_true(sym_value(&s, name, &v));
		assert_int_equal(cs->post_commit_ip, v);
		assert_int_equal(cs->post_commit_offset, v - cs->start_ip);
		snprintf(name, sizeof(name), "rseq_abort_%s", id);
		assert_true(sym_value(&s, name, &v));
		assert_int_equal(cs->abort_ip, v);

		for (size_t k = 0; k < s.n; k++)
			nexit += is_exit_of(s.v[k].name, id);
		if (!(elfscan_sources(es) & ELFSCAN_SRC_EXIT_POINTS))
			nexit = 0;
		assert_int_equal(cs->nexits, nexit);
		for (size_t k = 0; k < cs->nexits; k++) {
			bool found = false;

			assert_int_equal(cs->exits[k].start_ip, cs->start_ip);
			for (size_t j = 0; j < s.n; j++)
				found |= is_exit_of(s.v[j].name, id) &&
					 s.v[j].value == cs->exits[k].exit_ip;
			assert_true(found);
		}
	}
}

static void check_all_sigs(struct elfscan *es, enum elfscan_sig_status st)
{
	for (size_t i = 0; i < elfscan_count(es); i++)
		assert_int_equal(elfscan_get(es, i)->sig_status, st);
}

static void test_current_format_x86_64_every_link_mode(void **state)
{
	static const char *const files[] = {"cs-pie",	 "cs-nopie",   "cs.so",	  "cs.o",
					    "cs-static", "cs-lld-pie", "cs-relr", "cs-pie-dwarf"};
	uint32_t want = ELFSCAN_SRC_CS | ELFSCAN_SRC_CS_PTR_ARRAY | ELFSCAN_SRC_EXIT_POINTS;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[PATH_MAX];
		struct elfscan *es;

		snprintf(path, sizeof(path), BIN "x86_64/%s", files[i]);
		es = open_fix(path);
		assert_int_equal(elfscan_sources(es), want);
		check_against_symbols(path, es, 6);
		check_all_sigs(es, ELFSCAN_SIG_MATCH);
		assert_int_equal(elfscan_nexits(es), 3);
		elfscan_close(es);
	}
}

static void test_current_format_every_arch_class_and_byte_order(void **state)
{
	static const struct {
		const char *dir, *arch;
		int cls;
		bool be;
	} arches[] = {
	    {"i386", "i386", 32, false},       {"aarch64", "aarch64", 64, false},
	    {"arm", "arm", 32, false},	       {"armeb", "arm", 32, true},
	    {"ppc64le", "ppc64le", 64, false}, {"ppc64", "ppc64", 64, true},
	    {"ppc", "ppc", 32, true},	       {"s390x", "s390x", 64, true},
	    {"riscv64", "riscv64", 64, false},
	};
	static const char *const files[] = {"cs-pie", "cs.so", "cs.o"};

	for (size_t a = 0; a < sizeof(arches) / sizeof(arches[0]); a++) {
		for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
			char path[PATH_MAX];
			struct elfscan *es;

			snprintf(path, sizeof(path), BIN "%s/%s", arches[a].dir, files[f]);
			es = open_fix(path);
			assert_string_equal(elfscan_arch_name(es), arches[a].arch);
			assert_int_equal(elfscan_class(es), arches[a].cls);
			assert_int_equal(elfscan_big_endian(es), arches[a].be);
			check_against_symbols(path, es, 3);
			check_all_sigs(es, ELFSCAN_SIG_MATCH);
			elfscan_close(es);
		}
	}
}

/* The descriptor listed twice in the pointer array is one section with three sites: the
 * __rseq_cs stride walk and both slots. */
static void test_descriptor_reached_twice_is_reported_once_with_every_site(void **state)
{
	const char *path = BIN "x86_64/cs-pie";
	struct elfscan *es = open_fix(path);
	struct syms s;
	uint64_t start = 0;
	const struct elfscan_cs *cs;
	size_t slots = 0;

	read_syms(path, &s);
	assert_true(sym_value(&s, "rseq_start_dup", &start));
	cs = elfscan_lookup(es, start);
	assert_non_null(cs);
	assert_int_equal(cs->start_ip, start);
	assert_int_equal(cs->nsites, 3);
	for (size_t i = 0; i < cs->nsites; i++) {
		if (cs->sites[i].source == ELFSCAN_SRC_CS)
			assert_int_equal(cs->sites[i].addr, cs->desc_addr);
		else
			slots += cs->sites[i].source == ELFSCAN_SRC_CS_PTR_ARRAY;
		if (i)
			assert_true(cs->sites[i - 1].addr < cs->sites[i].addr);
	}
	assert_int_equal(slots, 2);
	assert_int_equal(cs->sources, ELFSCAN_SRC_CS | ELFSCAN_SRC_CS_PTR_ARRAY);
	elfscan_close(es);
}

static void test_inline_copies_are_two_descriptors(void **state)
{
	const char *path = BIN "x86_64/cs-pie";
	struct elfscan *es = open_fix(path);
	struct syms s;
	uint64_t a = 0, b = 0;
	const struct elfscan_cs *ca, *cb;

	read_syms(path, &s);
	assert_true(sym_value(&s, "rseq_start_inl1", &a));
	assert_true(sym_value(&s, "rseq_start_inl2", &b));
	ca = elfscan_lookup(es, a);
	cb = elfscan_lookup(es, b);
	assert_non_null(ca);
	assert_non_null(cb);
	assert_true(ca->desc_addr != cb->desc_addr);
	elfscan_close(es);
}

static void test_gc_sections_walks_rseq_cs_by_stride(void **state)
{
	static const char *const files[] = {BIN "x86_64/cs-gc", BIN "x86_64/cs-lld-gc"};

	for (size_t i = 0; i < 2; i++) {
		struct elfscan *es = open_fix(files[i]);

		assert_int_equal(elfscan_sources(es), ELFSCAN_SRC_CS);
		check_against_symbols(files[i], es, 6);
		for (size_t k = 0; k < elfscan_count(es); k++) {
			const struct elfscan_cs *cs = elfscan_get(es, k);

			assert_int_equal(cs->nsites, 1);
			assert_int_equal(cs->desc_addr % 32, 0);
		}
		elfscan_close(es);
	}
}

static void test_table_2018_skips_leading_padding(void **state)
{
	const char *path = BIN "x86_64/table2018";
	struct elfscan *es = open_fix(path);

	assert_int_equal(elfscan_sources(es), ELFSCAN_SRC_TABLE_2018);
	check_against_symbols(path, es, 2);
	check_all_sigs(es, ELFSCAN_SIG_MATCH);
	elfscan_close(es);
}

static void test_table_2016_native_word_triples(void **state)
{
	const char *path = BIN "x86_64/table2016";
	struct elfscan *es = open_fix(path);

	assert_int_equal(elfscan_sources(es), ELFSCAN_SRC_TABLE_2016);
	check_against_symbols(path, es, 4);
	for (size_t i = 0; i < elfscan_count(es); i++) {
		const struct elfscan_cs *cs = elfscan_get(es, i);

		assert_int_equal(cs->desc_addr % 8, 0);
		assert_int_equal(cs->version, 0);
		assert_int_equal(cs->sig_status, ELFSCAN_SIG_MISMATCH);
	}
	elfscan_close(es);
}

static void test_sections_2015_begin_end_restart(void **state)
{
	const char *path = BIN "x86_64/sections2015";
	struct elfscan *es = open_fix(path);

	assert_int_equal(elfscan_sources(es), ELFSCAN_SRC_SECTIONS_2015);
	check_against_symbols(path, es, 3);
	for (size_t i = 0; i < elfscan_count(es); i++) {
		const struct elfscan_cs *cs = elfscan_get(es, i);

		assert_int_equal(cs->abort_ip, cs->start_ip); /* restart == begin in the source */
		assert_int_equal(cs->sites[0].source, ELFSCAN_SRC_SECTIONS_2015);
	}
	elfscan_close(es);
}

static void test_unknown_machine_scans_with_unknown_arch_status(void **state)
{
	const char *path = BIN "unknown/cs-em32343";
	struct elfscan *es = open_fix(path);
	uint32_t sigs[4];

	assert_int_equal(elfscan_machine(es), 32343);
	assert_string_equal(elfscan_arch_name(es), "EM_32343");
	check_against_symbols(path, es, 6);
	check_all_sigs(es, ELFSCAN_SIG_UNKNOWN_ARCH);
	assert_int_equal(elfscan_known_signatures(32343, sigs, 4), 0);
	elfscan_close(es);
}

/* The signature bytes are the 4 file bytes before abort_ip, compared independently here. */
static void test_signature_bytes_are_the_file_bytes_before_abort(void **state)
{
	const char *path = BIN "x86_64/cs-pie";
	struct elfscan *es = open_fix(path);

	for (size_t i = 0; i < elfscan_count(es); i++) {
		const struct elfscan_cs *cs = elfscan_get(es, i);
		static const uint8_t want[4] = {0x53, 0x30, 0x05, 0x53};
		uint64_t off = 0;
		uint8_t file[4];
		FILE *f;

		for (size_t k = 0; k < elfscan_nsegments(es); k++) {
			const struct elfscan_segment *sg = elfscan_segment(es, k);

			if (cs->abort_ip - 4 >= sg->vaddr && cs->abort_ip - sg->vaddr <= sg->filesz)
				off = cs->abort_ip - 4 - sg->vaddr + sg->offset;
		}
		assert_true(off != 0);
		f = fopen(path, "rb");
		assert_non_null(f);
		assert_int_equal(fseek(f, (long)off, SEEK_SET), 0);
		assert_int_equal(fread(file, 1, 4, f), 4);
		fclose(f);
		assert_memory_equal(cs->sig_bytes, file, 4);
		assert_memory_equal(cs->sig_bytes, want, 4);
		assert_int_equal(cs->signature, 0x53053053);
	}
	elfscan_close(es);
}

static void test_known_signatures_per_machine(void **state)
{
	uint32_t s[4];

	assert_int_equal(elfscan_known_signatures(EM_X86_64, s, 4), 1);
	assert_int_equal(s[0], 0x53053053);
	assert_int_equal(elfscan_known_signatures(EM_AARCH64, s, 4), 1);
	assert_int_equal(s[0], 0xd428bc00);
	assert_int_equal(elfscan_known_signatures(EM_PPC64, s, 4), 2);
	assert_int_equal(s[0], 0x0fe5000b);
	assert_int_equal(s[1], 0x53053053);
	assert_int_equal(elfscan_known_signatures(EM_S390, s, 1), 2);
	assert_int_equal(s[0], 0xb2ff0fff);
	assert_int_equal(elfscan_known_signatures(EM_RISCV, s, 4), 2);
	assert_int_equal(s[0], 0xf1401073);
	assert_int_equal(elfscan_known_signatures(EM_ARM, s, 4), 3);
	assert_int_equal(s[0], 0xe7f5def3);
	assert_string_equal(elfscan_source_name(ELFSCAN_SRC_TABLE_2016), "__rseq_table(2016)");
	assert_string_equal(elfscan_sig_status_name(ELFSCAN_SIG_UNKNOWN_ARCH), "unknown-arch");
}

static void test_file_properties(void **state)
{
	struct elfscan *es = open_fix(BIN "x86_64/cs-pie");

	assert_true(elfscan_is_pie(es));
	assert_int_equal(elfscan_type(es), ET_DYN);
	assert_non_null(elfscan_build_id(es));
	assert_int_equal(strlen(elfscan_build_id(es)), 40);
	elfscan_close(es);
	es = open_fix(BIN "x86_64/cs.so");
	assert_false(elfscan_is_pie(es));
	elfscan_close(es);
	es = open_fix(BIN "x86_64/cs-nopie");
	assert_false(elfscan_is_pie(es));
	assert_int_equal(elfscan_type(es), ET_EXEC);
	elfscan_close(es);
}

/* --- malformed input ---------------------------------------------------------------- */

/* Opening must fail with -err and a message naming the problem. */
static void expect_error(const struct image *im, size_t len, int err, const char *needle)
{
	struct elfscan *es = (struct elfscan *)1;
	int ret = elfscan_open_mem(im->b, len, NULL, &es);

	if (ret != -err || (needle && !strstr(elfscan_errmsg(), needle)))
		fail_msg("expected -%d with \"%s\", got %d: %s", err, needle ? needle : "", ret,
			 elfscan_errmsg());
	assert_null(es);
	assert_true(strlen(elfscan_errmsg()) > 0);
}

static void test_truncated_at_every_length_is_an_error(void **state)
{
	struct image im = load(BIN "x86_64/cs-pie");
	struct elfscan *es;

	/* Section headers sit at the end of the file: every truncation cuts something. */
	for (size_t len = 0; len < im.len; len += len < 256 ? 1 : 61) {
		es = NULL;
		if (!elfscan_open_mem(im.b, len, NULL, &es))
			fail_msg("truncated to %zu of %zu bytes, yet opened", len, im.len);
		assert_null(es);
	}
	expect_error(&im, 0, EINVAL, "empty");
	expect_error(&im, 3, EINVAL, "not an ELF file");
	/* The magic is there but the header is cut short: truncated, not "not ELF". */
	expect_error(&im, 4, EINVAL, "header needs 0x34 or 0x40");
	expect_error(&im, 10, EINVAL, "truncated ELF header (file size 0xa, header needs 0x40)");
	expect_error(&im, 40, EINVAL, "truncated ELF header");
	free(im.b);
}

static void test_bad_headers_are_errors(void **state)
{
	struct image im = load(BIN "x86_64/cs-pie");
	Elf64_Ehdr *eh = (Elf64_Ehdr *)im.b, saved = *eh;

	eh->e_ident[EI_CLASS] = 7;
	expect_error(&im, im.len, EINVAL, "ELF class");
	*eh = saved;
	eh->e_ident[EI_DATA] = 9;
	expect_error(&im, im.len, EINVAL, "data encoding");
	*eh = saved;
	eh->e_shoff = im.len - 10;
	expect_error(&im, im.len, EINVAL, "section header table");
	*eh = saved;
	eh->e_shoff = UINT64_MAX - 8;
	expect_error(&im, im.len, EINVAL, "section header table");
	*eh = saved;
	eh->e_shnum = 0xffff;
	expect_error(&im, im.len, EINVAL, "past end of file");
	*eh = saved;
	eh->e_shentsize = 20;
	expect_error(&im, im.len, EINVAL, "e_shentsize");
	*eh = saved;
	eh->e_phoff = im.len - 8;
	expect_error(&im, im.len, EINVAL, "program header table");
	*eh = saved;
	eh->e_shstrndx = eh->e_shnum + 3;
	expect_error(&im, im.len, EINVAL, "section name table");
	*eh = saved;
	/* Extended numbering: section 0 may count to 2^64; 16M is already absurd. */
	{
		Elf64_Shdr *s0 = (Elf64_Shdr *)(im.b + eh->e_shoff), s0_saved = *s0;

		eh->e_shnum = 0;
		s0->sh_size = 1500000000;
		expect_error(&im, im.len, EFBIG, "gives 1500000000 sections");
		*eh = saved;
		*s0 = s0_saved;
		eh->e_phnum = PN_XNUM;
		s0->sh_info = 0xffffffff;
		expect_error(&im, im.len, EFBIG,
			     "sections and 4294967295 segments; expected at most 16777216 of each");
		*s0 = s0_saved;
	}
	free(im.b);
}

static void test_bad_sections_are_errors(void **state)
{
	struct image im = load(BIN "x86_64/cs-pie");
	Elf64_Shdr *sh = shdr_named(&im, "__rseq_cs_ptr_array"), saved = *sh;
	Elf64_Shdr *cs = shdr_named(&im, "__rseq_cs"), cs_saved = *cs;

	sh->sh_offset = im.len - 4;
	expect_error(&im, im.len, EINVAL, "__rseq_cs_ptr_array");
	*sh = saved;
	sh->sh_size = UINT64_MAX;
	expect_error(&im, im.len, EINVAL, "extends past end of file");
	*sh = saved;
	sh->sh_size -= 3; /* the last slot's relocation now straddles the end */
	expect_error(&im, im.len, EINVAL, "outside section __rseq_cs_ptr_array");
	*sh = saved;
	cs->sh_size = 0;
	expect_error(&im, im.len, EINVAL, "slot at");
	*cs = cs_saved;
	cs->sh_type = SHT_NOBITS;
	expect_error(&im, im.len, EINVAL, "SHT_NOBITS");
	*cs = cs_saved;
	/* Even an inactive (SHT_NULL) section may not claim bytes past the end of the file. */
	cs->sh_type = SHT_NULL;
	cs->sh_size = 0x800727365ull;
	expect_error(&im, im.len, EINVAL, "extends past end of file");
	free(im.b);

	/* Without relocations (static), sizes are checked by the table decoders. */
	im = load(BIN "x86_64/cs-static");
	shdr_named(&im, "__rseq_cs_ptr_array")->sh_size -= 3;
	expect_error(&im, im.len, EINVAL, "not a multiple of 8");
	free(im.b);
	im = load(BIN "x86_64/cs-static");
	shdr_named(&im, "__rseq_exit_point_array")->sh_size -= 5;
	expect_error(&im, im.len, EINVAL, "not a multiple of 16");
	free(im.b);
	/* A slot pointing into .text, not at a descriptor. */
	im = load(BIN "x86_64/cs-static");
	memcpy(im.b + shdr_named(&im, "__rseq_cs_ptr_array")->sh_offset,
	       &shdr_named(&im, ".text")->sh_addr, 8);
	expect_error(&im, im.len, EINVAL, "in section .text");
	free(im.b);
}

/* The image with section name's bytes moved past the end of the file and declared as size
 * bytes of zeros there: the shape of a sparse file whose header declares gigabytes, at a size
 * a unit test holds in memory (tests/integration/large_input.sh runs the gigabytes). */
static struct image moved_to_zeros(const char *path, const char *name, size_t size)
{
	struct image src = load(path), im;
	size_t off = (src.len + 0xfff) & ~(size_t)0xfff;
	Elf64_Shdr *sh;

	im.len = off + size;
	im.b = calloc(1, im.len);
	assert_non_null(im.b);
	memcpy(im.b, src.b, src.len);
	free(src.b);
	sh = shdr_named(&im, name);
	sh->sh_offset = off;
	sh->sh_size = size;
	return im;
}

static void test_sections_of_zeros_are_read_within_bounds(void **state)
{
	static const char *const names[] = {".text",   "__rseq_cs", "__rseq_cs_ptr_array",
					    ".symtab", ".strtab",   ".rela.dyn"};
	struct elfscan_audit *a;
	struct elfscan *es;
	struct image im;

	/* A build-id section larger than one note can be is refused, saying what was expected. */
	im = moved_to_zeros(BIN "x86_64/cs-pie-dwarf", ".note.gnu.build-id", 0x2000);
	expect_error(&im, im.len, EFBIG,
		     "section .note.gnu.build-id [2] at offset 0x4000 declares 0x2000 bytes; "
		     "expected one build-id note of at most 0x1000 bytes");
	free(im.b);
	/* Up to that size its zeros are empty notes, walked to the end: no build-id. */
	im = moved_to_zeros(BIN "x86_64/cs-pie-dwarf", ".note.gnu.build-id", 0x1000);
	assert_int_equal(elfscan_open_mem(im.b, im.len, NULL, &es), 0);
	assert_null(elfscan_build_id(es));
	elfscan_close(es);
	free(im.b);
	/* Another note section is searched for the build-id note in its first 64 KiB only:
	 * its zeros are 12-byte empty notes, the last whole one before the note at 0xffd8. */
	for (size_t at = 0xffd8; at <= 0xffe4; at += 12) {
		struct image src = load(BIN "x86_64/cs-pie-dwarf");
		Elf64_Shdr *sh;

		im = moved_to_zeros(BIN "x86_64/cs-pie-dwarf", ".note.gnu.build-id", 0x20000);
		sh = shdr_named(&im, ".note.gnu.build-id");
		memcpy(im.b + sh->sh_offset + at,
		       src.b + shdr_named(&src, ".note.gnu.build-id")->sh_offset, 0x24);
		sh->sh_name += strlen(".note.gnu"); /* ".build-id" */
		assert_int_equal(elfscan_open_mem(im.b, im.len, NULL, &es), 0);
		if (at + 0x24 <= 0x10000)
			assert_non_null(elfscan_build_id(es));
		else
			assert_null(elfscan_build_id(es));
		elfscan_close(es);
		free(im.b);
		free(src.b);
	}
	/* Code, tables, symbols, names and relocations of zeros (0x2010 bytes: a whole number of
	 * entries of each) open and audit; the sections come from the other tables. */
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		im = moved_to_zeros(BIN "x86_64/cs-pie-dwarf", names[i], 0x2010);
		es = NULL;
		if (elfscan_open_mem(im.b, im.len, NULL, &es))
			fail_msg("%s of zeros: %s", names[i], elfscan_errmsg());
		assert_int_equal(elfscan_count(es), 6);
		if (elfscan_audit(es, NULL, &a))
			fail_msg("audit, %s of zeros: %s", names[i], elfscan_errmsg());
		elfscan_audit_free(a);
		elfscan_close(es);
		free(im.b);
	}
}

static void test_not_elf_empty_and_directory_are_errors(void **state)
{
	struct elfscan *es = NULL;
	char path[] = "/tmp/elfscan-empty.XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(elfscan_open(path, NULL, &es), -EINVAL);
	assert_non_null(strstr(elfscan_errmsg(), "empty file"));
	assert_null(strstr(elfscan_errmsg(), path)); /* the caller names the file */
	unlink(path);
	assert_int_equal(elfscan_open(FIXTURE_DIR, NULL, &es), -EISDIR);
	assert_non_null(strstr(elfscan_errmsg(), "directory"));
	assert_int_equal(elfscan_open(FIXTURE_DIR "/README", NULL, &es), -EINVAL);
	assert_non_null(strstr(elfscan_errmsg(), "not an ELF file"));
	assert_int_equal(elfscan_open(FIXTURE_DIR "/does-not-exist", NULL, &es), -ENOENT);
	assert_null(es);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_current_format_x86_64_every_link_mode),
	    cmocka_unit_test(test_current_format_every_arch_class_and_byte_order),
	    cmocka_unit_test(test_descriptor_reached_twice_is_reported_once_with_every_site),
	    cmocka_unit_test(test_inline_copies_are_two_descriptors),
	    cmocka_unit_test(test_gc_sections_walks_rseq_cs_by_stride),
	    cmocka_unit_test(test_table_2018_skips_leading_padding),
	    cmocka_unit_test(test_table_2016_native_word_triples),
	    cmocka_unit_test(test_sections_2015_begin_end_restart),
	    cmocka_unit_test(test_unknown_machine_scans_with_unknown_arch_status),
	    cmocka_unit_test(test_signature_bytes_are_the_file_bytes_before_abort),
	    cmocka_unit_test(test_known_signatures_per_machine),
	    cmocka_unit_test(test_file_properties),
	    cmocka_unit_test(test_truncated_at_every_length_is_an_error),
	    cmocka_unit_test(test_bad_headers_are_errors),
	    cmocka_unit_test(test_bad_sections_are_errors),
	    cmocka_unit_test(test_sections_of_zeros_are_read_within_bounds),
	    cmocka_unit_test(test_not_elf_empty_and_directory_are_errors),
	};

	return UNIT_MAIN(tests);
}
