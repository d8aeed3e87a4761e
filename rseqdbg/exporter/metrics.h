/* SPDX-License-Identifier: GPL-2.0-only */
/* The counters `rseqdbg exporter` serves: summaries of the maps folded into series that only
 * grow while the process lives, with a bounded number of them, written in the OpenMetrics or
 * Prometheus text format. Pure: tests feed summaries built by hand. */
#ifndef RSEQDBG_EXPORTER_METRICS_H
#define RSEQDBG_EXPORTER_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "trace/summary.h"

struct rd_metrics_opts {
	size_t max_series; /* series of rseq_aborts_total, and apart from them of
			    * rseq_abort_handler_entries_total, before the rest of that
			    * family fold into its "(other)" series */
	bool per_cpu;	   /* the rseq_percpu_* families */
	bool uprobes;	   /* the tracer counts abort handler entries */
	/* With a cgroup label: the cgroup v2 path of process pid into buf, 0 or -errno. Asked
	 * when the process's aborts are first counted, kept until it is forgotten. */
	int (*cgroup_of)(void *ctx, pid_t pid, char *buf, size_t len);
	void *cgroup_ctx;
	enum rd_trace_mode mode; /* the info metric's labels */
	const char *kernel;
	const char *version;
};

enum rd_metrics_format {
	RD_FMT_OPENMETRICS, /* application/openmetrics-text; version=1.0.0 */
	RD_FMT_PROMETHEUS,  /* text/plain; version=0.0.4 */
};

/* The exporter's own process, as every Prometheus client library exposes it (process_*). */
struct rd_proc_self {
	double cpu_seconds; /* user and system */
	double start_time;  /* seconds since the epoch */
	uint64_t resident_bytes, virtual_bytes;
	uint64_t open_fds, max_fds;
};

struct rd_metrics;

/* 0 or -ENOMEM. */
int rd_metrics_new(const struct rd_metrics_opts *o, struct rd_metrics **m);
void rd_metrics_free(struct rd_metrics *m); /* NULL-safe */

/* Add what s counted since the previous summary: each (process, section, cause) count's
 * growth goes to its (comm, function, module, cause) series; the totals are taken as they
 * are (they only grow). 0 or -ENOMEM. */
int rd_metrics_update(struct rd_metrics *m, const struct rd_summary *s);
/* The processes pids (sorted) left the maps after the last update: their counts stay in
 * their series, and a process later given the same id starts from zero. */
void rd_metrics_forget(struct rd_metrics *m, const pid_t *pids, size_t n);

/* The process_* metrics of the next expositions; NULL: none (node_exporter's textfile
 * collector has its own). */
void rd_metrics_set_self(struct rd_metrics *m, const struct rd_proc_self *p);

/* The exposition, into f. */
void rd_metrics_write(const struct rd_metrics *m, enum rd_metrics_format fmt, FILE *f);
/* The content type of a format, for an HTTP response. */
const char *rd_metrics_content_type(enum rd_metrics_format fmt);

/* What update kept: series of rseq_aborts_total ("(other)" included), aborts folded into
 * "(other)". */
size_t rd_metrics_series(const struct rd_metrics *m);
uint64_t rd_metrics_folded(const struct rd_metrics *m);

#endif
