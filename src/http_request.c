// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * http_request.c - what iolat reads from a request itself (http_request.h):
 * content negotiation and routing. Kept apart from the libmicrohttpd side so
 * the fuzzer and the unit tests reach it without a server.
 */
#include "http_request.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* q of one Accept element ("type/sub;a=b;q=0.5"), 1 when absent. */
static double element_q(const char *e, size_t len)
{
	for (const char *p = e; p < e + len; p++)
		if ((p == e || p[-1] == ';' || p[-1] == ' ') && !strncmp(p, "q=", 2))
			return atof(p + 2);
	return 1.0;
}

static bool element_has(const char *e, size_t len, const char *what)
{
	size_t w = strlen(what);

	for (const char *p = e; p + w <= e + len; p++)
		if (!strncasecmp(p, what, w))
			return true;
	return false;
}

enum expo_format http_negotiate(const char *accept)
{
	double best_q[3] = { -1, -1, -1 };
	const char *e = accept;

	while (e && *e) {
		size_t len = strcspn(e, ",");
		double q = element_q(e, len);

		if (element_has(e, len, "application/vnd.google.protobuf") &&
		    element_has(e, len, "proto=io.prometheus.client.MetricFamily") &&
		    element_has(e, len, "encoding=delimited") && q > best_q[EXPO_PROTOBUF])
			best_q[EXPO_PROTOBUF] = q;
		else if (element_has(e, len, "application/openmetrics-text") &&
			 q > best_q[EXPO_OPENMETRICS])
			best_q[EXPO_OPENMETRICS] = q;
		else if ((element_has(e, len, "text/plain") || element_has(e, len, "*/*")) &&
			 q > best_q[EXPO_TEXT])
			best_q[EXPO_TEXT] = q;
		e += len;
		if (*e == ',')
			e++;
	}
	if (best_q[EXPO_PROTOBUF] > 0 && best_q[EXPO_PROTOBUF] >= best_q[EXPO_OPENMETRICS] &&
	    best_q[EXPO_PROTOBUF] >= best_q[EXPO_TEXT])
		return EXPO_PROTOBUF;
	if (best_q[EXPO_OPENMETRICS] > 0 && best_q[EXPO_OPENMETRICS] >= best_q[EXPO_TEXT])
		return EXPO_OPENMETRICS;
	return EXPO_TEXT;
}

bool http_accepts_gzip(const char *ae)
{
	const char *e = ae;

	while (e && *e) {
		size_t len = strcspn(e, ",");

		while (*e == ' ')
			e++, len--;
		if (!strncasecmp(e, "gzip", 4) && element_q(e, len) > 0)
			return true;
		e += len;
		if (*e == ',')
			e++;
	}
	return false;
}

enum http_route http_route(const char *method, const char *url, const char *telemetry_path)
{
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return HTTP_ROUTE_BAD_METHOD;
	if (!strcmp(url, telemetry_path))
		return HTTP_ROUTE_METRICS;
	if (!strcmp(url, "/"))
		return HTTP_ROUTE_LANDING;
	if (!strcmp(url, "/-/healthy") || !strcmp(url, "/-/ready"))
		return HTTP_ROUTE_HEALTH;
	return HTTP_ROUTE_NOT_FOUND;
}
