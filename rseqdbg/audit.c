// SPDX-License-Identifier: GPL-2.0-only
/* rseqdbg audit: run libelfscan's checks on ELF files or the modules of a process. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "baseline.h"
#include "bulk.h"
#include "common.h"
#include "core/core.h"
#include "core/modules.h"
#include "elfscan-audit.h"
#include "proc/maps.h"
#include "proc/ptrace.h"
#include "proc/rseqarea.h"
#include "proc/tasks.h"
#include "suppress.h"
#include "symfmt.h"

struct audit_opts {
	const char **enable, **disable; /* NULL-terminated */
	size_t nenable, ndisable;
	enum elfscan_severity fail_on;
	bool sarif, list;
	bool have_pid;
	pid_t pid;
	const char *baseline_path;
	struct rd_baseline *baseline; /* --baseline */
	struct rd_suppressions sup;   /* --suppressions, --suppress */
	bool have_sup;
	struct rd_bulk_opts bulk;
};

/* What the run makes of a finding, with a baseline or suppressions, or in JSON and SARIF. */
struct mark {
	char *fp;			  /* its fingerprint */
	const struct rd_suppression *sup; /* the rule that accepts it */
	bool unchanged;			  /* in the baseline */
};

/* The findings of a file, as reported: new ones, and those left out. */
struct tally {
	size_t cnt[3]; /* reported, by severity */
	size_t unchanged, suppressed;
};

/* One audited file or module. */
struct unit {
	const char *path;
	struct elfscan *es;
	const struct rd_module *mod; /* --pid */
	uint64_t bias;
	struct elfscan_audit *a;
	struct mark *marks; /* one a finding; NULL: every finding reported, no fingerprint */
};

/* --pid: what each thread registered. */
struct thread {
	pid_t tid;
	bool registered;
	uint32_t sig;
};

static void usage(FILE *f)
{
	fprintf(
	    f, "Usage: rseqdbg audit [OPTIONS] FILE...\n"
	       "       rseqdbg audit [OPTIONS] -r DIR...\n"
	       "       rseqdbg audit [OPTIONS] -p PID\n"
	       "       rseqdbg audit [OPTIONS] --core CORE [--exe FILE] [--sysroot DIR]\n"
	       "       rseqdbg audit --list-checks\n"
	       "\n"
	       "Check the rseq descriptor tables of ELF files and the code of their critical\n"
	       "sections: descriptors, signatures, tables, code (decoded), orphan abort handlers.\n"
	       "Among several files (more than one FILE, or -r), files that are not ELF are\n"
	       "skipped and counted, and a summary line ends the output.\n"
	       "\n"
	       "Options:\n"
	       "      --check ID       run only this check (repeatable)\n"
	       "      --skip ID        do not run this check (repeatable)\n"
	       "      --list-checks    describe every check and exit\n"
	       "      --fail-on LEVEL  exit 1 on findings at or above LEVEL: error (default),\n"
	       "                       warning or info\n"
	       "  -p, --pid PID        audit the modules mapped in a running process and compare\n"
	       "                       signatures with those its threads registered\n"
	       "      --core CORE      audit the modules a core file maps, each file checked\n"
	       "                       against the core's build ID\n"
	       "      --exe FILE       with --core: the program's file, when not where the core\n"
	       "                       says it was\n"
	       "      --sysroot DIR    with --core: read the files the core maps under DIR\n"
	       "  -j, --json           print one JSON document (schema in rseqdbg-audit(1))\n"
	       "      --pretty         print indented JSON (implies --json)\n"
	       "      --sarif          print SARIF 2.1.0 (for code-scanning services)\n"
	       "      --baseline FILE  report only the findings not in FILE, the output of an\n"
	       "                       earlier audit --sarif or --json\n"
	       "      --suppressions FILE\n"
	       "                       accept the findings its rules match, one a line:\n"
	       "                       CHECK MODULE FUNCTION [REASON] (globs; repeatable)\n"
	       "      --suppress RULE  one such rule (repeatable)\n"
	       "  -r, --recursive      audit the files under each directory FILE (symbolic\n"
	       "                       links not followed)\n"
	       "      --with-tables    print only the files with rseq tables or findings\n"
	       "      --strict         among several files too, one that is not ELF is an error\n"
	       "      --no-progress    no progress line on a terminal\n"
	       "  -h, --help           print this help\n"
	       "\n"
	       "Exit status: 0 no finding at or above --fail-on, 1 such findings, 2 could not "
	       "audit.\n");
}

/* --- locations ------------------------------------------------------------------------- */

/* A location in a line of text: "func+0x12 (file.S:42)", or the address without a function. */
static void print_where(struct elfscan *es, uint64_t addr, uint64_t bias)
{
	struct elfscan_loc loc;
	char buf[RD_LOC_LEN];

	if (rd_symbolize(es, addr, &loc))
		printf("%s", rd_loc_str(&loc, buf, sizeof(buf)));
	else
		printf("0x%" PRIx64, addr + bias);
}

/* The place a finding is about: its section's start, else its own address. */
static uint64_t finding_anchor(const struct elfscan_finding *f)
{
	const struct elfscan_cs *cs = elfscan_finding_cs(f);

	return cs ? cs->start_ip : elfscan_finding_addr(f);
}

/* --- fingerprints, baseline, suppressions ------------------------------------------------ */

/*
 * A fingerprint names a finding so that a rebuild that moves code finds it again: the check,
 * the module's file name, the function of its section (the ELF section for code no symbol
 * covers, as in a stripped tcmalloc), the finding's offset in its section when it is about
 * the section's code, and its rank among the findings of the file with all that in common.
 * No address: a rebuilt binary has others, and another build-id.
 */
static const char *finding_func(const struct unit *u, const struct elfscan_finding *f)
{
	struct elfscan_loc loc;

	if (!rd_symbolize(u->es, finding_anchor(f), &loc))
		return "";
	return loc.func ? loc.func : loc.section;
}

static char *finding_key(const struct unit *u, const struct elfscan_finding *f, const char *func)
{
	const struct elfscan_cs *cs = elfscan_finding_cs(f);
	uint64_t addr = elfscan_finding_addr(f);
	char *key, off[24] = "";

	if (cs && addr >= cs->start_ip && addr <= cs->post_commit_ip)
		snprintf(off, sizeof(off), "+%#" PRIx64, addr - cs->start_ip);
	if (asprintf(&key, "%s/%s/%s%s", elfscan_finding_check(f)->id, rd_basename(u->path), func,
		     off) < 0)
		return NULL;
	return key;
}

struct keyed {
	char *key;
	size_t i;
};

static int cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : x->i < y->i ? -1 : x->i > y->i;
}

/* Each finding's fingerprint, whether the baseline has it, and the rule that suppresses it. */
static int mark_findings(const struct audit_opts *o, struct unit *u)
{
	size_t n = elfscan_audit_count(u->a);
	struct keyed *k = calloc(n ? n : 1, sizeof(*k));
	int err = 0;

	u->marks = calloc(n ? n : 1, sizeof(*u->marks));
	if (!k || !u->marks) {
		free(k);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const struct elfscan_finding *f = elfscan_audit_finding(u->a, i);
		const char *func = finding_func(u, f);

		k[i].i = i;
		k[i].key = finding_key(u, f, func);
		if (!k[i].key) {
			err = -ENOMEM;
			goto out;
		}
		if (o->have_sup)
			u->marks[i].sup = rd_suppressions_match(
			    &o->sup, elfscan_finding_check(f)->id, u->path, func);
	}
	qsort(k, n, sizeof(*k), cmp_keyed);
	for (size_t j = 0, rank = 1; j < n; j++) {
		struct mark *m = &u->marks[k[j].i];

		rank = j && !strcmp(k[j].key, k[j - 1].key) ? rank + 1 : 1;
		if (asprintf(&m->fp, "%s/%zu", k[j].key, rank) < 0) {
			m->fp = NULL;
			err = -ENOMEM;
			goto out;
		}
	}
	if (o->baseline) {
		rd_baseline_audited(o->baseline, rd_basename(u->path));
		for (size_t i = 0; i < n; i++)
			u->marks[i].unchanged = rd_baseline_match(o->baseline, u->marks[i].fp);
	}
out:
	for (size_t i = 0; i < n; i++)
		free(k[i].key);
	free(k);
	return err;
}

static void unmark(struct unit *u)
{
	for (size_t i = 0; u->marks && i < elfscan_audit_count(u->a); i++)
		free(u->marks[i].fp);
	free(u->marks);
	u->marks = NULL;
}

/* Whether finding i is reported (text and JSON list it, and it counts for --fail-on). */
static bool reported(const struct unit *u, size_t i)
{
	return !u->marks || (!u->marks[i].sup && !u->marks[i].unchanged);
}

static void tally(const struct unit *u, struct tally *t)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < elfscan_audit_count(u->a); i++) {
		const struct elfscan_finding *f = elfscan_audit_finding(u->a, i);

		if (reported(u, i))
			t->cnt[elfscan_finding_check(f)->severity]++;
		else if (u->marks[i].sup)
			t->suppressed++;
		else
			t->unchanged++;
	}
}

/* "path: N errors, N warnings, N info" and what was left out, in a line of text. */
static void print_counts(const struct audit_opts *o, const char *what, const struct tally *t)
{
	const size_t *c = t->cnt;

	printf("%s: %zu error%s, %zu warning%s, %zu info", what, c[ELFSCAN_SEV_ERROR],
	       c[ELFSCAN_SEV_ERROR] == 1 ? "" : "s", c[ELFSCAN_SEV_WARNING],
	       c[ELFSCAN_SEV_WARNING] == 1 ? "" : "s", c[ELFSCAN_SEV_INFO]);
	if (o->baseline && o->have_sup)
		printf(" (%zu unchanged from the baseline, %zu suppressed)", t->unchanged,
		       t->suppressed);
	else if (o->baseline)
		printf(" (%zu unchanged from the baseline)", t->unchanged);
	else if (o->have_sup)
		printf(" (%zu suppressed)", t->suppressed);
	putchar('\n');
}

/* --- human output ---------------------------------------------------------------------- */

static void print_human(const struct audit_opts *o, const struct unit *u)
{
	size_t n = elfscan_audit_count(u->a);
	const struct elfscan_cs *cur = NULL;
	struct tally t;
	const char *note = elfscan_audit_code_note(u->a);

	printf("%s (%s, %zu section%s", rd_safe(u->path), elfscan_arch_name(u->es),
	       elfscan_count(u->es), elfscan_count(u->es) == 1 ? "" : "s");
	if (u->mod)
		printf(", bias 0x%" PRIx64, u->bias);
	printf(")\n");
	if (note[0])
		printf("  code checks skipped: %s\n", rd_safe(note));
	for (size_t i = 0; i < n; i++) {
		const struct elfscan_finding *f = elfscan_audit_finding(u->a, i);
		const struct elfscan_check *k = elfscan_finding_check(f);
		const struct elfscan_cs *cs = elfscan_finding_cs(f);
		const char *indent = cs ? "    " : "  ";

		if (!reported(u, i))
			continue;
		if (cs && cs != cur) {
			printf("  section ");
			print_where(u->es, cs->start_ip, u->bias);
			printf(" [0x%" PRIx64 ", 0x%" PRIx64 ") abort 0x%" PRIx64 ":\n",
			       cs->start_ip + u->bias, cs->post_commit_ip + u->bias,
			       cs->abort_ip + u->bias);
			cur = cs;
		}
		printf("%s%s %s: %s", indent, k->id, elfscan_severity_name(k->severity),
		       rd_safe(cs ? elfscan_finding_detail(f) : elfscan_finding_message(f)));
		if (elfscan_finding_count(f) > 1)
			printf(" (%zu times)", elfscan_finding_count(f));
		putchar('\n');
		printf("%s  hint: %s\n", indent, k->hint);
	}
	tally(u, &t);
	print_counts(o, rd_safe(u->path), &t);
}

/* --- JSON output ----------------------------------------------------------------------- */

static void json_str_or_null(struct jw *w, const char *key, const char *s)
{
	jw_key(w, key);
	if (s)
		jw_str(w, s);
	else
		jw_null(w);
}

static void json_summary(struct jw *w, const struct audit_opts *o, const struct tally *t)
{
	jw_key(w, "summary");
	jw_obj_open(w);
	jw_ku64(w, "errors", t->cnt[ELFSCAN_SEV_ERROR]);
	jw_ku64(w, "warnings", t->cnt[ELFSCAN_SEV_WARNING]);
	jw_ku64(w, "info", t->cnt[ELFSCAN_SEV_INFO]);
	if (o->baseline)
		jw_ku64(w, "unchanged", t->unchanged);
	if (o->have_sup)
		jw_ku64(w, "suppressed", t->suppressed);
	jw_obj_close(w);
}

static void json_unit(struct jw *w, const struct audit_opts *o, const struct unit *u)
{
	size_t n = elfscan_audit_count(u->a);
	struct tally t;
	const char *note = elfscan_audit_code_note(u->a);

	jw_obj_open(w);
	jw_kstr(w, "path", u->path);
	jw_kstr(w, "arch", elfscan_arch_name(u->es));
	if (u->mod) {
		jw_ku64(w, "start", u->mod->start);
		jw_ku64(w, "end", u->mod->end);
		jw_ku64(w, "bias", u->bias);
	}
	jw_ku64(w, "sections", elfscan_count(u->es));
	json_str_or_null(w, "code_checks_skipped", note[0] ? note : NULL);
	jw_key(w, "findings");
	jw_arr_open(w);
	for (size_t i = 0; i < n; i++) {
		const struct elfscan_finding *f = elfscan_audit_finding(u->a, i);
		const struct elfscan_check *k = elfscan_finding_check(f);
		const struct elfscan_cs *cs = elfscan_finding_cs(f);

		if (!reported(u, i))
			continue;
		jw_obj_open(w);
		jw_kstr(w, "check", k->id);
		jw_kstr(w, "severity", elfscan_severity_name(k->severity));
		jw_kstr(w, "title", k->title);
		jw_kstr(w, "message", elfscan_finding_message(f));
		if (elfscan_finding_count(f) > 1)
			jw_ku64(w, "count", elfscan_finding_count(f));
		jw_kstr(w, "hint", k->hint);
		jw_ku64(w, "addr", elfscan_finding_addr(f) + u->bias);
		jw_key(w, "start_ip");
		if (cs)
			jw_u64(w, cs->start_ip + u->bias);
		else
			jw_null(w);
		/* The section's start, or the finding's address without a section */
		rd_json_kloc(w, "location", u->es, finding_anchor(f), u->bias,
			     u->mod ? u->mod->path : NULL);
		jw_kstr(w, "fingerprint", u->marks[i].fp);
		jw_obj_close(w);
	}
	jw_arr_close(w);
	tally(u, &t);
	json_summary(w, o, &t);
	jw_obj_close(w);
}

/* --- SARIF 2.1.0 ----------------------------------------------------------------------- */

static const char *sarif_level(enum elfscan_severity s)
{
	return s == ELFSCAN_SEV_ERROR ? "error" : s == ELFSCAN_SEV_WARNING ? "warning" : "note";
}

static void sarif_text(struct jw *w, const char *key, const char *text)
{
	jw_key(w, key);
	jw_obj_open(w);
	jw_kstr(w, "text", text);
	jw_obj_close(w);
}

static void sarif_rules(struct jw *w)
{
	jw_key(w, "rules");
	jw_arr_open(w);
	for (size_t i = 0; i < elfscan_audit_nchecks(); i++) {
		const struct elfscan_check *k = elfscan_audit_check(i);

		jw_obj_open(w);
		jw_kstr(w, "id", k->id);
		sarif_text(w, "shortDescription", k->title);
		sarif_text(w, "fullDescription", k->description);
		sarif_text(w, "help", k->hint);
		jw_key(w, "defaultConfiguration");
		jw_obj_open(w);
		jw_kstr(w, "level", sarif_level(k->severity));
		jw_obj_close(w);
		jw_key(w, "properties");
		jw_obj_open(w);
		jw_kstr(w, "category", k->group);
		jw_obj_close(w);
		jw_obj_close(w);
	}
	jw_arr_close(w);
}

static size_t rule_index(const struct elfscan_check *k)
{
	size_t idx = 0;

	for (size_t i = 0; i < elfscan_audit_nchecks(); i++)
		if (elfscan_audit_check(i) == k)
			idx = i;
	return idx;
}

/* The fingerprint, for baselines and for code-scanning services to match results. */
static void sarif_fingerprints(struct jw *w, const char *fp)
{
	jw_key(w, "fingerprints");
	jw_obj_open(w);
	jw_kstr(w, "rseqdbg/v1", fp);
	jw_obj_close(w);
	jw_key(w, "partialFingerprints");
	jw_obj_open(w);
	jw_kstr(w, "rseqdbg/v1", fp);
	jw_obj_close(w);
}

/* The rule that accepts the finding, as SARIF says one outside the code does. */
static void sarif_suppression(struct jw *w, const struct rd_suppression *r)
{
	jw_key(w, "suppressions");
	jw_arr_open(w);
	jw_obj_open(w);
	jw_kstr(w, "kind", "external");
	jw_kstr(w, "status", "accepted");
	if (r->reason[0])
		jw_kstr(w, "justification", r->reason);
	if (r->file) {
		jw_key(w, "location");
		jw_obj_open(w);
		jw_key(w, "physicalLocation");
		jw_obj_open(w);
		jw_key(w, "artifactLocation");
		jw_obj_open(w);
		jw_kstr(w, "uri", r->file);
		jw_obj_close(w);
		jw_key(w, "region");
		jw_obj_open(w);
		jw_ku64(w, "startLine", r->line);
		jw_obj_close(w);
		jw_obj_close(w);
		jw_obj_close(w);
	}
	jw_obj_close(w);
	jw_arr_close(w);
}

static void sarif_result(struct jw *w, const struct audit_opts *o, const struct unit *u, size_t i)
{
	const struct elfscan_finding *f = elfscan_audit_finding(u->a, i);
	const struct elfscan_check *k = elfscan_finding_check(f);
	const struct mark *m = &u->marks[i];
	size_t idx = rule_index(k);
	struct elfscan_loc loc;

	rd_symbolize(u->es, finding_anchor(f), &loc);
	jw_obj_open(w);
	jw_kstr(w, "ruleId", k->id);
	jw_ku64(w, "ruleIndex", idx);
	jw_kstr(w, "level", sarif_level(k->severity));
	sarif_text(w, "message", elfscan_finding_message(f));
	if (elfscan_finding_count(f) > 1)
		jw_ku64(w, "occurrenceCount", elfscan_finding_count(f));
	jw_key(w, "locations");
	jw_arr_open(w);
	jw_obj_open(w);
	if (loc.file && loc.line > 0) {
		jw_key(w, "physicalLocation");
		jw_obj_open(w);
		jw_key(w, "artifactLocation");
		jw_obj_open(w);
		jw_kstr(w, "uri", loc.file);
		jw_obj_close(w);
		jw_key(w, "region");
		jw_obj_open(w);
		jw_ku64(w, "startLine", (uint64_t)loc.line);
		jw_obj_close(w);
		jw_obj_close(w);
	} else {
		/* no source line: the binary and the address */
		jw_key(w, "physicalLocation");
		jw_obj_open(w);
		jw_key(w, "artifactLocation");
		jw_obj_open(w);
		jw_kstr(w, "uri", u->path);
		jw_obj_close(w);
		jw_key(w, "address");
		jw_obj_open(w);
		jw_ku64(w, "absoluteAddress", elfscan_finding_addr(f) + u->bias);
		jw_obj_close(w);
		jw_obj_close(w);
	}
	if (loc.func) {
		jw_key(w, "logicalLocations");
		jw_arr_open(w);
		jw_obj_open(w);
		jw_kstr(w, "name", loc.func);
		jw_kstr(w, "kind", "function");
		jw_obj_close(w);
		jw_arr_close(w);
	}
	jw_obj_close(w);
	jw_arr_close(w);
	sarif_fingerprints(w, m->fp);
	if (o->baseline)
		jw_kstr(w, "baselineState", m->unchanged ? "unchanged" : "new");
	if (m->sup)
		sarif_suppression(w, m->sup);
	jw_key(w, "properties");
	jw_obj_open(w);
	jw_kstr(w, "binary", u->path);
	jw_ku64(w, "address", elfscan_finding_addr(f) + u->bias);
	jw_obj_close(w);
	jw_obj_close(w);
}

/* A finding of the baseline no longer found, in a file this run audited. */
static void sarif_absent(struct jw *w, const struct rd_baseline_entry *e)
{
	const struct elfscan_check *k = elfscan_audit_find_check(e->check);

	jw_obj_open(w);
	jw_kstr(w, "ruleId", e->check);
	if (k) {
		jw_ku64(w, "ruleIndex", rule_index(k));
		jw_kstr(w, "level", sarif_level(k->severity));
	}
	sarif_text(w, "message", e->message ? e->message : e->check);
	jw_key(w, "locations");
	jw_arr_open(w);
	jw_obj_open(w);
	jw_key(w, "physicalLocation");
	jw_obj_open(w);
	jw_key(w, "artifactLocation");
	jw_obj_open(w);
	jw_kstr(w, "uri", e->path);
	jw_obj_close(w);
	jw_obj_close(w);
	jw_obj_close(w);
	jw_arr_close(w);
	sarif_fingerprints(w, e->fp);
	jw_kstr(w, "baselineState", "absent");
	jw_key(w, "properties");
	jw_obj_open(w);
	jw_kstr(w, "binary", e->path);
	jw_obj_close(w);
	jw_obj_close(w);
}

/* Up to "results": [ ; the artifacts are every path given, audited or not. */
static void sarif_begin(struct jw *w, const char *const *paths, size_t n)
{
	jw_obj_open(w);
	jw_kstr(w, "$schema", "https://json.schemastore.org/sarif-2.1.0.json");
	jw_kstr(w, "version", "2.1.0");
	jw_key(w, "runs");
	jw_arr_open(w);
	jw_obj_open(w);
	jw_key(w, "tool");
	jw_obj_open(w);
	jw_key(w, "driver");
	jw_obj_open(w);
	jw_kstr(w, "name", "rseqdbg audit");
	jw_kstr(w, "version", RSEQDBG_VERSION);
	sarif_rules(w);
	jw_obj_close(w);
	jw_obj_close(w);
	jw_key(w, "artifacts");
	jw_arr_open(w);
	for (size_t i = 0; i < n; i++) {
		jw_obj_open(w);
		jw_key(w, "location");
		jw_obj_open(w);
		jw_kstr(w, "uri", paths[i]);
		jw_obj_close(w);
		jw_obj_close(w);
	}
	jw_arr_close(w);
	jw_key(w, "results");
	jw_arr_open(w);
}

/* Closes the results, after the baseline's absent ones; files that could not be audited are
 * the invocation's notifications. */
static void sarif_end(struct jw *w, const struct audit_opts *o, char *const *errors, size_t nerrors)
{
	for (size_t i = 0; o->baseline && i < rd_baseline_count(o->baseline); i++)
		if (rd_baseline_absent(o->baseline, i))
			sarif_absent(w, rd_baseline_entry(o->baseline, i));
	jw_arr_close(w);
	if (nerrors) {
		jw_key(w, "invocations");
		jw_arr_open(w);
		jw_obj_open(w);
		jw_kbool(w, "executionSuccessful", false);
		jw_key(w, "toolExecutionNotifications");
		jw_arr_open(w);
		for (size_t i = 0; i < nerrors; i++) {
			jw_obj_open(w);
			jw_kstr(w, "level", "error");
			sarif_text(w, "message", errors[i]);
			jw_obj_close(w);
		}
		jw_arr_close(w);
		jw_obj_close(w);
		jw_arr_close(w);
	}
	jw_obj_close(w);
	jw_arr_close(w);
	jw_obj_close(w);
	jw_end(w);
}

/* --- list of checks -------------------------------------------------------------------- */

static int list_checks(void)
{
	struct jw *w = rd.jw;

	if (rd.json) {
		jw_obj_open(w);
		jw_key(w, "checks");
		jw_arr_open(w);
	}
	for (size_t i = 0; i < elfscan_audit_nchecks(); i++) {
		const struct elfscan_check *k = elfscan_audit_check(i);

		if (!rd.json) {
			printf("%s  %-7s  %-10s  %s\n    %s\n    hint: %s\n", k->id,
			       elfscan_severity_name(k->severity), k->group, k->title,
			       k->description, k->hint);
			continue;
		}
		jw_obj_open(w);
		jw_kstr(w, "id", k->id);
		jw_kstr(w, "group", k->group);
		jw_kstr(w, "severity", elfscan_severity_name(k->severity));
		jw_kstr(w, "title", k->title);
		jw_kstr(w, "description", k->description);
		jw_kstr(w, "hint", k->hint);
		jw_obj_close(w);
	}
	if (rd.json) {
		jw_arr_close(w);
		jw_obj_close(w);
		jw_end(w);
	}
	return EXIT_OK;
}

/* --- threads of a process -------------------------------------------------------------- */

static int thread_config(pid_t tid, struct rd_rseq_config *cfg)
{
	int sig, err;

	err = rd_thread_hold(tid, &sig);
	if (err)
		return err;
	err = rd_rseq_config(tid, cfg);
	rd_thread_release(tid, sig);
	return err;
}

static int read_threads(pid_t pid, struct thread **res, size_t *n)
{
	struct thread *v;
	pid_t *tids;
	size_t ntids;
	int err = rd_proc_threads(pid, &tids, &ntids);

	*n = 0;
	if (err)
		return err;
	v = calloc(ntids ? ntids : 1, sizeof(*v));
	for (size_t i = 0; v && i < ntids; i++) {
		struct rd_rseq_config cfg;

		err = thread_config(tids[i], &cfg);
		if (err == -ESRCH) { /* exited: meanwhile, or a main thread before the rest */
			err = 0;
			continue;
		}
		if (err)
			break;
		v[*n].tid = tids[i];
		v[*n].registered = cfg.abi_ptr != 0;
		v[*n].sig = cfg.signature;
		(*n)++;
	}
	free(tids);
	if (!v || err) {
		free(v);
		*n = 0;
		return v ? err : -ENOMEM;
	}
	*res = v;
	return 0;
}

/* --- driver ---------------------------------------------------------------------------- */

static int add_id(const char ***v, size_t *n, const char *id)
{
	const char **nv;

	if (!elfscan_audit_find_check(id))
		return rd_error("unknown check '%s' (see 'rseqdbg audit --list-checks')", id);
	nv = realloc(*v, (*n + 2) * sizeof(*nv));
	if (!nv)
		return rd_error("out of memory");
	nv[(*n)++] = id;
	nv[*n] = NULL;
	*v = nv;
	return 0;
}

/*
 * Output goes out one file at a time, and each file's library handles are closed once it is
 * printed: auditing thousands of files keeps no more than one open. A run keeps the totals
 * and, for SARIF, the messages of the files that could not be audited.
 */
struct run {
	const struct audit_opts *o;
	const struct rd_bulk *bulk; /* files: what they were, counted */
	struct tally total;
	size_t nunits;
	int worst;
	bool failed;
	char **errors; /* SARIF: the lines of the files that could not be audited */
	size_t nerrors;
};

static void run_begin(struct run *r, const char *const *paths, size_t npaths,
		      const struct thread *th, size_t nth)
{
	const struct audit_opts *o = r->o;
	struct jw *w = rd.jw;

	r->worst = -1;
	if (o->sarif) {
		sarif_begin(w, paths, npaths);
	} else if (rd.json) {
		jw_obj_open(w);
		if (o->bulk.core)
			jw_kstr(w, "core", o->bulk.core);
		if (o->have_pid) {
			jw_ku64(w, "pid", (uint64_t)o->pid);
			jw_key(w, "threads");
			jw_arr_open(w);
			for (size_t i = 0; i < nth; i++) {
				jw_obj_open(w);
				jw_ku64(w, "tid", (uint64_t)th[i].tid);
				jw_key(w, "signature");
				if (th[i].registered)
					jw_u64(w, th[i].sig);
				else
					jw_null(w);
				jw_obj_close(w);
			}
			jw_arr_close(w);
		}
		jw_key(w, o->have_pid || o->bulk.core ? "modules" : "files");
		jw_arr_open(w);
	} else if (o->have_pid) {
		printf("pid %d:", (int)o->pid);
		for (size_t i = 0; i < nth; i++) {
			if (th[i].registered)
				printf(" tid %d signature 0x%08x%s", (int)th[i].tid, th[i].sig,
				       i + 1 < nth ? "," : "");
			else
				printf(" tid %d no rseq area%s", (int)th[i].tid,
				       i + 1 < nth ? "," : "");
		}
		printf("\n");
	} else if (o->bulk.core) {
		printf("core %s:\n", rd_safe(o->bulk.core));
	}
}

static void run_error(struct run *r, const char *path, const char *msg);

/* Only the findings reported count for --fail-on: not those of the baseline or suppressed. */
static void run_unit(struct run *r, struct unit *u)
{
	const struct audit_opts *o = r->o;
	struct tally t;

	if ((o->sarif || rd.json || o->baseline || o->have_sup) && mark_findings(o, u)) {
		unmark(u);
		run_error(r, u->path, "out of memory");
		return;
	}
	tally(u, &t);
	for (int s = 0; s < 3; s++) {
		r->total.cnt[s] += t.cnt[s];
		if (t.cnt[s] && s > r->worst)
			r->worst = s;
	}
	r->total.unchanged += t.unchanged;
	r->total.suppressed += t.suppressed;
	r->nunits++;
	if (o->sarif) {
		for (size_t j = 0; j < elfscan_audit_count(u->a); j++)
			sarif_result(rd.jw, o, u, j);
	} else if (rd.json) {
		json_unit(rd.jw, o, u);
	} else {
		print_human(o, u);
	}
	unmark(u);
	fflush(stdout);
}

/* A file that could not be audited: reported, and the run goes on with the next one. */
static void run_error(struct run *r, const char *path, const char *msg)
{
	bool json = rd.json;
	char **nv;

	r->failed = true;
	if (r->o->sarif)
		rd.json = false; /* the SARIF document holds it, in its invocation */
	rd_file_error(path, msg);
	rd.json = json;
	if (!r->o->sarif)
		return;
	nv = realloc(r->errors, (r->nerrors + 1) * sizeof(*nv));
	if (!nv)
		return;
	r->errors = nv;
	if (asprintf(&nv[r->nerrors], "%s: %s", path, msg) < 0)
		nv[r->nerrors] = NULL;
	if (nv[r->nerrors])
		r->nerrors++;
}

static int run_end(struct run *r)
{
	const struct audit_opts *o = r->o;
	struct jw *w = rd.jw;
	size_t absent = 0;
	int ret;

	for (size_t i = 0; o->baseline && i < rd_baseline_count(o->baseline); i++)
		absent += rd_baseline_absent(o->baseline, i);
	if (o->sarif) {
		sarif_end(w, o, r->errors, r->nerrors);
	} else if (rd.json) {
		jw_arr_close(w);
		jw_kstr(w, "fail_on", elfscan_severity_name(o->fail_on));
		json_summary(w, o, &r->total);
		if (o->baseline) {
			jw_key(w, "baseline");
			jw_obj_open(w);
			jw_kstr(w, "path", o->baseline_path);
			jw_ku64(w, "unchanged", r->total.unchanged);
			jw_ku64(w, "absent", absent);
			jw_obj_close(w);
		}
		if (r->bulk && r->bulk->many)
			rd_bulk_summary_json(r->bulk, w);
		jw_obj_close(w);
		jw_end(w);
	} else {
		if (r->nunits > 1)
			print_counts(o, "total", &r->total);
		if (r->bulk && r->bulk->many)
			rd_bulk_summary_text(r->bulk, "audited");
		if (o->baseline)
			printf("baseline %s: %zu finding%s unchanged, %zu no longer found\n",
			       rd_safe(o->baseline_path), r->total.unchanged,
			       r->total.unchanged == 1 ? "" : "s", absent);
	}
	fflush(stdout);
	ret = r->failed ? EXIT_ERROR : r->worst >= (int)o->fail_on ? EXIT_FINDINGS : EXIT_OK;
	for (size_t i = 0; i < r->nerrors; i++)
		free(r->errors[i]);
	free(r->errors);
	return ret;
}

static int audit_one(const struct audit_opts *o, struct unit *u, const uint32_t *sigs, size_t nsigs)
{
	struct elfscan_audit_opts ao = {
	    .sz = sizeof(ao),
	    .enable = o->nenable ? o->enable : NULL,
	    .disable = o->disable,
	    .registered_sigs = sigs,
	    .nregistered_sigs = nsigs,
	    .bias = u->bias,
	    .progress = rd_progress_within,
	};

	return elfscan_audit(u->es, &ao, &u->a);
}

/* A file audited is printed unless --with-tables leaves it out: it has no rseq tables and no
 * finding (a lost table can leave an orphan abort handler, RSEQ050). */
static bool shown(struct rd_bulk *b, const struct unit *u)
{
	return rd_bulk_count(b, u->es) || elfscan_audit_count(u->a);
}

static int audit_files(const struct audit_opts *o, char **operands, int n)
{
	struct elfscan_opts eo = {.sz = sizeof(eo)};
	struct rd_bulk b = {.o = o->bulk};
	struct run r = {.o = o, .bulk = &b};
	const char **paths;

	rd_progress_begin(&b, "auditing");
	if (rd_bulk_collect(&b, operands, n)) {
		rd_progress_end();
		rd_bulk_free(&b);
		return rd_error("%s", rd_errmsg());
	}
	paths = calloc(b.n + 1, sizeof(*paths));
	if (!paths) {
		rd_progress_end();
		rd_bulk_free(&b);
		return rd_error("out of memory");
	}
	for (size_t i = 0; i < b.n; i++)
		paths[i] = b.v[i].path;
	run_begin(&r, paths, b.n, NULL, 0);
	for (size_t i = 0; i < b.n; i++) {
		const struct rd_entry *e = &b.v[i];
		struct unit u = {.path = e->path};
		const char *why = e->err; /* why it is not audited, besides err */
		int err = 0;

		rd_progress(i, b.n, e->path);
		if (!why)
			err = elfscan_open(e->path, &eo, &u.es);
		if (!why && !err && elfscan_type(u.es) == ET_CORE)
			/* Its tables would be those of whatever memory it holds */
			why = "a core file: 'rseqdbg audit --core FILE' audits the modules it maps";
		if (!why && !err)
			err = audit_one(o, &u, NULL, 0);
		if (why || err) {
			b.errors++;
			run_error(&r, e->path,
				  why			? why
				  : elfscan_errmsg()[0] ? elfscan_errmsg()
							: strerror(-err));
		} else if (shown(&b, &u)) {
			rd_progress_output();
			run_unit(&r, &u);
		}
		elfscan_audit_free(u.a);
		elfscan_close(u.es);
	}
	rd_progress_end();
	free(paths);
	n = run_end(&r);
	rd_bulk_free(&b);
	return n;
}

/* The modules of a process or a core (where, as prefix of the warnings), each audited once
 * its file was read: the run over them, printed, and its exit status. */
static int audit_modules(const struct audit_opts *o, const char *where,
			 const struct rd_modules *mods, const struct thread *th, size_t nth,
			 const uint32_t *sigs, size_t nsigs)
{
	struct run r = {.o = o};
	const char **paths;
	size_t npaths = 0;
	int err;

	paths = calloc(mods->n + 1, sizeof(*paths));
	if (!paths)
		return rd_error("out of memory");
	for (size_t i = 0; i < mods->n; i++)
		if (mods->v[i].es)
			paths[npaths++] = mods->v[i].path;
	for (size_t i = 0; i < mods->n; i++)
		if (!mods->v[i].es)
			rd_warn("%s%s%s: not audited: %s", where ? where : "", where ? ": " : "",
				mods->v[i].path, mods->v[i].err ? mods->v[i].err : "not scanned");
	run_begin(&r, paths, npaths, th, nth);
	for (size_t i = 0; i < mods->n; i++) {
		const struct rd_module *m = &mods->v[i];
		struct unit u = {.path = m->path, .es = m->es, .mod = m, .bias = m->bias};

		if (!m->es)
			continue;
		err = audit_one(o, &u, sigs, nsigs);
		if (err)
			run_error(&r, m->path,
				  elfscan_errmsg()[0] ? elfscan_errmsg() : strerror(-err));
		else
			run_unit(&r, &u);
		elfscan_audit_free(u.a);
	}
	free(paths);
	return run_end(&r);
}

static int audit_pid(const struct audit_opts *o)
{
	struct elfscan_opts eo = {.sz = sizeof(eo)};
	struct rd_modules mods = {0};
	struct thread *th = NULL;
	uint32_t *sigs = NULL;
	size_t nth = 0, nsigs = 0;
	int err, ret = 0;

	err = read_threads(o->pid, &th, &nth);
	if (err == -ENOENT || err == -ESRCH)
		return rd_pid_error(o->pid, err);
	if (err == -EIO)
		rd_warn("pid %d: PTRACE_GET_RSEQ_CONFIGURATION unsupported (Linux 5.13+): "
			"registered signatures not compared",
			(int)o->pid);
	else if (err == -EPERM || err == -EACCES)
		return rd_pid_error(o->pid, err);
	else if (err)
		return rd_error("pid %d: cannot read the threads' rseq registration: %s",
				(int)o->pid, strerror(-err));
	sigs = calloc(nth + 1, sizeof(*sigs));
	if (!sigs) {
		ret = rd_error("out of memory");
		goto out;
	}
	for (size_t i = 0; i < nth; i++)
		if (th[i].registered)
			sigs[nsigs++] = th[i].sig;
	err = rd_modules_load(o->pid, &eo, &mods);
	if (err == -ENOENT || err == -ESRCH) {
		/* Its last thread exited meanwhile. */
		ret = rd_pid_error(o->pid, err);
		goto out;
	}
	if (err) {
		ret = rd_error("pid %d: cannot read its mapped modules: %s", (int)o->pid,
			       strerror(-err));
		goto out;
	}
	ret = audit_modules(o, NULL, &mods, th, nth, sigs, nsigs);
out:
	rd_modules_free(&mods);
	free(sigs);
	free(th);
	return ret;
}

/* The modules a core maps, each once its file is checked against the core's build ID. The
 * signatures the threads registered are not in a core: none is compared. */
static int audit_core(const struct audit_opts *o)
{
	struct elfscan_opts eo = {.sz = sizeof(eo)};
	struct rd_modules mods = {0};
	struct rd_core *c;
	int err, ret;

	err = rd_core_open(o->bulk.core, &c);
	if (err)
		return rd_error("%s: %s", o->bulk.core, rd_errmsg());
	err = rd_core_modules(c, &eo, o->bulk.exe, o->bulk.sysroot, &mods);
	if (err)
		ret = rd_error("%s: %s", o->bulk.core, strerror(-err));
	else
		ret = audit_modules(o, o->bulk.core, &mods, NULL, 0, NULL, 0);
	rd_modules_free(&mods);
	rd_core_close(c);
	return ret;
}

enum {
	OPT_CHECK = 256,
	OPT_SKIP,
	OPT_LIST,
	OPT_FAIL_ON,
	OPT_SARIF,
	OPT_BASELINE,
	OPT_SUPPRESSIONS,
	OPT_SUPPRESS
};

static int parse_fail_on(const char *s, enum elfscan_severity *sev)
{
	if (!strcmp(s, "error"))
		*sev = ELFSCAN_SEV_ERROR;
	else if (!strcmp(s, "warning"))
		*sev = ELFSCAN_SEV_WARNING;
	else if (!strcmp(s, "info"))
		*sev = ELFSCAN_SEV_INFO;
	else
		return rd_error("--fail-on: '%s' is not error, warning or info", s);
	return 0;
}

static int parse_opts(struct audit_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"check", required_argument, NULL, OPT_CHECK},
	    {"skip", required_argument, NULL, OPT_SKIP},
	    {"list-checks", no_argument, NULL, OPT_LIST},
	    {"fail-on", required_argument, NULL, OPT_FAIL_ON},
	    {"pid", required_argument, NULL, 'p'},
	    {"sarif", no_argument, NULL, OPT_SARIF},
	    {"baseline", required_argument, NULL, OPT_BASELINE},
	    {"suppressions", required_argument, NULL, OPT_SUPPRESSIONS},
	    {"suppress", required_argument, NULL, OPT_SUPPRESS},
	    {"recursive", no_argument, NULL, 'r'},
	    {"with-tables", no_argument, NULL, RD_OPT_WITH_TABLES},
	    {"strict", no_argument, NULL, RD_OPT_STRICT},
	    {"no-progress", no_argument, NULL, RD_OPT_NO_PROGRESS},
	    {"core", required_argument, NULL, RD_OPT_CORE},
	    {"exe", required_argument, NULL, RD_OPT_EXE},
	    {"sysroot", required_argument, NULL, RD_OPT_SYSROOT},
	    {0},
	};
	static const struct rd_cmdline cl = {"p:r", longopts, usage};
	int c, ret = 0;

	while (!ret && (c = rd_getopt(argc, argv, &cl)) != RD_OPT_END) {
		switch (c) {
		case OPT_CHECK:
			ret = add_id(&o->enable, &o->nenable, optarg);
			break;
		case OPT_SKIP:
			ret = add_id(&o->disable, &o->ndisable, optarg);
			break;
		case OPT_LIST:
			o->list = true;
			break;
		case OPT_FAIL_ON:
			ret = parse_fail_on(optarg, &o->fail_on);
			break;
		case 'p':
			if (rd_parse_pid("--pid", "process", optarg, &o->pid))
				ret = rd_error("%s", rd_errmsg());
			o->have_pid = true;
			break;
		case OPT_SARIF:
			o->sarif = true;
			break;
		case OPT_BASELINE:
			o->baseline_path = optarg;
			break;
		case OPT_SUPPRESSIONS:
			o->have_sup = true;
			if (rd_suppressions_load(&o->sup, optarg))
				ret = rd_error("--suppressions: %s", rd_errmsg());
			break;
		case OPT_SUPPRESS:
			o->have_sup = true;
			if (rd_suppressions_add(&o->sup, optarg))
				ret = rd_error("%s", rd_errmsg());
			break;
		default:
			if (!rd_bulk_option(&o->bulk, c))
				return c;
		}
	}
	return ret;
}

int cmd_audit(int argc, char **argv)
{
	struct audit_opts o = {.fail_on = ELFSCAN_SEV_ERROR};
	int ret = parse_opts(&o, argc, argv);

	if (ret == RD_OPT_HELP || ret == RD_OPT_ERROR) {
		ret = rd_opt_exit(ret);
		goto out;
	}
	if (ret)
		goto out;
	if (o.sarif)
		rd.json = true; /* errors as a JSON object too */
	if (o.baseline_path && !o.list && rd_baseline_load(o.baseline_path, &o.baseline)) {
		ret = rd_error("--baseline: %s", rd_errmsg());
		goto out;
	}
	if (o.list) {
		ret = list_checks();
		goto out;
	}
	ret = rd_source_check("audit", o.have_pid, &o.bulk, argc - optind);
	if (ret)
		goto out;
	if (o.have_pid)
		ret = audit_pid(&o);
	else if (o.bulk.core)
		ret = audit_core(&o);
	else
		ret = audit_files(&o, argv + optind, argc - optind);
out:
	free(o.enable);
	free(o.disable);
	rd_baseline_free(o.baseline);
	rd_suppressions_free(&o.sup);
	return ret;
}
