/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tlsconf.h - the TLS settings of the web config, turned from
 * exporter-toolkit's words (Go's crypto/tls names) into what GnuTLS, under
 * libmicrohttpd, takes: a priority string, a client-certificate policy and
 * the lists a handshake is checked against (tls.h applies them).
 */
#ifndef IOLAT_TLSCONF_H
#define IOLAT_TLSCONF_H

#include <stdbool.h>
#include <stddef.h>

/* Go's tls.ClientAuthType, in its order (each asks more of the client). */
enum tls_client_auth {
	TLS_NO_CLIENT_CERT,		    /* no certificate asked for */
	TLS_REQUEST_CLIENT_CERT,	    /* asked for, not required, not verified */
	TLS_REQUIRE_ANY_CLIENT_CERT,	    /* required, not verified */
	TLS_VERIFY_CLIENT_CERT_IF_GIVEN,    /* not required; verified if sent */
	TLS_REQUIRE_AND_VERIFY_CLIENT_CERT, /* required and verified */
};

/* Whether the policy verifies a certificate against the client CAs. */
static inline bool tls_client_auth_verifies(enum tls_client_auth a)
{
	return a >= TLS_VERIFY_CLIENT_CERT_IF_GIVEN;
}

/*
 * One listener's TLS. All strings are owned (tlsconf_free). cert_pem NULL
 * means plain HTTP and everything else is unset.
 */
struct tls_settings {
	char *cert_pem, *key_pem;
	char *client_ca_pem; /* NULL: none (then client_auth does not verify) */
	enum tls_client_auth client_auth;
	/* A presented certificate needs one of these SANs; none: any. */
	char **allowed_sans;
	size_t nallowed_sans;
	/* TLS 1.2 and lower: the IANA (= Go) names a handshake may end on; none: any. */
	char **cipher_suites;
	size_t ncipher_suites;
	char *priorities; /* GnuTLS priority string */
};

/* Go's name of a client_auth_type (and its old alias RequireClientCert). 0 or -EINVAL. */
int tlsconf_client_auth(const char *name, enum tls_client_auth *out);
const char *tlsconf_client_auth_name(enum tls_client_auth a);

/* Every client_auth_type name, for messages. */
extern const char tlsconf_client_auth_names[];

/*
 * What makes the priority string: TLS versions min..max (10..13 for TLS 1.0
 * to 1.3), Go's cipher-suite and curve names in preference order (none:
 * GnuTLS's defaults), and whether the server's order wins.
 */
struct tlsconf_prio {
	unsigned int min_version, max_version;
	const char *const *ciphers;
	size_t nciphers;
	const char *const *curves;
	size_t ncurves;
	bool prefer_server;
};

/*
 * Checks one Go cipher-suite or curve name: 0, or -EINVAL with the reason
 * (unknown, or one Go itself calls insecure) in err, and the names known.
 */
int tlsconf_check_cipher(const char *name, char *err, size_t len);
int tlsconf_check_curve(const char *name, char *err, size_t len);

/*
 * Builds the GnuTLS priority string of p into *out (malloc'd) and checks
 * that this GnuTLS takes it and offers each TLS 1.2 suite named: a suite it
 * lacks is named in err. Names must have passed the checks above; versions
 * min <= max. 0, -EINVAL or -ENOMEM.
 */
int tlsconf_priorities(const struct tlsconf_prio *p, char **out, char *err, size_t len);

/*
 * Whether the TLS 1.2 (or older) suite of GnuTLS's kx, cipher and MAC
 * (gnutls_kx_algorithm_t, ...) is one t's cipher_suites name; true if none.
 */
bool tlsconf_suite_allowed(const struct tls_settings *t, unsigned int kx, unsigned int cipher,
			   unsigned int mac);

/* Deep copy (0 or -ENOMEM), equality, and freeing (the key wiped). */
int tlsconf_copy(struct tls_settings *dst, const struct tls_settings *src);
bool tlsconf_equal(const struct tls_settings *a, const struct tls_settings *b);
void tlsconf_free(struct tls_settings *t);

#endif
