// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_http_update.c - a reload at the HTTP layer (serve/http.h): a running
 * server on 127.0.0.1 moved by http_update to options whose second address
 * is taken fails as a whole, and the first listener answers as before, its
 * old telemetry path and all; with the address free the same update takes
 * effect at once; a new address whose socket libmicrohttpd refuses fails
 * it too. Checked with real requests over plain sockets. And the
 * certificate-and-key check serve makes when it loads a web config.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* After setjmp.h, stdarg.h and stddef.h, which it needs. */
#include <cmocka.h>

#include "serve/http.h"
#include "util/readfile.h"

/* What a render callback answers with: the site's own body. */
struct page {
	const char *body;
	int renders;
};

static int render(void *ctx, enum expo_format fmt, struct buf *out)
{
	struct page *p = ctx;

	(void)fmt;
	p->renders++;
	buf_puts(out, p->body);
	return 0;
}

static void count_commit(void *ctx)
{
	(*(int *)ctx)++;
}

/* A TCP socket on 127.0.0.1 and a port the kernel picks; its number. */
static int bound_socket(int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

/* A port free now (nothing listened on it: no TIME_WAIT to wait out). */
static int free_port(void)
{
	int port, fd = bound_socket(&port);

	close(fd);
	return port;
}

/* A port taken for as long as the descriptor is open: bound and listening. */
static int taken_port(int *port)
{
	int fd = bound_socket(port);

	assert_int_equal(listen(fd, 1), 0);
	return fd;
}

/*
 * GET path from 127.0.0.1:port, the connection closed after the answer:
 * the status, with the body in body; -1 if nothing came (no listener, or
 * not an HTTP answer).
 */
static int get(int port, const char *path, char *body, size_t len)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval tv = { .tv_sec = 5 };
	char req[256], resp[4096];
	size_t got = 0;
	const char *start;
	int fd, status = -1;
	ssize_t n;

	body[0] = '\0';
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -1;
	}
	snprintf(req, sizeof(req),
		 "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", path);
	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
		close(fd);
		return -1;
	}
	while (got < sizeof(resp) - 1 && (n = read(fd, resp + got, sizeof(resp) - 1 - got)) > 0)
		got += (size_t)n;
	close(fd);
	resp[got] = '\0';
	if (sscanf(resp, "HTTP/1.%*d %d", &status) != 1)
		return -1;
	start = strstr(resp, "\r\n\r\n");
	snprintf(body, len, "%s", start ? start + 4 : "");
	return status;
}

struct fixture {
	int port1, port2;
	int blocker; /* holds port2 */
	char addr1[32], addr2[32];
	struct page old_page, new_page;
	struct http_server *s;
	int commits;
};

static void opts(struct http_opts *o, const char *const *listen, size_t n, const char *path,
		 struct page *p)
{
	*o = (struct http_opts){ .listen = listen,
				 .nlisten = n,
				 .telemetry_path = path,
				 .landing_html = "<html>iolat</html>",
				 .render = render,
				 .ctx = p };
	http_limits_default(&o->limits);
}

/* Serving /metrics on port1 (old_page); port2 taken by another socket. */
static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	const char *listen[1];
	struct http_opts o;
	char err[256] = "", body[256];

	assert_non_null(f);
	f->old_page.body = "old_metric 1\n";
	f->new_page.body = "new_metric 2\n";
	f->blocker = taken_port(&f->port2);
	f->port1 = free_port();
	snprintf(f->addr1, sizeof(f->addr1), "127.0.0.1:%d", f->port1);
	snprintf(f->addr2, sizeof(f->addr2), "127.0.0.1:%d", f->port2);
	listen[0] = f->addr1;
	opts(&o, listen, 1, "/metrics", &f->old_page);
	if (http_start(&f->s, &o, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(get(f->port1, "/metrics", body, sizeof(body)), 200);
	assert_string_equal(body, "old_metric 1\n");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	http_stop(f->s);
	if (f->blocker >= 0)
		close(f->blocker);
	free(f);
	return 0;
}

/* port1 answers as the server did before the update. */
static void assert_old_site(struct fixture *f)
{
	char body[256];

	assert_int_equal(get(f->port1, "/metrics", body, sizeof(body)), 200);
	assert_string_equal(body, "old_metric 1\n");
	assert_int_equal(get(f->port1, "/new", body, sizeof(body)), 404);
	assert_int_equal(get(f->port1, "/", body, sizeof(body)), 200);
	assert_string_equal(body, "<html>iolat</html>");
}

/* Update to port1 and port2 serving /new, expecting it to fail as taken. */
static void update_fails(struct fixture *f, struct http_opts *o)
{
	char err[256] = "", want[256];

	assert_int_equal(http_update(f->s, o, count_commit, &f->commits, err, sizeof(err)),
			 -EADDRINUSE);
	snprintf(want, sizeof(want),
		 "cannot listen on '%s': the address is in use (by another program, or another "
		 "iolat serve)",
		 f->addr2);
	assert_string_equal(err, want);
	assert_int_equal(f->commits, 0);
}

static void test_taken_address_rolls_back(void **state)
{
	struct fixture *f = *state;
	const char *both[] = { f->addr1, f->addr2 }, *second[] = { f->addr2 };
	struct http_opts o;
	char err[256] = "", body[256];

	opts(&o, both, 2, "/new", &f->new_page);
	update_fails(f, &o);
	assert_old_site(f);
	assert_int_equal(f->new_page.renders, 0);

	/* The same update once the address is free: all of it at once. */
	close(f->blocker);
	f->blocker = -1;
	if (http_update(f->s, &o, count_commit, &f->commits, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(f->commits, 1);
	assert_int_equal(get(f->port1, "/new", body, sizeof(body)), 200);
	assert_string_equal(body, "new_metric 2\n");
	assert_int_equal(get(f->port2, "/new", body, sizeof(body)), 200);
	assert_string_equal(body, "new_metric 2\n");
	assert_int_equal(get(f->port1, "/metrics", body, sizeof(body)), 404);
	assert_int_equal(f->new_page.renders, 2);

	/* An address left out stops listening. */
	opts(&o, second, 1, "/new", &f->new_page);
	if (http_update(f->s, &o, count_commit, &f->commits, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(f->commits, 2);
	assert_int_equal(get(f->port1, "/new", body, sizeof(body)), -1);
	assert_int_equal(get(f->port2, "/new", body, sizeof(body)), 200);
}

/*
 * With new TLS settings port1's listener gets a successor on its socket
 * before port2 is tried; undone, the socket goes back to a listener with
 * the old settings, which answers plain HTTP as before.
 */
static void test_taken_address_undoes_tls(void **state)
{
	struct fixture *f = *state;
	const char *both[] = { f->addr1, f->addr2 }, *first[] = { f->addr1 };
	char *cert = NULL, *key = NULL, err[256] = "", body[256];
	struct tls_settings tls = { 0 };
	struct http_opts o;
	size_t len;

	assert_int_equal(readfile_all("tests/unit/data/server.crt", 1 << 16, &cert, &len), 0);
	assert_int_equal(readfile_all("tests/unit/data/server.key", 1 << 16, &key, &len), 0);
	tls.cert_pem = cert;
	tls.key_pem = key;
	opts(&o, both, 2, "/new", &f->new_page);
	o.tls = &tls;
	update_fails(f, &o);
	assert_old_site(f);

	/* Without port2 it takes: port1 speaks TLS, and plain HTTP gets nothing. */
	opts(&o, first, 1, "/new", &f->new_page);
	o.tls = &tls;
	if (http_update(f->s, &o, count_commit, &f->commits, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(f->commits, 1);
	assert_int_equal(get(f->port1, "/new", body, sizeof(body)), -1);
	free(cert);
	free(key);
}

/* Takes every descriptor but one: RLIMIT_NOFILE just above the highest open
 * one, the numbers below it filled (fillers[], *n of them). Returns the
 * limit to restore. */
static struct rlimit one_fd_left(int *fillers, size_t max, size_t *n)
{
	struct rlimit was, tight;
	int top = 0, fd;

	assert_int_equal(getrlimit(RLIMIT_NOFILE, &was), 0);
	for (fd = 0; fd < 1024; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			top = fd;
	tight = (struct rlimit){ .rlim_cur = (rlim_t)top + 2, .rlim_max = was.rlim_max };
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &tight), 0);
	*n = 0;
	while (*n < max && (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
		fillers[(*n)++] = fd;
	assert_true(*n > 0 && *n < max);
	close(fillers[--*n]);
	return was;
}

/*
 * With one descriptor left a new address's socket is bound, but
 * libmicrohttpd cannot start on it (none left for its epoll): the update
 * fails as a whole, where it once returned 0 with no listener left.
 */
static void test_refused_socket_rolls_back(void **state)
{
	struct fixture *f = *state;
	char addr3[32], err[256] = "", want[256], body[256];
	const char *both[] = { f->addr1, addr3 };
	int fillers[1024], port3 = free_port(), rc;
	struct rlimit was;
	struct http_opts o;
	size_t n;

	snprintf(addr3, sizeof(addr3), "127.0.0.1:%d", port3);
	opts(&o, both, 2, "/new", &f->new_page);
	was = one_fd_left(fillers, sizeof(fillers) / sizeof(fillers[0]), &n);
	rc = http_update(f->s, &o, count_commit, &f->commits, err, sizeof(err));
	while (n)
		close(fillers[--n]);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &was), 0);
	assert_int_equal(rc, -EADDRINUSE);
	snprintf(want, sizeof(want), "cannot serve on '%s' (libmicrohttpd refused the socket)",
		 addr3);
	assert_string_equal(err, want);
	assert_int_equal(f->commits, 0);
	assert_old_site(f);
	assert_int_equal(get(port3, "/new", body, sizeof(body)), -1);
}

/* The pair check serve runs at load: the repository's pair loads; swapped,
 * or a certificate standing for its own key, it does not. */
static void test_tls_pair(void **state)
{
	char *cert = NULL, *key = NULL;
	size_t len;

	(void)state;
	assert_int_equal(readfile_all("tests/unit/data/server.crt", 1 << 16, &cert, &len), 0);
	assert_int_equal(readfile_all("tests/unit/data/server.key", 1 << 16, &key, &len), 0);
	assert_true(http_tls_pair_loads(cert, key));
	assert_false(http_tls_pair_loads(key, cert));
	assert_false(http_tls_pair_loads(cert, cert));
	free(cert);
	free(key);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tls_pair),
		cmocka_unit_test_setup_teardown(test_taken_address_rolls_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_taken_address_undoes_tls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused_socket_rolls_back, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
