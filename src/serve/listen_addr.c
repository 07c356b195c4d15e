// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* listen_addr.c - listen addresses as written, and their sockets (listen_addr.h). */
#include "serve/listen_addr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "util/parse.h"

static const char syntax_hint[] = "use host:port, :port or [v6]:port";

/* A port as written: at most five digits, 1 to 65535. */
static int parse_port(const char *p, uint16_t *port)
{
	uint64_t v;

	if (strlen(p) > 5 || parse_uint(p, 1, 65535, &v))
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

/* Letters, digits, '-' and '.', not all of it digits and dots (that is an
 * IPv4 address, or a mistyped one: "1.2.3" is not a name to look up). */
static bool is_host_name(const char *h)
{
	return *h && h[0] != '-' && h[0] != '.' &&
	       strspn(h, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.") ==
		   strlen(h) &&
	       strspn(h, "0123456789.") != strlen(h);
}

/* An IPv4-mapped IPv6 address is the IPv4 one (as Go takes it): an IPv4
 * socket, compared as IPv4. */
static void unmap_v4(struct listen_addr *a)
{
	struct sockaddr_in6 a6 = *(struct sockaddr_in6 *)&a->ss;
	struct sockaddr_in *a4 = (struct sockaddr_in *)&a->ss;

	if (a->ss.ss_family != AF_INET6 || !IN6_IS_ADDR_V4MAPPED(&a6.sin6_addr))
		return;
	memset(&a->ss, 0, sizeof(a->ss));
	a4->sin_family = AF_INET;
	a4->sin_port = a6.sin6_port;
	memcpy(&a4->sin_addr, &a6.sin6_addr.s6_addr[12], 4);
	a->len = sizeof(*a4);
}

/* A bracketed IPv6 literal, with an optional %zone (getaddrinfo reads it). */
static int parse_v6(const char *host, struct listen_addr *a)
{
	struct addrinfo hints = { .ai_family = AF_INET6,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV },
			*res = NULL;
	char port[8];

	snprintf(port, sizeof(port), "%u", a->port);
	if (getaddrinfo(host, port, &hints, &res) || !res)
		return -EINVAL;
	memcpy(&a->ss, res->ai_addr, res->ai_addrlen);
	a->len = res->ai_addrlen;
	freeaddrinfo(res);
	if (IN6_IS_ADDR_UNSPECIFIED(&((struct sockaddr_in6 *)&a->ss)->sin6_addr))
		a->kind = LISTEN_ANY; /* "[::]:P" is ":P", as in Go */
	unmap_v4(a);
	return 0;
}

static int parse_spec(const char *spec, struct listen_addr *a, bool allow_fd, char *err, size_t len)
{
	size_t pl = strlen(LISTEN_FD_PREFIX);
	const char *colon = strrchr(spec, ':');
	char host[128];
	size_t hl;

	memset(a, 0, sizeof(*a));
	a->fd = -1;
	if (strlen(spec) >= sizeof(a->spec)) {
		snprintf(err, len, "listen address '%.40s...' is too long", spec);
		return -EINVAL;
	}
	snprintf(a->spec, sizeof(a->spec), "%s", spec);
	if (allow_fd && !strncmp(spec, LISTEN_FD_PREFIX, pl)) {
		char *end;
		long n;

		errno = 0;
		n = strtol(spec + pl, &end, 10);
		if (errno || *end || end == spec + pl || n < 0 || n > INT_MAX) {
			snprintf(err, len, "bad systemd socket '%s'", spec);
			return -EINVAL;
		}
		a->kind = LISTEN_FD;
		a->fd = (int)n;
		return 0;
	}
	if (!strncmp(spec, LISTEN_FD_PREFIX, pl)) {
		snprintf(err, len,
			 "bad listen address '%s': \"fd:N\" is how iolat names systemd's sockets "
			 "(use --web.systemd-socket)",
			 spec);
		return -EINVAL;
	}
	if (!colon || parse_port(colon + 1, &a->port)) {
		snprintf(err, len,
			 "bad listen address '%s': no port, or not one of 1 to 65535 (%s)", spec,
			 syntax_hint);
		return -EINVAL;
	}
	hl = (size_t)(colon - spec);
	memcpy(host, spec, hl);
	host[hl] = '\0';
	if (!hl) {
		a->kind = LISTEN_ANY;
		return 0;
	}
	if (host[0] == '[') {
		if (hl < 3 || host[hl - 1] != ']')
			goto bad;
		host[hl - 1] = '\0';
		a->kind = LISTEN_ADDR;
		if (parse_v6(host + 1, a))
			goto bad;
		return 0;
	}
	if (strchr(host, ':')) {
		snprintf(err, len,
			 "bad listen address '%s': write an IPv6 address in brackets, as "
			 "[::1]:%u",
			 spec, a->port);
		return -EINVAL;
	}
	a->kind = LISTEN_ADDR;
	{
		struct sockaddr_in *a4 = (struct sockaddr_in *)&a->ss;

		if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
			a4->sin_family = AF_INET;
			a4->sin_port = htons(a->port);
			a->len = sizeof(*a4);
			return 0;
		}
	}
	if (!is_host_name(host))
		goto bad;
	a->kind = LISTEN_NAME;
	snprintf(a->host, sizeof(a->host), "%s", host);
	return 0;
bad:
	snprintf(err, len, "bad listen address '%s': '%s' is no IP address or host name (%s)", spec,
		 host, syntax_hint);
	return -EINVAL;
}

int listen_addr_parse(const char *spec, struct listen_addr *a, char *err, size_t len)
{
	return parse_spec(spec, a, false, err, len);
}

static bool unspecified(const struct listen_addr *a)
{
	if (a->ss.ss_family == AF_INET)
		return ((const struct sockaddr_in *)&a->ss)->sin_addr.s_addr == htonl(INADDR_ANY);
	return a->ss.ss_family == AF_INET6 &&
	       IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)&a->ss)->sin6_addr);
}

static bool same_addr(const struct listen_addr *a, const struct listen_addr *b)
{
	const struct sockaddr_in6 *a6 = (const void *)&a->ss, *b6 = (const void *)&b->ss;

	if (a->ss.ss_family == AF_INET)
		return ((const struct sockaddr_in *)&a->ss)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)&b->ss)->sin_addr.s_addr;
	return !memcmp(&a6->sin6_addr, &b6->sin6_addr, sizeof(a6->sin6_addr)) &&
	       a6->sin6_scope_id == b6->sin6_scope_id;
}

bool listen_addr_overlap(const struct listen_addr *a, const struct listen_addr *b)
{
	/* systemd bound its sockets; a name is compared by its addresses. */
	if (a->kind == LISTEN_FD || b->kind == LISTEN_FD || a->kind == LISTEN_NAME ||
	    b->kind == LISTEN_NAME || a->port != b->port)
		return false;
	/* ":P" takes both families whatever the host has: a setting is refused
	 * or not the same on every host. */
	if (a->kind == LISTEN_ANY || b->kind == LISTEN_ANY)
		return true;
	if (a->ss.ss_family != b->ss.ss_family)
		return false;
	return unspecified(a) || unspecified(b) || same_addr(a, b);
}

/* The error for two overlapping addresses: which and why, and what to do. */
static int overlap_error(const struct listen_addr *a, const struct listen_addr *b, char *err,
			 size_t len)
{
	const struct listen_addr *wide = a->kind == LISTEN_ANY || unspecified(a) ? a : b;
	char wa[INET6_ADDRSTRLEN + 16], wb[INET6_ADDRSTRLEN + 16];

	listen_addr_format(a, wa, sizeof(wa));
	listen_addr_format(b, wb, sizeof(wb));
	if (!strcmp(a->spec, b->spec))
		snprintf(err, len, "listen address '%s' is given twice: give it once", a->spec);
	else if (wide->kind == LISTEN_ANY || unspecified(wide))
		snprintf(err, len,
			 "listen addresses '%s' and '%s' overlap: '%s' already takes every %s "
			 "address on port %u; give one of them",
			 a->spec, b->spec, wide->spec,
			 wide->kind == LISTEN_ANY ? "IPv6 and IPv4" : "IPv4", wide->port);
	else
		snprintf(err, len,
			 "listen addresses '%s' and '%s' are the same address (%s); give one "
			 "of them",
			 a->spec, b->spec, strcmp(wa, a->spec) ? wa : wb);
	return -EINVAL;
}

/* Refuses the first pair in v that overlaps. */
static int check_pairs(const struct listen_addr *v, size_t n, char *err, size_t len)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < i; j++)
			if (listen_addr_overlap(&v[j], &v[i]))
				return overlap_error(&v[j], &v[i], err, len);
	return 0;
}

int listen_addr_check(const char *const *specs, size_t n, char *err, size_t len)
{
	struct listen_addr *v = calloc(n ? n : 1, sizeof(*v));
	int rc = v ? 0 : -ENOMEM;

	for (size_t i = 0; !rc && i < n; i++)
		rc = listen_addr_parse(specs[i], &v[i], err, len);
	if (!rc)
		rc = check_pairs(v, n, err, len);
	if (rc == -ENOMEM)
		snprintf(err, len, "out of memory");
	free(v);
	return rc;
}

bool listen_ipv6_available(char *why, size_t len)
{
	struct sockaddr_in6 lo = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1, rc = 0;

	if (fd < 0) {
		snprintf(why, len, "no IPv6 sockets: %s", strerror(errno));
		return false;
	}
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&lo, sizeof(lo))) {
		rc = errno;
		snprintf(why, len, "[::1] cannot be bound: %s%s", strerror(rc),
			 rc == EADDRNOTAVAIL ? "; net.ipv6.conf.all.disable_ipv6=1?" : "");
	}
	close(fd);
	return rc == 0;
}

/* ":P": [::] with IPV6_V6ONLY off, or 0.0.0.0 where IPv6 is off. */
static void resolve_any(struct listen_addr *a, bool v6, const char *why)
{
	memset(&a->ss, 0, sizeof(a->ss));
	if (v6) {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&a->ss;

		a6->sin6_family = AF_INET6;
		a6->sin6_addr = in6addr_any;
		a6->sin6_port = htons(a->port);
		a->len = sizeof(*a6);
		a->dual = true;
		snprintf(a->note, sizeof(a->note),
			 "IPv6 and IPv4 on one dual-stack socket ([::]:%u)", a->port);
		return;
	}
	struct sockaddr_in *a4 = (struct sockaddr_in *)&a->ss;

	a4->sin_family = AF_INET;
	a4->sin_addr.s_addr = htonl(INADDR_ANY);
	a4->sin_port = htons(a->port);
	a->len = sizeof(*a4);
	snprintf(a->note, sizeof(a->note), "IPv4 only (0.0.0.0:%u): IPv6 is off on this host (%s)",
		 a->port, why);
}

/* systemd's socket: a listening TCP socket, and where it is bound. */
static int resolve_fd(struct listen_addr *a, char *err, size_t len)
{
	int v6only = 0;
	socklen_t ol = sizeof(v6only);

	a->len = sizeof(a->ss);
	if (sd_is_socket(a->fd, AF_UNSPEC, SOCK_STREAM, 1) <= 0 ||
	    getsockname(a->fd, (struct sockaddr *)&a->ss, &a->len) ||
	    (a->ss.ss_family != AF_INET && a->ss.ss_family != AF_INET6)) {
		snprintf(err, len, "systemd socket '%s' is no listening TCP socket (ListenStream=)",
			 a->spec);
		return -EINVAL;
	}
	if (a->ss.ss_family == AF_INET6 && unspecified(a) &&
	    !getsockopt(a->fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, &ol) && !v6only) {
		a->dual = true;
		snprintf(a->note, sizeof(a->note), "systemd's socket, IPv6 and IPv4 (dual-stack)");
	}
	return 0;
}

/* A name's addresses, each its own socket; IPv6 ones skipped where IPv6 is
 * off, and said so in the first one's note. */
static int resolve_name(const struct listen_addr *a, bool v6, const char *why,
			struct listen_addr *out, size_t room, size_t *n, char *err, size_t len)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res, *r;
	char addr[INET6_ADDRSTRLEN + IF_NAMESIZE + 16];
	size_t first = *n, skipped = 0;
	int rc = getaddrinfo(a->host, NULL, &hints, &res);

	if (rc) {
		snprintf(err, len,
			 "listen address '%s': cannot resolve '%s': %s (give an IP address)",
			 a->spec, a->host, rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
		return -EINVAL;
	}
	for (r = res; r; r = r->ai_next) {
		struct listen_addr x = *a;
		bool dup = false;

		if ((r->ai_family != AF_INET && r->ai_family != AF_INET6) ||
		    r->ai_addrlen > sizeof(x.ss))
			continue;
		if (r->ai_family == AF_INET6 && !v6) {
			skipped++;
			continue;
		}
		x.kind = LISTEN_ADDR;
		memset(&x.ss, 0, sizeof(x.ss));
		memcpy(&x.ss, r->ai_addr, r->ai_addrlen);
		x.len = r->ai_addrlen;
		((struct sockaddr_in *)&x.ss)->sin_port = htons(a->port); /* same spot in both */
		unmap_v4(&x);
		for (size_t i = first; i < *n && !dup; i++)
			dup = x.ss.ss_family == out[i].ss.ss_family && same_addr(&x, &out[i]);
		if (dup)
			continue;
		if (*n == room) {
			freeaddrinfo(res);
			snprintf(err, len,
				 "listen addresses give more than %d sockets (the names too)",
				 LISTEN_ADDR_MAX);
			return -E2BIG;
		}
		listen_addr_format(&x, addr, sizeof(addr));
		snprintf(x.note, sizeof(x.note), "%s (resolved from %s)", addr, a->host);
		out[(*n)++] = x;
	}
	freeaddrinfo(res);
	if (*n == first) {
		snprintf(err, len,
			 "listen address '%s': '%s' has no address this host can listen on%s%s",
			 a->spec, a->host, skipped ? ": IPv6 is off here, " : "",
			 skipped ? why : "");
		return -EADDRNOTAVAIL;
	}
	if (skipped) {
		listen_addr_format(&out[first], addr, sizeof(addr));
		snprintf(out[first].note, sizeof(out[first].note),
			 "%s (resolved from %s); its IPv6 addresses skipped: IPv6 is off on this "
			 "host (%s)",
			 addr, a->host, why);
	}
	return 0;
}

int listen_addr_expand(const char *const *specs, size_t n, struct listen_addr *out, size_t *nout,
		       char *err, size_t len)
{
	char why[160] = "";
	bool v6 = listen_ipv6_available(why, sizeof(why));
	int rc = 0;

	*nout = 0;
	for (size_t i = 0; !rc && i < n; i++) {
		struct listen_addr a;

		rc = parse_spec(specs[i], &a, true, err, len);
		if (rc)
			break;
		if (a.kind == LISTEN_NAME) {
			rc = resolve_name(&a, v6, why, out, LISTEN_ADDR_MAX, nout, err, len);
			continue;
		}
		if (*nout == LISTEN_ADDR_MAX) {
			snprintf(err, len,
				 "listen addresses give more than %d sockets (the names too)",
				 LISTEN_ADDR_MAX);
			return -E2BIG;
		}
		if (a.kind == LISTEN_ANY)
			resolve_any(&a, v6, why);
		else if (a.kind == LISTEN_FD)
			rc = resolve_fd(&a, err, len);
		out[(*nout)++] = a;
	}
	return rc ? rc : check_pairs(out, *nout, err, len);
}

void listen_addr_format(const struct listen_addr *a, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN + IF_NAMESIZE + 2] = "", port[8];

	if (a->kind == LISTEN_ANY) {
		snprintf(buf, len, ":%u", a->port);
		return;
	}
	if (a->kind == LISTEN_NAME || (a->kind == LISTEN_FD && !a->len) ||
	    getnameinfo((const struct sockaddr *)&a->ss, a->len, host, sizeof(host), port,
			sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV)) {
		snprintf(buf, len, "%s", a->spec);
		return;
	}
	if (a->kind == LISTEN_FD)
		snprintf(buf, len, "%s", a->spec);
	else
		snprintf(buf, len, a->ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, port);
}

int listen_addr_open(const struct listen_addr *a, int *out, char *err, size_t len)
{
	int fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int one = 1, v6only = !a->dual, rc;
	char where[200], addr[INET6_ADDRSTRLEN + 24];

	listen_addr_format(a, addr, sizeof(addr));
	if (a->kind == LISTEN_ADDR && strcmp(addr, a->spec))
		snprintf(where, sizeof(where), "%s (from '%s')", addr, a->spec);
	else
		snprintf(where, sizeof(where), "'%s'", a->spec);
	/* SO_REUSEADDR: a restart binds again while the last run's connections
	 * are in TIME_WAIT. IPV6_V6ONLY set either way, so that
	 * net.ipv6.bindv6only does not decide it. */
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    (a->ss.ss_family == AF_INET6 &&
	     setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof(v6only))) ||
	    bind(fd, (const struct sockaddr *)&a->ss, a->len) || listen(fd, SOMAXCONN)) {
		rc = -errno;
		if (fd >= 0)
			close(fd);
		if (rc == -EACCES)
			snprintf(err, len,
				 "cannot listen on %s: permission denied (a port below "
				 "net.ipv4.ip_unprivileged_port_start, 1024 by default, takes "
				 "CAP_NET_BIND_SERVICE)",
				 where);
		else if (rc == -EADDRINUSE)
			snprintf(err, len,
				 "cannot listen on %s: the address is in use (by another "
				 "program, or another iolat serve)",
				 where);
		else if (rc == -EADDRNOTAVAIL)
			snprintf(err, len, "cannot listen on %s: not an address of this host%s",
				 where,
				 a->ss.ss_family == AF_INET6 ? " (or IPv6 is off here)" : "");
		else
			snprintf(err, len, "cannot listen on %s: %s", where, strerror(-rc));
		return rc;
	}
	*out = fd;
	return 0;
}
