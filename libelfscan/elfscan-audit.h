/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libelfscan: check the rseq tables of an ELF file and the code of its critical sections.
 *
 * Each check has a stable id ("RSEQ001"), a severity, a title, a description and a hint;
 * elfscan_audit_nchecks() and elfscan_audit_check() list them. elfscan_audit() runs the
 * selected checks and returns the findings, sorted by section (file-wide findings first).
 * Addresses are libelfscan addresses (load base 0); messages add opts->bias to the addresses
 * they print.
 */
#ifndef ELFSCAN_AUDIT_H
#define ELFSCAN_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elfscan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility: what this header declares is its API. */
#pragma GCC visibility push(default)

enum elfscan_severity {
	ELFSCAN_SEV_INFO = 0,
	ELFSCAN_SEV_WARNING = 1,
	ELFSCAN_SEV_ERROR = 2,
};

struct elfscan_check {
	const char *id;	   /* "RSEQ001": stable */
	const char *group; /* "descriptor", "signature", "tables", "code", "orphans" */
	enum elfscan_severity severity;
	const char *title;	 /* one line */
	const char *description; /* what is wrong and why it matters */
	const char *hint;	 /* how to fix it */
};

struct elfscan_audit_opts {
	size_t sz; /* sizeof(struct elfscan_audit_opts) */
	/* Check ids to run (NULL-terminated; NULL: every check), then ids not to run. */
	const char *const *enable;
	const char *const *disable;
	/* Signatures the threads of a process registered (PTRACE_GET_RSEQ_CONFIGURATION):
	 * every section's signature is compared with each. */
	const uint32_t *registered_sigs;
	size_t nregistered_sigs;
	uint64_t bias; /* added to the addresses printed in messages (a module's load bias) */
	/* Called now and then as the checks go, with the work done of total (units of the
	 * library's own, done <= total), for a caller that shows progress on a large file;
	 * NULL: never. */
	void (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *progress_ctx;
};

struct elfscan_audit;	/* the findings of one file */
struct elfscan_finding; /* one finding */

/* Every check, in id order. */
size_t elfscan_audit_nchecks(void);
const struct elfscan_check *elfscan_audit_check(size_t i);
/* The check with this id; NULL when there is none. */
const struct elfscan_check *elfscan_audit_find_check(const char *id);
const char *elfscan_severity_name(enum elfscan_severity sev); /* "error", "warning", "info" */

/* Run the checks on es. Returns 0 (*res holds the findings, possibly none) or -errno: an
 * unknown check id in opts (-EINVAL) or no memory. */
int elfscan_audit(struct elfscan *es, const struct elfscan_audit_opts *opts,
		  struct elfscan_audit **res);
void elfscan_audit_free(struct elfscan_audit *a);
size_t elfscan_audit_count(const struct elfscan_audit *a);
const struct elfscan_finding *elfscan_audit_finding(const struct elfscan_audit *a, size_t i);
/* How many findings of each severity (counts[ELFSCAN_SEV_*]). */
void elfscan_audit_counts(const struct elfscan_audit *a, size_t counts[3]);
/* Why the code checks, or some of them, did not run ("" when they all did): e.g. "riscv: not
 * decoded", or RSEQ038 for a section no function symbol bounds in over 64 MiB of code. */
const char *elfscan_audit_code_note(const struct elfscan_audit *a);

const struct elfscan_check *elfscan_finding_check(const struct elfscan_finding *f);
/* The message names the section by function and, with DWARF, file:line. */
const char *elfscan_finding_message(const struct elfscan_finding *f);
/* The message without its leading "section FUNC (FILE:LINE): " (for output grouped by
 * section). */
const char *elfscan_finding_detail(const struct elfscan_finding *f);
/* The critical section the finding is about; NULL for a finding about the whole file. */
const struct elfscan_cs *elfscan_finding_cs(const struct elfscan_finding *f);
/* The address the finding points at (an instruction, a table entry, ...). */
uint64_t elfscan_finding_addr(const struct elfscan_finding *f);
/* How many occurrences the finding stands for: 1, or for repeated table entries (the same
 * exit point listed many times) the size of the run, reported once. */
size_t elfscan_finding_count(const struct elfscan_finding *f);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif /* ELFSCAN_AUDIT_H */
