/* SPDX-License-Identifier: GPL-2.0-only */
/* Commands over many files (scan, audit): FILE operands expanded into the files to read
 * (directories walked with -r, files that are not ELF skipped), the run's counts, and a
 * progress line on a terminal. */
#ifndef RSEQDBG_BULK_H
#define RSEQDBG_BULK_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"

struct elfscan;

/* The options every command over files takes beside its own: -r/--recursive ('r' among its
 * short options), --with-tables, --strict and --no-progress, and what it reads instead of
 * files, --core with --exe and --sysroot (long options with these values, below
 * RD_OPT_PRETTY and above the commands' own). */
enum {
	RD_OPT_WITH_TABLES = 480,
	RD_OPT_STRICT,
	RD_OPT_NO_PROGRESS,
	RD_OPT_CORE,
	RD_OPT_EXE,
	RD_OPT_SYSROOT,
};

struct rd_bulk_opts {
	bool recursive;	     /* -r */
	bool with_tables;    /* --with-tables */
	bool strict;	     /* --strict: nothing skipped, a file that is not ELF is an error */
	bool no_progress;    /* --no-progress */
	const char *core;    /* --core */
	const char *exe;     /* --exe */
	const char *sysroot; /* --sysroot */
};

/* The option c (from rd_getopt) set in o; false when c is not one of them. */
bool rd_bulk_option(struct rd_bulk_opts *o, int c);
/* What scan and audit read, by their options: FILE operands (nfiles of them, with b's
 * options), a process (have_pid) or a core (b->core, with b->exe or b->sysroot). EXIT_OK when
 * they make exactly one of these, else the usage error, reported. */
int rd_source_check(const char *cmd, bool have_pid, const struct rd_bulk_opts *b, int nfiles);

/* One file to read, or what went wrong finding files there (an unreadable directory). */
struct rd_entry {
	char *path;
	char *err; /* NULL: a file to read */
};

struct rd_bulk {
	struct rd_bulk_opts o;
	/* More than one FILE, or -r: a run over many files, where a file that is not ELF is
	 * skipped and a summary ends the output. */
	bool many;
	struct rd_entry *v;
	size_t n, cap;
	/* Counts: ELF files read, those with rseq tables and their critical sections; files
	 * skipped because they are not ELF; entries of a walk that are neither files nor
	 * directories (symbolic links, devices, FIFOs, sockets); files or directories that
	 * could not be read. */
	size_t read, with_tables, sections, not_elf, other, errors;
	struct rd_inodes *seen; /* files and directories walked, each read once */
};

/* Expand the operands into b->v, in order, each directory's entries sorted by name. Returns 0,
 * or -ENOMEM (rd_errmsg()). */
int rd_bulk_collect(struct rd_bulk *b, char **operands, int n);
void rd_bulk_free(struct rd_bulk *b);
/* A file read: counted; whether the command prints it (--with-tables: only with tables). */
bool rd_bulk_count(struct rd_bulk *b, struct elfscan *es);
/* "files: N ELF files VERB, ..." on stdout, or the "file_counts" member in JSON. */
void rd_bulk_summary_text(const struct rd_bulk *b, const char *verb);
void rd_bulk_summary_json(const struct rd_bulk *b, struct jw *w);

/*
 * The progress line: on standard error when it is a terminal, never in JSON, rewritten in
 * place at most ten times a second once a run has taken RSEQDBG_PROGRESS_DELAY seconds (0.5
 * by default), and erased before anything else is written to the terminal and at the end.
 */
void rd_progress_begin(const struct rd_bulk *b, const char *verb);
/* Reading file i of total (0-based) at path; or, with total 0, i files found so far and the
 * directory path being read. */
void rd_progress(size_t i, size_t total, const char *path);
/* How far into the file being read (an elfscan_audit_opts progress callback: a large file
 * shows its progress too). */
void rd_progress_within(void *ctx, uint64_t done, uint64_t total);
/* Erase the line if it is shown: before an error or a warning, and, when standard output is
 * the terminal too, before the command prints (rd_progress_output()). */
void rd_progress_clear(void);
void rd_progress_output(void);
void rd_progress_end(void);

#endif
