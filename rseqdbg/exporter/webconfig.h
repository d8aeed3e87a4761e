/* SPDX-License-Identifier: GPL-2.0-only */
/* The web configuration file of the Prometheus exporter toolkit (--web.config.file), the
 * same for every exporter: TLS (tls_server_config) and basic authentication with bcrypt
 * hashes (basic_auth_users), in YAML. */
#ifndef RSEQDBG_EXPORTER_WEBCONFIG_H
#define RSEQDBG_EXPORTER_WEBCONFIG_H

#include <stdbool.h>
#include <stddef.h>

/* client_auth_type, weakest first. */
enum rd_client_auth {
	RD_CLIENT_NONE,		   /* NoClientCert */
	RD_CLIENT_REQUEST,	   /* RequestClientCert */
	RD_CLIENT_REQUIRE_ANY,	   /* RequireAnyClientCert */
	RD_CLIENT_VERIFY_IF_GIVEN, /* VerifyClientCertIfGiven */
	RD_CLIENT_REQUIRE_VERIFY,  /* RequireAndVerifyClientCert */
};

struct rd_webuser {
	char *name, *hash;
};

struct rd_webconfig {
	bool tls;
	/* Paths as given, or relative to the file's directory. */
	char *cert_file, *key_file, *client_ca_file;
	enum rd_client_auth client_auth;
	int min_version, max_version; /* TLS 1.x: 0 to 3 */
	struct rd_webuser *users;     /* basic_auth_users, sorted by name */
	size_t nusers;
};

/* The configuration in text (len bytes), relative paths resolved against dir. 0, or -1 with
 * the reason, naming the line, in err. */
int rd_webconfig_parse(const char *text, size_t len, const char *dir, struct rd_webconfig *c,
		       char *err, size_t errlen);
/* The same, read from path. */
int rd_webconfig_load(const char *path, struct rd_webconfig *c, char *err, size_t errlen);
void rd_webconfig_free(struct rd_webconfig *c);

/* The GnuTLS priority string of the versions from min_version to max_version. */
void rd_webconfig_priorities(const struct rd_webconfig *c, char *buf, size_t len);
/* The user of name, or NULL. */
const struct rd_webuser *rd_webconfig_user(const struct rd_webconfig *c, const char *name);

#endif
