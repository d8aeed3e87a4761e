// SPDX-License-Identifier: GPL-2.0-only
/* Uprobes on the abort handlers of a file's sections, attached as the file becomes known and
 * detached with the tracer: they count every entry into a handler, the kernel's aborts and
 * the branches of user space alike. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* The interpreter (PT_INTERP) of the program process pid runs, as a path through its root
 * directory; false for a static program. */
static bool interp_path(pid_t pid, char *buf, size_t len)
{
	char exe[64], interp[PATH_MAX] = "";
	bool found = false;
	size_t nph;
	Elf *e;
	int fd;

	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	fd = open(exe, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	for (size_t i = 0; e && !elf_getphdrnum(e, &nph) && i < nph && !found; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_INTERP)
			continue;
		found =
		    ph.p_filesz > 1 && ph.p_filesz < sizeof(interp) &&
		    pread(fd, interp, ph.p_filesz, (off_t)ph.p_offset) == (ssize_t)ph.p_filesz &&
		    !interp[ph.p_filesz - 1] && interp[0] == '/';
	}
	elf_end(e);
	close(fd);
	return found && snprintf(buf, len, "/proc/%d/root%s", (int)pid, interp) < (int)len;
}

void rd_tracer_uprobe_loader(struct rd_tracer *t, pid_t pid)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = "_dl_debug_state");
	char path[PATH_MAX + 64];
	struct loader *v;
	struct stat st;

	if (!t->hold || !interp_path(pid, path, sizeof(path)) || stat(path, &st))
		return;
	for (size_t i = 0; i < t->nloaders; i++)
		if (t->loaders[i].dev == st.st_dev && t->loaders[i].ino == st.st_ino)
			return;
	v = realloc(t->loaders, (t->nloaders + 1) * sizeof(*v));
	if (!v)
		return;
	t->loaders = v;
	/* A loader without the symbol (not glibc's or musl's) announces nothing: its libraries
	 * are probed at their first abort, or at the next exec. */
	v[t->nloaders++] = (struct loader){
	    .dev = st.st_dev,
	    .ino = st.st_ino,
	    .link = bpf_program__attach_uprobe_opts(t->skel->progs.loader_state, -1, path, 0, &uo),
	};
}

void rd_tracer_uprobes_free(struct rd_tracer *t)
{
	for (size_t i = 0; i < t->nloaders; i++)
		bpf_link__destroy(t->loaders[i].link);
	free(t->loaders);
	t->loaders = NULL;
	t->nloaders = 0;
	for (size_t i = 0; i < t->nuprobes; i++)
		bpf_link__destroy(t->uprobes[i]);
	free(t->uprobes);
	t->uprobes = NULL;
	t->nuprobes = t->capuprobes = 0;
}
