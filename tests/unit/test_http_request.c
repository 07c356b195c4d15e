// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_http_request.c - what iolat reads from a request itself: the format an
 * Accept header gets (q values, ties, parameters, white space, case), whether
 * Accept-Encoding allows gzip, and routing. fuzz_http checks the same
 * functions against invariants; these pin the answers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* After setjmp.h, stdarg.h and stddef.h, which it needs. */
#include <cmocka.h>

#include "serve/http_request.h"

#define PB                                                                                         \
	"application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;"                 \
	"encoding=delimited"
#define OM "application/openmetrics-text;version=1.0.0"
#define TEXT "text/plain;version=0.0.4"

static const struct {
	const char *accept;
	enum expo_format want;
} formats[] = {
	/* No header, or nothing iolat serves: text. */
	{ NULL, EXPO_TEXT },
	{ "", EXPO_TEXT },
	{ " , ,", EXPO_TEXT },
	{ "application/json", EXPO_TEXT },
	{ "*/*", EXPO_TEXT },
	{ TEXT, EXPO_TEXT },
	{ OM, EXPO_OPENMETRICS },
	{ PB, EXPO_PROTOBUF },
	/* What Prometheus sends: protobuf first when it asks for it. */
	{ PB ";q=0.7," OM ";q=0.5,application/openmetrics-text;version=0.0.1;q=0.4," TEXT
	     ";q=0.3,*/*;q=0.2",
	  EXPO_PROTOBUF },
	{ OM ";q=0.5," TEXT ";q=0.3,*/*;q=0.2", EXPO_OPENMETRICS },
	/* The highest q wins, wherever it stands. */
	{ PB ";q=0.2," OM ";q=0.5", EXPO_OPENMETRICS },
	{ TEXT ";q=0.9," OM ";q=0.5," PB ";q=0.7", EXPO_TEXT },
	{ "*/*;q=0.6," OM ";q=0.5", EXPO_TEXT },
	{ "text/*;q=0.9," OM ";q=0.5", EXPO_TEXT },
	/* Ties: protobuf, then OpenMetrics, then text; "0.5" and "0.500" are equal. */
	{ TEXT ";q=0.5," OM ";q=0.5", EXPO_OPENMETRICS },
	{ TEXT ";q=0.5," OM ";q=0.500," PB ";q=0.50", EXPO_PROTOBUF },
	{ OM ";q=1," PB, EXPO_PROTOBUF },
	/* A type's best element counts. */
	{ OM ";q=0.1," TEXT ";q=0.5," OM ";q=0.9", EXPO_OPENMETRICS },
	/* q=0 is "not acceptable": never chosen, text is the fallback. */
	{ PB ";q=0", EXPO_TEXT },
	{ OM ";q=0," TEXT ";q=0", EXPO_TEXT },
	{ PB ";q=0," OM ";q=0.001", EXPO_OPENMETRICS },
	/* Malformed weights count as 0 (RFC 9110: 0 to 1, three decimals at most). */
	{ OM ";q=2", EXPO_TEXT },
	{ OM ";q=1.5", EXPO_TEXT },
	{ OM ";q=0.0001", EXPO_TEXT },
	{ OM ";q=-1", EXPO_TEXT },
	{ OM ";q=", EXPO_TEXT },
	{ OM ";q=inf", EXPO_TEXT },
	{ OM ";q=1.000", EXPO_OPENMETRICS },
	/* Protobuf needs both parameters, in either order, as tokens or quoted. */
	{ "application/vnd.google.protobuf", EXPO_TEXT },
	{ "application/vnd.google.protobuf;proto=io.prometheus.client;encoding=delimited",
	  EXPO_TEXT },
	{ "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily", EXPO_TEXT },
	{ "application/vnd.google.protobuf;encoding=delimited;"
	  "proto=io.prometheus.client.MetricFamily",
	  EXPO_PROTOBUF },
	{ "application/vnd.google.protobuf; proto=\"io.prometheus.client.MetricFamily\"; "
	  "encoding=\"delim\\ited\"",
	  EXPO_PROTOBUF },
	{ "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;"
	  "encoding=text",
	  EXPO_TEXT },
	/* Names are whole: no prefixes, no names inside parameters. */
	{ "application/openmetrics-textual", EXPO_TEXT },
	{ "x-application/openmetrics-text", EXPO_TEXT },
	{ "text/html;x=application/openmetrics-text", EXPO_TEXT },
	/* Quoted strings may hold ',' and ';': they split nothing. */
	{ "text/html;x=\"a, " OM "\"", EXPO_TEXT },
	{ "text/html;x=\"a;q=0\";q=0.1," OM ";q=0.2", EXPO_OPENMETRICS },
	/* Optional white space, spaces or tabs, and letter case. */
	{ " \t" OM " \t; \tq=0.5 \t, \t" TEXT "\t;\tq=0.4\t", EXPO_OPENMETRICS },
	{ "Application/OpenMetrics-Text;Version=1.0.0", EXPO_OPENMETRICS },
	{ OM ";Q=0", EXPO_TEXT },
	{ OM ";\tq=0", EXPO_TEXT },
};

static void test_negotiate(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (http_negotiate(formats[i].accept) != formats[i].want)
			fail_msg("Accept \"%s\": format %d, want %d", formats[i].accept,
				 (int)http_negotiate(formats[i].accept), (int)formats[i].want);
}

static const struct {
	const char *ae;
	bool want;
} encodings[] = {
	{ NULL, false },
	{ "", false },
	{ "identity", false },
	{ "gzip", true },
	{ "deflate, gzip, br, zstd", true },
	{ "GZip", true },
	{ "x-gzip", true },
	{ "\tgzip", true },
	{ "br , gzip ;q=0.5", true },
	{ "gzip;q=0.001", true },
	/* q=0 refuses it, however it is written. */
	{ "gzip;q=0", false },
	{ "gzip;q=0.000", false },
	{ "gzip;Q=0", false },
	{ "gzip ; q=0", false },
	{ "gzip;\tq=0", false },
	{ "identity, gzip;q=0", false },
	{ "x-gzip;q=0", false },
	/* Any gzip element with q > 0 allows it. */
	{ "gzip;q=0, gzip;q=0.2", true },
	/* A malformed weight counts as 0. */
	{ "gzip;q=5", false },
	{ "gzip;q=nan", false },
	/* Whole names only; "*" is not taken as gzip. */
	{ "gzipfoo", false },
	{ "gzip2;q=1", false },
	{ "agzip", false },
	{ "*", false },
	{ "br;x=\"gzip, gzip\"", false },
};

static void test_gzip(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(encodings) / sizeof(encodings[0]); i++)
		if (http_accepts_gzip(encodings[i].ae) != encodings[i].want)
			fail_msg("Accept-Encoding \"%s\": gzip %d, want %d", encodings[i].ae,
				 !encodings[i].want, encodings[i].want);
}

static void test_route(void **state)
{
	(void)state;
	assert_int_equal(http_route("GET", "/metrics", "/metrics"), HTTP_ROUTE_METRICS);
	assert_int_equal(http_route("HEAD", "/metrics", "/metrics"), HTTP_ROUTE_METRICS);
	assert_int_equal(http_route("GET", "/", "/metrics"), HTTP_ROUTE_LANDING);
	assert_int_equal(http_route("GET", "/-/healthy", "/metrics"), HTTP_ROUTE_HEALTH);
	assert_int_equal(http_route("HEAD", "/-/ready", "/metrics"), HTTP_ROUTE_HEALTH);
	/* Exact paths: no query, trailing slash, case or normalising. */
	assert_int_equal(http_route("GET", "/metrics/", "/metrics"), HTTP_ROUTE_NOT_FOUND);
	assert_int_equal(http_route("GET", "/metrics?x=1", "/metrics"), HTTP_ROUTE_NOT_FOUND);
	assert_int_equal(http_route("GET", "/Metrics", "/metrics"), HTTP_ROUTE_NOT_FOUND);
	assert_int_equal(http_route("GET", "//metrics", "/metrics"), HTTP_ROUTE_NOT_FOUND);
	assert_int_equal(http_route("GET", "/x/../metrics", "/metrics"), HTTP_ROUTE_NOT_FOUND);
	assert_int_equal(http_route("GET", "", "/metrics"), HTTP_ROUTE_NOT_FOUND);
	/* Another telemetry path; it wins over the fixed pages. */
	assert_int_equal(http_route("GET", "/iolat", "/iolat"), HTTP_ROUTE_METRICS);
	assert_int_equal(http_route("GET", "/metrics", "/iolat"), HTTP_ROUTE_NOT_FOUND);
	assert_int_equal(http_route("GET", "/", "/"), HTTP_ROUTE_METRICS);
	/* Methods: GET and HEAD only, as written (case-sensitive, RFC 9110 9.1). */
	assert_int_equal(http_route("POST", "/metrics", "/metrics"), HTTP_ROUTE_BAD_METHOD);
	assert_int_equal(http_route("OPTIONS", "/", "/metrics"), HTTP_ROUTE_BAD_METHOD);
	assert_int_equal(http_route("get", "/metrics", "/metrics"), HTTP_ROUTE_BAD_METHOD);
	assert_int_equal(http_route("GETX", "/nowhere", "/metrics"), HTTP_ROUTE_BAD_METHOD);
	assert_int_equal(http_route("", "/", "/metrics"), HTTP_ROUTE_BAD_METHOD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_negotiate),
		cmocka_unit_test(test_gzip),
		cmocka_unit_test(test_route),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
