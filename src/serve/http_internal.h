/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * http_internal.h - the server struct that http.c (requests), http_conns.c
 * (connection accounting, limits and timeouts) and http_listeners.c
 * (listening sockets, their swap and the TLS swap at a reload) share, and
 * the calls each makes into the others. Nothing outside those three
 * includes it: the rest of iolat sees http.h.
 */
#ifndef IOLAT_HTTP_INTERNAL_H
#define IOLAT_HTTP_INTERNAL_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "serve/http.h"
#include "serve/listen_addr.h"
#include "serve/tls.h"

/* A listener: one libmicrohttpd daemon on one socket; spec names it
 * (listen_addr_format), addr is what it was bound from. */
struct listener {
	struct MHD_Daemon *d;
	char spec[128];
	struct listen_addr addr;
};

/* What requests read; replaced whole by http_update. */
struct site {
	char *telemetry_path, *landing_html;
	struct tls_settings tls; /* cert_pem NULL for plain HTTP */
	char **headers;		 /* name, value pairs (http_opts) */
	size_t nheaders;
	uint64_t rate_interval_ns;
	unsigned int rate_burst;
	struct http_limits limits;
	http_auth_fn auth;
	http_render_fn render;
	void *ctx;
};

/* One open connection, from libmicrohttpd's "started" to its "closed". */
struct conn {
	struct tls_conn_head head; /* first: tls.c finds the settings through it */
	struct conn *prev, *next;
	struct MHD_Daemon *d;
	int fd;
	struct sockaddr_storage peer;
	uint64_t since_ns; /* waiting for headers since, or answering since */
	bool busy;	   /* headers in, answer not yet sent */
	bool closing;	   /* shut down by us; libmicrohttpd will close it */
};

/*
 * What one daemon was started with: its own copy of the TLS settings, which
 * its connections' handshakes read, kept until the daemon is stopped (a
 * reload may replace the site while the daemon still drains).
 */
struct daemon_ctx {
	struct daemon_ctx *next;
	struct http_server *s;
	struct MHD_Daemon *d;
	struct tls_settings tls;
};

struct http_server {
	struct listener l[LISTEN_ADDR_MAX];
	size_t n;
	struct daemon_ctx *daemons; /* under conn_lock */
	/* The rate limit's bucket (under req_lock): tokens as of tokens_ns. */
	double tokens;
	uint64_t tokens_ns;
	/* One request at a time, across listeners: consistent scrapes,
	 * bounded memory, and a single point where http_update swaps. */
	pthread_mutex_t req_lock;
	struct site site;    /* under req_lock */
	struct buf body, gz; /* under req_lock */
	/* The connection table, the limits it enforces and their counts. */
	pthread_mutex_t conn_lock;
	struct conn *conns;
	struct http_limits lim;
	struct http_stats stats;
	pthread_cond_t wake; /* the sweeper's tick; stop */
	bool stopping;
	pthread_t sweeper;
	bool sweeper_on;
};

/* http.c: the requests. */

/* libmicrohttpd's access handler: every request, on any listener. */
enum MHD_Result http_answer(void *cls, struct MHD_Connection *conn, const char *url,
			    const char *method, const char *version, const char *upload,
			    size_t *upload_size, void **req_ctx);
/* A site from options (strings copied): 0 or -ENOMEM, t left empty. */
int http_site_of(const struct http_opts *o, struct site *t);
void http_site_free(struct site *t);

/* http_conns.c: the connection table, its limits and timeouts. */

/* libmicrohttpd's hooks: a connection accepted (cls: the server), opened
 * or closed (cls: its daemon_ctx), a request finished (cls: the server). */
enum MHD_Result http_conns_accept(void *cls, const struct sockaddr *addr, socklen_t len);
void http_conns_notify(void *cls, struct MHD_Connection *conn, void **sock_ctx,
		       enum MHD_ConnectionNotificationCode what);
void http_conns_completed(void *cls, struct MHD_Connection *conn, void **req_ctx,
			  enum MHD_RequestTerminationCode why);
/* Marks a connection as answering (or back to waiting for a request). */
void http_conns_mark(struct http_server *s, struct MHD_Connection *conn, bool busy);
/* Counts a request refused for announcing a body. */
void http_conns_count_body_refused(struct http_server *s);
/* Whether a request on d is under way (headers in, answer not sent). */
bool http_conns_busy_on(struct http_server *s, const struct MHD_Daemon *d);
/* Starts the sweeper that enforces the timeouts: 0 or -EAGAIN. Stopping it
 * is safe after a failed start. */
int http_conns_start(struct http_server *s);
void http_conns_stop(struct http_server *s);

/* http_listeners.c: the listening sockets. */

/* Stops every listener, closing their connections. */
void http_listeners_stop(struct http_server *s);

#endif
