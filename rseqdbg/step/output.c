// SPDX-License-Identifier: GPL-2.0-only
/* rseqdbg step output: each step, passage and event as a text line or a JSON line. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "step/stepper.h"
#include "symfmt.h"

int out_errno;

static const char *const res_name[] = {"commit", "abort", "exit", "lost", "none"};

/* Output that cannot be written ends stepping as SIGINT does: nobody reads what we step. */
void check_output(void)
{
	if (out_errno || !ferror(stdout))
		return;
	out_errno = errno ? errno : EIO;
	rd_pt_quit = 1;
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

const char *place(struct stepper *st, uint64_t pc)
{
	struct symline *c = &st->symcache[(pc ^ (pc >> 12)) % SYMCACHE];
	const struct rd_module *m;
	char buf[RD_LOC_LEN + 300];

	if (c->text && c->pc == pc)
		return c->text;
	m = rd_modules_find(&st->mods, pc);
	if (m) {
		char loc[RD_LOC_LEN];

		snprintf(buf, sizeof(buf), "%s+%#" PRIx64 " %s", rd_safe(base_name(m->path)),
			 pc - m->bias, rd_sym_str(m->es, pc - m->bias, loc, sizeof(loc)));
	} else {
		snprintf(buf, sizeof(buf), "? ?");
	}
	free(c->text);
	c->text = strdup(buf);
	c->pc = pc;
	return c->text ? c->text : "?";
}

static void json_section(struct stepper *st, const struct section *s)
{
	struct jw *w = rd.jw;
	const struct rd_module *m;
	struct elfscan_loc loc = {0};

	jw_key(w, "section");
	jw_obj_open(w);
	jw_kstr(w, "function", s->func);
	jw_kstr(w, "file", s->file);
	jw_key(w, "line");
	if (s->line > 0)
		jw_u64(w, (uint64_t)s->line);
	else
		jw_null(w);
	jw_ku64(w, "start", s->start);
	jw_ku64(w, "post_commit", s->post_commit);
	jw_ku64(w, "abort", s->abort);
	jw_kstr(w, "source", s->src == SRC_TABLE ? "table" : "rseq_cs");
	/* The chain is looked up again only for a section in inlined code: passages are many. */
	m = s->inlined ? rd_modules_find(&st->mods, s->start) : NULL;
	if (m)
		rd_symbolize(m->es, s->start - m->bias, &loc);
	rd_json_inlined(w, m ? m->es : NULL, m ? s->start - m->bias : 0, &loc);
	jw_obj_close(w);
}

/* "func (file:line) [start, post_commit)", "op (bits.h:35) inlined in func+0x9b (f.c:120)
 * [start, post_commit)" */
const char *sec_name(const struct section *s, char *buf, size_t len)
{
	if (s->label)
		snprintf(buf, len, "%s [%#" PRIx64 ", %#" PRIx64 ")%s", s->label, s->start,
			 s->post_commit,
			 !(s->file && s->line > 0) && s->src == SRC_RSEQ_CS ? " (from rseq_cs)"
									    : "");
	else if (s->file && s->line > 0)
		snprintf(buf, len, "%s (%s:%d) [%#" PRIx64 ", %#" PRIx64 ")",
			 s->func ? rd_safe(s->func) : "?", rd_safe(s->file), s->line, s->start,
			 s->post_commit);
	else
		snprintf(buf, len, "%s [%#" PRIx64 ", %#" PRIx64 ")%s",
			 s->func ? rd_safe(s->func) : "?", s->start, s->post_commit,
			 s->src == SRC_RSEQ_CS ? " (from rseq_cs)" : "");
	return buf;
}

void print_step(struct stepper *st, const struct elfscan_insn *in)
{
	const struct rd_module *m;
	struct elfscan_loc loc;

	if (st->o.quiet)
		return;
	if (!rd.json) {
		printf("%d %#" PRIx64 " %s  %s\n", st->cur_tid, in->addr, place(st, in->addr),
		       in->text);
		check_output();
		return;
	}
	m = rd_modules_find(&st->mods, in->addr);
	rd_symbolize(m ? m->es : NULL, m ? in->addr - m->bias : 0, &loc);
	jw_obj_open(rd.jw);
	jw_kstr(rd.jw, "type", "step");
	jw_ku64(rd.jw, "tid", (uint64_t)st->cur_tid);
	jw_ku64(rd.jw, "addr", in->addr);
	jw_kstr(rd.jw, "module", m ? m->path : NULL);
	jw_key(rd.jw, "module_offset");
	if (m)
		jw_u64(rd.jw, in->addr - m->bias);
	else
		jw_null(rd.jw);
	jw_kstr(rd.jw, "function", loc.func);
	jw_key(rd.jw, "offset");
	if (loc.func)
		jw_u64(rd.jw, loc.func_off);
	else
		jw_null(rd.jw);
	jw_kstr(rd.jw, "file", loc.file && loc.line > 0 ? loc.file : NULL);
	jw_key(rd.jw, "line");
	if (loc.file && loc.line > 0)
		jw_u64(rd.jw, (uint64_t)loc.line);
	else
		jw_null(rd.jw);
	jw_kstr(rd.jw, "insn", in->text);
	jw_obj_close(rd.jw);
	jw_end(rd.jw);
	check_output();
}

void print_passage(struct stepper *st, const struct section *s, enum result r, uint64_t at,
		   uint64_t ns, bool net, bool retries)
{
	char name[512];

	if (rd.json) {
		jw_obj_open(rd.jw);
		jw_kstr(rd.jw, "type", "passage");
		jw_ku64(rd.jw, "tid", (uint64_t)st->cur_tid);
		json_section(st, s);
		jw_kstr(rd.jw, "result", res_name[r]);
		jw_ku64(rd.jw, "at", at);
		jw_ku64(rd.jw, "ns", ns);
		jw_kbool(rd.jw, "safety_net", net);
		jw_kbool(rd.jw, "retry_loop", retries);
		jw_obj_close(rd.jw);
		jw_end(rd.jw);
		check_output();
		return;
	}
	sec_name(s, name, sizeof(name));
	switch (r) {
	case RES_COMMIT:
		printf("%d passage %s: committed (%#" PRIx64 ")%s in %" PRIu64 " ns\n", st->cur_tid,
		       name, at, retries ? " after retries at full speed" : "", ns);
		break;
	case RES_ABORT:
		printf("%d passage %s: aborted to the abort handler %#" PRIx64 "%s in %" PRIu64
		       " ns\n",
		       st->cur_tid, name, at, retries ? " during retries at full speed" : "", ns);
		break;
	case RES_EXIT:
		printf("%d passage %s: left through exit %#" PRIx64 " %s%s in %" PRIu64 " ns\n",
		       st->cur_tid, name, at, place(st, at),
		       retries ? " during retries at full speed" : "", ns);
		break;
	default:
		printf("%d passage %s: left at %#" PRIx64
		       " %s, found by the safety net after %" PRIu64 " ns\n",
		       st->cur_tid, name, at, place(st, at), ns);
		break;
	}
}

void print_inside(struct stepper *st, pid_t tid, uint64_t pc, const struct section *s)
{
	char name[512];

	if (rd.json) {
		jw_obj_open(rd.jw);
		jw_kstr(rd.jw, "type", "inside");
		jw_ku64(rd.jw, "tid", (uint64_t)tid);
		jw_ku64(rd.jw, "addr", pc);
		json_section(st, s);
		jw_ku64(rd.jw, "resume_aborts_to", s->abort);
		jw_obj_close(rd.jw);
		jw_end(rd.jw);
		return;
	}
	printf("%d stopped at %#" PRIx64 " inside critical section %s: resuming will abort to "
	       "%#" PRIx64 " %s\n",
	       tid, pc, sec_name(s, name, sizeof(name)), s->abort, place(st, s->abort));
}

void print_event(struct stepper *st, const char *type, pid_t tid, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (rd.json) {
		jw_obj_open(rd.jw);
		jw_kstr(rd.jw, "type", type);
		jw_ku64(rd.jw, "tid", (uint64_t)tid);
		jw_kstr(rd.jw, "message", msg);
		jw_obj_close(rd.jw);
		jw_end(rd.jw);
	} else {
		printf("%d %s: %s\n", tid, type, msg);
	}
	check_output();
}

void print_summary(struct stepper *st)
{
	uint64_t el = now_ns() - ((uint64_t)st->t0.tv_sec * 1000000000ull + st->t0.tv_nsec);
	double secs = el / 1e9, ips = secs > 0 ? st->steps / secs : 0;
	double spp = st->passages ? (double)st->stops_in_passages / st->passages : 0;

	if (rd.json) {
		jw_obj_open(rd.jw);
		jw_kstr(rd.jw, "type", "summary");
		jw_kstr(rd.jw, "end", st->end);
		jw_ku64(rd.jw, "instructions", st->steps);
		jw_ku64(rd.jw, "passages", st->passages);
		jw_ku64(rd.jw, "commits", st->res[RES_COMMIT]);
		jw_ku64(rd.jw, "aborts", st->res[RES_ABORT]);
		jw_ku64(rd.jw, "exits", st->res[RES_EXIT]);
		jw_ku64(rd.jw, "lost", st->res[RES_LOST]);
		jw_ku64(rd.jw, "signals", st->signals);
		jw_ku64(rd.jw, "ptrace_stops", st->tr.stops);
		jw_ku64(rd.jw, "passage_stops", st->stops_in_passages);
		jw_kdouble(rd.jw, "stops_per_passage", spp);
		jw_kdouble(rd.jw, "seconds", secs);
		jw_kdouble(rd.jw, "instructions_per_second", ips);
		jw_obj_close(rd.jw);
		jw_end(rd.jw);
		return;
	}
	printf("summary: %s; %" PRIu64 " instructions stepped, %" PRIu64 " passages (%" PRIu64
	       " committed, %" PRIu64 " aborted, %" PRIu64 " exits, %" PRIu64 " lost), %" PRIu64
	       " signals, %" PRIu64 " ptrace stops (%.2f per passage), %.3f s, %.0f "
	       "instructions/s\n",
	       st->end, st->steps, st->passages, st->res[RES_COMMIT], st->res[RES_ABORT],
	       st->res[RES_EXIT], st->res[RES_LOST], st->signals, st->tr.stops, spp, secs, ips);
}
