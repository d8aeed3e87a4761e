// SPDX-License-Identifier: GPL-2.0-only
/*
 * A core file, as the kernel, gdb's gcore or systemd-coredump (zstd) write it: its threads
 * (NT_PRSTATUS and the register notes after each), the signal (NT_SIGINFO), the mapped files
 * (NT_FILE), the auxiliary vector (NT_AUXV) and the memory its PT_LOAD segments hold.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "common.h"
#include "core/core.h"

struct rd_core_seg {
	uint64_t vaddr, memsz, offset, filesz;
};

#ifndef NT_SIGINFO
#define NT_SIGINFO 0x53494749
#endif
#ifndef NT_FILE
#define NT_FILE 0x46494c45
#endif
#ifndef NT_ARM_TLS
#define NT_ARM_TLS 0x401
#endif

/* Where a machine's struct elf_prstatus keeps what is read here (64-bit layouts). */
struct prstatus_layout {
	uint16_t machine;
	size_t pid;   /* pr_pid */
	size_t regs;  /* pr_reg */
	size_t nregs; /* words of pr_reg */
	size_t pc;    /* index of the instruction pointer in pr_reg */
	ssize_t tp;   /* index of the thread pointer in pr_reg, -1: a note of its own */
};

static const struct prstatus_layout layouts[] = {
    /* user_regs_struct: rip is 16, fs_base 21 of 27 */
    {EM_X86_64, 32, 112, 27, 16, 21},
    /* user_pt_regs: x0-x30, sp, pc, pstate; tpidr_el0 in NT_ARM_TLS */
    {EM_AARCH64, 32, 112, 34, 32, -1},
};

static const struct prstatus_layout *layout_of(uint16_t machine)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].machine == machine)
			return &layouts[i];
	return NULL;
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* --- compressed cores ------------------------------------------------------------------ */

/* Decompress a zstd stream into an unlinked file of TMPDIR; the fd, or -errno. */
static int unzstd(int in)
{
	const char *dir = getenv("TMPDIR");
	size_t isz = ZSTD_DStreamInSize(), osz = ZSTD_DStreamOutSize();
	void *ibuf = malloc(isz), *obuf = malloc(osz);
	ZSTD_DStream *ds = ZSTD_createDStream();
	size_t last = 0;
	char tmpl[4096];
	ssize_t n;
	int out = -1, err = 0;

	snprintf(tmpl, sizeof(tmpl), "%s/rseqdbg-core.XXXXXX", dir && *dir ? dir : "/tmp");
	if (!ibuf || !obuf || !ds) {
		err = -ENOMEM;
		goto out;
	}
	out = mkostemp(tmpl, O_CLOEXEC);
	if (out < 0) {
		err = -errno;
		rd_seterr("cannot make a file to decompress into (%s): %s", tmpl, strerror(errno));
		goto out;
	}
	unlink(tmpl);
	ZSTD_initDStream(ds);
	while ((n = read(in, ibuf, isz)) > 0) {
		ZSTD_inBuffer ib = {ibuf, (size_t)n, 0};

		while (ib.pos < ib.size) {
			ZSTD_outBuffer ob = {obuf, osz, 0};

			last = ZSTD_decompressStream(ds, &ob, &ib);
			if (ZSTD_isError(last)) {
				rd_seterr("zstd: %s", ZSTD_getErrorName(last));
				err = -EINVAL;
				goto out;
			}
			if (write(out, obuf, ob.pos) != (ssize_t)ob.pos) {
				err = errno ? -errno : -EIO;
				rd_seterr("cannot write the decompressed core: %s", strerror(-err));
				goto out;
			}
		}
	}
	if (n < 0) {
		err = -errno;
		rd_seterr("%s", strerror(errno));
	} else if (last) {
		err = -EINVAL;
		rd_seterr("zstd: the compressed core is truncated");
	}
out:
	ZSTD_freeDStream(ds);
	free(ibuf);
	free(obuf);
	if (err && out >= 0) {
		close(out);
		out = -1;
	}
	return err ? err : out;
}

/* The formats a core may be stored in that are not read here: what to decompress it with. */
static const char *other_compression(const unsigned char *m, size_t n)
{
	if (n >= 6 && !memcmp(m,
			      "\xfd"
			      "7zXZ\0",
			      6))
		return "xz (decompress it with 'xz -dk' or 'coredumpctl dump')";
	if (n >= 4 && !memcmp(m, "\x04\x22\x4d\x18", 4))
		return "lz4 (decompress it with 'lz4 -d' or 'coredumpctl dump')";
	if (n >= 2 && !memcmp(m, "\x1f\x8b", 2))
		return "gzip (decompress it with 'gzip -dk')";
	if (n >= 3 && !memcmp(m, "BZh", 3))
		return "bzip2 (decompress it with 'bzip2 -dk')";
	return NULL;
}

/* --- notes ----------------------------------------------------------------------------- */

static int add_thread(struct rd_core *c, const struct prstatus_layout *l, const unsigned char *d,
		      size_t len)
{
	struct rd_core_thread *v, *t;

	if (len < l->regs + l->nregs * 8)
		return 0; /* a short note: not a thread to show */
	v = realloc(c->threads, (c->nthreads + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	c->threads = v;
	t = &v[c->nthreads++];
	memset(t, 0, sizeof(*t));
	t->tid = (pid_t)get32(d + l->pid);
	t->cursig = (int)(d[12] | d[13] << 8); /* pr_cursig, after si_signo, si_code, si_errno */
	t->ip = get64(d + l->regs + l->pc * 8);
	if (l->tp >= 0) {
		t->tp = get64(d + l->regs + (size_t)l->tp * 8);
		t->have_tp = true;
	}
	return 0;
}

static bool signal_is_fault(int signo, int code)
{
	/* The CPU raised it at the instruction (si_code > 0: from the kernel, not kill()) */
	return (signo == SIGSEGV || signo == SIGBUS || signo == SIGILL || signo == SIGFPE ||
		signo == SIGTRAP) &&
	       code > 0;
}

static void read_siginfo(struct rd_core *c, const unsigned char *d, size_t len)
{
	struct rd_core_signal *s = &c->signal;

	/* The first thread's: the one that took the signal that dumped the core. */
	if (c->have_signal || c->nthreads != 1 || len < 24)
		return;
	s->tid = c->threads[0].tid;
	s->signo = (int)get32(d);
	s->code = (int)get32(d + 8);
	s->fault = signal_is_fault(s->signo, s->code);
	if (s->fault) {
		s->addr = get64(d + 16);
		s->have_addr = true;
	}
	c->have_signal = s->signo != 0;
}

/* NT_FILE: count, page size, count x {start, end, offset in pages}, then count names. */
static int read_files(struct rd_core *c, const unsigned char *d, size_t len)
{
	uint64_t count, page;
	size_t names, nlen;
	const char *p;

	if (c->have_files || len < 16)
		return 0;
	count = get64(d);
	page = get64(d + 8);
	if (count > (len - 16) / 24)
		return 0;
	names = 16 + count * 24;
	nlen = len - names;
	c->names = malloc(nlen + 1);
	c->files = calloc(count ? count : 1, sizeof(*c->files));
	if (!c->names || !c->files)
		return -ENOMEM;
	memcpy(c->names, d + names, nlen);
	c->names[nlen] = '\0';
	p = c->names;
	for (uint64_t i = 0; i < count && p < c->names + nlen; i++) {
		struct rd_mapping *m = &c->files[c->nfiles++];

		m->start = get64(d + 16 + i * 24);
		m->end = get64(d + 16 + i * 24 + 8);
		m->offset = get64(d + 16 + i * 24 + 16) * page;
		m->path = p;
		p += strlen(p) + 1;
	}
	c->have_files = true;
	return 0;
}

static void read_auxv(struct rd_core *c, const unsigned char *d, size_t len)
{
	for (size_t i = 0; i + 16 <= len; i += 16) {
		uint64_t type = get64(d + i), val = get64(d + i + 8);

		if (type == AT_PHDR)
			c->at_phdr = val;
		else if (type == AT_ENTRY)
			c->at_entry = val;
		else if (type == AT_NULL)
			break;
	}
}

static int read_notes(struct rd_core *c, Elf *elf, const GElf_Phdr *ph)
{
	const struct prstatus_layout *l = layout_of(c->machine);
	Elf_Data *data = elf_getdata_rawchunk(elf, (int64_t)ph->p_offset, ph->p_filesz, ELF_T_NHDR);
	size_t off = 0, noff, doff;
	GElf_Nhdr nh;
	int err = 0;

	if (!data)
		return 0;
	while (!err && (off = gelf_getnote(data, off, &nh, &noff, &doff)) > 0) {
		const char *name = (const char *)data->d_buf + noff;
		const unsigned char *d = (const unsigned char *)data->d_buf + doff;

		if (nh.n_namesz == 5 && !memcmp(name, "CORE", 5)) {
			switch (nh.n_type) {
			case NT_PRSTATUS:
				err = add_thread(c, l, d, nh.n_descsz);
				break;
			case NT_PRPSINFO:
				if (nh.n_descsz >= 56 && !c->comm[0])
					memcpy(c->comm, d + 40, 16);
				if (nh.n_descsz >= 28 && !c->pid)
					c->pid = (pid_t)get32(d + 24);
				break;
			case NT_SIGINFO:
				read_siginfo(c, d, nh.n_descsz);
				break;
			case NT_FILE:
				err = read_files(c, d, nh.n_descsz);
				break;
			case NT_AUXV:
				read_auxv(c, d, nh.n_descsz);
				break;
			}
		} else if (nh.n_namesz == 6 && !memcmp(name, "LINUX", 6) &&
			   nh.n_type == NT_ARM_TLS && nh.n_descsz >= 8 && c->nthreads) {
			/* After the NT_PRSTATUS of the thread it belongs to */
			c->threads[c->nthreads - 1].tp = get64(d);
			c->threads[c->nthreads - 1].have_tp = true;
		}
	}
	if (err)
		rd_seterr("out of memory");
	return err;
}

static int cmp_seg(const void *a, const void *b)
{
	const struct rd_core_seg *x = a, *y = b;

	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

static int cmp_file(const void *a, const void *b)
{
	const struct rd_mapping *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int read_core(struct rd_core *c, Elf *elf)
{
	struct stat st;
	GElf_Ehdr eh;
	size_t phnum;
	int err;

	if (!gelf_getehdr(elf, &eh) || elf_kind(elf) != ELF_K_ELF) {
		rd_seterr("not an ELF file, nor a core compressed with zstd");
		return -EINVAL;
	}
	if (eh.e_type != ET_CORE) {
		rd_seterr("not a core file (an ELF file of type %s): 'rseqdbg scan FILE' reads "
			  "its tables",
			  eh.e_type == ET_EXEC	? "EXEC"
			  : eh.e_type == ET_DYN ? "DYN"
			  : eh.e_type == ET_REL ? "REL"
						: "other");
		return -EINVAL;
	}
	c->machine = eh.e_machine;
	if (!layout_of(c->machine) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB) {
		rd_seterr("a core of machine %u: the threads of x86_64 and aarch64 cores are read",
			  eh.e_machine);
		return -ENOTSUP;
	}
	if (elf_getphdrnum(elf, &phnum)) {
		rd_seterr("no program headers: %s", elf_errmsg(-1));
		return -EINVAL;
	}
	c->segs = calloc(phnum ? phnum : 1, sizeof(*c->segs));
	if (!c->segs) {
		rd_seterr("out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph))
			continue;
		if (ph.p_type == PT_NOTE) {
			err = read_notes(c, elf, &ph);
			if (err)
				return err;
		} else if (ph.p_type == PT_LOAD) {
			c->segs[c->nsegs++] =
			    (struct rd_core_seg){ph.p_vaddr, ph.p_memsz, ph.p_offset, ph.p_filesz};
		}
	}
	if (!c->nthreads) {
		rd_seterr("no thread in the core (no NT_PRSTATUS note)");
		return -EINVAL;
	}
	if (!c->pid)
		c->pid = c->threads[0].tid;
	if (!c->have_signal && c->threads[0].cursig) {
		c->signal.tid = c->threads[0].tid;
		c->signal.signo = c->threads[0].cursig;
		c->have_signal = true;
	}
	/* A core cut short (a full disk, a size limit) keeps the segments it has */
	if (!fstat(c->fd, &st)) {
		for (size_t i = 0; i < c->nsegs; i++) {
			struct rd_core_seg *s = &c->segs[i];
			uint64_t size = (uint64_t)st.st_size;

			if (s->offset + s->filesz <= size)
				continue;
			c->truncated = true;
			s->filesz = s->offset < size ? size - s->offset : 0;
		}
	}
	qsort(c->segs, c->nsegs, sizeof(*c->segs), cmp_seg);
	if (c->nfiles)
		qsort(c->files, c->nfiles, sizeof(*c->files), cmp_file);
	return 0;
}

int rd_core_open(const char *path, struct rd_core **res)
{
	struct rd_core *c = calloc(1, sizeof(*c));
	unsigned char magic[8] = {0};
	const char *other;
	ssize_t n;
	Elf *elf;
	int err;

	*res = NULL;
	if (!c) {
		rd_seterr("out of memory");
		return -ENOMEM;
	}
	c->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (c->fd < 0) {
		err = -errno;
		rd_seterr("%s", strerror(errno));
		goto fail;
	}
	n = pread(c->fd, magic, sizeof(magic), 0);
	if (n >= 4 && !memcmp(magic, "\x28\xb5\x2f\xfd", 4)) {
		int fd = unzstd(c->fd);

		if (fd < 0) {
			err = fd;
			goto fail;
		}
		close(c->fd);
		c->fd = fd;
		c->compression = "zstd";
	} else if ((other = other_compression(magic, n > 0 ? (size_t)n : 0))) {
		rd_seterr("a core compressed with %s", other);
		err = -ENOTSUP;
		goto fail;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(c->fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		rd_seterr("not an ELF file, nor a core compressed with zstd");
		err = -EINVAL;
		goto fail;
	}
	c->elf = elf;
	c->path = strdup(path);
	if (!c->path) {
		rd_seterr("out of memory");
		err = -ENOMEM;
		goto fail;
	}
	err = read_core(c, elf);
	if (err)
		goto fail;
	*res = c;
	return 0;
fail:
	rd_core_close(c);
	return err;
}

void rd_core_close(struct rd_core *c)
{
	if (!c)
		return;
	if (c->elf)
		elf_end(c->elf);
	if (c->fd >= 0)
		close(c->fd);
	free(c->threads);
	free(c->segs);
	free(c->files);
	free(c->names);
	free(c->path);
	free(c);
}

/* The segment holding addr, NULL when none. */
static const struct rd_core_seg *seg_at(const struct rd_core *c, uint64_t addr)
{
	size_t lo = 0, hi = c->nsegs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->segs[mid].vaddr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && addr - c->segs[lo - 1].vaddr < c->segs[lo - 1].memsz)
		return &c->segs[lo - 1];
	return NULL;
}

int rd_core_read(const struct rd_core *c, uint64_t addr, void *buf, size_t len)
{
	unsigned char *p = buf;

	while (len) {
		const struct rd_core_seg *s = seg_at(c, addr);
		uint64_t in, n;
		ssize_t got;

		if (!s)
			return -EFAULT;
		in = addr - s->vaddr;
		if (in >= s->filesz)
			return -ENODATA; /* the rest of the mapping was left out */
		n = s->filesz - in < len ? s->filesz - in : len;
		got = pread(c->fd, p, n, (off_t)(s->offset + in));
		if (got != (ssize_t)n)
			return -EIO;
		p += n;
		addr += n;
		len -= n;
	}
	return 0;
}

/* The build ID in a note segment's bytes (aligned as the segment says). */
static bool note_build_id(const unsigned char *d, size_t len, size_t align, char *hex, size_t hlen)
{
	size_t a = align == 8 ? 8 : 4;

	for (size_t off = 0; off + 12 <= len;) {
		uint32_t namesz = get32(d + off), descsz = get32(d + off + 4);
		uint32_t type = get32(d + off + 8);
		size_t name = off + 12, desc = name + ((namesz + a - 1) & ~(a - 1));

		if (desc > len || descsz > len - desc)
			break;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(d + name, "GNU", 4) &&
		    descsz && descsz * 2 < hlen) {
			for (uint32_t i = 0; i < descsz; i++)
				snprintf(hex + 2 * i, 3, "%02x", d[desc + i]);
			return true;
		}
		off = desc + ((descsz + a - 1) & ~(a - 1));
	}
	return false;
}

int rd_core_build_id(const struct rd_core *c, uint64_t start, char *hex, size_t len)
{
	unsigned char eh[64], ph[56], note[4096];
	uint64_t phoff;
	uint16_t phnum;
	int err;

	err = rd_core_read(c, start, eh, sizeof(eh));
	if (err)
		return err == -EFAULT ? -ENODATA : err;
	if (memcmp(eh, ELFMAG, SELFMAG) || eh[EI_CLASS] != ELFCLASS64)
		return -ENOENT;
	memcpy(&phoff, eh + 32, 8);
	memcpy(&phnum, eh + 56, 2);
	for (uint16_t i = 0; i < phnum && i < 64; i++) {
		uint32_t type;
		uint64_t off, filesz, align;

		err = rd_core_read(c, start + phoff + i * 56u, ph, sizeof(ph));
		if (err)
			return err == -EFAULT ? -ENODATA : err;
		memcpy(&type, ph, 4);
		memcpy(&off, ph + 8, 8);
		memcpy(&filesz, ph + 32, 8);
		memcpy(&align, ph + 48, 8);
		if (type != PT_NOTE)
			continue;
		/* The notes are in the first page, mapped from file offset 0 at start. */
		if (filesz > sizeof(note) || rd_core_read(c, start + off, note, filesz))
			continue;
		if (note_build_id(note, filesz, align, hex, len))
			return 0;
	}
	return -ENOENT;
}

const char *rd_signal_name(int signo)
{
	static char buf[32];
	const char *abbrev = sigabbrev_np(signo);

	if (abbrev) {
		snprintf(buf, sizeof(buf), "SIG%s", abbrev);
		return buf;
	}
	snprintf(buf, sizeof(buf), "signal %d", signo);
	return buf;
}
