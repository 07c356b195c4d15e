// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* http.c - the exporter's HTTP side on libmicrohttpd (http.h). */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <zlib.h>

#include "log.h"

#define MAX_LISTEN 8

static const char *const content_types[] = {
	[EXPO_TEXT] = "text/plain; version=0.0.4; charset=utf-8",
	[EXPO_OPENMETRICS] = "application/openmetrics-text; version=1.0.0; charset=utf-8",
	[EXPO_PROTOBUF] = "application/vnd.google.protobuf; "
			  "proto=io.prometheus.client.MetricFamily; encoding=delimited",
};

struct http_server {
	struct MHD_Daemon *d[MAX_LISTEN];
	size_t n;
	struct http_opts o;
	pthread_mutex_t scrape_lock; /* one scrape at a time: consistent, bounded memory */
	struct buf body, gz;
};

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

static enum MHD_Result send_text(struct MHD_Connection *conn, unsigned int status,
				 const char *ctype, const char *body)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body,
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
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

	if (!s->o.auth)
		return true;
	user = MHD_basic_auth_get_username_password(conn, &pass);
	ok = user && pass && s->o.auth(s->o.ctx, user, pass);
	MHD_free(user);
	MHD_free(pass);
	return ok;
}

static enum MHD_Result deny(struct MHD_Connection *conn)
{
	static const char body[] = "Unauthorized\n";
	struct MHD_Response *r = MHD_create_response_from_buffer(
		sizeof(body) - 1, (void *)body, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	ret = MHD_queue_basic_auth_fail_response(conn, "iolat", r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result send_metrics(struct http_server *s, struct MHD_Connection *conn)
{
	const char *accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
							 MHD_HTTP_HEADER_ACCEPT);
	const char *ae = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_ACCEPT_ENCODING);
	enum expo_format fmt = http_negotiate(accept);
	struct MHD_Response *r = NULL;
	struct buf *out;
	enum MHD_Result ret;
	bool gz;
	int rc;

	pthread_mutex_lock(&s->scrape_lock);
	buf_reset(&s->body);
	rc = s->o.render(s->o.ctx, fmt, &s->body);
	gz = !rc && http_accepts_gzip(ae) && gzip_into(&s->body, &s->gz) == 0;
	out = gz ? &s->gz : &s->body;
	if (!rc && out->data) {
		/* Hand the body over (MHD frees it once sent): no copy, and no
		 * megabytes kept between scrapes. */
		r = MHD_create_response_from_buffer(out->len, out->data, MHD_RESPMEM_MUST_FREE);
		if (r)
			*out = (struct buf){ 0 };
	}
	pthread_mutex_unlock(&s->scrape_lock);
	if (rc)
		return send_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain",
				 "error collecting metrics\n");
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_types[fmt]);
	if (gz)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
	MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, "Accept, Accept-Encoding");
	ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **req_ctx)
{
	struct http_server *s = cls;
	static int first_call;

	(void)version, (void)upload;
	if (*req_ctx == NULL) { /* headers only so far: answer after them */
		*req_ctx = &first_call;
		if (http_route(method, url, s->o.telemetry_path) == HTTP_ROUTE_BAD_METHOD)
			return send_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain",
					 "Method Not Allowed\n");
		return MHD_YES;
	}
	if (*upload_size) { /* a GET with a body: drop it */
		*upload_size = 0;
		return MHD_YES;
	}
	if (!authorized(s, conn))
		return deny(conn);
	switch (http_route(method, url, s->o.telemetry_path)) {
	case HTTP_ROUTE_METRICS:
		return send_metrics(s, conn);
	case HTTP_ROUTE_LANDING:
		return send_text(conn, MHD_HTTP_OK, "text/html; charset=utf-8", s->o.landing_html);
	case HTTP_ROUTE_HEALTH:
		return send_text(conn, MHD_HTTP_OK, "text/plain", "OK\n");
	default:
		return send_text(conn, MHD_HTTP_NOT_FOUND, "text/plain", "Not Found\n");
	}
}

/* "host:port", ":port", "[v6]:port" -> sockaddr. 0 or -EINVAL. */
static int parse_listen(const char *spec, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[256] = "";
	const char *colon = strrchr(spec, ':');
	char *end;
	long port;

	if (!colon || !colon[1])
		return -EINVAL;
	port = strtol(colon + 1, &end, 10);
	if (*end || port < 1 || port > 65535 || (size_t)(colon - spec) >= sizeof(host))
		return -EINVAL;
	memcpy(host, spec, (size_t)(colon - spec));
	host[colon - spec] = '\0';
	memset(ss, 0, sizeof(*ss));
	if (host[0] == '[') {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
		size_t hl = strlen(host);

		if (hl < 2 || host[hl - 1] != ']')
			return -EINVAL;
		host[hl - 1] = '\0';
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, host + 1, &a6->sin6_addr) != 1)
			return -EINVAL;
		*len = sizeof(*a6);
		return 0;
	}
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;

	a4->sin_family = AF_INET;
	a4->sin_port = htons((uint16_t)port);
	if (!host[0])
		a4->sin_addr.s_addr = htonl(INADDR_ANY);
	else if (!strcmp(host, "localhost"))
		a4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	else if (inet_pton(AF_INET, host, &a4->sin_addr) != 1)
		return -EINVAL;
	*len = sizeof(*a4);
	return 0;
}

bool http_listen_valid(const char *spec)
{
	struct sockaddr_storage ss;
	socklen_t len;

	return parse_listen(spec, &ss, &len) == 0;
}

/* libmicrohttpd's own messages go to the debug log: the caller reports
 * failures itself, once, in words the operator can act on. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = '\0';
	log_debug("libmicrohttpd: %s", msg);
}

static struct MHD_Daemon *start_one(struct http_server *s, const struct sockaddr_storage *ss)
{
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
			     MHD_USE_ERROR_LOG | (ss->ss_family == AF_INET6 ? MHD_USE_IPv6 : 0);

	if (s->o.tls_cert_pem)
		return MHD_start_daemon(flags | MHD_USE_TLS, 0, NULL, NULL, handle, s,
			MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
			MHD_OPTION_SOCK_ADDR, ss,
			MHD_OPTION_HTTPS_MEM_CERT, s->o.tls_cert_pem,
			MHD_OPTION_HTTPS_MEM_KEY, s->o.tls_key_pem,
			MHD_OPTION_HTTPS_PRIORITIES,
			s->o.tls_priorities ? s->o.tls_priorities : "NORMAL",
			MHD_OPTION_CONNECTION_LIMIT, (unsigned int)64,
			MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)16,
			MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)10,
			MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32768,
			MHD_OPTION_END);
	return MHD_start_daemon(flags, 0, NULL, NULL, handle, s,
		MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
		MHD_OPTION_SOCK_ADDR, ss,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)64,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)16,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)10,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32768,
		MHD_OPTION_END);
}

int http_start(struct http_server **out, const struct http_opts *o, char *err, size_t len)
{
	struct http_server *s;

	if (!o->nlisten || o->nlisten > MAX_LISTEN) {
		snprintf(err, len, "give 1 to %d listen addresses", MAX_LISTEN);
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->o = *o;
	pthread_mutex_init(&s->scrape_lock, NULL);
	for (size_t i = 0; i < o->nlisten; i++) {
		struct sockaddr_storage ss;
		socklen_t sl;

		if (parse_listen(o->listen[i], &ss, &sl)) {
			snprintf(err, len, "bad listen address '%s' (use host:port, :port or "
				 "[v6]:port)", o->listen[i]);
			http_stop(s);
			return -EINVAL;
		}
		errno = 0;
		s->d[s->n] = start_one(s, &ss);
		if (!s->d[s->n] && errno == EACCES) {
			/* libmicrohttpd leaves bind()'s errno. */
			snprintf(err, len, "cannot listen on '%s': permission denied (a port below "
				 "net.ipv4.ip_unprivileged_port_start, 1024 by default, takes "
				 "CAP_NET_BIND_SERVICE)", o->listen[i]);
			http_stop(s);
			return -EACCES;
		}
		if (!s->d[s->n]) {
			snprintf(err, len, "cannot listen on '%s' (in use, or not an address "
				 "of this host?)", o->listen[i]);
			http_stop(s);
			return -EADDRINUSE;
		}
		s->n++;
	}
	*out = s;
	return 0;
}

void http_stop(struct http_server *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		MHD_stop_daemon(s->d[i]);
	pthread_mutex_destroy(&s->scrape_lock);
	buf_free(&s->body);
	buf_free(&s->gz);
	free(s);
}
