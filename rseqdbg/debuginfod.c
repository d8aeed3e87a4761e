// SPDX-License-Identifier: GPL-2.0-only
/*
 * Separate debug files fetched by build-id through elfutils' libdebuginfod, which reads
 * DEBUGINFOD_URLS, keeps its cache (DEBUGINFOD_CACHE_PATH) and honours the other
 * DEBUGINFOD_* settings as gdb, perf and systemd-coredump see them. The library is loaded
 * on the first lookup, as libdw loads it, not linked: rseqdbg needs it only where a server
 * is configured, and loads no HTTP client where none is.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/debuginfod.h>

#include "common.h"
#include "debuginfod.h"

#define LIBDEBUGINFOD "libdebuginfod.so.1"

/* One client for the process, used by one thread at a time (the tracer's callers hold it). */
static struct {
	bool tried;
	void *dl;
	debuginfod_client *client;
	typeof(&debuginfod_find_debuginfo) find;
	typeof(&debuginfod_end) end;
} dbgd;

static debuginfod_client *client(void)
{
	typeof(&debuginfod_begin) begin;

	if (dbgd.tried)
		return dbgd.client;
	dbgd.tried = true;
	dbgd.dl = dlopen(LIBDEBUGINFOD, RTLD_NOW | RTLD_LOCAL);
	if (!dbgd.dl) {
		rd_warn("DEBUGINFOD_URLS is set, but no debug file is fetched: %s", dlerror());
		return NULL;
	}
	begin = (typeof(begin))dlsym(dbgd.dl, "debuginfod_begin");
	dbgd.find = (typeof(dbgd.find))dlsym(dbgd.dl, "debuginfod_find_debuginfo");
	dbgd.end = (typeof(dbgd.end))dlsym(dbgd.dl, "debuginfod_end");
	if (begin && dbgd.find && dbgd.end)
		dbgd.client = begin();
	if (!dbgd.client) {
		rd_warn("DEBUGINFOD_URLS is set, but no debug file is fetched: %s",
			begin && dbgd.find && dbgd.end ? "debuginfod_begin() failed"
						       : LIBDEBUGINFOD " lacks its functions");
		dlclose(dbgd.dl);
		dbgd.dl = NULL;
	}
	return dbgd.client;
}

/* An elfscan_find_debuginfo_fn. A server that does not have the file is no news; any other
 * failure (no server reached, a timeout) is said once per file. */
static int find_debuginfo(const char *build_id, char **path, void *ctx)
{
	debuginfod_client *c = client();
	int fd;

	if (!c)
		return -ENOSYS;
	fd = dbgd.find(c, (const unsigned char *)build_id, 0, path);
	if (fd < 0) {
		if (fd != -ENOENT)
			rd_warn("debuginfod: no debug file for build-id %s: %s", build_id,
				strerror(-fd));
		return fd;
	}
	close(fd);
	return 0;
}

void rd_debuginfod_opts(struct elfscan_opts *o)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	if (urls && urls[strspn(urls, " \t")])
		o->find_debuginfo = find_debuginfo;
}

void rd_debuginfod_end(void)
{
	if (dbgd.client)
		dbgd.end(dbgd.client);
	if (dbgd.dl)
		dlclose(dbgd.dl);
	memset(&dbgd, 0, sizeof(dbgd));
}
