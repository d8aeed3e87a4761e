// SPDX-License-Identifier: GPL-2.0-only
/* The BPF side of the tracer, in libbpf's order: open -> set rodata and autoload -> load ->
 * attach -> poll -> read the maps -> destroy. */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common.h"
#include "internal.h"
#include "rseqtrace.skel.h" /* after rseqtrace.h: it names its types */
#include "rseqtrace-np.skel.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!rd.verbose && !getenv("RSEQDBG_DEBUG"))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int sample_event(void *ctx, void *data, size_t size)
{
	struct rd_tracer *t = ctx;

	if (size < offsetof(struct rt_event, stack) || !t->fn)
		return 0;
	return t->fn(t->fn_ctx, data);
}

static int sample_notify(void *ctx, void *data, size_t size)
{
	struct rd_tracer *t = ctx;
	const struct rt_notify *n = data;

	if (size < sizeof(*n))
		return 0;
	if (n->type == RT_EV_SECTION) {
		rd_tracer_section(t, n->pid, n->start_ip, n->dev, n->ino, n->file_off);
		return 0;
	}
	/* A new program, or libraries the loader mapped: the modules mapped so far get their
	 * uprobes (and a new program's loader its own) before a held process goes on. */
	if (!t->closing && (n->type == RT_EV_EXEC || n->type == RT_EV_LOADER)) {
		rd_tracer_learn_pid(t, n->pid);
		if (n->type == RT_EV_EXEC && n->held)
			rd_tracer_uprobe_loader(t, n->pid);
	}
	if (n->held)
		kill((pid_t)n->pid, SIGCONT);
	return 0;
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* The filters and switches of rodata, from the options; 0 or -errno (message set). */
static int make_config(const struct rd_tracer_opts *o, const struct rd_tracer *t,
		       struct rt_config *cfg)
{
	if (o->cgroup) {
		struct statfs sfs;
		struct stat st;

		if (statfs(o->cgroup, &sfs) || stat(o->cgroup, &st)) {
			int err = -errno;

			rd_seterr("cgroup %s: %s", o->cgroup, strerror(-err));
			return err;
		}
		if (sfs.f_type != CGROUP2_SUPER_MAGIC || !S_ISDIR(st.st_mode)) {
			rd_seterr("%s: not a cgroup v2 directory", o->cgroup);
			return -EINVAL;
		}
		cfg->filter_cgroup = 1;
		cfg->cgroup_id = st.st_ino; /* a cgroup v2 directory's inode is its id */
	}
	if (o->comm) {
		cfg->filter_comm = 1;
		strncpy(cfg->comm, o->comm, sizeof(cfg->comm) - 1);
	}
	cfg->filter_pids = o->npids || o->follow_forks;
	cfg->filter_tids = o->ntids > 0;
	cfg->follow_forks = o->follow_forks;
	cfg->emit = o->emit;
	cfg->stack = o->stack;
	cfg->nr_cpus = t->ncpus;
	cfg->no_event_mask = t->mode == RD_MODE_NO_MASK;
	cfg->uprobes = !o->no_uprobes;
	cfg->hold = o->follow_forks && !o->no_uprobes;
	return 0;
}

/* The processes and threads of -p and -t into the filter maps, once they are loaded. */
static int fill_filters(const struct rd_tracer_opts *o, struct rseqtrace_bpf *skel)
{
	__u8 one = 1;

	for (size_t i = 0; i < o->npids; i++) {
		__u32 pid = o->pids[i];

		if (kill(o->pids[i], 0) && errno == ESRCH) {
			rd_seterr("no process %d", (int)o->pids[i]);
			return -ESRCH;
		}
		bpf_map_update_elem(bpf_map__fd(skel->maps.filter_pids), &pid, &one, BPF_ANY);
	}
	for (size_t i = 0; i < o->ntids; i++) {
		__u32 tid = o->tids[i];
		char path[64];

		/* /proc/TID exists for every thread, though readdir does not list it. */
		snprintf(path, sizeof(path), "/proc/%d", (int)tid);
		if (access(path, F_OK)) {
			rd_seterr("no thread %d", (int)tid);
			return -ESRCH;
		}
		bpf_map_update_elem(bpf_map__fd(skel->maps.filter_tids), &tid, &one, BPF_ANY);
	}
	return 0;
}

/* The skeleton over the object built with the unpreempted uprobe program when the kernel has
 * the kfuncs it calls, else over the plain one: both have the same maps, programs and data. */
static struct rseqtrace_bpf *open_skel(bool nopreempt, int *err)
{
	/* Every type the programs read is the kernel's own. Named, its BTF is the only one
	 * libbpf searches: a type this kernel lacks (struct rseq_data before 6.19) would else
	 * send it through the modules' BTF, whose listing needs CAP_SYS_ADMIN, beyond the
	 * CAP_BPF and CAP_PERFMON a service is given. */
	LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = "/sys/kernel/btf/vmlinux");
	struct rseqtrace_bpf *skel = calloc(1, sizeof(*skel));

	*err = -ENOMEM;
	if (!skel || (*err = rseqtrace_bpf__create_skeleton(skel)))
		goto fail;
	if (nopreempt)
		skel->skeleton->data =
		    (void *)rseqtrace_np_bpf__elf_bytes(&skel->skeleton->data_sz);
	*err = bpf_object__open_skeleton(skel->skeleton, &oo);
	if (*err)
		goto fail;
	return skel;
fail:
	if (skel)
		rseqtrace_bpf__destroy(skel);
	return NULL;
}

int rd_tracer_open(const struct rd_tracer_opts *o, const struct rd_features *f,
		   struct rd_tracer **res)
{
	struct rt_config cfg = {};
	struct rd_tracer *t;
	struct rseqtrace_bpf *skel;
	int ret;

	*res = NULL;
	libbpf_set_print(libbpf_print);
	t = calloc(1, sizeof(*t));
	if (!t) {
		rd_seterr("out of memory");
		return -ENOMEM;
	}
	t->mode = rd_features_mode(f);
	/* Attribute as on a kernel without the event mask, to check that mode on this one. */
	if (getenv("RSEQDBG_TRACE_MODE") && !strcmp(getenv("RSEQDBG_TRACE_MODE"), "no-event-mask"))
		t->mode = RD_MODE_NO_MASK;
	t->ncpus = libbpf_num_possible_cpus();
	if (t->ncpus <= 0) {
		ret = t->ncpus ? t->ncpus : -EINVAL;
		rd_seterr("cannot count the possible CPUs: %s", strerror(-ret));
		goto fail;
	}
	ret = make_config(o, t, &cfg);
	if (ret)
		goto fail;
	skel = open_skel(f->preempt, &ret);
	if (!skel) {
		rd_seterr("opening the BPF object failed: %s", strerror(-ret));
		goto fail;
	}
	t->skel = skel;
	skel->rodata->rt_cfg = cfg;
	bpf_map__set_max_entries(skel->maps.cpus, t->ncpus);
	if (o->ringbuf_size)
		bpf_map__set_max_entries(skel->maps.events, o->ringbuf_size);
	bpf_program__set_autoload(skel->progs.signal_deliver, f->tp_signal);
	bpf_program__set_autoload(skel->progs.sched_process_fork, f->tp_fork && o->follow_forks);
	t->uprobes_on = !o->no_uprobes;
	bpf_program__set_autoload(skel->progs.abort_handler, t->uprobes_on);
	t->command = o->follow_forks;
	t->hold = cfg.hold;
	bpf_program__set_autoload(skel->progs.loader_state, t->hold);
	/* Perf-event uprobes, one per handler, as on kernels before 6.6, to check them here. */
	t->uprobe_multi = f->uprobe_multi && !(getenv("RSEQDBG_UPROBES") &&
					       !strcmp(getenv("RSEQDBG_UPROBES"), "perf-event"));
	rd_tracer_uprobes_prepare(t);

	ret = rseqtrace_bpf__load(skel);
	if (ret) {
		rd_seterr("loading the BPF programs failed: %s (RSEQDBG_DEBUG=1 shows the verifier "
			  "log)",
			  strerror(-ret));
		goto fail;
	}
	ret = fill_filters(o, skel);
	if (ret)
		goto fail;
	*res = t;
	return 0;
fail:
	rd_tracer_free(t);
	return ret;
}

int rd_tracer_add_pid(struct rd_tracer *t, pid_t pid)
{
	__u32 key = pid;
	__u8 one = 1;

	if (bpf_map_update_elem(bpf_map__fd(t->skel->maps.filter_pids), &key, &one, BPF_ANY))
		return -errno;
	return 0;
}

int rd_tracer_attach(struct rd_tracer *t)
{
	int ret;

	/* Probes of one tracepoint run in the order they were attached: the backup program
	 * must run after the one whose skipped aborts it counts. */
	t->skel->links.rseq_ip_fixup = bpf_program__attach(t->skel->progs.rseq_ip_fixup);
	if (!t->skel->links.rseq_ip_fixup) {
		ret = -errno;
		rd_seterr("attaching rseq_ip_fixup failed: %s", strerror(-ret));
		return ret;
	}
	ret = rseqtrace_bpf__attach(t->skel);

	if (ret) {
		rd_seterr("attaching the BPF programs failed: %s", strerror(-ret));
		return ret;
	}
	t->rb = ring_buffer__new(bpf_map__fd(t->skel->maps.events), sample_event, t, NULL);
	if (!t->rb) {
		ret = -errno;
		rd_seterr("opening the ring buffer failed: %s", strerror(errno));
		return ret;
	}
	ret = ring_buffer__add(t->rb, bpf_map__fd(t->skel->maps.notify), sample_notify, t);
	if (ret) {
		rd_seterr("opening the notify ring buffer failed: %s", strerror(-ret));
		return ret;
	}
	t->t0_ns = now_ns(CLOCK_MONOTONIC);
	t->mono_to_real = (double)now_ns(CLOCK_REALTIME) / 1e9 - (double)t->t0_ns / 1e9;
	return 0;
}

int rd_tracer_poll(struct rd_tracer *t, int timeout_ms, rd_event_fn fn, void *ctx)
{
	int ret;

	t->fn = fn;
	t->fn_ctx = ctx;
	ret = ring_buffer__poll(t->rb, timeout_ms);
	return ret == -EINTR ? 0 : ret < 0 ? ret : 0;
}

int rd_tracer_fd(const struct rd_tracer *t)
{
	return ring_buffer__epoll_fd(t->rb);
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

void rd_tracer_forget(struct rd_tracer *t, const pid_t *pids, size_t n, const struct rd_summary *s)
{
	int fd_sec = bpf_map__fd(t->skel->maps.sections);
	int fd_proc = bpf_map__fd(t->skel->maps.procs);

	if (!n)
		return;
	for (size_t i = 0; i < s->nsections; i++) {
		pid_t pid = (pid_t)s->sections[i].key.tgid;

		if (bsearch(&pid, pids, n, sizeof(*pids), cmp_pid))
			bpf_map_delete_elem(fd_sec, &s->sections[i].key);
	}
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(fd_proc, &(__u32){(__u32)pids[i]});
	rd_tracer_syms_forget(t, pids, n);
}

int rd_tracer_check(const struct rd_features *f)
{
	struct rd_tracer_opts o = {.emit = 1u << RT_EV_ABORT};
	struct rd_tracer *t;
	int ret = rd_tracer_open(&o, f, &t);

	rd_tracer_free(t);
	return ret;
}

/* No process is held from now on: the programs that were deciding to hold one when the flag
 * was set are waited for (a few instructions each), then the notices of every held process
 * are read, which continues it. Detaching the programs instead would wait for the kernel's
 * grace periods. */
void rd_tracer_unhold(struct rd_tracer *t)
{
	if (!t || !t->hold || t->closing)
		return;
	t->closing = true;
	__atomic_store_n(&t->skel->bss->rt_unheld, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&t->skel->bss->rt_hold_inflight, __ATOMIC_SEQ_CST))
		sched_yield();
	if (t->rb)
		ring_buffer__consume(t->rb);
}

void rd_tracer_free(struct rd_tracer *t)
{
	if (!t)
		return;
	rd_tracer_unhold(t);
	if (t->skel)
		rseqtrace_bpf__detach(t->skel);
	rd_tracer_uprobes_free(t);
	ring_buffer__free(t->rb);
	rseqtrace_bpf__destroy(t->skel);
	rd_tracer_syms_free(t);
	rd_tracer_insn_free(t);
	free(t);
}

double rd_tracer_walltime(const struct rd_tracer *t, uint64_t ktime_ns)
{
	return (double)ktime_ns / 1e9 + t->mono_to_real;
}

enum rd_trace_mode rd_tracer_mode(const struct rd_tracer *t)
{
	return t->mode;
}

const struct rd_secinfo *rd_tracer_section_of(struct rd_tracer *t, pid_t pid, uint64_t start_ip)
{
	struct rt_section_key key = {.tgid = (__u32)pid, .start_ip = start_ip};
	struct rt_section v = {};
	const struct rd_secinfo *si = rd_tracer_section_cached(t, pid, start_ip);

	if (si)
		return si;
	bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.sections), &key, &v);
	return rd_tracer_section(t, pid, start_ip, v.dev, v.ino, v.file_off);
}

/* Runs the kernel skipped because the program was already running on the CPU. */
static uint64_t prog_skipped(const struct bpf_program *p)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int fd = bpf_program__fd(p);

	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.recursion_misses;
}

static int read_sections(struct rd_tracer *t, struct rd_summary *s)
{
	int fd = bpf_map__fd(t->skel->maps.sections);
	struct rt_section_key key, *prev = NULL;
	struct rt_section v;

	while (!bpf_map_get_next_key(fd, prev, &key)) {
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &v))
			continue;
		if (rd_summary_add_section(
			s, &key, &v,
			rd_tracer_section(t, key.tgid, key.start_ip, v.dev, v.ino, v.file_off)))
			return -ENOMEM;
	}
	return 0;
}

static int read_procs(struct rd_tracer *t, struct rd_summary *s)
{
	int fd = bpf_map__fd(t->skel->maps.procs);
	__u32 key, *prev = NULL;
	struct rt_proc v;

	while (!bpf_map_get_next_key(fd, prev, &key)) {
		prev = &key;
		if (!bpf_map_lookup_elem(fd, &key, &v) && rd_summary_add_proc(s, key, &v))
			return -ENOMEM;
	}
	return 0;
}

int rd_tracer_summary(struct rd_tracer *t, struct rd_summary *s)
{
	double secs = (double)(now_ns(CLOCK_MONOTONIC) - t->t0_ns) / 1e9;
	int fd_cpus = bpf_map__fd(t->skel->maps.cpus);
	__u32 zero = 0;
	int err = rd_summary_init(s, t->ncpus, t->mode, secs);

	if (err)
		return err;
	if (bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.stats), &zero, s->percpu_stats)) {
		err = -errno;
		goto fail;
	}
	for (int c = 0; c < t->ncpus; c++)
		bpf_map_lookup_elem(fd_cpus, &(__u32){(__u32)c}, &s->cpus[c]);
	err = read_sections(t, s);
	if (!err)
		err = read_procs(t, s);
	if (err)
		goto fail;
	s->fixup_skipped = prog_skipped(t->skel->progs.rseq_ip_fixup);
	s->backup_skipped = prog_skipped(t->skel->progs.rseq_ip_fixup_backup);
	s->attached = !t->command;
	s->uprobes = t->uprobes_on;
	s->uprobes_attached = t->uprobes_attached;
	s->uprobe_failures = t->uprobe_failures;
	s->uprobe_skipped = t->uprobes_on ? prog_skipped(t->skel->progs.abort_handler) : 0;
	s->events_skipped = prog_skipped(t->skel->progs.sched_switch) +
			    prog_skipped(t->skel->progs.sched_migrate_task) +
			    prog_skipped(t->skel->progs.signal_deliver);
	rd_summary_finish(s);
	return 0;
fail:
	rd_summary_free(s);
	return err;
}
