// SPDX-License-Identifier: GPL-2.0-only
/* A thread's registered rseq area: where the kernel keeps it, and what it holds now. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc/rseqarea.h"
#include "proc/status.h"

int rd_rseq_config(pid_t tid, struct rd_rseq_config *cfg)
{
	long n;

	memset(cfg, 0, sizeof(*cfg));
	/* Returns how many bytes the kernel filled in; older kernels answer EIO. */
	n = ptrace(PTRACE_GET_RSEQ_CONFIGURATION, tid, (void *)sizeof(*cfg), cfg);
	if (n < 0)
		return -errno;
	if ((size_t)n < offsetof(struct rd_rseq_config, flags)) {
		memset(cfg, 0, sizeof(*cfg));
		return -EIO;
	}
	return 0;
}

static int read_proc_mem(pid_t tid, uint64_t addr, void *buf, size_t len)
{
	char path[64];
	size_t done = 0;
	int fd, err = 0;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (done < len) {
		ssize_t r = pread(fd, (char *)buf + done, len - done, (off_t)(addr + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			err = r < 0 ? -errno : -EFAULT;
			break;
		}
		done += (size_t)r;
	}
	close(fd);
	return err;
}

int rd_read_mem(pid_t tid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {.iov_base = buf, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)addr, .iov_len = len};
	ssize_t n;

	if (!len)
		return 0;
	n = process_vm_readv(tid, &local, 1, &remote, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	if (n < 0 && errno == ESRCH)
		return -ESRCH;
	/* Partial, or refused (ENOSYS, EPERM under some LSMs): /proc/PID/mem may still work. */
	return read_proc_mem(tid, addr, buf, len);
}

/* Layout of the kernel's struct rseq (include/uapi/linux/rseq.h). */
enum {
	RSEQ_OFF_CPU_ID_START = 0,
	RSEQ_OFF_CPU_ID = 4,
	RSEQ_OFF_RSEQ_CS = 8,
	RSEQ_OFF_FLAGS = 16,
	RSEQ_OFF_NODE_ID = 20,
	RSEQ_OFF_MM_CID = 24,
	RSEQ_KNOWN_SIZE = 28,
};

void rd_rseq_parse_area(const void *bytes, size_t len, struct rd_rseq_area *area)
{
	unsigned char raw[RSEQ_KNOWN_SIZE] = {0};

	memcpy(raw, bytes, len < sizeof(raw) ? len : sizeof(raw));
	/* The process ran on this machine, or on one of the same byte order. */
	memcpy(&area->cpu_id_start, raw + RSEQ_OFF_CPU_ID_START, 4);
	memcpy(&area->cpu_id, raw + RSEQ_OFF_CPU_ID, 4);
	memcpy(&area->rseq_cs, raw + RSEQ_OFF_RSEQ_CS, 8);
	memcpy(&area->flags, raw + RSEQ_OFF_FLAGS, 4);
	memcpy(&area->node_id, raw + RSEQ_OFF_NODE_ID, 4);
	memcpy(&area->mm_cid, raw + RSEQ_OFF_MM_CID, 4);
}

int rd_rseq_read_area(pid_t tid, const struct rd_rseq_config *cfg, struct rd_rseq_area *area)
{
	unsigned char raw[RSEQ_KNOWN_SIZE] = {0};
	size_t len = cfg->abi_size < sizeof(raw) ? cfg->abi_size : sizeof(raw);
	int err;

	memset(area, 0, sizeof(*area));
	if (!cfg->abi_ptr)
		return -ENOENT;
	if (len < RSEQ_OFF_FLAGS)
		return -EINVAL;
	err = rd_read_mem(tid, cfg->abi_ptr, raw, len);
	if (err)
		return err;
	rd_rseq_parse_area(raw, len, area);
	return 0;
}

int rd_thread_hold(pid_t tid, int *sig)
{
	int status, err;

	*sig = 0;
	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) < 0) {
		struct rd_proc_status ps;

		err = -errno;
		/* A thread that has exited (the main thread after pthread_exit, waiting as a
		 * zombie for the others) is refused with EPERM: it is gone. */
		if (err == -EPERM && rd_proc_status(tid, 0, &ps) == 0 &&
		    (ps.state == 'Z' || ps.state == 'X'))
			return -ESRCH;
		return err;
	}
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) < 0) {
		err = -errno;
		ptrace(PTRACE_DETACH, tid, NULL, NULL);
		return err;
	}
	for (;;) {
		if (waitpid(tid, &status, __WALL) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status))
			return -ESRCH;
		if (!WIFSTOPPED(status))
			continue;
		if (status >> 16 != PTRACE_EVENT_STOP)
			*sig = WSTOPSIG(status);
		return 0;
	}
}

void rd_thread_release(pid_t tid, int sig)
{
	ptrace(PTRACE_DETACH, tid, NULL, (void *)(long)sig);
}
