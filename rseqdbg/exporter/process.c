// SPDX-License-Identifier: GPL-2.0-only
/* /proc/self/stat (CPU times, start in clock ticks after boot, sizes), the boot time from
 * the clocks, the open descriptors in /proc/self/fd and RLIMIT_NOFILE: what node_exporter and the
 * other Prometheus client libraries read for their process_* metrics. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "exporter/process.h"

/* When the machine booted, in seconds since the epoch: the clock's time less the time since
 * boot, which needs no /proc/stat (hidden by the unit's ProcSubset=pid). */
static double boot_time(void)
{
	struct timespec now, up;

	if (clock_gettime(CLOCK_REALTIME, &now) || clock_gettime(CLOCK_BOOTTIME, &up))
		return 0;
	return (double)(now.tv_sec - up.tv_sec) + (double)(now.tv_nsec - up.tv_nsec) / 1e9;
}

static uint64_t open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	uint64_t n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n ? n - 1 : 0; /* the directory's own descriptor */
}

int rd_proc_self_read(struct rd_proc_self *p)
{
	unsigned long long utime, stime, start, vsize;
	long long rss;
	double tick = (double)sysconf(_SC_CLK_TCK);
	char buf[1024], *s;
	struct rlimit rl;
	FILE *f;
	size_t n;

	memset(p, 0, sizeof(*p));
	f = fopen("/proc/self/stat", "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* After the command name, which may hold anything but ends at the last ')'. */
	s = strrchr(buf, ')');
	if (!s || tick <= 0 ||
	    sscanf(s + 1,
		   " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d "
		   "%*d %llu %llu %lld",
		   &utime, &stime, &start, &vsize, &rss) != 5)
		return -EINVAL;
	p->cpu_seconds = (double)(utime + stime) / tick;
	p->start_time = boot_time() + (double)start / tick;
	p->virtual_bytes = vsize;
	p->resident_bytes = rss > 0 ? (uint64_t)rss * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
	p->open_fds = open_fds();
	if (!getrlimit(RLIMIT_NOFILE, &rl))
		p->max_fds = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : rl.rlim_cur;
	return 0;
}
