// SPDX-License-Identifier: GPL-2.0-only
/* The ELF modules mapped in a live process, from /proc/PID/maps, each with its load bias. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "proc/maps.h"
#include "proc/tasks.h"

static bool parse_line(char *line, struct rd_mapping *m)
{
	unsigned long long start, end, offset, inode;
	unsigned int major, minor;
	char perms[8];
	int pos = 0;

	m->path = NULL;
	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &offset, &major,
		   &minor, &inode, &pos) < 7 ||
	    !pos)
		return false;
	line[strcspn(line, "\n")] = '\0';
	m->start = start;
	m->end = end;
	m->offset = offset;
	m->dev = makedev(major, minor);
	m->ino = (ino_t)inode;
	m->path = line + pos;
	/* Anonymous memory, [heap], [stack], [vdso]: no file to scan. */
	return inode && line[pos] == '/';
}

/* Open the file behind a mapping: map_files works for deleted files but needs privilege;
 * /proc/PID/root resolves the path in the process's own mount namespace. pid is a live thread
 * of the process (rd_proc_live_thread). */
static int open_mapped(pid_t pid, const struct rd_mapping *m, char *path, size_t len)
{
	static const char deleted[] = " (deleted)";
	size_t plen = strlen(m->path);
	int fd;

	snprintf(path, len, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, m->start, m->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	if (plen > sizeof(deleted) - 1 && !strcmp(m->path + plen - (sizeof(deleted) - 1), deleted))
		return -ENOENT;
	snprintf(path, len, "/proc/%d/root%s", (int)pid, m->path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static bool is_elf(int fd)
{
	unsigned char magic[4];

	return pread(fd, magic, sizeof(magic), 0) == sizeof(magic) && !memcmp(magic, "\177ELF", 4);
}

void rd_module_fail(struct rd_module *mod, const char *fmt, ...)
{
	char msg[700];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	free(mod->err);
	mod->err = strdup(msg);
	elfscan_close(mod->es);
	mod->es = NULL;
}

int rd_module_bias(const struct elfscan *es, const struct rd_mapping *m, uint64_t *bias)
{
	uint64_t addr, pg = (uint64_t)sysconf(_SC_PAGESIZE);

	if (!elfscan_offset_to_addr(es, m->offset, &addr)) {
		*bias = m->start - addr;
		return 0;
	}
	/* The first page of a segment whose file offset is not page aligned. */
	for (size_t i = 0; i < elfscan_nsegments(es); i++) {
		const struct elfscan_segment *s = elfscan_segment(es, i);

		if ((s->offset & ~(pg - 1)) == m->offset) {
			*bias = m->start - (s->vaddr & ~(pg - 1));
			return 0;
		}
	}
	return -ENOENT;
}

/* "/proc/PID/root" in buf when the process sees another file system than ours (a mount
 * namespace or a root directory of its own, as in a container): its modules' debug files are
 * then looked for there first. False when it sees ours, or when that cannot be told. */
static bool other_root(pid_t pid, char *buf, size_t len)
{
	struct stat theirs, ours;
	char ns[64];

	snprintf(ns, sizeof(ns), "/proc/%d/ns/mnt", (int)pid);
	snprintf(buf, len, "/proc/%d/root", (int)pid);
	if (stat(ns, &theirs) || stat("/proc/self/ns/mnt", &ours))
		return false;
	if (theirs.st_dev != ours.st_dev || theirs.st_ino != ours.st_ino)
		return true;
	return !stat(buf, &theirs) && !stat("/", &ours) &&
	       (theirs.st_dev != ours.st_dev || theirs.st_ino != ours.st_ino);
}

/* Scan the file of a module; false when it is not an ELF file (then it is not a module).
 * root: the process's own root when it is not ours (other_root()), else NULL. */
static bool module_scan(pid_t pid, const struct elfscan_opts *opts, const char *root,
			struct rd_module *mod, const struct rd_mapping *first)
{
	struct elfscan_opts o = *opts;
	char path[128];
	int fd, err;

	fd = open_mapped(pid, first, path, sizeof(path));
	if (fd < 0) {
		rd_module_fail(mod, "cannot open: %s", strerror(-fd));
		return true;
	}
	if (!is_elf(fd)) {
		close(fd);
		return false;
	}
	close(fd);
	if (root) {
		o.sysroot = root;
		o.sysroot_path = first->path;
	}
	err = elfscan_open(path, &o, &mod->es);
	if (err) {
		mod->es = NULL;
		rd_module_fail(mod, "%s", elfscan_errmsg()[0] ? elfscan_errmsg() : strerror(-err));
		return true;
	}
	if (rd_module_bias(mod->es, first, &mod->bias)) {
		rd_module_fail(mod, "no PT_LOAD segment maps file offset %#" PRIx64, first->offset);
	}
	return true;
}

static int modules_grow(struct rd_modules *mods)
{
	struct rd_module *v;
	size_t cap;

	if (mods->n < mods->cap)
		return 0;
	cap = mods->cap ? mods->cap * 2 : 16;
	v = realloc(mods->v, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	mods->v = v;
	mods->cap = cap;
	return 0;
}

/* Linkers align segments to the largest page size of the machine (64 KiB on aarch64) */
#define MAX_SEGMENT_ALIGN 0x10000

/* The module a mapping extends: the latest one of the same file, unless the mapping starts
 * the file again at offset 0 (the same file loaded twice). A segment whose file offset
 * rounds down to 0 maps offset 0 too (the data of a file smaller than the alignment): it
 * follows the module within the alignment, where a second load cannot be. */
static struct rd_module *module_of(struct rd_modules *mods, const struct rd_mapping *m)
{
	for (size_t i = mods->n; i-- > 0;) {
		struct rd_module *mod = &mods->v[i];

		if (mod->dev == m->dev && mod->ino == m->ino && !strcmp(mod->path, m->path))
			return m->offset || (m->start >= mod->end &&
					     m->start - mod->end < MAX_SEGMENT_ALIGN)
				   ? mod
				   : NULL;
	}
	return NULL;
}

static int cmp_start(const void *a, const void *b)
{
	const struct rd_module *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int rd_modules_add_mapping(struct rd_modules *mods, const struct rd_mapping *m)
{
	struct rd_module *mod = module_of(mods, m);

	if (mod) {
		if (m->start < mod->start)
			mod->start = m->start;
		if (m->end > mod->end)
			mod->end = m->end;
		return 0;
	}
	if (modules_grow(mods))
		return -ENOMEM;
	mod = &mods->v[mods->n];
	memset(mod, 0, sizeof(*mod));
	mod->path = strdup(m->path);
	if (!mod->path)
		return -ENOMEM;
	mod->start = m->start;
	mod->end = m->end;
	mod->dev = m->dev;
	mod->ino = m->ino;
	mod->first = *m;
	mod->first.path = mod->path;
	mods->n++;
	return 0;
}

void rd_modules_sort(struct rd_modules *mods)
{
	if (mods->n)
		qsort(mods->v, mods->n, sizeof(*mods->v), cmp_start);
}

int rd_modules_load(pid_t pid, const struct elfscan_opts *opts, struct rd_modules *mods)
{
	size_t len = 0, kept = 0;
	char path[64], root[64], *line = NULL;
	bool own_root;
	ssize_t n;
	pid_t via;
	FILE *f;
	int err = 0;

	memset(mods, 0, sizeof(*mods));
	mods->pid = pid;
	err = rd_proc_live_thread(pid, &via);
	if (err)
		return err;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)via);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while ((n = getline(&line, &len, f)) > 0) {
		struct rd_mapping m;

		if (!parse_line(line, &m)) {
			if (m.path && !strcmp(m.path, "[vdso]")) {
				mods->vdso_start = m.start;
				mods->vdso_end = m.end;
			}
			continue;
		}
		err = rd_modules_add_mapping(mods, &m);
		if (err)
			goto out;
	}
	/* A process that exited between open and read leaves the file empty or unreadable. */
	if (ferror(f)) {
		err = -EIO;
		goto out;
	}
	/* Scan after reading, so the maps are one snapshot. Files that are not ELF (locale
	 * archives, data files) are not modules. */
	own_root = other_root(via, root, sizeof(root));
	for (size_t i = 0; i < mods->n; i++) {
		struct rd_module *mod = &mods->v[i];

		if (module_scan(via, opts, own_root ? root : NULL, mod, &mod->first))
			mods->v[kept++] = *mod;
		else
			free(mod->path);
	}
	mods->n = kept;
	rd_modules_sort(mods);
out:
	free(line);
	fclose(f);
	if (err)
		rd_modules_free(mods);
	return err;
}

int rd_modules_add_vdso(pid_t pid, const struct elfscan_opts *opts, struct rd_modules *mods)
{
	struct rd_module *v, mod = {0};
	struct rd_mapping m = {0};
	char path[64];
	ssize_t got;
	pid_t via;
	int fd, err;

	m.start = mods->vdso_start;
	m.end = mods->vdso_end;
	if (!m.end)
		return -ENOENT;
	if (m.end <= m.start || m.end - m.start > (1u << 20) || rd_modules_find(mods, m.start))
		return -EINVAL;
	mod.image = malloc(m.end - m.start);
	mod.path = strdup("[vdso]");
	v = realloc(mods->v, (mods->n + 1) * sizeof(*v));
	if (v) {
		mods->v = v;
		mods->cap = mods->n + 1;
	}
	if (!mod.image || !mod.path || !v) {
		err = -ENOMEM;
		goto fail;
	}
	err = rd_proc_live_thread(pid, &via);
	if (err)
		goto fail;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)via);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto fail;
	}
	got = pread(fd, mod.image, m.end - m.start, (off_t)m.start);
	err = got < 0 ? -errno : 0;
	close(fd);
	if (got != (ssize_t)(m.end - m.start)) {
		err = err ? err : -EIO;
		goto fail;
	}
	err = elfscan_open_mem(mod.image, m.end - m.start, opts, &mod.es) ? -EINVAL : 0;
	if (!err && rd_module_bias(mod.es, &m, &mod.bias))
		err = -ENOENT;
	if (err)
		goto fail;
	mod.start = m.start;
	mod.end = m.end;
	mods->v[mods->n++] = mod;
	qsort(mods->v, mods->n, sizeof(*mods->v), cmp_start);
	return 0;
fail:
	elfscan_close(mod.es);
	free(mod.image);
	free(mod.path);
	return err;
}

void rd_modules_free(struct rd_modules *mods)
{
	if (!mods)
		return;
	for (size_t i = 0; i < mods->n; i++) {
		free(mods->v[i].path);
		free(mods->v[i].err);
		free(mods->v[i].file);
		elfscan_close(mods->v[i].es);
		free(mods->v[i].image);
	}
	free(mods->v);
	mods->v = NULL;
	mods->n = mods->cap = 0;
}

const struct rd_module *rd_modules_find(const struct rd_modules *mods, uint64_t addr)
{
	size_t lo = 0, hi = mods->n;

	/* The last module starting at or below addr, then earlier ones in case they overlap. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (mods->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0;) {
		if (addr < mods->v[i].end)
			return &mods->v[i];
	}
	return NULL;
}

const struct elfscan_cs *rd_modules_lookup(const struct rd_modules *mods, uint64_t addr,
					   const struct rd_module **mod)
{
	const struct rd_module *m = rd_modules_find(mods, addr);
	const struct elfscan_cs *cs;

	if (mod)
		*mod = NULL;
	if (!m || !m->es)
		return NULL;
	cs = elfscan_lookup(m->es, addr - m->bias);
	if (cs && mod)
		*mod = m;
	return cs;
}
