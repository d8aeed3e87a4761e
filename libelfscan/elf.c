// SPDX-License-Identifier: LGPL-2.1-or-later
/* Open an ELF file or buffer: validate its headers, sections and segments, lay out the
 * sections of an object file, and read loaded bytes by address. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

static const struct {
	const char *name;
	enum es_tab_kind kind;
} tab_names[] = {
    {"__rseq_cs", ES_TAB_CS},
    {"__rseq_cs_ptr_array", ES_TAB_PTRS},
    {"__rseq_exit_point_array", ES_TAB_EXITS},
    {"__rseq_table", ES_TAB_TABLE},
    {"__rseq_sections", ES_TAB_SECTIONS},
};

const char *es_secname(const struct elfscan *es, size_t ndx)
{
	const char *s = NULL;

	if (es->elf && es->shstrndx && ndx < es->shnum)
		s = elf_strptr(es->elf, es->shstrndx, es->shdrs[ndx].sh_name);
	return s ? s : "";
}

/* e_ident: magic, class, data encoding, version, with what the header needs if cut short. */
static int check_ident(struct elfscan *es)
{
	const unsigned char *p = es->image;
	size_t ehsz;

	if (es->size == 0)
		return es_err(EINVAL, "empty file");
	if (es->size < SELFMAG || memcmp(p, ELFMAG, SELFMAG) != 0)
		return es_err(EINVAL, "not an ELF file (no \\177ELF magic at offset 0)");
	if (es->size < EI_NIDENT) {
		/* The magic is there: the file was cut short, say how much the header needs. */
		if (es->size > EI_CLASS && p[EI_CLASS] == ELFCLASS32)
			ehsz = sizeof(Elf32_Ehdr);
		else if (es->size > EI_CLASS && p[EI_CLASS] == ELFCLASS64)
			ehsz = sizeof(Elf64_Ehdr);
		else
			return es_err(
			    EINVAL,
			    "truncated ELF header (file size 0x%zx, header needs 0x%zx or 0x%zx)",
			    es->size, sizeof(Elf32_Ehdr), sizeof(Elf64_Ehdr));
		return es_err(EINVAL, "truncated ELF header (file size 0x%zx, header needs 0x%zx)",
			      es->size, ehsz);
	}
	if (p[EI_CLASS] != ELFCLASS32 && p[EI_CLASS] != ELFCLASS64)
		return es_err(EINVAL, "unknown ELF class %u at offset 0x%x (expected 1 or 2)",
			      p[EI_CLASS], EI_CLASS);
	if (p[EI_DATA] != ELFDATA2LSB && p[EI_DATA] != ELFDATA2MSB)
		return es_err(EINVAL,
			      "unknown ELF data encoding %u at offset 0x%x (expected 1 or 2)",
			      p[EI_DATA], EI_DATA);
	if (p[EI_VERSION] != EV_CURRENT)
		return es_err(EINVAL, "unknown ELF version %u at offset 0x%x (expected 1)",
			      p[EI_VERSION], EI_VERSION);
	return 0;
}

/* The raw header fields libelf would otherwise reject with a generic message. */
static int check_header(struct elfscan *es)
{
	const unsigned char *p = es->image;
	bool is64;
	size_t ehsz, shsz, phsz;
	uint64_t shoff, phoff, shnum, phnum, shstrndx;
	unsigned int shentsize, phentsize;
	int ret = check_ident(es);

	if (ret)
		return ret;
	is64 = p[EI_CLASS] == ELFCLASS64;
	es->big_endian = p[EI_DATA] == ELFDATA2MSB;
	es->wordsz = is64 ? 8 : 4;
	ehsz = is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	shsz = is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	phsz = is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	if (es->size < ehsz)
		return es_err(EINVAL, "truncated ELF header (file size 0x%zx, header needs 0x%zx)",
			      es->size, ehsz);

	if (is64) {
		phoff = es_load(es, p + 32, 8);
		shoff = es_load(es, p + 40, 8);
		phentsize = es_load(es, p + 54, 2);
		phnum = es_load(es, p + 56, 2);
		shentsize = es_load(es, p + 58, 2);
		shnum = es_load(es, p + 60, 2);
		shstrndx = es_load(es, p + 62, 2);
	} else {
		phoff = es_load(es, p + 28, 4);
		shoff = es_load(es, p + 32, 4);
		phentsize = es_load(es, p + 42, 2);
		phnum = es_load(es, p + 44, 2);
		shentsize = es_load(es, p + 46, 2);
		shnum = es_load(es, p + 48, 2);
		shstrndx = es_load(es, p + 50, 2);
	}

	if (shoff) {
		if (shentsize != shsz)
			return es_err(EINVAL, "e_shentsize is %u (expected %zu)", shentsize, shsz);
		if (shoff > es->size || es->size - shoff < shsz)
			return es_err(EINVAL,
				      "section header table at offset 0x%llx extends past end of "
				      "file (size 0x%zx)",
				      (unsigned long long)shoff, es->size);
		/* Extended numbering: the real counts live in section header 0. */
		if (shnum == 0)
			shnum =
			    is64 ? es_load(es, p + shoff + 32, 8) : es_load(es, p + shoff + 20, 4);
		if (shstrndx == SHN_XINDEX) {
			shstrndx = es_load(es, p + shoff + (is64 ? 40 : 24), 4);
			if (!shstrndx)
				return es_err(
				    EINVAL,
				    "e_shstrndx is SHN_XINDEX but section 0's sh_link, which then "
				    "holds the section name table index, is 0");
		}
		if (phnum == PN_XNUM)
			phnum = es_load(es, p + shoff + (is64 ? 44 : 28), 4);
		/* Extended numbering counts to 2^32 (2^64 in ELF64): libelf would allocate a
		 * structure for each before a byte of them is checked. */
		if (shnum > ES_MAX_HEADERS || phnum > ES_MAX_HEADERS)
			return es_err(EFBIG,
				      "section 0 at offset 0x%llx (extended numbering) gives %llu "
				      "sections and %llu segments; expected at most %u of each",
				      (unsigned long long)shoff, (unsigned long long)shnum,
				      (unsigned long long)phnum, ES_MAX_HEADERS);
		if ((es->size - shoff) / shsz < shnum)
			return es_err(EINVAL,
				      "section header table at offset 0x%llx (%llu entries of %zu "
				      "bytes) extends past end of file (size 0x%zx)",
				      (unsigned long long)shoff, (unsigned long long)shnum, shsz,
				      es->size);
		if (shnum && shstrndx >= shnum)
			return es_err(
			    EINVAL, "section name table index %llu is out of range (%llu sections)",
			    (unsigned long long)shstrndx, (unsigned long long)shnum);
		/* Without names no rseq table can be found: say so rather than find none. */
		if (shnum > 1 && !shstrndx)
			return es_err(
			    EINVAL,
			    "no section name table (e_shstrndx is 0) in a file of %llu sections",
			    (unsigned long long)shnum);
	} else if (shnum) {
		return es_err(EINVAL, "e_shnum is %llu but e_shoff is 0",
			      (unsigned long long)shnum);
	}

	if (phnum) {
		if (phentsize != phsz)
			return es_err(EINVAL, "e_phentsize is %u (expected %zu)", phentsize, phsz);
		if (phoff > es->size || (es->size - phoff) / phsz < phnum)
			return es_err(EINVAL,
				      "program header table at offset 0x%llx (%llu entries of %zu "
				      "bytes) extends past end of file (size 0x%zx)",
				      (unsigned long long)phoff, (unsigned long long)phnum, phsz,
				      es->size);
	}
	return 0;
}

static int cmp_offset(const void *a, const void *b)
{
	const GElf_Shdr *x = *(const GElf_Shdr *const *)a, *y = *(const GElf_Shdr *const *)b;

	if (x->sh_offset != y->sh_offset)
		return x->sh_offset < y->sh_offset ? -1 : 1;
	return x->sh_size < y->sh_size ? -1 : x->sh_size > y->sh_size;
}

/*
 * The file bytes of a section belong to it alone: no two sections with bytes in the file
 * (neither SHT_NULL nor SHT_NOBITS, size > 0) share one, nor does a section share one with
 * the ELF header or the section header table. Linkers never write otherwise; a reader
 * trusting such a file would take a name table, a symbol table or a descriptor table from
 * another section's bytes. NOBITS sections (.bss, .tbss, a debug file's stripped sections)
 * occupy no file bytes and may sit at any offset; empty sections hold none.
 */
static bool shares_bytes(const GElf_Shdr *a, const GElf_Shdr *b)
{
	return a->sh_offset < b->sh_offset + b->sh_size && b->sh_offset < a->sh_offset + a->sh_size;
}

static bool has_bytes(const GElf_Shdr *sh)
{
	return sh->sh_type != SHT_NULL && sh->sh_type != SHT_NOBITS && sh->sh_size;
}

/* "NAME [i]", or for the section name table "[i] (the section name table)": its name is
 * not to be trusted when its bytes are in question. */
static const char *sec_label(const struct elfscan *es, size_t i, char *buf, size_t len)
{
	if (i == es->shstrndx)
		snprintf(buf, len, "[%zu] (the section name table)", i);
	else
		snprintf(buf, len, "%s [%zu]", es_secname(es, i), i);
	return buf;
}

static int check_overlap(struct elfscan *es)
{
	uint64_t ehsz = es->wordsz == 8 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	uint64_t shoff = es->ehdr.e_shoff, shend;
	const GElf_Shdr *str = es->shstrndx ? &es->shdrs[es->shstrndx] : NULL, **v;
	char a[300], b[300];
	size_t n = 0, i, j;
	int err = 0;

	shend = shoff +
		(uint64_t)es->shnum * (es->wordsz == 8 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr));
	/* The name table first: while it shares bytes, no name it gives can be printed. */
	for (j = 1; str && has_bytes(str) && j < es->shnum; j++) {
		if (j != es->shstrndx && has_bytes(&es->shdrs[j]) &&
		    shares_bytes(str, &es->shdrs[j]))
			return es_err(
			    EINVAL,
			    "the section name table [%zu] (offset 0x%llx size 0x%llx) and section "
			    "[%zu] (offset 0x%llx size 0x%llx) overlap in the file",
			    es->shstrndx, (unsigned long long)str->sh_offset,
			    (unsigned long long)str->sh_size, j,
			    (unsigned long long)es->shdrs[j].sh_offset,
			    (unsigned long long)es->shdrs[j].sh_size);
	}
	v = calloc(es->shnum, sizeof(*v));
	if (!v)
		return es_err(ENOMEM, "out of memory for %zu section headers", es->shnum);
	for (i = 1; i < es->shnum; i++)
		if (has_bytes(&es->shdrs[i]))
			v[n++] = &es->shdrs[i];
	es_qsort(v, n, sizeof(*v), cmp_offset);
	/* Sorted by offset, a section that overlaps any earlier one overlaps its neighbour. */
	for (size_t k = 0; k < n && !err; k++) {
		const GElf_Shdr *sh = v[k], *prev = k ? v[k - 1] : NULL;
		uint64_t end = sh->sh_offset + sh->sh_size; /* checked against the file size */

		i = (size_t)(sh - es->shdrs);
		if (sh->sh_offset < ehsz)
			err = es_err(EINVAL, "section %s at offset 0x%llx overlaps the ELF header",
				     sec_label(es, i, a, sizeof(a)),
				     (unsigned long long)sh->sh_offset);
		else if (sh->sh_offset < shend && shoff < end)
			err = es_err(EINVAL,
				     "section %s at offset 0x%llx size 0x%llx overlaps the "
				     "section header table at 0x%llx",
				     sec_label(es, i, a, sizeof(a)),
				     (unsigned long long)sh->sh_offset,
				     (unsigned long long)sh->sh_size, (unsigned long long)shoff);
		else if (prev && shares_bytes(prev, sh))
			err = es_err(
			    EINVAL,
			    "sections %s (offset 0x%llx size 0x%llx) and %s (offset 0x%llx size "
			    "0x%llx) overlap in the file",
			    sec_label(es, (size_t)(prev - es->shdrs), a, sizeof(a)),
			    (unsigned long long)prev->sh_offset, (unsigned long long)prev->sh_size,
			    sec_label(es, i, b, sizeof(b)), (unsigned long long)sh->sh_offset,
			    (unsigned long long)sh->sh_size);
	}
	free(v);
	return err;
}

/* "FILE: section NAME [i] at offset 0x.. declares 0x.. bytes; expected ..." */
static int too_big(const struct elfscan *es, int err, size_t i, const GElf_Shdr *sh,
		   const char *expected)
{
	return es_err(err, "section %s [%zu] at offset 0x%llx declares 0x%llx bytes; %s",
		      es_secname(es, i), i, (unsigned long long)sh->sh_offset,
		      (unsigned long long)sh->sh_size, expected);
}

/*
 * A section the library reads whole (notes, symbol, string and relocation tables, code) must
 * be of a size its contents can have: a declared 50 GiB of zeros in a sparse file would
 * otherwise be walked byte by byte. *code adds up the executable sections.
 */
static int check_size(const struct elfscan *es, size_t i, const GElf_Shdr *sh, uint64_t *code)
{
	uint64_t symsz = es->wordsz == 8 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
	uint64_t relsz = es->wordsz == 8 ? sizeof(Elf64_Rel) : sizeof(Elf32_Rel);
	uint64_t relasz = es->wordsz == 8 ? sizeof(Elf64_Rela) : sizeof(Elf32_Rela);
	uint64_t n = sh->sh_size;
	char want[160];

	if (sh->sh_type == SHT_NOBITS || sh->sh_type == SHT_NULL)
		return 0;
	switch (sh->sh_type) {
	case SHT_NOTE:
		if (n > ES_MAX_BUILD_ID_NOTE && !strcmp(es_secname(es, i), ".note.gnu.build-id")) {
			snprintf(want, sizeof(want),
				 "expected one build-id note of at most 0x%x bytes",
				 ES_MAX_BUILD_ID_NOTE);
			return too_big(es, EFBIG, i, sh, want);
		}
		break;
	case SHT_SYMTAB:
	case SHT_DYNSYM:
		if (n / symsz > ES_MAX_SYMBOLS) {
			snprintf(want, sizeof(want),
				 "expected a symbol table of at most %u symbols (0x%llx bytes)",
				 ES_MAX_SYMBOLS, (unsigned long long)(ES_MAX_SYMBOLS * symsz));
			return too_big(es, EFBIG, i, sh, want);
		}
		break;
	case SHT_STRTAB:
		if (n > ES_MAX_STRTAB)
			return too_big(es, EFBIG, i, sh,
				       "expected a string table of at most 0x100000000 bytes "
				       "(names are 32-bit offsets)");
		break;
	case SHT_REL:
	case SHT_RELA:
	case SHT_RELR:
		n /= sh->sh_type == SHT_REL    ? relsz
		     : sh->sh_type == SHT_RELA ? relasz
					       : (uint64_t)es->wordsz;
		if (n > ES_MAX_RELOCS) {
			snprintf(want, sizeof(want),
				 "expected a relocation section of at most %u entries",
				 ES_MAX_RELOCS);
			return too_big(es, EFBIG, i, sh, want);
		}
		break;
	}
	if ((sh->sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) == (SHF_ALLOC | SHF_EXECINSTR)) {
		*code += sh->sh_size; /* each bounded by the file size: no overflow */
		if (*code > ES_MAX_CODE) {
			snprintf(want, sizeof(want),
				 "expected at most 0x%llx bytes of code in all executable sections",
				 (unsigned long long)ES_MAX_CODE);
			return too_big(es, EFBIG, i, sh, want);
		}
	}
	return 0;
}

static int load_sections(struct elfscan *es)
{
	bool rel = es->ehdr.e_type == ET_REL;
	uint64_t next = 0, code = 0;
	int err;

	if (elf_getshdrnum(es->elf, &es->shnum) || elf_getshdrstrndx(es->elf, &es->shstrndx))
		return es_err(EINVAL, "cannot read the section header table: %s", elf_errmsg(-1));
	if (!es->shnum)
		return 0;
	es->shdrs = calloc(es->shnum, sizeof(*es->shdrs));
	es->secaddr = calloc(es->shnum, sizeof(*es->secaddr));
	if (!es->shdrs || !es->secaddr)
		return es_err(ENOMEM, "out of memory for %zu section headers", es->shnum);
	if (es->shstrndx >= es->shnum)
		return es_err(EINVAL, "section name table index %zu is out of range (%zu sections)",
			      es->shstrndx, es->shnum);
	if (es->shstrndx) {
		GElf_Shdr sh;

		if (!gelf_getshdr(elf_getscn(es->elf, es->shstrndx), &sh) ||
		    sh.sh_type != SHT_STRTAB)
			return es_err(EINVAL, "section name table [%zu] is not a string table",
				      es->shstrndx);
	}

	for (size_t i = 0; i < es->shnum; i++) {
		GElf_Shdr *sh = &es->shdrs[i];
		uint64_t a;

		if (!gelf_getshdr(elf_getscn(es->elf, i), sh))
			return es_err(EINVAL, "cannot read section header [%zu]: %s", i,
				      elf_errmsg(-1));
		if (i && es->shstrndx && sh->sh_name &&
		    !elf_strptr(es->elf, es->shstrndx, sh->sh_name))
			return es_err(
			    EINVAL,
			    "section [%zu] name offset 0x%x is outside the section name table", i,
			    sh->sh_name);
		/* Every section but NOBITS ones: even an inactive one, lest a size it claims
		 * be trusted anywhere. */
		if (i && sh->sh_type != SHT_NOBITS &&
		    (sh->sh_offset > es->size || es->size - sh->sh_offset < sh->sh_size))
			return es_err(EINVAL,
				      "section %s [%zu] at offset 0x%llx size 0x%llx extends past "
				      "end of file (size 0x%zx)",
				      es_secname(es, i), i, (unsigned long long)sh->sh_offset,
				      (unsigned long long)sh->sh_size, es->size);
		err = i ? check_size(es, i, sh, &code) : 0;
		if (err)
			return err;
		if (!rel || !(sh->sh_flags & SHF_ALLOC)) {
			es->secaddr[i] = rel ? 0 : sh->sh_addr;
			continue;
		}
		/* An object file is laid out as a linker would: allocated sections in index
		 * order, each at its alignment, from address 0. */
		a = sh->sh_addralign > 1 ? sh->sh_addralign : 1;
		if (next % a) {
			if (next > UINT64_MAX - (a - next % a))
				goto overflow;
			next += a - next % a;
		}
		es->secaddr[i] = next;
		if (sh->sh_size > UINT64_MAX - next)
			goto overflow;
		next += sh->sh_size;
	}
	return check_overlap(es);
overflow:
	return es_err(EINVAL, "allocated sections of the object exceed the address space");
}

static int load_segments(struct elfscan *es)
{
	uint64_t code = 0;
	size_t phnum;

	if (elf_getphdrnum(es->elf, &phnum))
		return es_err(EINVAL, "cannot read the program header table: %s", elf_errmsg(-1));
	es->segs = calloc(phnum ? phnum : 1, sizeof(*es->segs));
	if (!es->segs)
		return es_err(ENOMEM, "out of memory for %zu program headers", phnum);
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(es->elf, (int)i, &ph))
			return es_err(EINVAL, "cannot read program header [%zu]: %s", i,
				      elf_errmsg(-1));
		if (ph.p_type == PT_INTERP)
			es->has_interp = true;
		if (ph.p_type != PT_LOAD)
			continue;
		if (ph.p_offset > es->size || es->size - ph.p_offset < ph.p_filesz)
			return es_err(EINVAL,
				      "segment [%zu] (PT_LOAD) at offset 0x%llx size 0x%llx "
				      "extends past end of file (size 0x%zx)",
				      i, (unsigned long long)ph.p_offset,
				      (unsigned long long)ph.p_filesz, es->size);
		/* Decoded and searched whole when the file has no section headers. */
		code += ph.p_flags & PF_X ? ph.p_filesz : 0;
		if (code > ES_MAX_CODE)
			return es_err(
			    EFBIG,
			    "segment [%zu] (PT_LOAD, executable) at offset 0x%llx declares "
			    "0x%llx bytes; expected at most 0x%llx bytes of code in all "
			    "executable segments",
			    i, (unsigned long long)ph.p_offset, (unsigned long long)ph.p_filesz,
			    (unsigned long long)ES_MAX_CODE);
		es->segs[es->nsegs++] = (struct elfscan_segment){
		    .vaddr = ph.p_vaddr,
		    .memsz = ph.p_memsz,
		    .offset = ph.p_offset,
		    .filesz = ph.p_filesz,
		    .align = ph.p_align,
		    .flags = ph.p_flags,
		};
	}
	return 0;
}

/* The file part of the first section of type, or without section headers, of the first
 * segment of type ptype. */
static const unsigned char *find_part(const struct elfscan *es, uint32_t type, uint32_t ptype,
				      uint64_t *len)
{
	size_t phnum;

	for (size_t i = 1; i < es->shnum; i++) {
		const GElf_Shdr *sh = &es->shdrs[i];

		if (sh->sh_type == type) {
			*len = sh->sh_size;
			return es->image + sh->sh_offset;
		}
	}
	if (es->shnum || elf_getphdrnum(es->elf, &phnum))
		return NULL;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(es->elf, (int)i, &ph) || ph.p_type != ptype)
			continue;
		if (ph.p_offset > es->size || es->size - ph.p_offset < ph.p_filesz)
			return NULL;
		*len = ph.p_filesz;
		return es->image + ph.p_offset;
	}
	return NULL;
}

static void read_dynamic(struct elfscan *es)
{
	uint64_t len = 0, w = es->wordsz;
	const unsigned char *p = find_part(es, SHT_DYNAMIC, PT_DYNAMIC, &len);

	for (uint64_t off = 0; p && len - off >= 2 * w && off <= len; off += 2 * w) {
		uint64_t tag = es_load(es, p + off, w), val = es_load(es, p + off + w, w);

		if (tag == DT_NULL)
			break;
		switch (tag) {
		case DT_FLAGS_1:
			es->dt_flags_1 = val;
			break;
		case DT_RELR:
			es->dt_relr = val;
			es->has_dt_relr = true;
			break;
		case DT_RELRSZ:
			es->dt_relrsz = val;
			break;
		case DT_RELRENT:
			es->dt_relrent = val;
			break;
		}
	}
}

/* The build-id note among the first ES_MAX_NOTE_WALK bytes of notes at p: linkers put it
 * first, in a section of its own; a walk further through a huge note area finds nothing. */
static int note_build_id(struct elfscan *es, const unsigned char *p, uint64_t len, uint64_t align)
{
	uint64_t a = align == 8 ? 8 : 4, off = 0;

	if (len > ES_MAX_NOTE_WALK)
		len = ES_MAX_NOTE_WALK;

	while (len - off >= 12) {
		uint64_t namesz = es_load(es, p + off, 4), descsz = es_load(es, p + off + 4, 4);
		uint32_t type = es_load(es, p + off + 8, 4);
		uint64_t name_off = off + 12, desc_off, next;

		desc_off = name_off + (namesz + a - 1) / a * a;
		if (desc_off > len || len - desc_off < descsz)
			return 0;
		next = desc_off + (descsz + a - 1) / a * a;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(p + name_off, "GNU", 4) &&
		    descsz > 0 && descsz <= 256) {
			es->build_id = malloc(2 * descsz + 1);
			if (!es->build_id)
				return es_err(ENOMEM, "out of memory for the build-id");
			for (uint64_t i = 0; i < descsz; i++)
				snprintf(es->build_id + 2 * i, 3, "%02x", p[desc_off + i]);
			return 0;
		}
		if (next > len)
			return 0;
		off = next;
	}
	return 0;
}

static int find_build_id(struct elfscan *es)
{
	size_t phnum;
	int err;

	for (size_t i = 1; i < es->shnum && !es->build_id; i++) {
		const GElf_Shdr *sh = &es->shdrs[i];

		if (sh->sh_type != SHT_NOTE)
			continue;
		err = note_build_id(es, es->image + sh->sh_offset, sh->sh_size, sh->sh_addralign);
		if (err)
			return err;
	}
	if (es->build_id || es->shnum || elf_getphdrnum(es->elf, &phnum))
		return 0;
	for (size_t i = 0; i < phnum && !es->build_id; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(es->elf, (int)i, &ph) || ph.p_type != PT_NOTE ||
		    ph.p_offset > es->size || es->size - ph.p_offset < ph.p_filesz)
			continue;
		err = note_build_id(es, es->image + ph.p_offset, ph.p_filesz, ph.p_align);
		if (err)
			return err;
	}
	return 0;
}

static int cmp_region(const void *a, const void *b)
{
	const struct es_region *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Where loaded bytes come from: PT_LOAD segments of a linked file, else the allocated
 * sections (object files, or files without program headers). */
static int build_regions(struct elfscan *es)
{
	bool by_seg = es->ehdr.e_type != ET_REL && es->nsegs;
	size_t n = by_seg ? es->nsegs : es->shnum;

	es->regions = calloc(n ? n : 1, sizeof(*es->regions));
	es->exec = calloc(n ? n : 1, sizeof(*es->exec));
	if (!es->regions || !es->exec)
		return es_err(ENOMEM, "out of memory for %zu regions", n);
	for (size_t i = 0; i < n; i++) {
		uint64_t addr, fsize, msize;
		const unsigned char *data;
		bool exec;

		if (by_seg) {
			const struct elfscan_segment *s = &es->segs[i];

			addr = s->vaddr;
			msize = s->memsz;
			fsize = s->filesz < s->memsz ? s->filesz : s->memsz;
			data = es->image + s->offset;
			exec = s->flags & PF_X;
		} else {
			const GElf_Shdr *sh = &es->shdrs[i];

			if (!i || !(sh->sh_flags & SHF_ALLOC))
				continue;
			addr = es->secaddr[i];
			msize = sh->sh_size;
			fsize = sh->sh_type == SHT_NOBITS ? 0 : sh->sh_size;
			data = es->image + sh->sh_offset;
			exec = sh->sh_flags & SHF_EXECINSTR;
		}
		if (fsize)
			es->regions[es->nregions++] = (struct es_region){addr, fsize, data};
		if (exec && msize)
			es->exec[es->nexec++] = (struct es_region){addr, msize, NULL};
	}
	es_qsort(es->regions, es->nregions, sizeof(*es->regions), cmp_region);
	es_qsort(es->exec, es->nexec, sizeof(*es->exec), cmp_region);
	return 0;
}

/* The last range starting at or below addr, if it contains addr. */
static const struct es_region *find_range(const struct es_region *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr - v[lo - 1].addr >= v[lo - 1].size)
		return NULL;
	return &v[lo - 1];
}

const unsigned char *es_loaded(const struct elfscan *es, uint64_t addr, uint64_t len)
{
	const struct es_region *r = find_range(es->regions, es->nregions, addr);

	if (!r || r->size - (addr - r->addr) < len)
		return NULL;
	return r->data + (addr - r->addr);
}

bool es_in_exec(const struct elfscan *es, uint64_t addr)
{
	return find_range(es->exec, es->nexec, addr) != NULL;
}

static int cmp_tab(const void *a, const void *b)
{
	const struct es_tab *x = *(const struct es_tab *const *)a,
			    *y = *(const struct es_tab *const *)b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->ndx < y->ndx ? -1 : x->ndx > y->ndx;
}

static int collect_tables(struct elfscan *es)
{
	size_t n = 0;

	for (size_t pass = 0; pass < 2; pass++) {
		for (size_t i = 1; i < es->shnum; i++) {
			const GElf_Shdr *sh = &es->shdrs[i];
			const char *name = es_secname(es, i);
			struct es_tab *t;
			unsigned int ent;
			size_t k;

			/* Only sections with bytes in the file (checked by load_sections). */
			if (sh->sh_type == SHT_NOBITS || sh->sh_type == SHT_NULL ||
			    !(sh->sh_flags & SHF_ALLOC))
				continue;
			for (k = 0; k < sizeof(tab_names) / sizeof(tab_names[0]); k++)
				if (!strcmp(name, tab_names[k].name))
					break;
			if (k == sizeof(tab_names) / sizeof(tab_names[0]))
				continue;
			if (!pass) {
				n++;
				continue;
			}
			t = &es->tabs[es->ntabs++];
			t->kind = tab_names[k].kind;
			t->ndx = i;
			t->name = tab_names[k].name;
			t->addr = es->secaddr[i];
			t->size = sh->sh_size;
			t->align = sh->sh_addralign;
			t->entsize = sh->sh_entsize;
			if (t->size > UINT64_MAX - t->addr)
				return es_err(EINVAL,
					      "section %s [%zu] at address 0x%llx size 0x%llx "
					      "wraps around the address space",
					      name, i, (unsigned long long)t->addr,
					      (unsigned long long)t->size);
			/* Copied whole below: refuse a size no table of ES_MAX_ENTRIES has. */
			ent = t->kind == ES_TAB_PTRS	   ? 8
			      : t->kind == ES_TAB_EXITS	   ? 16
			      : t->kind == ES_TAB_SECTIONS ? 24
			      : t->kind == ES_TAB_CS	   ? 32
							   : 12; /* 2016 triples of 4-byte words */
			if (t->size / ent > ES_MAX_ENTRIES) {
				char want[128];

				snprintf(want, sizeof(want),
					 "expected a table of at most %u entries of %u bytes",
					 ES_MAX_ENTRIES, ent);
				return too_big(es, E2BIG, i, sh, want);
			}
			t->data = malloc(t->size ? t->size : 1);
			if (!t->data)
				return es_err(ENOMEM, "out of memory for section %s [%zu]", name,
					      i);
			memcpy(t->data, es->image + sh->sh_offset, t->size);
		}
		if (!pass) {
			es->tabs = calloc(n ? n : 1, sizeof(*es->tabs));
			es->tab_by_addr = calloc(n ? n : 1, sizeof(*es->tab_by_addr));
			es->tab_of = calloc(es->shnum ? es->shnum : 1, sizeof(*es->tab_of));
			if (!es->tabs || !es->tab_by_addr || !es->tab_of)
				return es_err(ENOMEM, "out of memory for %zu tables", n);
		}
	}
	for (size_t i = 0; i < es->ntabs; i++) {
		es->tab_of[es->tabs[i].ndx] = &es->tabs[i];
		if (es->tabs[i].size)
			es->tab_by_addr[es->ntab_by_addr++] = &es->tabs[i];
	}
	es_qsort(es->tab_by_addr, es->ntab_by_addr, sizeof(*es->tab_by_addr), cmp_tab);
	return 0;
}

/* Tables do not overlap in a sane file; in another, a lookup may miss but never strays. */
struct es_tab *es_tab_at(const struct elfscan *es, uint64_t addr)
{
	size_t lo = 0, hi = es->ntab_by_addr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (es->tab_by_addr[mid]->addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr - es->tab_by_addr[lo - 1]->addr >= es->tab_by_addr[lo - 1]->size)
		return NULL;
	return es->tab_by_addr[lo - 1];
}

/* The lowest table address above addr, UINT64_MAX when none. */
static uint64_t next_tab_addr(const struct elfscan *es, uint64_t addr)
{
	size_t lo = 0, hi = es->ntab_by_addr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (es->tab_by_addr[mid]->addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < es->ntab_by_addr ? es->tab_by_addr[lo]->addr : UINT64_MAX;
}

static void set_arch_name(struct elfscan *es)
{
	uint16_t m = es->ehdr.e_machine;
	bool is64 = es->wordsz == 8;
	const char *name = es_machine_name(m);

	if (m == EM_PPC64 && !es->big_endian)
		name = "ppc64le";
	else if (m == EM_RISCV)
		name = is64 ? "riscv64" : "riscv32";
	else if (m == EM_S390)
		name = is64 ? "s390x" : "s390";
	else if (m == EM_LOONGARCH)
		name = is64 ? "loongarch64" : "loongarch32";
	else if (m == EM_MIPS)
		name = is64 ? (es->big_endian ? "mips64" : "mips64el")
			    : (es->big_endian ? "mips" : "mipsel");
	if (name)
		snprintf(es->arch_buf, sizeof(es->arch_buf), "%s", name);
	else
		snprintf(es->arch_buf, sizeof(es->arch_buf), "EM_%u", m);
}

static int es_load_image(struct elfscan *es)
{
	int err;

	err = check_header(es);
	if (err)
		return err;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return es_err(EINVAL, "libelf is unusable: %s", elf_errmsg(-1));
	/* libelf only reads the image; the cast drops const for its prototype. */
	es->elf = elf_memory((char *)es->image, es->size);
	if (!es->elf || !gelf_getehdr(es->elf, &es->ehdr))
		return es_err(EINVAL, "libelf cannot read the file: %s", elf_errmsg(-1));
	set_arch_name(es);

	err = load_sections(es);
	if (!err)
		err = load_segments(es);
	if (err)
		return err;
	read_dynamic(es);
	err = find_build_id(es);
	if (!err)
		err = build_regions(es);
	if (!err)
		err = collect_tables(es);
	if (!err)
		err = es_relocate(es);
	if (!err)
		err = es_decode(es);
	if (!err)
		err = es_index(es);
	return err;
}

static struct elfscan *es_new(const char *path, const struct elfscan_opts *opts, int *err)
{
	const char *strs[3];
	struct elfscan *es;

	if (opts && opts->sz < sizeof(opts->sz)) {
		*err = es_err(EINVAL, "elfscan_opts.sz is %zu (expected %zu)", opts->sz,
			      sizeof(*opts));
		return NULL;
	}
	es = calloc(1, sizeof(*es));
	if (!es)
		goto nomem;
	es->path = strdup(path);
	if (!es->path)
		goto nomem;
	if (opts)
		memcpy(&es->opts, opts, opts->sz < sizeof(*opts) ? opts->sz : sizeof(*opts));
	es->opts.sz = sizeof(es->opts);
	/* The strings become the library's own copies; until then none is freed. */
	strs[0] = es->opts.debug_dirs;
	strs[1] = es->opts.sysroot;
	strs[2] = es->opts.sysroot_path;
	es->opts.debug_dirs = es->opts.sysroot = es->opts.sysroot_path = NULL;
	if ((strs[0] && !(es->opts.debug_dirs = strdup(strs[0]))) ||
	    (strs[1] && !(es->opts.sysroot = strdup(strs[1]))) ||
	    (strs[2] && !(es->opts.sysroot_path = strdup(strs[2]))))
		goto nomem;
	return es;
nomem:
	elfscan_close(es);
	*err = es_err(ENOMEM, "out of memory");
	return NULL;
}

int elfscan_open_mem(const void *buf, size_t len, const struct elfscan_opts *opts,
		     struct elfscan **res)
{
	struct elfscan *es;
	int err = 0;

	if (!res)
		return es_err(EINVAL, "no result pointer");
	*res = NULL;
	if (!buf && len)
		return es_err(EINVAL, "NULL buffer of %zu bytes", len);
	es = es_new("<memory>", opts, &err);
	if (!es)
		return err;
	/* libelf writes into the image it reads (libdw decompressing a section rewrites its
	 * header), so it gets a private copy, never the caller's const bytes. */
	if (len) {
		es->copy = malloc(len);
		if (!es->copy) {
			elfscan_close(es);
			return es_err(ENOMEM, "out of memory for a copy of %zu bytes", len);
		}
		memcpy(es->copy, buf, len);
	}
	es->image = es->copy;
	es->size = len;
	err = es_load_image(es);
	if (err) {
		elfscan_close(es);
		return err;
	}
	*res = es;
	return 0;
}

/*
 * Small files are read into a heap copy rather than mapped: unmapping a file mapping costs a
 * TLB flush, which dominates scanning a directory of mostly small libraries.
 */
#define ES_READ_MAX (256 * 1024)

static int read_small(struct elfscan *es, int fd, size_t size)
{
	size_t done = 0;
	ssize_t n;

	es->copy = malloc(size);
	if (!es->copy)
		return es_err(ENOMEM, "out of memory for %zu bytes", size);
	while (done < size) {
		n = pread(fd, es->copy + done, size - done, done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			n = errno;
			return es_err(n, "cannot read: %s", strerror(n));
		}
		if (n == 0)
			return es_err(EIO, "file shrank to %zu bytes while reading (expected %zu)",
				      done, size);
		done += n;
	}
	es->image = es->copy;
	es->size = size;
	return 0;
}

static bool pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		done += (size_t)n;
	}
	return true;
}

/* end = max(end, off + len), false when that passes size. */
static bool reach(uint64_t *end, uint64_t off, uint64_t len, uint64_t size)
{
	if (off > size || size - off < len)
		return false;
	if (off + len > *end)
		*end = off + len;
	return true;
}

/* The largest header table read here (bigger ones are read whole, then refused or not). */
#define ES_TABLE_MAX (64u << 20)

/*
 * How much of a file of size bytes its headers refer to: the ELF header, the program and
 * section header tables, and the file bytes of every segment and section. Nothing past
 * that is ever read, so a file padded far beyond its contents (truncate -s 100G) costs no
 * more than the file without padding. Whatever cannot be sized this way (not ELF, headers
 * that point past the end, unreadable) gives size: the checks of check_header() and
 * load_sections() then report it against the real size.
 */
static uint64_t referenced_size(int fd, uint64_t size)
{
	unsigned char h[sizeof(Elf64_Ehdr)], *t = NULL;
	struct elfscan es = {0}; /* for es_load()'s byte order */
	uint64_t end, phoff, shoff, phnum, shnum;
	size_t ehsz, phsz, shsz, entsz;
	bool is64;

	if (size < sizeof(h) || !pread_all(fd, h, sizeof(h), 0) || memcmp(h, ELFMAG, SELFMAG) ||
	    (h[EI_CLASS] != ELFCLASS32 && h[EI_CLASS] != ELFCLASS64) ||
	    (h[EI_DATA] != ELFDATA2LSB && h[EI_DATA] != ELFDATA2MSB))
		return size;
	es.big_endian = h[EI_DATA] == ELFDATA2MSB;
	is64 = h[EI_CLASS] == ELFCLASS64;
	ehsz = is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	phsz = is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	shsz = is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	phoff = es_load(&es, h + (is64 ? 32 : 28), is64 ? 8 : 4);
	shoff = es_load(&es, h + (is64 ? 40 : 32), is64 ? 8 : 4);
	phnum = es_load(&es, h + (is64 ? 56 : 44), 2);
	shnum = es_load(&es, h + (is64 ? 60 : 48), 2);
	if (es_load(&es, h + (is64 ? 54 : 42), 2) != phsz && phnum)
		return size;
	if (es_load(&es, h + (is64 ? 58 : 46), 2) != shsz && shoff)
		return size;
	end = ehsz;
	if (shoff) {
		unsigned char s0[sizeof(Elf64_Shdr)];

		if (!reach(&end, shoff, shsz, size) || !pread_all(fd, s0, shsz, shoff))
			return size;
		if (!shnum)
			shnum = es_load(&es, s0 + (is64 ? 32 : 20), is64 ? 8 : 4);
		if (phnum == PN_XNUM)
			phnum = es_load(&es, s0 + (is64 ? 44 : 28), 4);
	}
	for (int pass = 0; pass < 2; pass++) {
		uint64_t off = pass ? shoff : phoff, num = pass ? shnum : phnum;

		entsz = pass ? shsz : phsz;
		if (!num || (pass && !shoff))
			continue;
		if (num > ES_TABLE_MAX / entsz || !reach(&end, off, num * entsz, size))
			return size;
		t = malloc(num * entsz);
		if (!t || !pread_all(fd, t, num * entsz, off))
			goto whole;
		for (uint64_t i = 0; i < num; i++) {
			const unsigned char *e = t + i * entsz;
			uint64_t o, n;

			if (!pass) { /* p_offset, p_filesz */
				o = es_load(&es, e + (is64 ? 8 : 4), is64 ? 8 : 4);
				n = es_load(&es, e + (is64 ? 32 : 16), is64 ? 8 : 4);
			} else if (!i || es_load(&es, e + 4, 4) == SHT_NOBITS) {
				continue;
			} else { /* sh_offset, sh_size */
				o = es_load(&es, e + (is64 ? 24 : 16), is64 ? 8 : 4);
				n = es_load(&es, e + (is64 ? 32 : 20), is64 ? 8 : 4);
			}
			if (!reach(&end, o, n, size))
				goto whole;
		}
		free(t);
		t = NULL;
	}
	return end;
whole:
	free(t);
	return size;
}

int elfscan_open(const char *path, const struct elfscan_opts *opts, struct elfscan **res)
{
	struct elfscan *es = NULL;
	struct stat st;
	size_t size;
	void *map;
	int fd, err = 0;

	if (!res || !path)
		return es_err(EINVAL, "elfscan_open: no path or no result pointer");
	*res = NULL;
	/* O_NONBLOCK: a FIFO given as a path must not hang the open; fstat rejects it. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		err = errno;
		return es_err(err, "cannot open: %s", strerror(err));
	}
	if (fstat(fd, &st)) {
		err = errno;
		err = es_err(err, "cannot stat: %s", strerror(err));
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		err = es_err(EISDIR, "is a directory, not an ELF file");
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		err = es_err(EINVAL, "not a regular file");
		goto out;
	}
	if (st.st_size == 0) {
		err = es_err(EINVAL, "empty file");
		goto out;
	}
	if ((uint64_t)st.st_size > SIZE_MAX) {
		err = es_err(EFBIG, "file too large to map (%lld bytes)", (long long)st.st_size);
		goto out;
	}
	es = es_new(path, opts, &err);
	if (!es)
		goto out;
	size = referenced_size(fd, (uint64_t)st.st_size);
	if (size <= ES_READ_MAX) {
		err = read_small(es, fd, size);
		goto load;
	}
	/* Writable but private: libelf may write into the image it reads (libdw
	 * decompressing a section rewrites its header); the file never changes. No swap is
	 * reserved for it: only the pages written to, if any, become private. */
	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_NORESERVE, fd, 0);
	if (map == MAP_FAILED) {
		err = errno;
		err = es_err(err, "cannot map %zu bytes: %s", size, strerror(err));
		goto out;
	}
	es->image = map;
	es->size = size;
	es->unmap = true;
	es->st = st;
load:
	if (!err)
		err = es_load_image(es);
out:
	close(fd);
	if (err) {
		elfscan_close(es);
		return err;
	}
	*res = es;
	return 0;
}

void elfscan_close(struct elfscan *es)
{
	if (!es)
		return;
	es_symtab_free(es->syms);
	es_dwarf_free(es->dw);
	if (es->elf)
		elf_end(es->elf);
	if (es->unmap)
		munmap((void *)es->image, es->size);
	free(es->copy);
	for (size_t i = 0; i < es->ntabs; i++)
		free(es->tabs[i].data);
	free(es->tabs);
	free(es->tab_by_addr);
	free(es->tab_of);
	free(es->regions);
	free(es->exec);
	free(es->shdrs);
	free(es->secaddr);
	free(es->segs);
	free(es->cs);
	free(es->maxend);
	free(es->sites);
	free(es->exits);
	free(es->build_id);
	free((char *)es->opts.debug_dirs);
	free((char *)es->opts.sysroot);
	free((char *)es->opts.sysroot_path);
	free(es->path);
	free(es);
}

/* Copy loaded bytes: the relocated table copies first, else the file's bytes. */
int es_read(const struct elfscan *es, uint64_t addr, void *buf, size_t len)
{
	unsigned char *out = buf;

	while (len) {
		const struct es_tab *t = es_tab_at(es, addr);
		const unsigned char *src;
		uint64_t n = len;

		if (t) {
			src = t->data + (addr - t->addr);
			if (n > t->size - (addr - t->addr))
				n = t->size - (addr - t->addr);
		} else {
			const struct es_region *r = find_range(es->regions, es->nregions, addr);
			uint64_t next_tab = next_tab_addr(es, addr);

			if (!r)
				return -EFAULT;
			src = r->data + (addr - r->addr);
			if (n > r->size - (addr - r->addr))
				n = r->size - (addr - r->addr);
			if (n > next_tab - addr)
				n = next_tab - addr;
		}
		memcpy(out, src, n);
		out += n;
		len -= n;
		if (len && addr > UINT64_MAX - n)
			return -EFAULT;
		addr += n;
	}
	return 0;
}

int elfscan_read(const struct elfscan *es, uint64_t addr, void *buf, size_t len)
{
	if (es_read(es, addr, buf, len))
		return es_err(EFAULT, "0x%llx..0x%llx is not all in the file's loaded bytes",
			      (unsigned long long)addr, (unsigned long long)(addr + len));
	return 0;
}

int elfscan_offset_to_addr(const struct elfscan *es, uint64_t off, uint64_t *addr)
{
	for (size_t i = 0; i < es->nsegs; i++) {
		const struct elfscan_segment *s = &es->segs[i];

		if (off >= s->offset && off - s->offset < s->filesz) {
			*addr = s->vaddr + (off - s->offset);
			return 0;
		}
	}
	if (es->ehdr.e_type == ET_REL) {
		for (size_t i = 1; i < es->shnum; i++) {
			const GElf_Shdr *sh = &es->shdrs[i];

			if ((sh->sh_flags & SHF_ALLOC) && sh->sh_type != SHT_NOBITS &&
			    off >= sh->sh_offset && off - sh->sh_offset < sh->sh_size) {
				*addr = es->secaddr[i] + (off - sh->sh_offset);
				return 0;
			}
		}
	}
	return es_err(ENOENT, "file offset 0x%llx is not mapped by any loadable segment",
		      (unsigned long long)off);
}

const char *elfscan_path(const struct elfscan *es)
{
	return es->path;
}

uint16_t elfscan_machine(const struct elfscan *es)
{
	return es->ehdr.e_machine;
}

const char *elfscan_arch_name(const struct elfscan *es)
{
	return es->arch_buf;
}

int elfscan_class(const struct elfscan *es)
{
	return es->wordsz * 8;
}

bool elfscan_big_endian(const struct elfscan *es)
{
	return es->big_endian;
}

uint16_t elfscan_type(const struct elfscan *es)
{
	return es->ehdr.e_type;
}

bool elfscan_is_pie(const struct elfscan *es)
{
	return es->ehdr.e_type == ET_DYN && ((es->dt_flags_1 & DF_1_PIE) || es->has_interp);
}

bool elfscan_has_interp(const struct elfscan *es)
{
	return es->has_interp;
}

uint32_t elfscan_sources(const struct elfscan *es)
{
	return es->sources;
}

const char *elfscan_build_id(const struct elfscan *es)
{
	return es->build_id;
}

size_t elfscan_nsegments(const struct elfscan *es)
{
	return es->nsegs;
}

const struct elfscan_segment *elfscan_segment(const struct elfscan *es, size_t i)
{
	return i < es->nsegs ? &es->segs[i] : NULL;
}
