// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * webconfig.c - loads the exporter-toolkit web configuration file
 * (webconfig.h); webconfig_auth.c checks credentials against its hashes.
 *
 * Parsed with libyaml's document API: it keeps every node's position, so each
 * error names the line and column to fix. Strict like exporter-toolkit (which
 * rejects unknown keys): a misspelt key_file must not quietly mean "no TLS".
 */
#define _GNU_SOURCE
#include "serve/webconfig_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "util/readfile.h"
#include "util/strv.h"
#include "util/yamldoc.h"

/* Config and PEM files are small; the cap stops a mistaken /dev/zero. */
#define MAX_FILE_SIZE (1 << 20)

static const char *const top_keys =
    "tls_server_config, http_server_config, rate_limit, basic_auth_users";
/* The top level as messages name it (and as web_words tells it apart). */
static const char top_level[] = "the top level";

/* State of one load: the document, and what relative paths are from. */
struct parse {
	struct yamldoc d;
	const char *dir; /* relative PEM paths are from here; NULL: the working directory */
	struct webconfig *wc;
	int cost; /* the highest bcrypt cost of the users */
};

/* YAML's null: nothing, ~ or null (untagged or !!null). */
static bool is_null(const yaml_node_t *n)
{
	const char *v;

	if (!n)
		return true;
	if (n->type != YAML_SCALAR_NODE)
		return false;
	if (n->tag && !strcmp((const char *)n->tag, YAML_NULL_TAG))
		return true;
	if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	v = (const char *)n->data.scalar.value;
	return !*v || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") ||
	       !strcmp(v, "NULL");
}

static const char *scalar(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

static const char *node_kind(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_MAPPING_NODE:
		return "a mapping";
	case YAML_SEQUENCE_NODE:
		return "a list";
	default:
		return "a scalar";
	}
}

/* The value of key as a string; an error unless it is a scalar. */
static int want_string(struct parse *p, const char *key, const yaml_node_t *v, const char **out)
{
	if (v->type != YAML_SCALAR_NODE)
		return yamldoc_fail(&p->d, v, "%s must be a string, not %s", key, node_kind(v));
	*out = is_null(v) ? "" : scalar(v);
	return 0;
}

/*
 * exporter-toolkit's users know these words: "unknown key \"x\" in
 * tls_server_config", "unknown top-level key \"x\"", "... must be a mapping,
 * not a list".
 */
static int web_words(struct yamldoc *d, const yaml_node_t *at, enum yamldoc_problem problem,
		     const char *key, const char *what, const char *known)
{
	bool top = what == top_level;

	switch (problem) {
	case YAMLDOC_NOT_MAPPING:
		return yamldoc_fail(d, at, "%s must be a mapping, not %s", what, node_kind(at));
	case YAMLDOC_KEY_NOT_STRING:
		if (top)
			return yamldoc_fail(d, at, "top-level keys must be strings");
		return yamldoc_fail(d, at, "keys of %s must be strings", what);
	case YAMLDOC_UNKNOWN_KEY:
		if (top)
			return yamldoc_fail(d, at, "unknown top-level key \"%s\" (known: %s)", key,
					    known);
		return yamldoc_fail(d, at, "unknown key \"%s\" in %s (known: %s)", key, what,
				    known);
	case YAMLDOC_REPEATED_KEY:
		if (top)
			return yamldoc_fail(d, at, "duplicate key \"%s\"", key);
		return yamldoc_fail(d, at, "duplicate key \"%s\" in %s", key, what);
	case YAMLDOC_SECOND_DOCUMENT:
		break;
	}
	return yamldoc_fail(d, at, "only one YAML document is allowed");
}

/*
 * A relative PEM path is taken from the config file's directory, as
 * exporter-toolkit does, so the result does not depend on the working
 * directory the service was started in.
 */
static char *resolve(const struct parse *p, const char *file)
{
	char *s;

	if (file[0] == '/' || !p->dir)
		return strdup(file);
	if (asprintf(&s, "%s/%s", p->dir, file) < 0)
		return NULL;
	return s;
}

/* Resolves and reads the PEM file named by the scalar v (for key `what`). */
static int load_pem(struct parse *p, const char *what, const yaml_node_t *v, char **path,
		    char **pem)
{
	int ret;

	*path = resolve(p, scalar(v));
	if (!*path)
		return yamldoc_fail_file(&p->d, -ENOMEM, "out of memory");
	ret = readfile_all(*path, MAX_FILE_SIZE, pem, NULL);
	if (ret == -ENOMEM)
		return yamldoc_fail_file(&p->d, ret, "out of memory");
	if (ret) {
		yamldoc_fail(&p->d, v, "cannot read %s %s: %s", what, *path,
			     readfile_strerror(ret, MAX_FILE_SIZE));
		return ret;
	}
	/* Caught here it names the file; libmicrohttpd would only fail the start. */
	if (!strstr(*pem, "-----BEGIN "))
		return yamldoc_fail(&p->d, v, "%s %s is not PEM (no -----BEGIN line)", what, *path);
	return 0;
}

/* Each pair of a mapping, in file order. */
#define for_each_pair(map, pair)                                                                   \
	for (pair = (map)->data.mapping.pairs.start; pair < (map)->data.mapping.pairs.top; pair++)

/* The keys of tls_server_config, in the order the known-keys list gives them. */
enum {
	TLS_CERT_FILE,
	TLS_KEY_FILE,
	TLS_CERT,
	TLS_KEY,
	TLS_AUTH,
	TLS_CA_FILE,
	TLS_CA,
	TLS_SANS,
	TLS_MINV,
	TLS_MAXV,
	TLS_CIPHERS,
	TLS_PREFER,
	TLS_CURVES,
	TLS_NKEYS
};
static const char *const tls_key_names[TLS_NKEYS] = {
	"cert_file",	     "key_file",       "cert",		"key",
	"client_auth_type",  "client_ca_file", "client_ca",	"client_allowed_sans",
	"min_version",	     "max_version",    "cipher_suites", "prefer_server_cipher_suites",
	"curve_preferences",
};
static const char *const tls_keys =
    "cert_file, key_file, cert, key, client_auth_type, client_ca_file, client_ca, "
    "client_allowed_sans, min_version, max_version, cipher_suites, prefer_server_cipher_suites, "
    "curve_preferences";

/* Keys whose value is a list of strings; the others take a string (or a bool). */
static bool tls_list_key(int i)
{
	return i == TLS_SANS || i == TLS_CIPHERS || i == TLS_CURVES;
}

/* What tls_server_config says, key by key. */
struct tls_values {
	/* node[i] is the value of key i if set (a non-empty string, or a list, or a bool). */
	yaml_node_t *node[TLS_NKEYS];
	const char *val[TLS_NKEYS]; /* strings' values; "" if unset */
	const char *first_set;	    /* the first key that turns TLS on */
};

static int tls_key(struct yamldoc *d, const char *k, yaml_node_t *v, void *arg)
{
	struct parse *p = (struct parse *)d; /* d is p's first member */
	struct tls_values *t = arg;
	int ret, i;

	for (i = 0; i < TLS_NKEYS; i++)
		if (!strcmp(k, tls_key_names[i]))
			break;
	if (i == TLS_NKEYS)
		return 1;
	if (is_null(v))
		return 0; /* unset, as in exporter-toolkit */
	if (tls_list_key(i) || i == TLS_PREFER) {
		t->node[i] = v;
		return 0;
	}
	ret = want_string(p, k, v, &t->val[i]);
	if (ret)
		return ret;
	/* An empty value means unset, as in exporter-toolkit. */
	if (*t->val[i]) {
		t->node[i] = v;
		if (!t->first_set && i <= TLS_CA)
			t->first_set = tls_key_names[i];
	}
	return 0;
}

/* TLS10..TLS13 -> 10..13, or a message at v. */
static int tls_version(struct parse *p, const char *key, const yaml_node_t *v, const char *m,
		       unsigned int *out)
{
	if (strlen(m) != 5 || strncmp(m, "TLS1", 4) || m[4] < '0' || m[4] > '3')
		return yamldoc_fail(
		    &p->d, v, "unknown %s \"%s\" (known: TLS10, TLS11, TLS12, TLS13)", key, m);
	*out = 10 + (unsigned int)(m[4] - '0');
	return 0;
}

/* A list of strings for key (each non-empty) into *out, *n; each checked by check if set. */
static int string_list(struct parse *p, const char *key, yaml_node_t *v,
		       int (*check)(const char *, char *, size_t), char ***out, size_t *n)
{
	size_t len, i;
	int ret;

	*out = NULL;
	*n = 0;
	ret = yamldoc_list_len(&p->d, v, key, 0, 256, &len);
	if (ret)
		return ret;
	if (!len)
		return 0;
	*out = calloc(len, sizeof(**out));
	if (!*out)
		return yamldoc_fail_file(&p->d, -ENOMEM, "out of memory");
	for (i = 0; i < len; i++) {
		yaml_node_t *item = yamldoc_item(&p->d, v, i);
		char why[256];

		if (item->type != YAML_SCALAR_NODE || is_null(item) || !*scalar(item))
			return yamldoc_fail(&p->d, item, "%s must be a list of non-empty strings",
					    key);
		if (check && check(scalar(item), why, sizeof(why)))
			return yamldoc_fail(&p->d, item, "%s", why);
		(*out)[i] = strdup(scalar(item));
		(*n)++;
		if (!(*out)[i])
			return yamldoc_fail_file(&p->d, -ENOMEM, "out of memory");
	}
	return 0;
}

/* Checks inline PEM text given as key (cert, key, client_ca) and copies it. */
static int inline_pem(struct parse *p, const char *key, const yaml_node_t *v, const char *text,
		      char **pem)
{
	if (!strstr(text, "-----BEGIN "))
		return yamldoc_fail(&p->d, v, "%s is not PEM (no -----BEGIN line)", key);
	*pem = strdup(text);
	if (!*pem)
		return yamldoc_fail_file(&p->d, -ENOMEM, "out of memory");
	return 0;
}

/* The PEM of file key fk or inline key ik (one of them, not both) into *path and *pem. */
static int file_or_inline(struct parse *p, const struct tls_values *t, int fk, int ik, char **path,
			  char **pem)
{
	if (t->node[fk] && t->node[ik])
		return yamldoc_fail(&p->d, t->node[ik], "set %s or %s, not both", tls_key_names[fk],
				    tls_key_names[ik]);
	if (t->node[fk])
		return load_pem(p, tls_key_names[fk], t->node[fk], path, pem);
	if (t->node[ik])
		return inline_pem(p, tls_key_names[ik], t->node[ik], t->val[ik], pem);
	return 0;
}

/* cert and key: both or neither (each as a file or inline), once a TLS key is set. */
static int tls_check_pair(struct parse *p, const struct tls_values *t,
			  const yaml_node_t *tls_key_node)
{
	yaml_node_t *const *node = t->node;

	if (!node[TLS_CERT_FILE] && !node[TLS_CERT])
		return yamldoc_fail(&p->d, node[TLS_KEY_FILE] ? node[TLS_KEY_FILE] : tls_key_node,
				    node[TLS_KEY_FILE] || node[TLS_KEY]
					? "key_file (or key) is set but cert_file (or cert) is not "
					  "(both or neither)"
					: "tls_server_config sets %s but not cert_file (or cert) "
					  "and key_file (or key)",
				    t->first_set);
	if (!node[TLS_KEY_FILE] && !node[TLS_KEY])
		return yamldoc_fail(&p->d,
				    node[TLS_CERT_FILE] ? node[TLS_CERT_FILE] : node[TLS_CERT],
				    "cert_file (or cert) is set but key_file (or key) is not (both "
				    "or neither)");
	return 0;
}

/* client_auth_type, the client CA it needs or forbids, and client_allowed_sans into ts. */
static int tls_client_policy(struct parse *p, const struct tls_values *t, struct tls_settings *ts)
{
	yaml_node_t *const *node = t->node;
	const char *const *val = t->val;
	int ret;

	ts->client_auth = TLS_NO_CLIENT_CERT;
	if (node[TLS_AUTH] && tlsconf_client_auth(val[TLS_AUTH], &ts->client_auth))
		return yamldoc_fail(&p->d, node[TLS_AUTH],
				    "unknown client_auth_type \"%s\" (known: %s)", val[TLS_AUTH],
				    tlsconf_client_auth_names);
	if (tls_client_auth_verifies(ts->client_auth) && !node[TLS_CA_FILE] && !node[TLS_CA])
		return yamldoc_fail(&p->d, node[TLS_AUTH],
				    "client_auth_type %s needs client_ca_file (or client_ca): the "
				    "CAs client certificates are verified against",
				    tlsconf_client_auth_name(ts->client_auth));
	/* exporter-toolkit refuses this too: the CA would be loaded and never used. */
	if ((node[TLS_CA_FILE] || node[TLS_CA]) && ts->client_auth == TLS_NO_CLIENT_CERT)
		return yamldoc_fail(&p->d, node[TLS_CA_FILE] ? node[TLS_CA_FILE] : node[TLS_CA],
				    "%s is set but client_auth_type is NoClientCert, so no client "
				    "certificate would be asked for (RequireAndVerifyClientCert "
				    "verifies them)",
				    node[TLS_CA_FILE] ? "client_ca_file" : "client_ca");
	if (node[TLS_SANS]) {
		ret = string_list(p, "client_allowed_sans", node[TLS_SANS], NULL, &ts->allowed_sans,
				  &ts->nallowed_sans);
		if (ret)
			return ret;
		if (ts->nallowed_sans && ts->client_auth == TLS_NO_CLIENT_CERT)
			return yamldoc_fail(&p->d, node[TLS_SANS],
					    "client_allowed_sans is set but client_auth_type is "
					    "NoClientCert, so no client certificate would be asked "
					    "for");
	}
	return 0;
}

/* min_version and max_version (TLS12 to TLS13 unless set) into wc, in order. */
static int tls_version_range(struct parse *p, const struct tls_values *t, struct webconfig *wc)
{
	yaml_node_t *const *node = t->node;
	const char *const *val = t->val;
	int ret;

	wc->tls_min_version = 12; /* exporter-toolkit's defaults */
	wc->tls_max_version = 13;
	if (node[TLS_MINV]) {
		ret = tls_version(p, "min_version", node[TLS_MINV], val[TLS_MINV],
				  &wc->tls_min_version);
		if (ret)
			return ret;
	}
	if (node[TLS_MAXV]) {
		ret = tls_version(p, "max_version", node[TLS_MAXV], val[TLS_MAXV],
				  &wc->tls_max_version);
		if (ret)
			return ret;
	}
	if (wc->tls_min_version > wc->tls_max_version)
		return yamldoc_fail(&p->d, node[TLS_MAXV] ? node[TLS_MAXV] : node[TLS_MINV],
				    "min_version TLS1%u is above max_version TLS1%u",
				    wc->tls_min_version - 10, wc->tls_max_version - 10);
	return 0;
}

/*
 * prefer_server_cipher_suites, curve_preferences and cipher_suites, with the
 * versions already in wc, as GnuTLS's priority string; the suites kept in
 * wc->tls (tls.c checks a handshake's suite against them).
 */
static int tls_priority_string(struct parse *p, const struct tls_values *t,
			       const yaml_node_t *tls_key_node, struct webconfig *wc)
{
	yaml_node_t *const *node = t->node;
	struct tls_settings *ts = &wc->tls;
	char **ciphers = NULL, **curves = NULL;
	size_t nciphers = 0, ncurves = 0;
	char why[512];
	bool prefer = true;
	int ret;

	if (node[TLS_PREFER]) {
		ret = yamldoc_get_bool(&p->d, node[TLS_PREFER], &prefer);
		if (ret)
			return ret;
	}
	if (node[TLS_CURVES]) {
		ret = string_list(p, "curve_preferences", node[TLS_CURVES], tlsconf_check_curve,
				  &curves, &ncurves);
		if (ret)
			goto out;
	}
	if (node[TLS_CIPHERS]) {
		ret = string_list(p, "cipher_suites", node[TLS_CIPHERS], tlsconf_check_cipher,
				  &ciphers, &nciphers);
		if (ret)
			goto out;
	}
	ret = tlsconf_priorities(&(struct tlsconf_prio){ .min_version = wc->tls_min_version,
							 .max_version = wc->tls_max_version,
							 .ciphers = (const char *const *)ciphers,
							 .nciphers = nciphers,
							 .curves = (const char *const *)curves,
							 .ncurves = ncurves,
							 .prefer_server = prefer },
				 &ts->priorities, why, sizeof(why));
	if (ret == -ENOMEM) {
		ret = yamldoc_fail_file(&p->d, ret, "out of memory");
	} else if (ret) {
		ret = yamldoc_fail(&p->d, node[TLS_CIPHERS] ? node[TLS_CIPHERS] : tls_key_node,
				   "%s", why);
	} else {
		ts->cipher_suites = ciphers;
		ts->ncipher_suites = nciphers;
		ciphers = NULL;
		nciphers = 0;
	}
out:
	strv_free(curves, ncurves);
	strv_free(ciphers, nciphers);
	return ret;
}

static int parse_tls(struct parse *p, const yaml_node_t *tls_key_node, yaml_node_t *map,
		     struct webconfig *wc)
{
	struct tls_values t = { .val = { "" } };
	struct tls_settings *ts = &wc->tls;
	int ret, i;

	for (i = 0; i < TLS_NKEYS; i++)
		t.val[i] = "";
	if (is_null(map))
		return 0;
	ret = yamldoc_each_key(&p->d, map, "tls_server_config", tls_keys, tls_key, &t);
	if (ret)
		return ret;
	if (!t.first_set) {
		/* exporter-toolkit would ignore these without a certificate: a mistake to say. */
		for (i = 0; i < TLS_NKEYS; i++)
			if (t.node[i])
				return yamldoc_fail(&p->d, tls_key_node,
						    "tls_server_config sets %s but not cert_file "
						    "(or cert) and key_file (or key)",
						    tls_key_names[i]);
		return 0;
	}
	ret = tls_check_pair(p, &t, tls_key_node);
	if (!ret)
		ret = tls_client_policy(p, &t, ts);
	if (!ret)
		ret = tls_version_range(p, &t, wc);
	if (!ret)
		ret = tls_priority_string(p, &t, tls_key_node, wc);
	if (!ret)
		ret = file_or_inline(p, &t, TLS_CERT_FILE, TLS_CERT, &wc->cert_file, &ts->cert_pem);
	if (!ret)
		ret = file_or_inline(p, &t, TLS_KEY_FILE, TLS_KEY, &wc->key_file, &ts->key_pem);
	if (!ret)
		ret = file_or_inline(p, &t, TLS_CA_FILE, TLS_CA, &wc->client_ca_file,
				     &ts->client_ca_pem);
	return ret;
}

/*
 * exporter-toolkit lets these headers be set, some only to these values
 * (NULL: any value), and refuses every other name.
 */
static const struct {
	const char *name;
	const char *const values[3];
} allowed_headers[] = {
	{ "Strict-Transport-Security", { NULL } },
	{ "X-Content-Type-Options", { "nosniff", NULL } },
	{ "X-Frame-Options", { "deny", "sameorigin", NULL } },
	{ "X-XSS-Protection", { NULL } },
	{ "Content-Security-Policy", { NULL } },
};
#define NALLOWED_HEADERS (sizeof(allowed_headers) / sizeof(allowed_headers[0]))
static const char header_names[] = "Strict-Transport-Security, X-Content-Type-Options, "
				   "X-Frame-Options, X-XSS-Protection, Content-Security-Policy";

/*
 * How many pairs map has (0 for null), or -EINVAL if it is not a mapping:
 * "what must be a mapping of what_of, not a list".
 */
static int pair_count(struct parse *p, const yaml_node_t *map, const char *what,
		      const char *what_of, size_t *n)
{
	*n = 0;
	if (is_null(map))
		return 0;
	if (map->type != YAML_MAPPING_NODE)
		return yamldoc_fail(&p->d, map, "%s must be a mapping of %s, not %s", what, what_of,
				    node_kind(map));
	*n = (size_t)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
	return 0;
}

static int parse_headers(struct parse *p, yaml_node_t *map, struct webconfig *wc)
{
	yaml_node_pair_t *pair;
	size_t n;
	int ret = pair_count(p, map, "headers", "header names to values", &n);

	if (ret || !n)
		return ret;
	wc->headers = calloc(2 * n, sizeof(*wc->headers));
	if (!wc->headers)
		return yamldoc_fail_file(&p->d, -ENOMEM, "out of memory");
	for_each_pair(map, pair)
	{
		yaml_node_t *k = yamldoc_node(&p->d, pair->key);
		yaml_node_t *v = yamldoc_node(&p->d, pair->value);
		const char *name, *value;
		size_t h, j;
		int ret;

		if (k->type != YAML_SCALAR_NODE || is_null(k))
			return yamldoc_fail(&p->d, k, "header names must be strings");
		name = scalar(k);
		for (h = 0; h < NALLOWED_HEADERS; h++)
			if (!strcmp(allowed_headers[h].name, name))
				break;
		if (h == NALLOWED_HEADERS)
			return yamldoc_fail(
			    &p->d, k,
			    "HTTP header \"%s\" cannot be configured (exporter-toolkit "
			    "allows: %s)",
			    name, header_names);
		/* Against every earlier name, blank ones too: each is set once. */
		for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < pair; q++)
			if (!strcmp(scalar(yamldoc_node(&p->d, q->key)), name))
				return yamldoc_fail(&p->d, k, "duplicate header \"%s\"", name);
		ret = want_string(p, name, v, &value);
		if (ret)
			return ret;
		if (!*value)
			continue; /* blank: unset, as exporter-toolkit says */
		if (strpbrk(value, "\r\n"))
			return yamldoc_fail(&p->d, v, "the value of %s must be one line", name);
		if (allowed_headers[h].values[0]) {
			for (j = 0; allowed_headers[h].values[j]; j++)
				if (!strcmp(allowed_headers[h].values[j], value))
					break;
			if (!allowed_headers[h].values[j])
				return yamldoc_fail(
				    &p->d, v, "invalid value \"%s\" for %s (expected %s%s%s)",
				    value, name, allowed_headers[h].values[0],
				    allowed_headers[h].values[1] ? " or " : "",
				    allowed_headers[h].values[1] ? allowed_headers[h].values[1]
								 : "");
		}
		wc->headers[2 * wc->nheaders] = strdup(name);
		wc->headers[2 * wc->nheaders + 1] = strdup(value);
		wc->nheaders++;
		if (!wc->headers[2 * wc->nheaders - 2] || !wc->headers[2 * wc->nheaders - 1])
			return yamldoc_fail_file(&p->d, -ENOMEM, "out of memory");
	}
	if (!wc->nheaders) { /* every one blank: no headers, as if none were named */
		free(wc->headers);
		wc->headers = NULL;
	}
	return 0;
}

static int http_key(struct yamldoc *d, const char *k, yaml_node_t *v, void *arg)
{
	struct parse *p = (struct parse *)d;
	struct webconfig *wc = arg;

	if (!strcmp(k, "http2")) {
		bool on = true;
		int ret = is_null(v) ? 0 : yamldoc_get_bool(d, v, &on);

		wc->http2_off = !on;
		return ret;
	}
	if (!strcmp(k, "headers"))
		return parse_headers(p, v, wc);
	return 1;
}

/*
 * A Go duration ("1s", "500ms", "1m30s", "1.5h"; units ns, us, µs, ms, s,
 * m, h) in ns. 0 or -EINVAL; "0" alone is 0.
 */
static int go_duration(const char *s, uint64_t *out)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = { { "ns", 1 },  { "us", 1e3 }, { "\xc2\xb5s", 1e3 }, { "ms", 1e6 },
		      { "s", 1e9 }, { "m", 60e9 }, { "h", 3600e9 } };
	double total = 0;

	if (!strcmp(s, "0")) {
		*out = 0;
		return 0;
	}
	if (!*s)
		return -EINVAL;
	while (*s) {
		char *end;
		double v;
		size_t u, best = SIZE_MAX, best_len = 0;

		if (!(*s >= '0' && *s <= '9') && *s != '.')
			return -EINVAL;
		v = strtod(s, &end);
		if (end == s)
			return -EINVAL;
		s = end;
		/* The longest unit that matches: "ms" before "m". */
		for (u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
			size_t l = strlen(units[u].unit);

			if (!strncmp(s, units[u].unit, l) && l > best_len) {
				best = u;
				best_len = l;
			}
		}
		if (best == SIZE_MAX)
			return -EINVAL;
		total += v * units[best].ns;
		s += best_len;
	}
	if (total >= 1e18)
		return -EINVAL;
	*out = (uint64_t)total;
	return 0;
}

struct rate_values {
	yaml_node_t *interval, *burst;
};

static int rate_key(struct yamldoc *d, const char *k, yaml_node_t *v, void *arg)
{
	struct rate_values *r = arg;

	(void)d;
	if (!strcmp(k, "interval"))
		r->interval = v;
	else if (!strcmp(k, "burst"))
		r->burst = v;
	else
		return 1;
	return 0;
}

static int parse_rate(struct parse *p, yaml_node_t *map, struct webconfig *wc)
{
	struct rate_values r = { 0 };
	unsigned int burst = 0;
	uint64_t ns = 0;
	int ret;

	if (is_null(map))
		return 0;
	ret = yamldoc_each_key(&p->d, map, "rate_limit", "interval, burst", rate_key, &r);
	if (ret)
		return ret;
	if (r.interval && !is_null(r.interval) &&
	    (r.interval->type != YAML_SCALAR_NODE || go_duration(scalar(r.interval), &ns)))
		return yamldoc_fail(&p->d, r.interval,
				    "interval must be a duration such as 1s, 500ms or 1m30s (0 "
				    "turns the limit off)");
	if (r.burst && !is_null(r.burst)) {
		ret = yamldoc_get_unsigned(&p->d, r.burst, 0, 1000000, &burst);
		if (ret)
			return ret;
	}
	if (!ns)
		return 0; /* interval 0: no limit, as in exporter-toolkit */
	if (!burst)
		return yamldoc_fail(&p->d, r.burst ? r.burst : map,
				    "rate_limit needs a burst of at least 1: with 0 every request "
				    "would be refused");
	wc->rate_interval_ns = ns;
	wc->rate_burst = burst;
	return 0;
}

/* The cost of a well-formed bcrypt hash, or -1 if s is not one. */
static int bcrypt_cost(const char *s)
{
	static const char b64[] =
	    "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	int cost, i;

	/* Length first: strchr() below would match the terminating NUL. */
	if (strlen(s) != WEBCONFIG_BCRYPT_LEN || strncmp(s, "$2", 2) || !strchr("aby", s[2]) ||
	    s[3] != '$' || s[6] != '$')
		return -1;
	if (s[4] < '0' || s[4] > '9' || s[5] < '0' || s[5] > '9')
		return -1;
	cost = (s[4] - '0') * 10 + (s[5] - '0');
	if (cost < 4 || cost > 31)
		return -1;
	for (i = 7; i < WEBCONFIG_BCRYPT_LEN; i++)
		if (!strchr(b64, s[i]))
			return -1;
	return cost;
}

static int parse_users(struct parse *p, const yaml_node_t *map, struct webconfig *wc, int *cost)
{
	yaml_node_pair_t *pair;
	size_t n, i;
	int c = pair_count(p, map, "basic_auth_users", "user names to bcrypt hashes", &n);

	if (c || !n)
		return c;
	wc->users = calloc(n, sizeof(*wc->users));
	if (!wc->users)
		return yamldoc_fail_file(&p->d, -ENOMEM, "out of memory");
	for_each_pair(map, pair)
	{
		yaml_node_t *k = yamldoc_node(&p->d, pair->key);
		yaml_node_t *v = yamldoc_node(&p->d, pair->value);
		const char *name;

		if (k->type != YAML_SCALAR_NODE || is_null(k) || !*scalar(k))
			return yamldoc_fail(&p->d, k,
					    "user names in basic_auth_users must be "
					    "non-empty strings");
		name = scalar(k);
		/* Basic auth splits "user:password" at the first colon. */
		if (strchr(name, ':'))
			return yamldoc_fail(&p->d, k, "user name \"%s\" contains ':'", name);
		for (i = 0; i < wc->nusers; i++)
			if (!strcmp(wc->users[i].name, name))
				return yamldoc_fail(&p->d, k, "duplicate user \"%s\"", name);
		/* The hash itself is not quoted: it is a secret worth keeping out of logs. */
		c = v->type == YAML_SCALAR_NODE ? bcrypt_cost(scalar(v)) : -1;
		if (c < 0)
			return yamldoc_fail(&p->d, v,
					    "user \"%s\": not a bcrypt hash ($2a$, $2b$ or $2y$, a "
					    "cost from 04 to 31, '$', 53 characters; htpasswd -nBC "
					    "10 %s makes one)",
					    name, name);
		if (c > *cost)
			*cost = c;
		wc->users[wc->nusers].name = strdup(name);
		wc->users[wc->nusers].hash = strdup(scalar(v));
		wc->nusers++;
		if (!wc->users[wc->nusers - 1].name || !wc->users[wc->nusers - 1].hash)
			return yamldoc_fail_file(&p->d, -ENOMEM, "out of memory");
	}
	return 0;
}

static int top_key(struct yamldoc *d, const char *k, yaml_node_t *v, void *arg)
{
	struct parse *p = arg;

	if (!strcmp(k, "tls_server_config"))
		return parse_tls(p, d->key, v, p->wc);
	if (!strcmp(k, "http_server_config"))
		return is_null(v) ? 0
				  : yamldoc_each_key(d, v, "http_server_config", "http2, headers",
						     http_key, p->wc);
	if (!strcmp(k, "rate_limit"))
		return parse_rate(p, v, p->wc);
	if (!strcmp(k, "basic_auth_users"))
		return parse_users(p, v, p->wc, &p->cost);
	return 1;
}

/* Parses text into p->wc; p->d.file only names the file in errors. */
static int parse_text(struct parse *p, const char *text, size_t len)
{
	const yaml_node_t *root;
	int ret;

	/* Empty text is a valid, empty config. */
	ret = yamldoc_load(&p->d, text, len, NULL);
	if (ret)
		return ret;
	root = yaml_document_get_root_node(&p->d.doc);
	ret = yamldoc_check_nul(&p->d);
	if (!ret && !is_null(root))
		ret = yamldoc_each_key(&p->d, (yaml_node_t *)root, top_level, top_keys, top_key, p);
	yaml_document_delete(&p->d.doc);
	return ret;
}

/* The basic-auth check's state (webconfig_auth.c), its failures worded. */
static int make_auth(struct parse *p, struct webconfig *wc, int cost)
{
	int ret = webconfig_auth_new(cost, &wc->auth);

	if (ret == -ENOMEM)
		return yamldoc_fail_file(&p->d, ret, "out of memory");
	if (ret)
		return yamldoc_fail_file(&p->d, ret, "getrandom: %s", strerror(-ret));
	return 0;
}

int webconfig_parse(const char *name, const char *dir, const char *text, size_t len,
		    struct webconfig *out, char *err, size_t errlen)
{
	struct parse p = { .d = { .file = name, .err = err, .errlen = errlen, .words = web_words },
			   .dir = dir,
			   .wc = out,
			   .cost = 4 };
	int ret;

	memset(out, 0, sizeof(*out));
	if (errlen)
		err[0] = '\0';
	ret = parse_text(&p, text, len);
	if (!ret && out->nusers)
		ret = make_auth(&p, out, p.cost);
	if (ret)
		webconfig_free(out);
	return ret;
}

int webconfig_load(const char *path, struct webconfig *out, char *err, size_t errlen)
{
	struct parse p = { .d = { .file = path, .err = err, .errlen = errlen } };
	const char *slash;
	char *text = NULL, *dir = NULL;
	size_t len = 0;
	int ret;

	memset(out, 0, sizeof(*out));
	if (errlen)
		err[0] = '\0';
	ret = readfile_all(path, MAX_FILE_SIZE, &text, &len);
	if (ret == -ENOMEM)
		return yamldoc_fail_file(&p.d, ret, "out of memory");
	if (ret)
		return yamldoc_fail_file(&p.d, ret, "cannot read web config: %s",
					 readfile_strerror(ret, MAX_FILE_SIZE));
	slash = strrchr(path, '/');
	if (slash) {
		dir = strndup(path, slash == path ? 1 : (size_t)(slash - path));
		if (!dir) {
			free(text);
			return yamldoc_fail_file(&p.d, -ENOMEM, "out of memory");
		}
	}
	ret = webconfig_parse(path, dir, text, len, out, err, errlen);
	free(dir);
	free(text);
	return ret;
}

void webconfig_free(struct webconfig *wc)
{
	size_t i;

	if (!wc)
		return;
	free(wc->cert_file);
	free(wc->key_file);
	free(wc->client_ca_file);
	tlsconf_free(&wc->tls);
	for (i = 0; i < 2 * wc->nheaders; i++)
		free(wc->headers[i]);
	free(wc->headers);
	for (i = 0; i < wc->nusers; i++) {
		free(wc->users[i].name);
		free(wc->users[i].hash);
	}
	free(wc->users);
	webconfig_auth_free(wc->auth);
	memset(wc, 0, sizeof(*wc));
}
