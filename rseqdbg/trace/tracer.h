/* SPDX-License-Identifier: GPL-2.0-only */
/* What `rseqdbg trace` and `rseqdbg stat` share: the BPF skeleton's lifecycle (tracer.c),
 * kernel features (features.c), sections symbolized (symbols.c) and decoded (insn.c), the
 * summary (summary.c) and the command run (child.c). */
#ifndef RSEQDBG_TRACE_TRACER_H
#define RSEQDBG_TRACE_TRACER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/types.h>
#include <sys/types.h>

#include "child.h"
#include "elfscan.h"
#include "features.h"
#include "json.h"
#include "rseqtrace.h"
#include "summary.h"

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
	bool no_uprobes;       /* --no-uprobes: no uprobe on the abort handlers */
};

struct rd_tracer;

/* The filter options shared by the commands that trace (-p, -t, --comm, --cgroup): their
 * getopt values besides 'p' and 't', and their parser. o->pids and o->tids must have room for
 * RD_MAX_FILTER each. Returns 0, or EXIT_ERROR after reporting. */
#define RD_MAX_FILTER 64
enum { RD_FOPT_COMM = 480, RD_FOPT_CGROUP }; /* below RD_OPT_PRETTY */
/* Take a filter option (-p, -t, --comm, --cgroup) into o: 0, or -errno with the message in
 * rd_errmsg(). */
int rd_filter_opt(struct rd_tracer_opts *o, int opt, const char *arg);
/* What keeps the tracer from running here (privilege, then kernel features), or NULL. */
const char *rd_tracer_unavailable(const struct rd_features *f);

/* One event from the ring buffer, handed to the caller's callback. */
typedef int (*rd_event_fn)(void *ctx, const struct rt_event *e);

/* open -> set rodata -> load. These return 0 or -errno with rd_errmsg() set. */
int rd_tracer_open(const struct rd_tracer_opts *o, const struct rd_features *f,
		   struct rd_tracer **res);
/* Add a process to the in-kernel pid filter (after open, before or after attach). */
int rd_tracer_add_pid(struct rd_tracer *t, pid_t pid);
int rd_tracer_attach(struct rd_tracer *t);
/* Open and load the programs as a trace would, then unload them: what --check reports. */
int rd_tracer_check(const struct rd_features *f);
/* Poll both ring buffers for up to timeout_ms; fn gets each event (may be NULL). */
int rd_tracer_poll(struct rd_tracer *t, int timeout_ms, rd_event_fn fn, void *ctx);
/* Hold no process any more and continue those held (the command is being ended: a stopped
 * process would not see the signal that ends it). NULL-safe. */
void rd_tracer_unhold(struct rd_tracer *t);
void rd_tracer_free(struct rd_tracer *t); /* detaches and unloads; NULL-safe */
/* Readable when the ring buffers hold data: poll it, then rd_tracer_poll(t, 0, ...). */
int rd_tracer_fd(const struct rd_tracer *t);

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
/* The same as the members of a location object (rd_json_loc_members()). */
void rd_tracer_json_loc(struct rd_tracer *t, struct jw *w, pid_t pid, uint64_t addr);

/* Read the maps into s (rd_summary_free() it). */
int rd_tracer_summary(struct rd_tracer *t, struct rd_summary *s);
/* The processes pids (sorted) had exited before s was read, so s holds their last counts:
 * their sections and process entries leave the maps, making room for new processes, and
 * the symbolizer forgets them. The rd_secinfo of their sections is freed. */
void rd_tracer_forget(struct rd_tracer *t, const pid_t *pids, size_t n, const struct rd_summary *s);

/* Open and attach the tracer (*t); with argv, run that command under it from its first
 * instruction: started held, put in the filter, released once the programs are attached
 * (o->follow_forks is set). Returns 0; 1 when the tracer runs but the command could not be
 * executed (reaped); or -errno with nothing left running. rd_errmsg() says why. */
int rd_tracer_start(struct rd_tracer_opts *o, const struct rd_features *f, char **argv,
		    struct rd_spawn *child, struct rd_tracer **t);

/* The uprobe on the loader of the program file cmd, opened by a thread while the programs
 * load (NULL: none to open), then given the program (or closed without t). */
struct rd_early_loader;
struct rd_early_loader *rd_early_loader_start(const char *cmd);
void rd_tracer_early_loader_finish(struct rd_tracer *t, struct rd_early_loader *el);

/* Monotonic ns (bpf_ktime_get_ns clock) to wall-clock seconds since the epoch. */
double rd_tracer_walltime(const struct rd_tracer *t, uint64_t ktime_ns);
enum rd_trace_mode rd_tracer_mode(const struct rd_tracer *t);

#endif
