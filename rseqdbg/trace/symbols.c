// SPDX-License-Identifier: GPL-2.0-only
/* Sections and stack addresses symbolized: the files of traced processes, known by device and
 * inode so that they stay usable after the process exits, and each process' mappings. Debug
 * files come from the host, the process's own root, and debuginfod (DEBUGINFOD_URLS). */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "debuginfod.h"
#include "internal.h"
#include "proc/maps.h"
#include "proc/tasks.h"
#include "symfmt.h"

static struct symfile *file_find(struct rd_tracer *t, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < t->nfiles; i++)
		if (t->files[i].dev == dev && t->files[i].ino == ino)
			return &t->files[i];
	return NULL;
}

/* Takes ownership of es (closed on failure). Its uprobes go on the file probe names (the
 * kernel resolves it to the inode): path, or a path through the process's root. */
static struct symfile *file_add(struct rd_tracer *t, dev_t dev, ino_t ino, const char *path,
				const char *probe, struct elfscan *es)
{
	struct symfile *v = realloc(t->files, (t->nfiles + 1) * sizeof(*v));
	char *p;

	if (v)
		t->files = v;
	p = v ? strdup(path) : NULL;
	if (!p) {
		elfscan_close(es);
		return NULL;
	}
	/* The debug file of a file with sections is looked for now, while the process's own
	 * root (a container's, where it may be) is still there to look in. */
	if (elfscan_count(es))
		elfscan_has_dwarf(es);
	v[t->nfiles] = (struct symfile){.dev = dev, .ino = ino, .path = p, .es = es};
	rd_tracer_uprobe_file(t, probe, es);
	return &v[t->nfiles++];
}

static struct pidmap *pid_find(struct rd_tracer *t, pid_t pid)
{
	for (size_t i = 0; i < t->npids; i++)
		if (t->pids[i].pid == pid)
			return &t->pids[i];
	return NULL;
}

void rd_tracer_learn_pid(struct rd_tracer *t, pid_t pid)
{
	struct elfscan_opts opts = {.sz = sizeof(opts)};
	struct rd_modules mods;
	struct pidmap *pm = pid_find(t, pid);
	pid_t live;

	rd_debuginfod_opts(&opts);
	if (rd_modules_load(pid, &opts, &mods))
		return;
	/* A process whose main thread has exited has no root of its own: a live thread's. */
	if (rd_proc_live_thread(pid, &live))
		live = pid;
	if (!pm) {
		struct pidmap *v = realloc(t->pids, (t->npids + 1) * sizeof(*v));

		if (!v)
			goto out;
		t->pids = v;
		pm = &v[t->npids++];
		memset(pm, 0, sizeof(*pm));
		pm->pid = pid;
	}
	free(pm->v);
	pm->n = 0;
	pm->v = calloc(mods.n ? mods.n : 1, sizeof(*pm->v));
	if (!pm->v)
		goto out;
	for (size_t i = 0; i < mods.n; i++) {
		struct rd_module *m = &mods.v[i];

		pm->v[pm->n++] = (struct pidmod){.start = m->start,
						 .end = m->end,
						 .bias = m->bias,
						 .dev = m->dev,
						 .ino = m->ino};
		if (m->es && !file_find(t, m->dev, m->ino)) {
			/* The process's path may not be ours: another mount namespace (a
			 * container), or a directory hidden from us (a sandboxed service). */
			char probe[PATH_MAX + 32];

			snprintf(probe, sizeof(probe), "/proc/%d/root%s", (int)live, m->path);
			file_add(t, m->dev, m->ino, m->path, m->path[0] == '/' ? probe : m->path,
				 m->es);
			m->es = NULL; /* now the tracer's */
		}
	}
out:
	rd_modules_free(&mods);
}

void rd_tracer_learn_file(struct rd_tracer *t, const char *path)
{
	struct elfscan_opts opts = {.sz = sizeof(opts)};
	struct elfscan *es;
	struct stat st;
	char *abs;

	rd_debuginfod_opts(&opts);
	if (stat(path, &st) || file_find(t, st.st_dev, st.st_ino))
		return;
	/* Named as the process's maps name it: events give the module by its absolute path. */
	abs = realpath(path, NULL);
	if (abs && !elfscan_open(abs, &opts, &es))
		file_add(t, st.st_dev, st.st_ino, abs, abs, es);
	free(abs);
}

static const struct pidmod *pidmod_find(const struct pidmap *pm, uint64_t addr)
{
	for (size_t i = 0; pm && i < pm->n; i++)
		if (addr >= pm->v[i].start && addr < pm->v[i].end)
			return &pm->v[i];
	return NULL;
}

/* Link-time address of runtime addr in pid, through the process' mappings. */
static struct symfile *resolve_by_maps(struct rd_tracer *t, pid_t pid, uint64_t addr,
				       uint64_t *link)
{
	struct pidmap *pm = pid_find(t, pid);
	const struct pidmod *m = pidmod_find(pm, addr);
	struct symfile *sf;

	if (!m) {
		rd_tracer_learn_pid(t, pid);
		m = pidmod_find(pid_find(t, pid), addr);
	}
	if (!m)
		return NULL;
	sf = file_find(t, m->dev, m->ino);
	if (sf)
		*link = addr - m->bias;
	return sf;
}

/* The cache entry of (pid, start_ip), or NULL. */
static struct seccache *sec_find(struct rd_tracer *t, pid_t pid, uint64_t start_ip)
{
	for (size_t i = 0; i < t->nsecs; i++)
		if (t->secs[i]->pid == pid && t->secs[i]->start_ip == start_ip)
			return t->secs[i];
	return NULL;
}

/* A new cache entry; allocated alone, so that the rd_secinfo handed out stays put. */
static struct seccache *sec_add(struct rd_tracer *t, pid_t pid, uint64_t start_ip)
{
	struct seccache **v = realloc(t->secs, (t->nsecs + 1) * sizeof(*v));
	struct seccache *c;

	if (!v)
		return NULL;
	t->secs = v;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->pid = pid;
	c->start_ip = start_ip;
	v[t->nsecs++] = c;
	return c;
}

const struct rd_secinfo *rd_tracer_section(struct rd_tracer *t, pid_t pid, uint64_t start_ip,
					   uint64_t kdev, uint64_t ino, uint64_t file_off)
{
	struct seccache *c = sec_find(t, pid, start_ip);
	struct symfile *sf = NULL;
	uint64_t link = 0;

	if (c && c->info.es)
		return &c->info;
	if (ino) {
		/* The kernel numbers devices major << 20 | minor. */
		dev_t dev = makedev((unsigned int)(kdev >> 20), (unsigned int)(kdev & 0xfffff));

		sf = file_find(t, dev, ino);
		if (!sf) {
			rd_tracer_learn_pid(t, pid);
			sf = file_find(t, dev, ino);
		}
		if (sf && elfscan_offset_to_addr(sf->es, file_off, &link))
			sf = NULL;
	}
	if (!sf)
		sf = resolve_by_maps(t, pid, start_ip, &link);
	if (!c)
		c = sec_add(t, pid, start_ip);
	if (!c)
		return NULL;
	if (sf) {
		c->info.es = sf->es;
		c->info.module = sf->path;
		c->info.link_start = link;
		rd_symbolize(sf->es, link, &c->info.loc);
	}
	return &c->info;
}

const struct rd_secinfo *rd_tracer_section_cached(struct rd_tracer *t, pid_t pid, uint64_t start_ip)
{
	struct seccache *c = sec_find(t, pid, start_ip);

	return c && c->info.es ? &c->info : NULL;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

void rd_tracer_syms_forget(struct rd_tracer *t, const pid_t *pids, size_t n)
{
	size_t j = 0;

	for (size_t i = 0; i < t->nsecs; i++) {
		if (bsearch(&t->secs[i]->pid, pids, n, sizeof(*pids), cmp_pid))
			free(t->secs[i]);
		else
			t->secs[j++] = t->secs[i];
	}
	t->nsecs = j;
	j = 0;
	for (size_t i = 0; i < t->npids; i++) {
		if (bsearch(&t->pids[i].pid, pids, n, sizeof(*pids), cmp_pid))
			free(t->pids[i].v);
		else
			t->pids[j++] = t->pids[i];
	}
	t->npids = j;
}

const char *rd_tracer_sym(struct rd_tracer *t, pid_t pid, uint64_t addr, char *buf, size_t len)
{
	struct pidmap *pm = pid_find(t, pid);
	const struct pidmod *m = pidmod_find(pm, addr);
	struct symfile *sf = m ? file_find(t, m->dev, m->ino) : NULL;

	if (!sf) {
		snprintf(buf, len, "%#" PRIx64, addr);
		return buf;
	}
	return rd_modsym_str(sf->es, sf->path, addr - m->bias, buf, len);
}

void rd_tracer_json_loc(struct rd_tracer *t, struct jw *w, pid_t pid, uint64_t addr)
{
	struct pidmap *pm = pid_find(t, pid);
	const struct pidmod *m = pidmod_find(pm, addr);
	struct symfile *sf = m ? file_find(t, m->dev, m->ino) : NULL;

	if (sf)
		rd_json_loc_members(w, sf->es, addr - m->bias, m->bias, sf->path);
	else
		rd_json_loc_members(w, NULL, addr, 0, NULL);
}

void rd_tracer_syms_free(struct rd_tracer *t)
{
	for (size_t i = 0; i < t->nfiles; i++) {
		free(t->files[i].path);
		elfscan_close(t->files[i].es);
	}
	free(t->files);
	for (size_t i = 0; i < t->npids; i++)
		free(t->pids[i].v);
	free(t->pids);
	for (size_t i = 0; i < t->nsecs; i++)
		free(t->secs[i]);
	free(t->secs);
	rd_debuginfod_end();
}
