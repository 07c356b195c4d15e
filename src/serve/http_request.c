// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * http_request.c - what iolat reads from a request itself (http_request.h):
 * content negotiation and routing. Kept apart from the libmicrohttpd side so
 * the fuzzer and the unit tests reach it without a server.
 *
 * Accept and Accept-Encoding are lists of elements, each a name and
 * parameters (RFC 9110 5.6.1, 5.6.6, 12.5.1, 12.5.3):
 *
 *   element = name *( OWS ";" OWS param-name "=" ( token / quoted-string ) )
 *
 * with OWS spaces or tabs, names compared without case, and the weight in
 * the parameter "q". A quoted string may hold ',' and ';', so elements and
 * parameters are split outside quotes only.
 */
#include "serve/http_request.h"

#include <stddef.h>
#include <string.h>

/* A piece of a header: not NUL-terminated. */
struct span {
	const char *s;
	size_t len;
};

/* An element's parameters that negotiation looks at. */
struct element {
	struct span name;	     /* media range or content coding */
	struct span proto, encoding; /* raw values (quotes kept); len 0 when absent */
	int q;			     /* weight in thousandths: 1000 when absent, 0 when malformed */
};

static bool is_ows(char c)
{
	return c == ' ' || c == '\t';
}

/* Where the item starting at s ends: at the first stop outside quotes, or at end. */
static const char *item_end(const char *s, const char *end, char stop)
{
	bool quoted = false;

	for (; s < end; s++) {
		if (quoted && *s == '\\' && s + 1 < end)
			s++;
		else if (*s == '"')
			quoted = !quoted;
		else if (!quoted && *s == stop)
			break;
	}
	return s;
}

static struct span trim(const char *s, const char *end)
{
	while (s < end && is_ows(*s))
		s++;
	while (end > s && is_ows(end[-1]))
		end--;
	return (struct span){ s, (size_t)(end - s) };
}

/* ASCII only: header names and values are not in the locale's character set. */
static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool span_is(struct span a, const char *lit)
{
	size_t i;

	for (i = 0; i < a.len; i++)
		if (!lit[i] || lower(a.s[i]) != lower(lit[i]))
			return false;
	return !lit[i];
}

/*
 * Whether value v, a token or a quoted string, is lit (without case). In a
 * quoted string a backslash stands for the character after it.
 */
static bool value_is(struct span v, const char *lit)
{
	const char *s, *end;

	if (v.len < 2 || v.s[0] != '"' || v.s[v.len - 1] != '"')
		return span_is(v, lit);
	for (s = v.s + 1, end = v.s + v.len - 1; s < end; s++, lit++) {
		if (*s == '\\' && s + 1 < end)
			s++;
		if (!*lit || lower(*s) != lower(*lit))
			return false;
	}
	return !*lit;
}

/*
 * A weight, as RFC 9110 12.4.2 writes it ("0" or "1", then optionally "."
 * and up to three digits, only zeros after a "1"), in thousandths so that
 * equal weights compare equal. -1 for anything else.
 */
static int qvalue(struct span v)
{
	int q, scale = 100;
	size_t i;

	if (!v.len || (v.s[0] != '0' && v.s[0] != '1'))
		return -1;
	q = (v.s[0] - '0') * 1000;
	if (v.len == 1)
		return q;
	if (v.s[1] != '.' || v.len > 5)
		return -1;
	for (i = 2; i < v.len; i++, scale /= 10) {
		if (v.s[i] < '0' || v.s[i] > '9' || (q == 1000 && v.s[i] != '0'))
			return -1;
		q += (v.s[i] - '0') * scale;
	}
	return q;
}

/*
 * Splits the element [s, end) into e. A malformed weight counts as 0, so an
 * element nobody can read is never chosen.
 */
static void parse_element(const char *s, const char *end, struct element *e)
{
	const char *p = item_end(s, end, ';');

	*e = (struct element){ .name = trim(s, p), .q = 1000 };
	while (p < end && *p == ';') {
		const char *next = item_end(p + 1, end, ';');
		struct span param = trim(p + 1, next), name, value;
		const char *eq = memchr(param.s, '=', param.len);

		p = next;
		if (!eq)
			continue;
		name = (struct span){ param.s, (size_t)(eq - param.s) };
		value = (struct span){ eq + 1, param.len - name.len - 1 };
		if (span_is(name, "q")) {
			e->q = qvalue(value);
			if (e->q < 0)
				e->q = 0;
		} else if (span_is(name, "proto")) {
			e->proto = value;
		} else if (span_is(name, "encoding")) {
			e->encoding = value;
		}
	}
}

/*
 * Calls fn for each element of the list in header (NULL: none), with arg;
 * empty elements, which lists may hold (RFC 9110 5.6.1), are skipped.
 */
static void each_element(const char *header, void (*fn)(const struct element *, void *), void *arg)
{
	const char *s = header, *end;
	struct element e;

	if (!s)
		return;
	end = s + strlen(s);
	while (s < end) {
		const char *next = item_end(s, end, ',');

		parse_element(s, next, &e);
		if (e.name.len)
			fn(&e, arg);
		s = next < end ? next + 1 : end;
	}
}

static void weigh_format(const struct element *e, void *arg)
{
	int *best_q = arg;
	int f;

	if (span_is(e->name, "application/vnd.google.protobuf") &&
	    value_is(e->proto, "io.prometheus.client.MetricFamily") &&
	    value_is(e->encoding, "delimited"))
		f = EXPO_PROTOBUF;
	else if (span_is(e->name, "application/openmetrics-text"))
		f = EXPO_OPENMETRICS;
	else if (span_is(e->name, "text/plain") || span_is(e->name, "text/*") ||
		 span_is(e->name, "*/*"))
		f = EXPO_TEXT;
	else
		return;
	if (e->q > best_q[f])
		best_q[f] = e->q;
}

enum expo_format http_negotiate(const char *accept)
{
	int best_q[3] = { -1, -1, -1 }; /* -1: not named */

	each_element(accept, weigh_format, best_q);
	if (best_q[EXPO_PROTOBUF] > 0 && best_q[EXPO_PROTOBUF] >= best_q[EXPO_OPENMETRICS] &&
	    best_q[EXPO_PROTOBUF] >= best_q[EXPO_TEXT])
		return EXPO_PROTOBUF;
	if (best_q[EXPO_OPENMETRICS] > 0 && best_q[EXPO_OPENMETRICS] >= best_q[EXPO_TEXT])
		return EXPO_OPENMETRICS;
	return EXPO_TEXT;
}

static void find_gzip(const struct element *e, void *arg)
{
	bool *gzip = arg;

	/* RFC 9110 8.4.1.3: "x-gzip" is the same coding. */
	if ((span_is(e->name, "gzip") || span_is(e->name, "x-gzip")) && e->q > 0)
		*gzip = true;
}

bool http_accepts_gzip(const char *ae)
{
	bool gzip = false;

	each_element(ae, find_gzip, &gzip);
	return gzip;
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
