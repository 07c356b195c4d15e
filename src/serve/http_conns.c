// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * http_conns.c - the HTTP server's connection table: every connection
 * libmicrohttpd opens, the limits on them (per address, in all, with
 * eviction of the longest idle) and the timeouts a sweeper thread enforces,
 * with the counts http_get_stats reports (http.h).
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve/http_internal.h"
#include "util/log.h"
#include "util/monotonic.h"

void http_limits_default(struct http_limits *l)
{
	*l = (struct http_limits){ .max_connections = 64,
				   .max_per_ip = 16,
				   .read_header_timeout_s = 10,
				   .write_timeout_s = 30 };
}

static struct conn *conn_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *i =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return i ? i->socket_context : NULL;
}

void http_conns_mark(struct http_server *s, struct MHD_Connection *conn, bool busy)
{
	struct conn *c = conn_of(conn);

	if (!c)
		return;
	pthread_mutex_lock(&s->conn_lock);
	c->busy = busy;
	c->since_ns = monotonic_ns();
	pthread_mutex_unlock(&s->conn_lock);
}

void http_conns_count_body_refused(struct http_server *s)
{
	pthread_mutex_lock(&s->conn_lock);
	s->stats.bodies_refused++;
	pthread_mutex_unlock(&s->conn_lock);
}

/* A request answered (or abandoned): its connection waits for the next. */
void http_conns_completed(void *cls, struct MHD_Connection *conn, void **req_ctx,
			  enum MHD_RequestTerminationCode why)
{
	(void)req_ctx, (void)why;
	http_conns_mark(cls, conn, false);
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
 * only after http_conns_notify(CLOSED), which takes conn_lock (held here). */
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
enum MHD_Result http_conns_accept(void *cls, const struct sockaddr *addr, socklen_t len)
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

/* A connection libmicrohttpd has just opened, into the table (and its TLS
 * session set up by dc's settings). */
static void conn_started(struct daemon_ctx *dc, struct MHD_Connection *conn, void **sock_ctx)
{
	struct http_server *s = dc->s;
	const union MHD_ConnectionInfo *fd, *peer, *d;
	struct conn *c = calloc(1, sizeof(*c));

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
}

void http_conns_notify(void *cls, struct MHD_Connection *conn, void **sock_ctx,
		       enum MHD_ConnectionNotificationCode what)
{
	struct daemon_ctx *dc = cls;
	struct http_server *s = dc->s;
	struct conn *c = *sock_ctx;

	if (what == MHD_CONNECTION_NOTIFY_STARTED) {
		conn_started(dc, conn, sock_ctx);
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

bool http_conns_busy_on(struct http_server *s, const struct MHD_Daemon *d)
{
	bool busy = false;

	pthread_mutex_lock(&s->conn_lock);
	for (struct conn *c = s->conns; c && !busy; c = c->next)
		busy = c->d == d && c->busy && !c->closing;
	pthread_mutex_unlock(&s->conn_lock);
	return busy;
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

int http_conns_start(struct http_server *s)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->wake, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&s->sweeper, NULL, sweep, s))
		return -EAGAIN;
	s->sweeper_on = true;
	return 0;
}

void http_conns_stop(struct http_server *s)
{
	if (s->sweeper_on) {
		pthread_mutex_lock(&s->conn_lock);
		s->stopping = true;
		pthread_cond_signal(&s->wake);
		pthread_mutex_unlock(&s->conn_lock);
		pthread_join(s->sweeper, NULL);
	}
	pthread_cond_destroy(&s->wake);
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
