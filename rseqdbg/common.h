/* SPDX-License-Identifier: GPL-2.0-only */
/* What every subcommand shares: global options, error reporting, exit codes. */
#ifndef RSEQDBG_COMMON_H
#define RSEQDBG_COMMON_H

#include <stdbool.h>
#include <stdio.h>

#include "json.h"

/* Documented exit codes (rseqdbg(1)). */
enum {
	EXIT_OK = 0,
	EXIT_FINDINGS = 1, /* a check failed (audit) */
	EXIT_ERROR = 2,	   /* could not do the job */
};

struct rd_global {
	bool json;   /* -j/--json */
	bool pretty; /* -p/--pretty (implies --json) */
	bool verbose;
	struct jw *jw; /* writer on stdout when json */
};

extern struct rd_global rd;

/* One line on stderr naming what went wrong ("rseqdbg: <cmd>: ..."); in JSON mode also a
 * {"error": "..."} document on stdout. Returns EXIT_ERROR. */
int rd_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A file that cannot be read, in a command over several files: one line on stderr
 * ("rseqdbg: <cmd>: PATH: msg"; msg may start with "PATH: " already) and in JSON mode an
 * entry {"path", "error"} of the files array being written, not a document of its own. */
void rd_file_error(const char *path, const char *msg);
/* A warning on stderr (never on stdout). */
void rd_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Subcommands: argv[0] is the subcommand name; return an exit code. */
int cmd_scan(int argc, char **argv);
int cmd_audit(int argc, char **argv);
int cmd_step(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_stat(int argc, char **argv);

/* Recreate rd.jw to match rd.pretty once a command has parsed its own options.
 * Returns EXIT_OK, or EXIT_ERROR (reported) when out of memory. */
int rd_json_writer(void);

/* Parse an unsigned number (decimal, 0x hex); false when s is not one. */
bool rd_parse_u64(const char *s, unsigned long long *v);

#endif
