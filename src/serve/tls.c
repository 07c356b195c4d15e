// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tls.c - per-connection TLS policy on libmicrohttpd's GnuTLS sessions (tls.h).
 *
 * libmicrohttpd asks for a client certificate whenever it has client CAs and
 * verifies nothing; Go's five client_auth_type policies are set here on each
 * session instead, and a certificate is checked while the handshake runs
 * (gnutls_session_set_verify_function), so a refused client gets a failed
 * handshake as with exporter-toolkit, not an HTTP answer.
 */
#include "serve/tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"

/* The settings of the connection a session belongs to (tls_conn_head). */
static const struct tls_settings *settings_of(gnutls_session_t session)
{
	struct MHD_Connection *conn = gnutls_session_get_ptr(session);
	const union MHD_ConnectionInfo *i;

	if (!conn)
		return NULL;
	i = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	if (!i || !i->socket_context)
		return NULL;
	return ((const struct tls_conn_head *)i->socket_context)->tls;
}

/* One SAN as Go's x509 package prints it: DNS, e-mail and URI as they are, IPs in text. */
static bool san_text(unsigned int type, const unsigned char *v, size_t len, char *out, size_t olen)
{
	struct in6_addr a6;

	switch (type) {
	case GNUTLS_SAN_DNSNAME:
	case GNUTLS_SAN_RFC822NAME:
	case GNUTLS_SAN_URI:
		if (len >= olen || memchr(v, '\0', len))
			return false;
		memcpy(out, v, len);
		out[len] = '\0';
		return true;
	case GNUTLS_SAN_IPADDRESS:
		if (len == 4)
			return inet_ntop(AF_INET, v, out, (socklen_t)olen) != NULL;
		if (len != 16)
			return false;
		memcpy(&a6, v, sizeof(a6));
		/* Go prints an IPv4-mapped address as the IPv4 one. */
		if (IN6_IS_ADDR_V4MAPPED(&a6))
			return inet_ntop(AF_INET, v + 12, out, (socklen_t)olen) != NULL;
		return inet_ntop(AF_INET6, v, out, (socklen_t)olen) != NULL;
	default:
		return false;
	}
}

/* Whether the leaf certificate der has a SAN that t allows (exact match). */
static bool san_allowed(const struct tls_settings *t, const gnutls_datum_t *der)
{
	gnutls_x509_crt_t crt;
	bool ok = false;

	if (gnutls_x509_crt_init(&crt) < 0)
		return false;
	if (gnutls_x509_crt_import(crt, der, GNUTLS_X509_FMT_DER) < 0)
		goto out;
	for (unsigned int seq = 0; !ok; seq++) {
		unsigned char v[1024];
		size_t len = sizeof(v);
		char text[1024];
		int type = gnutls_x509_crt_get_subject_alt_name(crt, seq, v, &len, NULL);

		if (type == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE)
			break;
		if (type < 0 || !san_text((unsigned int)type, v, len, text, sizeof(text)))
			continue;
		for (size_t i = 0; i < t->nallowed_sans && !ok; i++)
			ok = !strcmp(t->allowed_sans[i], text);
	}
out:
	gnutls_x509_crt_deinit(crt);
	return ok;
}

/*
 * Runs when the client's certificate arrives. No certificate: the request
 * policy already decided (GnuTLS fails a required one itself). Otherwise
 * verify it against the client CAs, for client authentication, where the
 * policy says so, then the SANs. Non-zero ends the handshake.
 */
static int verify_peer(gnutls_session_t session)
{
	const struct tls_settings *t = settings_of(session);
	const gnutls_datum_t *certs;
	unsigned int n = 0, status = 0;

	if (!t)
		return GNUTLS_E_CERTIFICATE_ERROR;
	certs = gnutls_certificate_get_peers(session, &n);
	if (!certs || !n)
		return 0;
	if (tls_client_auth_verifies(t->client_auth)) {
		gnutls_typed_vdata_st purpose = { .type = GNUTLS_DT_KEY_PURPOSE_OID,
						  .data =
						      (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT };

		if (gnutls_certificate_verify_peers(session, &purpose, 1, &status) < 0 || status) {
			log_debug("TLS: client certificate refused", LOG_UINT("status", status));
			return GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR;
		}
	}
	if (t->nallowed_sans && !san_allowed(t, &certs[0])) {
		log_debug("TLS: client certificate has none of client_allowed_sans");
		return GNUTLS_E_CERTIFICATE_ERROR;
	}
	return 0;
}

/*
 * After the client's Finished of a TLS 1.2 (or older) handshake, the first
 * point where GnuTLS tells the cipher and MAC in use, and before the
 * server's Finished: the suite must be one cipher_suites names (tlsconf.c
 * says why it may not be). An error here fails the handshake.
 */
static int check_suite(gnutls_session_t session, unsigned int htype, unsigned int when,
		       unsigned int incoming, const gnutls_datum_t *msg)
{
	const struct tls_settings *t = settings_of(session);

	(void)htype, (void)when, (void)msg;
	if (!t)
		return GNUTLS_E_INTERNAL_ERROR;
	if (!incoming || gnutls_protocol_get_version(session) == GNUTLS_TLS1_3)
		return 0;
	if (tlsconf_suite_allowed(t, (unsigned int)gnutls_kx_get(session),
				  (unsigned int)gnutls_cipher_get(session),
				  (unsigned int)gnutls_mac_get(session)))
		return 0;
	log_debug("TLS: a handshake refused: not among cipher_suites",
		  LOG_STR("cipher_suite", gnutls_cipher_suite_get_name(gnutls_kx_get(session),
								       gnutls_cipher_get(session),
								       gnutls_mac_get(session))));
	return GNUTLS_E_NO_CIPHER_SUITES;
}

int tls_conn_start(struct MHD_Connection *conn, const struct tls_settings *t)
{
	const union MHD_ConnectionInfo *i =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	gnutls_certificate_request_t req = GNUTLS_CERT_IGNORE;
	gnutls_session_t s;

	if (!i || !i->tls_session)
		return -EIO;
	s = i->tls_session;
	switch (t->client_auth) {
	case TLS_NO_CLIENT_CERT:
		req = GNUTLS_CERT_IGNORE;
		break;
	case TLS_REQUEST_CLIENT_CERT:
	case TLS_VERIFY_CLIENT_CERT_IF_GIVEN:
		req = GNUTLS_CERT_REQUEST;
		break;
	case TLS_REQUIRE_ANY_CLIENT_CERT:
	case TLS_REQUIRE_AND_VERIFY_CLIENT_CERT:
		req = GNUTLS_CERT_REQUIRE;
		break;
	}
	gnutls_certificate_server_set_request(s, req);
	if (req != GNUTLS_CERT_IGNORE &&
	    (tls_client_auth_verifies(t->client_auth) || t->nallowed_sans))
		gnutls_session_set_verify_function(s, verify_peer);
	if (t->ncipher_suites)
		gnutls_handshake_set_hook_function(s, GNUTLS_HANDSHAKE_FINISHED, GNUTLS_HOOK_POST,
						   check_suite);
	return 0;
}
