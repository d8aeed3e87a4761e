// SPDX-License-Identifier: GPL-2.0-only
/* What `rseqdbg trace` prints: a line or a JSON object per event, folded stacks for flame
 * graphs, and summaries. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "output.h"
#include "symfmt.h"

struct folded {
	char *stack;
	uint64_t count;
};

static const char *event_name(uint32_t type)
{
	switch (type) {
	case RT_EV_ABORT:
		return "abort";
	case RT_EV_MIGRATE:
		return "migrate";
	case RT_EV_UPDATE:
		return "cpu_id";
	case RT_EV_SIGNAL:
		return "signal";
	case RT_EV_USER_ABORT:
		return "user-abort";
	default:
		return "?";
	}
}

static void fold_add(struct rd_trace_out *c, const struct rt_event *e)
{
	char buf[4096], sym[RD_LOC_LEN];
	size_t n;

	n = (size_t)snprintf(buf, sizeof(buf), "%s", rd_safe(e->comm));
	/* Outermost frame first, as flame graph tools expect. */
	for (uint32_t i = e->nstack; i-- > 0 && n < sizeof(buf);) {
		if (!e->stack[i])
			continue;
		rd_tracer_sym(c->t, e->pid, e->stack[i], sym, sizeof(sym));
		for (char *p = sym; *p; p++)
			if (*p == ';' || *p == ' ')
				*p = '_';
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, ";%s", sym);
	}
	for (size_t i = 0; i < c->nfold; i++) {
		if (!strcmp(c->fold[i].stack, buf)) {
			c->fold[i].count++;
			return;
		}
	}
	if (c->nfold == c->capfold) {
		size_t cap = c->capfold ? 2 * c->capfold : 64;
		struct folded *v = realloc(c->fold, cap * sizeof(*v));

		if (!v)
			return;
		c->fold = v;
		c->capfold = cap;
	}
	c->fold[c->nfold].stack = strdup(buf);
	if (c->fold[c->nfold].stack)
		c->fold[c->nfold++].count = 1;
}

static void print_abort_plain(struct rd_trace_out *c, const struct rt_event *e,
			      const struct rd_secinfo *si, const char *insn)
{
	char loc[RD_LOC_LEN];

	if (si && (si->loc.func || si->loc.section))
		rd_loc_str(&si->loc, loc, sizeof(loc));
	else
		snprintf(loc, sizeof(loc), "%#" PRIx64, (uint64_t)e->a1);
	fprintf(c->rec, "section %s +%#" PRIx64 " cause=%s insn=\"%s\"\n", loc,
		(uint64_t)(e->a0 - e->a1), rd_cause_name(e->cause), insn);
}

static void json_abort(struct rd_trace_out *c, const struct rt_event *e,
		       const struct rd_secinfo *si, const char *insn)
{
	struct jw *w = c->w;

	jw_key(w, "section");
	jw_obj_open(w);
	rd_json_section(w, si, e->a1, e->a2, e->a3);
	jw_obj_close(w);
	jw_ku64(w, "ip", e->a0);
	jw_ku64(w, "offset", e->a0 - e->a1);
	jw_kstr(w, "insn", insn);
	jw_kstr(w, "cause", rd_cause_name(e->cause));
	jw_ku64(w, "marks", e->marks & 0xff);
	jw_ku64(w, "pending_marks", e->marks >> 8);
	if (!(e->kmask & RT_KEV_VALID)) {
		jw_ku64(w, "kernel_event_mask", e->kmask);
		return;
	}
	/* 6.19+: what task_struct.rseq.event held at the abort. */
	jw_key(w, "kernel_events");
	jw_obj_open(w);
	/* a byte this kernel does not have is left out */
	if (e->kmask & RT_KEV_SCHED_SWITCH_KNOWN)
		jw_kbool(w, "sched_switch", e->kmask & RT_KEV_SCHED_SWITCH);
	if (e->kmask & RT_KEV_IDS_CHANGED_KNOWN)
		jw_kbool(w, "ids_changed", e->kmask & RT_KEV_IDS_CHANGED);
	if (e->kmask & RT_KEV_USER_IRQ_KNOWN)
		jw_kbool(w, "user_irq", e->kmask & RT_KEV_USER_IRQ);
	jw_obj_close(w);
}

/* An entry into the abort handler by a branch in user space: the section it serves. */
static void print_user_abort(struct rd_trace_out *c, const struct rt_event *e,
			     const struct rd_secinfo *si)
{
	char loc[RD_LOC_LEN], handler[RD_LOC_LEN];

	if (si && (si->loc.func || si->loc.section))
		rd_loc_str(&si->loc, loc, sizeof(loc));
	else
		snprintf(loc, sizeof(loc), "%#" PRIx64, (uint64_t)e->a1);
	fprintf(c->rec, "section %s handler %s entered by a branch, not by the kernel\n", loc,
		rd_tracer_sym(c->t, e->pid, e->a3, handler, sizeof(handler)));
}

static void json_user_abort(struct jw *w, const struct rt_event *e, const struct rd_secinfo *si)
{
	jw_key(w, "section");
	jw_obj_open(w);
	rd_json_section(w, si, e->a1, e->a2, e->a3);
	jw_obj_close(w);
}

static void json_stack(struct rd_trace_out *c, const struct rt_event *e)
{
	struct jw *w = c->w;
	char sym[RD_LOC_LEN];

	jw_key(w, "stack");
	jw_arr_open(w);
	for (uint32_t i = 0; i < e->nstack && i < RT_MAX_STACK && e->stack[i]; i++) {
		/* A location object, and the frame's name as the text output gives it */
		jw_obj_open(w);
		rd_tracer_json_loc(c->t, w, e->pid, e->stack[i]);
		jw_kstr(w, "symbol", rd_tracer_sym(c->t, e->pid, e->stack[i], sym, sizeof(sym)));
		jw_obj_close(w);
	}
	jw_arr_close(w);
}

static void json_event(struct rd_trace_out *c, const struct rt_event *e, double wall,
		       const struct rd_secinfo *si, const char *insn)
{
	struct jw *w = c->w;

	jw_obj_open(w);
	jw_ku64(w, "time_ns", (uint64_t)(wall * 1e6) * 1000);
	jw_ku64(w, "pid", e->pid);
	jw_ku64(w, "tid", e->tid);
	jw_kstr(w, "comm", e->comm);
	jw_ku64(w, "cpu", e->cpu);
	jw_kstr(w, "kind", event_name(e->type));
	switch (e->type) {
	case RT_EV_ABORT:
		json_abort(c, e, si, insn);
		if (c->stack)
			json_stack(c, e);
		break;
	case RT_EV_MIGRATE:
		jw_ku64(w, "from_cpu", e->a0);
		jw_ku64(w, "to_cpu", e->a1);
		break;
	case RT_EV_UPDATE:
		jw_ku64(w, "cpu_id", e->a0);
		jw_ku64(w, "node_id", e->a1);
		jw_ku64(w, "mm_cid", e->a2);
		break;
	case RT_EV_SIGNAL:
		jw_ku64(w, "signal", e->a0);
		break;
	case RT_EV_USER_ABORT:
		json_user_abort(w, e, si);
		break;
	}
	jw_obj_close(w);
	jw_end(w);
}

static void print_event(struct rd_trace_out *c, const struct rt_event *e, double wall,
			const struct rd_secinfo *si, const char *insn)
{
	time_t sec = (time_t)wall;
	char tbuf[32], who[48], sym[RD_LOC_LEN];
	struct tm tm;

	localtime_r(&sec, &tm);
	strftime(tbuf, sizeof(tbuf), "%H:%M:%S", &tm);
	snprintf(who, sizeof(who), "%u/%u", e->pid, e->tid);
	fprintf(c->rec, "%s.%06d %-15s %-16.16s %3u %-8s ", tbuf, (int)((wall - (double)sec) * 1e6),
		who, rd_safe(e->comm), e->cpu, event_name(e->type));
	switch (e->type) {
	case RT_EV_ABORT:
		print_abort_plain(c, e, si, insn);
		for (uint32_t i = 0; c->stack && i < e->nstack && i < RT_MAX_STACK && e->stack[i];
		     i++)
			fprintf(c->rec, "        %#018" PRIx64 " %s\n", (uint64_t)e->stack[i],
				rd_tracer_sym(c->t, e->pid, e->stack[i], sym, sizeof(sym)));
		break;
	case RT_EV_MIGRATE:
		fprintf(c->rec, "cpu %" PRIu64 " -> %" PRIu64 "\n", (uint64_t)e->a0,
			(uint64_t)e->a1);
		break;
	case RT_EV_UPDATE:
		fprintf(c->rec, "cpu_id=%" PRIu64 " node_id=%" PRIu64 " mm_cid=%" PRIu64 "\n",
			(uint64_t)e->a0, (uint64_t)e->a1, (uint64_t)e->a2);
		break;
	case RT_EV_SIGNAL:
		fprintf(c->rec, "%s\n", strsignal((int)e->a0));
		break;
	case RT_EV_USER_ABORT:
		print_user_abort(c, e, si);
		break;
	}
}

/* Write buf[0, len) to fd in whole lines, as many as fit in PIPE_BUF bytes per write (a longer
 * line alone): the kernel keeps such a write in one piece on a pipe or a terminal, so the
 * lines of a command writing to the same file land between records, never inside one. */
static int write_lines(int fd, const char *buf, size_t len)
{
	while (len) {
		size_t n = 0, end;
		ssize_t w;

		while (n < len) {
			const char *nl = memchr(buf + n, '\n', len - n);

			end = nl ? (size_t)(nl - buf) + 1 : len;
			if (n && end > PIPE_BUF)
				break;
			n = end;
		}
		w = write(fd, buf, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Hand the record collected in c->rec to c->out. */
static void rec_flush(struct rd_trace_out *c)
{
	int err;

	if (fflush(c->rec) || !c->reclen)
		return;
	err = write_lines(fileno(c->out), c->recbuf, c->reclen);
	if (err && !c->write_err)
		c->write_err = -err;
	rewind(c->rec);
}

int rd_out_init(struct rd_trace_out *c, FILE *out)
{
	c->out = out;
	c->rec = open_memstream(&c->recbuf, &c->reclen);
	c->w = c->rec ? jw_new(c->rec, rd.pretty) : NULL;
	if (!c->w) {
		rd_seterr("out of memory");
		return -ENOMEM;
	}
	/* What else reaches out (an error object in JSON mode) is written at once, in order. */
	fflush(out);
	setvbuf(out, NULL, _IONBF, 0);
	return EXIT_OK;
}

int rd_out_event(void *ctx, const struct rt_event *e)
{
	struct rd_trace_out *c = ctx;
	const struct rd_secinfo *si = NULL;
	char insn[128] = "";
	double wall = rd_tracer_walltime(c->t, e->ts);

	c->events++;
	if (e->type == RT_EV_USER_ABORT && !c->summary && !c->folded) {
		si = rd_tracer_section_of(c->t, e->pid, e->a1);
	} else if (e->type == RT_EV_ABORT) {
		si = rd_tracer_section_of(c->t, e->pid, e->a1);
		if (c->folded)
			fold_add(c, e);
		if (c->summary || c->folded)
			return 0;
		rd_tracer_insn(c->t, si, e->a1, e->a0, insn, sizeof(insn));
	} else if (c->summary || c->folded) {
		return 0;
	}
	if (rd.json)
		json_event(c, e, wall, si, insn);
	else
		print_event(c, e, wall, si, insn);
	rec_flush(c);
	return 0;
}

int rd_out_summary(struct rd_trace_out *c, int top, bool final)
{
	struct rd_summary s;
	int err = rd_tracer_summary(c->t, &s);

	if (err) {
		rd_seterr("reading the BPF maps failed: %s", strerror(-err));
		return err;
	}
	if (c->have_prev)
		rd_summary_since(&s, &c->prev);
	if (rd.json) {
		jw_obj_open(c->w);
		jw_kstr(c->w, "kind", "summary");
		jw_key(c->w, "summary");
		jw_obj_open(c->w);
		jw_kbool(c->w, "final", final);
		rd_summary_json(&s, c->w, top);
		jw_obj_close(c->w);
		jw_obj_close(c->w);
		jw_end(c->w);
	} else {
		fprintf(c->rec, "\n--- summary ---\n");
		rd_summary_print(&s, top, c->rec);
	}
	rec_flush(c);
	/* Kept to give the next summary its rates over the interval. */
	rd_summary_free(&c->prev);
	c->prev = s;
	c->have_prev = true;
	return 0;
}

void rd_out_folded(struct rd_trace_out *c)
{
	for (size_t i = 0; i < c->nfold; i++)
		fprintf(c->rec, "%s %" PRIu64 "\n", c->fold[i].stack, c->fold[i].count);
	rec_flush(c);
}

void rd_out_free(struct rd_trace_out *c)
{
	jw_free(c->w);
	if (c->rec)
		fclose(c->rec);
	free(c->recbuf);
	for (size_t i = 0; i < c->nfold; i++)
		free(c->fold[i].stack);
	free(c->fold);
	rd_summary_free(&c->prev);
}
