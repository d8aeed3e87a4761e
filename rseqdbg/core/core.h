/* SPDX-License-Identifier: GPL-2.0-only */
/* A core file: the threads, memory and mapped files of a process that is gone. */
#ifndef RSEQDBG_CORE_CORE_H
#define RSEQDBG_CORE_CORE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "proc/maps.h"

/* One thread, from its NT_PRSTATUS and the notes after it. */
struct rd_core_thread {
	pid_t tid;
	int cursig;  /* pr_cursig */
	uint64_t ip; /* the instruction pointer of its user registers */
	bool have_tp;
	uint64_t tp; /* the thread pointer: fs_base (x86_64), tpidr_el0 (NT_ARM_TLS, aarch64) */
};

/* The signal that ended the process (NT_SIGINFO of the first thread, else its pr_cursig). */
struct rd_core_signal {
	pid_t tid; /* the thread that took it: the first of the core */
	int signo, code;
	bool have_addr; /* si_addr, for the signals the CPU raises */
	uint64_t addr;
	bool fault; /* raised by the instruction at the thread's ip (SIGSEGV, SIGBUS, ...) */
};

struct rd_core {
	char *path;
	const char *compression; /* "zstd" when read decompressed, else NULL */
	bool truncated;		 /* shorter than its segments: their ends are not in it */
	uint16_t machine;	 /* e_machine */
	pid_t pid;
	char comm[17]; /* NT_PRPSINFO's pr_fname */
	struct rd_core_thread *threads;
	size_t nthreads;
	bool have_signal;
	struct rd_core_signal signal;
	/* NT_FILE: the mapped files, in address order; dev and ino are 0 */
	struct rd_mapping *files;
	size_t nfiles;
	bool have_files;
	/* NT_AUXV: where the program's headers and entry point were (0 when unknown) */
	uint64_t at_phdr, at_entry;
	/* private */
	int fd;
	void *elf;
	struct rd_core_seg *segs;
	size_t nsegs;
	char *names;
};

/* Open a core file, or one compressed with zstd (as systemd-coredump stores them). 0, or
 * -errno with rd_errmsg() saying what is wrong (never the path). */
int rd_core_open(const char *path, struct rd_core **res);
void rd_core_close(struct rd_core *c);
/* Copy len bytes of the process's memory at addr. -EFAULT: not mapped; -ENODATA: mapped but
 * left out of the core (coredump_filter). */
int rd_core_read(const struct rd_core *c, uint64_t addr, void *buf, size_t len);
/* The GNU build ID (lowercase hex) of the ELF file mapped at start, from its headers in the
 * core. -ENODATA: the pages are not in the core; -ENOENT: the file has none. */
int rd_core_build_id(const struct rd_core *c, uint64_t start, char *hex, size_t len);
/* "SIGSEGV", ... ("signal 42" past the known ones; the buffer is static). */
const char *rd_signal_name(int signo);

#endif
