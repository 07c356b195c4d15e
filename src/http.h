/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * http.h - the exporter's HTTP side on libmicrohttpd: one daemon per listen
 * address, content negotiation, gzip, TLS and basic auth. It knows nothing
 * of BPF: the metrics body comes from a render callback.
 */
#ifndef IOLAT_HTTP_H
#define IOLAT_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "http_request.h"


/* Renders the metrics in `fmt` into out; returns 0 or -errno. Called with
 * scrapes serialised (one at a time across all listeners). */
typedef int (*http_render_fn)(void *ctx, enum expo_format fmt, struct buf *out);

/* Checks basic-auth credentials; NULL when auth is off. */
typedef bool (*http_auth_fn)(void *ctx, const char *user, const char *password);

struct http_opts {
	const char *const *listen; /* "host:port", ":port", "[v6]:port" */
	size_t nlisten;
	const char *telemetry_path;
	const char *landing_html; /* body of "/" */
	const char *tls_cert_pem, *tls_key_pem; /* both or neither */
	const char *tls_priorities;		/* GnuTLS priority string, or NULL */
	http_auth_fn auth;
	http_render_fn render;
	void *ctx;
};

struct http_server;

/* Binds every address and starts serving; 0 or -errno with a reason in err. */
int http_start(struct http_server **out, const struct http_opts *o, char *err, size_t len);

/* Whether a listen address parses ("host:port", ":port", "[v6]:port"). */
bool http_listen_valid(const char *spec);

/* Stops accepting, closes every connection, frees the server. */
void http_stop(struct http_server *s);

#endif
