// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Symbolization: the function covering an address from the symbol table (.symtab, else the
 * separate debug file's .symtab, else .dynsym), with DWARF for what the table lacks, and the
 * reverse (a name or FILE:LINE to an address).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "debuginfo.h"
#include "internal.h"

struct es_sym {
	uint64_t addr;
	uint64_t size;
	const char *name;
	size_t shndx;
	uint8_t rank; /* tie-break between aliases: higher wins */
	bool func;    /* STT_FUNC or STT_GNU_IFUNC */
};

struct es_symtab {
	Elf *src;	     /* the file whose table was read (the image or its debug file) */
	struct es_sym *syms; /* sorted by addr, then rank (best first), then name */
	size_t n;
	size_t *sized;	  /* indexes into syms of functions with a size, same order */
	uint64_t *maxend; /* maxend[i] = max end of sized[0..i] */
	size_t nsized;
	uint64_t *allend; /* allend[i] = max end of syms[0..i] (a size-0 symbol ends at addr) */
};

void es_symtab_free(struct es_symtab *st)
{
	if (!st)
		return;
	free(st->syms);
	free(st->sized);
	free(st->maxend);
	free(st->allend);
	free(st);
}

static Elf_Scn *find_section(Elf *elf, GElf_Word type, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		if (gelf_getshdr(scn, shdr) && shdr->sh_type == type)
			return scn;
	}
	return NULL;
}

/* ARM, AArch64 and RISC-V mapping symbols ($a, $d, $t, $x, optionally ".suffix" or an
 * architecture string) and assembler local labels name no function. */
static bool ignored_name(const char *name)
{
	if (!name[0])
		return true;
	if (name[0] == '$' && name[1] && strchr("adtx", name[1]))
		return true;
	return name[0] == '.' && name[1] == 'L';
}

/* Between aliases of one address: GLOBAL, then WEAK, then LOCAL. */
static uint8_t bind_rank(int bind)
{
	if (bind == STB_GLOBAL || bind == STB_GNU_UNIQUE)
		return 3;
	return bind == STB_WEAK ? 2 : 1;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct es_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int get_shdr(Elf *elf, size_t shndx, GElf_Shdr *shdr)
{
	Elf_Scn *scn = elf_getscn(elf, shndx);

	if (!scn || !gelf_getshdr(scn, shdr))
		return -1;
	return 0;
}

/* Address of a symbol's value: section-relative in a .o, absolute otherwise. */
static bool sym_addr(struct elfscan *es, size_t shndx, uint64_t value, uint64_t *addr)
{
	if (es->ehdr.e_type != ET_REL) {
		*addr = value;
		return true;
	}
	if (!es->secaddr || shndx >= es->shnum)
		return false;
	*addr = es->secaddr[shndx] + value;
	return true;
}

static int read_table(struct elfscan *es, struct es_symtab *st, Elf_Scn *scn, GElf_Shdr *shdr)
{
	Elf_Data *data = elf_getdata(scn, NULL), *xdata = NULL;
	size_t count, i, strndx = shdr->sh_link, symndx = elf_ndxscn(scn);
	GElf_Shdr xshdr;
	Elf_Scn *xscn = NULL;

	if (!data || !shdr->sh_entsize)
		return 0;
	count = data->d_size / gelf_fsize(st->src, ELF_T_SYM, 1, EV_CURRENT);
	while ((xscn = elf_nextscn(st->src, xscn))) {
		if (gelf_getshdr(xscn, &xshdr) && xshdr.sh_type == SHT_SYMTAB_SHNDX &&
		    xshdr.sh_link == symndx) {
			xdata = elf_getdata(xscn, NULL);
			break;
		}
	}
	st->syms = calloc(count ? count : 1, sizeof(*st->syms));
	if (!st->syms)
		return es_err(ENOMEM, "out of memory reading %zu symbols", count);

	for (i = 1; i < count; i++) {
		struct es_sym *s = &st->syms[st->n];
		GElf_Word xndx = 0;
		GElf_Shdr sec;
		GElf_Sym sym;
		const char *name;
		int type, bind;
		size_t shndx;

		if (!gelf_getsymshndx(data, xdata, i, &sym, &xndx))
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		bind = GELF_ST_BIND(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
			continue;
		shndx = sym.st_shndx == SHN_XINDEX ? xndx : sym.st_shndx;
		if (shndx == SHN_UNDEF || (shndx >= SHN_LORESERVE && sym.st_shndx != SHN_XINDEX))
			continue;
		if (get_shdr(st->src, shndx, &sec) || !(sec.sh_flags & SHF_ALLOC))
			continue;
		/* An untyped symbol names code only in an executable section. */
		if (type == STT_NOTYPE && !(sec.sh_flags & SHF_EXECINSTR))
			continue;
		name = elf_strptr(st->src, strndx, sym.st_name);
		if (!name || ignored_name(name))
			continue;
		if (es->ehdr.e_machine == EM_ARM && type == STT_FUNC)
			sym.st_value &= ~(GElf_Addr)1; /* the Thumb bit */
		if (!sym_addr(es, shndx, sym.st_value, &s->addr))
			continue;
		s->size = sym.st_size;
		s->name = name;
		s->shndx = shndx;
		s->func = type != STT_NOTYPE;
		s->rank = (s->func ? 8 : 0) + bind_rank(bind);
		st->n++;
	}
	return 0;
}

static int build_index(struct elfscan *es, struct es_symtab *st)
{
	size_t i;

	es_qsort(st->syms, st->n, sizeof(*st->syms), sym_cmp);
	st->sized = calloc(st->n + 1, sizeof(*st->sized));
	st->maxend = calloc(st->n + 1, sizeof(*st->maxend));
	st->allend = calloc(st->n + 1, sizeof(*st->allend));
	if (!st->sized || !st->maxend || !st->allend)
		return es_err(ENOMEM, "out of memory indexing %zu symbols", st->n);
	for (i = 0; i < st->n; i++) {
		const struct es_sym *s = &st->syms[i];
		uint64_t end = s->addr + s->size < s->addr ? UINT64_MAX : s->addr + s->size;

		st->allend[i] = i && st->allend[i - 1] > end ? st->allend[i - 1] : end;
		if (!s->func || !s->size)
			continue;
		st->sized[st->nsized] = i;
		st->maxend[st->nsized] = end;
		if (st->nsized && st->maxend[st->nsized - 1] > end)
			st->maxend[st->nsized] = st->maxend[st->nsized - 1];
		st->nsized++;
	}
	return 0;
}

/* Symbols are read once, on first use: .symtab, else the separate debug file's, else
 * .dynsym. A file with none of them has an empty table. */
static struct es_symtab *symtab_get(struct elfscan *es)
{
	struct es_symtab *st;
	Elf_Scn *scn;
	GElf_Shdr shdr;
	int err;

	if (es->syms)
		return es->syms;
	if (!es->elf) {
		es_err(EINVAL, "no ELF file to read symbols from");
		return NULL;
	}
	st = calloc(1, sizeof(*st));
	if (!st) {
		es_err(ENOMEM, "out of memory");
		return NULL;
	}
	st->src = es->elf;
	scn = find_section(es->elf, SHT_SYMTAB, &shdr);
	if (!scn && es->ehdr.e_type != ET_REL) {
		Elf *dbg = es_debug_elf(es);

		if (dbg && (scn = find_section(dbg, SHT_SYMTAB, &shdr)))
			st->src = dbg;
	}
	if (!scn)
		scn = find_section(es->elf, SHT_DYNSYM, &shdr);
	err = scn ? read_table(es, st, scn, &shdr) : 0;
	if (!err)
		err = build_index(es, st);
	if (err) {
		es_symtab_free(st);
		return NULL;
	}
	es->syms = st;
	return st;
}

/* Index of the last entry at or below addr in syms (through idx when not NULL, sorted by
 * address either way); -1 when none. */
static ssize_t last_at_or_below(const struct es_symtab *st, const size_t *idx, size_t n,
				uint64_t addr)
{
	ssize_t lo = 0, hi = (ssize_t)n - 1, res = -1;

	while (lo <= hi) {
		ssize_t mid = lo + (hi - lo) / 2;

		if (st->syms[idx ? idx[mid] : (size_t)mid].addr <= addr) {
			res = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return res;
}

/* The sized function covering addr with the greatest start, best alias first. */
static const struct es_sym *covering(const struct es_symtab *st, uint64_t addr)
{
	ssize_t j = last_at_or_below(st, st->sized, st->nsized, addr);
	const struct es_sym *best = NULL;

	for (; j >= 0 && st->maxend[j] > addr; j--) {
		const struct es_sym *s = &st->syms[st->sized[j]];

		if (best && s->addr != best->addr)
			break;
		if (addr - s->addr < s->size)
			best = s; /* same start, lower index: a better alias */
	}
	return best;
}

static bool section_range(const struct elfscan *es, const struct es_symtab *st, size_t shndx,
			  uint64_t *lo, uint64_t *hi)
{
	GElf_Shdr shdr;

	if (get_shdr(st->src, shndx, &shdr))
		return false;
	if (es->ehdr.e_type == ET_REL) {
		if (!es->secaddr || shndx >= es->shnum)
			return false;
		shdr.sh_addr = es->secaddr[shndx];
	}
	*lo = shdr.sh_addr;
	*hi = shdr.sh_addr + shdr.sh_size;
	return true;
}

/*
 * No sized function covers addr: take the nearest symbol before it only when nothing can
 * have ended in between (no size reaches past it) and it is in the same section, so that a
 * stripped or hand-written file gets no invented name.
 */
static const struct es_sym *preceding(const struct elfscan *es, const struct es_symtab *st,
				      uint64_t addr, uint64_t *hi)
{
	ssize_t j = last_at_or_below(st, NULL, st->n, addr), k;
	const struct es_sym *c = NULL;
	uint64_t slo, shi;

	if (j < 0 || st->allend[j] > st->syms[j].addr)
		return NULL;
	for (k = j; k >= 0 && st->syms[k].addr == st->syms[j].addr; k--)
		c = &st->syms[k]; /* the best alias is first in its group */
	if (!c || !section_range(es, st, c->shndx, &slo, &shi) || addr < slo || addr >= shi)
		return NULL;
	*hi = shi;
	if ((size_t)j + 1 < st->n && st->syms[j + 1].addr < shi)
		*hi = st->syms[j + 1].addr;
	return c;
}

static const struct es_sym *sym_for(struct elfscan *es, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	struct es_symtab *st = symtab_get(es);
	const struct es_sym *s;

	if (!st)
		return NULL;
	s = covering(st, addr);
	if (s) {
		*lo = s->addr;
		*hi = s->addr + s->size;
		return s;
	}
	s = preceding(es, st, addr, hi);
	if (s)
		*lo = s->addr;
	return s;
}

/* The executable section holding addr, for code no symbol names. */
static const char *section_at(const struct elfscan *es, uint64_t addr, uint64_t *off)
{
	for (size_t i = 1; i < es->shnum && es->shdrs && es->secaddr; i++) {
		const GElf_Shdr *sh = &es->shdrs[i];
		uint64_t lo = es->secaddr[i];
		const char *name;

		if ((sh->sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) != (SHF_ALLOC | SHF_EXECINSTR) ||
		    addr < lo || addr - lo >= sh->sh_size)
			continue;
		name = es_secname(es, i);
		if (!*name)
			return NULL;
		*off = addr - lo;
		return name;
	}
	return NULL;
}

/* The inline chain at addr into loc: its innermost function and its outermost call site. */
static void inline_chain(struct elfscan *es, uint64_t addr, struct elfscan_loc *loc)
{
	struct elfscan_inline in[64];
	size_t n = es_dwarf_inlines(es, addr, in, 64);

	if (!n)
		return;
	loc->inlined = in[0].func;
	loc->ninlined = n > UINT32_MAX ? UINT32_MAX : (unsigned int)n;
	if (n <= 64) {
		loc->call_file = in[n - 1].call_file;
		loc->call_line = in[n - 1].call_line;
	}
}

size_t elfscan_inlines(struct elfscan *es, uint64_t addr, struct elfscan_inline *out, size_t max)
{
	return es ? es_dwarf_inlines(es, addr, out, max) : 0;
}

int elfscan_symbolize(struct elfscan *es, uint64_t addr, struct elfscan_loc *loc)
{
	const struct es_sym *s;
	uint64_t lo = 0, hi = 0;

	memset(loc, 0, sizeof(*loc));
	if (!es)
		return es_err(EINVAL, "no file to symbolize 0x%" PRIx64 " in", addr);
	s = sym_for(es, addr, &lo, &hi);
	if (s) {
		loc->func = s->name;
	} else {
		loc->func = es_dwarf_func(es, addr, &lo, &hi);
	}
	if (loc->func) {
		loc->func_addr = lo;
		loc->func_off = addr - lo;
	}
	if (es_dwarf_line(es, addr, &loc->file, &loc->line, &loc->column)) {
		loc->file = NULL;
		loc->line = loc->column = 0;
	}
	if (!loc->func)
		loc->section = section_at(es, addr, &loc->section_off);
	else if (loc->file)
		inline_chain(es, addr, loc);
	if (!loc->func && !loc->file && !loc->section)
		return es_err(ENOENT, "no symbol or line information covers 0x%" PRIx64, addr);
	return 0;
}

int elfscan_func_range(struct elfscan *es, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	if (!es)
		return es_err(EINVAL, "no file to look 0x%" PRIx64 " up in", addr);
	/* Without a symbol, the part of a DW_TAG_subprogram holding addr. */
	if (!sym_for(es, addr, lo, hi) && !es_dwarf_func(es, addr, lo, hi))
		return es_err(ENOENT, "no function covers 0x%" PRIx64, addr);
	return 0;
}

/* Suffixes the compilers add to a function's name when they clone or split it. */
static bool clone_suffix(const char *p)
{
	static const char *const parts[] = {"constprop",  "isra", "part",	 "cold", "lto_priv",
					    "localalias", "llvm", "specialized", "hot"};
	size_t i, len;

	if (*p != '.')
		return false;
	while (*p == '.') {
		p++;
		for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
			len = strlen(parts[i]);
			if (!strncmp(p, parts[i], len) && (p[len] == '.' || !p[len]))
				break;
		}
		if (i < sizeof(parts) / sizeof(parts[0])) {
			p += len;
		} else if (*p >= '0' && *p <= '9') {
			while (*p >= '0' && *p <= '9')
				p++;
		} else {
			return false;
		}
	}
	return !*p;
}

static int resolve_symbol(struct elfscan *es, const char *name, uint64_t *addr)
{
	struct es_symtab *st = symtab_get(es);
	const struct es_sym *exact = NULL, *clone = NULL, *cold = NULL;
	size_t i, len = strlen(name);

	if (!st)
		return -ENOENT;
	/* syms is sorted by address: the first match of each kind is the lowest. */
	for (i = 0; i < st->n; i++) {
		const struct es_sym *s = &st->syms[i];

		if (strncmp(s->name, name, len))
			continue;
		if (!s->name[len]) {
			if (!exact || (s->func && !exact->func))
				exact = s;
		} else if (clone_suffix(s->name + len)) {
			if (strstr(s->name + len, ".cold")) {
				if (!cold)
					cold = s;
			} else if (!clone) {
				clone = s;
			}
		}
	}
	if (!exact)
		exact = clone ? clone : cold;
	if (!exact)
		return -ENOENT;
	*addr = exact->addr;
	return 0;
}

static bool parse_number(const char *s, uint64_t *val)
{
	const char *digits = s;
	int base = 10;
	char *end;

	/* Hexadecimal with 0x, else decimal: a leading 0 does not make it octal. */
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		digits = s + 2;
		base = 16;
	}
	if (!isxdigit((unsigned char)digits[0]) || (base == 10 && !isdigit((unsigned char)s[0])))
		return false;
	errno = 0;
	*val = strtoull(digits, &end, base);
	return !errno && !*end;
}

int elfscan_resolve(struct elfscan *es, const char *spec, uint64_t *addr)
{
	const char *colon;
	char *file, *end;
	long line;
	int err;

	if (!es || !spec || !*spec)
		return es_err(EINVAL, "nothing to resolve: expected a function, FILE:LINE or an "
				      "address");
	if (parse_number(spec, addr))
		return 0;
	colon = strrchr(spec, ':');
	if (colon && colon != spec && colon[1] >= '0' && colon[1] <= '9') {
		errno = 0;
		line = strtol(colon + 1, &end, 10);
		if (!*end && !errno && line > 0 && line <= INT32_MAX) {
			file = strndup(spec, colon - spec);
			if (!file)
				return es_err(ENOMEM, "out of memory resolving %s", spec);
			err = es_dwarf_resolve_line(es, file, (int)line, addr);
			free(file);
			if (!err)
				return 0;
			return es_err(ENOENT, "no code for line %s%s", spec,
				      elfscan_has_dwarf(es) ? "" : " (no DWARF line information)");
		}
	}
	if (!resolve_symbol(es, spec, addr) || !es_dwarf_resolve_func(es, spec, addr))
		return 0;
	return es_err(ENOENT, "no function named %s", spec);
}

static int addr_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int elfscan_resolve_all(struct elfscan *es, const char *spec, uint64_t *out, size_t max)
{
	const char *colon = spec ? strrchr(spec, ':') : NULL;
	size_t n = 0, ninl, k = 0;
	uint64_t addr, *all;
	int err;

	if (!out || !max)
		return es_err(EINVAL, "no room for the addresses of %s", spec ? spec : "(null)");
	err = elfscan_resolve(es, spec, &addr);
	/* A number or FILE:LINE names one place; a function also each of its inlined copies. */
	if (!spec || !*spec || parse_number(spec, &out[0]) ||
	    (colon && colon != spec && colon[1] >= '0' && colon[1] <= '9')) {
		if (err)
			return err;
		out[0] = addr;
		return 1;
	}
	ninl = es_dwarf_resolve_inlined(es, spec, NULL, 0);
	if (err && !ninl)
		return err;
	all = malloc((ninl + 1) * sizeof(*all));
	if (!all)
		return es_err(ENOMEM, "out of memory resolving %s", spec);
	if (!err)
		all[n++] = addr;
	n += es_dwarf_resolve_inlined(es, spec, all + n, ninl);
	es_qsort(all, n, sizeof(*all), addr_cmp);
	for (size_t i = 0; i < n; i++) {
		if (i && all[i] == all[i - 1])
			continue;
		if (k < max)
			out[k] = all[i];
		k++;
	}
	free(all);
	return k > INT32_MAX ? INT32_MAX : (int)k;
}
