// SPDX-License-Identifier: GPL-2.0-only
/* Content negotiation of /metrics: the Accept headers Prometheus and other clients send, q=0
 * refusing a format or gzip, the most specific range deciding. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "exporter/negotiate.h"
#include "unit.h"

#define OM RD_FMT_OPENMETRICS
#define TEXT RD_FMT_PROMETHEUS
#define REFUSED -1

static int format(const char *accept)
{
	enum rd_metrics_format f;

	return rd_negotiate_format(accept, &f) ? REFUSED : (int)f;
}

static void test_format(void **state)
{
	/* What Prometheus 2.42 sends, and what it sends with OpenMetrics turned off. */
	assert_int_equal(format("application/openmetrics-text;version=1.0.0,application/"
				"openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;"
				"q=0.5,*/*;q=0.1"),
			 OM);
	assert_int_equal(format("text/plain;version=0.0.4;q=1,*/*;q=0.1"), TEXT);
	/* No header, anything, a browser's. */
	assert_int_equal(format(NULL), TEXT);
	assert_int_equal(format(""), TEXT);
	assert_int_equal(format("*/*"), TEXT);
	assert_int_equal(format("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"),
			 TEXT);
	/* q=0 refuses: a format named with it is never served. */
	assert_int_equal(format("application/openmetrics-text;q=0, text/plain"), TEXT);
	assert_int_equal(format("application/openmetrics-text; q=0 ,*/*"), TEXT);
	assert_int_equal(format("text/plain;q=0,*/*;q=0.5"), OM);
	assert_int_equal(format("text/*;q=0, application/openmetrics-text;q=0.2"), OM);
	assert_int_equal(format("text/plain;q=0"), REFUSED);
	assert_int_equal(format("application/openmetrics-text;q=0,text/plain;q=0,*/*"), REFUSED);
	assert_int_equal(format("application/json"), REFUSED);
	/* Higher q wins; the more specific range decides over a wildcard. */
	assert_int_equal(format("application/openmetrics-text;q=0.4,text/plain;q=0.5"), TEXT);
	assert_int_equal(format("text/*;q=0.1,text/plain;q=0.9,application/openmetrics-text;"
				"q=0.8"),
			 TEXT);
	assert_int_equal(format("TEXT/PLAIN;Q=0.1, Application/OpenMetrics-Text"), OM);
	/* A malformed q is 0. */
	assert_int_equal(format("application/openmetrics-text;q=2,text/plain"), TEXT);
}

static void test_gzip(void **state)
{
	assert_true(rd_negotiate_gzip("gzip"));
	assert_true(rd_negotiate_gzip("gzip, deflate, br"));
	assert_true(rd_negotiate_gzip("deflate;q=1.0, gzip;q=0.5"));
	assert_true(rd_negotiate_gzip("*"));
	assert_true(rd_negotiate_gzip("x-gzip"));
	assert_false(rd_negotiate_gzip(NULL));
	assert_false(rd_negotiate_gzip(""));
	assert_false(rd_negotiate_gzip("identity"));
	assert_false(rd_negotiate_gzip("gzip;q=0"));
	assert_false(rd_negotiate_gzip("gzip;q=0, *"));
	assert_false(rd_negotiate_gzip("*;q=0"));
	assert_false(rd_negotiate_gzip("gzipper"));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_format),
	    cmocka_unit_test(test_gzip),
	};

	return UNIT_MAIN(tests);
}
