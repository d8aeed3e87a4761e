/* SPDX-License-Identifier: GPL-2.0-only */
/* The ELF modules mapped in a live process, each scanned by libelfscan, with load bias. */
#ifndef RSEQDBG_PROC_MAPS_H
#define RSEQDBG_PROC_MAPS_H

#include <stdint.h>
#include <sys/types.h>

#include "elfscan.h"

/* One mapping of a file: a line of /proc/PID/maps, or an entry of a core's NT_FILE note. */
struct rd_mapping {
	uint64_t start, end, offset;
	dev_t dev;
	ino_t ino;
	const char *path;
};

/* A core: what its memory says of a module's file, checked before the file is read. */
enum rd_build_id_check {
	RD_BUILD_ID_UNCHECKED = 0, /* a live process: the file is the one mapped */
	RD_BUILD_ID_MATCH,	   /* the core's build ID is the file's */
	RD_BUILD_ID_NOT_IN_CORE,   /* the core lacks the headers that carry it */
	RD_BUILD_ID_NONE,	   /* neither the core's headers nor the file have one */
	RD_BUILD_ID_MISMATCH,	   /* another build: the module is not scanned */
};

struct rd_module {
	char *path;	     /* as /proc/PID/maps names it */
	uint64_t start, end; /* lowest and highest mapped address of this file */
	uint64_t bias;	     /* runtime address = libelfscan address + bias */
	dev_t dev;
	ino_t ino;
	struct elfscan *es; /* NULL when the file could not be scanned; err says why */
	char *err;
	void *image;		 /* the bytes es reads, for a module with no file (the vDSO) */
	struct rd_mapping first; /* the mapping it starts with (path: path) */
	char *file; /* a core: the file read for it, when not path (--sysroot, --exe) */
	enum rd_build_id_check build_id;
};

struct rd_modules {
	pid_t pid;
	struct rd_module *v;
	size_t n, cap;
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
/* Add a mapping: to the module of the same file it extends, or as a new module (not scanned:
 * es NULL). 0 or -ENOMEM. */
int rd_modules_add_mapping(struct rd_modules *mods, const struct rd_mapping *m);
/* Sort the modules by address, as rd_modules_find() needs. */
void rd_modules_sort(struct rd_modules *mods);
/* Mark a module not scanned, with why (printf-style): its file, if open, is closed. */
__attribute__((format(printf, 2, 3))) void rd_module_fail(struct rd_module *mod, const char *fmt,
							  ...);
/* The load bias that puts file offset m->offset of es at m->start; -ENOENT when no PT_LOAD
 * segment maps that offset. */
int rd_module_bias(const struct elfscan *es, const struct rd_mapping *m, uint64_t *bias);
/* The module mapping a runtime address, NULL when none. */
const struct rd_module *rd_modules_find(const struct rd_modules *mods, uint64_t addr);
/* The critical section containing a runtime address; *mod set when found. */
const struct elfscan_cs *rd_modules_lookup(const struct rd_modules *mods, uint64_t addr,
					   const struct rd_module **mod);

#endif
