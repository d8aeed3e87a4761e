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

int rd_step_out_errno;

static const char *const res_name[] = {"commit", "abort", "exit", "lost", "none"};

/* Output that cannot be written ends stepping as SIGINT does: nobody reads what we step. */
void rd_step_check_output(void)
{
	if (rd_step_out_errno || !ferror(stdout))
		return;
	rd_step_out_errno = errno ? errno : EIO;
	rd_pt_quit = 1;
}

uint64_t rd_step_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

const char *rd_step_base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

const char *rd_step_place(struct stepper *st, uint64_t pc)
{
	struct symline *c = &st->symcache[(pc ^ (pc >> 12)) % SYMCACHE];
	const struct rd_module *m;
	char buf[RD_LOC_LEN + 300];

	if (c->text && c->pc == pc)
		return c->text;
	m = rd_modules_find(&st->mods, pc);
	if (m) {
		char loc[RD_LOC_LEN];

		snprintf(buf, sizeof(buf), "%s+%#" PRIx64 " %s",
			 rd_safe(rd_step_base_name(m->path)), pc - m->bias,
			 rd_sym_str(m->es, pc - m->bias, loc, sizeof(loc)));
	} else {
		snprintf(buf, sizeof(buf), "? ?");
	}
	free(c->text);
	c->text = strdup(buf);
	c->pc = pc;
	return c->text ? c->text : "?";
}

/* The member "section": a section object (schemas/common.json) and where it came from. */
static void json_section(struct stepper *st, const struct section *s)
{
	struct jw *w = rd.jw;
	const struct rd_module *m = rd_modules_find(&st->mods, s->start);

	jw_key(w, "section");
	jw_obj_open(w);
	rd_json_section_members(w, m ? m->es : NULL, m ? m->bias : 0, m ? m->path : NULL, s->start,
				s->post_commit - s->start, s->abort, NULL);
	jw_kstr(w, "source", s->src == SRC_TABLE ? "table" : "rseq_cs");
	jw_obj_close(w);
}

/* "func (file:line) [start, post_commit)", "op (bits.h:35) inlined in func+0x9b (f.c:120)
 * [start, post_commit)" */
const char *rd_step_sec_name(const struct section *s, char *buf, size_t len)
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

void rd_step_print_step(struct stepper *st, const struct elfscan_insn *in)
{
	const struct rd_module *m;

	if (st->o.quiet)
		return;
	if (!rd.json) {
		printf("%d %#" PRIx64 " %s  %s\n", st->cur_tid, in->addr,
		       rd_step_place(st, in->addr), in->text);
		rd_step_check_output();
		return;
	}
	m = rd_modules_find(&st->mods, in->addr);
	/* A location object with what the step adds. */
	jw_obj_open(rd.jw);
	jw_kstr(rd.jw, "kind", "step");
	jw_ku64(rd.jw, "tid", (uint64_t)st->cur_tid);
	rd_json_loc_members(rd.jw, m ? m->es : NULL, in->addr - (m ? m->bias : 0), m ? m->bias : 0,
			    m ? m->path : NULL);
	jw_key(rd.jw, "module_offset");
	if (m)
		jw_u64(rd.jw, in->addr - m->bias);
	else
		jw_null(rd.jw);
	jw_kstr(rd.jw, "insn", in->text);
	jw_obj_close(rd.jw);
	jw_end(rd.jw);
	rd_step_check_output();
}

void rd_step_print_passage(struct stepper *st, const struct section *s, enum result r, uint64_t at,
			   uint64_t ns, bool net, bool retries)
{
	char name[512];

	if (rd.json) {
		jw_obj_open(rd.jw);
		jw_kstr(rd.jw, "kind", "passage");
		jw_ku64(rd.jw, "tid", (uint64_t)st->cur_tid);
		json_section(st, s);
		jw_kstr(rd.jw, "result", res_name[r]);
		jw_ku64(rd.jw, "at", at);
		jw_ku64(rd.jw, "ns", ns);
		jw_kbool(rd.jw, "safety_net", net);
		jw_kbool(rd.jw, "retry_loop", retries);
		jw_obj_close(rd.jw);
		jw_end(rd.jw);
		rd_step_check_output();
		return;
	}
	rd_step_sec_name(s, name, sizeof(name));
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
		       st->cur_tid, name, at, rd_step_place(st, at),
		       retries ? " during retries at full speed" : "", ns);
		break;
	default:
		printf("%d passage %s: left at %#" PRIx64
		       " %s, found by the safety net after %" PRIu64 " ns\n",
		       st->cur_tid, name, at, rd_step_place(st, at), ns);
		break;
	}
}

void rd_step_print_inside(struct stepper *st, pid_t tid, uint64_t pc, const struct section *s)
{
	char name[512];

	if (rd.json) {
		jw_obj_open(rd.jw);
		jw_kstr(rd.jw, "kind", "inside");
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
	       tid, pc, rd_step_sec_name(s, name, sizeof(name)), s->abort,
	       rd_step_place(st, s->abort));
}

void rd_step_print_event(struct stepper *st, const char *kind, pid_t tid, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (rd.json) {
		jw_obj_open(rd.jw);
		jw_kstr(rd.jw, "kind", kind);
		jw_ku64(rd.jw, "tid", (uint64_t)tid);
		jw_kstr(rd.jw, "message", msg);
		jw_obj_close(rd.jw);
		jw_end(rd.jw);
	} else {
		printf("%d %s: %s\n", tid, kind, msg);
	}
	rd_step_check_output();
}

void rd_step_print_summary(struct stepper *st)
{
	uint64_t el = rd_step_now_ns() - ((uint64_t)st->t0.tv_sec * 1000000000ull + st->t0.tv_nsec);
	double secs = el / 1e9, ips = secs > 0 ? st->steps / secs : 0;
	double spp = st->passages ? (double)st->stops_in_passages / st->passages : 0;

	if (rd.json) {
		jw_obj_open(rd.jw);
		jw_kstr(rd.jw, "kind", "summary");
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
