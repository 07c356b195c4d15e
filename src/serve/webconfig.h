/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * webconfig.h - the web configuration file of `iolat serve`: Prometheus
 * exporter-toolkit's format (--web.config.file), every key of it, so one
 * file serves iolat and node_exporter on a host. docs/serve.md has the whole
 * format; in short:
 *
 *   tls_server_config:
 *     cert_file: server.crt          # or cert: inline PEM; relative paths:
 *     key_file: server.key           #   from the file's directory
 *     client_auth_type: RequireAndVerifyClientCert   # Go's five, NoClientCert default
 *     client_ca_file: ca.crt         # or client_ca: inline PEM
 *     client_allowed_sans: [scraper.example]
 *     min_version: TLS12             # TLS10..TLS13; max_version TLS13 by default
 *     cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]  # Go's names
 *     curve_preferences: [X25519, CurveP256]
 *     prefer_server_cipher_suites: true
 *   http_server_config:
 *     http2: true                    # accepted; HTTP/2 is not offered
 *     headers: {X-Frame-Options: deny}
 *   rate_limit: {interval: 1s, burst: 10}
 *   basic_auth_users:
 *     alice: $2y$10$...              # bcrypt hashes (htpasswd -nBC 10 alice)
 */
#ifndef IOLAT_WEBCONFIG_H
#define IOLAT_WEBCONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "serve/tlsconf.h"

struct webconfig_user {
	char *name;
	char *hash; /* validated bcrypt hash: $2a$, $2b$ or $2y$ */
};

struct webconfig_auth; /* private: the check cache and the dummy hash */

struct webconfig {
	/* The files named, as resolved; NULL when unset or given inline. */
	char *cert_file, *key_file, *client_ca_file;
	/* What the listeners get: tls.cert_pem NULL means plain HTTP. */
	struct tls_settings tls;
	/* TLS versions as 10..13 for TLS 1.0..1.3 (default 12..13); 0 without TLS. */
	unsigned int tls_min_version, tls_max_version;
	/* http_server_config.http2 set to false (true is the default, so that an
	 * empty file loads as all zeroes). libmicrohttpd has no HTTP/2 either way. */
	bool http2_off;
	/* http_server_config.headers, set on every response: name, value pairs. */
	char **headers; /* headers[2 * i] is a name, headers[2 * i + 1] its value */
	size_t nheaders;
	/* rate_limit: a token bucket, burst tokens, one more each interval; 0: off. */
	uint64_t rate_interval_ns;
	unsigned int rate_burst;
	/* Empty (NULL, 0) means no authentication. */
	struct webconfig_user *users;
	size_t nusers;
	struct webconfig_auth *auth; /* non-NULL iff nusers > 0 */
};

/*
 * Reads and validates the file at path into *out, and reads the PEM files it
 * names. An empty file (or one holding only comments) is valid: no TLS, no
 * authentication. Returns 0, or -errno with one line in err saying what is
 * wrong and, where it applies, "path:line:column: " in front: -EINVAL for a
 * bad file, the read's errno for an unreadable config or PEM file. On failure
 * *out is left zeroed; on success release it with webconfig_free().
 */
int webconfig_load(const char *path, struct webconfig *out, char *err, size_t errlen);

/*
 * As webconfig_load, from the len bytes of text (no NUL needed) instead of a
 * file: name stands for the file in messages, and relative PEM paths are
 * taken from dir (NULL: from the working directory). The PEM files are still
 * read. webconfig_load is this after reading the file, with its directory.
 */
int webconfig_parse(const char *name, const char *dir, const char *text, size_t len,
		    struct webconfig *out, char *err, size_t errlen);

/* Frees what load allocated, wiping the private key and the cache; NULL is fine. */
void webconfig_free(struct webconfig *wc);

/*
 * True if user exists and password matches its bcrypt hash. The crypt output
 * is compared in constant time, and an unknown user still costs one bcrypt
 * (against a dummy hash of the configured users' highest cost), so timing does
 * not tell which names exist. An empty password is always false. Successful
 * checks are cached for a minute, keyed by an HMAC-SHA-256 (random key per
 * load) of user and password, so a scrape every few seconds does not cost a
 * bcrypt each time. Safe to call from several threads at once.
 */
bool webconfig_check(const struct webconfig *wc, const char *user, const char *password);

#endif
