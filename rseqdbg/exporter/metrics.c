// SPDX-License-Identifier: GPL-2.0-only
/* The exporter's counters. The maps count per (process, section); a series counts per
 * (comm, function, module, cause), across processes, so that the number of series follows
 * the code that runs and not the processes that ran it. Each update adds to the series what
 * each map entry gained since the previous one, and an entry that leaves the maps (its process
 * exited) leaves its counts where they are: a series never goes backwards. */
#include <errno.h>
#include <inttypes.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>

#include "exporter/metrics.h"
#include "symfmt.h"

#define OTHER "(other)"

/* A series' kind: an abort cause (rseq_aborts_total), or one of the two kinds of entries into
 * an abort handler (rseq_abort_handler_entries_total). */
#define ENTRY_KERNEL RT_NCAUSES
#define ENTRY_USER (RT_NCAUSES + 1)
#define NKINDS (RT_NCAUSES + 2)
/* A kind's family: 0 for rseq_aborts_total, 1 for rseq_abort_handler_entries_total. */
#define FAMILY(kind) ((kind) >= RT_NCAUSES)

struct series {
	char *comm, *function, *module;
	char *cgroup;	/* "" without --cgroup-label */
	uint32_t cause; /* the kind */
	bool other;	/* the "(other)" series of its cause */
	uint64_t value;
};

/* What a map entry (process, section) had at the previous update, and its series. */
struct record {
	pid_t pid;
	uint64_t start_ip;
	uint64_t last[NKINDS];
	struct series *series[NKINDS];
};

struct rd_metrics {
	struct rd_metrics_opts o;
	struct series **series; /* in the order they appeared */
	size_t nseries, cap;
	size_t own[2];	  /* series of each family but "(other)": what --max-series bounds */
	size_t family[2]; /* series of each family, "(other)" included */
	void *series_tree, *record_tree; /* tsearch() trees */
	void *cgroup_tree;		 /* struct pid_cgroup, of processes not forgotten */
	uint64_t folded;		 /* aborts counted into "(other)" */
	uint64_t exited;		 /* processes forgotten */
	struct rt_stats total;
	struct rt_cpu *cpus;
	uint64_t *cpu_signals;
	int ncpus;
	uint64_t skipped[3]; /* fixup, backup, event programs */
	struct rd_proc_self self;
	bool has_self;
};

/* A process's cgroup, kept from when it was first read: a kind of abort first counted after
 * the process exited still has it. */
struct pid_cgroup {
	pid_t pid;
	char *path;
};

static int cmp_pid_cgroup(const void *a, const void *b)
{
	pid_t x = ((const struct pid_cgroup *)a)->pid, y = ((const struct pid_cgroup *)b)->pid;

	return x < y ? -1 : x > y;
}

static void free_pid_cgroup(void *p)
{
	struct pid_cgroup *c = p;

	free(c->path);
	free(c);
}

static int cmp_series(const void *a, const void *b)
{
	const struct series *x = a, *y = b;
	int r;

	if (x->cause != y->cause)
		return x->cause < y->cause ? -1 : 1;
	r = strcmp(x->comm, y->comm);
	if (!r)
		r = strcmp(x->function, y->function);
	if (!r)
		r = strcmp(x->module, y->module);
	return r ? r : strcmp(x->cgroup, y->cgroup);
}

static int cmp_record(const void *a, const void *b)
{
	const struct record *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->start_ip < y->start_ip ? -1 : x->start_ip > y->start_ip;
}

int rd_metrics_new(const struct rd_metrics_opts *o, struct rd_metrics **res)
{
	struct rd_metrics *m = calloc(1, sizeof(*m));

	*res = m;
	if (!m)
		return -ENOMEM;
	m->o = *o;
	return 0;
}

static void free_series(void *p)
{
	struct series *s = p;

	free(s->comm);
	free(s->function);
	free(s->module);
	free(s->cgroup);
	free(s);
}

void rd_metrics_free(struct rd_metrics *m)
{
	if (!m)
		return;
	tdestroy(m->record_tree, free);
	tdestroy(m->cgroup_tree, free_pid_cgroup);
	tdestroy(m->series_tree, free_series);
	free(m->series);
	free(m->cpus);
	free(m->cpu_signals);
	free(m);
}

/* The labels of a section: its function, or its address in its file, or "unknown". */
static void section_labels(const struct rd_sum_section *e, char *func, size_t len,
			   const char **module)
{
	const struct rd_secinfo *si = e->si;

	*module = si && si->module ? si->module : "unknown";
	if (si && si->loc.func && si->loc.inlined)
		snprintf(func, len, "%s inlined in %s", si->loc.inlined, si->loc.func);
	else if (si && si->loc.func)
		snprintf(func, len, "%s", si->loc.func);
	else if (si && si->es)
		snprintf(func, len, "%#" PRIx64, si->link_start);
	else
		snprintf(func, len, "unknown");
}

/* The series of labels l (made printable) and cause, made when new: NULL when out of memory. */
static struct series *series_get(struct rd_metrics *m, const struct series *l, uint32_t cause)
{
	struct series key = *l, *s, **v;
	void *found;

	key.cause = cause;
	found = tfind(&key, &m->series_tree, cmp_series);
	if (found)
		return *(struct series **)found;
	if (m->nseries == m->cap) {
		v = realloc(m->series, (m->cap ? 2 * m->cap : 64) * sizeof(*v));
		if (!v)
			return NULL;
		m->series = v;
		m->cap = m->cap ? 2 * m->cap : 64;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->comm = strdup(l->comm);
	s->function = strdup(l->function);
	s->module = strdup(l->module);
	s->cgroup = strdup(l->cgroup);
	s->cause = cause;
	if (!s->comm || !s->function || !s->module || !s->cgroup ||
	    !tsearch(s, &m->series_tree, cmp_series)) {
		free_series(s);
		return NULL;
	}
	m->series[m->nseries++] = s;
	m->family[FAMILY(cause)]++;
	return s;
}

/* The cgroup label of process pid into buf: as first read, or "unknown" when it could not
 * be read (the process had exited). */
static void cgroup_label(struct rd_metrics *m, pid_t pid, char *buf, size_t len)
{
	struct pid_cgroup key = {.pid = pid}, *c;
	void *found = tfind(&key, &m->cgroup_tree, cmp_pid_cgroup);

	if (found) {
		snprintf(buf, len, "%s", (*(struct pid_cgroup **)found)->path);
		return;
	}
	if (m->o.cgroup_of(m->o.cgroup_ctx, pid, buf, len)) {
		snprintf(buf, len, "unknown");
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return; /* read again next time */
	c->pid = pid;
	c->path = strdup(buf);
	if (!c->path || !tsearch(c, &m->cgroup_tree, cmp_pid_cgroup))
		free_pid_cgroup(c);
}

/* The series a section's kind counts into: its own, or "(other)" once its family has
 * --max-series of its own. */
static struct series *series_for(struct rd_metrics *m, const struct rd_sum_section *e,
				 uint32_t cause)
{
	static char other[] = OTHER, none[] = "";
	char raw[1024], comm[4 * RT_COMM_LEN + 1], func[1024], module[4096], cgroup[4096];
	struct series l = {comm, func, module, cgroup, cause, false, 0}, *s;
	const char *mod;
	void *found;

	/* Names as the other commands print them: valid UTF-8, no control characters. */
	snprintf(raw, sizeof(raw), "%.*s", RT_COMM_LEN, e->v.comm);
	snprintf(comm, sizeof(comm), "%s", rd_safe(raw));
	section_labels(e, raw, sizeof(raw), &mod);
	snprintf(func, sizeof(func), "%s", rd_safe(raw));
	snprintf(module, sizeof(module), "%s", rd_safe(mod));
	if (!m->o.cgroup_of)
		l.cgroup = none;
	else {
		cgroup_label(m, (pid_t)e->key.tgid, raw, sizeof(raw));
		snprintf(cgroup, sizeof(cgroup), "%s", rd_safe(raw));
	}
	found = tfind(&l, &m->series_tree, cmp_series);
	if (found)
		return *(struct series **)found;
	if (m->own[FAMILY(cause)] < m->o.max_series) {
		s = series_get(m, &l, cause);
		if (s)
			m->own[FAMILY(cause)]++;
		return s;
	}
	l = (struct series){other, other, other, m->o.cgroup_of ? other : none, cause, false, 0};
	s = series_get(m, &l, cause);
	if (s)
		s->other = true;
	return s;
}

static struct record *record_get(struct rd_metrics *m, pid_t pid, uint64_t start_ip)
{
	struct record key = {.pid = pid, .start_ip = start_ip}, *r;
	void *found = tfind(&key, &m->record_tree, cmp_record);

	if (found)
		return *(struct record **)found;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	*r = key;
	if (!tsearch(r, &m->record_tree, cmp_record)) {
		free(r);
		return NULL;
	}
	return r;
}

static int add_section(struct rd_metrics *m, const struct rd_sum_section *e)
{
	struct record *r = record_get(m, (pid_t)e->key.tgid, e->key.start_ip);

	if (!r)
		return -ENOMEM;
	for (uint32_t c = 0; c < NKINDS; c++) {
		uint64_t now = c < RT_NCAUSES	   ? e->v.aborts[c]
			       : c == ENTRY_KERNEL ? e->v.entries_kernel
						   : e->v.entries_user;
		/* Less than before: the process id was reused by a process whose entry was
		 * made after the previous one's was deleted. */
		uint64_t delta = now >= r->last[c] ? now - r->last[c] : now;

		if (!delta)
			continue;
		if (!r->series[c])
			r->series[c] = series_for(m, e, c);
		if (!r->series[c])
			return -ENOMEM;
		r->series[c]->value += delta;
		if (r->series[c]->other && c < RT_NCAUSES)
			m->folded += delta;
		r->last[c] = now;
	}
	return 0;
}

int rd_metrics_update(struct rd_metrics *m, const struct rd_summary *s)
{
	if (!m->cpus || m->ncpus != s->ncpus) {
		size_t n = s->ncpus > 0 ? (size_t)s->ncpus : 1;
		struct rt_cpu *c = realloc(m->cpus, n * sizeof(*c));
		uint64_t *sig;

		if (!c)
			return -ENOMEM;
		m->cpus = c;
		sig = realloc(m->cpu_signals, n * sizeof(*sig));
		if (!sig)
			return -ENOMEM;
		m->cpu_signals = sig;
		m->ncpus = s->ncpus;
	}
	memcpy(m->cpus, s->cpus, (size_t)s->ncpus * sizeof(*m->cpus));
	for (int c = 0; c < s->ncpus; c++)
		m->cpu_signals[c] = s->percpu_stats[c].signals;
	m->total = s->total;
	m->skipped[0] = s->fixup_skipped;
	m->skipped[1] = s->backup_skipped;
	m->skipped[2] = s->events_skipped;
	for (size_t i = 0; i < s->nsections; i++)
		if (add_section(m, &s->sections[i]))
			return -ENOMEM;
	return 0;
}

struct forget_ctx {
	const pid_t *pids;
	size_t n;
	struct record **gone;
	size_t ngone, cap;
};

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

static void collect(const void *node, VISIT which, void *arg)
{
	struct forget_ctx *f = arg;
	struct record *r = *(struct record *const *)node;
	struct record **v;

	if (which != postorder && which != leaf)
		return;
	if (!bsearch(&r->pid, f->pids, f->n, sizeof(*f->pids), cmp_pid))
		return;
	if (f->ngone == f->cap) {
		v = realloc(f->gone, (f->cap ? 2 * f->cap : 16) * sizeof(*v));
		if (!v)
			return; /* kept: its process id starts where it left off */
		f->gone = v;
		f->cap = f->cap ? 2 * f->cap : 16;
	}
	f->gone[f->ngone++] = r;
}

void rd_metrics_forget(struct rd_metrics *m, const pid_t *pids, size_t n)
{
	struct forget_ctx f = {pids, n, NULL, 0, 0};

	if (!n)
		return;
	twalk_r(m->record_tree, collect, &f);
	for (size_t i = 0; i < f.ngone; i++) {
		tdelete(f.gone[i], &m->record_tree, cmp_record);
		free(f.gone[i]);
	}
	free(f.gone);
	for (size_t i = 0; i < n; i++) {
		struct pid_cgroup key = {.pid = pids[i]}, *c;
		void *found = tfind(&key, &m->cgroup_tree, cmp_pid_cgroup);

		if (!found)
			continue;
		c = *(struct pid_cgroup **)found;
		tdelete(c, &m->cgroup_tree, cmp_pid_cgroup);
		free_pid_cgroup(c);
	}
	m->exited += n;
}

void rd_metrics_set_self(struct rd_metrics *m, const struct rd_proc_self *p)
{
	m->has_self = p != NULL;
	if (p)
		m->self = *p;
}

size_t rd_metrics_series(const struct rd_metrics *m)
{
	return m->family[0];
}

uint64_t rd_metrics_folded(const struct rd_metrics *m)
{
	return m->folded;
}

const char *rd_metrics_content_type(enum rd_metrics_format fmt)
{
	return fmt == RD_FMT_OPENMETRICS
		   ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
		   : "text/plain; version=0.0.4; charset=utf-8";
}

/* A label value: rd_safe() already made it printable UTF-8; '\' and '"' are escaped. */
static void put_value(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f);
		fputc(*s, f);
	}
}

/* The cgroup label, with --cgroup-label, after another label's value. */
static void put_cgroup(const struct rd_metrics *m, const struct series *s, FILE *f)
{
	if (!m->o.cgroup_of)
		return;
	fputs("\",cgroup=\"", f);
	put_value(f, s->cgroup);
}

/* The HELP and TYPE lines of a family. OpenMetrics names a counter family without its
 * "_total" suffix and has an info type; the Prometheus format names the sample. */
static void family(FILE *f, enum rd_metrics_format fmt, const char *name, const char *type,
		   const char *help)
{
	bool om = fmt == RD_FMT_OPENMETRICS;
	const char *suffix = "";

	if (!om && !strcmp(type, "counter"))
		suffix = "_total";
	else if (!om && !strcmp(type, "info"))
		suffix = "_info";
	fprintf(f, "# HELP %s%s %s\n", name, suffix, help);
	fprintf(f, "# TYPE %s%s %s\n", name, suffix, om || strcmp(type, "info") ? type : "gauge");
}

static void counter(FILE *f, enum rd_metrics_format fmt, const char *name, const char *help,
		    uint64_t v)
{
	family(f, fmt, name, "counter", help);
	fprintf(f, "%s_total %" PRIu64 "\n", name, v);
}

/* A series' name and its labels but the last: NAME{comm="",function="",module=""[,cgroup=""] */
static void put_series(const struct rd_metrics *m, const struct series *s, const char *name,
		       FILE *f)
{
	fprintf(f, "%s{comm=\"", name);
	put_value(f, s->comm);
	fputs("\",function=\"", f);
	put_value(f, s->function);
	fputs("\",module=\"", f);
	put_value(f, s->module);
	put_cgroup(m, s, f);
}

static void write_aborts(const struct rd_metrics *m, enum rd_metrics_format fmt, FILE *f)
{
	family(f, fmt, "rseq_aborts", "counter",
	       "rseq critical sections aborted, by command name, function, module and cause.");
	for (size_t i = 0; i < m->nseries; i++) {
		const struct series *s = m->series[i];

		if (s->cause >= RT_NCAUSES)
			continue;
		put_series(m, s, "rseq_aborts_total", f);
		fprintf(f, "\",cause=\"%s\"} %" PRIu64 "\n", rd_cause_name(s->cause), s->value);
	}
	if (!m->o.uprobes)
		return;
	family(f, fmt, "rseq_abort_handler_entries", "counter",
	       "Entries into abort handlers (uprobes), by command name, function, module and "
	       "kind: after a kernel abort, or a branch in user space.");
	for (size_t i = 0; i < m->nseries; i++) {
		const struct series *s = m->series[i];

		if (s->cause < RT_NCAUSES)
			continue;
		put_series(m, s, "rseq_abort_handler_entries_total", f);
		fprintf(f, "\",kind=\"%s\"} %" PRIu64 "\n",
			s->cause == ENTRY_KERNEL ? "kernel" : "user", s->value);
	}
}

static void write_percpu(const struct rd_metrics *m, enum rd_metrics_format fmt, FILE *f)
{
	static const struct {
		const char *name, *help;
		size_t off;
	} fam[] = {
	    {"rseq_percpu_aborts", "rseq aborts, by CPU.", offsetof(struct rt_cpu, aborts)},
	    {"rseq_percpu_migrations", "Migrations of traced threads onto each CPU.",
	     offsetof(struct rt_cpu, migrations_in)},
	    {"rseq_percpu_cpu_id_updates", "rseq cpu_id updates, by CPU.",
	     offsetof(struct rt_cpu, updates)},
	};

	for (size_t k = 0; k < sizeof(fam) / sizeof(fam[0]); k++) {
		family(f, fmt, fam[k].name, "counter", fam[k].help);
		for (int c = 0; c < m->ncpus; c++)
			fprintf(f, "%s_total{cpu=\"%d\"} %" PRIu64 "\n", fam[k].name, c,
				(uint64_t) *
				    (const __u64 *)((const char *)&m->cpus[c] + fam[k].off));
	}
	/* Counted on the CPU the signal was delivered on. */
	family(f, fmt, "rseq_percpu_signals", "counter",
	       "Signals delivered to traced threads, by CPU.");
	for (int c = 0; c < m->ncpus; c++)
		fprintf(f, "rseq_percpu_signals_total{cpu=\"%d\"} %" PRIu64 "\n", c,
			m->cpu_signals[c]);
}

static void write_self(const struct rd_metrics *m, enum rd_metrics_format fmt, FILE *f)
{
	const struct rt_stats *g = &m->total;
	static const char *const prog[] = {"abort", "abort_backup", "events"};

	family(f, fmt, "rseqdbg_ringbuf_drops", "counter",
	       "Ring buffer reservations that failed (the counters above are kept in the kernel "
	       "and stay complete).");
	fprintf(f, "rseqdbg_ringbuf_drops_total{ring=\"events\"} %" PRIu64 "\n",
		(uint64_t)g->ringbuf_drops);
	fprintf(f, "rseqdbg_ringbuf_drops_total{ring=\"notify\"} %" PRIu64 "\n",
		(uint64_t)g->notify_drops);
	counter(f, fmt, "rseqdbg_aborts_unattributed",
		"Aborts counted in no section because the section map was full.",
		(uint64_t)g->map_full);
	family(f, fmt, "rseqdbg_program_skips", "counter",
	       "Runs of a tracing program the kernel skipped because one was already running on "
	       "the CPU (abort_backup counts the aborts its skips would have lost).");
	for (int i = 0; i < 3; i++)
		fprintf(f, "rseqdbg_program_skips_total{program=\"%s\"} %" PRIu64 "\n", prog[i],
			m->skipped[i]);
	counter(f, fmt, "rseqdbg_aborts_folded",
		"Aborts counted in the comm=\"(other)\" series because --max-series was reached.",
		m->folded);
	counter(f, fmt, "rseqdbg_processes_exited",
		"Processes that exited, whose sections left the maps and stay in their series.",
		m->exited);
	family(f, fmt, "rseqdbg_abort_series", "gauge",
	       "Series of rseq_aborts_total, the (other) ones included.");
	fprintf(f, "rseqdbg_abort_series %zu\n", m->family[0]);
}

/* The families and help texts of the Prometheus client libraries. */
static void write_process(const struct rd_proc_self *p, enum rd_metrics_format fmt, FILE *f)
{
	family(f, fmt, "process_cpu_seconds", "counter",
	       "Total user and system CPU time spent in seconds.");
	fprintf(f, "process_cpu_seconds_total %.2f\n", p->cpu_seconds);
	family(f, fmt, "process_max_fds", "gauge", "Maximum number of open file descriptors.");
	fprintf(f, "process_max_fds %" PRIu64 "\n", p->max_fds);
	family(f, fmt, "process_open_fds", "gauge", "Number of open file descriptors.");
	fprintf(f, "process_open_fds %" PRIu64 "\n", p->open_fds);
	family(f, fmt, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
	fprintf(f, "process_resident_memory_bytes %" PRIu64 "\n", p->resident_bytes);
	family(f, fmt, "process_start_time_seconds", "gauge",
	       "Start time of the process since unix epoch in seconds.");
	fprintf(f, "process_start_time_seconds %.2f\n", p->start_time);
	family(f, fmt, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.");
	fprintf(f, "process_virtual_memory_bytes %" PRIu64 "\n", p->virtual_bytes);
}

void rd_metrics_write(const struct rd_metrics *m, enum rd_metrics_format fmt, FILE *f)
{
	const struct rt_stats *g = &m->total;

	family(f, fmt, "rseqdbg", "info", "The exporter: version, attribution mode and kernel.");
	fputs("rseqdbg_info{version=\"", f);
	put_value(f, m->o.version ? m->o.version : "");
	fprintf(f, "\",mode=\"%s\",kernel=\"", rd_mode_name(m->o.mode));
	put_value(f, m->o.kernel ? m->o.kernel : "");
	fputs("\"} 1\n", f);
	write_aborts(m, fmt, f);
	counter(f, fmt, "rseq_migrations", "Migrations of traced threads to another CPU.",
		(uint64_t)g->migrations);
	counter(f, fmt, "rseq_cpu_id_updates",
		"rseq cpu_id updates (the kernel's rseq_update) of traced threads.",
		(uint64_t)g->updates);
	counter(f, fmt, "rseq_signals", "Signals delivered to traced threads.",
		(uint64_t)g->signals);
	if (m->o.per_cpu)
		write_percpu(m, fmt, f);
	write_self(m, fmt, f);
	if (m->has_self)
		write_process(&m->self, fmt, f);
	if (fmt == RD_FMT_OPENMETRICS)
		fputs("# EOF\n", f);
}
