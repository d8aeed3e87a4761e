/* SPDX-License-Identifier: GPL-2.0-only */
/* What `rseqdbg trace` and `rseqdbg stat` share: the BPF skeleton's lifecycle, kernel feature
 * detection, the command launcher, map readout and symbolization of sections. */
#ifndef RSEQDBG_TRACER_H
#define RSEQDBG_TRACER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/types.h>
#include <sys/types.h>

#include "elfscan.h"
#include "json.h"
#include "rseqtrace.h"

/* What this kernel offers, read from its BTF. */
struct rd_features {
	bool btf;	       /* /sys/kernel/btf/vmlinux loads */
	char btf_err[128];     /* why not */
	bool tp_ip_fixup;      /* rseq:rseq_ip_fixup */
	bool tp_update;	       /* rseq:rseq_update */
	bool tp_migrate;       /* sched:sched_migrate_task */
	bool tp_switch;	       /* sched:sched_switch */
	bool tp_signal;	       /* signal:signal_deliver */
	bool tp_fork;	       /* sched:sched_process_fork */
	bool event_mask;       /* task_struct.rseq_event_mask (kernels up to 6.18) */
	bool rseq_ptr;	       /* task_struct.rseq is a pointer to the area (up to 6.18) */
	bool rseq_data;	       /* task_struct.rseq is a struct rseq_data (6.19+) */
	bool node_mmcid;       /* rseq_update carries node_id and mm_cid (6.3+) */
	bool find_vma;	       /* bpf_find_vma helper (5.17+) */
	bool ringbuf;	       /* BPF_MAP_TYPE_RINGBUF (5.8+) */
};

enum rd_trace_mode {
	RD_MODE_EVENT_MASK, /* causes exact: marks are cleared at every rseq_update */
	RD_MODE_NO_MASK,    /* 6.19 style: causes inferred from the last scheduler/signal event */
};

int rd_features_probe(struct rd_features *f);
/* NULL when the kernel can run the tracer, else what is missing (static string). */
const char *rd_features_missing(const struct rd_features *f);
enum rd_trace_mode rd_features_mode(const struct rd_features *f);
const char *rd_mode_name(enum rd_trace_mode m);
/* Print the features, whether the programs loaded (load_err NULL) and the mode in use
 * (plain or JSON). */
void rd_features_print(const struct rd_features *f, const char *load_err);

/* NULL when this process may load and attach the tracer, else the one-line requirement. */
const char *rd_tracer_privilege_missing(void);

struct rd_tracer_opts {
	pid_t *pids; /* -p */
	size_t npids;
	pid_t *tids; /* -t */
	size_t ntids;
	const char *comm;   /* --comm */
	const char *cgroup; /* --cgroup path */
	bool follow_forks;  /* `-- CMD`: children join the filter */
	uint32_t emit;	    /* (1 << enum rt_event_type) sent through the ring buffer */
	bool stack;
	uint32_t ringbuf_size; /* 0: default */
};

struct rd_tracer;

/* One event from the ring buffer, handed to the caller's callback. */
typedef int (*rd_event_fn)(void *ctx, const struct rt_event *e);

/* open -> set rodata -> load; *err names what failed. */
int rd_tracer_open(const struct rd_tracer_opts *o, const struct rd_features *f,
		   struct rd_tracer **res, char *err, size_t errlen);
/* Add a process to the in-kernel pid filter (after open, before or after attach). */
int rd_tracer_add_pid(struct rd_tracer *t, pid_t pid);
int rd_tracer_attach(struct rd_tracer *t, char *err, size_t errlen);
/* Open and load the programs as a trace would, then unload them: what --check reports. */
int rd_tracer_check(const struct rd_features *f, char *err, size_t errlen);
/* Poll both ring buffers for up to timeout_ms; fn gets each event (may be NULL). */
int rd_tracer_poll(struct rd_tracer *t, int timeout_ms, rd_event_fn fn, void *ctx);
void rd_tracer_free(struct rd_tracer *t); /* detaches and unloads; NULL-safe */

/* A section symbolized: the module file it lives in and its libelfscan address. */
struct rd_secinfo {
	struct elfscan *es; /* NULL when the file could not be found */
	const char *module; /* path */
	uint64_t link_start; /* start_ip as libelfscan numbers it */
	struct elfscan_loc loc; /* start_ip: function and file:line */
};

/* Resolve start_ip of process pid (dev/ino/file_off from the kernel when known, else the
 * process' mappings); the result stays valid until the tracer is freed. */
const struct rd_secinfo *rd_tracer_section(struct rd_tracer *t, pid_t pid, uint64_t start_ip,
					   uint64_t kdev, uint64_t ino, uint64_t file_off);
/* The same, with what the kernel recorded for the section in its map. */
const struct rd_secinfo *rd_tracer_section_of(struct rd_tracer *t, pid_t pid, uint64_t start_ip);
/* Decode the instruction at runtime address ip inside section si ("dec ecx"). */
const char *rd_tracer_insn(struct rd_tracer *t, const struct rd_secinfo *si, uint64_t start_ip,
			   uint64_t ip, char *buf, size_t len);
/* Read the mappings of pid now (a new pid, or the command just exec'd). */
void rd_tracer_learn_pid(struct rd_tracer *t, pid_t pid);
/* Make a file known to the symbolizer by path (the command run by stat). */
void rd_tracer_learn_file(struct rd_tracer *t, const char *path);
/* Symbolize a user stack address of pid: "func+0x12 (file:line)" or "module+0x..". */
const char *rd_tracer_sym(struct rd_tracer *t, pid_t pid, uint64_t addr, char *buf, size_t len);

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
	size_t nsections;
	struct {
		uint32_t pid;
		struct rt_proc v;
	} *procs;
	size_t nprocs;
	/* Runs the kernel skipped because the program was already running on that CPU (its
	 * recursion guard), for every process since load: the aborts rseq_ip_fixup missed
	 * (counted by the backup program when it ran: total.backup_aborts), the backup's own,
	 * and the scheduler and signal programs' (causes and migrations may miss events). */
	uint64_t fixup_skipped;
	uint64_t backup_skipped;
	uint64_t events_skipped;
	double seconds; /* covered by the counts */
	double recent_seconds; /* since the previous summary; 0 when none */
	uint64_t recent_aborts;
};

int rd_tracer_summary(struct rd_tracer *t, struct rd_summary *s);
void rd_summary_free(struct rd_summary *s);
/* Fill the recent counts of s: what happened since prev was read. */
void rd_summary_since(struct rd_summary *s, const struct rd_summary *prev);
/* Print a summary for people on f; or its members into a JSON object the caller opened.
 * top > 0 limits the sections shown. */
void rd_summary_print(struct rd_tracer *t, const struct rd_summary *s, int top, FILE *f);
void rd_summary_json(struct rd_tracer *t, const struct rd_summary *s, struct jw *w, int top);

const char *rd_cause_name(uint32_t cause);
/* Monotonic ns (bpf_ktime_get_ns clock) to wall-clock seconds since the epoch. */
double rd_tracer_walltime(const struct rd_tracer *t, uint64_t ktime_ns);
enum rd_trace_mode rd_tracer_mode(const struct rd_tracer *t);

/* `-- CMD ARGS`: fork a child that waits on a pipe before exec, so the caller can put its
 * pid in the filter and attach first. */
struct rd_child {
	pid_t pid;
	int go_fd;  /* write end: closing it after a byte lets the child exec */
	int err_fd; /* read end: errno of a failed exec, EOF on success */
};
int rd_child_spawn(char **argv, struct rd_child *c);
/* Let the child exec; returns 0 or the exec's -errno. */
int rd_child_release(struct rd_child *c);
/* Kill a child that will not be released. */
void rd_child_abort(struct rd_child *c);
/* The shell-style exit status of a waitpid() status (128 + signal when killed). */
int rd_wait_status(int status);

/* SIGINT/SIGTERM set this; the poll loops stop. */
extern volatile int rd_tracer_stop;
void rd_tracer_signals(void);

#endif
