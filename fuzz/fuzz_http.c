// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_http.c - libFuzzer target for what iolat reads from a request itself
 * (make fuzz): content negotiation, gzip, routing (http_request.c) and the
 * basic-auth credential check (webconfig_check). libmicrohttpd parses the
 * request line and headers; this starts where iolat takes them over.
 *
 * The input is one request, its fields separated by newlines or NULs:
 *
 *   method \n url \n telemetry path \n Accept \n Accept-Encoding \n user \n password
 *
 * A missing header is NULL, as libmicrohttpd gives it. Besides memory safety
 * each call is checked against its contract, and against rewritings of the
 * header that must not change the answer (white space, letter case, an
 * unrelated element in front), which a parser can get wrong without crashing.
 * The credentials are checked against a fixed web config of cost-4 bcrypt
 * users whose passwords are known here, so a wrong answer either way shows.
 */
#define _GNU_SOURCE /* strcasestr */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "serve/http_request.h"
#include "serve/webconfig.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { F_METHOD, F_URL, F_PATH, F_ACCEPT, F_AE, F_USER, F_PASSWORD, NFIELDS };

/*
 * Made once with libxcrypt (Python's crypt module, 16 rounds = cost 4, the
 * lowest), the prefixes then set: for these passwords $2a$, $2b$ and $2y$
 * give the same hash. Cheap on purpose: every wrong guess costs a bcrypt.
 */
static const struct {
	const char *user, *password, *hash;
} users[] = {
	{ "alice", "fuzz-pass", "$2b$04$G6cQKiwzOsOnWCIjVdJieOQMIlBMtwp/cHQ6d2qdp5xp6KEVeLKGy" },
	{ "bob", "p\xc3\xa4sswort",
	  "$2y$04$4oAuTboXnQrbmytdD7FAhe8T2ASerk547nw7laVUTRDE2oUwDyRt2" },
	/* One letter, so the fuzzer finds it and the login cache gets hits. */
	{ "carol", "x", "$2a$04$Nm53xd8kU5nDv8jTPeL1UuwNEUl6YTrKLer1S6Mv1f/bixjz.1biy" },
};
#define NUSERS (sizeof(users) / sizeof(users[0]))

static struct webconfig wc;

/* Stops the run: libFuzzer keeps the input that got here. */
#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz_http: " __VA_ARGS__);                                \
			fputc('\n', stderr);                                                       \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char text[1024], err[256];
	size_t n = 0, i;

	(void)argc, (void)argv;
	n += (size_t)snprintf(text + n, sizeof(text) - n, "basic_auth_users:\n");
	for (i = 0; i < NUSERS; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "  %s: '%s'\n", users[i].user,
				      users[i].hash);
	if (webconfig_parse("<fuzz_http>", NULL, text, n, &wc, err, sizeof(err))) {
		fprintf(stderr, "fuzz_http: the fixed web config does not load: %s\n", err);
		exit(1);
	}
	return 0;
}

/* The input as NFIELDS strings in buf (size + 1 bytes); absent ones NULL. */
static void split(const uint8_t *data, size_t size, char *buf, char *field[NFIELDS])
{
	size_t i, f = 0;

	memcpy(buf, data, size);
	buf[size] = '\0';
	memset(field, 0, NFIELDS * sizeof(field[0]));
	field[f++] = buf;
	for (i = 0; i < size && f < NFIELDS; i++)
		if (buf[i] == '\n' || buf[i] == '\0') {
			buf[i] = '\0';
			field[f++] = buf + i + 1;
		}
}

/* s with " \t" put before and after every ',' and ';' (optional white space). */
static char *spaced(const char *s)
{
	char *out = malloc(strlen(s) * 5 + 1), *o = out;

	if (!out)
		abort();
	for (; *s; s++) {
		if (*s == ',' || *s == ';') {
			*o++ = ' ', *o++ = '\t';
			*o++ = *s;
			*o++ = ' ', *o++ = '\t';
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
	return out;
}

/* s in upper case (ASCII): names, tokens and "q" compare without case. */
static char *upper(const char *s)
{
	char *out = strdup(s);

	if (!out)
		abort();
	for (char *o = out; *o; o++)
		if (*o >= 'a' && *o <= 'z')
			*o = (char)(*o - 'a' + 'A');
	return out;
}

static char *prefixed(const char *prefix, const char *s)
{
	char *out = malloc(strlen(prefix) + strlen(s) + 1);

	if (!out)
		abort();
	strcpy(out, prefix);
	strcat(out, s);
	return out;
}

#define PROTOBUF_TYPE                                                                              \
	"application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;"                 \
	"encoding=delimited"

/* Elements that must never change an Accept answer when put in front. */
static const char *const accept_noise[] = {
	"image/png, ",
	"application/openmetrics-text;q=0, ",
	"text/plain;q=0, ",
	PROTOBUF_TYPE ";q=0,",
};

static void check_negotiate(const char *accept)
{
	enum expo_format f = http_negotiate(accept), g;
	char *alt;
	size_t i;

	CHECK(f == EXPO_TEXT || f == EXPO_OPENMETRICS || f == EXPO_PROTOBUF,
	      "http_negotiate gave %d", (int)f);
	if (!accept || !*accept) {
		CHECK(f == EXPO_TEXT, "no Accept header, format %d", (int)f);
		return;
	}
	CHECK(f != EXPO_PROTOBUF || strcasestr(accept, "application/vnd.google.protobuf"),
	      "protobuf for \"%s\"", accept);
	CHECK(f != EXPO_OPENMETRICS || strcasestr(accept, "application/openmetrics-text"),
	      "OpenMetrics for \"%s\"", accept);

	alt = spaced(accept);
	g = http_negotiate(alt);
	CHECK(g == f, "format %d for \"%s\", %d with white space: \"%s\"", (int)f, accept, (int)g,
	      alt);
	free(alt);
	alt = upper(accept);
	g = http_negotiate(alt);
	CHECK(g == f, "format %d for \"%s\", %d in upper case", (int)f, accept, (int)g);
	free(alt);
	for (i = 0; i < sizeof(accept_noise) / sizeof(accept_noise[0]); i++) {
		alt = prefixed(accept_noise[i], accept);
		g = http_negotiate(alt);
		CHECK(g == f, "format %d for \"%s\", %d after \"%s\"", (int)f, accept, (int)g,
		      accept_noise[i]);
		free(alt);
	}
}

static void check_gzip(const char *ae)
{
	static const char *const noise[] = { "identity, ", "gzip;q=0, ", "br;q=1, " };
	bool gz = http_accepts_gzip(ae), g;
	char *alt;
	size_t i;

	if (!ae || !*ae) {
		CHECK(!gz, "gzip without an Accept-Encoding header");
		return;
	}
	CHECK(!gz || strcasestr(ae, "gzip"), "gzip for \"%s\"", ae);
	alt = spaced(ae);
	g = http_accepts_gzip(alt);
	CHECK(g == gz, "gzip %d for \"%s\", %d with white space: \"%s\"", gz, ae, g, alt);
	free(alt);
	alt = upper(ae);
	g = http_accepts_gzip(alt);
	CHECK(g == gz, "gzip %d for \"%s\", %d in upper case", gz, ae, g);
	free(alt);
	for (i = 0; i < sizeof(noise) / sizeof(noise[0]); i++) {
		alt = prefixed(noise[i], ae);
		g = http_accepts_gzip(alt);
		CHECK(g == gz, "gzip %d for \"%s\", %d after \"%s\"", gz, ae, g, noise[i]);
		free(alt);
	}
}

/* The contract of http_route, whole: it is small enough to state here. */
static void check_route(const char *method, const char *url, const char *path)
{
	enum http_route r = http_route(method, url, path);
	bool method_ok = !strcmp(method, "GET") || !strcmp(method, "HEAD");

	CHECK((r == HTTP_ROUTE_BAD_METHOD) == !method_ok, "route %d for method \"%s\"", (int)r,
	      method);
	if (!method_ok)
		return;
	CHECK((r == HTTP_ROUTE_METRICS) == !strcmp(url, path),
	      "route %d for \"%s\" (metrics at %s)", (int)r, url, path);
	if (r == HTTP_ROUTE_METRICS)
		return;
	CHECK((r == HTTP_ROUTE_LANDING) == !strcmp(url, "/"), "route %d for \"%s\"", (int)r, url);
	CHECK((r == HTTP_ROUTE_HEALTH) == (!strcmp(url, "/-/healthy") || !strcmp(url, "/-/ready")),
	      "route %d for \"%s\"", (int)r, url);
	CHECK(r == HTTP_ROUTE_LANDING || r == HTTP_ROUTE_HEALTH || r == HTTP_ROUTE_NOT_FOUND,
	      "route %d for \"%s\"", (int)r, url);
}

static void check_auth(const char *user, const char *password)
{
	bool want = false, got;
	size_t i;

	for (i = 0; i < NUSERS; i++)
		if (!strcmp(user, users[i].user) && !strcmp(password, users[i].password))
			want = true;
	got = webconfig_check(&wc, user, password);
	CHECK(got == want, "webconfig_check(\"%s\", \"%s\") is %d", user, password, got);
	if (!want)
		return;
	/* Again, from the cache now; which must not answer for a neighbour. */
	CHECK(webconfig_check(&wc, user, password), "a cached login of %s fails", user);
	CHECK(!webconfig_check(&wc, user, password + 1), "%s in with part of the password", user);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *field[NFIELDS];
	const char *path;

	if (!buf)
		return 0;
	split(data, size, buf, field);
	check_negotiate(field[F_ACCEPT]);
	check_gzip(field[F_AE]);
	/* --web.telemetry-path must start with '/'; the default otherwise. */
	path = field[F_PATH] && field[F_PATH][0] == '/' ? field[F_PATH] : "/metrics";
	if (field[F_URL])
		check_route(field[F_METHOD], field[F_URL], path);
	/* As in the server: a bad method is answered before any login. */
	if (field[F_PASSWORD] &&
	    http_route(field[F_METHOD], field[F_URL], path) != HTTP_ROUTE_BAD_METHOD)
		check_auth(field[F_USER], field[F_PASSWORD]);
	free(buf);
	return 0;
}
