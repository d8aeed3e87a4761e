/* SPDX-License-Identifier: GPL-2.0-only */
/* What the unit tests share to read fixtures: whole files, section headers, opening.
 * Include after <cmocka.h> and "elfscan.h". */
#ifndef TESTS_UNIT_FIXTURE_H
#define TESTS_UNIT_FIXTURE_H

#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct image {
	unsigned char *b;
	size_t len;
};

/* The whole file, in a buffer the test may damage. */
static inline struct image load(const char *path)
{
	struct image im;
	struct stat st;
	FILE *f = fopen(path, "rb");

	assert_non_null(f);
	assert_int_equal(fstat(fileno(f), &st), 0);
	im.len = st.st_size;
	im.b = malloc(im.len);
	assert_non_null(im.b);
	assert_int_equal(fread(im.b, 1, im.len, f), im.len);
	fclose(f);
	return im;
}

/* Section header by name in a 64-bit little-endian image (the host's layout); the test
 * fails when there is none. */
static inline Elf64_Shdr *shdr_named(const struct image *im, const char *name)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)im->b;
	Elf64_Shdr *sh = (Elf64_Shdr *)(im->b + eh->e_shoff);
	const char *strs = (const char *)im->b + sh[eh->e_shstrndx].sh_offset;

	for (size_t i = 0; i < eh->e_shnum; i++)
		if (!strcmp(strs + sh[i].sh_name, name))
			return &sh[i];
	fail_msg("no section %s", name);
	return NULL;
}

static inline struct elfscan *open_fix(const char *path)
{
	struct elfscan *es = NULL;

	if (elfscan_open(path, NULL, &es))
		fail_msg("%s: %s", path, elfscan_errmsg());
	return es;
}

#endif
