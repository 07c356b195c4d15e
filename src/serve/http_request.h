/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * http_request.h - what iolat reads from an HTTP request itself, as pure
 * functions: which exposition format an Accept header asks for, whether
 * gzip is allowed, and which page a method and path name. The headers
 * themselves are parsed by libmicrohttpd.
 */
#ifndef IOLAT_HTTP_REQUEST_H
#define IOLAT_HTTP_REQUEST_H

#include <stdbool.h>

enum expo_format {
	EXPO_TEXT = 0,	  /* Prometheus text 0.0.4 */
	EXPO_OPENMETRICS, /* OpenMetrics 1.0 text */
	EXPO_PROTOBUF,	  /* delimited io.prometheus.client.MetricFamily */
};

/*
 * The format to answer an Accept header with: the supported type with the
 * highest q (ties: protobuf, then OpenMetrics, then text); text when the
 * header is missing or names nothing supported.
 */
enum expo_format http_negotiate(const char *accept);

/* Whether an Accept-Encoding header allows gzip (q > 0). */
bool http_accepts_gzip(const char *accept_encoding);

enum http_route {
	HTTP_ROUTE_METRICS,    /* the telemetry path */
	HTTP_ROUTE_LANDING,    /* "/" */
	HTTP_ROUTE_HEALTH,     /* "/-/healthy", "/-/ready" */
	HTTP_ROUTE_NOT_FOUND,  /* any other path: 404 */
	HTTP_ROUTE_BAD_METHOD, /* not GET or HEAD: 405 */
};

/* The page a request names; paths compare exactly (no query, no normalising). */
enum http_route http_route(const char *method, const char *url, const char *telemetry_path);

#endif
