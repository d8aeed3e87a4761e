// SPDX-License-Identifier: GPL-2.0-only
/* Hold the stepped thread and rseqdbg on one CPU, and give the thread its mask back. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "step/pin.h"

/* Fixed storage: rd_pin_release runs in signal handlers. */
static pid_t held_tid;
static pid_t last_tid; /* the last one held: its children may be reported after release */
static int held_cpu = -1, last_cpu_held = -1;
static cpu_set_t held_mask; /* the thread's own mask, given back */
static cpu_set_t our_mask;  /* rseqdbg's mask before the first hold */
static bool our_saved;

/* The CPU thread tid last ran on: field 39 of /proc/PID/task/TID/stat. -1 if unknown. */
static int last_cpu(pid_t pid, pid_t tid)
{
	char path[64], buf[1024], *p;
	int fd, field = 2;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* The command name (field 2) may hold spaces and parentheses: count from its end. */
	p = strrchr(buf, ')');
	if (!p)
		return -1;
	for (; *p && field < 39; p++)
		if (*p == ' ')
			field++;
	return *p ? atoi(p) : -1;
}

int rd_pin_hold(pid_t pid, pid_t tid)
{
	cpu_set_t mask, one, both;
	int cpu;

	rd_pin_release();
	if (!our_saved) {
		if (sched_getaffinity(0, sizeof(our_mask), &our_mask) < 0)
			return -errno;
		our_saved = true;
	}
	if (sched_getaffinity(tid, sizeof(mask), &mask) < 0)
		return -errno;
	CPU_AND(&both, &mask, &our_mask);
	cpu = last_cpu(pid, tid);
	if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &both))
		for (cpu = 0; cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &both); cpu++)
			;
	if (cpu == CPU_SETSIZE)
		return -EINVAL; /* no CPU both may use */
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(tid, sizeof(one), &one) < 0)
		return -errno;
	held_mask = mask;
	held_cpu = last_cpu_held = cpu;
	held_tid = last_tid = tid;
	if (sched_setaffinity(0, sizeof(one), &one) < 0) {
		int err = -errno;

		rd_pin_release();
		return err;
	}
	return 0;
}

void rd_pin_aside(bool aside)
{
	cpu_set_t mask, one;

	if (!held_tid || held_cpu < 0)
		return;
	CPU_ZERO(&one);
	CPU_SET(held_cpu, &one);
	if (!aside) {
		sched_setaffinity(0, sizeof(one), &one);
		sched_setaffinity(held_tid, sizeof(one), &one);
		return;
	}
	sched_setaffinity(held_tid, sizeof(held_mask), &held_mask);
	mask = our_mask;
	CPU_CLR(held_cpu, &mask);
	if (CPU_COUNT(&mask))
		sched_setaffinity(0, sizeof(mask), &mask);
}

void rd_pin_release(void)
{
	cpu_set_t now;

	if (!held_tid)
		return;
	/* A mask the program set on the thread meanwhile is the program's: left as it is. */
	if (sched_getaffinity(held_tid, sizeof(now), &now) == 0 && CPU_COUNT(&now) == 1 &&
	    CPU_ISSET(held_cpu, &now))
		sched_setaffinity(held_tid, sizeof(held_mask), &held_mask);
	held_tid = 0;
	held_cpu = -1;
	if (our_saved)
		sched_setaffinity(0, sizeof(our_mask), &our_mask);
}

void rd_pin_child(pid_t parent, pid_t child)
{
	cpu_set_t now;

	if (!last_tid || parent != last_tid || child <= 0)
		return;
	if (sched_getaffinity(child, sizeof(now), &now) == 0 && CPU_COUNT(&now) == 1 &&
	    CPU_ISSET(last_cpu_held, &now))
		sched_setaffinity(child, sizeof(held_mask), &held_mask);
}

void rd_pin_renamed(pid_t oldtid, pid_t newtid)
{
	if (held_tid == oldtid)
		held_tid = newtid;
	if (last_tid == oldtid)
		last_tid = newtid;
}
