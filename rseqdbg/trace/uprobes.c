// SPDX-License-Identifier: GPL-2.0-only
/* Uprobes on the abort handlers of a file's sections, attached as the file becomes known and
 * detached with the tracer: they count every entry into a handler, the kernel's aborts and
 * the branches of user space alike. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
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

/* BPF_LINK_CREATE of a multi-uprobe link (Linux 6.6), which Debian 12's headers and libbpf 1.1
 * predate: the command, the attach type and the head of union bpf_attr as the kernel reads
 * them (the rest of the union is zero). */
#define RD_BPF_LINK_CREATE 28
#define RD_BPF_TRACE_UPROBE_MULTI 48

struct uprobe_multi_attr {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__aligned_u64 path;
	__aligned_u64 offsets;
	__aligned_u64 ref_ctr_offsets;
	__aligned_u64 cookies;
	__u32 cnt;
	__u32 uflags; /* BPF_F_UPROBE_MULTI_RETURN: not used */
	__u32 pid;    /* 0: every process; the programs filter */
	__u32 pad;
};

/* The loader's program stays a perf-event one: its uprobe is opened while the programs load
 * (rd_early_loader_start), which a multi-uprobe link, made with its program, cannot be. */
void rd_tracer_uprobes_prepare(struct rd_tracer *t)
{
	if (t->uprobe_multi)
		bpf_program__set_expected_attach_type(
		    t->skel->progs.abort_handler, (enum bpf_attach_type)RD_BPF_TRACE_UPROBE_MULTI);
}

/* One link of n uprobes on path, its fd or -errno. */
static int link_multi(const struct bpf_program *prog, const char *path, const uint64_t *offs,
		      const uint64_t *cookies, size_t n)
{
	struct uprobe_multi_attr a = {
	    .prog_fd = (__u32)bpf_program__fd(prog),
	    .attach_type = RD_BPF_TRACE_UPROBE_MULTI,
	    .path = (uintptr_t)path,
	    .offsets = (uintptr_t)offs,
	    .cookies = (uintptr_t)cookies,
	    .cnt = (__u32)n,
	};
	long fd = syscall(__NR_bpf, RD_BPF_LINK_CREATE, &a, sizeof(a));

	return fd < 0 ? -errno : (int)fd;
}

static int add_link(struct rd_tracer *t, struct uplink l)
{
	if (t->nuprobes == t->capuprobes) {
		size_t cap = t->capuprobes ? 2 * t->capuprobes : 16;
		struct uplink *v = realloc(t->uprobes, cap * sizeof(*v));

		if (!v) {
			if (l.link)
				bpf_link__destroy(l.link);
			else
				close(l.fd);
			return -ENOMEM;
		}
		t->uprobes = v;
		t->capuprobes = cap;
	}
	t->uprobes[t->nuprobes++] = l;
	return 0;
}

/* Uprobes on path at offs[i] with cookies[i], for prog: one multi-uprobe link, or one link per
 * uprobe when that one fails (the kernel refuses the whole link for one instruction it cannot
 * probe) or the kernel has no such links. How many were attached. */
static size_t attach(struct rd_tracer *t, const struct bpf_program *prog, bool multi,
		     const char *path, const uint64_t *offs, const uint64_t *cookies, size_t n)
{
	size_t ok = 0;
	int fd;

	if (multi && n > 1 && (fd = link_multi(prog, path, offs, cookies, n)) >= 0)
		return add_link(t, (struct uplink){.fd = fd}) ? 0 : n;
	for (size_t i = 0; i < n; i++) {
		struct uplink l = {.fd = -1};

		if (multi) {
			l.fd = link_multi(prog, path, &offs[i], &cookies[i], 1);
		} else {
			LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = cookies[i]);

			l.link = bpf_program__attach_uprobe_opts(prog, -1, path, offs[i], &uo);
		}
		if ((l.link || l.fd >= 0) && !add_link(t, l))
			ok++;
	}
	return ok;
}

/* The uprobes of one file's abort handlers (sections sharing one count on the first of them). */
void rd_tracer_uprobe_file(struct rd_tracer *t, const char *path, struct elfscan *es)
{
	size_t n = elfscan_count(es), k = 0, ok;
	uint64_t *offs, *cookies;

	if (!t->uprobes_on || !n)
		return;
	offs = calloc(n, sizeof(*offs));
	cookies = calloc(n, sizeof(*cookies));
	for (size_t i = 0; offs && cookies && i < n; i++) {
		const struct elfscan_cs *cs = elfscan_get(es, i);
		uint64_t off, delta = cs->abort_ip - cs->start_ip;
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = elfscan_get(es, j)->abort_ip == cs->abort_ip;
		if (seen || cs->post_commit_offset > UINT32_MAX || delta > UINT32_MAX ||
		    file_offset(es, cs->abort_ip, &off))
			continue;
		offs[k] = off;
		cookies[k++] = RT_COOKIE(delta, cs->post_commit_offset);
	}
	if (!offs || !cookies) {
		t->uprobe_failures += n;
	} else {
		ok = attach(t, t->skel->progs.abort_handler, t->uprobe_multi, path, offs, cookies,
			    k);
		t->uprobes_attached += ok;
		t->uprobe_failures += k - ok;
	}
	free(offs);
	free(cookies);
}

/* The interpreter (PT_INTERP) of the program file exe, in interp; false for a static
 * program. */
static bool file_interp(const char *exe, char *interp, size_t len)
{
	bool found = false;
	size_t nph;
	Elf *e;
	int fd = open(exe, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	for (size_t i = 0; e && !elf_getphdrnum(e, &nph) && i < nph && !found; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_INTERP)
			continue;
		found =
		    ph.p_filesz > 1 && ph.p_filesz < len &&
		    pread(fd, interp, ph.p_filesz, (off_t)ph.p_offset) == (ssize_t)ph.p_filesz &&
		    !interp[ph.p_filesz - 1] && interp[0] == '/';
	}
	elf_end(e);
	close(fd);
	return found;
}

/* The interpreter of the program process pid runs, as a path through its root directory. */
static bool interp_path(pid_t pid, char *buf, size_t len)
{
	char exe[64], interp[PATH_MAX];

	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	return file_interp(exe, interp, sizeof(interp)) &&
	       snprintf(buf, len, "/proc/%d/root%s", (int)pid, interp) < (int)len;
}

/* In the loader at path: the file offset of _dl_debug_state and, in *state, the distance from
 * it to _r_debug.r_state (0 when the loader has no _r_debug, as musl's), both read from its
 * symbol tables. */
static int loader_symbols(const char *path, uint64_t *off, uint64_t *state)
{
	uint64_t dls = 0, rdebug = 0;
	Elf_Scn *scn = NULL;
	int err = -ENOENT;
	size_t nph;
	Elf *e;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	while (e && (scn = elf_nextscn(e, scn))) {
		Elf_Data *d = elf_getdata(scn, NULL);
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) || !sh.sh_entsize || !d)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			const char *name;
			GElf_Sym sym;

			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    !(name = elf_strptr(e, sh.sh_link, sym.st_name)))
				continue;
			if (!strcmp(name, "_dl_debug_state"))
				dls = sym.st_value;
			else if (!strcmp(name, "_r_debug"))
				rdebug = sym.st_value;
		}
	}
	for (size_t i = 0; dls && e && !elf_getphdrnum(e, &nph) && i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD || dls < ph.p_vaddr ||
		    dls - ph.p_vaddr >= ph.p_filesz)
			continue;
		*off = dls - ph.p_vaddr + ph.p_offset;
		/* struct r_debug: int r_version, then two pointers, then r_state */
		*state = rdebug ? rdebug + (gelf_getclass(e) == ELFCLASS64 ? 24 : 12) - dls : 0;
		err = 0;
		break;
	}
	elf_end(e);
	close(fd);
	return err;
}

static bool known_loader(const struct rd_tracer *t, const struct stat *st)
{
	for (size_t i = 0; i < t->nloaders; i++)
		if (t->loaders[i].dev == st->st_dev && t->loaders[i].ino == st->st_ino)
			return true;
	return false;
}

/* Whether the loader of st is new to t; if so, it is known from now on. */
static bool new_loader(struct rd_tracer *t, const struct stat *st)
{
	struct loader *v;

	if (known_loader(t, st))
		return false;
	v = realloc(t->loaders, (t->nloaders + 1) * sizeof(*v));
	if (!v)
		return false;
	t->loaders = v;
	v[t->nloaders++] = (struct loader){.dev = st->st_dev, .ino = st->st_ino};
	return true;
}

void rd_tracer_uprobe_loader(struct rd_tracer *t, pid_t pid)
{
	char path[PATH_MAX + 64];
	uint64_t off, cookie;
	struct stat st;

	/* A loader without the symbol (not glibc's or musl's) announces nothing: its libraries
	 * are probed at their first abort, or at the next exec. */
	if (t->hold && interp_path(pid, path, sizeof(path)) && !stat(path, &st) &&
	    new_loader(t, &st) && !loader_symbols(path, &off, &cookie))
		attach(t, t->skel->progs.loader_state, false, path, &off, &cookie, 1);
}

/* Attaching a uprobe first waits for an RCU grace period (registering it takes a percpu
 * rw-semaphore for writing: about 10 ms on 6.18). For the loader of the command, that wait
 * is taken by a thread while the programs load: it opens the perf-event uprobe, to which the
 * program is attached once loaded. */
struct rd_early_loader {
	pthread_t thread;
	char path[PATH_MAX];
	uint64_t cookie;
	int pfd; /* the perf-event uprobe, or -errno */
};

static int uprobe_perf_event(const char *path, uint64_t off)
{
	struct perf_event_attr a = {.size = sizeof(a), .config1 = (uintptr_t)path, .config2 = off};
	unsigned int type;
	long fd;
	FILE *f = fopen("/sys/bus/event_source/devices/uprobe/type", "re");

	if (!f)
		return -errno;
	fd = fscanf(f, "%u", &type) == 1 ? 0 : -EINVAL;
	fclose(f);
	if (fd)
		return (int)fd;
	a.type = type;
	fd = syscall(__NR_perf_event_open, &a, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

static void *early_loader_run(void *arg)
{
	struct rd_early_loader *el = arg;
	uint64_t off;

	el->pfd = loader_symbols(el->path, &off, &el->cookie);
	if (!el->pfd)
		el->pfd = uprobe_perf_event(el->path, off);
	return NULL;
}

struct rd_early_loader *rd_early_loader_start(const char *cmd)
{
	struct rd_early_loader *el = calloc(1, sizeof(*el));

	if (el && file_interp(cmd, el->path, sizeof(el->path)) &&
	    !pthread_create(&el->thread, NULL, early_loader_run, el))
		return el;
	free(el);
	return NULL;
}

void rd_tracer_early_loader_finish(struct rd_tracer *t, struct rd_early_loader *el)
{
	LIBBPF_OPTS(bpf_perf_event_opts, po);
	struct bpf_link *l = NULL;
	struct stat st;

	if (!el)
		return;
	pthread_join(el->thread, NULL);
	po.bpf_cookie = el->cookie;
	if (el->pfd >= 0 && t && t->hold && !stat(el->path, &st) && !known_loader(t, &st))
		l = bpf_program__attach_perf_event_opts(t->skel->progs.loader_state, el->pfd, &po);
	/* The link owns the perf event from now on. Without it, the loader is probed at the
	 * command's exec, as any other. */
	if (l && !add_link(t, (struct uplink){.link = l}))
		new_loader(t, &st);
	else if (!l && el->pfd >= 0)
		close(el->pfd);
	free(el);
}

static int uplink_fd(const struct uplink *l)
{
	return l->link ? bpf_link__fd(l->link) : l->fd;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

/* In a child: close every fd but fd. */
static void keep_only(int fd)
{
	if (fd > 0)
		close_range(0, (unsigned int)fd - 1, 0);
	close_range((unsigned int)fd + 1, ~0U, 0);
}

/* Removing a uprobe waits for the kernel's grace periods (synchronize_rcu_tasks_trace, about
 * 0.1 s on 6.18): once per perf-event uprobe, once per multi-uprobe link. So the last
 * reference to each link is left to a process of its own, one per link so that their waits
 * overlap, that exits at once and removes it; the tracer goes on without waiting. Their parent
 * only starts them and exits; it is not waited for either (that took up to 35 ms on a loaded
 * machine, for the scheduler to run it): init reaps it once the tracer exits, which every
 * command does right after. fds is sorted. */
static void release_in_background(const int *fds, size_t n)
{
	/* _Fork: the exporter has threads, and the children only close and exit. */
	if (!n || _Fork())
		return;
	prctl(PR_SET_NAME, "rseqdbg-detach");
	for (size_t i = 0; i < n; i++) {
		if (_Fork() == 0) {
			keep_only(fds[i]);
			_exit(0);
		}
	}
	_exit(0);
}

void rd_tracer_uprobes_free(struct rd_tracer *t)
{
	size_t n = 0;
	int *fds = malloc((t->nuprobes + 1) * sizeof(*fds));

	for (size_t i = 0; fds && i < t->nuprobes; i++)
		fds[n++] = uplink_fd(&t->uprobes[i]);
	if (fds) {
		qsort(fds, n, sizeof(*fds), cmp_int);
		release_in_background(fds, n);
	}
	free(fds);
	free(t->loaders);
	t->loaders = NULL;
	t->nloaders = 0;
	for (size_t i = 0; i < t->nuprobes; i++) {
		if (t->uprobes[i].link)
			bpf_link__destroy(t->uprobes[i].link);
		else
			close(t->uprobes[i].fd);
	}
	free(t->uprobes);
	t->uprobes = NULL;
	t->nuprobes = t->capuprobes = 0;
}
