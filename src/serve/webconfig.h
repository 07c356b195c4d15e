/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * webconfig.h - the web configuration file of `iolat serve`: the subset of
 * the Prometheus exporter-toolkit format (--web.config.file) that iolat
 * supports, so one file can serve iolat and the other exporters on a host.
 *
 *   tls_server_config:
 *     cert_file: server.crt          # relative paths: from the file's directory
 *     key_file: server.key
 *     client_auth_type: RequireAndVerifyClientCert   # or NoClientCert (default)
 *     client_ca_file: ca.crt         # required by RequireAndVerifyClientCert
 *     min_version: TLS12             # TLS10..TLS13, default TLS12
 *   basic_auth_users:
 *     alice: $2y$10$...              # bcrypt hashes (htpasswd -nBC 10 alice)
 */
#ifndef IOLAT_WEBCONFIG_H
#define IOLAT_WEBCONFIG_H

#include <stdbool.h>
#include <stddef.h>

struct webconfig_user {
	char *name;
	char *hash; /* validated bcrypt hash: $2a$, $2b$ or $2y$ */
};

struct webconfig_auth; /* private: the check cache and the dummy hash */

struct webconfig {
	/* Both or neither; NULL and NULL means plain HTTP. Paths as resolved. */
	char *cert_file, *key_file;
	/* Their contents, NUL-terminated, read at load: libmicrohttpd takes PEM in memory. */
	char *cert_pem, *key_pem;
	/* Set only with require_client_cert (the loader rejects either alone). */
	char *client_ca_file, *client_ca_pem;
	bool require_client_cert;
	/* Lowest TLS version to accept with TLS: 10..13 for TLS 1.0..1.3 (default 12); else 0. */
	unsigned int tls_min_version;
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
