// SPDX-License-Identifier: GPL-2.0-only
/* The modules a core maps: its NT_FILE note grouped into modules, each file read from the
 * local system (or --sysroot, or --exe) after its build ID is checked against the core. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "core/modules.h"

/* Whether the file is ELF: 1 yes, 0 no, -errno when it cannot be opened. */
static int file_is_elf(const char *path)
{
	unsigned char magic[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC), elf;

	if (fd < 0)
		return -errno;
	elf = pread(fd, magic, sizeof(magic), 0) == sizeof(magic) && !memcmp(magic, ELFMAG, 4);
	close(fd);
	return elf;
}

/* The program's own module: the one holding its program headers or entry point. */
static bool is_program(const struct rd_core *c, const struct rd_module *m)
{
	uint64_t a = c->at_phdr ? c->at_phdr : c->at_entry;

	return a && m->start <= a && a < m->end;
}

/* Open and scan the file of a module; false when it is not an ELF file (not a module). */
static bool module_open(const struct rd_core *c, const struct elfscan_opts *opts, const char *exe,
			const char *sysroot, struct rd_module *mod)
{
	static const char deleted[] = " (deleted)";
	char path[4096], bid[128];
	const char *fbid;
	size_t plen;
	int elf, err;

	if (exe && is_program(c, mod))
		snprintf(path, sizeof(path), "%s", exe);
	else
		snprintf(path, sizeof(path), "%s%s", sysroot ? sysroot : "", mod->path);
	/* The kernel names a file removed since it was mapped "PATH (deleted)". */
	plen = strlen(path);
	if (plen > sizeof(deleted) - 1 && !strcmp(path + plen - (sizeof(deleted) - 1), deleted) &&
	    file_is_elf(path) < 0)
		path[plen - (sizeof(deleted) - 1)] = '\0';
	/* The headers are at the module's start when its first mapping is the file's start */
	err = mod->first.offset ? -ENODATA : rd_core_build_id(c, mod->start, bid, sizeof(bid));
	elf = file_is_elf(path);
	if (!elf)
		return false;
	if (elf < 0) {
		unsigned char magic[4];

		/* A file that is gone is a module unless the core shows it was not ELF. */
		if (!mod->first.offset && !rd_core_read(c, mod->start, magic, sizeof(magic)) &&
		    memcmp(magic, ELFMAG, SELFMAG))
			return false;
		rd_module_fail(mod, "%s: %s%s", path, strerror(-elf),
			       sysroot || exe ? ""
					      : " (--sysroot DIR: where the core's files are)");
		return true;
	}
	if (strcmp(path, mod->path)) {
		mod->file = strdup(path);
		if (!mod->file) {
			rd_module_fail(mod, "out of memory");
			return true;
		}
	}
	if (elfscan_open(path, opts, &mod->es)) {
		mod->es = NULL;
		rd_module_fail(mod, "%s: %s", path, elfscan_errmsg());
		return true;
	}
	fbid = elfscan_build_id(mod->es);
	if (!err && fbid && strcmp(fbid, bid)) {
		mod->build_id = RD_BUILD_ID_MISMATCH;
		rd_module_fail(mod, "%s is another build: build ID %s, the core's %s", path, fbid,
			       bid);
		return true;
	}
	if (!err && !fbid) {
		mod->build_id = RD_BUILD_ID_MISMATCH;
		rd_module_fail(mod, "%s has no build ID, the core's has %s: another build", path,
			       bid);
		return true;
	}
	if (err == -ENOENT && fbid) {
		mod->build_id = RD_BUILD_ID_MISMATCH;
		rd_module_fail(mod, "%s has build ID %s, the core's has none: another build", path,
			       fbid);
		return true;
	}
	mod->build_id = !err		 ? RD_BUILD_ID_MATCH
			: err == -ENOENT ? RD_BUILD_ID_NONE
					 : RD_BUILD_ID_NOT_IN_CORE;
	if (rd_module_bias(mod->es, &mod->first, &mod->bias))
		rd_module_fail(mod, "%s: no PT_LOAD segment maps file offset %#" PRIx64, path,
			       mod->first.offset);
	return true;
}

int rd_core_modules(const struct rd_core *c, const struct elfscan_opts *opts, const char *exe,
		    const char *sysroot, struct rd_modules *mods)
{
	size_t kept = 0;
	int err;

	memset(mods, 0, sizeof(*mods));
	mods->pid = c->pid;
	for (size_t i = 0; i < c->nfiles; i++) {
		err = rd_modules_add_mapping(mods, &c->files[i]);
		if (err) {
			rd_modules_free(mods);
			return err;
		}
	}
	for (size_t i = 0; i < mods->n; i++) {
		struct rd_module *mod = &mods->v[i];

		if (module_open(c, opts, exe, sysroot, mod)) {
			mods->v[kept++] = *mod;
		} else {
			free(mod->path);
			free(mod->file);
		}
	}
	mods->n = kept;
	rd_modules_sort(mods);
	for (size_t i = 0; exe && i < mods->n; i++)
		if (is_program(c, &mods->v[i]))
			return 0;
	if (exe)
		rd_warn("--exe %s: the core does not say where the program was mapped (no "
			"NT_AUXV note): not used",
			exe);
	return 0;
}

static int find_in(Elf *elf, GElf_Word type, const char *name, uint64_t *value)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 1; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *s;

			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
				continue;
			s = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (s && !strcmp(s, name)) {
				*value = sym.st_value;
				return 0;
			}
		}
	}
	return -ENOENT;
}

int rd_module_symbol(const struct rd_module *m, const char *name, uint64_t *value)
{
	const char *path = m->file ? m->file : m->path;
	int fd, err;
	Elf *elf;

	if (!m->es)
		return -ENOENT;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	err = elf ? find_in(elf, SHT_DYNSYM, name, value) : -EINVAL;
	if (err == -ENOENT)
		err = find_in(elf, SHT_SYMTAB, name, value);
	elf_end(elf);
	close(fd);
	return err;
}
