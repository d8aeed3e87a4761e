// SPDX-License-Identifier: GPL-2.0-only
/* Accept and Accept-Encoding: comma-separated ranges, each with parameters after ';', of
 * which q (0 to 1, 1 when absent) says how much the client wants it. A name is matched by
 * the most specific range naming it: its type and subtype, else its type with a wildcard
 * subtype, else the wildcard of every type. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "exporter/negotiate.h"

#define NO_MATCH -1.0

/* The length of s without the blanks around it; *s moved past the leading ones. */
static size_t trim(const char **s, size_t n)
{
	while (n && (**s == ' ' || **s == '\t')) {
		(*s)++;
		n--;
	}
	while (n && ((*s)[n - 1] == ' ' || (*s)[n - 1] == '\t'))
		n--;
	return n;
}

/* The q parameter of the parameters in [p, end), 1 without one; malformed values are 0. */
static double quality(const char *p, const char *end)
{
	while (p < end) {
		const char *next = memchr(p, ';', (size_t)(end - p));
		const char *s = p;
		size_t n = trim(&s, (size_t)((next ? next : end) - p));

		if (n > 2 && (s[0] == 'q' || s[0] == 'Q') && s[1] == '=') {
			char buf[16], *e;
			double q;

			if (n - 2 >= sizeof(buf))
				return 0;
			memcpy(buf, s + 2, n - 2);
			buf[n - 2] = '\0';
			q = strtod(buf, &e);
			return *e || !(q >= 0 && q <= 1) ? 0 : q;
		}
		p = next ? next + 1 : end;
	}
	return 1;
}

/* The quality header gives name ("type/subtype", or a coding when slash is false): the q of
 * the most specific range matching it, NO_MATCH when none does. */
static double match(const char *header, const char *name, bool slash)
{
	const char *type_end = slash ? strchr(name, '/') : NULL;
	double best = NO_MATCH;
	int best_rank = -1;

	for (const char *p = header; p && *p;) {
		const char *comma = strchr(p, ',');
		const char *end = comma ? comma : p + strlen(p);
		const char *semi = memchr(p, ';', (size_t)(end - p));
		const char *r = p;
		size_t n = trim(&r, (size_t)((semi ? semi : end) - p));
		int rank = -1;

		if (n == strlen(name) && !strncasecmp(r, name, n))
			rank = 2;
		else if (slash && n == 3 && !strncmp(r, "*/*", 3))
			rank = 0;
		else if (!slash && n == 1 && r[0] == '*')
			rank = 0;
		else if (slash && n == (size_t)(type_end - name) + 2 &&
			 !strncasecmp(r, name, (size_t)(type_end - name) + 1) && r[n - 1] == '*')
			rank = 1;
		if (rank > best_rank) {
			best_rank = rank;
			best = quality(semi ? semi + 1 : end, end);
		}
		p = comma ? comma + 1 : NULL;
	}
	return best;
}

int rd_negotiate_format(const char *accept, enum rd_metrics_format *fmt)
{
	double om, text;

	*fmt = RD_FMT_PROMETHEUS;
	if (!accept || !*accept)
		return 0;
	om = match(accept, "application/openmetrics-text", true);
	text = match(accept, "text/plain", true);
	/* Named outright, OpenMetrics wins a tie: Prometheus lists it first with q=1. */
	if (om > 0 && (om > text || (om == text && strcasestr(accept, "openmetrics"))))
		*fmt = RD_FMT_OPENMETRICS;
	else if (text <= 0)
		return -1; /* om is not above text: refused too */
	return 0;
}

bool rd_negotiate_gzip(const char *accept_encoding)
{
	double q = accept_encoding ? match(accept_encoding, "gzip", false) : NO_MATCH;

	if (q == NO_MATCH && accept_encoding)
		q = match(accept_encoding, "x-gzip", false);
	return q > 0;
}
