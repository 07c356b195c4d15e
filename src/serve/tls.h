/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tls.h - a listener's TLS settings (tlsconf.h) applied to each connection
 * libmicrohttpd opens: which client certificates are asked for, required
 * and verified, the SANs they must carry, and the TLS 1.2 suites a
 * handshake may end on. The certificate, key, client CAs and priority
 * string go to libmicrohttpd as daemon options (http_listeners.c).
 */
#ifndef IOLAT_TLS_H
#define IOLAT_TLS_H

#include "serve/tlsconf.h"

struct MHD_Connection;

/*
 * The socket context http_conns.c keeps for each connection starts with this:
 * the handshake's callbacks get only the GnuTLS session, whose pointer
 * libmicrohttpd sets to its connection, and find the settings through it.
 * t must outlive the connection (http_listeners.c: the listener's own copy).
 */
struct tls_conn_head {
	const struct tls_settings *tls;
};

/*
 * Sets up conn's TLS session by t before its handshake, at
 * MHD_CONNECTION_NOTIFY_STARTED, after the socket context (whose head is
 * set to t) exists. 0, or -EIO if the connection has no TLS session.
 */
int tls_conn_start(struct MHD_Connection *conn, const struct tls_settings *t);

#endif
