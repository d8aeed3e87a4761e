/* SPDX-License-Identifier: GPL-2.0-only */
/* What `rseqdbg trace` prints while it runs and when it ends. */
#ifndef RSEQDBG_TRACE_OUTPUT_H
#define RSEQDBG_TRACE_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tracer.h"

struct folded;

struct rd_trace_out {
	struct rd_tracer *t;
	FILE *out; /* where records go: stdout or -o FILE */
	FILE *rec; /* the record being written (a memory stream over recbuf) */
	char *recbuf;
	size_t reclen;
	int write_err; /* errno of the first failed write to out, 0 when none */
	struct jw *w;  /* JSON records, into rec */
	bool summary;  /* --summary: no live lines */
	bool stack;
	bool folded;
	struct folded *fold;
	size_t nfold, capfold;
	uint64_t events;
	struct rd_summary prev; /* the last summary printed */
	bool have_prev;
};

/* Records to out, each handed to it whole once written: 0 or -ENOMEM (rd_errmsg()). */
int rd_out_init(struct rd_trace_out *c, FILE *out);
/* The ring buffer callback (ctx: the rd_trace_out): print e, or fold its stack. */
int rd_out_event(void *ctx, const struct rt_event *e);
/* Read the maps and print a summary, with the rates since the previous one; 0 or -errno
 * (rd_errmsg() says why). */
int rd_out_summary(struct rd_trace_out *c, int top, bool final);
/* The aborting stacks, folded: "comm;outer;...;inner count" lines. */
void rd_out_folded(struct rd_trace_out *c);
void rd_out_free(struct rd_trace_out *c);

#endif
