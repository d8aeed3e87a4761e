// SPDX-License-Identifier: GPL-2.0-only
/* The files a command over many files reads: its operands, the files under its directories
 * with -r, and not the files that are not ELF; and what it counted. */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bulk.h"
#include "common.h"
#include "elfscan.h"

bool rd_bulk_option(struct rd_bulk_opts *o, int c)
{
	switch (c) {
	case 'r':
		o->recursive = true;
		return true;
	case RD_OPT_WITH_TABLES:
		o->with_tables = true;
		return true;
	case RD_OPT_STRICT:
		o->strict = true;
		return true;
	case RD_OPT_NO_PROGRESS:
		o->no_progress = true;
		return true;
	case RD_OPT_CORE:
		o->core = optarg;
		return true;
	case RD_OPT_EXE:
		o->exe = optarg;
		return true;
	case RD_OPT_SYSROOT:
		o->sysroot = optarg;
		return true;
	default:
		return false;
	}
}

int rd_source_check(const char *cmd, bool have_pid, const struct rd_bulk_opts *b, int nfiles)
{
	const char *core = b->core, *one = core ? "--core" : "--pid";
	const char *exe_opt = b->exe ? "--exe" : b->sysroot ? "--sysroot" : NULL;

	if (have_pid && core)
		return rd_error("--pid and --core: one process at a time (try 'rseqdbg %s --help')",
				cmd);
	if (exe_opt && !core)
		return rd_error("%s goes with --core (try 'rseqdbg %s --help')", exe_opt, cmd);
	if ((have_pid || core) && nfiles > 0)
		return rd_error("%s takes no FILE arguments (try 'rseqdbg %s --help')", one, cmd);
	if ((have_pid || core) && (b->recursive || b->with_tables))
		return rd_error("%s is for FILE arguments, not %s (try 'rseqdbg %s --help')",
				b->recursive ? "-r/--recursive" : "--with-tables", one, cmd);
	if (!have_pid && !core && nfiles <= 0)
		return rd_error("no FILE given (try 'rseqdbg %s --help')", cmd);
	return EXIT_OK;
}

/* --- inodes already read: open addressing on (dev, ino) -------------------------------- */

struct inode {
	dev_t dev;
	ino_t ino;
	bool used;
};

struct rd_inodes {
	struct inode *v;
	size_t n, cap; /* cap a power of two, at most half full */
};

static size_t inode_hash(dev_t dev, ino_t ino, size_t cap)
{
	uint64_t h =
	    ((uint64_t)dev * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)ino * 0xff51afd7ed558ccdull);

	return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

static struct inode *inode_slot(struct inode *v, size_t cap, dev_t dev, ino_t ino)
{
	size_t i = inode_hash(dev, ino, cap);

	while (v[i].used && (v[i].dev != dev || v[i].ino != ino))
		i = (i + 1) & (cap - 1);
	return &v[i];
}

/* Add (dev, ino): 1 when it is new, 0 when it was there, -ENOMEM. */
static int inode_add(struct rd_inodes *s, dev_t dev, ino_t ino)
{
	struct inode *slot;

	if ((s->n + 1) * 2 > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct inode *v = calloc(cap, sizeof(*v));

		if (!v)
			return -ENOMEM;
		for (size_t i = 0; i < s->cap; i++)
			if (s->v[i].used)
				*inode_slot(v, cap, s->v[i].dev, s->v[i].ino) = s->v[i];
		free(s->v);
		s->v = v;
		s->cap = cap;
	}
	slot = inode_slot(s->v, s->cap, dev, ino);
	if (slot->used)
		return 0;
	*slot = (struct inode){dev, ino, true};
	s->n++;
	return 1;
}

/* --- the list ------------------------------------------------------------------------- */

static int add_entry(struct rd_bulk *b, const char *path, const char *err)
{
	struct rd_entry e = {strdup(path), err ? strdup(err) : NULL};

	if (!e.path || (err && !e.err))
		goto nomem;
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		struct rd_entry *v = realloc(b->v, cap * sizeof(*v));

		if (!v)
			goto nomem;
		b->v = v;
		b->cap = cap;
	}
	b->v[b->n++] = e;
	return 0;
nomem:
	free(e.path);
	free(e.err);
	rd_seterr("out of memory");
	return -ENOMEM;
}

/* A regular file that does not start with the ELF magic (scripts, text, empty files). One
 * that cannot be opened is not judged here: reading it says why it cannot be. */
static bool not_elf(const char *path)
{
	unsigned char m[SELFMAG];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	ssize_t got;

	if (fd < 0)
		return false;
	got = pread(fd, m, sizeof(m), 0);
	close(fd);
	if (got < 0)
		return false;
	return got < (ssize_t)sizeof(m) || memcmp(m, ELFMAG, SELFMAG) != 0;
}

/* A regular file of the run: read, unless it is not ELF or was read already. */
static int add_file(struct rd_bulk *b, const char *path, const struct stat *st, bool walked)
{
	int fresh = inode_add(b->seen, st->st_dev, st->st_ino);

	if (fresh < 0) {
		rd_seterr("out of memory");
		return fresh;
	}
	/* Named twice on the command line, a file is read twice; found twice, once. */
	if (walked && !fresh)
		return 0;
	if (b->many && !b->o.strict && not_elf(path)) {
		b->not_elf++;
		return 0;
	}
	return add_entry(b, path, NULL);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* The names in directory path, sorted by bytes (the same order in every locale). The
 * directory is closed before its subdirectories are opened: a deep tree holds no
 * descriptors. */
static int read_names(const char *path, char ***res, size_t *n, int *oserr)
{
	char **names = NULL, **nv;
	size_t cap = 0;
	struct dirent *d;
	DIR *dir = opendir(path);

	*n = 0;
	*oserr = 0;
	if (!dir) {
		*oserr = errno;
		return 0;
	}
	for (;;) {
		errno = 0;
		d = readdir(dir);
		if (!d) {
			*oserr = errno;
			break;
		}
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 32;
			nv = realloc(names, cap * sizeof(*nv));
			if (!nv)
				goto nomem;
			names = nv;
		}
		names[*n] = strdup(d->d_name);
		if (!names[*n])
			goto nomem;
		(*n)++;
	}
	closedir(dir);
	if (*n)
		qsort(names, *n, sizeof(*names), cmp_name);
	*res = names;
	return 0;
nomem:
	closedir(dir);
	free_names(names, *n);
	*n = 0;
	rd_seterr("out of memory");
	return -ENOMEM;
}

static int walk(struct rd_bulk *b, const char *dir);

/* A directory of the run: walked, unless it was already (a directory named twice). */
static int add_dir(struct rd_bulk *b, const char *path, const struct stat *st)
{
	int fresh = inode_add(b->seen, st->st_dev, st->st_ino);

	if (fresh < 0) {
		rd_seterr("out of memory");
		return fresh;
	}
	return fresh ? walk(b, path) : 0;
}

static int walk(struct rd_bulk *b, const char *dir)
{
	size_t len = strlen(dir), n;
	bool slash = len && dir[len - 1] == '/';
	char **names = NULL, msg[128];
	int err, oserr;

	rd_progress(b->n, 0, dir);
	err = read_names(dir, &names, &n, &oserr);
	if (err)
		return err;
	if (oserr) {
		snprintf(msg, sizeof(msg), "cannot read the directory: %s", strerror(oserr));
		err = add_entry(b, dir, msg);
	}
	for (size_t i = 0; i < n && err >= 0; i++) {
		char *path = malloc(len + strlen(names[i]) + 2);
		struct stat st;

		if (!path) {
			rd_seterr("out of memory");
			err = -ENOMEM;
			break;
		}
		sprintf(path, "%s%s%s", dir, slash ? "" : "/", names[i]);
		if (lstat(path, &st)) {
			snprintf(msg, sizeof(msg), "cannot stat: %s", strerror(errno));
			err = add_entry(b, path, msg);
		} else if (S_ISDIR(st.st_mode)) {
			err = add_dir(b, path, &st);
		} else if (S_ISREG(st.st_mode)) {
			err = add_file(b, path, &st, true);
		} else {
			b->other++;
		}
		free(path);
	}
	free_names(names, n);
	return err < 0 ? err : 0;
}

int rd_bulk_collect(struct rd_bulk *b, char **operands, int n)
{
	int err = 0;

	b->many = n > 1 || b->o.recursive;
	b->seen = calloc(1, sizeof(*b->seen));
	if (!b->seen) {
		rd_seterr("out of memory");
		return -ENOMEM;
	}
	for (int i = 0; i < n && !err; i++) {
		struct stat st;

		/* An operand is what it names, through symbolic links. Among many, one that is
		 * neither a file nor a directory to walk is skipped (a glob over /usr/bin names
		 * the directory X11); alone, or when stat cannot see it, it is read to say why. */
		if (stat(operands[i], &st))
			err = add_entry(b, operands[i], NULL);
		else if (S_ISDIR(st.st_mode) && b->o.recursive)
			err = add_dir(b, operands[i], &st);
		else if (S_ISREG(st.st_mode))
			err = add_file(b, operands[i], &st, false);
		else if (b->many && !b->o.strict)
			b->other++;
		else
			err = add_entry(b, operands[i], NULL);
	}
	return err < 0 ? err : 0;
}

void rd_bulk_free(struct rd_bulk *b)
{
	for (size_t i = 0; i < b->n; i++) {
		free(b->v[i].path);
		free(b->v[i].err);
	}
	free(b->v);
	if (b->seen)
		free(b->seen->v);
	free(b->seen);
	b->v = NULL;
	b->seen = NULL;
	b->n = b->cap = 0;
}

bool rd_bulk_count(struct rd_bulk *b, struct elfscan *es)
{
	bool tables = elfscan_sources(es) != 0;

	b->read++;
	b->with_tables += tables;
	b->sections += elfscan_count(es);
	return tables || !b->o.with_tables;
}

static const char *plural(size_t n)
{
	return n == 1 ? "" : "s";
}

void rd_bulk_summary_text(const struct rd_bulk *b, const char *verb)
{
	printf("files: %zu ELF file%s %s, %zu with rseq tables (%zu critical section%s), "
	       "%zu not ELF skipped, %zu other entr%s skipped, %zu error%s\n",
	       b->read, plural(b->read), verb, b->with_tables, b->sections, plural(b->sections),
	       b->not_elf, b->other, b->other == 1 ? "y" : "ies", b->errors, plural(b->errors));
}

void rd_bulk_summary_json(const struct rd_bulk *b, struct jw *w)
{
	jw_key(w, "file_counts");
	jw_obj_open(w);
	jw_ku64(w, "read", b->read);
	jw_ku64(w, "with_tables", b->with_tables);
	jw_ku64(w, "sections", b->sections);
	jw_ku64(w, "not_elf", b->not_elf);
	jw_ku64(w, "other", b->other);
	jw_ku64(w, "errors", b->errors);
	jw_obj_close(w);
}
