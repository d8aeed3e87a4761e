/* SPDX-License-Identifier: GPL-2.0-only */
/* A summary of rseq activity: the counts the BPF maps hold, ordered, compared with the
 * previous summary and printed as text or JSON. Pure: tests build one by hand. */
#ifndef RSEQDBG_TRACE_SUMMARY_H
#define RSEQDBG_TRACE_SUMMARY_H

#include <stdint.h>
#include <stdio.h>
#include <linux/types.h>

#include "elfscan.h"
#include "json.h"
#include "rseqtrace.h"
#include "features.h"

/* A section symbolized: the module file it lives in and its libelfscan address. */
struct rd_secinfo {
	struct elfscan *es;	/* NULL when the file could not be found */
	const char *module;	/* path */
	uint64_t link_start;	/* start_ip as libelfscan numbers it */
	struct elfscan_loc loc; /* start_ip: function and file:line */
};

/* Everything the maps hold, read at once. */
struct rd_sum_section {
	struct rt_section_key key;
	struct rt_section v;
	uint64_t aborts; /* sum over causes */
	uint64_t recent; /* aborts since the previous summary (rd_summary_since) */
	const struct rd_secinfo *si;
};

struct rd_summary {
	struct rt_stats total;
	struct rt_stats *percpu_stats; /* [ncpus] */
	struct rt_cpu *cpus;	       /* [ncpus] */
	int ncpus;
	struct rd_sum_section *sections; /* sorted by aborts, most first */
	size_t nsections, cap_sections;
	struct {
		uint32_t pid;
		struct rt_proc v;
	} * procs;
	size_t nprocs, cap_procs;
	/* Runs the kernel skipped because the program was already running on that CPU (its
	 * recursion guard), for every process since load: the aborts rseq_ip_fixup missed
	 * (counted by the backup program when it ran: total.backup_aborts), the backup's own,
	 * and the scheduler and signal programs' (causes and migrations may miss events). */
	uint64_t fixup_skipped;
	uint64_t backup_skipped;
	uint64_t events_skipped;
	/* Uprobes on the abort handlers (not --no-uprobes): how many were attached, how many
	 * could not be, and the runs of their program the kernel skipped. */
	bool uprobes;
	uint64_t uprobes_attached, uprobe_failures, uprobe_skipped;
	/* The counts start when tracing started (-p, -t, --comm, --cgroup, system-wide), not
	 * with the processes (-- CMD): what they did before is not counted. */
	bool attached;
	double seconds;	       /* covered by the counts */
	double recent_seconds; /* since the previous summary; 0 when none */
	uint64_t recent_aborts;
	enum rd_trace_mode mode; /* how causes were attributed */
};

/* Building one from what the maps hold (the tracer reads them, tests make them up): init,
 * fill percpu_stats and cpus, then rd_summary_add_*() and rd_summary_finish(). Each returns
 * 0 or -ENOMEM. */
int rd_summary_init(struct rd_summary *s, int ncpus, enum rd_trace_mode mode, double seconds);
int rd_summary_add_section(struct rd_summary *s, const struct rt_section_key *key,
			   const struct rt_section *v, const struct rd_secinfo *si);
int rd_summary_add_proc(struct rd_summary *s, uint32_t pid, const struct rt_proc *v);
/* Sum the per-CPU counters into total and sort the sections, most aborts first. */
void rd_summary_finish(struct rd_summary *s);
void rd_summary_free(struct rd_summary *s); /* NULL-safe; s can be filled again */
/* Fill the recent counts of s: what happened since prev was read. */
void rd_summary_since(struct rd_summary *s, const struct rd_summary *prev);
/* Print a summary for people on f; or its members into a JSON object the caller opened.
 * top > 0 limits the sections shown. */
void rd_summary_print(const struct rd_summary *s, int top, FILE *f);
void rd_summary_json(const struct rd_summary *s, struct jw *w, int top);

/* The members of a section object (schemas/common.json) for a section at start_ip, symbolized
 * by si (NULL when unknown). */
void rd_json_section(struct jw *w, const struct rd_secinfo *si, uint64_t start_ip,
		     uint64_t post_commit_offset, uint64_t abort_ip);

/* "preemption", "signal", "migration", "deferred", "unknown". */
const char *rd_cause_name(uint32_t cause);

#endif
