/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * http.h - the exporter's HTTP side on libmicrohttpd: one daemon per
 * listening socket (listen_addr.h makes them), content negotiation, gzip,
 * TLS (set up per connection in tls.c), basic auth, configured headers and
 * a rate limit. It knows nothing of BPF: the metrics body comes from a
 * render callback. The health checks answer without credentials and outside
 * the rate limit: probes need no secrets.
 */
#ifndef IOLAT_HTTP_H
#define IOLAT_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "serve/http_request.h"
#include "serve/tlsconf.h"
#include "util/buf.h"

/* Renders the metrics in `fmt` into out; returns 0 or -errno. Called with
 * requests serialised (one at a time across all listeners). */
typedef int (*http_render_fn)(void *ctx, enum expo_format fmt, struct buf *out);

/* Checks basic-auth credentials; NULL when auth is off. */
typedef bool (*http_auth_fn)(void *ctx, const char *user, const char *password);

/* The most --web.max-connections can be: each connection holds a descriptor. */
#define HTTP_MAX_CONNECTIONS 4096

/*
 * What keeps a client from starving the others. Past max_connections a new
 * connection replaces the one that has waited longest without a request
 * under way (a half-open or idle one); if every connection has a request
 * under way, the new one is refused. Timeouts close a connection that has
 * not sent its headers read_header_timeout_s after connecting (or after its
 * last response), and a request not answered write_timeout_s after its
 * headers came (a client that reads its answer too slowly).
 */
struct http_limits {
	unsigned int max_connections, max_per_ip;
	unsigned int read_header_timeout_s, write_timeout_s;
};

/* 64 connections, 16 per address, 10 s for headers, 30 s to answer. */
void http_limits_default(struct http_limits *l);

struct http_opts {
	const char *const *listen; /* as listen_addr.h reads them, "fd:N" too */
	size_t nlisten;
	const char *telemetry_path;
	const char *landing_html; /* body of "/" */
	/* NULL, or with cert_pem NULL: plain HTTP. Copied, as the strings are. */
	const struct tls_settings *tls;
	/* Set on every response: headers[2 * i] a name, headers[2 * i + 1] its value. */
	const char *const *headers;
	size_t nheaders;
	/*
	 * A token bucket over every request but the health checks: rate_burst
	 * requests at once, one more each rate_interval_ns; past it, 429.
	 * rate_interval_ns 0: no limit.
	 */
	uint64_t rate_interval_ns;
	unsigned int rate_burst;
	struct http_limits limits;
	http_auth_fn auth;
	http_render_fn render;
	void *ctx;
};

/* Connections closed or refused by the limits, since start; and the
 * connections open now (each until libmicrohttpd has closed it). */
struct http_stats {
	unsigned long long refused_per_ip, refused_full, evicted, header_timeouts, write_timeouts,
	    bodies_refused;
	unsigned int open;
};

struct http_server;

/* Binds every address (listen_addr.h says how) and starts serving; 0 or
 * -errno with a reason in err (-EKEYREJECTED: the TLS certificate, key or
 * client CAs do not load). The strings in o are copied. *out is set before
 * the first request can come (a callback may use it), and back to NULL on
 * failure. */
int http_start(struct http_server **out, const struct http_opts *o, char *err, size_t len);

/*
 * Moves a running server to new options, as one step a request cannot see
 * half of. First what can fail: addresses new to o are bound, and when the
 * TLS settings changed every listener gets a successor on its own socket.
 * If any of that fails, everything is undone and -errno returned with a
 * reason in err: -EKEYREJECTED for TLS settings libmicrohttpd refuses,
 * -EINVAL or -E2BIG for addresses, else the socket's errno. Otherwise,
 * with no request being handled, the paths, page, callbacks and limits are
 * swapped and commit(commit_ctx) runs (so the caller swaps its own state
 * at the same moment); then listeners no longer
 * wanted stop accepting, finish the requests under way (up to the write
 * timeout) and close. Listeners whose address and TLS settings are
 * unchanged keep running untouched.
 */
int http_update(struct http_server *s, const struct http_opts *o, void (*commit)(void *),
		void *commit_ctx, char *err, size_t len);

/* Whether libmicrohttpd takes this certificate and key (PEM) as a pair,
 * tried without a socket: a swapped or mismatched pair is found at load. */
bool http_tls_pair_loads(const char *cert_pem, const char *key_pem);

/* spec for a log line: for "fd:N" the address systemd bound, in buf. */
const char *http_listen_describe(const char *spec, char *buf, size_t len);

void http_get_stats(struct http_server *s, struct http_stats *out);

/* Stops accepting, closes every connection, frees the server. */
void http_stop(struct http_server *s);

#endif
