/* SPDX-License-Identifier: GPL-2.0-only */
/* Separate debug files fetched by build-id from the servers DEBUGINFOD_URLS names. */
#ifndef RSEQDBG_DEBUGINFOD_H
#define RSEQDBG_DEBUGINFOD_H

#include "elfscan.h"

/* When DEBUGINFOD_URLS names a server, make o's find_debuginfo fetch what the local
 * directories lack through libdebuginfod; otherwise leave o as it is (no lookup leaves the
 * machine). */
void rd_debuginfod_opts(struct elfscan_opts *o);
/* End the client and unload libdebuginfod, if they were used. */
void rd_debuginfod_end(void);

#endif
