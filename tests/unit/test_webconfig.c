// SPDX-License-Identifier: GPL-2.0-only
/* The exporter toolkit's web configuration as rseqdbg reads it: the sections and their
 * defaults, paths relative to the file, the refusals (unknown keys, a missing key file, a
 * hash that is not bcrypt) with the line they are on, and the TLS priorities. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "exporter/webconfig.h"
#include "unit.h"

/* htpasswd -nbB -C 4 prom secret */
#define HASH "$2y$04$PGJLZN4YXeRrk3TX7JyTyePz/BDa/qoJPnCyED.fgXyn.nH5z9e2K"

static int parse(const char *text, struct rd_webconfig *c, char *err)
{
	return rd_webconfig_parse(text, strlen(text), "/etc/rseqdbg", c, err, 256);
}

static void test_full(void **state)
{
	struct rd_webconfig c;
	char err[256] = "", prio[128];

	assert_int_equal(parse("tls_server_config:\n"
			       "  cert_file: server.crt\n"
			       "  key_file: /keys/server.key\n"
			       "  client_auth_type: RequireAndVerifyClientCert\n"
			       "  client_ca_file: ca.crt\n"
			       "  min_version: TLS13\n"
			       "http_server_config:\n"
			       "  http2: true\n"
			       "basic_auth_users:\n"
			       "  zed: " HASH "\n"
			       "  prom: '" HASH "'\n",
			       &c, err),
			 0);
	assert_string_equal(err, "");
	assert_true(c.tls);
	assert_string_equal(c.cert_file, "/etc/rseqdbg/server.crt");
	assert_string_equal(c.key_file, "/keys/server.key");
	assert_string_equal(c.client_ca_file, "/etc/rseqdbg/ca.crt");
	assert_int_equal(c.client_auth, RD_CLIENT_REQUIRE_VERIFY);
	assert_int_equal(c.min_version, 3);
	assert_int_equal(c.max_version, 3);
	assert_int_equal(c.nusers, 2);
	assert_non_null(rd_webconfig_user(&c, "prom"));
	assert_string_equal(rd_webconfig_user(&c, "zed")->hash, HASH);
	assert_null(rd_webconfig_user(&c, "nobody"));
	rd_webconfig_priorities(&c, prio, sizeof(prio));
	assert_string_equal(prio, "NORMAL:-VERS-ALL:+VERS-TLS1.3");
	rd_webconfig_free(&c);
}

/* Users without TLS, and defaults: TLS 1.2 and 1.3, no client certificate. */
static void test_defaults(void **state)
{
	struct rd_webconfig c;
	char err[256] = "", prio[128];

	assert_int_equal(parse("basic_auth_users:\n  prom: " HASH "\n", &c, err), 0);
	assert_false(c.tls);
	assert_int_equal(c.nusers, 1);
	rd_webconfig_free(&c);
	assert_int_equal(parse("tls_server_config:\n  cert_file: a\n  key_file: b\n", &c, err), 0);
	assert_true(c.tls);
	assert_int_equal(c.client_auth, RD_CLIENT_NONE);
	assert_int_equal(c.nusers, 0);
	rd_webconfig_priorities(&c, prio, sizeof(prio));
	assert_string_equal(prio, "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2");
	rd_webconfig_free(&c);
	/* An empty file, an empty section: nothing configured. */
	assert_int_equal(parse("", &c, err), 0);
	assert_false(c.tls);
	assert_int_equal(parse("tls_server_config:\nbasic_auth_users:\n", &c, err), 0);
	assert_false(c.tls);
	assert_int_equal(c.nusers, 0);
}

static void refused(const char *text, const char *why)
{
	struct rd_webconfig c;
	char err[256] = "";

	assert_int_equal(parse(text, &c, err), -1);
	if (!strstr(err, why))
		fail_msg("'%s': '%s', expected '%s'", text, err, why);
	assert_null(c.users);
	assert_null(c.cert_file);
}

static void test_refused(void **state)
{
	refused("tls_server_config:\n  cert_file: a\n",
		"line 2: tls_server_config: missing key_file");
	refused("tls_server_config:\n  key_file: a\n", "missing cert_file");
	refused("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: Yes\n",
		"line 4: client_auth_type: 'Yes' is not one of");
	refused("tls_server_config:\n  cert_file: a\n  key_file: b\n"
		"  client_auth_type: RequireAndVerifyClientCert\n",
		"against client_ca_file, which is missing");
	refused("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_ca_file: c\n",
		"client_ca_file without a client_auth_type");
	refused("tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS14\n",
		"line 4: min_version: 'TLS14' is not one of");
	refused("tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS13\n"
		"  max_version: TLS12\n",
		"min_version is above max_version");
	refused("tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites: [x]\n",
		"line 4: tls_server_config: cipher_suites is not supported");
	refused("http_server_config:\n  headers:\n    X: y\n",
		"line 2: http_server_config: headers is not supported");
	refused("basic_auth_users:\n  prom: secret\n",
		"line 2: basic_auth_users: prom: not a bcrypt");
	refused("basic_auth_users:\n  prom: $1$abc$def\n", "not a bcrypt hash");
	refused("basic_auth_users:\n  prom: " HASH "\n  prom: " HASH "\n", "prom is there twice");
	refused("basic_auth_user:\n  prom: " HASH "\n", "line 1: basic_auth_user is not supported");
	refused("- a\n- b\n", "not a mapping");
	refused("tls_server_config: [\n", "line 2");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_full),
	    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_refused),
	};

	return UNIT_MAIN(tests);
}
