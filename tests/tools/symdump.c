// SPDX-License-Identifier: GPL-2.0-only
/*
 * symdump: print every symbol of an ELF file, one per line, read with libelf alone so tests
 * can check the scanner against an independent reader:
 *
 *	VALUE SIZE TYPE SHNDX NAME	(VALUE and SIZE in hex, TYPE FUNC/OBJECT/NOTYPE/...)
 *
 * .symtab is used when present, else .dynsym. Exit 0, or 2 with a message on error.
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *type_name(unsigned char t)
{
	switch (t) {
	case STT_NOTYPE:
		return "NOTYPE";
	case STT_OBJECT:
		return "OBJECT";
	case STT_FUNC:
		return "FUNC";
	case STT_SECTION:
		return "SECTION";
	case STT_FILE:
		return "FILE";
	case STT_TLS:
		return "TLS";
	case STT_GNU_IFUNC:
		return "IFUNC";
	default:
		return "OTHER";
	}
}

static Elf_Scn *find_symtab(Elf *elf, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL, *dynsym = NULL;
	GElf_Shdr dynshdr;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, shdr))
			continue;
		if (shdr->sh_type == SHT_SYMTAB)
			return scn;
		if (shdr->sh_type == SHT_DYNSYM) {
			dynsym = scn;
			dynshdr = *shdr;
		}
	}
	if (dynsym)
		*shdr = dynshdr;
	return dynsym;
}

int main(int argc, char **argv)
{
	Elf *elf = NULL;
	Elf_Scn *scn;
	Elf_Data *data;
	GElf_Shdr shdr;
	size_t i, n;
	int fd, ret = 2;

	if (argc != 2) {
		fprintf(stderr, "usage: symdump FILE\n");
		return 2;
	}
	elf_version(EV_CURRENT);
	fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		perror(argv[1]);
		return 2;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		fprintf(stderr, "symdump: %s: not an ELF file\n", argv[1]);
		goto out;
	}
	scn = find_symtab(elf, &shdr);
	if (!scn) {
		fprintf(stderr, "symdump: %s: no symbol table\n", argv[1]);
		goto out;
	}
	data = elf_getdata(scn, NULL);
	if (!data || !shdr.sh_entsize) {
		fprintf(stderr, "symdump: %s: unreadable symbol table: %s\n", argv[1],
			elf_errmsg(-1));
		goto out;
	}
	n = shdr.sh_size / shdr.sh_entsize;
	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(data, (int)i, &sym))
			break;
		name = elf_strptr(elf, shdr.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		printf("%llx %llx %s %u %s\n", (unsigned long long)sym.st_value,
		       (unsigned long long)sym.st_size, type_name(GELF_ST_TYPE(sym.st_info)),
		       sym.st_shndx, name);
	}
	ret = 0;
out:
	elf_end(elf);
	close(fd);
	return ret;
}
