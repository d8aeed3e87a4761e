// SPDX-License-Identifier: GPL-2.0-only
/* Temporary software breakpoints: plant, remove, and restore everything on any exit path. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "arch/arch.h"
#include "step/breakpoint.h"

#define BP_MAX 256
#define HIST_MAX 32768 /* a power of two; kept at most three quarters full */

struct bp {
	uint64_t addr;
	uint8_t orig[RD_ARCH_BP_LEN];
	bool planted;
};

/* Fixed arrays: the signal handler path must not allocate. */
static struct bp bps[BP_MAX];
static size_t nbps;
static uint64_t hist[HIST_MAX];
static size_t nhist;
static pid_t bp_pid;
static int bp_memfd = -1;
static bool (*file_bytes)(void *ctx, uint64_t addr, uint8_t *buf);
static void *file_ctx;

void rd_bp_attach(pid_t pid, int memfd)
{
	bp_pid = pid;
	bp_memfd = memfd;
}

void rd_bp_file_bytes(bool (*fn)(void *ctx, uint64_t addr, uint8_t *buf), void *ctx)
{
	file_bytes = fn;
	file_ctx = ctx;
}

static struct bp *find(uint64_t addr)
{
	for (size_t i = 0; i < nbps; i++)
		if (bps[i].planted && bps[i].addr == addr)
			return &bps[i];
	return NULL;
}

/* Every address that ever held a breakpoint, in an open-addressed set (stored as addr + 1). */
static uint64_t *hist_slot(uint64_t addr)
{
	size_t i = (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 49) & (HIST_MAX - 1);

	while (hist[i] && hist[i] != addr + 1)
		i = (i + 1) & (HIST_MAX - 1);
	return &hist[i];
}

static void remember(uint64_t addr)
{
	uint64_t *slot = hist_slot(addr);

	if (!*slot && nhist < HIST_MAX / 4 * 3) {
		*slot = addr + 1;
		nhist++;
	}
}

int rd_bp_plant(uint64_t addr)
{
	return rd_bp_plant_over(addr, NULL);
}

int rd_bp_plant_over(uint64_t addr, const uint8_t *orig)
{
	struct bp *b;
	ssize_t n;

	if (find(addr))
		return 0;
	for (b = bps; b < bps + nbps && b->planted; b++)
		;
	if (b == bps + BP_MAX)
		return -ENOSPC;
	if (orig) {
		memcpy(b->orig, orig, RD_ARCH_BP_LEN);
	} else {
		n = pread(bp_memfd, b->orig, RD_ARCH_BP_LEN, (off_t)addr);
		if (n != RD_ARCH_BP_LEN)
			return n < 0 ? -errno : -EFAULT;
	}
	/* A breakpoint that is not ours already there: a uprobe, which the kernel puts into
	 * every process that maps the probed file. Put back after the probe is gone, it would
	 * be a trap the program dies of: the file's bytes are the instruction. */
	if (rd_arch_is_bp(b->orig) && file_bytes) {
		uint8_t f[RD_ARCH_BP_LEN];

		if (file_bytes(file_ctx, addr, f))
			memcpy(b->orig, f, RD_ARCH_BP_LEN);
	}
	b->addr = addr;
	remember(addr);
	n = pwrite(bp_memfd, rd_arch_bp_insn, RD_ARCH_BP_LEN, (off_t)addr);
	if (n != RD_ARCH_BP_LEN)
		return n < 0 ? -errno : -EFAULT;
	b->planted = true;
	if (b == bps + nbps)
		nbps++;
	return 0;
}

static int unplant(struct bp *b)
{
	ssize_t n = pwrite(bp_memfd, b->orig, RD_ARCH_BP_LEN, (off_t)b->addr);

	b->planted = false;
	while (nbps && !bps[nbps - 1].planted)
		nbps--;
	return n == RD_ARCH_BP_LEN ? 0 : -EFAULT;
}

int rd_bp_remove(uint64_t addr)
{
	struct bp *b = find(addr);

	return b ? unplant(b) : -ENOENT;
}

int rd_bp_remove_all(void)
{
	int failed = 0;

	for (size_t i = nbps; i-- > 0;)
		if (bps[i].planted && unplant(&bps[i]) < 0)
			failed++;
	return failed;
}

int rd_bp_remove_unless(bool (*keep)(uint64_t addr, void *arg), void *arg)
{
	int failed = 0;

	for (size_t i = nbps; i-- > 0;)
		if (bps[i].planted && !keep(bps[i].addr, arg) && unplant(&bps[i]) < 0)
			failed++;
	return failed;
}

bool rd_bp_planted(uint64_t addr)
{
	return find(addr) != NULL;
}

size_t rd_bp_count(void)
{
	size_t n = 0;

	for (size_t i = 0; i < nbps; i++)
		n += bps[i].planted;
	return n;
}

bool rd_bp_was_planted(uint64_t addr)
{
	return *hist_slot(addr) != 0;
}

void rd_bp_unpatch(uint64_t addr, void *buf, size_t len)
{
	uint8_t *p = buf;

	for (size_t i = 0; i < nbps; i++) {
		const struct bp *b = &bps[i];

		for (size_t k = 0; b->planted && k < RD_ARCH_BP_LEN; k++)
			if (b->addr + k >= addr && b->addr + k < addr + len)
				p[b->addr + k - addr] = b->orig[k];
	}
}

int rd_bp_restore_in(pid_t pid)
{
	char path[64];
	int fd, failed = 0;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (size_t i = 0; i < nbps; i++)
		if (bps[i].planted &&
		    pwrite(fd, bps[i].orig, RD_ARCH_BP_LEN, (off_t)bps[i].addr) != RD_ARCH_BP_LEN)
			failed++;
	close(fd);
	return failed ? -EFAULT : 0;
}

void rd_bp_forget(void)
{
	nbps = 0;
	nhist = 0;
	memset(hist, 0, sizeof(hist));
}
