// SPDX-License-Identifier: GPL-2.0-only
/* The rseq tracer shared by trace and stat: features, skeleton lifecycle, maps, symbols. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <capstone.h>
#include <elf.h>

#include "common.h"
#include "procmaps.h"
#include "symfmt.h"
#include "tracer.h"
#include "rseqtrace.skel.h" /* after rseqtrace.h: it names its types */

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

#define CAP_PERFMON_BIT 38
#define CAP_BPF_BIT 39
#define CAP_SYS_ADMIN_BIT 21

volatile int rd_tracer_stop;

/* A file that holds sections, known by (dev, ino) so it stays usable after its process exits. */
struct symfile {
	dev_t dev;
	ino_t ino;
	char *path;
	struct elfscan *es;
};

/* A process' file mappings, kept after it exits. */
struct pidmap {
	pid_t pid;
	size_t n;
	struct pidmod {
		uint64_t start, end, bias;
		dev_t dev;
		ino_t ino;
	} *v;
};

struct seccache {
	pid_t pid;
	uint64_t start_ip;
	struct rd_secinfo info;
};

struct rd_tracer {
	struct rseqtrace_bpf *skel;
	struct ring_buffer *rb;
	enum rd_trace_mode mode;
	int ncpus;
	uint64_t t0_ns;	    /* monotonic ns at attach */
	double mono_to_real; /* seconds to add to monotonic time */
	rd_event_fn fn;
	void *fn_ctx;
	struct symfile *files;
	size_t nfiles;
	struct pidmap *pids;
	size_t npids;
	struct seccache *secs;
	size_t nsecs;
	csh cs_handle;
	uint16_t cs_machine; /* e_machine cs_handle was opened for, 0 when none */
};

/* --- features ------------------------------------------------------------ */

static bool btf_has_type(const struct btf *btf, const char *name, int kind)
{
	return btf__find_by_name_kind(btf, name, kind) > 0;
}

static bool btf_has_member(const struct btf *btf, const char *sname, const char *member)
{
	int id = btf__find_by_name_kind(btf, sname, BTF_KIND_STRUCT);
	const struct btf_type *t;
	const struct btf_member *m;

	if (id <= 0)
		return false;
	t = btf__type_by_id(btf, id);
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, m++) {
		const char *n = btf__name_by_offset(btf, m->name_off);

		if (n && !strcmp(n, member))
			return true;
	}
	return false;
}

/* The kind of a struct member's type (typedefs and qualifiers skipped), 0 when absent. */
static int btf_member_kind(const struct btf *btf, const char *sname, const char *member)
{
	int id = btf__find_by_name_kind(btf, sname, BTF_KIND_STRUCT);
	const struct btf_type *t;
	const struct btf_member *m;

	if (id <= 0)
		return 0;
	t = btf__type_by_id(btf, id);
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, m++) {
		const char *n = btf__name_by_offset(btf, m->name_off);

		if (n && !strcmp(n, member)) {
			const struct btf_type *mt = btf__type_by_id(btf, m->type);

			while (mt && (btf_is_typedef(mt) || btf_is_mod(mt)))
				mt = btf__type_by_id(btf, mt->type);
			return mt ? btf_kind(mt) : 0;
		}
	}
	return 0;
}

static bool btf_has_enumval(const struct btf *btf, const char *ename, const char *val)
{
	int id = btf__find_by_name_kind(btf, ename, BTF_KIND_ENUM);
	const struct btf_type *t;
	const struct btf_enum *e;

	if (id <= 0)
		return false;
	t = btf__type_by_id(btf, id);
	e = btf_enum(t);
	for (int i = 0; i < btf_vlen(t); i++, e++) {
		const char *n = btf__name_by_offset(btf, e->name_off);

		if (n && !strcmp(n, val))
			return true;
	}
	return false;
}

int rd_features_probe(struct rd_features *f)
{
	struct btf *btf;
	long err;

	memset(f, 0, sizeof(*f));
	btf = btf__load_vmlinux_btf();
	err = libbpf_get_error(btf);
	if (err) {
		snprintf(f->btf_err, sizeof(f->btf_err), "%s",
			 access("/sys/kernel/btf/vmlinux", R_OK)
				 ? "/sys/kernel/btf/vmlinux is absent (kernel built without "
				   "CONFIG_DEBUG_INFO_BTF)"
				 : strerror((int)-err));
		return 0;
	}
	f->btf = true;
	f->tp_ip_fixup = btf_has_type(btf, "btf_trace_rseq_ip_fixup", BTF_KIND_TYPEDEF);
	f->tp_update = btf_has_type(btf, "btf_trace_rseq_update", BTF_KIND_TYPEDEF);
	f->tp_migrate = btf_has_type(btf, "btf_trace_sched_migrate_task", BTF_KIND_TYPEDEF);
	f->tp_switch = btf_has_type(btf, "btf_trace_sched_switch", BTF_KIND_TYPEDEF);
	f->tp_signal = btf_has_type(btf, "btf_trace_signal_deliver", BTF_KIND_TYPEDEF);
	f->tp_fork = btf_has_type(btf, "btf_trace_sched_process_fork", BTF_KIND_TYPEDEF);
	f->event_mask = btf_has_member(btf, "task_struct", "rseq_event_mask");
	f->rseq_ptr = btf_member_kind(btf, "task_struct", "rseq") == BTF_KIND_PTR;
	f->rseq_data = btf_member_kind(btf, "task_struct", "rseq") == BTF_KIND_STRUCT &&
		       btf_has_member(btf, "rseq_data", "usrptr");
	f->node_mmcid = btf_has_member(btf, "trace_event_raw_rseq_update", "node_id");
	f->find_vma = btf_has_enumval(btf, "bpf_func_id", "BPF_FUNC_find_vma");
	f->ringbuf = btf_has_enumval(btf, "bpf_map_type", "BPF_MAP_TYPE_RINGBUF");
	btf__free(btf);
	return 0;
}

const char *rd_features_missing(const struct rd_features *f)
{
	if (!f->btf)
		return "this kernel has no BTF (/sys/kernel/btf/vmlinux), which the tracer's "
		       "tp_btf programs and CO-RE need: build it with CONFIG_DEBUG_INFO_BTF=y";
	if (!f->tp_ip_fixup || !f->tp_update)
		return "this kernel has no rseq tracepoints (rseq:rseq_ip_fixup, rseq:rseq_update; "
		       "Linux 4.18+ with CONFIG_RSEQ)";
	if (!f->ringbuf)
		return "this kernel has no BPF ring buffer (Linux 5.8+)";
	if (!f->find_vma)
		return "this kernel has no bpf_find_vma helper (Linux 5.17+)";
	if (!f->tp_switch || !f->tp_migrate)
		return "this kernel lacks sched:sched_switch or sched:sched_migrate_task";
	if (!f->rseq_ptr && !f->rseq_data)
		return "this kernel's task_struct has neither rseq layout the tracer reads (a "
		       "struct rseq pointer up to 6.18, a struct rseq_data since 6.19)";
	return NULL;
}

enum rd_trace_mode rd_features_mode(const struct rd_features *f)
{
	return f->event_mask ? RD_MODE_EVENT_MASK : RD_MODE_NO_MASK;
}

const char *rd_mode_name(enum rd_trace_mode m)
{
	return m == RD_MODE_EVENT_MASK ? "event-mask" : "no-event-mask";
}

static const char *mode_desc(enum rd_trace_mode m)
{
	return m == RD_MODE_EVENT_MASK
		       ? "causes from scheduler and signal events, cleared at every rseq_update; "
			 "an abort with none recorded is a membarrier RSEQ IPI or similar"
		       : "no rseq_event_mask (6.19+ rseq): causes from the latest scheduler or "
			 "signal event before the abort; a membarrier RSEQ IPI counts as the "
			 "preemption before it";
}

void rd_features_print(const struct rd_features *f, const char *load_err)
{
	const char *missing = rd_features_missing(f);
	static const struct {
		const char *name;
		size_t off;
		const char *what;
	} items[] = {
		{ "btf", offsetof(struct rd_features, btf), "kernel BTF (/sys/kernel/btf/vmlinux)" },
		{ "rseq_ip_fixup", offsetof(struct rd_features, tp_ip_fixup),
		  "tracepoint rseq:rseq_ip_fixup (aborts)" },
		{ "rseq_update", offsetof(struct rd_features, tp_update),
		  "tracepoint rseq:rseq_update (cpu_id updates)" },
		{ "sched_migrate_task", offsetof(struct rd_features, tp_migrate),
		  "tracepoint sched:sched_migrate_task (migrations)" },
		{ "sched_switch", offsetof(struct rd_features, tp_switch),
		  "tracepoint sched:sched_switch (preemption causes)" },
		{ "signal_deliver", offsetof(struct rd_features, tp_signal),
		  "tracepoint signal:signal_deliver (signal causes)" },
		{ "sched_process_fork", offsetof(struct rd_features, tp_fork),
		  "tracepoint sched:sched_process_fork (following children)" },
		{ "rseq_event_mask", offsetof(struct rd_features, event_mask),
		  "task_struct.rseq_event_mask (exact causes; up to 6.18)" },
		{ "rseq_pointer", offsetof(struct rd_features, rseq_ptr),
		  "task_struct.rseq: pointer to the area (up to 6.18)" },
		{ "rseq_data", offsetof(struct rd_features, rseq_data),
		  "task_struct.rseq: struct rseq_data with event bytes (6.19+)" },
		{ "node_id_mm_cid", offsetof(struct rd_features, node_mmcid),
		  "rseq_update node_id and mm_cid (6.3+)" },
		{ "ringbuf", offsetof(struct rd_features, ringbuf), "BPF ring buffer (5.8+)" },
		{ "find_vma", offsetof(struct rd_features, find_vma),
		  "bpf_find_vma (5.17+): section files resolved in the kernel" },
	};
	enum rd_trace_mode m = rd_features_mode(f);

	if (rd.json) {
		jw_obj_open(rd.jw);
		jw_key(rd.jw, "features");
		jw_obj_open(rd.jw);
		for (size_t i = 0; i < sizeof(items) / sizeof(items[0]); i++)
			jw_kbool(rd.jw, items[i].name, *(const bool *)((const char *)f + items[i].off));
		jw_obj_close(rd.jw);
		if (!missing)
			missing = load_err;
		jw_kbool(rd.jw, "loaded", !load_err);
		jw_kbool(rd.jw, "supported", !missing);
		jw_kstr(rd.jw, "missing", missing);
		jw_kstr(rd.jw, "mode", missing ? NULL : rd_mode_name(m));
		jw_kstr(rd.jw, "mode_description", missing ? NULL : mode_desc(m));
		jw_obj_close(rd.jw);
		jw_end(rd.jw);
		return;
	}
	for (size_t i = 0; i < sizeof(items) / sizeof(items[0]); i++)
		printf("%-4s %-20s %s\n",
		       *(const bool *)((const char *)f + items[i].off) ? "yes" : "no", items[i].name,
		       items[i].what);
	if (!f->btf)
		printf("BTF: %s\n", f->btf_err);
	if (!missing)
		missing = load_err;
	printf("%-4s %-20s %s\n", load_err ? "no" : "yes", "programs_load",
	       "the tracer's BPF programs load and pass the verifier");
	if (missing)
		printf("mode: none: %s\n", missing);
	else
		printf("mode: %s: %s\n", rd_mode_name(m), mode_desc(m));
}

const char *rd_tracer_privilege_missing(void)
{
	char line[256];
	unsigned long long eff = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (f) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "CapEff: %llx", &eff) == 1)
				break;
		fclose(f);
	}
	if ((eff & (1ULL << CAP_BPF_BIT)) && (eff & (1ULL << CAP_PERFMON_BIT)))
		return NULL;
	if (eff & (1ULL << CAP_SYS_ADMIN_BIT))
		return NULL;
	return "loading BPF tracing programs needs root, or CAP_BPF and CAP_PERFMON";
}

/* --- lifecycle ------------------------------------------------------------ */

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
	rd_tracer_section(t, n->pid, n->start_ip, n->dev, n->ino, n->file_off);
	return 0;
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int rd_tracer_open(const struct rd_tracer_opts *o, const struct rd_features *f,
		   struct rd_tracer **res, char *err, size_t errlen)
{
	struct rt_config cfg = {};
	struct rd_tracer *t;
	struct rseqtrace_bpf *skel;
	int ret;
	__u8 one = 1;

	*res = NULL;
	libbpf_set_print(libbpf_print);
	t = calloc(1, sizeof(*t));
	if (!t) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	t->mode = rd_features_mode(f);
	/* Attribute as on a kernel without the event mask, to check that mode on this one. */
	if (getenv("RSEQDBG_TRACE_MODE") && !strcmp(getenv("RSEQDBG_TRACE_MODE"), "no-event-mask"))
		t->mode = RD_MODE_NO_MASK;
	t->ncpus = libbpf_num_possible_cpus();
	if (t->ncpus <= 0) {
		ret = t->ncpus ? t->ncpus : -EINVAL;
		snprintf(err, errlen, "cannot count the possible CPUs: %s", strerror(-ret));
		goto fail;
	}

	if (o->cgroup) {
		struct statfs sfs;
		struct stat st;

		if (statfs(o->cgroup, &sfs) || stat(o->cgroup, &st)) {
			ret = -errno;
			snprintf(err, errlen, "cgroup %s: %s", o->cgroup, strerror(errno));
			goto fail;
		}
		if (sfs.f_type != CGROUP2_SUPER_MAGIC || !S_ISDIR(st.st_mode)) {
			ret = -EINVAL;
			snprintf(err, errlen, "%s: not a cgroup v2 directory", o->cgroup);
			goto fail;
		}
		cfg.filter_cgroup = 1;
		cfg.cgroup_id = st.st_ino; /* a cgroup v2 directory's inode is its id */
	}
	if (o->comm) {
		cfg.filter_comm = 1;
		strncpy(cfg.comm, o->comm, sizeof(cfg.comm) - 1);
	}
	cfg.filter_pids = o->npids || o->follow_forks;
	cfg.filter_tids = o->ntids > 0;
	cfg.follow_forks = o->follow_forks;
	cfg.emit = o->emit;
	cfg.stack = o->stack;
	cfg.nr_cpus = t->ncpus;
	cfg.no_event_mask = t->mode == RD_MODE_NO_MASK;

	skel = rseqtrace_bpf__open();
	if (!skel) {
		ret = -errno;
		snprintf(err, errlen, "opening the BPF object failed: %s", strerror(errno));
		goto fail;
	}
	t->skel = skel;
	skel->rodata->rt_cfg = cfg;
	bpf_map__set_max_entries(skel->maps.cpus, t->ncpus);
	if (o->ringbuf_size)
		bpf_map__set_max_entries(skel->maps.events, o->ringbuf_size);
	bpf_program__set_autoload(skel->progs.signal_deliver, f->tp_signal);
	bpf_program__set_autoload(skel->progs.sched_process_fork, f->tp_fork && o->follow_forks);

	ret = rseqtrace_bpf__load(skel);
	if (ret) {
		snprintf(err, errlen, "loading the BPF programs failed: %s (RSEQDBG_DEBUG=1 shows "
			 "the verifier log)", strerror(-ret));
		goto fail;
	}
	for (size_t i = 0; i < o->npids; i++) {
		__u32 pid = o->pids[i];

		if (kill(o->pids[i], 0) && errno == ESRCH) {
			ret = -ESRCH;
			snprintf(err, errlen, "no process %d", (int)o->pids[i]);
			goto fail;
		}
		bpf_map_update_elem(bpf_map__fd(skel->maps.filter_pids), &pid, &one, BPF_ANY);
	}
	for (size_t i = 0; i < o->ntids; i++) {
		__u32 tid = o->tids[i];
		char path[64];

		/* /proc/TID exists for every thread, though readdir does not list it. */
		snprintf(path, sizeof(path), "/proc/%d", (int)tid);
		if (access(path, F_OK)) {
			ret = -ESRCH;
			snprintf(err, errlen, "no thread %d", (int)tid);
			goto fail;
		}
		bpf_map_update_elem(bpf_map__fd(skel->maps.filter_tids), &tid, &one, BPF_ANY);
	}
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

int rd_tracer_attach(struct rd_tracer *t, char *err, size_t errlen)
{
	int ret;

	/* Probes of one tracepoint run in the order they were attached: the backup program
	 * must run after the one whose skipped aborts it counts. */
	t->skel->links.rseq_ip_fixup = bpf_program__attach(t->skel->progs.rseq_ip_fixup);
	if (!t->skel->links.rseq_ip_fixup) {
		ret = -errno;
		snprintf(err, errlen, "attaching rseq_ip_fixup failed: %s", strerror(-ret));
		return ret;
	}
	ret = rseqtrace_bpf__attach(t->skel);

	if (ret) {
		snprintf(err, errlen, "attaching the BPF programs failed: %s", strerror(-ret));
		return ret;
	}
	t->rb = ring_buffer__new(bpf_map__fd(t->skel->maps.events), sample_event, t, NULL);
	if (!t->rb) {
		ret = -errno;
		snprintf(err, errlen, "opening the ring buffer failed: %s", strerror(errno));
		return ret;
	}
	ret = ring_buffer__add(t->rb, bpf_map__fd(t->skel->maps.notify), sample_notify, t);
	if (ret) {
		snprintf(err, errlen, "opening the notify ring buffer failed: %s", strerror(-ret));
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

int rd_tracer_check(const struct rd_features *f, char *err, size_t errlen)
{
	struct rd_tracer_opts o = { .emit = 1u << RT_EV_ABORT };
	struct rd_tracer *t;
	int ret = rd_tracer_open(&o, f, &t, err, errlen);

	rd_tracer_free(t);
	return ret;
}

void rd_tracer_free(struct rd_tracer *t)
{
	if (!t)
		return;
	ring_buffer__free(t->rb);
	rseqtrace_bpf__destroy(t->skel);
	for (size_t i = 0; i < t->nfiles; i++) {
		free(t->files[i].path);
		elfscan_close(t->files[i].es);
	}
	free(t->files);
	for (size_t i = 0; i < t->npids; i++)
		free(t->pids[i].v);
	free(t->pids);
	free(t->secs);
	if (t->cs_machine)
		cs_close(&t->cs_handle);
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

/* --- symbols -------------------------------------------------------------- */

static struct symfile *file_find(struct rd_tracer *t, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < t->nfiles; i++)
		if (t->files[i].dev == dev && t->files[i].ino == ino)
			return &t->files[i];
	return NULL;
}

/* Takes ownership of es (closed on failure). */
static struct symfile *file_add(struct rd_tracer *t, dev_t dev, ino_t ino, const char *path,
				struct elfscan *es)
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
	v[t->nfiles] = (struct symfile){ .dev = dev, .ino = ino, .path = p, .es = es };
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
	struct elfscan_opts opts = { .sz = sizeof(opts) };
	struct rd_modules mods;
	struct pidmap *pm = pid_find(t, pid);

	if (rd_modules_load(pid, &opts, &mods))
		return;
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

		pm->v[pm->n++] = (struct pidmod){ .start = m->start, .end = m->end, .bias = m->bias,
						  .dev = m->dev, .ino = m->ino };
		if (m->es && !file_find(t, m->dev, m->ino)) {
			file_add(t, m->dev, m->ino, m->path, m->es);
			m->es = NULL; /* now the tracer's */
		}
	}
out:
	rd_modules_free(&mods);
}

void rd_tracer_learn_file(struct rd_tracer *t, const char *path)
{
	struct elfscan_opts opts = { .sz = sizeof(opts) };
	struct elfscan *es;
	struct stat st;

	if (stat(path, &st) || file_find(t, st.st_dev, st.st_ino))
		return;
	if (elfscan_open(path, &opts, &es))
		return;
	file_add(t, st.st_dev, st.st_ino, path, es);
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

const struct rd_secinfo *rd_tracer_section(struct rd_tracer *t, pid_t pid, uint64_t start_ip,
					   uint64_t kdev, uint64_t ino, uint64_t file_off)
{
	struct seccache *c = NULL, *v;
	struct symfile *sf = NULL;
	uint64_t link = 0;

	for (size_t i = 0; i < t->nsecs; i++)
		if (t->secs[i].pid == pid && t->secs[i].start_ip == start_ip)
			c = &t->secs[i];
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
	if (!c) {
		v = realloc(t->secs, (t->nsecs + 1) * sizeof(*v));
		if (!v)
			return NULL;
		t->secs = v;
		c = &v[t->nsecs++];
		memset(c, 0, sizeof(*c));
		c->pid = pid;
		c->start_ip = start_ip;
	}
	if (sf) {
		c->info.es = sf->es;
		c->info.module = sf->path;
		c->info.link_start = link;
		rd_symbolize(sf->es, link, &c->info.loc);
	}
	return &c->info;
}

const struct rd_secinfo *rd_tracer_section_of(struct rd_tracer *t, pid_t pid, uint64_t start_ip)
{
	struct rt_section_key key = { .tgid = (__u32)pid, .start_ip = start_ip };
	struct rt_section v = {};

	for (size_t i = 0; i < t->nsecs; i++)
		if (t->secs[i].pid == pid && t->secs[i].start_ip == start_ip && t->secs[i].info.es)
			return &t->secs[i].info;
	bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.sections), &key, &v);
	return rd_tracer_section(t, pid, start_ip, v.dev, v.ino, v.file_off);
}

static int cs_setup(struct rd_tracer *t, uint16_t machine)
{
	cs_arch arch;
	cs_mode mode;

	if (t->cs_machine == machine)
		return 0;
	switch (machine) {
	case EM_X86_64:
		arch = CS_ARCH_X86, mode = CS_MODE_64;
		break;
	case EM_386:
		arch = CS_ARCH_X86, mode = CS_MODE_32;
		break;
	case EM_AARCH64:
		arch = CS_ARCH_ARM64, mode = CS_MODE_ARM;
		break;
	default:
		return -ENOTSUP;
	}
	if (t->cs_machine)
		cs_close(&t->cs_handle);
	t->cs_machine = 0;
	if (cs_open(arch, mode, &t->cs_handle) != CS_ERR_OK)
		return -ENOTSUP;
	t->cs_machine = machine;
	return 0;
}

const char *rd_tracer_insn(struct rd_tracer *t, const struct rd_secinfo *si, uint64_t start_ip,
			   uint64_t ip, char *buf, size_t len)
{
	uint8_t code[16];
	uint64_t addr;
	size_t n = sizeof(code);
	cs_insn *insn = NULL;

	snprintf(buf, len, "?");
	if (!si || !si->es || cs_setup(t, elfscan_machine(si->es)))
		return buf;
	addr = si->link_start + (ip - start_ip);
	/* Near the end of the file fewer bytes are readable. */
	while (n && elfscan_read(si->es, addr, code, n))
		n--;
	if (n && cs_disasm(t->cs_handle, code, n, addr, 1, &insn) == 1) {
		if (insn->op_str[0])
			snprintf(buf, len, "%s %s", insn->mnemonic, insn->op_str);
		else
			snprintf(buf, len, "%s", insn->mnemonic);
		cs_free(insn, 1);
	}
	return buf;
}

const char *rd_tracer_sym(struct rd_tracer *t, pid_t pid, uint64_t addr, char *buf, size_t len)
{
	struct pidmap *pm = pid_find(t, pid);
	const struct pidmod *m = pidmod_find(pm, addr);
	struct symfile *sf = m ? file_find(t, m->dev, m->ino) : NULL;
	struct elfscan_loc loc;

	if (!sf) {
		snprintf(buf, len, "%#" PRIx64, addr);
		return buf;
	}
	if (rd_symbolize(sf->es, addr - m->bias, &loc))
		return rd_loc_str(&loc, buf, len);
	return rd_modoff_str(sf->path, addr - m->bias, buf, len);
}

/* --- summary --------------------------------------------------------------- */

const char *rd_cause_name(uint32_t cause)
{
	switch (cause) {
	case RT_CAUSE_PREEMPT:
		return "preemption";
	case RT_CAUSE_SIGNAL:
		return "signal";
	case RT_CAUSE_MIGRATE:
		return "migration";
	case RT_CAUSE_DEFERRED:
		return "deferred";
	default:
		return "unknown";
	}
}

static int cmp_sections(const void *a, const void *b)
{
	const struct rd_sum_section *x = a, *y = b;

	if (x->aborts != y->aborts)
		return x->aborts > y->aborts ? -1 : 1;
	if (x->key.tgid != y->key.tgid)
		return x->key.tgid < y->key.tgid ? -1 : 1;
	return x->key.start_ip < y->key.start_ip ? -1 : x->key.start_ip > y->key.start_ip;
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

int rd_tracer_summary(struct rd_tracer *t, struct rd_summary *s)
{
	int fd_stats = bpf_map__fd(t->skel->maps.stats);
	int fd_cpus = bpf_map__fd(t->skel->maps.cpus);
	int fd_secs = bpf_map__fd(t->skel->maps.sections);
	int fd_procs = bpf_map__fd(t->skel->maps.procs);
	struct rt_section_key skey, *sprev = NULL;
	__u32 pkey, *pprev = NULL, zero = 0;
	size_t cap = 0;
	int err = -ENOMEM;

	memset(s, 0, sizeof(*s));
	s->ncpus = t->ncpus;
	s->seconds = (double)(now_ns(CLOCK_MONOTONIC) - t->t0_ns) / 1e9;
	s->percpu_stats = calloc(t->ncpus, sizeof(*s->percpu_stats));
	s->cpus = calloc(t->ncpus, sizeof(*s->cpus));
	if (!s->percpu_stats || !s->cpus)
		goto fail;
	if (bpf_map_lookup_elem(fd_stats, &zero, s->percpu_stats)) {
		err = -errno;
		goto fail;
	}
	for (int c = 0; c < t->ncpus; c++) {
		const __u64 *src = (const __u64 *)&s->percpu_stats[c];
		__u64 *dst = (__u64 *)&s->total;

		for (size_t i = 0; i < sizeof(s->total) / sizeof(__u64); i++)
			dst[i] += src[i];
		bpf_map_lookup_elem(fd_cpus, &(__u32){ (__u32)c }, &s->cpus[c]);
	}
	while (!bpf_map_get_next_key(fd_secs, sprev, &skey)) {
		struct rd_sum_section *e;

		sprev = &skey;
		if (s->nsections == cap) {
			struct rd_sum_section *v;

			cap = cap ? 2 * cap : 16;
			v = realloc(s->sections, cap * sizeof(*v));
			if (!v)
				goto fail;
			s->sections = v;
		}
		e = &s->sections[s->nsections];
		memset(e, 0, sizeof(*e));
		e->key = skey;
		if (bpf_map_lookup_elem(fd_secs, &skey, &e->v))
			continue;
		for (int c = 0; c < RT_NCAUSES; c++)
			e->aborts += e->v.aborts[c];
		e->si = rd_tracer_section(t, skey.tgid, skey.start_ip, e->v.dev, e->v.ino,
					  e->v.file_off);
		s->nsections++;
	}
	if (s->nsections)
		qsort(s->sections, s->nsections, sizeof(*s->sections), cmp_sections);
	s->fixup_skipped = prog_skipped(t->skel->progs.rseq_ip_fixup);
	s->backup_skipped = prog_skipped(t->skel->progs.rseq_ip_fixup_backup);
	s->events_skipped = prog_skipped(t->skel->progs.sched_switch) +
			    prog_skipped(t->skel->progs.sched_migrate_task) +
			    prog_skipped(t->skel->progs.signal_deliver);
	cap = 0;
	while (!bpf_map_get_next_key(fd_procs, pprev, &pkey)) {
		pprev = &pkey;
		if (s->nprocs == cap) {
			void *v;

			cap = cap ? 2 * cap : 16;
			v = realloc(s->procs, cap * sizeof(*s->procs));
			if (!v)
				goto fail;
			s->procs = v;
		}
		s->procs[s->nprocs].pid = pkey;
		if (!bpf_map_lookup_elem(fd_procs, &pkey, &s->procs[s->nprocs].v))
			s->nprocs++;
	}
	return 0;
fail:
	rd_summary_free(s);
	return err;
}

void rd_summary_free(struct rd_summary *s)
{
	if (!s)
		return;
	free(s->percpu_stats);
	free(s->cpus);
	free(s->sections);
	free(s->procs);
	memset(s, 0, sizeof(*s));
}

void rd_summary_since(struct rd_summary *s, const struct rd_summary *prev)
{
	s->recent_seconds = s->seconds - prev->seconds;
	s->recent_aborts = s->total.aborts - prev->total.aborts;
	for (size_t i = 0; i < s->nsections; i++) {
		struct rd_sum_section *e = &s->sections[i];

		e->recent = e->aborts;
		for (size_t j = 0; j < prev->nsections; j++) {
			const struct rd_sum_section *o = &prev->sections[j];

			if (o->key.tgid == e->key.tgid && o->key.start_ip == e->key.start_ip) {
				e->recent = e->aborts - o->aborts;
				break;
			}
		}
	}
}

static const char *cause_label(int c)
{
	if (c == RT_CAUSE_UNKNOWN)
		return "unknown (likely membarrier RSEQ IPI)";
	if (c == RT_CAUSE_DEFERRED)
		return "deferred (preempted before the section)";
	return rd_cause_name(c);
}

static void hist_bounds(int slot, uint64_t *lo, uint64_t *hi)
{
	*lo = slot ? 1ULL << (slot - 1) : 0;
	*hi = slot ? (1ULL << slot) - 1 : 0;
}

static const char *section_name(const struct rd_sum_section *e, char *buf, size_t len)
{
	if (e->si && e->si->loc.func)
		return rd_loc_str(&e->si->loc, buf, len);
	snprintf(buf, len, "%#" PRIx64, (uint64_t)e->key.start_ip);
	return buf;
}

static double rate(uint64_t n, double secs)
{
	return secs > 0 ? (double)n / secs : 0;
}

void rd_summary_print(struct rd_tracer *t, const struct rd_summary *s, int top, FILE *f)
{
	const struct rt_stats *g = &s->total;
	char name[RD_LOC_LEN];

	fprintf(f, "%.3f s, mode %s\n", s->seconds, rd_mode_name(t->mode));
	if (s->recent_seconds > 0)
		fprintf(f, "last %.3f s: %" PRIu64 " aborts, %.1f/s\n", s->recent_seconds,
			s->recent_aborts, rate(s->recent_aborts, s->recent_seconds));
	fprintf(f, "aborts          %10" PRIu64 "  %10.1f/s\n", (uint64_t)g->aborts,
	       rate(g->aborts, s->seconds));
	for (int c = 0; c < RT_NCAUSES; c++)
		fprintf(f, "  %-39s %7" PRIu64 "  %5.1f%%\n", cause_label(c), (uint64_t)g->cause[c],
		       g->aborts ? 100.0 * g->cause[c] / g->aborts : 0.0);
	fprintf(f, "migrations      %10" PRIu64 "  %10.1f/s\n", (uint64_t)g->migrations,
	       rate(g->migrations, s->seconds));
	fprintf(f, "cpu_id updates  %10" PRIu64 "  %10.1f/s\n", (uint64_t)g->updates,
	       rate(g->updates, s->seconds));
	fprintf(f, "signals         %10" PRIu64 "  %10.1f/s\n", (uint64_t)g->signals,
	       rate(g->signals, s->seconds));
	if (g->updates)
		fprintf(f, "abort rate      %10.4f aborts per cpu_id update\n",
		       (double)g->aborts / (double)g->updates);

	if (s->nsections)
		fprintf(f, "\n%-8s %10s %10s %10s %10s %10s %10s  %s\n", "PID", "ABORTS", "PREEMPT",
		       "SIGNAL", "MIGRATE", "DEFERRED", "UNKNOWN", "SECTION");
	for (size_t i = 0; i < s->nsections && (top <= 0 || (int)i < top); i++) {
		const struct rd_sum_section *e = &s->sections[i];
		uint64_t max = 0;

		fprintf(f, "%-8u %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64
		       " %10" PRIu64 "  %s\n",
		       e->key.tgid, e->aborts, (uint64_t)e->v.aborts[RT_CAUSE_PREEMPT],
		       (uint64_t)e->v.aborts[RT_CAUSE_SIGNAL], (uint64_t)e->v.aborts[RT_CAUSE_MIGRATE],
		       (uint64_t)e->v.aborts[RT_CAUSE_DEFERRED],
		       (uint64_t)e->v.aborts[RT_CAUSE_UNKNOWN], section_name(e, name, sizeof(name)));
		fprintf(f, "%-8s %-.15s, %.1f aborts/s, section %#" PRIx64 "+%" PRIu64 " abort %#" PRIx64
		       "%s%s\n",
		       "", rd_safe(e->v.comm), rate(e->aborts, s->seconds),
		       (uint64_t)e->key.start_ip,
		       (uint64_t)e->v.post_commit_offset, (uint64_t)e->v.abort_ip,
		       e->si && e->si->module ? " in " : "",
		       e->si && e->si->module ? rd_safe(e->si->module) : "");
		if (s->recent_seconds > 0)
			fprintf(f, "%-8s last %.3f s: %" PRIu64 " aborts, %.1f/s\n", "",
				s->recent_seconds, e->recent, rate(e->recent, s->recent_seconds));
		for (int h = 0; h < RT_HIST_SLOTS; h++)
			if (e->v.hist[h] > max)
				max = e->v.hist[h];
		for (int h = 0; h < RT_HIST_SLOTS; h++) {
			uint64_t lo, hi;
			char range[32], bar[41];
			int w;

			if (!e->v.hist[h])
				continue;
			hist_bounds(h, &lo, &hi);
			if (h == RT_HIST_SLOTS - 1)
				snprintf(range, sizeof(range), "outside");
			else if (lo == hi)
				snprintf(range, sizeof(range), "+%" PRIu64, lo);
			else
				snprintf(range, sizeof(range), "+%" PRIu64 "..%" PRIu64, lo, hi);
			w = (int)(40 * e->v.hist[h] / max);
			memset(bar, '#', w);
			bar[w] = '\0';
			fprintf(f, "%-8s   %-14s %10" PRIu64 " |%-40s|\n", "", range,
			       (uint64_t)e->v.hist[h], bar);
		}
	}
	fprintf(f, "\n%-4s %10s %14s %14s\n", "CPU", "ABORTS", "MIGRATIONS-IN", "CPU_ID-UPDATES");
	for (int c = 0; c < s->ncpus; c++) {
		if (!s->cpus[c].aborts && !s->cpus[c].migrations_in && !s->cpus[c].updates)
			continue;
		fprintf(f, "%-4d %10" PRIu64 " %14" PRIu64 " %14" PRIu64 "\n", c,
		       (uint64_t)s->cpus[c].aborts, (uint64_t)s->cpus[c].migrations_in,
		       (uint64_t)s->cpus[c].updates);
	}
	if (g->ringbuf_drops || g->notify_drops || g->map_full || g->storage_misses || s->fixup_skipped ||
	    s->backup_skipped || s->events_skipped)
		fprintf(f, "\n");
	if (s->fixup_skipped || s->backup_skipped)
		fprintf(f, "the kernel skipped the abort program %" PRIu64 " times and its backup %"
			PRIu64 " times (a program already running on that CPU; any process); the "
			"backup counted %" PRIu64 " of the aborts, without events\n",
			s->fixup_skipped, s->backup_skipped, (uint64_t)g->backup_aborts);
	if (s->events_skipped)
		fprintf(f, "the kernel skipped the scheduler and signal programs %" PRIu64
			" times: causes and migrations may lack those events\n",
			s->events_skipped);
	if (g->storage_misses)
		fprintf(f, "per-thread state: %" PRIu64 " entries could not be created: causes of "
			"those threads' aborts are unknown\n", (uint64_t)g->storage_misses);
	if (g->ringbuf_drops)
		fprintf(f, "ring buffer: %" PRIu64 " events dropped (failed reservations); the counts "
		       "above are kept in the kernel and are complete\n",
		       (uint64_t)g->ringbuf_drops);
	if (g->notify_drops)
		fprintf(f, "notify ring buffer: %" PRIu64 " section notices dropped\n",
		       (uint64_t)g->notify_drops);
	if (g->map_full)
		fprintf(f, "maps full: %" PRIu64 " aborts could not be kept per process or section\n",
		       (uint64_t)g->map_full);
}

static void json_causes(struct jw *w, const char *key, const __u64 *c)
{
	jw_key(w, key);
	jw_obj_open(w);
	for (int i = 0; i < RT_NCAUSES; i++)
		jw_ku64(w, rd_cause_name(i), c[i]);
	jw_obj_close(w);
}

void rd_summary_json(struct rd_tracer *t, const struct rd_summary *s, struct jw *w, int top)
{
	const struct rt_stats *g = &s->total;

	jw_kstr(w, "mode", rd_mode_name(t->mode));
	jw_kdouble(w, "seconds", s->seconds);
	jw_ku64(w, "aborts", g->aborts);
	jw_kdouble(w, "aborts_per_second", rate(g->aborts, s->seconds));
	if (s->recent_seconds > 0) {
		jw_kdouble(w, "recent_seconds", s->recent_seconds);
		jw_ku64(w, "recent_aborts", s->recent_aborts);
		jw_kdouble(w, "recent_aborts_per_second", rate(s->recent_aborts, s->recent_seconds));
	}
	json_causes(w, "causes", g->cause);
	jw_ku64(w, "migrations", g->migrations);
	jw_ku64(w, "cpu_id_updates", g->updates);
	jw_ku64(w, "signals", g->signals);
	jw_kdouble(w, "aborts_per_cpu_id_update",
		   g->updates ? (double)g->aborts / (double)g->updates : 0);
	jw_ku64(w, "ringbuf_drops", g->ringbuf_drops);
	jw_ku64(w, "notify_drops", g->notify_drops);
	jw_ku64(w, "map_full", g->map_full);
	jw_ku64(w, "backup_aborts", g->backup_aborts);
	jw_ku64(w, "thread_state_misses", g->storage_misses);
	jw_ku64(w, "fixup_program_skipped", s->fixup_skipped);
	jw_ku64(w, "backup_program_skipped", s->backup_skipped);
	jw_ku64(w, "event_programs_skipped", s->events_skipped);
	jw_key(w, "sections");
	jw_arr_open(w);
	for (size_t i = 0; i < s->nsections && (top <= 0 || (int)i < top); i++) {
		const struct rd_sum_section *e = &s->sections[i];
		const struct elfscan_loc *l = e->si ? &e->si->loc : NULL;

		jw_obj_open(w);
		jw_ku64(w, "pid", e->key.tgid);
		jw_kstr(w, "comm", e->v.comm);
		jw_kstr(w, "function", l ? l->func : NULL);
		jw_kstr(w, "file", l && l->line > 0 ? l->file : NULL);
		jw_key(w, "line");
		if (l && l->line > 0)
			jw_u64(w, (uint64_t)l->line);
		else
			jw_null(w);
		jw_kstr(w, "module", e->si ? e->si->module : NULL);
		jw_ku64(w, "start_ip", e->key.start_ip);
		jw_ku64(w, "post_commit_offset", e->v.post_commit_offset);
		jw_ku64(w, "abort_ip", e->v.abort_ip);
		jw_ku64(w, "aborts", e->aborts);
		jw_kdouble(w, "aborts_per_second", rate(e->aborts, s->seconds));
		if (s->recent_seconds > 0) {
			jw_ku64(w, "recent_aborts", e->recent);
			jw_kdouble(w, "recent_aborts_per_second", rate(e->recent, s->recent_seconds));
		}
		json_causes(w, "causes", e->v.aborts);
		jw_key(w, "histogram");
		jw_arr_open(w);
		for (int h = 0; h < RT_HIST_SLOTS; h++) {
			uint64_t lo, hi;

			if (!e->v.hist[h])
				continue;
			hist_bounds(h, &lo, &hi);
			jw_obj_open(w);
			if (h == RT_HIST_SLOTS - 1) {
				jw_kbool(w, "outside", true);
			} else {
				jw_ku64(w, "from", lo);
				jw_ku64(w, "to", hi);
			}
			jw_ku64(w, "count", e->v.hist[h]);
			jw_obj_close(w);
		}
		jw_arr_close(w);
		jw_obj_close(w);
	}
	jw_arr_close(w);
	jw_key(w, "processes");
	jw_arr_open(w);
	for (size_t i = 0; i < s->nprocs; i++) {
		jw_obj_open(w);
		jw_ku64(w, "pid", s->procs[i].pid);
		jw_kstr(w, "comm", s->procs[i].v.comm);
		jw_ku64(w, "aborts", s->procs[i].v.aborts);
		jw_ku64(w, "migrations", s->procs[i].v.migrations);
		jw_ku64(w, "cpu_id_updates", s->procs[i].v.updates);
		jw_ku64(w, "signals", s->procs[i].v.signals);
		jw_obj_close(w);
	}
	jw_arr_close(w);
	jw_key(w, "cpus");
	jw_arr_open(w);
	for (int c = 0; c < s->ncpus; c++) {
		jw_obj_open(w);
		jw_ku64(w, "cpu", (uint64_t)c);
		jw_ku64(w, "aborts", s->cpus[c].aborts);
		jw_ku64(w, "migrations_in", s->cpus[c].migrations_in);
		jw_ku64(w, "cpu_id_updates", s->cpus[c].updates);
		jw_obj_close(w);
	}
	jw_arr_close(w);
}

/* --- the command under trace ----------------------------------------------------------- */

int rd_child_spawn(char **argv, struct rd_child *c)
{
	int go[2], ex[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(ex, O_CLOEXEC)) {
		int err = -errno;

		close(go[0]);
		close(go[1]);
		return err;
	}
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(go[0]);
		close(go[1]);
		close(ex[0]);
		close(ex[1]);
		return err;
	}
	if (!pid) {
		char b;
		int e;

		close(go[1]);
		close(ex[0]);
		/* Wait until the tracer has our pid in its filter and is attached. */
		if (read(go[0], &b, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		e = errno;
		if (write(ex[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ex[1]);
	c->pid = pid;
	c->go_fd = go[1];
	c->err_fd = ex[0];
	return 0;
}

int rd_child_release(struct rd_child *c)
{
	char b = 1;
	int e = 0;
	ssize_t n;

	if (write(c->go_fd, &b, 1) != 1)
		e = errno;
	close(c->go_fd);
	c->go_fd = -1;
	do
		n = read(c->err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(c->err_fd);
	c->err_fd = -1;
	return n == sizeof(e) ? -e : 0;
}

void rd_child_abort(struct rd_child *c)
{
	int st;

	if (c->go_fd >= 0)
		close(c->go_fd);
	if (c->err_fd >= 0)
		close(c->err_fd);
	c->go_fd = c->err_fd = -1;
	if (c->pid > 0)
		waitpid(c->pid, &st, 0); /* it exits when the go pipe closes */
	c->pid = 0;
}

int rd_wait_status(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return EXIT_ERROR;
}

static void on_stop(int sig)
{
	rd_tracer_stop = sig;
}

static void on_child(int sig)
{
}

void rd_tracer_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop };

	/* No SA_RESTART: the signal ends the ring buffer's epoll_wait at once. SIGCHLD too, so
	 * the end of the command is seen without waiting for the poll timeout. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_child;
	sigaction(SIGCHLD, &sa, NULL);
}
