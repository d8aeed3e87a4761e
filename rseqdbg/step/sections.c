// SPDX-License-Identifier: GPL-2.0-only
/* The critical sections the stepper knows: those of the descriptor tables of every mapped
 * module, at runtime addresses, and those learned from a thread's rseq_cs at run time. */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "step/breakpoint.h"
#include "step/stepper.h"
#include "symfmt.h"

static int sec_cmp(const void *a, const void *b)
{
	const struct section *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

void rd_step_sec_free(struct section *s)
{
	free(s->func);
	free(s->file);
	free(s->label);
}

static void name_section(struct stepper *st, struct section *s)
{
	const struct rd_module *m = rd_modules_find(&st->mods, s->start);
	struct elfscan_loc loc;
	char buf[RD_LOC_LEN];

	if (m && m->es && elfscan_symbolize(m->es, s->start - m->bias, &loc) == 0) {
		s->func = loc.func ? strdup(loc.func) : NULL;
		s->file = loc.file ? strdup(rd_step_base_name(loc.file)) : NULL;
		s->line = loc.line;
		s->inlined = loc.func && loc.inlined;
		/* A section is named by its function, or by the inlined operation it is part of,
		 * as scan and trace name it: "op (bits.h:35) inlined in caller+0x9b (f.c:120)". */
		if (!s->inlined)
			loc.func_off = 0;
		if (loc.func)
			s->label = strdup(rd_loc_str(&loc, buf, sizeof(buf)));
	}
}

static struct section *sec_add(struct stepper *st, uint64_t start, uint64_t post_commit,
			       uint64_t abort_ip, uint64_t desc, enum sec_source src)
{
	struct section *s;

	if (st->nsecs == st->capsecs) {
		size_t cap = st->capsecs ? st->capsecs * 2 : 64;
		struct section *v = realloc(st->secs, cap * sizeof(*v));

		if (!v)
			return NULL;
		st->secs = v;
		st->capsecs = cap;
	}
	s = &st->secs[st->nsecs++];
	memset(s, 0, sizeof(*s));
	s->start = start;
	s->post_commit = post_commit;
	s->abort = abort_ip;
	s->desc = desc;
	s->src = src;
	name_section(st, s);
	return s;
}

struct section *rd_step_sec_find(struct stepper *st, uint64_t addr)
{
	size_t lo = 0, hi = st->nsecs;

	/* Last section starting at or before addr; sections rarely overlap, look back a few. */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (st->secs[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo, k = 0; i-- > 0 && k < 4; k++)
		if (addr >= st->secs[i].start && addr < st->secs[i].post_commit)
			return &st->secs[i];
	return NULL;
}

/* The sections of every module's tables, at runtime addresses; learned ones are kept. */
static void load_table_sections(struct stepper *st)
{
	size_t keep = 0;

	for (size_t i = 0; i < st->nsecs; i++) {
		if (st->secs[i].src == SRC_TABLE)
			rd_step_sec_free(&st->secs[i]);
		else
			st->secs[keep++] = st->secs[i];
	}
	st->nsecs = keep;
	for (size_t m = 0; m < st->mods.n; m++) {
		const struct rd_module *mod = &st->mods.v[m];

		for (size_t i = 0; mod->es && i < elfscan_count(mod->es); i++) {
			const struct elfscan_cs *cs = elfscan_get(mod->es, i);
			struct section *s;

			if (!cs->post_commit_offset || cs->post_commit_ip < cs->start_ip)
				continue;
			s = sec_add(st, cs->start_ip + mod->bias, cs->post_commit_ip + mod->bias,
				    cs->abort_ip + mod->bias, cs->desc_addr + mod->bias, SRC_TABLE);
			for (size_t e = 0; s && e < cs->nexits && s->nexits < MAX_EXITS; e++)
				s->exits[s->nexits++] = cs->exits[e].exit_ip + mod->bias;
		}
	}
	/* A section learned at run time and also in a table now: keep the table's. */
	if (st->nsecs) /* secs is NULL while no section is known */
		qsort(st->secs, st->nsecs, sizeof(*st->secs), sec_cmp);
	keep = 0;
	for (size_t i = 0; i < st->nsecs; i++) {
		struct section *s = &st->secs[i];

		if (keep && s->start == st->secs[keep - 1].start &&
		    s->post_commit == st->secs[keep - 1].post_commit) {
			if (s->src == SRC_TABLE && st->secs[keep - 1].src != SRC_TABLE) {
				rd_step_sec_free(&st->secs[keep - 1]);
				st->secs[keep - 1] = *s;
			} else {
				rd_step_sec_free(s);
			}
			continue;
		}
		st->secs[keep++] = *s;
	}
	st->nsecs = keep;
}

void rd_step_symcache_clear(struct stepper *st)
{
	for (size_t i = 0; st->symcache && i < SYMCACHE; i++) {
		free(st->symcache[i].text);
		st->symcache[i].text = NULL;
		st->symcache[i].pc = 0;
	}
}

void rd_step_until_update(struct stepper *st)
{
	struct places *p = &st->until_places;

	st->until_addr = 0;
	if (rd_step_places_update(st, p, NULL) < 0)
		return;
	for (size_t i = 0; i < p->n; i++)
		if (!st->until_addr || p->v[i].addr < st->until_addr)
			st->until_addr = p->v[i].addr;
}

int rd_step_load_modules(struct stepper *st)
{
	struct elfscan_opts eo = {.sz = sizeof(eo)};
	int ret;

	rd_modules_free(&st->mods);
	ret = rd_modules_load(st->tr.pid, &eo, &st->mods);
	/* Its code is the kernel's and never changes: planned through and named like a file's
	 * (a clock_gettime in a loop is otherwise one stop per instruction). */
	if (!ret)
		rd_modules_add_vdso(st->tr.pid, &eo, &st->mods);
	rd_step_symcache_clear(st);
	if (st->code)
		memset(st->code, 0, CODECACHE * sizeof(*st->code));
	for (size_t i = 0; st->dcache && i < DCACHE; i++)
		st->dcache[i].addr = 0;
	st->nunknown = 0;
	st->maps_dirty = false;
	load_table_sections(st);
	if (st->until_places.spec)
		rd_step_until_update(st);
	return ret;
}

/* A descriptor the thread armed: add its section unless known. */
void rd_step_learn_desc(struct stepper *st, uint64_t desc)
{
	struct {
		uint32_t version, flags;
		uint64_t start, post_commit_offset, abort_ip;
	} d;

	for (size_t i = 0; i < st->nseen; i++)
		if (st->seen_desc[i] == desc)
			return;
	if (st->nseen < sizeof(st->seen_desc) / sizeof(st->seen_desc[0]))
		st->seen_desc[st->nseen++] = desc;
	if (rd_pt_peek(&st->tr, desc, &d, sizeof(d)) < 0 || d.version != 0 ||
	    !d.post_commit_offset || d.post_commit_offset > (1u << 20) ||
	    d.start + d.post_commit_offset < d.start ||
	    (d.abort_ip >= d.start && d.abort_ip < d.start + d.post_commit_offset))
		return;
	for (size_t i = 0; i < st->nsecs; i++)
		if (st->secs[i].start == d.start &&
		    st->secs[i].post_commit == d.start + d.post_commit_offset)
			return;
	if (sec_add(st, d.start, d.start + d.post_commit_offset, d.abort_ip, desc, SRC_RSEQ_CS))
		qsort(st->secs, st->nsecs, sizeof(*st->secs), sec_cmp);
}

/* Read the rseq_cs field of the current thread: a descriptor armed right now. */
void rd_step_check_rseq_cs(struct stepper *st)
{
	uint64_t cs;

	if (!st->have_rcfg || !st->rcfg.abi_ptr)
		return;
	if (rd_pt_peek(&st->tr, st->rcfg.abi_ptr + 8, &cs, sizeof(cs)) == 0 && cs)
		rd_step_learn_desc(st, cs);
}

void rd_step_compute_exits(struct stepper *st, struct section *s)
{
	size_t len = s->post_commit - s->start;
	uint8_t *code;

	s->exits_known = true;
	code = malloc(len);
	if (!code)
		return;
	if (rd_pt_peek(&st->tr, s->start, code, len) == 0) {
		rd_bp_unpatch(s->start, code, len);
		s->nexits += rd_section_branch_exits(st->dec, code, s->start, s->post_commit,
						     s->exits + s->nexits, MAX_EXITS - s->nexits);
	}
	free(code);
}

bool rd_step_spec_is_place(const char *spec)
{
	const char *colon = strrchr(spec, ':');
	unsigned long long v;

	return rd_parse_u64(spec, &v) ||
	       (colon && colon != spec && colon[1] >= '0' && colon[1] <= '9' &&
		strspn(colon + 1, "0123456789") == strlen(colon + 1));
}

/* The dynamic loader: a shared object (not a PIE) with the loader's rendezvous function. */
static bool is_loader(const struct rd_module *m)
{
	uint64_t a;

	return elfscan_type(m->es) == ET_DYN && !elfscan_is_pie(m->es) &&
	       elfscan_resolve(m->es, "_dl_debug_state", &a) == 0;
}

static bool same_module(const struct place *x, const struct rd_module *m)
{
	return x->dev == m->dev && x->ino == m->ino && x->start == m->start;
}

static bool still_mapped(const struct stepper *st, const struct place *x)
{
	for (size_t i = 0; i < st->mods.n; i++)
		if (same_module(x, &st->mods.v[i]))
			return true;
	return false;
}

static int place_add(struct place **v, size_t *n, const struct rd_module *m, uint64_t addr)
{
	struct place *nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv)
		return -ENOMEM;
	*v = nv;
	nv[*n] = (struct place){.addr = addr, .start = m->start, .dev = m->dev, .ino = m->ino};
	(*n)++;
	return 0;
}

/* The addresses spec names in module m, at runtime addresses, appended to p->v. */
static int search_module(struct places *p, const struct rd_module *m)
{
	uint64_t buf[64], *all = buf;
	int got;

	/* The loader's inline copies of libc's functions (its malloc) are not what a name
	 * means: there it is a symbol or nothing. */
	if (is_loader(m))
		got = elfscan_resolve(m->es, p->spec, buf) == 0;
	else
		got = elfscan_resolve_all(m->es, p->spec, buf, 64);
	if (got < 0)
		return 0; /* not in this module */
	if (got > 64) {
		all = malloc((size_t)got * sizeof(*all));
		if (!all)
			return -ENOMEM;
		got = elfscan_resolve_all(m->es, p->spec, all, (size_t)got);
	}
	for (int i = 0; i < got; i++) {
		if (place_add(&p->v, &p->n, m, all[i] + m->bias)) {
			got = -ENOMEM;
			break;
		}
	}
	if (all != buf)
		free(all);
	return got < 0 ? got : 0;
}

int rd_step_places_update(struct stepper *st, struct places *p, void (*gone)(uint64_t addr))
{
	size_t keep = 0, first;

	for (size_t i = 0; i < p->n; i++) {
		if (still_mapped(st, &p->v[i]))
			p->v[keep++] = p->v[i];
		else if (gone)
			gone(p->v[i].addr);
	}
	p->n = keep;
	keep = 0;
	for (size_t i = 0; i < p->nsearched; i++)
		if (still_mapped(st, &p->searched[i]))
			p->searched[keep++] = p->searched[i];
	p->nsearched = keep;
	first = p->n;
	for (size_t i = 0; i < st->mods.n; i++) {
		const struct rd_module *m = &st->mods.v[i];
		bool done = false;

		for (size_t j = 0; j < p->nsearched && !done; j++)
			done = same_module(&p->searched[j], m);
		if (done || !m->es)
			continue;
		if (place_add(&p->searched, &p->nsearched, m, 0) || search_module(p, m))
			return -ENOMEM;
	}
	p->seen |= p->n > 0;
	return (int)first;
}

void rd_step_places_free(struct places *p)
{
	free(p->v);
	free(p->searched);
	p->v = p->searched = NULL;
	p->n = p->nsearched = 0;
}
