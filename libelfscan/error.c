// SPDX-License-Identifier: LGPL-2.1-or-later
/* The thread's last failure, for elfscan_errmsg(). */
#include <stdio.h>

#include "internal.h"

static __thread char last_err[512];

int es_err(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_err, sizeof(last_err), fmt, ap);
	va_end(ap);
	return -err;
}

int es_ferr(const struct elfscan *es, int err, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(last_err, sizeof(last_err), "%s: ", es->path ? es->path : "<memory>");
	if (n < 0 || (size_t)n >= sizeof(last_err))
		return -err;
	va_start(ap, fmt);
	vsnprintf(last_err + n, sizeof(last_err) - n, fmt, ap);
	va_end(ap);
	return -err;
}

const char *elfscan_errmsg(void)
{
	return last_err;
}
