// SPDX-License-Identifier: LGPL-2.1-or-later
/* Decode every rseq table format into critical sections, merge descriptors reached from
 * several table entries, and check the abort signatures. */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

/* One table entry leading to a descriptor. */
struct raw {
	uint64_t desc, site;
	uint32_t src;
	uint32_t version, flags;
	uint64_t start, off, abort;
};

struct rawvec {
	struct raw *v;
	size_t n, cap;
};

const char *elfscan_source_name(enum elfscan_source src)
{
	switch (src) {
	case ELFSCAN_SRC_CS_PTR_ARRAY:
		return "__rseq_cs_ptr_array";
	case ELFSCAN_SRC_CS:
		return "__rseq_cs";
	case ELFSCAN_SRC_TABLE_2018:
		return "__rseq_table(2018)";
	case ELFSCAN_SRC_TABLE_2016:
		return "__rseq_table(2016)";
	case ELFSCAN_SRC_SECTIONS_2015:
		return "__rseq_sections(2015)";
	case ELFSCAN_SRC_EXIT_POINTS:
		return "__rseq_exit_point_array";
	}
	return "unknown";
}

const char *elfscan_sig_status_name(enum elfscan_sig_status st)
{
	switch (st) {
	case ELFSCAN_SIG_MATCH:
		return "match";
	case ELFSCAN_SIG_MISMATCH:
		return "mismatch";
	case ELFSCAN_SIG_UNREADABLE:
		return "unreadable";
	case ELFSCAN_SIG_UNKNOWN_ARCH:
		return "unknown-arch";
	}
	return "unknown";
}

static bool all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static int too_many(const struct elfscan *es)
{
	return es_err(E2BIG, "more than %u rseq table entries; refusing to decode", ES_MAX_ENTRIES);
}

/* Room for every entry is reserved up front (reserve()), so this cannot fail. */
static void push(struct rawvec *rv, const struct raw *r)
{
	if (rv->n < rv->cap)
		rv->v[rv->n++] = *r;
}

/* An upper bound of the entries of every table, checked against ES_MAX_ENTRIES. */
static int reserve(struct elfscan *es, struct rawvec *rv, size_t *exit_cap)
{
	uint64_t n = 0, nexit = 0;

	for (size_t i = 0; i < es->ntabs; i++) {
		const struct es_tab *t = &es->tabs[i];

		switch (t->kind) {
		case ES_TAB_PTRS:
			n += t->size / 8;
			break;
		case ES_TAB_EXITS:
			nexit += t->size / 16;
			break;
		default: /* 32-byte descriptors or triples of at least 4-byte words */
			n += t->size / 12 + 1;
			break;
		}
	}
	if (n > ES_MAX_ENTRIES || nexit > ES_MAX_ENTRIES)
		return too_many(es);
	rv->v = malloc((n ? n : 1) * sizeof(*rv->v));
	es->exits = malloc((nexit ? nexit : 1) * sizeof(*es->exits));
	if (!rv->v || !es->exits)
		return es_err(ENOMEM, "out of memory for %llu table entries",
			      (unsigned long long)(n + nexit));
	rv->cap = n;
	*exit_cap = nexit;
	return 0;
}

/* struct rseq_cs: u32 version, u32 flags, u64 start_ip, post_commit_offset, abort_ip. */
static void decode_rseq_cs(const struct elfscan *es, const unsigned char *p, struct raw *r)
{
	r->version = es_load(es, p, 4);
	r->flags = es_load(es, p + 4, 4);
	r->start = es_load(es, p + 8, 8);
	r->off = es_load(es, p + 16, 8);
	r->abort = es_load(es, p + 24, 8);
}

/* Walk 32-byte descriptors from the first 32-aligned address, skipping zero padding. */
static int walk_rseq_cs(const struct elfscan *es, const struct es_tab *t, uint32_t src,
			struct rawvec *rv)
{
	uint64_t off = t->addr % 32 ? 32 - t->addr % 32 : 0;

	for (; off <= t->size && t->size - off >= 32; off += 32) {
		struct raw r = {.desc = t->addr + off, .site = t->addr + off, .src = src};

		if (all_zero(t->data + off, 32))
			continue;
		decode_rseq_cs(es, t->data + off, &r);
		push(rv, &r);
	}
	if (off < t->size && !all_zero(t->data + off, t->size - off))
		return es_err(EINVAL,
			      "section %s [%zu] ends with a partial descriptor at 0x%llx (%llu "
			      "bytes, expected 32)",
			      t->name, t->ndx, (unsigned long long)(t->addr + off),
			      (unsigned long long)(t->size - off));
	return 0;
}

/* The __rseq_cs section holding the 32-byte descriptor at addr. */
static const struct es_tab *cs_tab_at(const struct elfscan *es, uint64_t addr)
{
	const struct es_tab *t = es_tab_at(es, addr);

	if (!t || t->kind != ES_TAB_CS || t->size - (addr - t->addr) < 32)
		return NULL;
	return t;
}

static int bad_slot(const struct elfscan *es, const struct es_tab *t, uint64_t slot, uint64_t ptr)
{
	for (size_t i = 1; i < es->shnum; i++) {
		const GElf_Shdr *sh = &es->shdrs[i];

		if (!(sh->sh_flags & SHF_ALLOC) || ptr - es->secaddr[i] >= sh->sh_size)
			continue;
		return es_err(EINVAL,
			      "section %s [%zu] slot at 0x%llx points to 0x%llx in section %s "
			      "[%zu]%s, not to a 32-byte descriptor in __rseq_cs",
			      t->name, t->ndx, (unsigned long long)slot, (unsigned long long)ptr,
			      es_secname(es, i), i,
			      sh->sh_type == SHT_NOBITS ? " (SHT_NOBITS: no bytes in the file)"
							: "");
	}
	return es_err(EINVAL,
		      "section %s [%zu] slot at 0x%llx points to 0x%llx, which no section holds "
		      "(expected a descriptor in __rseq_cs)",
		      t->name, t->ndx, (unsigned long long)slot, (unsigned long long)ptr);
}

static int walk_ptr_array(const struct elfscan *es, const struct es_tab *t, struct rawvec *rv)
{
	if (t->size % 8)
		return es_err(EINVAL,
			      "section %s [%zu] size 0x%llx is not a multiple of 8 (pointer slots)",
			      t->name, t->ndx, (unsigned long long)t->size);
	for (uint64_t off = 0; off < t->size; off += 8) {
		/* 8-byte slots on every class: a 32-bit pointer sits in the low half. */
		uint64_t ptr = es_load(es, t->data + off, 8);
		struct raw r = {.site = t->addr + off, .src = ELFSCAN_SRC_CS_PTR_ARRAY};
		const struct es_tab *cs;

		if (es->wordsz == 4)
			ptr &= 0xffffffff;
		if (!ptr)
			continue;
		cs = cs_tab_at(es, ptr);
		if (!cs)
			return bad_slot(es, t, r.site, ptr);
		r.desc = ptr;
		decode_rseq_cs(es, cs->data + (ptr - cs->addr), &r);
		push(rv, &r);
	}
	return 0;
}

/* Triples: 2016 native words {start, post_commit, abort}, 2015 u64 {begin, end, restart}. */
static int walk_triples(const struct elfscan *es, const struct es_tab *t, unsigned int w,
			uint32_t src, struct rawvec *rv)
{
	if (t->size % (3 * w))
		return es_err(EINVAL,
			      "section %s [%zu] size 0x%llx is not a multiple of %u ({start, "
			      "post_commit, abort} of %u-byte words)",
			      t->name, t->ndx, (unsigned long long)t->size, 3 * w, w);
	for (uint64_t off = 0; off < t->size; off += 3 * w) {
		const unsigned char *p = t->data + off;
		struct raw r = {.desc = t->addr + off, .site = t->addr + off, .src = src};
		uint64_t post;

		if (all_zero(p, 3 * w))
			continue;
		r.start = es_load(es, p, w);
		post = es_load(es, p + w, w);
		r.abort = es_load(es, p + 2 * w, w);
		r.off = post - r.start;
		push(rv, &r);
	}
	return 0;
}

static int walk_exits(struct elfscan *es, const struct es_tab *t, size_t cap)
{
	if (t->size % 16)
		return es_err(EINVAL,
			      "section %s [%zu] size 0x%llx is not a multiple of 16 ({start_ip, "
			      "exit_ip} entries)",
			      t->name, t->ndx, (unsigned long long)t->size);
	for (uint64_t off = 0; off < t->size; off += 16) {
		struct elfscan_exit *x;

		if (all_zero(t->data + off, 16) || es->nexits == cap)
			continue;
		x = &es->exits[es->nexits++];
		x->addr = t->addr + off;
		x->start_ip = es_load(es, t->data + off, 8);
		x->exit_ip = es_load(es, t->data + off + 8, 8);
	}
	return 0;
}

/* The plausible entries of each __rseq_table reading: code addresses in executable bytes,
 * version and flags zero. */
static void score_layouts(const struct elfscan *es, const struct es_tab *t, uint64_t *ok18,
			  uint64_t *n18, uint64_t *ok16, uint64_t *n16)
{
	unsigned int w = es->wordsz;
	uint64_t off;

	*ok18 = *n18 = *ok16 = *n16 = 0;
	for (off = t->addr % 32 ? 32 - t->addr % 32 : 0; off <= t->size && t->size - off >= 32;
	     off += 32) {
		struct raw r;

		if (all_zero(t->data + off, 32))
			continue;
		decode_rseq_cs(es, t->data + off, &r);
		(*n18)++;
		if (!r.version && !r.flags && es_in_exec(es, r.start) && es_in_exec(es, r.abort) &&
		    r.off < (1u << 20))
			(*ok18)++;
	}
	for (off = 0; t->size - off >= 3 * w && off <= t->size; off += 3 * w) {
		const unsigned char *p = t->data + off;
		uint64_t start = es_load(es, p, w), post = es_load(es, p + w, w);

		if (all_zero(p, 3 * w))
			continue;
		(*n16)++;
		if (es_in_exec(es, start) && es_in_exec(es, es_load(es, p + 2 * w, w)) &&
		    post >= start && post - start < (1u << 20))
			(*ok16)++;
	}
}

/* Tell the 2018 layout (32-byte struct rseq_cs, aligned 32) from the 2016 one (three
 * native words): by which sizes fit, then by which reading yields plausible entries, then
 * by sh_entsize and alignment. */
static int table_layout(const struct elfscan *es, const struct es_tab *t, uint32_t *src)
{
	uint64_t e16 = 3 * (uint64_t)es->wordsz, lead = t->addr % 32 ? 32 - t->addr % 32 : 0;
	bool fit18 = lead <= t->size && (t->size - lead) % 32 == 0;
	bool fit16 = t->size % e16 == 0;
	uint64_t ok18, n18, ok16, n16;

	if (!fit18 && !fit16)
		return es_err(EINVAL,
			      "section %s [%zu] size 0x%llx fits neither 32-byte descriptors nor "
			      "%llu-byte triples",
			      t->name, t->ndx, (unsigned long long)t->size,
			      (unsigned long long)e16);
	*src = fit18 ? ELFSCAN_SRC_TABLE_2018 : ELFSCAN_SRC_TABLE_2016;
	if (fit18 != fit16)
		return 0;
	score_layouts(es, t, &ok18, &n18, &ok16, &n16);
	/* Compare the plausible fractions ok18/n18 and ok16/n16 without dividing. */
	if (ok18 * (n16 ? n16 : 1) != ok16 * (n18 ? n18 : 1)) {
		*src = ok18 * (n16 ? n16 : 1) > ok16 * (n18 ? n18 : 1) ? ELFSCAN_SRC_TABLE_2018
								       : ELFSCAN_SRC_TABLE_2016;
		return 0;
	}
	if (t->entsize == 32 || t->entsize == e16)
		*src = t->entsize == 32 ? ELFSCAN_SRC_TABLE_2018 : ELFSCAN_SRC_TABLE_2016;
	else
		*src = t->align >= 32 ? ELFSCAN_SRC_TABLE_2018 : ELFSCAN_SRC_TABLE_2016;
	return 0;
}

static int cmp_raw(const void *a, const void *b)
{
	const struct raw *x = a, *y = b;

	if (x->desc != y->desc)
		return x->desc < y->desc ? -1 : 1;
	if (x->site != y->site)
		return x->site < y->site ? -1 : 1;
	return x->src < y->src ? -1 : x->src > y->src;
}

static void check_signature(const struct elfscan *es, struct elfscan_cs *cs)
{
	uint32_t sigs[4];
	size_t n = es_known_signatures(es->ehdr.e_machine, es->big_endian, sigs, 4);
	bool readable = cs->abort_ip >= 4 && !es_read(es, cs->abort_ip - 4, cs->sig_bytes, 4);

	if (readable)
		cs->signature = es_load(es, cs->sig_bytes, 4);
	if (!n) {
		cs->sig_status = ELFSCAN_SIG_UNKNOWN_ARCH;
		return;
	}
	if (!readable) {
		cs->sig_status = ELFSCAN_SIG_UNREADABLE;
		return;
	}
	cs->sig_status = ELFSCAN_SIG_MISMATCH;
	for (size_t i = 0; i < n && i < 4; i++)
		if (sigs[i] == cs->signature)
			cs->sig_status = ELFSCAN_SIG_MATCH;
}

/* One section per descriptor address, with every site that leads to it in address order. */
static int merge(struct elfscan *es, struct rawvec *rv)
{
	size_t ngroups = 0, nsites = 0;
	int err;

	err = es_sort(rv->v, rv->n, sizeof(*rv->v), cmp_raw);
	if (err)
		return es_err(-err, "out of memory sorting %zu table entries", rv->n);
	for (size_t i = 0; i < rv->n; i++)
		if (!i || rv->v[i].desc != rv->v[i - 1].desc)
			ngroups++;
	es->cs = calloc(ngroups ? ngroups : 1, sizeof(*es->cs));
	es->sites = calloc(rv->n ? rv->n : 1, sizeof(*es->sites));
	if (!es->cs || !es->sites)
		return es_err(ENOMEM, "out of memory for %zu sections", ngroups);

	for (size_t i = 0; i < rv->n; i++) {
		const struct raw *r = &rv->v[i];
		struct elfscan_cs *cs;

		if (!i || r->desc != rv->v[i - 1].desc) {
			cs = &es->cs[es->ncs++];
			cs->desc_addr = r->desc;
			cs->version = r->version;
			cs->flags = r->flags;
			cs->start_ip = r->start;
			cs->post_commit_offset = r->off;
			cs->post_commit_ip = r->start + r->off;
			cs->abort_ip = r->abort;
			cs->sites = &es->sites[nsites];
			check_signature(es, cs);
		} else if (r->site == rv->v[i - 1].site && r->src == rv->v[i - 1].src) {
			continue;
		}
		cs = &es->cs[es->ncs - 1];
		es->sites[nsites++] = (struct elfscan_site){.source = r->src, .addr = r->site};
		cs->nsites++;
		cs->sources |= r->src;
	}
	return 0;
}

int es_decode(struct elfscan *es)
{
	struct rawvec rv = {0};
	size_t exit_cap = 0;
	int err = reserve(es, &rv, &exit_cap);

	for (size_t i = 0; i < es->ntabs && !err; i++) {
		const struct es_tab *t = &es->tabs[i];
		uint32_t src = 0;

		switch (t->kind) {
		case ES_TAB_CS:
			es->sources |= ELFSCAN_SRC_CS;
			err = walk_rseq_cs(es, t, ELFSCAN_SRC_CS, &rv);
			break;
		case ES_TAB_PTRS:
			es->sources |= ELFSCAN_SRC_CS_PTR_ARRAY;
			err = walk_ptr_array(es, t, &rv);
			break;
		case ES_TAB_EXITS:
			es->sources |= ELFSCAN_SRC_EXIT_POINTS;
			err = walk_exits(es, t, exit_cap);
			break;
		case ES_TAB_TABLE:
			err = table_layout(es, t, &src);
			if (err)
				break;
			es->sources |= src;
			if (src == ELFSCAN_SRC_TABLE_2018)
				err = walk_rseq_cs(es, t, src, &rv);
			else
				err = walk_triples(es, t, es->wordsz, src, &rv);
			break;
		case ES_TAB_SECTIONS:
			es->sources |= ELFSCAN_SRC_SECTIONS_2015;
			err = walk_triples(es, t, 8, ELFSCAN_SRC_SECTIONS_2015, &rv);
			break;
		}
	}
	if (!err)
		err = merge(es, &rv);
	free(rv.v);
	return err;
}
