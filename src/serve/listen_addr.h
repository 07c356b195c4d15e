/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * listen_addr.h - --web.listen-address (and the file's listen_addresses):
 * what an address as written means, and the sockets it asks for. Go's
 * net.Listen("tcp", ...), which node_exporter serves with, is the model:
 *
 *   ":P", "[::]:P"     every address, IPv6 and IPv4, on one IPv6 socket with
 *                      IPV6_V6ONLY off (dual-stack); where IPv6 is off, an
 *                      IPv4 socket on 0.0.0.0:P instead
 *   "0.0.0.0:P"        every IPv4 address only (Go makes this one dual-stack
 *                      too; whoever writes 0.0.0.0 asks for IPv4)
 *   "1.2.3.4:P", "[2001:db8::1]:P", "[fe80::1%eth0]:P"   that address only
 *   "NAME:P"           every address NAME resolves to (getaddrinfo), each on
 *                      its own socket; those of IPv6 skipped where IPv6 is
 *                      off (Go listens on one of them only)
 *   "fd:N"             a listening socket systemd passed (not for users)
 *
 * Two addresses that would take the same connections (":P" and
 * "127.0.0.1:P", "0.0.0.0:P" and "10.0.0.1:P", one written twice) are
 * refused, naming both.
 */
#ifndef IOLAT_LISTEN_ADDR_H
#define IOLAT_LISTEN_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* A listen "address" naming a socket already bound and listening, passed
 * in by systemd (socket activation): "fd:3". */
#define LISTEN_FD_PREFIX "fd:"

/* Sockets at most, from every address together (a name may give several). */
#define LISTEN_ADDR_MAX 16

enum listen_kind {
	LISTEN_ANY,  /* ":P", "[::]:P": IPv6 and IPv4 */
	LISTEN_ADDR, /* one address (0.0.0.0 included), written or resolved */
	LISTEN_NAME, /* a host name, not yet resolved */
	LISTEN_FD,   /* "fd:N" */
};

struct listen_addr {
	enum listen_kind kind;
	char spec[128]; /* as written */
	char host[128]; /* LISTEN_NAME: the name */
	uint16_t port;
	/* Where to bind: LISTEN_ADDR's address; LISTEN_ANY's [::] (dual set)
	 * or, where IPv6 is off, 0.0.0.0; LISTEN_FD's, as systemd bound it. */
	struct sockaddr_storage ss;
	socklen_t len;
	bool dual; /* an IPv6 socket that takes IPv4 too (IPV6_V6ONLY off) */
	int fd;	   /* LISTEN_FD's socket, else -1 */
	/* How it is listened on, for the log: "" for a plain address. */
	char note[224];
};

/* One address as a user writes it (no "fd:N"; names are not resolved).
 * 0 or -EINVAL with what is wrong in err. */
int listen_addr_parse(const char *spec, struct listen_addr *a, char *err, size_t len);

/* Every address parses and no two overlap (names are compared once
 * resolved, by listen_addr_expand). 0 or -EINVAL with err. */
int listen_addr_check(const char *const *specs, size_t n, char *err, size_t len);

/* Whether two parsed or resolved addresses would take the same connections. */
bool listen_addr_overlap(const struct listen_addr *a, const struct listen_addr *b);

/*
 * The sockets the addresses ask for, in out (LISTEN_ADDR_MAX room): names
 * resolved, ":P" made dual-stack or IPv4 by what the host has, "fd:N"
 * checked to be a listening TCP socket. Each gets a note saying how.
 * 0 or -errno with err (bad address, name not resolved, overlap, too many).
 */
int listen_addr_expand(const char *const *specs, size_t n, struct listen_addr *out, size_t *nout,
		       char *err, size_t len);

/* Binds and listens on a (not LISTEN_FD): a non-blocking socket in *fd.
 * 0 or -errno with err naming the address and what to do. */
int listen_addr_open(const struct listen_addr *a, int *fd, char *err, size_t len);

/* As a listen address is written: ":P" (LISTEN_ANY), "[v6]:P", "v4:P",
 * "fd:N"; unique per socket, so it names a listener across reloads. */
void listen_addr_format(const struct listen_addr *a, char *buf, size_t len);

/* Whether this host has IPv6: an IPv6 socket binds [::1] (as Go probes it).
 * If not, why in why. */
bool listen_ipv6_available(char *why, size_t len);

#endif
