// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_listen_addr.c - listen addresses (serve/listen_addr.h): what each
 * form means, the overlaps refused with the message an operator sees, and
 * the sockets made from them, checked with real connections over loopback:
 * ":P" takes IPv6 and IPv4 (or IPv4 alone where this host has IPv6 off),
 * an explicit address only its own family.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* After setjmp.h, stdarg.h and stddef.h, which it needs. */
#include <cmocka.h>

#include "serve/listen_addr.h"

static enum listen_kind kind_of(const char *spec, int *family)
{
	struct listen_addr a;
	char err[256] = "";

	assert_int_equal(listen_addr_parse(spec, &a, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	*family = a.ss.ss_family;
	return a.kind;
}

static void parse_fails(const char *spec, const char *want)
{
	struct listen_addr a;
	char err[256] = "";

	assert_int_equal(listen_addr_parse(spec, &a, err, sizeof(err)), -EINVAL);
	if (!strstr(err, want))
		fail_msg("'%s': got \"%s\", want it to contain \"%s\"", spec, err, want);
}

/* Whether spec parses as a listen address a user may write. */
static bool valid(const char *spec)
{
	struct listen_addr a;
	char err[256];

	return listen_addr_parse(spec, &a, err, sizeof(err)) == 0;
}

static void test_valid(void **state)
{
	(void)state;
	assert_true(valid(":19617"));
	assert_true(valid("127.0.0.1:80"));
	assert_true(valid("[::1]:19617"));
	assert_true(valid("localhost:1"));
	assert_false(valid("19617"));
	assert_false(valid(":0"));
	assert_false(valid(":65536"));
	assert_false(valid("1.2.3:80"));
	assert_false(valid("[::1:80"));
	assert_false(valid(":12ab"));
}

static void test_forms(void **state)
{
	int fam;

	(void)state;
	assert_int_equal(kind_of(":19617", &fam), LISTEN_ANY);
	assert_int_equal(kind_of("[::]:19617", &fam), LISTEN_ANY); /* as Go's net.Listen */
	assert_int_equal(kind_of("0.0.0.0:19617", &fam), LISTEN_ADDR);
	assert_int_equal(fam, AF_INET);
	assert_int_equal(kind_of("127.0.0.1:1", &fam), LISTEN_ADDR);
	assert_int_equal(fam, AF_INET);
	assert_int_equal(kind_of("[::1]:65535", &fam), LISTEN_ADDR);
	assert_int_equal(fam, AF_INET6);
	/* An IPv4-mapped address is the IPv4 one. */
	assert_int_equal(kind_of("[::ffff:127.0.0.1]:80", &fam), LISTEN_ADDR);
	assert_int_equal(fam, AF_INET);
	assert_int_equal(kind_of("localhost:80", &fam), LISTEN_NAME);
	assert_int_equal(kind_of("node-1.example.org:80", &fam), LISTEN_NAME);

	parse_fails("19617", "no port");
	parse_fails(":0", "not one of 1 to 65535");
	parse_fails(":65536", "not one of 1 to 65535");
	parse_fails(":12ab", "no port");
	parse_fails(":+80", "no port");
	parse_fails("127.0.0.1:", "no port");
	parse_fails("1.2.3:80", "'1.2.3' is no IP address or host name");
	parse_fails("300.1.1.1:80", "is no IP address or host name");
	parse_fails("[::1:80", "is no IP address or host name");
	parse_fails("[zz::1]:80", "is no IP address or host name");
	parse_fails("::1:80", "write an IPv6 address in brackets, as [::1]:80");
	parse_fails("host_name:80", "is no IP address or host name");
	/* Only systemd's sockets are "fd:N", and a user does not write them. */
	parse_fails("fd:3", "(use --web.systemd-socket)");
}

/* The message listen_addr_check gives for two addresses, or "" if none. */
static const char *check2(const char *a, const char *b, char *err, size_t len)
{
	const char *const v[] = { a, b };

	err[0] = '\0';
	listen_addr_check(v, 2, err, len);
	return err;
}

static void test_overlaps(void **state)
{
	char err[512];

	(void)state;
	assert_string_equal(check2(":9100", "127.0.0.1:9100", err, sizeof(err)),
			    "listen addresses ':9100' and '127.0.0.1:9100' overlap: ':9100' "
			    "already takes every IPv6 and IPv4 address on port 9100; give one of "
			    "them");
	assert_string_equal(check2("[::1]:9100", "[::]:9100", err, sizeof(err)),
			    "listen addresses '[::1]:9100' and '[::]:9100' overlap: '[::]:9100' "
			    "already takes every IPv6 and IPv4 address on port 9100; give one of "
			    "them");
	assert_string_equal(check2("0.0.0.0:9100", "10.1.2.3:9100", err, sizeof(err)),
			    "listen addresses '0.0.0.0:9100' and '10.1.2.3:9100' overlap: "
			    "'0.0.0.0:9100' already takes every IPv4 address on port 9100; give "
			    "one of them");
	assert_string_equal(check2("127.0.0.1:9100", "127.0.0.1:9100", err, sizeof(err)),
			    "listen address '127.0.0.1:9100' is given twice: give it once");
	assert_string_equal(check2("[::ffff:127.0.0.1]:9100", "127.0.0.1:9100", err, sizeof(err)),
			    "listen addresses '[::ffff:127.0.0.1]:9100' and '127.0.0.1:9100' are "
			    "the same address (127.0.0.1:9100); give one of them");
	assert_string_equal(check2(":9100", "[::]:9100", err, sizeof(err)),
			    "listen addresses ':9100' and '[::]:9100' overlap: ':9100' already "
			    "takes every IPv6 and IPv4 address on port 9100; give one of them");
	/* Apart: other ports, other families, other addresses; names wait. */
	assert_string_equal(check2(":9100", ":9101", err, sizeof(err)), "");
	assert_string_equal(check2("0.0.0.0:9100", "[::1]:9100", err, sizeof(err)), "");
	assert_string_equal(check2("127.0.0.1:9100", "[::1]:9100", err, sizeof(err)), "");
	assert_string_equal(check2("127.0.0.1:9100", "127.0.0.2:9100", err, sizeof(err)), "");
	assert_string_equal(check2("localhost:9100", "127.0.0.1:9100", err, sizeof(err)), "");
	/* A bad one among several is named. */
	assert_string_equal(check2(":9100", "x:y", err, sizeof(err)),
			    "bad listen address 'x:y': no port, or not one of 1 to 65535 (use "
			    "host:port, :port or [v6]:port)");
}

/* A port nothing listens on now (bound, then closed, not listened on). */
static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return ntohs(a.sin_port);
}

/* Whether a TCP connection to host (an IP literal) and port is accepted by
 * the listening socket lfd: connect, then accept on lfd. */
static bool reaches(int lfd, const char *host, int port)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
	int fd, c = -1;
	bool ok;

	if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
	} else {
		assert_int_equal(inet_pton(AF_INET6, host, &a6->sin6_addr), 1);
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	ok = !connect(fd, (struct sockaddr *)&ss,
		      ss.ss_family == AF_INET ? sizeof(*a4) : sizeof(*a6));
	if (ok) {
		/* lfd is non-blocking: the connection is queued by now. */
		c = accept(lfd, NULL, NULL);
		ok = c >= 0;
	}
	if (c >= 0)
		close(c);
	close(fd);
	return ok;
}

/* The one socket spec asks for, opened; its note in note. */
static int open_one(const char *spec, struct listen_addr *a)
{
	const char *const v[] = { spec };
	struct listen_addr out[LISTEN_ADDR_MAX];
	char err[256] = "";
	size_t n = 0;
	int fd = -1;

	assert_int_equal(listen_addr_expand(v, 1, out, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	*a = out[0];
	if (listen_addr_open(a, &fd, err, sizeof(err)))
		fail_msg("%s: %s", spec, err);
	return fd;
}

static void test_any_is_dual_stack(void **state)
{
	char why[160], spec[32];
	bool v6 = listen_ipv6_available(why, sizeof(why));
	int port = free_port(), fd;
	struct listen_addr a;

	(void)state;
	snprintf(spec, sizeof(spec), ":%d", port);
	fd = open_one(spec, &a);
	assert_true(reaches(fd, "127.0.0.1", port));
	if (v6) {
		assert_true(a.dual);
		assert_int_equal(a.ss.ss_family, AF_INET6);
		assert_true(reaches(fd, "::1", port));
		assert_non_null(strstr(a.note, "IPv6 and IPv4 on one dual-stack socket"));
	} else {
		/* test_listen.sh turns IPv6 off in a namespace; here, say so. */
		assert_false(a.dual);
		assert_int_equal(a.ss.ss_family, AF_INET);
		assert_non_null(strstr(a.note, "IPv6 is off on this host"));
		print_message("IPv6 is off here (%s): only the IPv4 fallback was tested\n", why);
	}
	close(fd);
}

static void test_explicit_family_only(void **state)
{
	char why[160], spec[32];
	int port = free_port(), fd;
	struct listen_addr a;

	(void)state;
	snprintf(spec, sizeof(spec), "127.0.0.1:%d", port);
	fd = open_one(spec, &a);
	assert_string_equal(a.note, "");
	assert_true(reaches(fd, "127.0.0.1", port));
	if (listen_ipv6_available(why, sizeof(why)))
		assert_false(reaches(fd, "::1", port));
	close(fd);
	if (!listen_ipv6_available(why, sizeof(why)))
		skip();
	port = free_port();
	snprintf(spec, sizeof(spec), "[::1]:%d", port);
	fd = open_one(spec, &a);
	assert_true(reaches(fd, "::1", port));
	assert_false(reaches(fd, "127.0.0.1", port));
	close(fd);
}

static void test_taken_address(void **state)
{
	char spec[32], err[256] = "", want[256];
	struct listen_addr a;
	int port = free_port(), fd = -1, fd2 = -1;

	(void)state;
	snprintf(spec, sizeof(spec), "127.0.0.1:%d", port);
	fd = open_one(spec, &a);
	assert_int_equal(listen_addr_open(&a, &fd2, err, sizeof(err)), -EADDRINUSE);
	snprintf(want, sizeof(want),
		 "cannot listen on '%s': the address is in use (by another program, or another "
		 "iolat serve)",
		 spec);
	assert_string_equal(err, want);
	assert_int_equal(fd2, -1);
	close(fd);
}

/* A name gives a socket per address, named "addr (resolved from name)";
 * once resolved, it overlaps the same address written out. localhost has
 * 127.0.0.1 on every host this runs on. */
static void test_names(void **state)
{
	struct listen_addr out[LISTEN_ADDR_MAX];
	char spec[32], lit[32], err[256] = "", want[64];
	const char *v[2] = { spec, lit };
	bool found = false;
	size_t n = 0;
	int port = free_port();

	(void)state;
	snprintf(spec, sizeof(spec), "localhost:%d", port);
	snprintf(lit, sizeof(lit), "127.0.0.1:%d", port);
	snprintf(want, sizeof(want), "127.0.0.1:%d (resolved from localhost)", port);
	assert_int_equal(listen_addr_expand(v, 1, out, &n, err, sizeof(err)), 0);
	assert_true(n >= 1);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(out[i].kind, LISTEN_ADDR);
		assert_string_equal(out[i].spec, spec);
		found |= !strncmp(out[i].note, want, strlen(want));
	}
	assert_true(found);
	assert_int_equal(listen_addr_expand(v, 2, out, &n, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "listen addresses '%s' and '%s' are the same address (%s)",
		 spec, lit, lit);
	assert_non_null(strstr(err, want));
	/* A name that does not resolve says which. */
	v[0] = "no-such-host.invalid:80";
	assert_int_not_equal(listen_addr_expand(v, 1, out, &n, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "cannot resolve 'no-such-host.invalid'"));
}

/* systemd's sockets: a listening TCP socket is taken, and said to be
 * dual-stack when it is; anything else is refused. */
static void test_systemd_fd(void **state)
{
	struct listen_addr a, out[LISTEN_ADDR_MAX];
	char spec[32], err[256] = "", why[160];
	const char *v[] = { spec };
	size_t n = 0;
	int fd;

	(void)state;
	snprintf(spec, sizeof(spec), ":%d", free_port());
	fd = open_one(spec, &a);
	snprintf(spec, sizeof(spec), "fd:%d", fd);
	assert_int_equal(listen_addr_expand(v, 1, out, &n, err, sizeof(err)), 0);
	assert_int_equal(out[0].kind, LISTEN_FD);
	assert_int_equal(out[0].fd, fd);
	assert_int_equal(out[0].dual, listen_ipv6_available(why, sizeof(why)));
	close(fd);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0); /* not listening */
	snprintf(spec, sizeof(spec), "fd:%d", fd);
	assert_int_equal(listen_addr_expand(v, 1, out, &n, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "is no listening TCP socket"));
	close(fd);
}

static void test_too_many(void **state)
{
	const char *v[LISTEN_ADDR_MAX + 1];
	char specs[LISTEN_ADDR_MAX + 1][24], err[256] = "";
	struct listen_addr out[LISTEN_ADDR_MAX];
	size_t n;

	(void)state;
	for (int i = 0; i <= LISTEN_ADDR_MAX; i++) {
		snprintf(specs[i], sizeof(specs[i]), "127.0.0.1:%d", 30000 + i);
		v[i] = specs[i];
	}
	assert_int_equal(listen_addr_expand(v, LISTEN_ADDR_MAX, out, &n, err, sizeof(err)), 0);
	assert_int_equal(n, LISTEN_ADDR_MAX);
	assert_int_equal(listen_addr_expand(v, LISTEN_ADDR_MAX + 1, out, &n, err, sizeof(err)),
			 -E2BIG);
	assert_non_null(strstr(err, "more than 16 sockets"));
}

static void test_format(void **state)
{
	struct listen_addr a;
	char err[256], buf[64];

	(void)state;
	assert_int_equal(listen_addr_parse("[::]:80", &a, err, sizeof(err)), 0);
	listen_addr_format(&a, buf, sizeof(buf));
	assert_string_equal(buf, ":80");
	assert_int_equal(listen_addr_parse("[2001:db8::1]:80", &a, err, sizeof(err)), 0);
	listen_addr_format(&a, buf, sizeof(buf));
	assert_string_equal(buf, "[2001:db8::1]:80");
	assert_int_equal(listen_addr_parse("[::ffff:10.0.0.1]:80", &a, err, sizeof(err)), 0);
	listen_addr_format(&a, buf, sizeof(buf));
	assert_string_equal(buf, "10.0.0.1:80");
	assert_int_equal(listen_addr_parse("[fe80::1%lo]:80", &a, err, sizeof(err)), 0);
	assert_int_equal(((struct sockaddr_in6 *)&a.ss)->sin6_scope_id, if_nametoindex("lo"));
	listen_addr_format(&a, buf, sizeof(buf));
	assert_string_equal(buf, "[fe80::1%lo]:80");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_overlaps),
		cmocka_unit_test(test_any_is_dual_stack),
		cmocka_unit_test(test_explicit_family_only),
		cmocka_unit_test(test_taken_address),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_systemd_fd),
		cmocka_unit_test(test_too_many),
		cmocka_unit_test(test_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
