// SPDX-License-Identifier: GPL-2.0-only
/* A summary of rseq activity, built from the counts of the BPF maps and printed for people or
 * as JSON. Nothing here touches the kernel: tests build summaries by hand. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "summary.h"
#include "symfmt.h"

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

int rd_summary_init(struct rd_summary *s, int ncpus, enum rd_trace_mode mode, double seconds)
{
	memset(s, 0, sizeof(*s));
	s->ncpus = ncpus;
	s->mode = mode;
	s->seconds = seconds;
	s->percpu_stats = calloc(ncpus > 0 ? ncpus : 1, sizeof(*s->percpu_stats));
	s->cpus = calloc(ncpus > 0 ? ncpus : 1, sizeof(*s->cpus));
	if (!s->percpu_stats || !s->cpus) {
		rd_summary_free(s);
		return -ENOMEM;
	}
	return 0;
}

/* Room for one more of n elements of size sz in *v (capacity *cap). */
static int grow(void *v, size_t n, size_t *cap, size_t sz)
{
	void *nv;
	size_t ncap;

	if (n < *cap)
		return 0;
	ncap = *cap ? 2 * *cap : 16;
	nv = realloc(*(void **)v, ncap * sz);
	if (!nv)
		return -ENOMEM;
	*(void **)v = nv;
	*cap = ncap;
	return 0;
}

int rd_summary_add_section(struct rd_summary *s, const struct rt_section_key *key,
			   const struct rt_section *v, const struct rd_secinfo *si)
{
	struct rd_sum_section *e;

	if (grow(&s->sections, s->nsections, &s->cap_sections, sizeof(*e)))
		return -ENOMEM;
	e = &s->sections[s->nsections++];
	memset(e, 0, sizeof(*e));
	e->key = *key;
	e->v = *v;
	e->si = si;
	for (int c = 0; c < RT_NCAUSES; c++)
		e->aborts += v->aborts[c];
	return 0;
}

int rd_summary_add_proc(struct rd_summary *s, uint32_t pid, const struct rt_proc *v)
{
	if (grow(&s->procs, s->nprocs, &s->cap_procs, sizeof(*s->procs)))
		return -ENOMEM;
	s->procs[s->nprocs].pid = pid;
	s->procs[s->nprocs++].v = *v;
	return 0;
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

void rd_summary_finish(struct rd_summary *s)
{
	memset(&s->total, 0, sizeof(s->total));
	for (int c = 0; c < s->ncpus; c++) {
		const __u64 *src = (const __u64 *)&s->percpu_stats[c];
		__u64 *dst = (__u64 *)&s->total;

		for (size_t i = 0; i < sizeof(s->total) / sizeof(__u64); i++)
			dst[i] += src[i];
	}
	if (s->nsections)
		qsort(s->sections, s->nsections, sizeof(*s->sections), cmp_sections);
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
	if (e->si && (e->si->loc.func || e->si->loc.section))
		return rd_loc_str(&e->si->loc, buf, len);
	snprintf(buf, len, "%#" PRIx64, (uint64_t)e->key.start_ip);
	return buf;
}

/* The abort handler, named as the events name it: in the section's module, by symbol; NULL
 * when the module is unknown. */
static const char *handler_name(const struct rd_sum_section *e, char *buf, size_t len)
{
	const struct rd_secinfo *si = e->si;

	if (!si || !si->es)
		return NULL;
	return rd_modsym_str(si->es, si->module,
			     si->link_start + (uint64_t)(e->v.abort_ip - e->key.start_ip), buf,
			     len);
}

static double rate(uint64_t n, double secs)
{
	return secs > 0 ? (double)n / secs : 0;
}

static void print_totals(const struct rd_summary *s, FILE *f)
{
	const struct rt_stats *g = &s->total;

	fprintf(f, "%.3f s, mode %s\n", s->seconds, rd_mode_name(s->mode));
	if (s->attached)
		fprintf(f,
			"counted from the start of tracing: what the processes did before is "
			"not counted%s\n",
			s->uprobes ? ", and a kernel abort just before whose handler ran after is "
				     "counted as a branch"
				   : "");
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
	if (s->uprobes)
		fprintf(f,
			"handler entries %10" PRIu64 "  (%" PRIu64 " after kernel aborts, %" PRIu64
			" from branches in user space)\n",
			(uint64_t)g->handler_entries,
			(uint64_t)(g->handler_entries - g->user_aborts), (uint64_t)g->user_aborts);
}

/* The histogram of where in a section its aborts hit, one bar a slot. */
static void print_hist(const struct rd_sum_section *e, FILE *f)
{
	uint64_t max = 0;

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

/* Kernel aborts of a section whose handler entry was not seen: none can be, so any means its
 * uprobe came after them (or their thread ended first), and its entries are a lower bound. */
static uint64_t entries_missing(const struct rd_summary *s, const struct rd_sum_section *e)
{
	return s->uprobes && e->aborts > e->v.entries_kernel ? e->aborts - e->v.entries_kernel : 0;
}

static void print_section(const struct rd_summary *s, const struct rd_sum_section *e, FILE *f)
{
	const __u64 *a = e->v.aborts;
	const char *mod = e->si ? e->si->module : NULL;
	char name[RD_LOC_LEN], hbuf[RD_LOC_LEN];
	const char *handler = handler_name(e, hbuf, sizeof(hbuf));

	fprintf(f,
		"%-8u %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64
		" %10" PRIu64 "  %s\n",
		e->key.tgid, e->aborts, (uint64_t)a[RT_CAUSE_PREEMPT], (uint64_t)a[RT_CAUSE_SIGNAL],
		(uint64_t)a[RT_CAUSE_MIGRATE], (uint64_t)a[RT_CAUSE_DEFERRED],
		(uint64_t)a[RT_CAUSE_UNKNOWN], section_name(e, name, sizeof(name)));
	fprintf(f,
		"%-8s %-.15s, %.1f aborts/s, section %#" PRIx64 "+%" PRIu64 " abort %#" PRIx64
		"%s%s%s%s\n",
		"", rd_safe(e->v.comm), rate(e->aborts, s->seconds), (uint64_t)e->key.start_ip,
		(uint64_t)e->v.post_commit_offset, (uint64_t)e->v.abort_ip, handler ? " " : "",
		handler ? handler : "", mod ? " in " : "", mod ? rd_safe(mod) : "");
	if (s->recent_seconds > 0)
		fprintf(f, "%-8s last %.3f s: %" PRIu64 " aborts, %.1f/s\n", "", s->recent_seconds,
			e->recent, rate(e->recent, s->recent_seconds));
	if (s->uprobes)
		fprintf(f,
			"%-8s handler entries %" PRIu64 ": %" PRIu64
			" after kernel aborts, %" PRIu64 " from branches in user space\n",
			"", (uint64_t)(e->v.entries_kernel + e->v.entries_user),
			(uint64_t)e->v.entries_kernel, (uint64_t)e->v.entries_user);
	if (entries_missing(s, e))
		fprintf(f,
			"%-8s not every entry seen: %" PRIu64
			" of its aborts have no handler entry "
			"(its uprobe came later, or the thread ended first): the entries are a "
			"lower bound\n",
			"", entries_missing(s, e));
	print_hist(e, f);
}

static void print_cpus(const struct rd_summary *s, FILE *f)
{
	fprintf(f, "\n%-4s %10s %14s %14s\n", "CPU", "ABORTS", "MIGRATIONS-IN", "CPU_ID-UPDATES");
	for (int c = 0; c < s->ncpus; c++) {
		if (!s->cpus[c].aborts && !s->cpus[c].migrations_in && !s->cpus[c].updates)
			continue;
		fprintf(f, "%-4d %10" PRIu64 " %14" PRIu64 " %14" PRIu64 "\n", c,
			(uint64_t)s->cpus[c].aborts, (uint64_t)s->cpus[c].migrations_in,
			(uint64_t)s->cpus[c].updates);
	}
}

/* What was lost on the way, one line a kind, after a blank line when anything was. */
static void print_losses(const struct rd_summary *s, FILE *f)
{
	const struct rt_stats *g = &s->total;

	if (g->ringbuf_drops || g->notify_drops || g->map_full || g->storage_misses ||
	    s->fixup_skipped || s->backup_skipped || s->events_skipped || s->uprobe_failures ||
	    s->uprobe_skipped || g->hold_misses)
		fprintf(f, "\n");
	if (s->uprobe_failures)
		fprintf(f,
			"uprobes: %" PRIu64 " abort handlers could not be probed: their entries "
			"are not counted\n",
			s->uprobe_failures);
	if (g->hold_misses)
		fprintf(f,
			"uprobes: %" PRIu64 " new programs or libraries could not be held until "
			"probed: their first handler entries may be missing\n",
			(uint64_t)g->hold_misses);
	if (s->uprobe_skipped)
		fprintf(f,
			"uprobes: the kernel skipped the handler program %" PRIu64
			" times: handler entries are short by as many\n",
			s->uprobe_skipped);
	if (s->fixup_skipped || s->backup_skipped)
		fprintf(f,
			"the kernel skipped the abort program %" PRIu64
			" times and its backup %" PRIu64
			" times (a program already running on that CPU; any process); the "
			"backup counted %" PRIu64 " of the aborts (their events included)\n",
			s->fixup_skipped, s->backup_skipped, (uint64_t)g->backup_aborts);
	if (s->events_skipped)
		fprintf(f,
			"the kernel skipped the scheduler and signal programs %" PRIu64
			" times: causes and migrations may lack those events\n",
			s->events_skipped);
	if (g->storage_misses)
		fprintf(f,
			"per-thread state: %" PRIu64 " entries could not be created: causes of "
			"those threads' aborts are unknown\n",
			(uint64_t)g->storage_misses);
	if (g->ringbuf_drops)
		fprintf(f,
			"ring buffer: %" PRIu64 " events dropped (failed reservations); the counts "
			"above are kept in the kernel and are complete\n",
			(uint64_t)g->ringbuf_drops);
	if (g->notify_drops)
		fprintf(f, "notify ring buffer: %" PRIu64 " section notices dropped\n",
			(uint64_t)g->notify_drops);
	if (g->map_full)
		fprintf(f,
			"maps full: %" PRIu64 " aborts could not be kept per process or section\n",
			(uint64_t)g->map_full);
}

void rd_summary_print(const struct rd_summary *s, int top, FILE *f)
{
	print_totals(s, f);
	if (s->nsections)
		fprintf(f, "\n%-8s %10s %10s %10s %10s %10s %10s  %s\n", "PID", "ABORTS", "PREEMPT",
			"SIGNAL", "MIGRATE", "DEFERRED", "UNKNOWN", "SECTION");
	for (size_t i = 0; i < s->nsections && (top <= 0 || (int)i < top); i++)
		print_section(s, &s->sections[i], f);
	print_cpus(s, f);
	print_losses(s, f);
}

void rd_json_section(struct jw *w, const struct rd_secinfo *si, uint64_t start_ip,
		     uint64_t post_commit_offset, uint64_t abort_ip)
{
	/* Its start is symbolized already; without the file the other locations are addresses. */
	rd_json_section_members(w, si ? si->es : NULL, si && si->es ? start_ip - si->link_start : 0,
				si ? si->module : NULL, start_ip, post_commit_offset, abort_ip,
				si ? &si->loc : NULL);
}

static void json_causes(struct jw *w, const char *key, const __u64 *c)
{
	jw_key(w, key);
	jw_obj_open(w);
	for (int i = 0; i < RT_NCAUSES; i++)
		jw_ku64(w, rd_cause_name(i), c[i]);
	jw_obj_close(w);
}

/* "handler_entries" and "user_aborts", null without uprobes. */
static void json_entries(struct jw *w, const struct rd_summary *s, uint64_t entries, uint64_t user)
{
	jw_key(w, "handler_entries");
	if (s->uprobes)
		jw_u64(w, entries);
	else
		jw_null(w);
	jw_key(w, "user_aborts");
	if (s->uprobes)
		jw_u64(w, user);
	else
		jw_null(w);
}

static void json_totals(const struct rd_summary *s, struct jw *w)
{
	const struct rt_stats *g = &s->total;

	jw_kstr(w, "mode", rd_mode_name(s->mode));
	jw_kdouble(w, "seconds", s->seconds);
	jw_kstr(w, "counted_from", s->attached ? "attach" : "start");
	jw_ku64(w, "aborts", g->aborts);
	jw_kdouble(w, "aborts_per_second", rate(g->aborts, s->seconds));
	if (s->recent_seconds > 0) {
		jw_kdouble(w, "recent_seconds", s->recent_seconds);
		jw_ku64(w, "recent_aborts", s->recent_aborts);
		jw_kdouble(w, "recent_aborts_per_second",
			   rate(s->recent_aborts, s->recent_seconds));
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
	json_entries(w, s, g->handler_entries, g->user_aborts);
	jw_key(w, "uprobes");
	if (!s->uprobes) {
		jw_null(w);
		return;
	}
	jw_obj_open(w);
	jw_ku64(w, "attached", s->uprobes_attached);
	jw_ku64(w, "failed", s->uprobe_failures);
	jw_ku64(w, "program_skipped", s->uprobe_skipped);
	jw_ku64(w, "holds", g->holds);
	jw_ku64(w, "hold_misses", g->hold_misses);
	jw_obj_close(w);
}

static void json_hist(const struct rd_sum_section *e, struct jw *w)
{
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
}

static void json_section(const struct rd_summary *s, const struct rd_sum_section *e, struct jw *w)
{
	char hbuf[RD_LOC_LEN];

	jw_obj_open(w);
	jw_ku64(w, "pid", e->key.tgid);
	jw_kstr(w, "comm", e->v.comm);
	rd_json_section(w, e->si, e->key.start_ip, e->v.post_commit_offset, e->v.abort_ip);
	jw_kstr(w, "abort_handler", handler_name(e, hbuf, sizeof(hbuf)));
	jw_ku64(w, "aborts", e->aborts);
	json_entries(w, s, e->v.entries_kernel + e->v.entries_user, e->v.entries_user);
	jw_key(w, "handler_entries_missing");
	if (s->uprobes)
		jw_u64(w, entries_missing(s, e));
	else
		jw_null(w);
	jw_kdouble(w, "aborts_per_second", rate(e->aborts, s->seconds));
	if (s->recent_seconds > 0) {
		jw_ku64(w, "recent_aborts", e->recent);
		jw_kdouble(w, "recent_aborts_per_second", rate(e->recent, s->recent_seconds));
	}
	json_causes(w, "causes", e->v.aborts);
	json_hist(e, w);
	jw_obj_close(w);
}

static void json_procs_cpus(const struct rd_summary *s, struct jw *w)
{
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

void rd_summary_json(const struct rd_summary *s, struct jw *w, int top)
{
	json_totals(s, w);
	jw_key(w, "sections");
	jw_arr_open(w);
	for (size_t i = 0; i < s->nsections && (top <= 0 || (int)i < top); i++)
		json_section(s, &s->sections[i], w);
	jw_arr_close(w);
	json_procs_cpus(s, w);
}
