/* SPDX-License-Identifier: GPL-2.0-only */
/* The tracer's state, shared by the files of rseqdbg/trace/ and no one else. */
#ifndef RSEQDBG_TRACE_INTERNAL_H
#define RSEQDBG_TRACE_INTERNAL_H

#include <stdint.h>
#include <sys/types.h>

#include "tracer.h"

struct elfscan_decoder;
struct rseqtrace_bpf;
struct ring_buffer;
struct bpf_link;
struct elfscan;

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
	} * v;
};

/* A uprobe link: libbpf's (a perf-event uprobe), or a multi-uprobe link's own fd. */
struct uplink {
	struct bpf_link *link;
	int fd;
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
	uint64_t t0_ns;	     /* monotonic ns at attach */
	double mono_to_real; /* seconds to add to monotonic time */
	rd_event_fn fn;
	void *fn_ctx;
	struct symfile *files;
	size_t nfiles;
	struct pidmap *pids;
	size_t npids;
	struct seccache **secs; /* each allocated alone: its info is handed out */
	size_t nsecs;
	bool uprobes_on;	/* uprobes on abort handlers (not --no-uprobes) */
	bool uprobe_multi;	/* one multi-uprobe link per file, else a perf-event uprobe each */
	struct uplink *uprobes; /* uprobes.c: the links of the abort handlers' uprobes */
	size_t nuprobes, capuprobes;
	uint64_t uprobes_attached; /* handlers with a uprobe */
	uint64_t uprobe_failures;  /* handlers whose uprobe could not be attached */
	bool command;		   /* -- CMD: counted from its first instruction */
	bool hold;		   /* the command's processes stop at exec and loader notices */
	bool closing;		   /* rd_tracer_unhold: held processes are only continued */
	struct loader {		   /* uprobes.c: a dynamic loader, probed or tried once */
		dev_t dev;
		ino_t ino;
	} * loaders;
	size_t nloaders;
	struct elfscan_decoder *dec; /* insn.c: for files of dec_machine and dec_class */
	uint16_t dec_machine;
	int dec_class;
};

/* Before the programs load: the uprobe programs are made for multi-uprobe links when the
 * kernel has them (t->uprobe_multi). */
void rd_tracer_uprobes_prepare(struct rd_tracer *t);
/* Attach a uprobe on each abort handler of the sections of es (file path), when uprobes are
 * on; a failure is counted in uprobe_failures. */
void rd_tracer_uprobe_file(struct rd_tracer *t, const char *path, struct elfscan *es);
/* Probe the dynamic loader of process pid's program (its PT_INTERP) at _dl_debug_state, once
 * per loader file, so that the libraries it maps are announced before they run. */
void rd_tracer_uprobe_loader(struct rd_tracer *t, pid_t pid);
/* Detach them all. Their programs must be inert (rd_tracer_unhold): the kernel's part of the
 * work may end after the tracer. */
void rd_tracer_uprobes_free(struct rd_tracer *t);

/* Free what symbols.c and insn.c keep in t. */
void rd_tracer_syms_free(struct rd_tracer *t);
void rd_tracer_insn_free(struct rd_tracer *t);
/* Drop the mappings and sections of the processes pids (sorted) from the symbolizer. */
void rd_tracer_syms_forget(struct rd_tracer *t, const pid_t *pids, size_t n);
/* The section of (pid, start_ip) already symbolized, or NULL. */
const struct rd_secinfo *rd_tracer_section_cached(struct rd_tracer *t, pid_t pid,
						  uint64_t start_ip);

#endif
