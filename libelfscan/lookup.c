// SPDX-License-Identifier: LGPL-2.1-or-later
/* Sections sorted by start_ip with a running maximum of their ends, so that the sections
 * containing an address (overlaps included) are found by one binary search. */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

int es_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	char *b = base, *tmp, *l, *r, *end = b + n * size, *out = b;
	size_t split = 0;

	for (size_t i = 1; i < n; i++) {
		if (cmp(b + (i - 1) * size, b + i * size) <= 0)
			continue;
		if (split) {
			qsort(base, n, size, cmp);
			return 0;
		}
		split = i;
	}
	if (!split)
		return 0;
	/* Two sorted runs: merge, buffering the first; the output never overtakes the second. */
	tmp = malloc(split * size);
	if (!tmp)
		return -ENOMEM;
	memcpy(tmp, b, split * size);
	l = tmp;
	r = b + split * size;
	while (l < tmp + split * size) {
		if (r < end && cmp(r, l) < 0) {
			memmove(out, r, size);
			r += size;
		} else {
			memcpy(out, l, size);
			l += size;
		}
		out += size;
	}
	free(tmp);
	return 0;
}

/* [start_ip, start_ip + post_commit_offset), the end clamped where it would wrap. */
static uint64_t cs_end(const struct elfscan_cs *cs)
{
	return cs->post_commit_offset > UINT64_MAX - cs->start_ip
		   ? UINT64_MAX
		   : cs->start_ip + cs->post_commit_offset;
}

static bool cs_contains(const struct elfscan_cs *cs, uint64_t addr)
{
	return addr >= cs->start_ip && addr - cs->start_ip < cs->post_commit_offset;
}

static int cmp_cs(const void *a, const void *b)
{
	const struct elfscan_cs *x = a, *y = b;

	if (x->start_ip != y->start_ip)
		return x->start_ip < y->start_ip ? -1 : 1;
	return x->desc_addr < y->desc_addr ? -1 : x->desc_addr > y->desc_addr;
}

static int cmp_exit(const void *a, const void *b)
{
	const struct elfscan_exit *x = a, *y = b;

	if (x->start_ip != y->start_ip)
		return x->start_ip < y->start_ip ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* First exit whose start_ip is >= ip. */
static size_t exit_lower_bound(const struct elfscan *es, uint64_t ip)
{
	size_t lo = 0, hi = es->nexits;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (es->exits[mid].start_ip < ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int es_index(struct elfscan *es)
{
	uint64_t max = 0;

	if (es_sort(es->cs, es->ncs, sizeof(*es->cs), cmp_cs) ||
	    es_sort(es->exits, es->nexits, sizeof(*es->exits), cmp_exit))
		return es_err(ENOMEM, "out of memory sorting %zu sections", es->ncs);
	es->maxend = calloc(es->ncs ? es->ncs : 1, sizeof(*es->maxend));
	if (!es->maxend)
		return es_err(ENOMEM, "out of memory for the index of %zu sections", es->ncs);
	for (size_t i = 0; i < es->ncs; i++) {
		struct elfscan_cs *cs = &es->cs[i];
		size_t k = exit_lower_bound(es, cs->start_ip);

		if (cs_end(cs) > max)
			max = cs_end(cs);
		es->maxend[i] = max;
		cs->exits = &es->exits[k];
		while (k < es->nexits && es->exits[k].start_ip == cs->start_ip)
			k++;
		cs->nexits = k - (size_t)(cs->exits - es->exits);
		if (!cs->nexits)
			cs->exits = NULL;
	}
	return 0;
}

/* Number of sections whose start_ip is <= addr. */
static size_t upper_bound(const struct elfscan *es, uint64_t addr)
{
	size_t lo = 0, hi = es->ncs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (es->cs[mid].start_ip <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

size_t elfscan_lookup_all(const struct elfscan *es, uint64_t addr, const struct elfscan_cs **out,
			  size_t max)
{
	size_t hi = upper_bound(es, addr), lo = hi, n = 0;

	/* Every candidate lies after the last index whose running maximum ends at or
	 * before addr. */
	while (lo > 0 && es->maxend[lo - 1] > addr)
		lo--;
	for (size_t i = lo; i < hi; i++) {
		if (!cs_contains(&es->cs[i], addr))
			continue;
		if (n < max)
			out[n] = &es->cs[i];
		n++;
	}
	return n;
}

const struct elfscan_cs *elfscan_lookup(const struct elfscan *es, uint64_t addr)
{
	size_t i = upper_bound(es, addr);

	/* The innermost (latest starting) section wins when several contain addr. */
	for (; i > 0 && es->maxend[i - 1] > addr; i--)
		if (cs_contains(&es->cs[i - 1], addr))
			return &es->cs[i - 1];
	return NULL;
}

size_t elfscan_count(const struct elfscan *es)
{
	return es->ncs;
}

const struct elfscan_cs *elfscan_get(const struct elfscan *es, size_t i)
{
	return i < es->ncs ? &es->cs[i] : NULL;
}

size_t elfscan_nexits(const struct elfscan *es)
{
	return es->nexits;
}

const struct elfscan_exit *elfscan_exit_point(const struct elfscan *es, size_t i)
{
	return i < es->nexits ? &es->exits[i] : NULL;
}
