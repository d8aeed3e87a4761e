// SPDX-License-Identifier: LGPL-2.1-or-later
/* The thread's last failure, for elfscan_errmsg(). A message never names the file: the
 * caller knows which one it opened and says so itself, once. */
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

const char *elfscan_errmsg(void)
{
	return last_err;
}
