// SPDX-License-Identifier: LGPL-2.1-or-later
/* Apply to the rseq tables' private copies the relocations the dynamic loader (or, for an
 * object file, the linker) would apply, so every word reads as it would at load base 0.
 *
 * Only relocations that land in a table section are looked at. Such a relocation that
 * straddles the end of its section, names a symbol the symbol table does not hold, or has a
 * type that cannot describe a table word (GOT, TLS, PC-relative, IRELATIVE, unknown) makes
 * the file an error. A symbolic relocation against an undefined symbol leaves the bytes as
 * the file holds them (the loader would take the value from another module). */
#include <errno.h>
#include <stdio.h>

#include "internal.h"

struct symtab {
	size_t ndx; /* 0: not loaded yet */
	const unsigned char *data;
	uint64_t n;
	const unsigned char *xndx; /* SHT_SYMTAB_SHNDX words, when present */
	uint64_t nxndx;
};

/* The SHT_SYMTAB_SHNDX section (object files with 65280+ sections), 0 when none. */
static size_t find_xndx(const struct elfscan *es)
{
	for (size_t i = 1; i < es->shnum; i++)
		if (es->shdrs[i].sh_type == SHT_SYMTAB_SHNDX)
			return i;
	return 0;
}

static int load_symtab(const struct elfscan *es, size_t relndx, size_t xndx, struct symtab *st)
{
	size_t link = es->shdrs[relndx].sh_link;
	uint64_t entsz = es->wordsz == 8 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
	const GElf_Shdr *sh;

	if (link == 0 || link >= es->shnum)
		return es_err(
		    EINVAL,
		    "relocation section %s [%zu] links to symbol table [%zu], which does not exist",
		    es_secname(es, relndx), relndx, link);
	sh = &es->shdrs[link];
	if (sh->sh_type != SHT_SYMTAB && sh->sh_type != SHT_DYNSYM)
		return es_err(EINVAL,
			      "relocation section %s [%zu] links to section %s [%zu], which is "
			      "not a symbol table",
			      es_secname(es, relndx), relndx, es_secname(es, link), link);
	if (sh->sh_entsize != entsz)
		return es_err(EINVAL, "symbol table %s [%zu] has sh_entsize %llu (expected %llu)",
			      es_secname(es, link), link, (unsigned long long)sh->sh_entsize,
			      (unsigned long long)entsz);
	st->ndx = link;
	st->data = es->image + sh->sh_offset;
	st->n = sh->sh_size / entsz;
	if (xndx && es->shdrs[xndx].sh_link == link) {
		st->xndx = es->image + es->shdrs[xndx].sh_offset;
		st->nxndx = es->shdrs[xndx].sh_size / 4;
	}
	return 0;
}

/* The value of symbol i: 0 and *val set, 1 when undefined, or -errno. */
static int sym_value(const struct elfscan *es, const struct symtab *st, uint64_t i, uint64_t *val)
{
	const unsigned char *p;
	uint64_t shndx, value;

	if (i == 0) {
		*val = 0;
		return 0;
	}
	if (i >= st->n)
		return es_err(
		    EINVAL,
		    "a relocation refers to symbol %llu, but symbol table %s [%zu] holds %llu",
		    (unsigned long long)i, es_secname(es, st->ndx), st->ndx,
		    (unsigned long long)st->n);
	if (es->wordsz == 8) {
		p = st->data + i * sizeof(Elf64_Sym);
		shndx = es_load(es, p + 6, 2);
		value = es_load(es, p + 8, 8);
	} else {
		p = st->data + i * sizeof(Elf32_Sym);
		shndx = es_load(es, p + 14, 2);
		value = es_load(es, p + 4, 4);
	}
	if (shndx == SHN_UNDEF || shndx == SHN_COMMON)
		return 1;
	if (shndx == SHN_ABS) {
		*val = value;
		return 0;
	}
	if (shndx == SHN_XINDEX) {
		if (i >= st->nxndx)
			return es_err(EINVAL,
				      "symbol %llu of %s [%zu] has an extended section index but "
				      "no SHT_SYMTAB_SHNDX entry",
				      (unsigned long long)i, es_secname(es, st->ndx), st->ndx);
		shndx = es_load(es, st->xndx + 4 * i, 4);
	}
	if (shndx >= es->shnum)
		return es_err(EINVAL,
			      "symbol %llu of %s [%zu] is in section %llu, which does not exist "
			      "(%zu sections)",
			      (unsigned long long)i, es_secname(es, st->ndx), st->ndx,
			      (unsigned long long)shndx, es->shnum);
	/* In an object file a symbol's value is an offset in its section. */
	*val = es->ehdr.e_type == ET_REL ? es->secaddr[shndx] + value : value;
	return 0;
}

/* Apply relocation section ri: to target (object file, r_offset within it) or, when target
 * is NULL, to whichever table holds r_offset (a linked file's dynamic relocations). */
static int apply_section(struct elfscan *es, size_t ri, size_t xndx, struct es_tab *target)
{
	const GElf_Shdr *sh = &es->shdrs[ri];
	bool rela = sh->sh_type == SHT_RELA;
	unsigned int w = es->wordsz;
	uint64_t ent = rela ? 3 * w : 2 * w;
	struct symtab st = {0};
	const unsigned char *p = es->image + sh->sh_offset;

	if (sh->sh_entsize != ent)
		return es_err(EINVAL,
			      "relocation section %s [%zu] has sh_entsize %llu (expected %llu)",
			      es_secname(es, ri), ri, (unsigned long long)sh->sh_entsize,
			      (unsigned long long)ent);
	if (sh->sh_size % ent)
		return es_err(EINVAL,
			      "relocation section %s [%zu] size 0x%llx is not a multiple of %llu",
			      es_secname(es, ri), ri, (unsigned long long)sh->sh_size,
			      (unsigned long long)ent);

	for (uint64_t k = 0, n = sh->sh_size / ent; k < n; k++, p += ent) {
		uint64_t off = es_load(es, p, w), info = es_load(es, p + w, w);
		uint64_t type = w == 8 ? info & 0xffffffff : info & 0xff;
		uint64_t symi = w == 8 ? info >> 32 : info >> 8;
		uint64_t addend = 0, pos, s = 0, cur, v;
		unsigned int width;
		enum es_rkind kind = es_reloc_kind(es->ehdr.e_machine, w, type, &width);
		struct es_tab *t = target;
		int err;

		if (kind == ES_R_NONE)
			continue;
		if (rela) {
			addend = es_load(es, p + 2 * w, w);
			if (w == 4)
				addend = (uint64_t)(int64_t)(int32_t)addend;
		}
		if (!t) {
			t = es_tab_at(es, off);
			if (!t)
				continue;
			pos = off - t->addr;
		} else {
			pos = off;
		}
		if (kind == ES_R_UNKNOWN)
			return es_err(EINVAL,
				      "relocation %llu in %s [%zu] at 0x%llx has type %llu, which "
				      "%s does not use for table words (section %s [%zu])",
				      (unsigned long long)k, es_secname(es, ri), ri,
				      (unsigned long long)off, (unsigned long long)type,
				      elfscan_arch_name(es), t->name, t->ndx);
		if (pos > t->size || t->size - pos < width)
			return es_err(EINVAL,
				      "relocation %llu in %s [%zu] at 0x%llx writes %u bytes "
				      "outside section %s [%zu] (size 0x%llx)",
				      (unsigned long long)k, es_secname(es, ri), ri,
				      (unsigned long long)off, width, t->name, t->ndx,
				      (unsigned long long)t->size);
		if (!rela) /* REL: the addend is the word in the file */
			addend = es_load(es, es->image + es->shdrs[t->ndx].sh_offset + pos, width);
		if (kind != ES_R_RELATIVE) {
			if (!st.ndx) {
				err = load_symtab(es, ri, xndx, &st);
				if (err)
					return err;
			}
			err = sym_value(es, &st, symi, &s);
			if (err < 0)
				return err;
			if (err > 0)
				continue;
		}
		cur = es_load(es, t->data + pos, width);
		switch (kind) {
		case ES_R_RELATIVE: /* load base 0 */
			v = addend;
			break;
		case ES_R_ABS:
			v = s + addend;
			break;
		case ES_R_ADD:
			v = cur + s + addend;
			break;
		default:
			v = cur - (s + addend);
			break;
		}
		es_store(es, t->data + pos, width, v);
	}
	return 0;
}

/* A RELR word relocation at load base 0 leaves the word as the file holds it (RELR addends
 * are always in place), so decoding only checks that each one stays inside its table. */
static int check_relr(struct elfscan *es, const unsigned char *p, uint64_t size, const char *what)
{
	unsigned int w = es->wordsz;
	uint64_t where = 0;

	if (size % w)
		return es_err(EINVAL, "%s size 0x%llx is not a multiple of %u", what,
			      (unsigned long long)size, w);
	for (uint64_t off = 0; off < size; off += w) {
		uint64_t e = es_load(es, p + off, w);
		uint64_t addrs[8 * 8];
		unsigned int n = 0;

		if (!(e & 1)) {
			addrs[n++] = e;
			where = e + w;
		} else {
			for (unsigned int b = 1; b < 8 * w; b++)
				if ((e >> b) & 1)
					addrs[n++] = where + (uint64_t)(b - 1) * w;
			where += (uint64_t)(8 * w - 1) * w;
		}
		for (unsigned int i = 0; i < n; i++) {
			struct es_tab *t = es_tab_at(es, addrs[i]);

			if (t && t->size - (addrs[i] - t->addr) < w)
				return es_err(EINVAL,
					      "%s relocates 0x%llx, which straddles the end of "
					      "section %s [%zu]",
					      what, (unsigned long long)addrs[i], t->name, t->ndx);
		}
	}
	return 0;
}

int es_relocate(struct elfscan *es)
{
	bool rel = es->ehdr.e_type == ET_REL, have_relr = false;
	size_t xndx;
	int err = 0;

	if (!es->ntabs)
		return 0;
	xndx = find_xndx(es);
	for (size_t i = 1; i < es->shnum && !err; i++) {
		const GElf_Shdr *sh = &es->shdrs[i];

		if (sh->sh_type == SHT_RELR && !rel) {
			char what[64];

			snprintf(what, sizeof(what), "section %s [%zu]", es_secname(es, i), i);
			have_relr = true;
			if (sh->sh_entsize != (uint64_t)es->wordsz)
				err = es_err(EINVAL, "%s has sh_entsize %llu (expected %d)", what,
					     (unsigned long long)sh->sh_entsize, es->wordsz);
			else
				err = check_relr(es, es->image + sh->sh_offset, sh->sh_size, what);
			continue;
		}
		if (sh->sh_type != SHT_REL && sh->sh_type != SHT_RELA)
			continue;
		if (sh->sh_info >= es->shnum) {
			err = es_err(EINVAL,
				     "relocation section %s [%zu] applies to section [%u], which "
				     "does not exist (%zu sections)",
				     es_secname(es, i), i, sh->sh_info, es->shnum);
			break;
		}
		if (!rel) {
			/* Dynamic relocations are the allocated ones; --emit-relocs leaves
			 * static ones behind that are already applied. */
			if (sh->sh_flags & SHF_ALLOC)
				err = apply_section(es, i, xndx, NULL);
			continue;
		}
		if (es->tab_of[sh->sh_info])
			err = apply_section(es, i, xndx, es->tab_of[sh->sh_info]);
	}
	if (!err && !rel && es->has_dt_relr && es->dt_relrent &&
	    es->dt_relrent != (uint64_t)es->wordsz)
		return es_err(EINVAL, "DT_RELRENT is %llu (expected %d)",
			      (unsigned long long)es->dt_relrent, es->wordsz);
	if (!err && !rel && !have_relr && es->has_dt_relr && es->dt_relrsz) {
		const unsigned char *p = es_loaded(es, es->dt_relr, es->dt_relrsz);

		if (!p)
			return es_err(
			    EINVAL,
			    "DT_RELR table at 0x%llx size 0x%llx is not in the file's loaded bytes",
			    (unsigned long long)es->dt_relr, (unsigned long long)es->dt_relrsz);
		err = check_relr(es, p, es->dt_relrsz, "DT_RELR table");
	}
	return err;
}
