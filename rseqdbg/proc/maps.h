/* SPDX-License-Identifier: GPL-2.0-only */
/* The ELF modules mapped in a live process, each scanned by libelfscan, with load bias. */
#ifndef RSEQDBG_PROC_MAPS_H
#define RSEQDBG_PROC_MAPS_H

#include <stdint.h>
#include <sys/types.h>

#include "elfscan.h"

struct rd_module {
	char *path;	     /* as /proc/PID/maps names it */
	uint64_t start, end; /* lowest and highest mapped address of this file */
	uint64_t bias;	     /* runtime address = libelfscan address + bias */
	dev_t dev;
	ino_t ino;
	struct elfscan *es; /* NULL when the file could not be scanned; err says why */
	char *err;
	void *image; /* the bytes es reads, for a module with no file (the vDSO) */
};

struct rd_modules {
	pid_t pid;
	struct rd_module *v;
	size_t n;
	uint64_t vdso_start, vdso_end; /* the [vdso] mapping; 0 when none */
};

/* Read /proc/PID/maps and scan every file-backed ELF mapping (opened through
 * /proc/PID/map_files or /proc/PID/root so deleted or namespaced files work), all through a
 * live thread when the main thread has exited (rd_proc_live_thread). Returns 0 or -errno
 * (mods is then empty; -ESRCH: no thread is left); a module that fails alone only sets its
 * err. */
int rd_modules_load(pid_t pid, const struct elfscan_opts *opts, struct rd_modules *mods);
/* Add the vDSO, the ELF image the kernel maps into each process with no file behind it, read
 * from the process's memory as module "[vdso]", where rd_modules_load saw it mapped. 0, or
 * -errno when there is none or it cannot be read (mods is then unchanged). */
int rd_modules_add_vdso(pid_t pid, const struct elfscan_opts *opts, struct rd_modules *mods);
void rd_modules_free(struct rd_modules *mods);
/* The module mapping a runtime address, NULL when none. */
const struct rd_module *rd_modules_find(const struct rd_modules *mods, uint64_t addr);
/* The critical section containing a runtime address; *mod set when found. */
const struct elfscan_cs *rd_modules_lookup(const struct rd_modules *mods, uint64_t addr,
					   const struct rd_module **mod);

#endif
