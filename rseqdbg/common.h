/* SPDX-License-Identifier: GPL-2.0-only */
/* What every subcommand shares: global options, error reporting, exit codes. */
#ifndef RSEQDBG_COMMON_H
#define RSEQDBG_COMMON_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "json.h"

/* Documented exit codes (rseqdbg(1)). */
enum {
	EXIT_OK = 0,
	EXIT_FINDINGS = 1, /* a check failed (audit) */
	EXIT_ERROR = 2,	   /* could not do the job */
};

struct rd_global {
	bool json;   /* -j/--json */
	bool pretty; /* --pretty (implies --json) */
	bool verbose;
	struct jw *jw;	 /* writer on json_out (stdout when NULL) when json */
	FILE *json_out;	 /* where a command writes its JSON documents, errors included */
	const char *cmd; /* the command running, for messages */
};

extern struct rd_global rd;

/* One line on stderr naming what went wrong ("rseqdbg: <cmd>: ..."); in JSON mode also a
 * {"error": "..."} document on stdout. Returns EXIT_ERROR. */
int rd_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A file that cannot be read, in a command over several files: one line on stderr
 * ("rseqdbg: <cmd>: PATH: msg"; msg never names the file, as elfscan_errmsg()) and in JSON
 * mode an entry {"path", "error"} of the files array being written, not a document of its
 * own. */
void rd_file_error(const char *path, const char *msg);
/* The one error convention of the tool, as in libelfscan: below the commands, a function
 * returns 0 or -errno and leaves what went wrong, naming the object, in rd_errmsg(); only a
 * command reports, once, through rd_error(). */
void rd_seterr(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The last message set in this thread ("" when none). */
const char *rd_errmsg(void);
/* A warning on stderr (never on stdout). */
void rd_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Subcommands: argv[0] is the subcommand name; return an exit code. */
int cmd_scan(int argc, char **argv);
int cmd_audit(int argc, char **argv);
int cmd_step(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_exporter(int argc, char **argv);

/* Recreate rd.jw to match rd.pretty once a command has parsed its own options.
 * Returns 0, or -ENOMEM (rd_errmsg()). */
int rd_json_writer(void);
/* Send the command's JSON documents, error objects included, to f from now on (stat writes
 * its summary on stderr or into a file). Returns 0, or -ENOMEM (rd_errmsg()). */
int rd_json_writer_to(FILE *f);
/* -o/--output FILE of stat and trace: FILE created or truncated, close-on-exec, and where the
 * command's JSON documents go from now on (error lines stay on stderr). NULL when it cannot
 * be (rd_errmsg() says why). */
FILE *rd_output_open(const char *path);
/* Close it, JSON documents going to back again; 0, or -errno (rd_errmsg()) when writing it
 * failed. */
int rd_output_close(FILE *f, const char *path, FILE *back);

/* Command lines. A command lists only its own options; rd_getopt() adds and handles those
 * every command takes: -j/--json, --pretty and -h/--help. -p is --pid wherever a process is
 * chosen, as in gdb, strace and perf. */
enum {
	RD_OPT_END = -1,     /* all options read; operands from optind */
	RD_OPT_HELP = -2,    /* usage printed on stdout: exit 0 */
	RD_OPT_ERROR = -3,   /* usage error reported: exit 2 */
	RD_OPT_PRETTY = 512, /* long options of the commands use values below this */
};

struct rd_cmdline {
	const char *shortopts;	       /* the command's letters; "+" first stops at an operand */
	const struct option *longopts; /* the command's, ending with { 0 } */
	void (*usage)(FILE *f);
};

/* The next of the command's options (optarg set), or one of RD_OPT_END, RD_OPT_HELP,
 * RD_OPT_ERROR. At the end, sets up rd.jw for --pretty. Start with optind = 1. */
int rd_getopt(int argc, char **argv, const struct rd_cmdline *cl);
/* The exit status for RD_OPT_HELP or RD_OPT_ERROR. */
int rd_opt_exit(int c);

/* The longest command or option name rd_closest() compares. */
#define RD_NAME_MAX 32
/* Of the n names, the one the first len characters of word were likely meant to be: the
 * closest by edit distance when near enough to be a typo of it (one edit in four letters, at
 * least one), else the only name word is the start of; NULL when none. */
const char *rd_closest(const char *word, const char *const *names, size_t n, size_t len);
/* For an unknown long option arg ("--name" or "--name=value"): the name of longopts (ending
 * with { 0 }) it was likely meant to be, or NULL (rd_closest()). */
const char *rd_closest_option(const char *arg, const struct option *longopts);

/* Parse an unsigned number (decimal, 0x hex); false when s is not one. */
bool rd_parse_u64(const char *s, unsigned long long *v);

/* The highest PID: the kernel's PID_MAX_LIMIT (kernel/pid_max cannot be set above it on
 * 64-bit), so every number accepted may name a task and a larger one is a typo. */
#define RD_PID_MAX 4194304

/* Parse the process or thread id ("process", "thread": what) given to the long option opt
 * ("--pid"); returns 0, or -EINVAL with the message in rd_errmsg(). */
int rd_parse_pid(const char *opt, const char *what, const char *s, pid_t *pid);

#endif
