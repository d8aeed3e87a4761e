// SPDX-License-Identifier: GPL-2.0-only
/* The exporter toolkit's web configuration, read with libyaml: a mapping of the sections
 * tls_server_config, http_server_config and basic_auth_users. As the toolkit does, a key it
 * does not know is an error, not a silent default: a misspelt client_auth_type must not
 * leave the port open. */
#include <crypt.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "exporter/webconfig.h"

struct parse {
	yaml_document_t *doc;
	const char *dir;
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 3, 4))) static int bad(struct parse *p, const yaml_node_t *n,
						     const char *fmt, ...)
{
	va_list ap;
	int k;

	k = snprintf(p->err, p->errlen, "line %zu: ", n ? n->start_mark.line + 1 : 1);
	if (k < 0 || (size_t)k >= p->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(p->err + k, p->errlen - (size_t)k, fmt, ap);
	va_end(ap);
	return -1;
}

/* A scalar's text, NULL for another kind of node. */
static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static int string(struct parse *p, const yaml_node_t *n, const char *key, const char **res)
{
	*res = scalar(n);
	if (!*res)
		return bad(p, n, "%s: not a string", key);
	return 0;
}

/* A file path: as given when absolute (or empty), else relative to the file's directory. */
static int path(struct parse *p, const yaml_node_t *n, const char *key, char **res)
{
	const char *s;

	if (string(p, n, key, &s))
		return -1;
	free(*res);
	if (!*s || s[0] == '/' || !p->dir)
		*res = strdup(s);
	else if (asprintf(res, "%s/%s", p->dir, s) < 0)
		*res = NULL;
	return *res ? 0 : bad(p, n, "out of memory");
}

static int tls_version(struct parse *p, const yaml_node_t *n, const char *key, int *v)
{
	static const char *const names[] = {"TLS10", "TLS11", "TLS12", "TLS13"};
	const char *s;

	if (string(p, n, key, &s))
		return -1;
	for (int i = 0; i < 4; i++) {
		if (!strcmp(s, names[i])) {
			*v = i;
			return 0;
		}
	}
	return bad(p, n, "%s: '%s' is not one of TLS10, TLS11, TLS12, TLS13", key, s);
}

static int client_auth(struct parse *p, const yaml_node_t *n, enum rd_client_auth *a)
{
	static const char *const names[] = {"NoClientCert", "RequestClientCert",
					    "RequireAnyClientCert", "VerifyClientCertIfGiven",
					    "RequireAndVerifyClientCert"};
	const char *s;

	if (string(p, n, "client_auth_type", &s))
		return -1;
	for (int i = 0; i < 5; i++) {
		if (!strcmp(s, names[i])) {
			*a = (enum rd_client_auth)i;
			return 0;
		}
	}
	return bad(p, n,
		   "client_auth_type: '%s' is not one of NoClientCert, RequestClientCert, "
		   "RequireAnyClientCert, VerifyClientCertIfGiven, RequireAndVerifyClientCert",
		   s);
}

/* An empty value ("key:" with nothing after it) is null, as in the toolkit. */
static bool is_null(const yaml_node_t *n)
{
	const char *s = scalar(n);

	return s && (!*s || !strcmp(s, "~") || !strcmp(s, "null")) &&
	       n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

static int tls_config(struct parse *p, const yaml_node_t *m, struct rd_webconfig *c)
{
	yaml_node_pair_t *pr;
	bool verify;

	if (is_null(m))
		return 0;
	if (m->type != YAML_MAPPING_NODE)
		return bad(p, m, "tls_server_config: not a mapping");
	for (pr = m->data.mapping.pairs.start; pr < m->data.mapping.pairs.top; pr++) {
		const yaml_node_t *k = yaml_document_get_node(p->doc, pr->key);
		const yaml_node_t *v = yaml_document_get_node(p->doc, pr->value);
		const char *key = scalar(k);
		int r;

		if (!key)
			return bad(p, k, "tls_server_config: a key that is not a string");
		if (!strcmp(key, "cert_file"))
			r = path(p, v, key, &c->cert_file);
		else if (!strcmp(key, "key_file"))
			r = path(p, v, key, &c->key_file);
		else if (!strcmp(key, "client_ca_file"))
			r = path(p, v, key, &c->client_ca_file);
		else if (!strcmp(key, "client_auth_type"))
			r = client_auth(p, v, &c->client_auth);
		else if (!strcmp(key, "min_version"))
			r = tls_version(p, v, key, &c->min_version);
		else if (!strcmp(key, "max_version"))
			r = tls_version(p, v, key, &c->max_version);
		else
			r = bad(p, k,
				"tls_server_config: %s is not supported (cert_file, key_file, "
				"client_auth_type, client_ca_file, min_version, max_version)",
				key);
		if (r)
			return -1;
	}
	c->tls = (c->cert_file && *c->cert_file) || (c->key_file && *c->key_file) ||
		 c->client_auth != RD_CLIENT_NONE || (c->client_ca_file && *c->client_ca_file);
	if (!c->tls)
		return 0;
	if (!c->cert_file || !*c->cert_file)
		return bad(p, m, "tls_server_config: missing cert_file");
	if (!c->key_file || !*c->key_file)
		return bad(p, m, "tls_server_config: missing key_file");
	if (c->min_version > c->max_version)
		return bad(p, m, "tls_server_config: min_version is above max_version");
	verify = c->client_auth == RD_CLIENT_VERIFY_IF_GIVEN ||
		 c->client_auth == RD_CLIENT_REQUIRE_VERIFY;
	if (verify && (!c->client_ca_file || !*c->client_ca_file))
		return bad(p, m,
			   "tls_server_config: client_auth_type verifies client certificates "
			   "against client_ca_file, which is missing");
	if (c->client_auth == RD_CLIENT_NONE && c->client_ca_file && *c->client_ca_file)
		return bad(p, m, "tls_server_config: client_ca_file without a client_auth_type");
	/* The certificate is asked for only with a list of authorities to send the client. */
	if (c->client_auth == RD_CLIENT_REQUIRE_ANY && (!c->client_ca_file || !*c->client_ca_file))
		return bad(p, m,
			   "tls_server_config: RequireAnyClientCert needs client_ca_file here");
	return 0;
}

static int http_config(struct parse *p, const yaml_node_t *m)
{
	yaml_node_pair_t *pr;

	if (is_null(m))
		return 0;
	if (m->type != YAML_MAPPING_NODE)
		return bad(p, m, "http_server_config: not a mapping");
	for (pr = m->data.mapping.pairs.start; pr < m->data.mapping.pairs.top; pr++) {
		const yaml_node_t *k = yaml_document_get_node(p->doc, pr->key);
		const char *key = scalar(k);

		/* Served over HTTP/1.1, which every Prometheus speaks: http2 changes nothing. */
		if (!key || strcmp(key, "http2"))
			return bad(p, k, "http_server_config: %s is not supported (http2)",
				   key ? key : "a key that is not a string");
	}
	return 0;
}

static int cmp_user(const void *a, const void *b)
{
	return strcmp(((const struct rd_webuser *)a)->name, ((const struct rd_webuser *)b)->name);
}

static int users(struct parse *p, const yaml_node_t *m, struct rd_webconfig *c)
{
	size_t n;
	yaml_node_pair_t *pr;

	if (is_null(m))
		return 0;
	if (m->type != YAML_MAPPING_NODE)
		return bad(p, m, "basic_auth_users: not a mapping of user names to bcrypt hashes");
	n = (size_t)(m->data.mapping.pairs.top - m->data.mapping.pairs.start);
	c->users = calloc(n ? n : 1, sizeof(*c->users));
	if (!c->users)
		return bad(p, m, "out of memory");
	for (pr = m->data.mapping.pairs.start; pr < m->data.mapping.pairs.top; pr++) {
		const yaml_node_t *k = yaml_document_get_node(p->doc, pr->key);
		const yaml_node_t *v = yaml_document_get_node(p->doc, pr->value);
		const char *name = scalar(k), *hash = scalar(v);
		struct rd_webuser *u = &c->users[c->nusers];

		if (!name || !*name || strchr(name, ':'))
			return bad(p, k,
				   "basic_auth_users: a user name must be a string without ':'");
		if (!hash || strncmp(hash, "$2", 2) || crypt_checksalt(hash) != CRYPT_SALT_OK)
			return bad(p, v,
				   "basic_auth_users: %s: not a bcrypt hash ($2a$, $2b$, $2y$)",
				   name);
		u->name = strdup(name);
		u->hash = strdup(hash);
		c->nusers++;
		if (!u->name || !u->hash)
			return bad(p, v, "out of memory");
	}
	qsort(c->users, c->nusers, sizeof(*c->users), cmp_user);
	for (size_t i = 1; i < c->nusers; i++)
		if (!strcmp(c->users[i - 1].name, c->users[i].name))
			return bad(p, m, "basic_auth_users: %s is there twice", c->users[i].name);
	return 0;
}

int rd_webconfig_parse(const char *text, size_t len, const char *dir, struct rd_webconfig *c,
		       char *err, size_t errlen)
{
	struct parse p = {.dir = dir, .err = err, .errlen = errlen};
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root;
	yaml_node_pair_t *pr;
	int ret = 0;

	memset(c, 0, sizeof(*c));
	c->min_version = 2; /* TLS 1.2, the toolkit's default */
	c->max_version = 3;
	if (!yaml_parser_initialize(&parser))
		return bad(&p, NULL, "out of memory");
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		snprintf(err, errlen, "line %zu: %s", parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "not YAML");
		yaml_parser_delete(&parser);
		return -1;
	}
	p.doc = &doc;
	root = yaml_document_get_root_node(&doc);
	if (root && !is_null(root) && root->type != YAML_MAPPING_NODE)
		ret = bad(&p, root,
			  "not a mapping of tls_server_config, http_server_config and "
			  "basic_auth_users");
	for (pr = root && root->type == YAML_MAPPING_NODE ? root->data.mapping.pairs.start : NULL;
	     !ret && pr && pr < root->data.mapping.pairs.top; pr++) {
		const yaml_node_t *k = yaml_document_get_node(&doc, pr->key);
		const yaml_node_t *v = yaml_document_get_node(&doc, pr->value);
		const char *key = scalar(k);

		if (key && !strcmp(key, "tls_server_config"))
			ret = tls_config(&p, v, c);
		else if (key && !strcmp(key, "http_server_config"))
			ret = http_config(&p, v);
		else if (key && !strcmp(key, "basic_auth_users"))
			ret = users(&p, v, c);
		else
			ret = bad(&p, k,
				  "%s is not supported (tls_server_config, http_server_config, "
				  "basic_auth_users)",
				  key ? key : "a key that is not a string");
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	if (ret)
		rd_webconfig_free(c);
	return ret;
}

int rd_webconfig_load(const char *path, struct rd_webconfig *c, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	char *text = NULL, *dir = NULL, *slash;
	size_t len = 0;
	FILE *m;
	char buf[4096];
	size_t n;
	int ret;

	memset(c, 0, sizeof(*c));
	if (!f) {
		snprintf(err, errlen, "%s", strerror(errno));
		return -1;
	}
	m = open_memstream(&text, &len);
	if (!m) {
		fclose(f);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	while ((n = fread(buf, 1, sizeof(buf), f)))
		fwrite(buf, 1, n, m);
	ret = ferror(f);
	fclose(f);
	if (fclose(m) || ret) {
		free(text);
		snprintf(err, errlen, "cannot read it");
		return -1;
	}
	dir = strdup(path);
	slash = dir ? strrchr(dir, '/') : NULL;
	if (slash)
		*slash = '\0';
	ret = rd_webconfig_parse(text, len, slash ? dir : ".", c, err, errlen);
	free(dir);
	free(text);
	return ret;
}

void rd_webconfig_free(struct rd_webconfig *c)
{
	for (size_t i = 0; i < c->nusers; i++) {
		free(c->users[i].name);
		free(c->users[i].hash);
	}
	free(c->users);
	free(c->cert_file);
	free(c->key_file);
	free(c->client_ca_file);
	memset(c, 0, sizeof(*c));
}

void rd_webconfig_priorities(const struct rd_webconfig *c, char *buf, size_t len)
{
	int k = snprintf(buf, len, "NORMAL:-VERS-ALL");

	for (int v = c->max_version; v >= c->min_version && k > 0 && (size_t)k < len; v--)
		k += snprintf(buf + k, len - (size_t)k, ":+VERS-TLS1.%d", v);
}

const struct rd_webuser *rd_webconfig_user(const struct rd_webconfig *c, const char *name)
{
	struct rd_webuser key = {(char *)name, NULL};

	return c->nusers ? bsearch(&key, c->users, c->nusers, sizeof(key), cmp_user) : NULL;
}
