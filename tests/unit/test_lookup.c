// SPDX-License-Identifier: GPL-2.0-only
/*
 * Address lookup over many sections, on ELF images built here in memory (one PT_LOAD, .text,
 * and a __rseq_cs of chosen descriptors): results are compared with a brute-force scan of the
 * descriptors the test itself wrote, including overlapping, nested, empty and wrapping ones.
 */
#include <elf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "elfscan.h"
#include "unit.h"

#define BASE 0x400000ull
#define TEXT_OFF 0x1000ull
#define TEXT_SIZE 0x100000ull
#define TEXT_ADDR (BASE + TEXT_OFF)

struct desc {
	uint64_t start, len, abort;
};

struct built {
	unsigned char *b;
	size_t len;
	uint64_t cs_addr;
};

/* An ET_EXEC x86_64 image whose __rseq_cs holds d[0..n) in order, no pointer array. */
static struct built build(const struct desc *d, size_t n)
{
	static const char shstr[] = "\0.text\0__rseq_cs\0.shstrtab";
	uint64_t cs_off = TEXT_OFF + TEXT_SIZE, str_off = cs_off + n * 32;
	uint64_t sh_off = (str_off + sizeof(shstr) + 7) & ~7ull;
	struct built r = {.len = sh_off + 4 * sizeof(Elf64_Shdr), .cs_addr = BASE + cs_off};
	Elf64_Ehdr *eh;
	Elf64_Phdr *ph;
	Elf64_Shdr *sh;

	r.b = calloc(1, r.len);
	assert_non_null(r.b);
	eh = (Elf64_Ehdr *)r.b;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_EXEC;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(*eh);
	eh->e_shoff = sh_off;
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(Elf64_Phdr);
	eh->e_phnum = 1;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = 4;
	eh->e_shstrndx = 3;

	ph = (Elf64_Phdr *)(r.b + eh->e_phoff);
	ph->p_type = PT_LOAD;
	ph->p_flags = PF_R | PF_W | PF_X;
	ph->p_vaddr = ph->p_paddr = BASE;
	ph->p_filesz = ph->p_memsz = str_off;
	ph->p_align = 0x1000;

	sh = (Elf64_Shdr *)(r.b + sh_off);
	sh[1] = (Elf64_Shdr){.sh_name = 1,
			     .sh_type = SHT_PROGBITS,
			     .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
			     .sh_addr = TEXT_ADDR,
			     .sh_offset = TEXT_OFF,
			     .sh_size = TEXT_SIZE,
			     .sh_addralign = 16};
	sh[2] = (Elf64_Shdr){.sh_name = 7,
			     .sh_type = SHT_PROGBITS,
			     .sh_flags = SHF_ALLOC | SHF_WRITE,
			     .sh_addr = r.cs_addr,
			     .sh_offset = cs_off,
			     .sh_size = n * 32,
			     .sh_addralign = 32};
	sh[3] = (Elf64_Shdr){.sh_name = 17,
			     .sh_type = SHT_STRTAB,
			     .sh_offset = str_off,
			     .sh_size = sizeof(shstr),
			     .sh_addralign = 1};
	memcpy(r.b + str_off, shstr, sizeof(shstr));
	for (size_t i = 0; i < n; i++) {
		unsigned char *p = r.b + cs_off + i * 32;

		memset(p, 0, 8); /* version, flags */
		memcpy(p + 8, &d[i].start, 8);
		memcpy(p + 16, &d[i].len, 8);
		memcpy(p + 24, &d[i].abort, 8);
	}
	return r;
}

static struct elfscan *open_built(const struct built *b)
{
	struct elfscan *es = NULL;

	if (elfscan_open_mem(b->b, b->len, NULL, &es))
		fail_msg("%s", elfscan_errmsg());
	return es;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static bool contains(const struct desc *d, uint64_t a)
{
	return a >= d->start && a - d->start < d->len;
}

/* lookup_all and lookup against a brute-force scan of what the test wrote. */
static void check_probe(struct elfscan *es, const struct built *b, const struct desc *d, size_t n,
			uint64_t a)
{
	const struct elfscan_cs *out[64];
	size_t want = 0, got = elfscan_lookup_all(es, a, out, 64);
	uint64_t best = 0;
	const struct elfscan_cs *one = elfscan_lookup(es, a);

	for (size_t i = 0; i < n; i++) {
		if (!contains(&d[i], a))
			continue;
		if (!want || d[i].start > best)
			best = d[i].start;
		want++;
	}
	assert_int_equal(got, want);
	for (size_t i = 0; i < got && i < 64; i++) {
		size_t k = (out[i]->desc_addr - b->cs_addr) / 32;

		/* each result is the descriptor the test wrote at that place, and holds a */
		assert_true(k < n);
		assert_int_equal(out[i]->start_ip, d[k].start);
		assert_true(contains(&d[k], a));
		if (i)
			assert_true(out[i - 1] < out[i]);
	}
	if (!want) {
		assert_null(one);
		return;
	}
	assert_non_null(one);
	assert_int_equal(one->start_ip, best); /* the innermost (latest starting) one */
}

static void test_lookup_matches_brute_force_on_100k_sections(void **state)
{
	size_t n = 100000;
	struct desc *d = calloc(n, sizeof(*d));
	struct built b;
	struct elfscan *es;

	assert_non_null(d);
	for (size_t i = 0; i < n; i++) {
		d[i].start = TEXT_ADDR + rnd() % (TEXT_SIZE - 0x20000);
		switch (rnd() % 100) {
		case 0: /* long sections spanning many others */
			d[i].len = 1 + rnd() % 0x10000;
			break;
		case 1: /* empty: contains nothing */
			d[i].len = 0;
			break;
		default:
			d[i].len = 1 + rnd() % 64;
			break;
		}
		d[i].abort = d[i].start + d[i].len + 8;
	}
	b = build(d, n);
	es = open_built(&b);
	assert_int_equal(elfscan_count(es), n);
	for (size_t i = 0; i < 1500; i++)
		check_probe(es, &b, d, n, TEXT_ADDR + rnd() % TEXT_SIZE);
	for (size_t i = 0; i < 300; i++) {
		const struct desc *x = &d[rnd() % n];

		check_probe(es, &b, d, n, x->start);
		check_probe(es, &b, d, n, x->start - 1);
		check_probe(es, &b, d, n, x->start + x->len - 1);
		check_probe(es, &b, d, n, x->start + x->len);
	}
	elfscan_close(es);
	free(b.b);
	free(d);
}

static void test_sections_sorted_by_start_then_descriptor(void **state)
{
	struct desc d[] = {
	    {TEXT_ADDR + 0x300, 4, TEXT_ADDR + 0x400},
	    {TEXT_ADDR + 0x100, 4, TEXT_ADDR + 0x400},
	    {TEXT_ADDR + 0x200, 4, TEXT_ADDR + 0x400},
	    {TEXT_ADDR + 0x100, 8, TEXT_ADDR + 0x400},
	};
	struct built b = build(d, 4);
	struct elfscan *es = open_built(&b);

	assert_int_equal(elfscan_count(es), 4);
	for (size_t i = 1; i < 4; i++) {
		const struct elfscan_cs *p = elfscan_get(es, i - 1), *c = elfscan_get(es, i);

		assert_true(p->start_ip < c->start_ip ||
			    (p->start_ip == c->start_ip && p->desc_addr < c->desc_addr));
	}
	assert_int_equal(elfscan_get(es, 0)->desc_addr, b.cs_addr + 32);
	assert_int_equal(elfscan_get(es, 1)->desc_addr, b.cs_addr + 96);
	assert_null(elfscan_get(es, 4));
	elfscan_close(es);
	free(b.b);
}

/* Ten nested sections around one address: all are counted, max of them returned. */
static void test_nested_sections_lookup_all_counts_beyond_max(void **state)
{
	struct desc d[10];
	const struct elfscan_cs *out[3];
	struct built b;
	struct elfscan *es;
	uint64_t a = TEXT_ADDR + 0x1000;

	for (size_t i = 0; i < 10; i++)
		d[i] = (struct desc){a - 0x10 * (i + 1), 0x20 * (i + 1), TEXT_ADDR + 0x8000};
	b = build(d, 10);
	es = open_built(&b);
	assert_int_equal(elfscan_lookup_all(es, a, out, 3), 10);
	for (size_t i = 0; i < 3; i++)
		assert_true(out[i]->start_ip <= a && a < out[i]->post_commit_ip);
	assert_int_equal(elfscan_lookup(es, a)->start_ip, a - 0x10);
	/* outside the outermost one, nothing */
	assert_int_equal(elfscan_lookup_all(es, a + 0x100, out, 3), 0);
	elfscan_close(es);
	free(b.b);
}

/* [start_ip, post_commit_ip): the start belongs, the post-commit address does not. */
static void test_boundaries_start_inclusive_post_commit_exclusive(void **state)
{
	struct desc d[] = {{TEXT_ADDR + 0x40, 0x10, TEXT_ADDR + 0x60},
			   {TEXT_ADDR + 0x50, 0x10, TEXT_ADDR + 0x70}};
	struct built b = build(d, 2);
	struct elfscan *es = open_built(&b);

	assert_null(elfscan_lookup(es, TEXT_ADDR + 0x3f));
	assert_int_equal(elfscan_lookup(es, TEXT_ADDR + 0x40)->start_ip, TEXT_ADDR + 0x40);
	assert_int_equal(elfscan_lookup(es, TEXT_ADDR + 0x4f)->start_ip, TEXT_ADDR + 0x40);
	assert_int_equal(elfscan_lookup(es, TEXT_ADDR + 0x50)->start_ip, TEXT_ADDR + 0x50);
	assert_int_equal(elfscan_lookup(es, TEXT_ADDR + 0x5f)->start_ip, TEXT_ADDR + 0x50);
	assert_null(elfscan_lookup(es, TEXT_ADDR + 0x60));
	elfscan_close(es);
	free(b.b);
}

/* An empty section holds nothing; one whose end wraps holds everything from its start. */
static void test_empty_and_wrapping_sections(void **state)
{
	struct desc d[] = {{TEXT_ADDR + 0x40, 0, TEXT_ADDR + 0x60},
			   {TEXT_ADDR + 0x800, UINT64_MAX - 0x100, TEXT_ADDR + 0x60}};
	struct built b = build(d, 2);
	struct elfscan *es = open_built(&b);
	const struct elfscan_cs *out[2];

	assert_null(elfscan_lookup(es, TEXT_ADDR + 0x40));
	assert_null(elfscan_lookup(es, TEXT_ADDR + 0x7ff));
	assert_int_equal(elfscan_lookup(es, TEXT_ADDR + 0x800)->start_ip, TEXT_ADDR + 0x800);
	assert_int_equal(elfscan_lookup_all(es, UINT64_MAX - 1, out, 2), 1);
	assert_int_equal(elfscan_get(es, 1)->post_commit_ip,
			 TEXT_ADDR + 0x800 + UINT64_MAX - 0x100);
	elfscan_close(es);
	free(b.b);
}

/* No __rseq_cs at all: nothing found, no error. */
static void test_no_sections_finds_nothing(void **state)
{
	struct built b = build(NULL, 0);
	struct elfscan *es = open_built(&b);
	const struct elfscan_cs *out[1];

	assert_int_equal(elfscan_count(es), 0);
	assert_null(elfscan_lookup(es, TEXT_ADDR));
	assert_int_equal(elfscan_lookup_all(es, TEXT_ADDR, out, 1), 0);
	assert_int_equal(elfscan_nexits(es), 0);
	assert_null(elfscan_exit_point(es, 0));
	elfscan_close(es);
	free(b.b);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lookup_matches_brute_force_on_100k_sections),
	    cmocka_unit_test(test_sections_sorted_by_start_then_descriptor),
	    cmocka_unit_test(test_nested_sections_lookup_all_counts_beyond_max),
	    cmocka_unit_test(test_boundaries_start_inclusive_post_commit_exclusive),
	    cmocka_unit_test(test_empty_and_wrapping_sections),
	    cmocka_unit_test(test_no_sections_finds_nothing),
	};

	return UNIT_MAIN(tests);
}
