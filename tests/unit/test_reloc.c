// SPDX-License-Identifier: GPL-2.0-only
/*
 * Relocations: every link mode of the same sources (GNU ld PIE and non-PIE, lld with zeros
 * in place, RELR, shared object, static, object file) must give the values of the fixture's
 * symbols, read here with libelf; the file bytes are read here too, to show the values did
 * not come from them. Malformed relocations built in memory must be errors.
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

#include "elfscan.h"
#include "fixture.h"
#include "unit.h"

#define X86 FIXTURE_DIR "/bin/x86_64/"

static size_t shdr_index(const struct image *im, const Elf64_Shdr *sh)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)im->b;

	return (size_t)(sh - (Elf64_Shdr *)(im->b + eh->e_shoff));
}

/* The value of symbol name in path's .symtab, read with libelf. */
static uint64_t sym(const char *path, const char *name)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	uint64_t v = 0;
	bool found = false;
	Elf *elf;
	int fd;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	while ((scn = elf_nextscn(elf, scn)) && !found) {
		Elf_Data *d;

		assert_non_null(gelf_getshdr(scn, &sh));
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;

			if (!gelf_getsym(d, (int)i, &s))
				continue;
			n = elf_strptr(elf, sh.sh_link, s.st_name);
			if (n && !strcmp(n, name)) {
				v = s.st_value;
				found = true;
				break;
			}
		}
	}
	elf_end(elf);
	close(fd);
	if (!found)
		fail_msg("%s: no symbol %s", path, name);
	return v;
}

static const char *const ids[] = {"inc", "cmpxchg", "tcm", "dup", "inl1", "inl2"};

/* start, post-commit and abort of every section, as offsets from rseq_start_inc: the
 * assembler fixed them, so every link mode must agree, and each must equal its symbol. */
static void test_every_link_mode_gives_the_symbol_values(void **state)
{
	static const char *const files[] = {"cs-pie", "cs-nopie",  "cs-lld-pie", "cs-relr",  "cs.o",
					    "cs.so",  "cs-static", "cs-gc",	 "cs-lld-gc"};
	int64_t first[6][3];

	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		char path[PATH_MAX], name[64];
		struct elfscan *es;
		uint64_t base;

		snprintf(path, sizeof(path), X86 "%s", files[f]);
		es = open_fix(path);
		base = sym(path, "rseq_start_inc");
		for (size_t i = 0; i < 6; i++) {
			const struct elfscan_cs *cs;
			int64_t rel[3];

			snprintf(name, sizeof(name), "rseq_start_%s", ids[i]);
			cs = elfscan_lookup(es, sym(path, name));
			assert_non_null(cs);
			assert_int_equal(cs->start_ip, sym(path, name));
			snprintf(name, sizeof(name), "rseq_post_commit_%s", ids[i]);
			assert_int_equal(cs->post_commit_ip, sym(path, name));
			snprintf(name, sizeof(name), "rseq_abort_%s", ids[i]);
			assert_int_equal(cs->abort_ip, sym(path, name));
			rel[0] = (int64_t)(cs->start_ip - base);
			rel[1] = (int64_t)(cs->post_commit_ip - base);
			rel[2] = (int64_t)(cs->abort_ip - base);
			if (!f)
				memcpy(first[i], rel, sizeof(rel));
			else
				assert_memory_equal(first[i], rel, sizeof(rel));
		}
		elfscan_close(es);
	}
}

/* lld leaves zeros where RELATIVE relocations apply; the values come from .rela.dyn. */
static void test_lld_zeros_in_place_are_relocated(void **state)
{
	const char *path = X86 "cs-lld-pie";
	struct image im = load(path);
	Elf64_Shdr *cs = shdr_named(&im, "__rseq_cs"),
		   *ptrs = shdr_named(&im, "__rseq_cs_ptr_array");
	struct elfscan *es = open_fix(path);
	uint64_t file_start, file_slot, slot;

	assert_non_null(cs);
	assert_non_null(ptrs);
	memcpy(&file_start, im.b + cs->sh_offset + 8, 8);
	memcpy(&file_slot, im.b + ptrs->sh_offset, 8);
	assert_int_equal(file_start, 0);
	assert_int_equal(file_slot, 0);

	assert_int_equal(elfscan_get(es, 0)->desc_addr, cs->sh_addr);
	assert_int_equal(elfscan_get(es, 0)->start_ip, sym(path, "rseq_start_inc"));
	/* elfscan_read returns loaded bytes with the relocations applied. */
	assert_int_equal(elfscan_read(es, ptrs->sh_addr, &slot, 8), 0);
	assert_int_equal(slot, cs->sh_addr);
	elfscan_close(es);
	free(im.b);
}

/* cs-relr carries DT_RELR; its table words are right although no RELA entry covers them. */
static void test_relr_packed_relocations(void **state)
{
	const char *path = X86 "cs-relr";
	struct image im = load(path);
	Elf64_Shdr *dyn = shdr_named(&im, ".dynamic"), *rela = shdr_named(&im, ".rela.dyn");
	Elf64_Shdr *cs = shdr_named(&im, "__rseq_cs");
	struct elfscan *es;
	bool relr = false;

	assert_non_null(dyn);
	for (Elf64_Dyn *d = (Elf64_Dyn *)(im.b + dyn->sh_offset);
	     (unsigned char *)d < im.b + dyn->sh_offset + dyn->sh_size && d->d_tag; d++)
		relr |= d->d_tag == DT_RELR;
	assert_true(relr);
	for (size_t i = 0; rela && i < rela->sh_size / sizeof(Elf64_Rela); i++) {
		Elf64_Rela *r = (Elf64_Rela *)(im.b + rela->sh_offset) + i;

		assert_false(r->r_offset >= cs->sh_addr && r->r_offset < cs->sh_addr + cs->sh_size);
	}
	es = open_fix(path);
	assert_int_equal(elfscan_count(es), 6);
	for (size_t i = 0; i < 6; i++) {
		const struct elfscan_cs *c;
		char name[64];

		snprintf(name, sizeof(name), "rseq_start_%s", ids[i]);
		c = elfscan_lookup(es, sym(path, name));
		assert_non_null(c);
		snprintf(name, sizeof(name), "rseq_abort_%s", ids[i]);
		assert_int_equal(c->abort_ip, sym(path, name));
	}
	elfscan_close(es);
	free(im.b);
}

/* In cs.so the tcm abort_ip is a symbolic R_X86_64_64 against rseq_abort_tcm. */
static void test_symbolic_relocation_in_shared_object(void **state)
{
	const char *path = X86 "cs.so";
	struct image im = load(path);
	Elf64_Shdr *rela = shdr_named(&im, ".rela.dyn");
	struct elfscan *es = open_fix(path);
	const struct elfscan_cs *cs = elfscan_lookup(es, sym(path, "rseq_start_tcm"));
	bool symbolic = false;

	assert_non_null(cs);
	for (size_t i = 0; i < rela->sh_size / sizeof(Elf64_Rela); i++) {
		Elf64_Rela *r = (Elf64_Rela *)(im.b + rela->sh_offset) + i;

		if (r->r_offset == cs->desc_addr + 24)
			symbolic =
			    ELF64_R_TYPE(r->r_info) == R_X86_64_64 && ELF64_R_SYM(r->r_info) != 0;
	}
	assert_true(symbolic);
	assert_int_equal(cs->abort_ip, sym(path, "rseq_abort_tcm"));
	elfscan_close(es);
	free(im.b);
}

/* RISC-V objects hold post_commit_offset as an ADD64/SUB64 pair over a 0 in the file. */
static void test_riscv_object_add_sub_pairs(void **state)
{
	const char *path = FIXTURE_DIR "/bin/riscv64/cs.o";
	struct image im = load(path);
	Elf64_Shdr *csh = shdr_named(&im, "__rseq_cs");
	struct elfscan *es = open_fix(path);
	uint64_t file_off;

	memcpy(&file_off, im.b + csh->sh_offset + 16, 8);
	assert_int_equal(file_off, 0);
	assert_int_equal(elfscan_get(es, 0)->post_commit_offset,
			 sym(path, "rseq_post_commit_inc") - sym(path, "rseq_start_inc"));
	assert_true(elfscan_get(es, 0)->post_commit_offset > 0);
	elfscan_close(es);
	free(im.b);
}

/* REL targets (i386, arm) take the addend from the word in place. */
static void test_rel_addend_in_place(void **state)
{
	static const char *const files[] = {
	    FIXTURE_DIR "/bin/i386/cs-pie", FIXTURE_DIR "/bin/i386/cs.o",
	    FIXTURE_DIR "/bin/arm/cs-pie", FIXTURE_DIR "/bin/arm/cs.so",
	    FIXTURE_DIR "/bin/armeb/cs.o"};

	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		struct elfscan *es = open_fix(files[f]);
		const struct elfscan_cs *cs = elfscan_lookup(es, sym(files[f], "rseq_start_add"));

		assert_non_null(cs);
		assert_int_equal(cs->abort_ip, sym(files[f], "rseq_abort_add"));
		assert_int_equal(cs->post_commit_ip, sym(files[f], "rseq_post_commit_add"));
		elfscan_close(es);
	}
}

static void test_object_file_layout_and_offsets(void **state)
{
	const char *path = X86 "cs.o";
	struct image im = load(path);
	Elf64_Shdr *text = shdr_named(&im, ".text"), *cs = shdr_named(&im, "__rseq_cs");
	struct elfscan *es = open_fix(path);
	uint64_t addr;

	assert_int_equal(elfscan_type(es), ET_REL);
	/* .text is the first allocated section: laid out at 0. */
	assert_int_equal(elfscan_offset_to_addr(es, text->sh_offset, &addr), 0);
	assert_int_equal(addr, 0);
	assert_int_equal(elfscan_offset_to_addr(es, cs->sh_offset, &addr), 0);
	assert_int_equal(addr % 32, 0);
	assert_int_equal(elfscan_get(es, 0)->desc_addr, addr);
	elfscan_close(es);
	free(im.b);
}

/* --- malformed relocations of the x86_64 object ----------------------------------------- */

static void expect_error(const struct image *im, const char *needle)
{
	struct elfscan *es = NULL;
	int ret = elfscan_open_mem(im->b, im->len, NULL, &es);

	if (ret != -EINVAL || !strstr(elfscan_errmsg(), needle))
		fail_msg("expected -EINVAL with \"%s\", got %d: %s", needle, ret, elfscan_errmsg());
	assert_null(es);
}

static Elf64_Rela *relas(struct image *im)
{
	return (Elf64_Rela *)(im->b + shdr_named(im, ".rela__rseq_cs")->sh_offset);
}

static void test_bad_relocations_are_errors(void **state)
{
	struct image im = load(X86 "cs.o"), orig = load(X86 "cs.o");
	Elf64_Shdr *rs = shdr_named(&im, ".rela__rseq_cs");
	struct elfscan *es = NULL;

	assert_int_equal(elfscan_open_mem(im.b, im.len, NULL, &es), 0);
	elfscan_close(es);

	relas(&im)[1].r_offset = 0x10000;
	expect_error(&im, "outside section __rseq_cs");
	memcpy(im.b, orig.b, im.len);
	relas(&im)[0].r_offset = shdr_named(&im, "__rseq_cs")->sh_size - 4;
	expect_error(&im, "writes 8 bytes outside section __rseq_cs");
	memcpy(im.b, orig.b, im.len);
	relas(&im)[0].r_info = ELF64_R_INFO(99999, ELF64_R_TYPE(relas(&im)[0].r_info));
	expect_error(&im, "symbol 99999");
	memcpy(im.b, orig.b, im.len);
	relas(&im)[0].r_info = ELF64_R_INFO(ELF64_R_SYM(relas(&im)[0].r_info), 0xfe);
	expect_error(&im, "type 254");
	memcpy(im.b, orig.b, im.len);
	rs->sh_entsize = 7;
	expect_error(&im, "sh_entsize 7");
	memcpy(im.b, orig.b, im.len);
	rs->sh_info = 999;
	expect_error(&im, "section [999]");
	memcpy(im.b, orig.b, im.len);
	rs->sh_link = (uint32_t)shdr_index(&im, rs);
	expect_error(&im, "not a symbol table");
	memcpy(im.b, orig.b, im.len);
	shdr_named(&im, ".symtab")->sh_entsize = 5;
	expect_error(&im, "sh_entsize 5");
	free(im.b);
	free(orig.b);
}

static void test_bad_relr_tables_are_errors(void **state)
{
	struct image im = load(X86 "cs-relr");
	Elf64_Shdr *relr = shdr_named(&im, ".relr.dyn");

	assert_non_null(relr);
	relr->sh_entsize = 3;
	expect_error(&im, "sh_entsize 3");
	relr->sh_entsize = 8;
	relr->sh_size -= 4;
	expect_error(&im, "not a multiple of 8");
	free(im.b);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_link_mode_gives_the_symbol_values),
	    cmocka_unit_test(test_lld_zeros_in_place_are_relocated),
	    cmocka_unit_test(test_relr_packed_relocations),
	    cmocka_unit_test(test_symbolic_relocation_in_shared_object),
	    cmocka_unit_test(test_riscv_object_add_sub_pairs),
	    cmocka_unit_test(test_rel_addend_in_place),
	    cmocka_unit_test(test_object_file_layout_and_offsets),
	    cmocka_unit_test(test_bad_relocations_are_errors),
	    cmocka_unit_test(test_bad_relr_tables_are_errors),
	};

	return UNIT_MAIN(tests);
}
