/* SPDX-License-Identifier: GPL-2.0-only */
/* HTTP content negotiation for /metrics (RFC 9110): the exposition format from the Accept
 * header, gzip from Accept-Encoding, each by quality values, q=0 meaning "not this". Pure. */
#ifndef RSEQDBG_EXPORTER_NEGOTIATE_H
#define RSEQDBG_EXPORTER_NEGOTIATE_H

#include <stdbool.h>

#include "exporter/metrics.h"

/* The format a client with this Accept header (NULL: none) takes: OpenMetrics when it
 * prefers it, or names it as much as the text format; the Prometheus text format otherwise.
 * -1 when it refuses both (a 406). */
int rd_negotiate_format(const char *accept, enum rd_metrics_format *fmt);
/* Whether a client with this Accept-Encoding header (NULL: none) takes gzip. */
bool rd_negotiate_gzip(const char *accept_encoding);

#endif
