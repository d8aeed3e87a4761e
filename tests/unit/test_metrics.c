// SPDX-License-Identifier: GPL-2.0-only
/* The exporter's counters without a kernel: summaries as the maps would hold them, one after
 * another, with processes exiting and process ids reused; the series never go backwards, the
 * limit folds the rest, and the exposition in both formats byte for byte. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common.h"
#include "exporter/metrics.h"
#include "unit.h"

struct rd_global rd; /* the tool's globals, defined by its main.c */

static const struct rd_secinfo si_add = {
    .module = "/usr/lib/libwl.so",
    .loc = {.func = "wl_add", .file = "wl.S", .line = 10},
};
static const struct rd_secinfo si_push = {
    .module = "/usr/lib/libwl.so",
    .loc = {.func = "wl_push", .file = "wl.S", .line = 40},
};

static void section(struct rd_summary *s, uint32_t pid, const char *comm, uint64_t start,
		    uint64_t preempt, uint64_t signal, const struct rd_secinfo *si)
{
	struct rt_section_key key = {.tgid = pid, .start_ip = start};
	struct rt_section v = {
	    .aborts = {[RT_CAUSE_PREEMPT] = preempt, [RT_CAUSE_SIGNAL] = signal}};

	snprintf(v.comm, sizeof(v.comm), "%s", comm);
	assert_int_equal(rd_summary_add_section(s, &key, &v, si), 0);
}

/* An empty summary of two CPUs whose global counters are n times a base. */
static void init(struct rd_summary *s, uint64_t n)
{
	assert_int_equal(rd_summary_init(s, 2, RD_MODE_EVENT_MASK, 1.0), 0);
	s->percpu_stats[0] = (struct rt_stats){.migrations = n, .updates = 10 * n, .signals = n};
	s->percpu_stats[1] = (struct rt_stats){.updates = 5 * n, .signals = 2 * n};
	s->cpus[0] = (struct rt_cpu){.aborts = 3 * n, .migrations_in = n, .updates = 10 * n};
	s->cpus[1] = (struct rt_cpu){.updates = 5 * n};
}

static struct rd_metrics *metrics(size_t max_series)
{
	struct rd_metrics_opts o = {.max_series = max_series,
				    .per_cpu = true,
				    .mode = RD_MODE_EVENT_MASK,
				    .kernel = "6.1.0-test",
				    .version = "9.9.9"};
	struct rd_metrics *m;

	assert_int_equal(rd_metrics_new(&o, &m), 0);
	return m;
}

static void update(struct rd_metrics *m, struct rd_summary *s)
{
	rd_summary_finish(s);
	assert_int_equal(rd_metrics_update(m, s), 0);
	rd_summary_free(s);
}

static char *expose(const struct rd_metrics *m, enum rd_metrics_format fmt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	rd_metrics_write(m, fmt, f);
	fclose(f);
	return buf;
}

/* The value of the sample line that starts with prefix, or -1 when there is none. */
static long long sample(const char *text, const char *prefix)
{
	size_t n = strlen(prefix);

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, prefix, n) && l[n] == ' ')
			return strtoll(l + n + 1, NULL, 10);
	return -1;
}

#define ADD_PREEMPT                                                                                \
	"rseq_aborts_total{comm=\"wl\",function=\"wl_add\",module=\"/usr/lib/libwl.so\","          \
	"cause=\"preemption\"}"
#define ADD_SIGNAL                                                                                 \
	"rseq_aborts_total{comm=\"wl\",function=\"wl_add\",module=\"/usr/lib/libwl.so\","          \
	"cause=\"signal\"}"

/* Two processes of one command count into one series; one exits and leaves the maps, and a
 * process given its id later starts from zero in the maps: the series only grows. */
static void test_never_backwards(void **state)
{
	struct rd_metrics *m = metrics(100);
	struct rd_summary s;
	pid_t gone[] = {100};
	char *t;

	init(&s, 1);
	section(&s, 100, "wl", 0x1000, 5, 1, &si_add);
	section(&s, 101, "wl", 0x7000, 2, 0, &si_add);
	update(m, &s);
	init(&s, 2);
	section(&s, 100, "wl", 0x1000, 8, 1, &si_add);
	section(&s, 101, "wl", 0x7000, 2, 0, &si_add);
	update(m, &s);
	t = expose(m, RD_FMT_PROMETHEUS);
	assert_int_equal(sample(t, ADD_PREEMPT), 10);
	assert_int_equal(sample(t, ADD_SIGNAL), 1);
	assert_int_equal(sample(t, "rseq_migrations_total"), 2);
	free(t);

	/* 100 exited: its entry left the maps; a new process 100 at the same address. */
	rd_metrics_forget(m, gone, 1);
	init(&s, 3);
	section(&s, 100, "wl", 0x1000, 3, 0, &si_add);
	section(&s, 101, "wl", 0x7000, 4, 0, &si_add);
	update(m, &s);
	/* An entry below what it had at the previous update (its process id reused after the
	 * entry was deleted): counted from zero. */
	init(&s, 3);
	section(&s, 101, "wl", 0x7000, 1, 0, &si_add);
	update(m, &s);
	t = expose(m, RD_FMT_PROMETHEUS);
	assert_int_equal(sample(t, ADD_PREEMPT), 10 + 3 + 2 + 1);
	assert_int_equal(sample(t, ADD_SIGNAL), 1);
	assert_int_equal(sample(t, "rseqdbg_processes_exited_total"), 1);
	assert_int_equal(sample(t, "rseqdbg_abort_series"), 2);
	assert_int_equal(rd_metrics_series(m), 2);
	free(t);
	rd_metrics_free(m);
}

/* Past --max-series, a new kind counts in the "(other)" series of its cause, and in the
 * folded counter; the series that existed keep counting. */
static void test_max_series(void **state)
{
	struct rd_metrics *m = metrics(1);
	struct rd_summary s;
	char *t;

	init(&s, 1);
	section(&s, 100, "wl", 0x1000, 9, 0, &si_add);
	section(&s, 100, "wl", 0x2000, 4, 3, &si_push);
	section(&s, 200, "other", 0x1000, 1, 0, &si_add);
	update(m, &s);
	init(&s, 1);
	section(&s, 100, "wl", 0x1000, 10, 0, &si_add);
	section(&s, 100, "wl", 0x2000, 4, 5, &si_push);
	section(&s, 200, "other", 0x1000, 1, 0, &si_add);
	update(m, &s);
	t = expose(m, RD_FMT_PROMETHEUS);
	/* Sections come most aborts first: wl_add took the one series. */
	assert_int_equal(sample(t, ADD_PREEMPT), 10);
	assert_int_equal(sample(t, "rseq_aborts_total{comm=\"(other)\",function=\"(other)\","
				   "module=\"(other)\",cause=\"preemption\"}"),
			 4 + 1);
	assert_int_equal(sample(t, "rseq_aborts_total{comm=\"(other)\",function=\"(other)\","
				   "module=\"(other)\",cause=\"signal\"}"),
			 5);
	assert_int_equal(sample(t, "rseqdbg_aborts_folded_total"), 10);
	assert_int_equal(rd_metrics_folded(m), 10);
	assert_int_equal(rd_metrics_series(m), 3);
	free(t);
	rd_metrics_free(m);
}

/* The limit bounds each family apart: handler-entry series take none of the abort series'
 * room, and rseqdbg_abort_series counts the rseq_aborts_total lines a scrape shows. */
static void test_max_series_per_family(void **state)
{
	struct rd_metrics_opts o = {.max_series = 2, .uprobes = true, .version = "9.9.9"};
	struct rt_section v = {
	    .aborts = {[RT_CAUSE_PREEMPT] = 1}, .entries_kernel = 1, .entries_user = 1};
	struct rd_metrics *m;
	struct rd_summary s;
	long long lines = 0;
	char *t, *l;

	assert_int_equal(rd_metrics_new(&o, &m), 0);
	init(&s, 1);
	snprintf(v.comm, sizeof(v.comm), "wl");
	for (uint64_t i = 0; i < 3; i++) {
		struct rt_section_key key = {.tgid = 100, .start_ip = 0x1000 * (i + 1)};

		v.aborts[RT_CAUSE_PREEMPT] = 10 - i; /* sections come most aborts first */
		assert_int_equal(rd_summary_add_section(&s, &key, &v,
							i == 0	 ? &si_add
							: i == 1 ? &si_push
								 : NULL),
				 0);
	}
	update(m, &s);
	t = expose(m, RD_FMT_PROMETHEUS);
	for (l = t; (l = strstr(l, "\nrseq_aborts_total{")); l++)
		lines++;
	/* Two of the three sections have series of their own; the third is in "(other)". */
	assert_int_equal(lines, 3);
	assert_int_equal(sample(t, ADD_PREEMPT), 10);
	assert_int_equal(sample(t, "rseq_aborts_total{comm=\"(other)\",function=\"(other)\","
				   "module=\"(other)\",cause=\"preemption\"}"),
			 8);
	assert_int_equal(sample(t, "rseqdbg_abort_series"), lines);
	assert_int_equal(rd_metrics_series(m), 3);
	assert_int_equal(sample(t, "rseqdbg_aborts_folded_total"), 8);
	/* The entries: two series of their own (wl_add's two kinds), the rest in "(other)". */
	assert_int_equal(sample(t,
				"rseq_abort_handler_entries_total{comm=\"wl\",function=\"wl_add\","
				"module=\"/usr/lib/libwl.so\",kind=\"kernel\"}"),
			 1);
	assert_int_equal(sample(t, "rseq_abort_handler_entries_total{comm=\"(other)\","
				   "function=\"(other)\",module=\"(other)\",kind=\"user\"}"),
			 2);
	free(t);
	rd_metrics_free(m);
}

static pid_t exited_pid;

static int fake_cgroup(void *ctx, pid_t pid, char *buf, size_t len)
{
	if (pid == 300 || pid == exited_pid)
		return -ENOENT; /* exited before its aborts were read */
	snprintf(buf, len, "/system.slice/wl-%d.service", (int)pid);
	return 0;
}

/* --cgroup-label: one command in two cgroups counts in two series, which the limit bounds
 * as any others; a process gone before it was read is "unknown". */
static void test_cgroup_label(void **state)
{
	struct rd_metrics_opts o = {.max_series = 3, .cgroup_of = fake_cgroup, .version = "9.9.9"};
	struct rd_metrics *m;
	struct rd_summary s;
	char *t;

	assert_int_equal(rd_metrics_new(&o, &m), 0);
	init(&s, 1);
	section(&s, 100, "wl", 0x1000, 5, 0, &si_add);
	section(&s, 200, "wl", 0x1000, 4, 0, &si_add);
	section(&s, 300, "wl", 0x1000, 3, 0, &si_add);
	section(&s, 400, "wl", 0x1000, 2, 0, &si_add);
	update(m, &s);
	t = expose(m, RD_FMT_PROMETHEUS);
	assert_int_equal(sample(t, "rseq_aborts_total{comm=\"wl\",function=\"wl_add\",module="
				   "\"/usr/lib/libwl.so\",cgroup=\"/system.slice/wl-100.service\","
				   "cause=\"preemption\"}"),
			 5);
	assert_int_equal(sample(t, "rseq_aborts_total{comm=\"wl\",function=\"wl_add\",module="
				   "\"/usr/lib/libwl.so\",cgroup=\"/system.slice/wl-200.service\","
				   "cause=\"preemption\"}"),
			 4);
	assert_int_equal(sample(t,
				"rseq_aborts_total{comm=\"wl\",function=\"wl_add\",module="
				"\"/usr/lib/libwl.so\",cgroup=\"unknown\",cause=\"preemption\"}"),
			 3);
	assert_int_equal(sample(t, "rseq_aborts_total{comm=\"(other)\",function=\"(other)\","
				   "module=\"(other)\",cgroup=\"(other)\",cause=\"preemption\"}"),
			 2);
	assert_int_equal(sample(t, "rseqdbg_abort_series"), 4);
	free(t);

	/* Process 100 has exited (its cgroup can no longer be read): a new kind of its aborts
	 * keeps the cgroup read while it lived. */
	exited_pid = 100;
	init(&s, 1);
	section(&s, 100, "wl", 0x1000, 5, 1, &si_add);
	update(m, &s);
	t = expose(m, RD_FMT_PROMETHEUS);
	assert_int_equal(sample(t, "rseq_aborts_total{comm=\"(other)\",function=\"(other)\","
				   "module=\"(other)\",cgroup=\"(other)\",cause=\"signal\"}"),
			 1);
	free(t);
	rd_metrics_free(m);

	/* With room for it, that kind has a series of its own in the cgroup. */
	o.max_series = 10;
	exited_pid = 0;
	assert_int_equal(rd_metrics_new(&o, &m), 0);
	init(&s, 1);
	section(&s, 100, "wl", 0x1000, 5, 0, &si_add);
	update(m, &s);
	exited_pid = 100;
	init(&s, 1);
	section(&s, 100, "wl", 0x1000, 5, 1, &si_add);
	update(m, &s);
	t = expose(m, RD_FMT_PROMETHEUS);
	assert_int_equal(sample(t, "rseq_aborts_total{comm=\"wl\",function=\"wl_add\",module="
				   "\"/usr/lib/libwl.so\",cgroup=\"/system.slice/wl-100.service\","
				   "cause=\"signal\"}"),
			 1);
	free(t);
	rd_metrics_free(m);
}

/* process_* as the Prometheus client libraries name them, before the OpenMetrics EOF, and
 * none once cleared (for the textfile). */
static void test_process(void **state)
{
	struct rd_proc_self p = {.cpu_seconds = 1.5,
				 .start_time = 1700000000.25,
				 .resident_bytes = 4096,
				 .virtual_bytes = 8192,
				 .open_fds = 12,
				 .max_fds = 1024};
	struct rd_metrics *m = metrics(10);
	char *t;

	rd_metrics_set_self(m, &p);
	t = expose(m, RD_FMT_OPENMETRICS);
	assert_non_null(strstr(t, "# TYPE process_cpu_seconds counter\n"
				  "process_cpu_seconds_total 1.50\n"));
	assert_int_equal(sample(t, "process_resident_memory_bytes"), 4096);
	assert_int_equal(sample(t, "process_virtual_memory_bytes"), 8192);
	assert_int_equal(sample(t, "process_open_fds"), 12);
	assert_int_equal(sample(t, "process_max_fds"), 1024);
	assert_non_null(strstr(t, "\nprocess_start_time_seconds 1700000000.25\n"));
	assert_non_null(strstr(t, "process_virtual_memory_bytes 8192\n# EOF\n"));
	free(t);
	rd_metrics_set_self(m, NULL);
	t = expose(m, RD_FMT_PROMETHEUS);
	assert_null(strstr(t, "process_"));
	free(t);
	rd_metrics_free(m);
}

/* Both formats in full: families, label escaping (over the names' own, where a backslash is
 * "\\" as the other commands print it), a section without a symbol. */
static void test_exposition(void **state)
{
	static const char om[] =
	    "# HELP rseqdbg The exporter: version, attribution mode and kernel.\n"
	    "# TYPE rseqdbg info\n"
	    "rseqdbg_info{version=\"9.9.9\",mode=\"event-mask\",kernel=\"6.1.0-test\"} 1\n"
	    "# HELP rseq_aborts rseq critical sections aborted, by command name, function, "
	    "module and cause.\n"
	    "# TYPE rseq_aborts counter\n"
	    "rseq_aborts_total{comm=\"a\\\"b\\\\\\\\c\",function=\"wl_add\",module=\"/usr/lib/"
	    "libwl.so\",cause=\"preemption\"} 2\n"
	    "rseq_aborts_total{comm=\"a\\\"b\\\\\\\\c\",function=\"unknown\",module=\"unknown\","
	    "cause=\"signal\"} 1\n"
	    "# HELP rseq_migrations Migrations of traced threads to another CPU.\n"
	    "# TYPE rseq_migrations counter\n"
	    "rseq_migrations_total 1\n"
	    "# HELP rseq_cpu_id_updates rseq cpu_id updates (the kernel's rseq_update) of traced "
	    "threads.\n"
	    "# TYPE rseq_cpu_id_updates counter\n"
	    "rseq_cpu_id_updates_total 15\n"
	    "# HELP rseq_signals Signals delivered to traced threads.\n"
	    "# TYPE rseq_signals counter\n"
	    "rseq_signals_total 3\n"
	    "# HELP rseq_percpu_aborts rseq aborts, by CPU.\n"
	    "# TYPE rseq_percpu_aborts counter\n"
	    "rseq_percpu_aborts_total{cpu=\"0\"} 3\n"
	    "rseq_percpu_aborts_total{cpu=\"1\"} 0\n"
	    "# HELP rseq_percpu_migrations Migrations of traced threads onto each CPU.\n"
	    "# TYPE rseq_percpu_migrations counter\n"
	    "rseq_percpu_migrations_total{cpu=\"0\"} 1\n"
	    "rseq_percpu_migrations_total{cpu=\"1\"} 0\n"
	    "# HELP rseq_percpu_cpu_id_updates rseq cpu_id updates, by CPU.\n"
	    "# TYPE rseq_percpu_cpu_id_updates counter\n"
	    "rseq_percpu_cpu_id_updates_total{cpu=\"0\"} 10\n"
	    "rseq_percpu_cpu_id_updates_total{cpu=\"1\"} 5\n"
	    "# HELP rseq_percpu_signals Signals delivered to traced threads, by CPU.\n"
	    "# TYPE rseq_percpu_signals counter\n"
	    "rseq_percpu_signals_total{cpu=\"0\"} 1\n"
	    "rseq_percpu_signals_total{cpu=\"1\"} 2\n"
	    "# HELP rseqdbg_ringbuf_drops Ring buffer reservations that failed (the counters "
	    "above are kept in the kernel and stay complete).\n"
	    "# TYPE rseqdbg_ringbuf_drops counter\n"
	    "rseqdbg_ringbuf_drops_total{ring=\"events\"} 0\n"
	    "rseqdbg_ringbuf_drops_total{ring=\"notify\"} 0\n"
	    "# HELP rseqdbg_aborts_unattributed Aborts counted in no section because the section "
	    "map was full.\n"
	    "# TYPE rseqdbg_aborts_unattributed counter\n"
	    "rseqdbg_aborts_unattributed_total 0\n"
	    "# HELP rseqdbg_program_skips Runs of a tracing program the kernel skipped because "
	    "one was already running on the CPU (abort_backup counts the aborts its skips would "
	    "have lost).\n"
	    "# TYPE rseqdbg_program_skips counter\n"
	    "rseqdbg_program_skips_total{program=\"abort\"} 0\n"
	    "rseqdbg_program_skips_total{program=\"abort_backup\"} 0\n"
	    "rseqdbg_program_skips_total{program=\"events\"} 0\n"
	    "# HELP rseqdbg_aborts_folded Aborts counted in the comm=\"(other)\" series because "
	    "--max-series was reached.\n"
	    "# TYPE rseqdbg_aborts_folded counter\n"
	    "rseqdbg_aborts_folded_total 0\n"
	    "# HELP rseqdbg_processes_exited Processes that exited, whose sections left the maps "
	    "and stay in their series.\n"
	    "# TYPE rseqdbg_processes_exited counter\n"
	    "rseqdbg_processes_exited_total 0\n"
	    "# HELP rseqdbg_abort_series Series of rseq_aborts_total, the (other) ones included.\n"
	    "# TYPE rseqdbg_abort_series gauge\n"
	    "rseqdbg_abort_series 2\n"
	    "# EOF\n";
	struct rd_metrics *m = metrics(100);
	struct rd_summary s;
	char *t, *want, *p;

	init(&s, 1);
	section(&s, 7, "a\"b\\c", 0x1000, 2, 0, &si_add);
	section(&s, 7, "a\"b\\c", 0x9000, 0, 1, NULL);
	update(m, &s);
	t = expose(m, RD_FMT_OPENMETRICS);
	assert_string_equal(t, om);
	free(t);

	/* The Prometheus format: families named by their samples, info as a gauge, no EOF. */
	want = strdup(om);
	assert_non_null(want);
	*strstr(want, "# EOF\n") = '\0';
	t = expose(m, RD_FMT_PROMETHEUS);
	assert_non_null(strstr(t, "# TYPE rseqdbg_info gauge\nrseqdbg_info{"));
	assert_non_null(strstr(t, "# HELP rseq_aborts_total rseq critical"));
	assert_non_null(strstr(t, "# TYPE rseq_aborts_total counter\nrseq_aborts_total{"));
	assert_non_null(strstr(t, "# TYPE rseqdbg_abort_series gauge\nrseqdbg_abort_series 2\n"));
	assert_null(strstr(t, "# EOF"));
	/* The samples are the same lines. */
	for (p = want; *p; p = strchr(p, '\n') + 1) {
		size_t n = (size_t)(strchr(p, '\n') - p + 1);
		char line[512];

		if (*p == '#')
			continue;
		assert_true(n < sizeof(line));
		memcpy(line, p, n);
		line[n] = '\0';
		assert_non_null(strstr(t, line));
	}
	free(t);
	free(want);
	rd_metrics_free(m);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_never_backwards),	  cmocka_unit_test(test_max_series),
	    cmocka_unit_test(test_max_series_per_family), cmocka_unit_test(test_process),
	    cmocka_unit_test(test_cgroup_label),	  cmocka_unit_test(test_exposition),
	};

	return UNIT_MAIN(tests);
}
