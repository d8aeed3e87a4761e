// SPDX-License-Identifier: GPL-2.0-only
/* Uprobes on the abort handlers of a file's sections, attached as the file becomes known and
 * detached with the tracer: they count every entry into a handler, the kernel's aborts and
 * the branches of user space alike. */
#include <errno.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "common.h"
#include "internal.h"
#include "rseqtrace.skel.h"

/* The file offset of address addr of es, from the PT_LOAD that maps it. */
static int file_offset(const struct elfscan *es, uint64_t addr, uint64_t *off)
{
	for (size_t i = 0; i < elfscan_nsegments(es); i++) {
		const struct elfscan_segment *s = elfscan_segment(es, i);

		if (addr >= s->vaddr && addr - s->vaddr < s->filesz) {
			*off = addr - s->vaddr + s->offset;
			return 0;
		}
	}
	return -ENOENT;
}

static int add_link(struct rd_tracer *t, struct bpf_link *l)
{
	struct bpf_link **v;

	if (t->nuprobes == t->capuprobes) {
		size_t cap = t->capuprobes ? 2 * t->capuprobes : 16;

		v = realloc(t->uprobes, cap * sizeof(*v));
		if (!v) {
			bpf_link__destroy(l);
			return -ENOMEM;
		}
		t->uprobes = v;
		t->capuprobes = cap;
	}
	t->uprobes[t->nuprobes++] = l;
	return 0;
}

/* One uprobe per abort handler (sections sharing one count on the first of them). */
void rd_tracer_uprobe_file(struct rd_tracer *t, const char *path, struct elfscan *es)
{
	struct bpf_program *prog = t->skel->progs.abort_handler;
	size_t n = elfscan_count(es);

	if (!t->uprobes_on || !n)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct elfscan_cs *cs = elfscan_get(es, i);
		LIBBPF_OPTS(bpf_uprobe_opts, uo);
		struct bpf_link *l;
		uint64_t off, delta = cs->abort_ip - cs->start_ip;
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = elfscan_get(es, j)->abort_ip == cs->abort_ip;
		if (seen || cs->post_commit_offset > UINT32_MAX || delta > UINT32_MAX ||
		    file_offset(es, cs->abort_ip, &off))
			continue;
		uo.bpf_cookie = RT_COOKIE(delta, cs->post_commit_offset);
		l = bpf_program__attach_uprobe_opts(prog, -1, path, off, &uo);
		if (!l) {
			t->uprobe_failures++;
			continue;
		}
		if (add_link(t, l))
			t->uprobe_failures++;
	}
}

void rd_tracer_uprobes_free(struct rd_tracer *t)
{
	for (size_t i = 0; i < t->nuprobes; i++)
		bpf_link__destroy(t->uprobes[i]);
	free(t->uprobes);
	t->uprobes = NULL;
	t->nuprobes = t->capuprobes = 0;
}
