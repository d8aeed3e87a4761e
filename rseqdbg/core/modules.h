/* SPDX-License-Identifier: GPL-2.0-only */
/* The modules a core maps, their files checked against it, and its memory read through them. */
#ifndef RSEQDBG_CORE_MODULES_H
#define RSEQDBG_CORE_MODULES_H

#include "core/core.h"
#include "proc/maps.h"

/* The ELF files of the core's NT_FILE note, grouped into modules as rd_modules_load() does
 * for a live process, each read from sysroot + its path (exe for the program's own, when not
 * NULL) and scanned once its build ID matches the one the core's memory holds. A module whose
 * file is missing or another build has es NULL and err saying so. 0 or -errno. */
int rd_core_modules(const struct rd_core *c, const struct elfscan_opts *opts, const char *exe,
		    const char *sysroot, struct rd_modules *mods);
/* The value of the symbol name in a module's symbol tables (.dynsym, then .symtab): its
 * address in the file. -ENOENT when the file does not define it. */
int rd_module_symbol(const struct rd_module *m, const char *name, uint64_t *value);

#endif
