// SPDX-License-Identifier: GPL-2.0-only
/* rseqdbg scan: the rseq critical sections of ELF files, or of a running process and the rseq
 * state of each of its threads. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bulk.h"
#include "common.h"
#include "core/core.h"
#include "core/modules.h"
#include "elfscan.h"
#include "proc/maps.h"
#include "proc/ptrace.h"
#include "proc/rseqarea.h"
#include "proc/tasks.h"
#include "symfmt.h"

struct scan_opts {
	struct elfscan_opts es;
	char *debug_dirs; /* --debug-dir, joined with ':' */
	bool have_addr;
	uint64_t addr;
	bool have_pid;
	pid_t pid;
	struct rd_bulk_opts bulk;
};

/* What one file or module block shows. Addresses printed are libelfscan's + bias. */
struct view {
	struct elfscan *es;
	const char *path;	     /* as the user named it */
	const struct rd_module *mod; /* --pid: the module, for start/end/bias */
	uint64_t bias;
	const struct elfscan_cs **cs; /* the sections shown */
	size_t ncs;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rseqdbg scan [OPTIONS] FILE...\n"
		"       rseqdbg scan [OPTIONS] -r DIR...\n"
		"       rseqdbg scan [OPTIONS] -p PID\n"
		"       rseqdbg scan [OPTIONS] --core CORE [--exe FILE] [--sysroot DIR]\n"
		"\n"
		"Decode the rseq critical-section tables of ELF files; or, with --pid, of every\n"
		"module mapped in a running process, and show the rseq state of each of its\n"
		"threads; or, with --core, the same of the process a core file was dumped from.\n"
		"Among several files (more than one FILE, or -r), files that are not ELF are\n"
		"skipped and counted, and a summary line ends the output.\n"
		"\n"
		"Options:\n"
		"  -j, --json           print one JSON document (schema in rseqdbg-scan(1))\n"
		"      --pretty         print indented JSON (implies --json)\n"
		"  -p, --pid PID        scan the modules and threads of a running process\n"
		"      --core CORE      scan the modules and threads of a core file (zstd-\n"
		"                       compressed too, as systemd-coredump stores them)\n"
		"      --exe FILE       with --core: the program's file, when not where the core\n"
		"                       says it was\n"
		"      --sysroot DIR    with --core: read the files the core maps under DIR\n"
		"      --addr ADDR      show only the critical sections containing ADDR\n"
		"      --no-debuginfo   do not read DWARF: functions from the symbol table only\n"
		"      --debug-dir DIR  look for separate debug files under DIR (repeatable;\n"
		"                       default /usr/lib/debug)\n"
		"  -r, --recursive      scan the files under each directory FILE (symbolic\n"
		"                       links not followed)\n"
		"      --with-tables    print only the files that have rseq tables\n"
		"      --strict         among several files too, one that is not ELF is an error\n"
		"      --no-progress    no progress line on a terminal\n"
		"  -h, --help           print this help\n"
		"\n"
		"Exit status: 0 every file was scanned (with or without critical sections) or\n"
		"skipped, 2 a file could not be scanned or the process or core could not be\n"
		"inspected.\n");
}

/* Table names in the order the JSON schema lists them. */
static const enum elfscan_source source_order[] = {
    ELFSCAN_SRC_CS_PTR_ARRAY, ELFSCAN_SRC_CS,	      ELFSCAN_SRC_EXIT_POINTS,
    ELFSCAN_SRC_TABLE_2018,   ELFSCAN_SRC_TABLE_2016, ELFSCAN_SRC_SECTIONS_2015,
};
#define NSOURCES (sizeof(source_order) / sizeof(source_order[0]))

static const char *type_json(uint16_t type)
{
	switch (type) {
	case ET_EXEC:
		return "EXEC";
	case ET_DYN:
		return "DYN";
	case ET_REL:
		return "REL";
	case ET_CORE:
		return "CORE";
	default:
		return "other";
	}
}

static const char *type_text(struct elfscan *es)
{
	switch (elfscan_type(es)) {
	case ET_EXEC:
		return elfscan_has_interp(es) ? "executable" : "static executable";
	case ET_DYN:
		if (!elfscan_is_pie(es))
			return "shared object";
		return elfscan_has_interp(es) ? "PIE executable" : "static PIE executable";
	case ET_REL:
		return "relocatable object";
	case ET_CORE:
		return "core file";
	default:
		return "ELF file of unknown type";
	}
}

/* The sections a view shows: all of them, or those containing --addr. */
static int collect(struct view *v, const struct scan_opts *o)
{
	size_t n = elfscan_count(v->es);

	v->ncs = 0;
	v->cs = NULL;
	if (o->have_addr) {
		if (o->addr < v->bias)
			return 0;
		n = elfscan_lookup_all(v->es, o->addr - v->bias, NULL, 0);
		if (!n)
			return 0;
		v->cs = calloc(n, sizeof(*v->cs));
		if (!v->cs)
			return -ENOMEM;
		v->ncs = elfscan_lookup_all(v->es, o->addr - v->bias, v->cs, n);
		return 0;
	}
	if (!n)
		return 0;
	v->cs = calloc(n, sizeof(*v->cs));
	if (!v->cs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		v->cs[i] = elfscan_get(v->es, i);
	v->ncs = n;
	return 0;
}

/* -------------------------------------------------------------------------------------------
 * Text output
 */

/*
 * A file without critical sections or exit points has nothing to symbolize: do not search
 * for its separate debug file (most of the time spent on a directory of libraries).
 */
static bool wants_debuginfo(struct elfscan *es)
{
	return elfscan_count(es) || elfscan_nexits(es);
}

static const char *debuginfo_text(struct elfscan *es, const struct scan_opts *o, char *buf,
				  size_t len)
{
	const char *dbg;

	if (o->es.no_debuginfo)
		return "not read (--no-debuginfo)";
	if (!wants_debuginfo(es))
		return elfscan_has_own_dwarf(es) ? "DWARF in the file (no separate file looked up)"
						 : "not looked up (no critical sections)";
	dbg = elfscan_debug_file(es);
	if (dbg && elfscan_has_dwarf(es))
		snprintf(buf, len, "DWARF from %s", rd_safe(dbg));
	else if (elfscan_has_dwarf(es))
		snprintf(buf, len, "DWARF in the file");
	else
		snprintf(buf, len, "no DWARF line information");
	return buf;
}

static int hexlen(uint64_t v)
{
	char buf[24];

	return snprintf(buf, sizeof(buf), "%#" PRIx64, v);
}

/* The index of an earlier shown section with the same start, post-commit and abort (the
 * same code described twice), -1 when there is none. */
static int duplicate_of(const struct view *v, size_t i)
{
	const struct elfscan_cs *c = v->cs[i];

	for (size_t j = i; j-- > 0 && v->cs[j]->start_ip == c->start_ip;) {
		if (v->cs[j]->post_commit_ip == c->post_commit_ip &&
		    v->cs[j]->abort_ip == c->abort_ip)
			return (int)j;
	}
	return -1;
}

static void print_sites(const struct view *v, const struct elfscan_cs *c)
{
	const int indent = 29; /* under the first entry */
	int col = indent - 1;

	printf("%*s", indent - 1, "found in");
	for (size_t s = 0; s < c->nsites; s++) {
		char item[96];
		int n;

		n = snprintf(item, sizeof(item), "%s@%#" PRIx64 "%s",
			     elfscan_source_name(c->sites[s].source), c->sites[s].addr + v->bias,
			     s + 1 < c->nsites ? "," : "");
		if (s && col + 1 + n > 100) {
			printf("\n%*s", indent, "");
			col = indent;
		} else {
			putchar(' ');
			col++;
		}
		fputs(item, stdout);
		col += n;
	}
	putchar('\n');
}

static void print_section(const struct view *v, size_t i, int w_addr, int w_post)
{
	const struct elfscan_cs *c = v->cs[i];
	char a[24], p[48], b[24], loc[RD_LOC_LEN];
	int dup = duplicate_of(v, i);
	uint32_t seen = 0, twice = 0;

	snprintf(a, sizeof(a), "%#" PRIx64, c->start_ip + v->bias);
	snprintf(p, sizeof(p), "%#" PRIx64 " (+%#" PRIx64 ")", c->post_commit_ip + v->bias,
		 c->post_commit_offset);
	snprintf(b, sizeof(b), "%#" PRIx64, c->abort_ip + v->bias);
	printf("  %3zu  %-*s  %-*s  %-*s  ", i, w_addr, a, w_post, p, w_addr, b);
	if (c->sig_status == ELFSCAN_SIG_UNREADABLE)
		printf("unreadable\n");
	else
		printf("%#010" PRIx32 " %s\n", c->signature,
		       elfscan_sig_status_name(c->sig_status));

	printf("       %-13s%s\n", "start", rd_sym_str(v->es, c->start_ip, loc, sizeof(loc)));
	printf("       %-13s%s\n", "post-commit",
	       rd_sym_str(v->es, c->post_commit_ip, loc, sizeof(loc)));
	printf("       %-13s%s\n", "abort", rd_sym_str(v->es, c->abort_ip, loc, sizeof(loc)));
	if (c->sig_status != ELFSCAN_SIG_UNREADABLE && c->sig_status != ELFSCAN_SIG_MATCH)
		printf("       %-13s%02x %02x %02x %02x before the abort handler\n", "signature",
		       c->sig_bytes[0], c->sig_bytes[1], c->sig_bytes[2], c->sig_bytes[3]);
	printf("       %-13s%#" PRIx64 ", version %" PRIu32 ", flags %#" PRIx32, "descriptor",
	       c->desc_addr + v->bias, c->version, c->flags);
	for (size_t s = 0; s < c->nsites; s++) {
		twice |= seen & c->sites[s].source;
		seen |= c->sites[s].source;
	}
	for (size_t k = 0; k < NSOURCES; k++) {
		if (twice & source_order[k])
			printf(", listed twice in %s", elfscan_source_name(source_order[k]));
	}
	if (dup >= 0)
		printf(", duplicate of %d", dup);
	putchar('\n');
	print_sites(v, c);
	/* A run of entries with one exit_ip is one line: a table may repeat an entry a
	 * million times. */
	for (size_t e = 0, k; e < c->nexits; e += k) {
		for (k = 1; e + k < c->nexits && c->exits[e + k].exit_ip == c->exits[e].exit_ip;
		     k++)
			;
		printf("       %-13s%#" PRIx64 " %s", "exit point", c->exits[e].exit_ip + v->bias,
		       rd_sym_str(v->es, c->exits[e].exit_ip, loc, sizeof(loc)));
		if (k > 1)
			printf(" (%zu times)", k);
		putchar('\n');
	}
}

static size_t orphan_exits(struct elfscan *es)
{
	size_t n = 0;

	for (size_t i = 0; i < elfscan_nexits(es); i++) {
		if (!elfscan_lookup(es, elfscan_exit_point(es, i)->start_ip))
			n++;
	}
	return n;
}

/* A core's module: what its build ID was checked against. */
static const char *build_id_note(const struct rd_module *m)
{
	if (!m)
		return "";
	switch (m->build_id) {
	case RD_BUILD_ID_MATCH:
		return ", the core's too";
	case RD_BUILD_ID_NOT_IN_CORE:
		return " (not checked: the core lacks the file's headers)";
	default:
		return "";
	}
}

static const char *build_id_json(enum rd_build_id_check c)
{
	switch (c) {
	case RD_BUILD_ID_MATCH:
		return "match";
	case RD_BUILD_ID_NOT_IN_CORE:
		return "not-in-core";
	case RD_BUILD_ID_NONE:
		return "none";
	default:
		return "mismatch";
	}
}

static void print_view_text(const struct view *v, const struct scan_opts *o)
{
	struct elfscan *es = v->es;
	uint32_t src = elfscan_sources(es);
	const char *bid = elfscan_build_id(es);
	char dbg[600];
	size_t nmatch = 0, norphan;
	int w_addr = 5, w_post = 11;
	bool first = true;

	printf("%s\n", rd_safe(v->path));
	if (v->mod)
		printf("  mapped     %#" PRIx64 "-%#" PRIx64 ", load bias %#" PRIx64 "\n",
		       v->mod->start, v->mod->end, v->bias);
	printf("  format     %s, ELF%d, %s-endian, %s\n", elfscan_arch_name(es), elfscan_class(es),
	       elfscan_big_endian(es) ? "big" : "little", type_text(es));
	printf("  build-id   %s%s\n", bid ? bid : "none", build_id_note(v->mod));
	if (v->mod && v->mod->file)
		printf("  file       %s\n", rd_safe(v->mod->file));
	printf("  tables     ");
	for (size_t k = 0; k < NSOURCES; k++) {
		if (!(src & source_order[k]))
			continue;
		printf("%s%s", first ? "" : ", ", elfscan_source_name(source_order[k]));
		first = false;
	}
	printf("%s\n", first ? "none" : "");
	printf("  debuginfo  %s\n", debuginfo_text(es, o, dbg, sizeof(dbg)));

	if (!v->ncs) {
		if (o->have_addr)
			printf("  no rseq critical section contains %#" PRIx64 "\n", o->addr);
		else
			printf("  no rseq critical sections\n");
		return;
	}
	for (size_t i = 0; i < v->ncs; i++) {
		const struct elfscan_cs *c = v->cs[i];
		char p[48];
		int n;

		n = hexlen(c->start_ip + v->bias);
		w_addr = n > w_addr ? n : w_addr;
		n = hexlen(c->abort_ip + v->bias);
		w_addr = n > w_addr ? n : w_addr;
		n = snprintf(p, sizeof(p), "%#" PRIx64 " (+%#" PRIx64 ")",
			     c->post_commit_ip + v->bias, c->post_commit_offset);
		w_post = n > w_post ? n : w_post;
		nmatch += c->sig_status == ELFSCAN_SIG_MATCH;
	}
	printf("\n  %3s  %-*s  %-*s  %-*s  %s\n", "#", w_addr, "START", w_post, "POST-COMMIT",
	       w_addr, "ABORT", "SIGNATURE");
	for (size_t i = 0; i < v->ncs; i++)
		print_section(v, i, w_addr, w_post);

	norphan = orphan_exits(es);
	putchar('\n');
	if (o->have_addr)
		printf("  %zu of %zu critical sections contain %#" PRIx64 "\n", v->ncs,
		       elfscan_count(es), o->addr);
	else
		printf("  %zu critical section%s, %zu with a matching signature, %zu exit point%s",
		       v->ncs, v->ncs == 1 ? "" : "s", nmatch, elfscan_nexits(es),
		       elfscan_nexits(es) == 1 ? "" : "s");
	if (!o->have_addr && norphan)
		printf(" (%zu matching no section)", norphan);
	if (!o->have_addr)
		putchar('\n');
}

/* -------------------------------------------------------------------------------------------
 * JSON output
 */

static void json_exit(struct jw *w, const struct elfscan_exit *x, uint64_t bias)
{
	jw_ku64(w, "addr", x->addr + bias);
	jw_ku64(w, "start_ip", x->start_ip + bias);
	jw_ku64(w, "exit_ip", x->exit_ip + bias);
}

/* A section object (schemas/common.json) with what the descriptor and its tables add. Its
 * locations name the module of a process, not the file a document is about. */
static void json_section(struct jw *w, const struct view *v, const struct elfscan_cs *c)
{
	const char *mod = v->mod ? v->mod->path : NULL;
	char bytes[16];

	jw_obj_open(w);
	jw_ku64(w, "descriptor", c->desc_addr + v->bias);
	jw_key(w, "found_in");
	jw_arr_open(w);
	for (size_t s = 0; s < c->nsites; s++) {
		jw_obj_open(w);
		jw_kstr(w, "table", elfscan_source_name(c->sites[s].source));
		jw_ku64(w, "addr", c->sites[s].addr + v->bias);
		jw_obj_close(w);
	}
	jw_arr_close(w);
	jw_ku64(w, "version", c->version);
	jw_ku64(w, "flags", c->flags);
	jw_ku64(w, "start_ip", c->start_ip + v->bias);
	jw_ku64(w, "post_commit_offset", c->post_commit_offset);
	jw_ku64(w, "post_commit_ip", c->post_commit_ip + v->bias);
	jw_ku64(w, "abort_ip", c->abort_ip + v->bias);

	jw_key(w, "signature");
	jw_obj_open(w);
	jw_ku64(w, "value", c->signature);
	snprintf(bytes, sizeof(bytes), "%02x %02x %02x %02x", c->sig_bytes[0], c->sig_bytes[1],
		 c->sig_bytes[2], c->sig_bytes[3]);
	jw_kstr(w, "bytes", c->sig_status == ELFSCAN_SIG_UNREADABLE ? NULL : bytes);
	jw_kstr(w, "status", elfscan_sig_status_name(c->sig_status));
	jw_obj_close(w);

	rd_json_kloc(w, "start", v->es, c->start_ip, v->bias, mod);
	rd_json_kloc(w, "post_commit", v->es, c->post_commit_ip, v->bias, mod);
	rd_json_kloc(w, "abort", v->es, c->abort_ip, v->bias, mod);
	jw_key(w, "exit_points");
	jw_arr_open(w);
	for (size_t e = 0; e < c->nexits; e++) {
		jw_obj_open(w);
		json_exit(w, &c->exits[e], v->bias);
		rd_json_kloc(w, "exit", v->es, c->exits[e].exit_ip, v->bias, mod);
		jw_obj_close(w);
	}
	jw_arr_close(w);
	jw_obj_close(w);
}

static void print_view_json(const struct view *v)
{
	struct jw *w = rd.jw;
	struct elfscan *es = v->es;
	uint32_t src = elfscan_sources(es);

	jw_obj_open(w);
	jw_kstr(w, "path", v->path);
	jw_kstr(w, "arch", elfscan_arch_name(es));
	jw_ku64(w, "machine", elfscan_machine(es));
	jw_ku64(w, "class", (uint64_t)elfscan_class(es));
	jw_kstr(w, "endian", elfscan_big_endian(es) ? "big" : "little");
	jw_kstr(w, "type", type_json(elfscan_type(es)));
	jw_kbool(w, "pie", elfscan_is_pie(es));
	jw_kstr(w, "build_id", elfscan_build_id(es));
	if (wants_debuginfo(es)) {
		jw_kstr(w, "debuginfo", elfscan_debug_file(es));
		jw_kbool(w, "dwarf", elfscan_has_dwarf(es));
	} else {
		jw_kstr(w, "debuginfo", NULL);
		jw_kbool(w, "dwarf", elfscan_has_own_dwarf(es));
	}
	if (v->mod) {
		jw_ku64(w, "start", v->mod->start);
		jw_ku64(w, "end", v->mod->end);
		jw_ku64(w, "bias", v->bias);
	}
	if (v->mod && v->mod->build_id != RD_BUILD_ID_UNCHECKED) {
		jw_kstr(w, "build_id_check", build_id_json(v->mod->build_id));
		jw_kstr(w, "file", v->mod->file ? v->mod->file : v->mod->path);
	}
	jw_key(w, "tables");
	jw_arr_open(w);
	for (size_t k = 0; k < NSOURCES; k++) {
		if (src & source_order[k])
			jw_str(w, elfscan_source_name(source_order[k]));
	}
	jw_arr_close(w);
	jw_key(w, "sections");
	jw_arr_open(w);
	for (size_t i = 0; i < v->ncs; i++)
		json_section(w, v, v->cs[i]);
	jw_arr_close(w);
	jw_key(w, "exit_points");
	jw_arr_open(w);
	for (size_t i = 0; i < elfscan_nexits(es); i++) {
		jw_obj_open(w);
		json_exit(w, elfscan_exit_point(es, i), v->bias);
		jw_obj_close(w);
	}
	jw_arr_close(w);
	jw_obj_close(w);
}

/* -------------------------------------------------------------------------------------------
 * Files
 */

static int scan_file(struct rd_bulk *b, const struct rd_entry *e, const struct scan_opts *o,
		     bool *first)
{
	struct view v = {.path = e->path};
	int err;

	if (e->err) {
		rd_file_error(e->path, e->err);
		return EXIT_ERROR;
	}
	err = elfscan_open(e->path, &o->es, &v.es);
	if (err) {
		rd_file_error(e->path, elfscan_errmsg()[0] ? elfscan_errmsg() : strerror(-err));
		return EXIT_ERROR;
	}
	if (elfscan_type(v.es) == ET_CORE) {
		/* Its tables would be those of whatever memory it holds */
		rd_file_error(e->path, "a core file: 'rseqdbg scan --core FILE' shows the modules "
				       "and threads of its process");
		elfscan_close(v.es);
		return EXIT_ERROR;
	}
	if (!rd_bulk_count(b, v.es))
		goto out;
	err = collect(&v, o);
	if (err) {
		rd_file_error(e->path, strerror(-err));
		elfscan_close(v.es);
		return EXIT_ERROR;
	}
	if (rd.json) {
		print_view_json(&v);
	} else {
		rd_progress_output();
		if (!*first)
			putchar('\n');
		print_view_text(&v, o);
	}
	*first = false;
out:
	free(v.cs);
	elfscan_close(v.es);
	return EXIT_OK;
}

static int scan_files(int nfiles, char **files, const struct scan_opts *o)
{
	struct rd_bulk b = {.o = o->bulk};
	bool first = true;
	int ret = EXIT_OK;

	rd_progress_begin(&b, "scanning");
	if (rd_bulk_collect(&b, files, nfiles)) {
		rd_progress_end();
		rd_bulk_free(&b);
		return rd_error("%s", rd_errmsg());
	}
	if (rd.json) {
		jw_obj_open(rd.jw);
		jw_key(rd.jw, "files");
		jw_arr_open(rd.jw);
	}
	for (size_t i = 0; i < b.n; i++) {
		rd_progress(i, b.n, b.v[i].path);
		if (scan_file(&b, &b.v[i], o, &first) != EXIT_OK) {
			b.errors++;
			ret = EXIT_ERROR;
		}
	}
	rd_progress_end();
	if (rd.json) {
		jw_arr_close(rd.jw);
		if (b.many)
			rd_bulk_summary_json(&b, rd.jw);
		jw_obj_close(rd.jw);
		jw_end(rd.jw);
	} else if (b.many) {
		if (!first)
			putchar('\n');
		rd_bulk_summary_text(&b, "scanned");
	}
	rd_bulk_free(&b);
	return ret;
}

/* -------------------------------------------------------------------------------------------
 * A running process, or the process a core file was dumped from
 */

/* Where the threads and memory of a process are read: a live process, or a core. */
struct image {
	pid_t pid;
	const struct rd_core *core; /* NULL: the live process pid */
	const struct rd_modules *mods;
	const char *path; /* the core's, as the user named it */
};

struct thread {
	pid_t tid;
	int cfg_err;	     /* from PTRACE_GET_RSEQ_CONFIGURATION, or the core's glibc variables */
	const char *cfg_why; /* a core: why the configuration is unknown, with cfg_err */
	struct rd_rseq_config cfg;
	int area_err; /* reading struct rseq */
	struct rd_rseq_area area;
	int ip_err;
	uint64_t ip;
	/* The descriptor rseq_cs points to, when it could be read. */
	bool armed;
	int desc_err;
	uint64_t armed_start, armed_post, armed_abort;
	/* Where the IP is: a section from the tables, or only the armed descriptor's range. */
	bool inside;
	const struct rd_module *in_mod;
	const struct elfscan_cs *in_cs; /* NULL when only the armed descriptor covers the IP */
	uint64_t in_start, in_post, in_abort;
	int traced_by; /* a debugger holds the thread: not inspected */
};

/* The descriptor at addr: from the process's memory, else (a core that left it out) from
 * the tables of the module that holds it, which give it as the loader relocated it. */
static int read_descriptor(const struct image *im, pid_t tid, uint64_t addr, uint64_t *start,
			   uint64_t *post, uint64_t *abort_ip)
{
	const struct rd_module *m;
	unsigned char d[32];
	uint64_t off;
	int err;

	err = im->core ? rd_core_read(im->core, addr, d, sizeof(d))
		       : rd_read_mem(tid, addr, d, sizeof(d));
	if (!err) {
		/* struct rseq_cs: u32 version, flags; u64 start_ip, post_commit_offset, abort */
		memcpy(start, d + 8, 8);
		memcpy(&off, d + 16, 8);
		memcpy(abort_ip, d + 24, 8);
		*post = *start + off;
		return 0;
	}
	m = im->core ? rd_modules_find(im->mods, addr) : NULL;
	for (size_t i = 0; m && m->es && i < elfscan_count(m->es); i++) {
		const struct elfscan_cs *c = elfscan_get(m->es, i);

		if (c->desc_addr + m->bias == addr && c->version == 0) {
			*start = c->start_ip + m->bias;
			*post = c->post_commit_ip + m->bias;
			*abort_ip = c->abort_ip + m->bias;
			return 0;
		}
	}
	return err;
}

static void thread_where(struct thread *t, const struct image *im)
{
	const struct rd_modules *mods = im->mods;

	t->armed = false;
	if (!t->area_err && t->area.rseq_cs) {
		t->desc_err = read_descriptor(im, t->tid, t->area.rseq_cs, &t->armed_start,
					      &t->armed_post, &t->armed_abort);
		t->armed = !t->desc_err;
	}
	if (t->ip_err)
		return;
	t->in_cs = rd_modules_lookup(mods, t->ip, &t->in_mod);
	if (t->in_cs) {
		t->inside = true;
		t->in_start = t->in_cs->start_ip + t->in_mod->bias;
		t->in_post = t->in_cs->post_commit_ip + t->in_mod->bias;
		t->in_abort = t->in_cs->abort_ip + t->in_mod->bias;
	} else if (t->armed && t->ip >= t->armed_start && t->ip < t->armed_post) {
		/* A section no table lists (code generated at run time, stripped tables). */
		t->inside = true;
		t->in_mod = rd_modules_find(mods, t->ip);
		t->in_start = t->armed_start;
		t->in_post = t->armed_post;
		t->in_abort = t->armed_abort;
	}
}

static int thread_inspect(struct thread *t, const struct image *im)
{
	int sig, err;

	err = rd_thread_hold(t->tid, &sig);
	if (err)
		return err;
	t->cfg_err = rd_rseq_config(t->tid, &t->cfg);
	if (!t->cfg_err)
		t->area_err = rd_rseq_read_area(t->tid, &t->cfg, &t->area);
	else
		t->area_err = t->cfg_err;
	t->ip_err = rd_pt_getpc(t->tid, &t->ip);
	thread_where(t, im);
	/* Running again as before; a thread stopped inside a section aborts now, as it would
	 * after any preemption. */
	rd_thread_release(t->tid, sig);
	return 0;
}

static int cmp_tid(const void *a, const void *b)
{
	const struct thread *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

static int list_threads(pid_t pid, struct thread **res, size_t *n)
{
	struct thread *v;
	pid_t *tids;
	int err = rd_proc_threads(pid, &tids, n);

	if (err)
		return err;
	v = calloc(*n ? *n : 1, sizeof(*v));
	if (!v) {
		free(tids);
		return -ENOMEM;
	}
	for (size_t i = 0; i < *n; i++)
		v[i].tid = tids[i];
	free(tids);
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_tid);
	*res = v;
	return 0;
}

/* How many sections' signatures differ from the one a thread registered, of how many. */
static size_t sig_mismatches(const struct rd_modules *mods, uint32_t sig, size_t *total)
{
	size_t bad = 0;

	*total = 0;
	for (size_t m = 0; m < mods->n; m++) {
		struct elfscan *es = mods->v[m].es;

		for (size_t i = 0; es && i < elfscan_count(es); i++) {
			const struct elfscan_cs *c = elfscan_get(es, i);

			if (c->sig_status == ELFSCAN_SIG_UNREADABLE)
				continue;
			(*total)++;
			bad += c->signature != sig;
		}
	}
	return bad;
}

static const char *mod_name(const struct rd_module *m)
{
	const char *s;

	if (!m)
		return "?";
	s = strrchr(m->path, '/');
	return rd_safe(s ? s + 1 : m->path);
}

/* "func+0x12 (file.S:42) in libfoo.so" for a runtime address. */
static const char *runtime_loc(const struct rd_modules *mods, uint64_t addr, char *buf, size_t len)
{
	const struct rd_module *m = rd_modules_find(mods, addr);
	char loc[RD_LOC_LEN];

	if (!m) {
		snprintf(buf, len, "(not in a mapped file)");
		return buf;
	}
	rd_sym_str(m->es, addr - m->bias, loc, sizeof(loc));
	snprintf(buf, len, "%s in %s", loc, mod_name(m));
	return buf;
}

static const char *mem_error(const struct image *im, int err)
{
	if (im->core && err == -ENODATA && im->core->truncated)
		return "not in the core (left out by coredump_filter, or past the end of the "
		       "truncated core)";
	if (im->core && err == -ENODATA)
		return "not in the core (coredump_filter left its pages out)";
	if (im->core && err == -EFAULT)
		return "not mapped in the core";
	return strerror(-err);
}

/* The thread of a core that took the signal, when it is t. */
static const struct rd_core_signal *signal_of(const struct image *im, const struct thread *t)
{
	if (!im->core || !im->core->have_signal || im->core->signal.tid != t->tid)
		return NULL;
	return &im->core->signal;
}

static void print_rseq_text(const struct thread *t, const struct image *im)
{
	size_t bad, total;

	if (im->core && t->cfg_err) {
		printf("  rseq area unknown: %s\n", t->cfg_why);
		return;
	}
	if (t->cfg_err == -EIO) {
		printf("  rseq configuration unknown (PTRACE_GET_RSEQ_CONFIGURATION needs "
		       "Linux 5.13)\n");
		return;
	}
	if (t->cfg_err) {
		printf("  rseq configuration unreadable: %s\n", strerror(-t->cfg_err));
		return;
	}
	if (!t->cfg.abi_ptr) {
		printf("  no rseq area registered%s\n",
		       im->core ? " (glibc's __rseq_size is 0)" : "");
		return;
	}
	printf("  rseq area %#" PRIx64 " (%" PRIu32 " bytes, flags %#" PRIx32 ")", t->cfg.abi_ptr,
	       t->cfg.abi_size, t->cfg.flags);
	if (t->area_err)
		printf("  unreadable: %s\n", mem_error(im, t->area_err));
	else
		printf("  cpu %" PRIu32 "\n", t->area.cpu_id);
	bad = sig_mismatches(im->mods, t->cfg.signature, &total);
	printf("      %-10s%#010" PRIx32 "%s", "signature", t->cfg.signature,
	       im->core ? " (glibc's)" : "");
	if (!total)
		printf(" (no critical section in the modules to compare)\n");
	else if (!bad)
		printf(", as %zu critical section%s of the modules expect%s\n", total,
		       total == 1 ? "" : "s", total == 1 ? "s" : "");
	else
		printf(", but %zu of %zu critical sections expect another: their abort "
		       "would kill the thread\n",
		       bad, total);
	if (!t->area_err && !t->area.rseq_cs)
		printf("      %-10s0 (no critical section armed)\n", "rseq_cs");
	else if (!t->area_err && !t->armed)
		printf("      %-10s%#" PRIx64 " (descriptor unreadable: %s)\n", "rseq_cs",
		       t->area.rseq_cs, mem_error(im, t->desc_err));
	else if (!t->area_err)
		printf("      %-10s%#" PRIx64 " -> [%#" PRIx64 ", %#" PRIx64 "), abort %#" PRIx64
		       "\n",
		       "rseq_cs", t->area.rseq_cs, t->armed_start, t->armed_post, t->armed_abort);
}

/* The section a thread is inside, and what becomes of it. */
static void print_inside_text(const struct thread *t, const struct image *im,
			      const struct rd_core_signal *sig)
{
	const struct rd_module *m = rd_modules_find(im->mods, t->in_abort);
	bool aborts = t->armed && t->ip >= t->armed_start && t->ip < t->armed_post;
	/* Whether rseq_cs was read, and the descriptor it names when it names one */
	bool known =
	    !t->cfg_err && t->cfg.abi_ptr && !t->area_err && (!t->area.rseq_cs || t->armed);
	char loc[RD_LOC_LEN];
	struct elfscan_loc fn;

	rd_symbolize(t->in_mod ? t->in_mod->es : NULL,
		     t->in_start - (t->in_mod ? t->in_mod->bias : 0), &fn);
	printf("      %-10s%s, critical section [%#" PRIx64 ", %#" PRIx64 ") in %s\n", "inside",
	       fn.func ? fn.func : "?", t->in_start, t->in_post, mod_name(t->in_mod));
	rd_sym_str(m ? m->es : NULL, t->in_abort - (m ? m->bias : 0), loc, sizeof(loc));
	if (sig && sig->fault)
		printf("      %-10sthe fault is inside the section: it never committed, and what "
		       "it stored\n"
		       "      %-10sbefore the commit is no state other threads could rely on",
		       "", "");
	if (sig && sig->fault && aborts)
		printf("; preempted here\n      %-10sinstead, it would have aborted to %#" PRIx64
		       " %s\n",
		       "", t->in_abort, loc);
	else if (sig && sig->fault && known)
		printf(" (its descriptor\n      %-10swas not armed)\n", "");
	else if (sig && sig->fault)
		printf(" (whether its\n      %-10sdescriptor was armed is not known)\n", "");
	else if (aborts && im->core)
		printf("      %-10sarmed: a preemption here would have aborted it, to %#" PRIx64
		       " %s\n",
		       "", t->in_abort, loc);
	else if (aborts)
		printf("      %-10sresuming aborts it, to %#" PRIx64 " %s\n", "", t->in_abort, loc);
	else if (!known)
		printf("      %-10swhether its descriptor is armed is not known\n", "");
	else
		printf("      %-10sno descriptor armed for it: %s\n", "",
		       im->core ? "it would not have aborted" : "resuming does not abort");
}

static void print_thread_text(const struct thread *t, const struct image *im)
{
	const struct rd_core_signal *sig = signal_of(im, t);
	char loc[RD_LOC_LEN + 256];

	printf("  tid %d", (int)t->tid);
	if (t->traced_by) {
		printf("  not inspected: traced by pid %d\n", t->traced_by);
		return;
	}
	print_rseq_text(t, im);
	if (t->ip_err) {
		printf("      %-10sunreadable: %s\n", "ip", strerror(-t->ip_err));
		return;
	}
	printf("      %-10s%#" PRIx64 " %s\n", "ip", t->ip,
	       runtime_loc(im->mods, t->ip, loc, sizeof(loc)));
	if (sig) {
		printf("      %-10s%s (code %d)", "signal", rd_signal_name(sig->signo), sig->code);
		if (sig->have_addr)
			printf(", address %#" PRIx64, sig->addr);
		printf("%s\n", sig->fault ? ", raised by the instruction at ip" : "");
	}
	if (t->inside)
		print_inside_text(t, im, sig);
}

static void print_thread_json(struct jw *w, const struct thread *t, const struct image *im)
{
	jw_obj_open(w);
	jw_ku64(w, "tid", (uint64_t)t->tid);
	jw_key(w, "rseq");
	if (t->cfg_err || !t->cfg.abi_ptr) {
		jw_null(w);
	} else {
		jw_obj_open(w);
		jw_ku64(w, "addr", t->cfg.abi_ptr);
		jw_ku64(w, "size", t->cfg.abi_size);
		jw_ku64(w, "signature", t->cfg.signature);
		jw_ku64(w, "flags", t->cfg.flags);
		jw_obj_close(w);
	}
	jw_key(w, "cpu_id");
	if (t->cfg_err || !t->cfg.abi_ptr || t->area_err)
		jw_null(w);
	else
		jw_u64(w, t->area.cpu_id);
	jw_key(w, "rseq_cs");
	if (t->cfg_err || !t->cfg.abi_ptr || t->area_err)
		jw_null(w);
	else
		jw_u64(w, t->area.rseq_cs);
	jw_key(w, "ip");
	if (t->ip_err)
		jw_null(w);
	else
		jw_u64(w, t->ip);
	jw_key(w, "inside");
	if (!t->inside) {
		jw_null(w);
	} else {
		const struct rd_module *m = t->in_mod;

		/* The section the thread is in, and where in it */
		jw_obj_open(w);
		rd_json_section_members(w, m ? m->es : NULL, m ? m->bias : 0, m ? m->path : NULL,
					t->in_start, t->in_post - t->in_start, t->in_abort, NULL);
		rd_json_kloc(w, "at", m ? m->es : NULL, t->ip - (m ? m->bias : 0), m ? m->bias : 0,
			     m ? m->path : NULL);
		jw_obj_close(w);
	}
	if (im->core) {
		/* What the answer needed that the core left out */
		jw_key(w, "not_in_core");
		jw_arr_open(w);
		if (t->cfg_err == -ENODATA)
			jw_str(w, "__rseq_offset");
		if (!t->cfg_err && t->cfg.abi_ptr && t->area_err == -ENODATA)
			jw_str(w, "rseq area");
		if (!t->area_err && t->area.rseq_cs && t->desc_err == -ENODATA)
			jw_str(w, "rseq_cs descriptor");
		jw_arr_close(w);
	}
	jw_obj_close(w);
}

/* Stop each thread briefly to read its rseq state; a thread that exited meanwhile, or a main
 * thread that exited before the others, is dropped (tid 0). With a debugger of ours holding
 * them, none is inspected. */
static int inspect_threads(pid_t pid, struct thread *threads, size_t n, const struct image *im)
{
	/* The debugger that runs us holds the threads: the modules are what it asks for. */
	int err, debugger = rd_debugger_ancestor(pid);

	if (debugger)
		rd_warn("pid %d is traced by pid %d, which runs this rseqdbg: its threads are not "
			"inspected",
			(int)pid, debugger);
	for (size_t i = 0; i < n; i++) {
		if (debugger) {
			threads[i].traced_by = debugger;
			threads[i].cfg_err = threads[i].area_err = threads[i].ip_err = -EBUSY;
			continue;
		}
		err = thread_inspect(&threads[i], im);
		if (err == -ESRCH)
			threads[i].tid = 0;
		else if (err)
			return err;
	}
	return 0;
}

/* The modules with sections to show, first nshown of views; *nbroken could not be scanned. */
static int collect_views(const struct scan_opts *o, const struct image *im, struct view *views,
			 size_t *nshown, size_t *nbroken)
{
	const struct rd_modules *mods = im->mods;

	for (size_t m = 0; m < mods->n; m++) {
		struct view *v = &views[*nshown];

		if (!mods->v[m].es) {
			if (im->core)
				rd_warn("%s: %s: %s", im->path, mods->v[m].path, mods->v[m].err);
			else
				rd_warn("pid %d: %s: %s", (int)o->pid, mods->v[m].path,
					mods->v[m].err);
			(*nbroken)++;
			continue;
		}
		*v = (struct view){.es = mods->v[m].es,
				   .path = mods->v[m].path,
				   .mod = &mods->v[m],
				   .bias = mods->v[m].bias};
		if (collect(v, o))
			return -ENOMEM;
		if (v->ncs)
			(*nshown)++;
	}
	return 0;
}

static void print_core_json_head(struct jw *w, const struct image *im)
{
	const struct rd_core *c = im->core;
	const struct rd_core_signal *s = &c->signal;

	jw_kstr(w, "core", im->path);
	jw_kstr(w, "compression", c->compression);
	jw_ku64(w, "pid", (uint64_t)c->pid);
	jw_kstr(w, "comm", c->comm[0] ? c->comm : NULL);
	jw_ku64(w, "machine", c->machine);
	jw_key(w, "signal");
	if (!c->have_signal) {
		jw_null(w);
		return;
	}
	jw_obj_open(w);
	jw_ku64(w, "tid", (uint64_t)s->tid);
	jw_ku64(w, "signo", (uint64_t)s->signo);
	jw_kstr(w, "name", rd_signal_name(s->signo));
	jw_ki64(w, "code", s->code);
	jw_key(w, "addr");
	if (s->have_addr)
		jw_u64(w, s->addr);
	else
		jw_null(w);
	jw_kbool(w, "fault", s->fault);
	jw_obj_close(w);
}

static void print_pid_json(const struct image *im, const struct view *views, size_t nshown,
			   const struct thread *threads, size_t nthreads)
{
	const struct rd_modules *mods = im->mods;
	struct jw *w = rd.jw;

	jw_obj_open(w);
	if (im->core)
		print_core_json_head(w, im);
	else
		jw_ku64(w, "pid", (uint64_t)im->pid);
	jw_key(w, "modules");
	jw_arr_open(w);
	for (size_t i = 0; i < nshown; i++)
		print_view_json(&views[i]);
	jw_arr_close(w);
	jw_ku64(w, "modules_without_sections", mods->n - nshown);
	if (im->core) {
		jw_key(w, "modules_not_scanned");
		jw_arr_open(w);
		for (size_t i = 0; i < mods->n; i++) {
			if (mods->v[i].es)
				continue;
			jw_obj_open(w);
			jw_kstr(w, "path", mods->v[i].path);
			jw_kstr(w, "error", mods->v[i].err);
			jw_obj_close(w);
		}
		jw_arr_close(w);
	}
	jw_key(w, "threads");
	jw_arr_open(w);
	for (size_t i = 0; i < nthreads; i++) {
		if (threads[i].tid)
			print_thread_json(w, &threads[i], im);
	}
	jw_arr_close(w);
	jw_obj_close(w);
	jw_end(w);
}

static void print_core_head(const struct image *im)
{
	const struct rd_core *c = im->core;
	const struct rd_core_signal *s = &c->signal;

	printf("core %s: pid %d", rd_safe(im->path), (int)c->pid);
	if (c->comm[0])
		printf(" (%s)", rd_safe(c->comm));
	printf(", %s%s\n", c->machine == EM_AARCH64 ? "aarch64" : "x86_64",
	       c->compression ? ", read through zstd" : "");
	if (c->have_signal) {
		printf("  signal %s (code %d)", rd_signal_name(s->signo), s->code);
		if (s->have_addr)
			printf(", address %#" PRIx64, s->addr);
		printf(" in tid %d%s\n", (int)s->tid,
		       s->fault ? ", raised by its instruction" : "");
	}
	if (!c->have_files)
		printf("  no NT_FILE note: the core names no mapped files\n");
}

static void print_pid_text(const struct scan_opts *o, const struct image *im,
			   const struct view *views, size_t nshown, size_t nbroken,
			   const struct thread *threads, size_t nthreads)
{
	const struct rd_modules *mods = im->mods;
	size_t nlive = 0;

	if (im->core) {
		print_core_head(im);
		printf("%zu module%s with rseq critical sections, %zu without", nshown,
		       nshown == 1 ? "" : "s", mods->n - nshown);
	} else {
		printf("pid %d: %zu module%s with rseq critical sections, %zu without", (int)o->pid,
		       nshown, nshown == 1 ? "" : "s", mods->n - nshown);
	}
	if (nbroken)
		printf(" (%zu not scanned)", nbroken);
	printf("\n");
	for (size_t i = 0; i < nshown; i++) {
		putchar('\n');
		print_view_text(&views[i], o);
	}
	for (size_t i = 0; i < nthreads; i++)
		nlive += threads[i].tid != 0;
	printf("\nthreads: %zu\n", nlive);
	for (size_t i = 0; i < nthreads; i++) {
		if (threads[i].tid)
			print_thread_text(&threads[i], im);
	}
}

/* Print the modules and threads of a process or core (views made here). */
static int print_image(const struct scan_opts *o, const struct image *im,
		       const struct thread *threads, size_t nthreads)
{
	size_t nshown = 0, nbroken = 0;
	struct view *views = calloc(im->mods->n ? im->mods->n : 1, sizeof(*views));
	int ret = EXIT_OK;

	if (!views || collect_views(o, im, views, &nshown, &nbroken)) {
		ret = rd_error("out of memory");
		goto out;
	}
	if (rd.json)
		print_pid_json(im, views, nshown, threads, nthreads);
	else
		print_pid_text(o, im, views, nshown, nbroken, threads, nthreads);
out:
	for (size_t i = 0; views && i < im->mods->n; i++)
		free(views[i].cs);
	free(views);
	return ret;
}

static int scan_pid(const struct scan_opts *o)
{
	struct rd_modules mods = {0};
	struct image im = {.pid = o->pid, .mods = &mods};
	struct thread *threads = NULL;
	size_t nthreads = 0;
	struct stat st;
	char path[64];
	int err, ret;

	snprintf(path, sizeof(path), "/proc/%d", (int)o->pid);
	if (o->pid <= 0 || stat(path, &st))
		return rd_pid_error(o->pid, -ESRCH);
	err = rd_modules_load(o->pid, &o->es, &mods);
	if (err)
		return rd_pid_error(o->pid, err);
	err = list_threads(o->pid, &threads, &nthreads);
	if (!err)
		err = inspect_threads(o->pid, threads, nthreads, &im);
	if (err)
		ret = rd_pid_error(o->pid, err);
	else
		ret = print_image(o, &im, threads, nthreads);
	free(threads);
	rd_modules_free(&mods);
	return ret;
}

/* glibc's __rseq_offset and __rseq_size (2.35+), in the core's memory at the module that
 * defines them (ld.so, or a static program). */
struct glibc_rseq {
	int err; /* -ENOENT: no module defines them; -ENODATA: not in the core */
	int64_t offset;
	uint32_t size;
	size_t unscanned; /* modules whose file could not be read */
};

static void glibc_rseq(const struct image *im, struct glibc_rseq *g)
{
	const struct rd_modules *mods = im->mods;

	g->err = -ENOENT;
	g->unscanned = 0;
	for (size_t i = 0; i < mods->n; i++)
		g->unscanned += !mods->v[i].es;
	for (size_t i = 0; i < mods->n; i++) {
		const struct rd_module *m = &mods->v[i];
		uint64_t off_addr, size_addr;

		if (rd_module_symbol(m, "__rseq_offset", &off_addr) ||
		    rd_module_symbol(m, "__rseq_size", &size_addr))
			continue;
		/* Written by the loader: only the core has them, never the file. */
		g->err = rd_core_read(im->core, off_addr + m->bias, &g->offset, sizeof(g->offset));
		if (!g->err)
			g->err =
			    rd_core_read(im->core, size_addr + m->bias, &g->size, sizeof(g->size));
		if (g->err == -EFAULT)
			g->err = -ENODATA;
		return;
	}
}

static void core_thread(struct thread *t, const struct rd_core_thread *ct, const struct image *im,
			const struct glibc_rseq *g, uint32_t sig)
{
	unsigned char raw[RD_RSEQ_AREA_BYTES];
	size_t len;

	t->tid = ct->tid;
	t->ip = ct->ip;
	t->cfg_err = g->err;
	if (g->err == -ENOENT && g->unscanned)
		t->cfg_why = "no module scanned defines glibc's __rseq_offset (the dynamic "
			     "loader's file is missing or another build?)";
	else if (g->err == -ENOENT)
		t->cfg_why = "no module defines glibc's __rseq_offset (glibc 2.35+ registers rseq "
			     "and exports it)";
	else if (g->err == -ENODATA && im->core->truncated)
		t->cfg_why = "glibc's __rseq_offset is not in the core (left out by "
			     "coredump_filter, or past the end of the truncated core)";
	else if (g->err == -ENODATA)
		t->cfg_why = "glibc's __rseq_offset is not in the core (coredump_filter left its "
			     "page out)";
	else if (g->err)
		t->cfg_why = "glibc's __rseq_offset is unreadable";
	else if (g->size && !ct->have_tp) {
		t->cfg_err = -ENOENT;
		t->cfg_why = "the core has no thread pointer for it (no NT_ARM_TLS note)";
	}
	if (t->cfg_err) {
		t->area_err = t->cfg_err;
		thread_where(t, im);
		return;
	}
	if (g->size) {
		/* glibc registers the area with a length of 32 bytes at least, whatever part
		 * of it __rseq_size says it uses. */
		t->cfg.abi_ptr = ct->tp + (uint64_t)g->offset;
		t->cfg.abi_size = g->size < 32 ? 32 : g->size;
		t->cfg.signature = sig;
	}
	len = g->size < sizeof(raw) ? g->size : sizeof(raw);
	if (!t->cfg.abi_ptr)
		t->area_err = -ENOENT;
	else if (len < 16)
		t->area_err = -EINVAL;
	else
		t->area_err = rd_core_read(im->core, t->cfg.abi_ptr, raw, len);
	if (t->area_err == -EFAULT)
		t->area_err = -ENODATA;
	if (!t->area_err)
		rd_rseq_parse_area(raw, len, &t->area);
	thread_where(t, im);
}

static int scan_core(const struct scan_opts *o)
{
	struct rd_modules mods = {0};
	struct image im = {.mods = &mods, .path = o->bulk.core};
	struct thread *threads = NULL;
	struct glibc_rseq g;
	struct rd_core *c;
	uint32_t sig = 0;
	int err, ret;

	err = rd_core_open(o->bulk.core, &c);
	if (err)
		return rd_error("%s: %s", o->bulk.core, rd_errmsg());
	if (c->truncated)
		rd_warn("%s: truncated: the memory past its end is not in the core", o->bulk.core);
	im.core = c;
	im.pid = c->pid;
	err = rd_core_modules(c, &o->es, o->bulk.exe, o->bulk.sysroot, &mods);
	threads = calloc(c->nthreads, sizeof(*threads));
	if (err || !threads) {
		ret = rd_error("%s: %s", o->bulk.core, strerror(err ? -err : ENOMEM));
		goto out;
	}
	glibc_rseq(&im, &g);
	/* glibc registers every thread with the signature of the architecture */
	elfscan_known_signatures(c->machine, &sig, 1);
	for (size_t i = 0; i < c->nthreads; i++)
		core_thread(&threads[i], &c->threads[i], &im, &g, sig);
	ret = print_image(o, &im, threads, c->nthreads);
out:
	free(threads);
	rd_modules_free(&mods);
	rd_core_close(c);
	return ret;
}

/* -------------------------------------------------------------------------------------------
 * Options
 */

static int add_debug_dir(struct scan_opts *o, const char *dir)
{
	size_t old = o->debug_dirs ? strlen(o->debug_dirs) : 0;
	char *s = realloc(o->debug_dirs, old + strlen(dir) + 2);

	if (!s)
		return -ENOMEM;
	if (old)
		s[old++] = ':';
	strcpy(s + old, dir);
	o->debug_dirs = s;
	return 0;
}

enum { OPT_ADDR = 256, OPT_NO_DEBUGINFO, OPT_DEBUG_DIR };

static int parse_opts(struct scan_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"addr", required_argument, NULL, OPT_ADDR},
	    {"pid", required_argument, NULL, 'p'},
	    {"no-debuginfo", no_argument, NULL, OPT_NO_DEBUGINFO},
	    {"debug-dir", required_argument, NULL, OPT_DEBUG_DIR},
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
	unsigned long long v;
	int c;

	while ((c = rd_getopt(argc, argv, &cl)) != RD_OPT_END) {
		switch (c) {
		case OPT_ADDR:
			if (!rd_parse_u64(optarg, &v))
				return rd_error("--addr: '%s' is not an address", optarg);
			o->have_addr = true;
			o->addr = v;
			break;
		case 'p':
			if (rd_parse_pid("--pid", "process", optarg, &o->pid))
				return rd_error("%s", rd_errmsg());
			o->have_pid = true;
			break;
		case OPT_NO_DEBUGINFO:
			o->es.no_debuginfo = true;
			break;
		case OPT_DEBUG_DIR:
			if (add_debug_dir(o, optarg))
				return rd_error("out of memory");
			break;
		default:
			if (!rd_bulk_option(&o->bulk, c))
				return c;
		}
	}
	o->es.debug_dirs = o->debug_dirs;
	return rd_source_check("scan", o->have_pid, &o->bulk, argc - optind);
}

int cmd_scan(int argc, char **argv)
{
	struct scan_opts o = {.es = {.sz = sizeof(struct elfscan_opts)}};
	int ret = parse_opts(&o, argc, argv);

	if (ret == RD_OPT_HELP || ret == RD_OPT_ERROR)
		ret = rd_opt_exit(ret);
	else if (!ret && o.have_pid)
		ret = scan_pid(&o);
	else if (!ret && o.bulk.core)
		ret = scan_core(&o);
	else if (!ret)
		ret = scan_files(argc - optind, argv + optind, &o);
	free(o.debug_dirs);
	return ret;
}
