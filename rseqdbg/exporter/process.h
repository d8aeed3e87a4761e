/* SPDX-License-Identifier: GPL-2.0-only */
/* The exporter's own process from /proc/self, for the process_* metrics. */
#ifndef RSEQDBG_EXPORTER_PROCESS_H
#define RSEQDBG_EXPORTER_PROCESS_H

#include "exporter/metrics.h"

/* 0 or -errno; what could not be read is 0. */
int rd_proc_self_read(struct rd_proc_self *p);

#endif
