// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* http.c - the exporter's HTTP side on libmicrohttpd (http.h). */
#include "serve/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "serve/listen_addr.h"
#include "serve/tls.h"
#include "util/log.h"
#include "util/monotonic.h"
#include "util/strv.h"

static const char *const content_types[] = {
	[EXPO_TEXT] = "text/plain; version=0.0.4; charset=utf-8",
	[EXPO_OPENMETRICS] = "application/openmetrics-text; version=1.0.0; charset=utf-8",
	[EXPO_PROTOBUF] = "application/vnd.google.protobuf; "
			  "proto=io.prometheus.client.MetricFamily; encoding=delimited",
};

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

void http_limits_default(struct http_limits *l)
{
	*l = (struct http_limits){ .max_connections = 64,
				   .max_per_ip = 16,
				   .read_header_timeout_s = 10,
				   .write_timeout_s = 30 };
}

/* gzip-wraps in into out (zlib, windowBits 15 + 16). 0 or -ENOMEM. */
static int gzip_into(const struct buf *in, struct buf *out)
{
	z_stream z = { 0 };
	uLong bound;

	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	bound = deflateBound(&z, in->len) + 32;
	buf_reset(out);
	buf_append(out, "", 0);
	if (out->cap < bound) {
		char *d = realloc(out->data, bound);

		if (!d) {
			deflateEnd(&z);
			return -ENOMEM;
		}
		out->data = d;
		out->cap = bound;
	}
	z.next_in = (Bytef *)in->data;
	z.avail_in = (uInt)in->len;
	z.next_out = (Bytef *)out->data;
	z.avail_out = (uInt)out->cap;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	out->len = z.total_out;
	deflateEnd(&z);
	return 0;
}

/* The web config's headers, on every response (read under req_lock, or
 * before the first request). */
static void add_headers(const struct http_server *s, struct MHD_Response *r)
{
	for (size_t i = 0; i < s->site.nheaders; i++)
		MHD_add_response_header(r, s->site.headers[2 * i], s->site.headers[2 * i + 1]);
}

static enum MHD_Result send_text(const struct http_server *s, struct MHD_Connection *conn,
				 unsigned int status, const char *ctype, const char *body)
{
	struct MHD_Response *r =
	    MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	add_headers(s, r);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static bool authorized(struct http_server *s, struct MHD_Connection *conn)
{
	char *pass = NULL, *user;
	bool ok;

	if (!s->site.auth)
		return true;
	user = MHD_basic_auth_get_username_password(conn, &pass);
	ok = user && pass && s->site.auth(s->site.ctx, user, pass);
	MHD_free(user);
	MHD_free(pass);
	return ok;
}

static enum MHD_Result deny(const struct http_server *s, struct MHD_Connection *conn)
{
	static const char body[] = "Unauthorized\n";
	struct MHD_Response *r =
	    MHD_create_response_from_buffer(sizeof(body) - 1, (void *)body, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	add_headers(s, r);
	ret = MHD_queue_basic_auth_fail_response(conn, "iolat", r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result send_metrics(struct http_server *s, struct MHD_Connection *conn)
{
	const char *accept =
	    MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	const char *ae =
	    MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	enum expo_format fmt = http_negotiate(accept);
	struct MHD_Response *r = NULL;
	struct buf *out;
	enum MHD_Result ret;
	bool gz;
	int rc;

	buf_reset(&s->body);
	rc = s->site.render(s->site.ctx, fmt, &s->body);
	gz = !rc && http_accepts_gzip(ae) && gzip_into(&s->body, &s->gz) == 0;
	out = gz ? &s->gz : &s->body;
	if (!rc && out->data) {
		/* Hand the body over (MHD frees it once sent): no copy, and no
		 * megabytes kept between scrapes. */
		r = MHD_create_response_from_buffer(out->len, out->data, MHD_RESPMEM_MUST_FREE);
		if (r)
			*out = (struct buf){ 0 };
	}
	if (rc)
		return send_text(s, conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain",
				 "error collecting metrics\n");
	if (!r)
		return MHD_NO;
	add_headers(s, r);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_types[fmt]);
	if (gz)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
	MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, "Accept, Accept-Encoding");
	ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

static struct conn *conn_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *i =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return i ? i->socket_context : NULL;
}

/* Marks a connection as answering (or back to waiting for a request). */
static void conn_mark(struct http_server *s, struct MHD_Connection *conn, bool busy)
{
	struct conn *c = conn_of(conn);

	if (!c)
		return;
	pthread_mutex_lock(&s->conn_lock);
	c->busy = busy;
	c->since_ns = monotonic_ns();
	pthread_mutex_unlock(&s->conn_lock);
}

/* Whether a request announces a body: a GET needs none, and reading one
 * would hold a connection as long as the client likes. */
static bool has_body(struct MHD_Connection *conn)
{
	const char *cl =
	    MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	const char *te =
	    MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);

	return te || (cl && strspn(cl, "0") != strlen(cl));
}

/*
 * Takes a token from the rate limit's bucket (under req_lock): false when
 * it is empty. It holds rate_burst tokens and gains one per interval.
 */
static bool rate_allows(struct http_server *s)
{
	uint64_t now = monotonic_ns();
	double burst = s->site.rate_burst;

	if (!s->site.rate_interval_ns)
		return true;
	if (s->tokens_ns)
		s->tokens += (double)(now - s->tokens_ns) / (double)s->site.rate_interval_ns;
	else
		s->tokens = burst;
	if (s->tokens > burst)
		s->tokens = burst;
	s->tokens_ns = now;
	if (s->tokens < 1)
		return false;
	s->tokens -= 1;
	return true;
}

static enum MHD_Result route(struct http_server *s, struct MHD_Connection *conn, const char *method,
			     const char *url)
{
	enum http_route where = http_route(method, url, s->site.telemetry_path);

	/*
	 * A health check says only that the process answers: no credentials
	 * (Kubernetes and systemd probes have none) and no rate limit (a scrape
	 * storm must not fail the probe and restart the exporter).
	 */
	if (where == HTTP_ROUTE_HEALTH)
		return send_text(s, conn, MHD_HTTP_OK, "text/plain", "OK\n");
	if (!rate_allows(s))
		return send_text(s, conn, MHD_HTTP_TOO_MANY_REQUESTS, "text/plain",
				 "Too Many Requests\n");
	if (!authorized(s, conn))
		return deny(s, conn);
	switch (where) {
	case HTTP_ROUTE_METRICS:
		return send_metrics(s, conn);
	case HTTP_ROUTE_LANDING:
		return send_text(s, conn, MHD_HTTP_OK, "text/html; charset=utf-8",
				 s->site.landing_html);
	default:
		return send_text(s, conn, MHD_HTTP_NOT_FOUND, "text/plain", "Not Found\n");
	}
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **req_ctx)
{
	struct http_server *s = cls;
	static int first_call; /* never written: its address marks "headers seen" */
	enum MHD_Result ret;

	(void)version, (void)upload, (void)upload_size;
	if (*req_ctx == NULL) { /* headers only so far: answer after them */
		*req_ctx = &first_call;
		conn_mark(s, conn, true);
		if (http_route(method, url, "") == HTTP_ROUTE_BAD_METHOD) {
			pthread_mutex_lock(&s->req_lock); /* the site's headers */
			ret = send_text(s, conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain",
					"Method Not Allowed\n");
			pthread_mutex_unlock(&s->req_lock);
			return ret;
		}
		if (has_body(conn)) {
			pthread_mutex_lock(&s->conn_lock);
			s->stats.bodies_refused++;
			pthread_mutex_unlock(&s->conn_lock);
			pthread_mutex_lock(&s->req_lock);
			ret = send_text(s, conn, MHD_HTTP_CONTENT_TOO_LARGE, "text/plain",
					"A request body is not accepted here\n");
			pthread_mutex_unlock(&s->req_lock);
			return ret;
		}
		return MHD_YES;
	}
	pthread_mutex_lock(&s->req_lock);
	ret = route(s, conn, method, url);
	pthread_mutex_unlock(&s->req_lock);
	return ret;
}

/* A request answered (or abandoned): its connection waits for the next. */
static void on_completed(void *cls, struct MHD_Connection *conn, void **req_ctx,
			 enum MHD_RequestTerminationCode why)
{
	(void)req_ctx, (void)why;
	conn_mark(cls, conn, false);
}

/* Same client address (the port aside)? */
static bool same_peer(const struct sockaddr *a, const struct sockaddr_storage *b)
{
	if (a->sa_family != b->ss_family)
		return false;
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->sa_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr,
			       sizeof(struct in6_addr));
	return false;
}

/* Closes a connection from outside libmicrohttpd's thread: its next read
 * sees the end and it cleans up. The descriptor is still open: it is closed
 * only after on_connection(CLOSED), which takes conn_lock (held here). */
static void conn_close(struct conn *c)
{
	shutdown(c->fd, SHUT_RDWR);
	c->closing = true;
}

/*
 * Called for each accepted connection before libmicrohttpd serves it: the
 * per-address cap, then the global one, which makes room by closing the
 * connection that has waited longest for a request, so a flood of idle or
 * half-open connections cannot keep a scraper out.
 */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
	struct http_server *s = cls;
	struct conn *oldest = NULL;
	unsigned int open = 0, same = 0;
	enum MHD_Result ret = MHD_YES;

	(void)len;
	pthread_mutex_lock(&s->conn_lock);
	for (struct conn *c = s->conns; c; c = c->next) {
		if (c->closing)
			continue;
		open++;
		same += same_peer(addr, &c->peer);
		if (!c->busy && (!oldest || c->since_ns < oldest->since_ns))
			oldest = c;
	}
	if (same >= s->lim.max_per_ip) {
		s->stats.refused_per_ip++;
		ret = MHD_NO;
	} else if (open >= s->lim.max_connections) {
		if (oldest) {
			conn_close(oldest);
			s->stats.evicted++;
		} else {
			s->stats.refused_full++;
			ret = MHD_NO;
		}
	}
	pthread_mutex_unlock(&s->conn_lock);
	return ret;
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **sock_ctx,
			  enum MHD_ConnectionNotificationCode what)
{
	struct daemon_ctx *dc = cls;
	struct http_server *s = dc->s;
	struct conn *c = *sock_ctx;

	if (what == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *fd, *peer, *d;

		c = calloc(1, sizeof(*c));
		fd = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		peer = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		d = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_DAEMON);
		if (!c || !fd || !peer || !d) {
			free(c);
			/* Without its policy a TLS handshake would ask too little: close. */
			if (dc->tls.cert_pem && fd)
				shutdown(fd->connect_fd, SHUT_RDWR);
			return; /* untracked: the timeouts of libmicrohttpd still apply */
		}
		c->head.tls = &dc->tls;
		/* Before the handshake, which runs when the client's hello is read. */
		if (dc->tls.cert_pem && tls_conn_start(conn, &dc->tls)) {
			log_warn("a TLS connection without a TLS session: closed");
			shutdown(fd->connect_fd, SHUT_RDWR);
		}
		c->fd = fd->connect_fd;
		c->d = d->daemon;
		memcpy(&c->peer, peer->client_addr,
		       peer->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
								: sizeof(struct sockaddr_in));
		c->since_ns = monotonic_ns();
		pthread_mutex_lock(&s->conn_lock);
		c->next = s->conns;
		if (s->conns)
			s->conns->prev = c;
		s->conns = c;
		pthread_mutex_unlock(&s->conn_lock);
		*sock_ctx = c;
		return;
	}
	if (!c)
		return;
	pthread_mutex_lock(&s->conn_lock);
	if (c->prev)
		c->prev->next = c->next;
	else
		s->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	pthread_mutex_unlock(&s->conn_lock);
	free(c);
	*sock_ctx = NULL;
}

/* Every 250 ms: closes connections past their header or write time. */
static void *sweep(void *arg)
{
	struct http_server *s = arg;

	pthread_mutex_lock(&s->conn_lock);
	while (!s->stopping) {
		uint64_t now = monotonic_ns();

		for (struct conn *c = s->conns; c; c = c->next) {
			uint64_t limit = (uint64_t)(c->busy ? s->lim.write_timeout_s
							    : s->lim.read_header_timeout_s) *
					 NSEC_PER_SEC;

			if (c->closing || now - c->since_ns <= limit)
				continue;
			conn_close(c);
			(*(c->busy ? &s->stats.write_timeouts : &s->stats.header_timeouts))++;
		}
		struct timespec at = monotonic_timespec(monotonic_ns() + 250 * NSEC_PER_MSEC);

		pthread_cond_timedwait(&s->wake, &s->conn_lock, &at);
	}
	pthread_mutex_unlock(&s->conn_lock);
	return NULL;
}

const char *http_listen_describe(const char *spec, char *buf, size_t len)
{
	struct listen_addr a[LISTEN_ADDR_MAX];
	const char *const one[] = { spec };
	char err[256];
	size_t n;

	/* For "fd:N", the address systemd bound, as a listen address is written. */
	if (strncmp(spec, LISTEN_FD_PREFIX, strlen(LISTEN_FD_PREFIX)) ||
	    listen_addr_expand(one, 1, a, &n, err, sizeof(err)))
		return spec;
	a[0].kind = LISTEN_ADDR;
	listen_addr_format(&a[0], buf, len);
	return buf;
}

/* libmicrohttpd's own messages go to the debug log: the caller reports
 * failures itself, once, in words the operator can act on. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];

	(void)cls;
	if (!log_enabled(LOG_DEBUG_L))
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = '\0';
	log_debug("libmicrohttpd", LOG_STR("err", msg));
}

/* Room for every option daemon_options can add, MHD_OPTION_END included. */
#define MAX_MHD_OPTIONS 16

/*
 * The one list of libmicrohttpd options for a site, so the daemons that
 * serve and the TLS check that vets a certificate first cannot drift apart.
 * With dc NULL it is the check's list: no socket and no connection hooks,
 * only the logger and tls. Otherwise the listener is listen_fd when that is
 * not -1, else a new socket on ss, and tls is dc's. The limits are ours
 * (on_accept, sweep); libmicrohttpd's connection cap sits above them, with
 * room for connections we shut down that it has not yet reaped.
 * libmicrohttpd reads the TLS strings only while the daemon starts.
 */
static void daemon_options(struct MHD_OptionItem o[MAX_MHD_OPTIONS], struct daemon_ctx *dc,
			   const struct site *site, const struct tls_settings *tls,
			   const struct sockaddr_storage *ss, int listen_fd)
{
	size_t n = 0;

#define OPT(name, value, ptr) (o[n++] = (struct MHD_OptionItem){ name, (intptr_t)(value), ptr })
	OPT(MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL);
	if (dc) {
		OPT(MHD_OPTION_NOTIFY_CONNECTION, on_connection, dc);
		OPT(MHD_OPTION_NOTIFY_COMPLETED, on_completed, dc->s);
		OPT(MHD_OPTION_CONNECTION_LIMIT, 2 * site->limits.max_connections + 16, NULL);
		OPT(MHD_OPTION_CONNECTION_TIMEOUT, site->limits.read_header_timeout_s, NULL);
		OPT(MHD_OPTION_CONNECTION_MEMORY_LIMIT, 32768, NULL);
		if (listen_fd >= 0)
			OPT(MHD_OPTION_LISTEN_SOCKET, listen_fd, NULL);
		else
			OPT(MHD_OPTION_SOCK_ADDR, 0, (void *)ss);
	}
	if (tls->cert_pem) {
		OPT(MHD_OPTION_HTTPS_MEM_CERT, 0, tls->cert_pem);
		OPT(MHD_OPTION_HTTPS_MEM_KEY, 0, tls->key_pem);
		OPT(MHD_OPTION_HTTPS_PRIORITIES, 0, tls->priorities ? tls->priorities : "NORMAL");
		/* Named in the certificate request; what is asked for is tls.c's. */
		if (tls->client_ca_pem)
			OPT(MHD_OPTION_HTTPS_MEM_TRUST, 0, tls->client_ca_pem);
	}
	OPT(MHD_OPTION_END, 0, NULL);
#undef OPT
}

/* One daemon for one address with a site's settings (daemon_options). */
static struct MHD_Daemon *start_daemon(struct http_server *s, const struct sockaddr_storage *ss,
				       const struct site *site, int listen_fd)
{
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC |
			     MHD_USE_ERROR_LOG | (ss->ss_family == AF_INET6 ? MHD_USE_IPv6 : 0) |
			     (site->tls.cert_pem ? MHD_USE_TLS : 0);
	struct MHD_OptionItem o[MAX_MHD_OPTIONS];
	struct daemon_ctx *dc = calloc(1, sizeof(*dc));

	if (!dc || tlsconf_copy(&dc->tls, &site->tls)) {
		free(dc);
		errno = ENOMEM;
		return NULL;
	}
	dc->s = s;
	daemon_options(o, dc, site, &dc->tls, ss, listen_fd);
	dc->d = MHD_start_daemon(flags, 0, on_accept, s, handle, s, MHD_OPTION_ARRAY, o,
				 MHD_OPTION_END);
	if (!dc->d) {
		int e = errno;

		tlsconf_free(&dc->tls);
		free(dc);
		errno = e; /* bind()'s, for the caller's message */
		return NULL;
	}
	pthread_mutex_lock(&s->conn_lock);
	dc->next = s->daemons;
	s->daemons = dc;
	pthread_mutex_unlock(&s->conn_lock);
	return dc->d;
}

/* Stops d (every connection closed when this returns) and frees its context. */
static void stop_daemon(struct http_server *s, struct MHD_Daemon *d)
{
	struct daemon_ctx **pp, *dc = NULL;

	MHD_stop_daemon(d);
	pthread_mutex_lock(&s->conn_lock);
	for (pp = &s->daemons; *pp; pp = &(*pp)->next)
		if ((*pp)->d == d) {
			dc = *pp;
			*pp = dc->next;
			break;
		}
	pthread_mutex_unlock(&s->conn_lock);
	if (dc) {
		tlsconf_free(&dc->tls);
		free(dc);
	}
}

static void site_free(struct site *t)
{
	free(t->telemetry_path);
	free(t->landing_html);
	tlsconf_free(&t->tls);
	strv_free(t->headers, 2 * t->nheaders);
	memset(t, 0, sizeof(*t));
}

static int site_of(const struct http_opts *o, struct site *t)
{
	bool oom = false;

	*t = (struct site){ .limits = o->limits,
			    .auth = o->auth,
			    .render = o->render,
			    .ctx = o->ctx,
			    .rate_interval_ns = o->rate_interval_ns,
			    .rate_burst = o->rate_burst };
	t->telemetry_path = strv_dup_or_null(o->telemetry_path, &oom);
	t->landing_html = strv_dup_or_null(o->landing_html ? o->landing_html : "", &oom);
	if (o->tls && o->tls->cert_pem)
		oom |= tlsconf_copy(&t->tls, o->tls) != 0;
	/* name, value pairs */
	t->headers = strv_dup((char *const *)o->headers, 2 * o->nheaders, &oom);
	if (t->headers)
		t->nheaders = o->nheaders;
	if (oom)
		site_free(t);
	return oom ? -ENOMEM : 0;
}

static bool same_tls(const struct site *a, const struct site *b)
{
	return tlsconf_equal(&a->tls, &b->tls);
}

/* Whether libmicrohttpd takes a site's certificate and key, tried without a
 * socket, so a bad pair is found before any listener is touched. */
static bool tls_loads(const struct site *t)
{
	struct MHD_OptionItem o[MAX_MHD_OPTIONS];
	struct MHD_Daemon *d;

	if (!t->tls.cert_pem)
		return true;
	daemon_options(o, NULL, t, &t->tls, NULL, -1);
	d = MHD_start_daemon(MHD_USE_NO_LISTEN_SOCKET | MHD_USE_TLS | MHD_USE_ERROR_LOG, 0, NULL,
			     NULL, handle, NULL, MHD_OPTION_ARRAY, o, MHD_OPTION_END);
	if (d)
		MHD_stop_daemon(d);
	return d != NULL;
}

bool http_tls_pair_loads(const char *cert_pem, const char *key_pem)
{
	const struct site t = { .tls = { .cert_pem = (char *)cert_pem,
					 .key_pem = (char *)key_pem,
					 .priorities = (char *)"NORMAL" } };

	return tls_loads(&t);
}

/* Waits (up to the write timeout) until no request on d is under way, then
 * stops it. d no longer accepts (quiesced). */
static void drain_and_stop(struct http_server *s, struct MHD_Daemon *d)
{
	uint64_t until = monotonic_ns() + (uint64_t)s->lim.write_timeout_s * NSEC_PER_SEC;

	for (;;) {
		bool busy = false;

		pthread_mutex_lock(&s->conn_lock);
		for (struct conn *c = s->conns; c && !busy; c = c->next)
			busy = c->d == d && c->busy && !c->closing;
		pthread_mutex_unlock(&s->conn_lock);
		if (!busy || monotonic_ns() > until)
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000000L }, NULL);
	}
	stop_daemon(s, d);
}

static int find_listener(const struct listener *l, size_t n, const char *spec)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(l[i].spec, spec))
			return (int)i;
	return -1;
}

/*
 * The listeners o wants, in next (*nnext of them; a listen address may ask
 * for several sockets, listen_addr.h): kept ones as they are, successors
 * for those whose TLS settings change (started on the old one's socket,
 * which stops accepting: moved[i] says which old one), new ones bound. On
 * failure everything started is undone and the old listeners accept again.
 */
static int plan_listeners(struct http_server *s, const struct http_opts *o,
			  const struct site *fresh, struct listener *next, size_t *nnext,
			  int *moved, char *err, size_t len)
{
	bool tls_changed = !same_tls(&s->site, fresh);
	struct listen_addr want[LISTEN_ADDR_MAX];
	size_t i, n;
	int rc;

	if (!o->nlisten) {
		snprintf(err, len, "give a listen address");
		return -EINVAL;
	}
	rc = listen_addr_expand(o->listen, o->nlisten, want, &n, err, len);
	if (rc)
		return rc;
	rc = -EADDRINUSE;
	if (tls_changed && !tls_loads(fresh)) {
		snprintf(err, len,
			 "the TLS certificate and key do not load (do they match, and "
			 "are they PEM?)");
		return -EKEYREJECTED;
	}
	for (i = 0; i < n; i++) {
		const struct sockaddr_storage *ss = &want[i].ss;
		int old;

		moved[i] = -1;
		next[i].addr = want[i];
		listen_addr_format(&want[i], next[i].spec, sizeof(next[i].spec));
		next[i].d = NULL;
		old = find_listener(s->l, s->n, next[i].spec);
		if (old >= 0 && !tls_changed) {
			next[i].d = s->l[old].d;
			continue;
		}
		if (old >= 0) {
			struct MHD_Daemon *was = s->l[old].d;
			int fd = (int)MHD_quiesce_daemon(was);

			next[i].d = fd < 0 ? NULL : start_daemon(s, ss, fresh, fd);
			if (next[i].d) {
				moved[i] = old;
			} else if (fd >= 0) {
				/* Give the socket back to a daemon as it was. */
				s->l[old].d = start_daemon(s, ss, &s->site, fd);
				drain_and_stop(s, was);
			}
		} else {
			int fd = want[i].fd;

			if (fd < 0) {
				rc = listen_addr_open(&want[i], &fd, err, len);
				if (rc)
					break;
			}
			/* libmicrohttpd owns fd from here, closing it if it fails. */
			next[i].d = start_daemon(s, ss, fresh, fd);
			if (next[i].d && want[i].note[0])
				log_info("listen address", LOG_STR("address", want[i].spec),
					 LOG_STR("note", want[i].note));
		}
		if (!next[i].d) {
			snprintf(err, len, "cannot serve on '%s' (%s)", next[i].spec,
				 moved[i] < 0 && old < 0 ? "libmicrohttpd refused the socket"
							 : "the TLS successor did not start");
			break;
		}
	}
	if (i == n) {
		*nnext = n;
		return 0;
	}
	while (i--) {
		if (find_listener(s->l, s->n, next[i].spec) >= 0 && moved[i] < 0)
			continue; /* kept */
		if (moved[i] >= 0) {
			int fd = (int)MHD_quiesce_daemon(next[i].d);
			struct MHD_Daemon *old = s->l[moved[i]].d;

			drain_and_stop(s, next[i].d);
			s->l[moved[i]].d =
			    fd < 0 ? NULL : start_daemon(s, &next[i].addr.ss, &s->site, fd);
			drain_and_stop(s, old);
			if (!s->l[moved[i]].d)
				log_error("lost a listener while undoing a reload",
					  LOG_STR("address", next[i].spec));
		} else {
			stop_daemon(s, next[i].d);
		}
	}
	return rc;
}

int http_update(struct http_server *s, const struct http_opts *o, void (*commit)(void *),
		void *commit_ctx, char *err, size_t len)
{
	struct listener next[LISTEN_ADDR_MAX], old[LISTEN_ADDR_MAX];
	int moved[LISTEN_ADDR_MAX];
	size_t nold = s->n, nnext = 0;
	struct site fresh;
	int rc;

	if (site_of(o, &fresh)) {
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	rc = plan_listeners(s, o, &fresh, next, &nnext, moved, err, len);
	if (rc) {
		site_free(&fresh);
		return rc;
	}
	memcpy(old, s->l, sizeof(old));
	pthread_mutex_lock(&s->req_lock);
	pthread_mutex_lock(&s->conn_lock);
	s->lim = fresh.limits;
	pthread_mutex_unlock(&s->conn_lock);
	{
		struct site t = s->site;

		s->site = fresh;
		fresh = t;
	}
	memcpy(s->l, next, sizeof(next));
	s->n = nnext;
	s->tokens_ns = 0; /* after a reload the rate limit starts with a full bucket */
	if (commit)
		commit(commit_ctx);
	pthread_mutex_unlock(&s->req_lock);
	site_free(&fresh);
	/* The old listeners not kept: answer what is under way, then close. */
	for (size_t i = 0; i < nold; i++) {
		bool kept = false, handed_over = false;

		for (size_t j = 0; j < s->n; j++) {
			kept |= s->l[j].d == old[i].d;
			handed_over |= moved[j] == (int)i;
		}
		if (kept)
			continue;
		if (handed_over) {
			drain_and_stop(s, old[i].d);
		} else {
			int fd = (int)MHD_quiesce_daemon(old[i].d);

			drain_and_stop(s, old[i].d);
			if (fd >= 0)
				close(fd);
		}
	}
	return 0;
}

int http_start(struct http_server **out, const struct http_opts *o, char *err, size_t len)
{
	struct http_server *s = calloc(1, sizeof(*s));
	pthread_condattr_t ca;
	int rc;

	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->req_lock, NULL);
	pthread_mutex_init(&s->conn_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->wake, &ca);
	pthread_condattr_destroy(&ca);
	s->lim = o->limits;
	if (pthread_create(&s->sweeper, NULL, sweep, s)) {
		http_stop(s);
		snprintf(err, len, "cannot start a thread");
		return -EAGAIN;
	}
	s->sweeper_on = true;
	/*
	 * A request may come as soon as the first listener starts (socket
	 * activation queues them before iolat runs), before http_update sets the
	 * site: it is answered with this one's routes. Without TLS, so that
	 * plan_listeners still sees new TLS settings and vets them first.
	 */
	if (site_of(o, &s->site)) {
		http_stop(s);
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	tlsconf_free(&s->site.tls);
	/* Set before the first listener starts: a request's callbacks may ask the
	 * server for its statistics. */
	*out = s;
	rc = http_update(s, o, NULL, NULL, err, len);
	if (rc) {
		*out = NULL;
		http_stop(s);
	}
	return rc;
}

void http_get_stats(struct http_server *s, struct http_stats *out)
{
	pthread_mutex_lock(&s->conn_lock);
	*out = s->stats;
	out->open = 0;
	for (struct conn *c = s->conns; c; c = c->next)
		out->open++;
	pthread_mutex_unlock(&s->conn_lock);
}

void http_stop(struct http_server *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		stop_daemon(s, s->l[i].d);
	if (s->sweeper_on) {
		pthread_mutex_lock(&s->conn_lock);
		s->stopping = true;
		pthread_cond_signal(&s->wake);
		pthread_mutex_unlock(&s->conn_lock);
		pthread_join(s->sweeper, NULL);
	}
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->req_lock);
	pthread_mutex_destroy(&s->conn_lock);
	site_free(&s->site);
	buf_free(&s->body);
	buf_free(&s->gz);
	free(s);
}
