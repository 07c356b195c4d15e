// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * http.c - the exporter's HTTP server on libmicrohttpd (http.h): its start
 * and stop, and the answer to each request (routes, rate limit, basic
 * auth, the metrics body with gzip, configured headers). The connections
 * are http_conns.c's, the listening sockets and the swap at a reload
 * http_listeners.c's.
 */
#include "serve/http.h"

#include <errno.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "serve/http_internal.h"
#include "util/monotonic.h"
#include "util/strv.h"

static const char *const content_types[] = {
	[EXPO_TEXT] = "text/plain; version=0.0.4; charset=utf-8",
	[EXPO_OPENMETRICS] = "application/openmetrics-text; version=1.0.0; charset=utf-8",
	[EXPO_PROTOBUF] = "application/vnd.google.protobuf; "
			  "proto=io.prometheus.client.MetricFamily; encoding=delimited",
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

enum MHD_Result http_answer(void *cls, struct MHD_Connection *conn, const char *url,
			    const char *method, const char *version, const char *upload,
			    size_t *upload_size, void **req_ctx)
{
	struct http_server *s = cls;
	static int first_call; /* never written: its address marks "headers seen" */
	enum MHD_Result ret;

	(void)version, (void)upload, (void)upload_size;
	if (*req_ctx == NULL) { /* headers only so far: answer after them */
		*req_ctx = &first_call;
		http_conns_mark(s, conn, true);
		if (http_route(method, url, "") == HTTP_ROUTE_BAD_METHOD) {
			pthread_mutex_lock(&s->req_lock); /* the site's headers */
			ret = send_text(s, conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain",
					"Method Not Allowed\n");
			pthread_mutex_unlock(&s->req_lock);
			return ret;
		}
		if (has_body(conn)) {
			http_conns_count_body_refused(s);
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

void http_site_free(struct site *t)
{
	free(t->telemetry_path);
	free(t->landing_html);
	tlsconf_free(&t->tls);
	strv_free(t->headers, 2 * t->nheaders);
	memset(t, 0, sizeof(*t));
}

int http_site_of(const struct http_opts *o, struct site *t)
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
		http_site_free(t);
	return oom ? -ENOMEM : 0;
}

int http_start(struct http_server **out, const struct http_opts *o, char *err, size_t len)
{
	struct http_server *s = calloc(1, sizeof(*s));
	int rc;

	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->req_lock, NULL);
	pthread_mutex_init(&s->conn_lock, NULL);
	s->lim = o->limits;
	rc = http_conns_start(s);
	if (rc) {
		http_stop(s);
		snprintf(err, len, "cannot start a thread");
		return rc;
	}
	/*
	 * A request may come as soon as the first listener starts (socket
	 * activation queues them before iolat runs), before http_update sets the
	 * site: it is answered with this one's routes. Without TLS, so that
	 * http_update still sees new TLS settings and vets them first.
	 */
	if (http_site_of(o, &s->site)) {
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

void http_stop(struct http_server *s)
{
	if (!s)
		return;
	http_listeners_stop(s);
	http_conns_stop(s);
	pthread_mutex_destroy(&s->req_lock);
	pthread_mutex_destroy(&s->conn_lock);
	http_site_free(&s->site);
	buf_free(&s->body);
	buf_free(&s->gz);
	free(s);
}
