// SPDX-License-Identifier: GPL-2.0-only
/*
 * mkbad: write malformed ELF files, each damaged in one way, made from good fixtures.
 *
 *	mkbad FIXDIR OUTDIR
 *
 * FIXDIR holds the x86_64 fixtures cs-pie, cs-pie-dwarf, cs.o, cs-static and cs-relr (ELF64 little
 * endian); FIXDIR/../i386/cs-pie (ELF32) and FIXDIR/../s390x/cs-pie (big endian) are used too.
 * Files named bad-* must be refused by a scanner (one error, exit 2); files named ok-* are
 * odd but valid and must scan. Every damage hits data a scanner has to read: the headers,
 * the rseq tables, or the relocations that give the tables their values.
 */
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct img {
	unsigned char *b;
	size_t len;
};

static const char *outdir;
static int nwritten;

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("mkbad: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

static struct img load_raw(const char *dir, const char *name)
{
	char path[4096];
	struct img im;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "rb");
	if (!f)
		die("%s: %s", path, strerror(errno));
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < (long)sizeof(Elf64_Ehdr) ||
	    fseek(f, 0, SEEK_SET))
		die("%s: too small or unreadable", path);
	im.len = (size_t)n;
	im.b = malloc(im.len);
	if (!im.b || fread(im.b, 1, im.len, f) != im.len)
		die("%s: read failed", path);
	fclose(f);
	if (memcmp(im.b, ELFMAG, SELFMAG))
		die("%s: not an ELF file", path);
	return im;
}

static struct img load(const char *dir, const char *name)
{
	struct img im = load_raw(dir, name);

	if (im.b[EI_CLASS] != ELFCLASS64 || im.b[EI_DATA] != ELFDATA2LSB)
		die("%s/%s: expected an ELF64 little-endian file", dir, name);
	return im;
}

static struct img dup_img(const struct img *src)
{
	struct img im = {malloc(src->len), src->len};

	if (!im.b)
		die("out of memory");
	memcpy(im.b, src->b, src->len);
	return im;
}

static void emit(struct img *im, size_t len, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", outdir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(im->b, 1, len, f) != len || fclose(f))
		die("%s: write failed", path);
	free(im->b);
	im->b = NULL;
	nwritten++;
}

static Elf64_Ehdr *ehdr(struct img *im)
{
	return (Elf64_Ehdr *)im->b;
}

static Elf64_Shdr *shdr(struct img *im, unsigned int i)
{
	Elf64_Ehdr *e = ehdr(im);

	if (i >= e->e_shnum || e->e_shoff + (uint64_t)(i + 1) * sizeof(Elf64_Shdr) > im->len)
		die("section %u out of range", i);
	return (Elf64_Shdr *)(im->b + e->e_shoff) + i;
}

static Elf64_Phdr *phdr(struct img *im, unsigned int i)
{
	return (Elf64_Phdr *)(im->b + ehdr(im)->e_phoff) + i;
}

static unsigned int scn_index(struct img *im, const char *name)
{
	Elf64_Ehdr *e = ehdr(im);
	Elf64_Shdr *strs = shdr(im, e->e_shstrndx);
	unsigned int i;

	for (i = 1; i < e->e_shnum; i++)
		if (!strcmp((char *)im->b + strs->sh_offset + shdr(im, i)->sh_name, name))
			return i;
	die("no section %s", name);
	return 0;
}

static Elf64_Shdr *scn(struct img *im, const char *name)
{
	return shdr(im, scn_index(im, name));
}

/* File bytes at virtual address addr (through the PT_LOAD that maps it). */
static unsigned char *at(struct img *im, uint64_t addr)
{
	unsigned int i;

	for (i = 0; i < ehdr(im)->e_phnum; i++) {
		Elf64_Phdr *p = phdr(im, i);

		if (p->p_type == PT_LOAD && addr >= p->p_vaddr && addr < p->p_vaddr + p->p_filesz)
			return im->b + p->p_offset + (addr - p->p_vaddr);
	}
	die("address %#llx not in the file", (unsigned long long)addr);
	return NULL;
}

static Elf64_Dyn *dyn(struct img *im, Elf64_Sxword tag)
{
	Elf64_Shdr *d = scn(im, ".dynamic");
	Elf64_Dyn *v = (Elf64_Dyn *)(im->b + d->sh_offset);
	size_t i;

	for (i = 0; i < d->sh_size / sizeof(*v) && v[i].d_tag != DT_NULL; i++)
		if (v[i].d_tag == tag)
			return &v[i];
	die("no dynamic tag %lld", (long long)tag);
	return NULL;
}

/* The dynamic relocation that applies at addr. */
static Elf64_Rela *dynrel_at(struct img *im, uint64_t addr)
{
	Elf64_Shdr *r = scn(im, ".rela.dyn");
	Elf64_Rela *v = (Elf64_Rela *)(im->b + r->sh_offset);
	size_t i;

	for (i = 0; i < r->sh_size / sizeof(*v); i++)
		if (v[i].r_offset == addr)
			return &v[i];
	die("no dynamic relocation at %#llx", (unsigned long long)addr);
	return NULL;
}

/* Point the PIE's first pointer-array slot at target: in place and in its relocation. */
static void set_slot(struct img *im, uint64_t target)
{
	uint64_t slot = scn(im, "__rseq_cs_ptr_array")->sh_addr;

	memcpy(at(im, slot), &target, 8);
	dynrel_at(im, slot)->r_addend = (Elf64_Sxword)target;
}

static void pie_cases(const struct img *pie)
{
	struct img im;
	Elf64_Ehdr *e = ehdr((struct img *)pie);
	size_t n;

	/* Truncated inside each header and inside the data of the tables. */
	im = dup_img(pie);
	emit(&im, 10, "bad-trunc-ident");
	im = dup_img(pie);
	emit(&im, sizeof(Elf64_Ehdr) - 8, "bad-trunc-ehdr");
	im = dup_img(pie);
	emit(&im, e->e_phoff + e->e_phentsize + 20, "bad-trunc-phdrs");
	im = dup_img(pie);
	emit(&im, e->e_shoff + 3 * e->e_shentsize + 5, "bad-trunc-shdrs");
	/* Without section headers the program headers are all there is to read. */
	im = dup_img(pie);
	ehdr(&im)->e_shoff = 0;
	ehdr(&im)->e_shnum = 0;
	ehdr(&im)->e_shstrndx = 0;
	emit(&im, e->e_phoff + 2 * e->e_phentsize + 20, "bad-trunc-phdrs-no-shdrs");
	im = dup_img(pie);
	n = scn(&im, "__rseq_cs")->sh_offset + 40;
	emit(&im, n, "bad-trunc-rseq-cs");
	im = dup_img(pie);
	n = scn(&im, ".rela.dyn")->sh_offset + 100;
	emit(&im, n, "bad-trunc-rela-dyn");

	/* Section and segment data past the end of the file. */
	im = dup_img(pie);
	scn(&im, "__rseq_cs")->sh_offset = im.len + 4096;
	emit(&im, im.len, "bad-rseq-cs-past-eof");
	im = dup_img(pie);
	scn(&im, "__rseq_cs_ptr_array")->sh_size = im.len;
	emit(&im, im.len, "bad-ptr-array-past-eof");
	im = dup_img(pie);
	scn(&im, "__rseq_cs")->sh_offset = 0xffffffffffffff00ull;
	emit(&im, im.len, "bad-rseq-cs-offset-wraps");
	im = dup_img(pie);
	for (n = 0; n < ehdr(&im)->e_phnum; n++) {
		Elf64_Phdr *p = phdr(&im, n);

		if (p->p_type == PT_LOAD && (p->p_flags & PF_W))
			p->p_offset = im.len + 0x10000;
	}
	emit(&im, im.len, "bad-data-segment-past-eof");
	im = dup_img(pie);
	ehdr(&im)->e_shoff = im.len + 64;
	emit(&im, im.len, "bad-shoff-past-eof");

	/* Absurd counts and sizes. */
	im = dup_img(pie);
	ehdr(&im)->e_shnum = 0xfff0;
	emit(&im, im.len, "bad-shnum-absurd");
	im = dup_img(pie);
	ehdr(&im)->e_phnum = 0xfff0;
	emit(&im, im.len, "bad-phnum-absurd");
	im = dup_img(pie);
	ehdr(&im)->e_shentsize = 12;
	emit(&im, im.len, "bad-shentsize");
	im = dup_img(pie);
	ehdr(&im)->e_phentsize = 20;
	emit(&im, im.len, "bad-phentsize");
	im = dup_img(pie);
	scn(&im, "__rseq_cs")->sh_size = 1ull << 60;
	emit(&im, im.len, "bad-rseq-cs-size-absurd");
	im = dup_img(pie);
	scn(&im, ".rela.dyn")->sh_size = 1ull << 62;
	dyn(&im, DT_RELASZ)->d_un.d_val = 1ull << 62;
	emit(&im, im.len, "bad-rela-dyn-size-absurd");

	/* Lying entry size: relocations of 7 bytes. */
	im = dup_img(pie);
	scn(&im, ".rela.dyn")->sh_entsize = 7;
	dyn(&im, DT_RELAENT)->d_un.d_val = 7;
	emit(&im, im.len, "bad-rela-dyn-entsize");

	/* Header identification. */
	im = dup_img(pie);
	im.b[EI_CLASS] = ELFCLASSNONE;
	emit(&im, im.len, "bad-class-none");
	im = dup_img(pie);
	im.b[EI_CLASS] = ELFCLASS32;
	emit(&im, im.len, "bad-64bit-file-claims-32bit");
	im = dup_img(pie);
	im.b[EI_DATA] = 3;
	emit(&im, im.len, "bad-ei-data");
	im = dup_img(pie);
	im.b[EI_VERSION] = 9;
	ehdr(&im)->e_version = 9;
	emit(&im, im.len, "bad-version");

	/* Section names. */
	im = dup_img(pie);
	ehdr(&im)->e_shstrndx = ehdr(&im)->e_shnum + 40;
	emit(&im, im.len, "bad-shstrndx");
	im = dup_img(pie);
	ehdr(&im)->e_shstrndx = scn_index(&im, "__rseq_cs");
	emit(&im, im.len, "bad-shstrndx-not-strtab");
	im = dup_img(pie);
	for (n = 1; n < ehdr(&im)->e_shnum; n++)
		shdr(&im, n)->sh_name = 0x7ffffff0;
	emit(&im, im.len, "bad-section-names-out-of-range");

	/* Overlapping and looping structures. */
	im = dup_img(pie);
	ehdr(&im)->e_shoff = ehdr(&im)->e_phoff;
	emit(&im, im.len, "bad-shdrs-overlap-phdrs");

	/* The tables themselves. */
	im = dup_img(pie);
	scn(&im, "__rseq_cs")->sh_size = 0;
	emit(&im, im.len, "bad-rseq-cs-empty");
	im = dup_img(pie);
	scn(&im, "__rseq_cs")->sh_type = SHT_NOBITS;
	emit(&im, im.len, "bad-rseq-cs-nobits");
	im = dup_img(pie);
	scn(&im, "__rseq_cs_ptr_array")->sh_size -= 3;
	emit(&im, im.len, "bad-ptr-array-odd-size");
	im = dup_img(pie);
	set_slot(&im, scn(&im, ".text")->sh_addr + 16);
	emit(&im, im.len, "bad-slot-outside-rseq-cs");
	im = dup_img(pie);
	set_slot(&im, 0x7fff0000);
	emit(&im, im.len, "bad-slot-outside-segments");
	im = dup_img(pie);
	scn(&im, "__rseq_exit_point_array")->sh_size -= 5;
	emit(&im, im.len, "bad-exit-array-odd-size");
}

/* DT_RELR packed relocations (lld output). */
static void relr_cases(const struct img *relr)
{
	struct img im;

	im = dup_img(relr);
	scn(&im, ".relr.dyn")->sh_size = 1ull << 61;
	dyn(&im, DT_RELRSZ)->d_un.d_val = 1ull << 61;
	emit(&im, im.len, "bad-relr-size-absurd");
	im = dup_img(relr);
	scn(&im, ".relr.dyn")->sh_entsize = 3;
	dyn(&im, DT_RELRENT)->d_un.d_val = 3;
	emit(&im, im.len, "bad-relr-entsize");
}

/* ELF32 (i386, REL relocations): the 32-bit paths of the same checks. */
static Elf32_Shdr *scn32(struct img *im, const char *name)
{
	Elf32_Ehdr *e = (Elf32_Ehdr *)im->b;
	Elf32_Shdr *sh = (Elf32_Shdr *)(im->b + e->e_shoff);
	unsigned int i;

	for (i = 1; i < e->e_shnum; i++)
		if (!strcmp((char *)im->b + sh[e->e_shstrndx].sh_offset + sh[i].sh_name, name))
			return &sh[i];
	die("no section %s in the 32-bit file", name);
	return NULL;
}

static void elf32_cases(const struct img *pie32)
{
	struct img im;

	im = dup_img(pie32);
	((Elf32_Ehdr *)im.b)->e_shnum = 0xfff0;
	emit(&im, im.len, "bad-elf32-shnum-absurd");
	im = dup_img(pie32);
	scn32(&im, "__rseq_cs")->sh_size = 0xfffffff0;
	emit(&im, im.len, "bad-elf32-rseq-cs-size-absurd");
	im = dup_img(pie32);
	scn32(&im, ".rel.dyn")->sh_entsize = 5;
	emit(&im, im.len, "bad-elf32-rel-dyn-entsize");
	im = dup_img(pie32);
	scn32(&im, "__rseq_cs_ptr_array")->sh_size -= 3;
	emit(&im, im.len, "bad-elf32-ptr-array-odd-size");
}

/* ELF64 big endian (s390x): bounds checks on byte-swapped fields. */
static void be64_cases(const struct img *be)
{
	const Elf64_Ehdr *e = (const Elf64_Ehdr *)be->b;
	uint64_t shoff = __builtin_bswap64(e->e_shoff);
	unsigned int shnum = __builtin_bswap16(e->e_shnum);
	unsigned int strndx = __builtin_bswap16(e->e_shstrndx);
	struct img im;
	unsigned int i;

	im = dup_img(be);
	((Elf64_Ehdr *)im.b)->e_phnum = __builtin_bswap16(0xfff0);
	emit(&im, im.len, "bad-be64-phnum-absurd");
	im = dup_img(be);
	for (i = 1; i < shnum; i++) {
		Elf64_Shdr *sh = (Elf64_Shdr *)(im.b + shoff) + i;
		Elf64_Shdr *str = (Elf64_Shdr *)(im.b + shoff) + strndx;
		const char *name = (char *)im.b + __builtin_bswap64(str->sh_offset) +
				   __builtin_bswap32(sh->sh_name);

		if (!strcmp(name, "__rseq_cs"))
			sh->sh_size = __builtin_bswap64(1ull << 60);
	}
	emit(&im, im.len, "bad-be64-rseq-cs-size-absurd");
}

/* Rename symbol old of .symtab in place to new (same length): names are file bytes too. */
static void rename_sym(struct img *im, const char *old, const char *new)
{
	Elf64_Shdr *st = scn(im, ".symtab"), *str = shdr(im, st->sh_link);
	Elf64_Sym *v = (Elf64_Sym *)(im->b + st->sh_offset);
	size_t i;

	if (strlen(old) != strlen(new))
		die("rename %s: the new name must have its length", old);
	for (i = 1; i < st->sh_size / sizeof(*v); i++) {
		char *name = (char *)im->b + str->sh_offset + v[i].st_name;

		if (!strcmp(name, old)) {
			memcpy(name, new, strlen(new));
			return;
		}
	}
	die("no symbol %s", old);
}

/* Section headers that a reader must not trust: the name table, overlapping sections. */
static void header_cases(const struct img *pie)
{
	struct img im;
	unsigned int i, cs;

	/* Extended numbering with no real index in section 0. */
	im = dup_img(pie);
	ehdr(&im)->e_shstrndx = SHN_XINDEX;
	shdr(&im, 0)->sh_link = 0;
	emit(&im, im.len, "bad-shstrndx-xindex-zero");
	im = dup_img(pie);
	ehdr(&im)->e_shstrndx = SHN_XINDEX;
	shdr(&im, 0)->sh_link = ehdr(&im)->e_shnum + 7;
	emit(&im, im.len, "bad-shstrndx-xindex-out-of-range");
	/* Every section's bytes are those of __rseq_cs. */
	im = dup_img(pie);
	cs = scn_index(&im, "__rseq_cs");
	for (i = 1; i < ehdr(&im)->e_shnum; i++)
		if (i != cs && shdr(&im, i)->sh_type != SHT_NOBITS)
			shdr(&im, i)->sh_offset = shdr(&im, cs)->sh_offset;
	emit(&im, im.len, "bad-sections-overlap-rseq-cs");
	/* Only the name table moved onto the descriptors. */
	im = dup_img(pie);
	shdr(&im, ehdr(&im)->e_shstrndx)->sh_offset = scn(&im, "__rseq_cs")->sh_offset;
	emit(&im, im.len, "bad-shstrtab-overlaps-rseq-cs");
	/* The pointer array's bytes are the descriptors' last bytes. */
	im = dup_img(pie);
	scn(&im, "__rseq_cs_ptr_array")->sh_offset = scn(&im, "__rseq_cs")->sh_offset + 8;
	emit(&im, im.len, "bad-ptr-array-overlaps-rseq-cs");
}

/* Symbol tables and DWARF of odd shapes: the file is still readable and must scan. */
static void symbol_cases(const struct img *pie, const struct img *dw)
{
	static const char *const dbg[] = {".debug_info", ".debug_line", ".debug_abbrev",
					  ".debug_str", ".debug_aranges"};
	char name[64];
	struct img im;
	size_t i;

	im = dup_img(pie);
	scn(&im, ".symtab")->sh_size = 0;
	emit(&im, im.len, "ok-symtab-empty");
	im = dup_img(pie);
	scn(&im, ".symtab")->sh_size = sizeof(Elf64_Sym);
	emit(&im, im.len, "ok-symtab-null-symbol-only");
	im = dup_img(pie);
	scn(&im, ".symtab")->sh_size -= 5;
	emit(&im, im.len, "ok-symtab-odd-size");
	/* Oversized to the end of the file: its bytes are other sections' too. */
	im = dup_img(pie);
	scn(&im, ".symtab")->sh_size = im.len - scn(&im, ".symtab")->sh_offset;
	emit(&im, im.len, "bad-symtab-oversized");
	im = dup_img(pie);
	scn(&im, ".symtab")->sh_entsize = 0;
	emit(&im, im.len, "ok-symtab-entsize-zero");
	im = dup_img(pie);
	scn(&im, ".symtab")->sh_link = ehdr(&im)->e_shnum + 3;
	emit(&im, im.len, "ok-symtab-strtab-out-of-range");
	im = dup_img(pie);
	scn(&im, ".symtab")->sh_type = SHT_NOBITS;
	emit(&im, im.len, "ok-symtab-nobits");
	im = dup_img(pie);
	scn(&im, ".symtab")->sh_size = im.len + 4096;
	emit(&im, im.len, "bad-symtab-past-eof");

	for (i = 0; i < sizeof(dbg) / sizeof(dbg[0]); i++) {
		im = dup_img(dw);
		scn(&im, dbg[i])->sh_size = 0;
		snprintf(name, sizeof(name), "ok-%s-empty", dbg[i] + 1);
		emit(&im, im.len, name);
		im = dup_img(dw);
		scn(&im, dbg[i])->sh_type = SHT_NOBITS;
		snprintf(name, sizeof(name), "ok-%s-nobits", dbg[i] + 1);
		emit(&im, im.len, name);
		im = dup_img(dw);
		scn(&im, dbg[i])->sh_size = scn(&im, dbg[i])->sh_size > 7 ? 7 : 1;
		snprintf(name, sizeof(name), "ok-%s-cut", dbg[i] + 1);
		emit(&im, im.len, name);
		im = dup_img(dw);
		scn(&im, dbg[i])->sh_size = im.len - scn(&im, dbg[i])->sh_offset;
		snprintf(name, sizeof(name), "bad-%s-oversized", dbg[i] + 1);
		emit(&im, im.len, name);
	}

	/* Names a terminal or a JSON parser must not get raw: a newline and an escape
	 * sequence, ill-formed UTF-8 (a bad continuation, a surrogate, C1 CSI) beside a
	 * well-formed emoji, tab, DEL, backslash and a C0 control. */
	im = dup_img(dw);
	rename_sym(&im, "rseq_inc", "r\xff\n\x1b[31m");
	rename_sym(&im, "rseq_cmpxchg", "\xc3(\xed\xa0\x80\xc2\x9b\xf0\x9f\x98\x80x");
	rename_sym(&im, "rseq_tcm",
		   "a\tb\x7f\\c\x01"
		   "d");
	emit(&im, im.len, "ok-hostile-names");
}

static void obj_cases(const struct img *obj)
{
	struct img im;
	Elf64_Rela *r;
	unsigned int i;

	im = dup_img(obj);
	r = (Elf64_Rela *)(im.b + scn(&im, ".rela__rseq_cs")->sh_offset);
	r[1].r_offset = 0x10000;
	emit(&im, im.len, "bad-obj-reloc-offset-outside-section");
	im = dup_img(obj);
	r = (Elf64_Rela *)(im.b + scn(&im, ".rela__rseq_cs")->sh_offset);
	r[0].r_offset = scn(&im, "__rseq_cs")->sh_size - 4;
	emit(&im, im.len, "bad-obj-reloc-straddles-section-end");
	im = dup_img(obj);
	r = (Elf64_Rela *)(im.b + scn(&im, ".rela__rseq_cs")->sh_offset);
	r[0].r_info = ELF64_R_INFO(99999, ELF64_R_TYPE(r[0].r_info));
	emit(&im, im.len, "bad-obj-reloc-symbol-out-of-range");
	im = dup_img(obj);
	r = (Elf64_Rela *)(im.b + scn(&im, ".rela__rseq_cs")->sh_offset);
	r[0].r_info = ELF64_R_INFO(ELF64_R_SYM(r[0].r_info), 0xfe);
	emit(&im, im.len, "bad-obj-reloc-unknown-type");
	im = dup_img(obj);
	scn(&im, ".rela__rseq_cs")->sh_entsize = 7;
	emit(&im, im.len, "bad-obj-rela-entsize");
	im = dup_img(obj);
	i = scn_index(&im, ".rela__rseq_cs");
	shdr(&im, i)->sh_link = i;
	emit(&im, im.len, "bad-obj-rela-links-itself");
	im = dup_img(obj);
	scn(&im, ".rela__rseq_cs")->sh_info = 999;
	emit(&im, im.len, "bad-obj-rela-target-out-of-range");
	im = dup_img(obj);
	scn(&im, ".symtab")->sh_entsize = 5;
	emit(&im, im.len, "bad-obj-symtab-entsize");
	im = dup_img(obj);
	emit(&im, scn(&im, ".rela__rseq_cs")->sh_offset + 30, "bad-obj-trunc-relocs");
}

int main(int argc, char **argv)
{
	struct img pie, obj, stat, relr, pie32, be64, dw, im;
	char dir32[4096], dirbe[4096];

	if (argc != 3) {
		fprintf(stderr, "usage: mkbad FIXDIR OUTDIR\n");
		return 2;
	}
	outdir = argv[2];
	pie = load(argv[1], "cs-pie");
	obj = load(argv[1], "cs.o");
	stat = load(argv[1], "cs-static");
	snprintf(dir32, sizeof(dir32), "%s/../i386", argv[1]);
	pie32 = load_raw(dir32, "cs-pie");
	snprintf(dirbe, sizeof(dirbe), "%s/../s390x", argv[1]);
	be64 = load_raw(dirbe, "cs-pie");
	relr = load(argv[1], "cs-relr");
	dw = load(argv[1], "cs-pie-dwarf");
	if (pie32.b[EI_CLASS] != ELFCLASS32 || pie32.b[EI_DATA] != ELFDATA2LSB ||
	    be64.b[EI_CLASS] != ELFCLASS64 || be64.b[EI_DATA] != ELFDATA2MSB)
		die("expected i386/cs-pie ELF32 LE and s390x/cs-pie ELF64 BE");

	pie_cases(&pie);
	header_cases(&pie);
	symbol_cases(&pie, &dw);
	obj_cases(&obj);
	relr_cases(&relr);
	elf32_cases(&pie32);
	be64_cases(&be64);

	/* A 32-bit file whose identification claims 64 bits, and a cut 32-bit header. */
	im = dup_img(&pie32);
	im.b[EI_CLASS] = ELFCLASS64;
	emit(&im, im.len, "bad-32bit-file-claims-64bit");
	im = dup_img(&pie32);
	emit(&im, sizeof(Elf32_Ehdr) - 10, "bad-trunc-ehdr32");

	/* Not ELF at all. */
	im = dup_img(&pie);
	emit(&im, 0, "bad-empty");
	im = dup_img(&pie);
	memcpy(im.b, "#!/bin/sh\necho this is a script, not an ELF file\n", 50);
	emit(&im, 50, "bad-text-file");
	im = dup_img(&pie);
	memcpy(im.b, "\177ELF", 4);
	emit(&im, 4, "bad-magic-only");

	/* An architecture nobody knows: tables decode, signatures cannot be judged. */
	im = dup_img(&stat);
	ehdr(&im)->e_machine = 32343;
	emit(&im, im.len, "ok-unknown-machine");

	free(pie.b);
	free(obj.b);
	free(stat.b);
	free(pie32.b);
	free(be64.b);
	free(relr.b);
	free(dw.b);
	printf("%d files written to %s\n", nwritten, outdir);
	return 0;
}
