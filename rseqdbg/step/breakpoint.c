// SPDX-License-Identifier: GPL-2.0-only
/* Temporary breakpoints: plant, remove, and restore everything on any exit path. Software
 * ones, but where another tool's uprobe sits, a hardware one in the stepped thread. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch/arch.h"
#include "step/breakpoint.h"

#define BP_MAX 256
#define HIST_MAX 32768 /* a power of two; kept at most three quarters full */

struct bp {
	uint64_t addr;
	uint8_t orig[RD_ARCH_BP_LEN];
	bool planted;
	int hw; /* the debug register slot of hw_tid that holds it; -1: software */
};

#define HW_MAX 16

/* Fixed arrays: the signal handler path must not allocate. */
static struct bp bps[BP_MAX];
static size_t nbps;
static uint64_t hist[HIST_MAX];
static size_t nhist;
static pid_t bp_pid;
static int bp_memfd = -1;
static bool (*file_bytes)(void *ctx, uint64_t addr, uint8_t *buf);
static void *file_ctx;
static pid_t hw_tid;
static int hw_nslots = -1; /* not asked yet */
static bool hw_used[HW_MAX];
static unsigned long nblind;

void rd_bp_attach(pid_t pid, int memfd)
{
	bp_pid = pid;
	bp_memfd = memfd;
	hw_tid = pid; /* until the stepped thread is known: the one a launch or exec leaves */
}

void rd_bp_file_bytes(bool (*fn)(void *ctx, uint64_t addr, uint8_t *buf), void *ctx)
{
	file_bytes = fn;
	file_ctx = ctx;
}

/* A free debug register slot of hw_tid, set to addr; -1 when none is left. */
static int hw_take(uint64_t addr)
{
	if (!hw_tid)
		return -1;
	if (hw_nslots < 0)
		hw_nslots = rd_arch_hwbp_slots(hw_tid);
	for (int i = 0; i < hw_nslots && i < HW_MAX; i++)
		if (!hw_used[i] && rd_arch_hwbp_set(hw_tid, i, addr) == 0) {
			hw_used[i] = true;
			return i;
		}
	return -1;
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
	struct bp *b;
	ssize_t n;

	if (find(addr))
		return 0;
	for (b = bps; b < bps + nbps && b->planted; b++)
		;
	if (b == bps + BP_MAX)
		return -ENOSPC;
	/* What memory holds (it may differ from the file: generated or rewritten code). A
	 * breakpoint that is not ours already there is a uprobe, which the kernel puts into every
	 * process that maps the probed file. Put back after the probe is gone, it would be a trap
	 * the program dies of: the file's bytes are the instruction. And the kernel takes any trap
	 * there for the uprobe's: a breakpoint instruction of ours would never stop the thread, a
	 * hardware breakpoint does. */
	n = pread(bp_memfd, b->orig, RD_ARCH_BP_LEN, (off_t)addr);
	if (n != RD_ARCH_BP_LEN)
		return n < 0 ? -errno : -EFAULT;
	b->hw = -1;
	if (rd_arch_is_bp(b->orig) && file_bytes) {
		uint8_t f[RD_ARCH_BP_LEN];

		if (file_bytes(file_ctx, addr, f) && !rd_arch_is_bp(f)) {
			memcpy(b->orig, f, RD_ARCH_BP_LEN);
			b->hw = hw_take(addr);
			nblind += b->hw < 0;
		}
	}
	b->addr = addr;
	remember(addr);
	if (b->hw >= 0) {
		b->planted = true;
		if (b == bps + nbps)
			nbps++;
		return 0;
	}
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
	ssize_t n = RD_ARCH_BP_LEN;

	if (b->hw >= 0) {
		/* A running thread's debug registers cannot be written: it stays planted, for
		 * the removal once every thread is stopped. */
		if (rd_arch_hwbp_clear(hw_tid, b->hw) < 0 &&
		    syscall(SYS_tgkill, bp_pid, hw_tid, 0) == 0)
			return -EBUSY;
		hw_used[b->hw] = false;
	} else {
		n = pwrite(bp_memfd, b->orig, RD_ARCH_BP_LEN, (off_t)b->addr);
	}
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
	/* Another tool's uprobes: the instruction is the file's. */
	for (size_t i = (RD_ARCH_BP_LEN - addr % RD_ARCH_BP_LEN) % RD_ARCH_BP_LEN;
	     file_bytes && i + RD_ARCH_BP_LEN <= len; i += RD_ARCH_BP_LEN) {
		uint8_t f[RD_ARCH_BP_LEN];

		if (rd_arch_is_bp(p + i) && file_bytes(file_ctx, addr + i, f) && !rd_arch_is_bp(f))
			memcpy(p + i, f, RD_ARCH_BP_LEN);
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
		if (bps[i].planted && bps[i].hw < 0 && /* not inherited */
		    pwrite(fd, bps[i].orig, RD_ARCH_BP_LEN, (off_t)bps[i].addr) != RD_ARCH_BP_LEN)
			failed++;
	close(fd);
	return failed ? -EFAULT : 0;
}

void rd_bp_forget(void)
{
	/* exec cleared the debug registers too */
	memset(hw_used, 0, sizeof(hw_used));
	nbps = 0;
	nhist = 0;
	memset(hist, 0, sizeof(hist));
}

bool rd_bp_hw_at(uint64_t addr, bool ever)
{
	const struct bp *b = find(addr);

	if (b)
		return b->hw >= 0;
	return ever && rd_bp_was_planted(addr) && hw_tid;
}

void rd_bp_thread(pid_t tid)
{
	if (tid == hw_tid)
		return;
	for (size_t i = 0; i < nbps; i++) {
		struct bp *b = &bps[i];

		if (!b->planted || b->hw < 0)
			continue;
		rd_arch_hwbp_clear(hw_tid, b->hw); /* fails when the thread is gone */
		if (rd_arch_hwbp_set(tid, b->hw, b->addr) < 0) {
			/* Left to the kernel's uprobe: a trap we will not see. */
			hw_used[b->hw] = false;
			b->hw = -1;
			nblind++;
			if (pwrite(bp_memfd, rd_arch_bp_insn, RD_ARCH_BP_LEN, (off_t)b->addr) < 0)
				b->planted = false;
		}
	}
	hw_tid = tid;
}

unsigned long rd_bp_blind(void)
{
	return nblind;
}

bool rd_bp_probed(uint64_t addr)
{
	uint8_t m[RD_ARCH_BP_LEN], f[RD_ARCH_BP_LEN];
	const struct bp *b = find(addr);

	if (b && b->hw < 0) /* the breakpoint instruction there is ours */
		return false;
	return file_bytes && pread(bp_memfd, m, RD_ARCH_BP_LEN, (off_t)addr) == RD_ARCH_BP_LEN &&
	       rd_arch_is_bp(m) && file_bytes(file_ctx, addr, f) && !rd_arch_is_bp(f);
}
