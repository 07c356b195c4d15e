// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tlsconf.c - Go's TLS words as GnuTLS takes them (tlsconf.h).
 *
 * GnuTLS picks a TLS 1.2 suite from the product of the key exchanges,
 * ciphers and MACs a priority string enables; Go takes a list of whole
 * suites. The priority string enables the parts of the suites named, in
 * their order, and tls.c refuses a handshake that lands on a combination
 * not named (tlsconf_suite_allowed), so the list is honoured exactly. With
 * the server's order (the default), a listed suite comes first whenever the
 * client offers one; with the client's order, a client that prefers an
 * unlisted combination is refused rather than served with it.
 */
#define _GNU_SOURCE
#include "serve/tlsconf.h"

#include <errno.h>
#include <gnutls/gnutls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strv.h"

/*
 * Go's cipher suites (crypto/tls CipherSuites() and InsecureCipherSuites()),
 * named as IANA names them, with the GnuTLS parts of each. TLS 1.3 suites
 * have no parts: neither Go nor exporter-toolkit lets them be chosen.
 */
struct suite {
	const char *name;
	const char *kx, *cipher, *mac; /* NULL for TLS 1.3 */
	bool insecure;		       /* Go's InsecureCipherSuites(): exporter-toolkit refuses */
};

static const struct suite suites[] = {
	{ "TLS_RSA_WITH_AES_128_CBC_SHA", "RSA", "AES-128-CBC", "SHA1", false },
	{ "TLS_RSA_WITH_AES_256_CBC_SHA", "RSA", "AES-256-CBC", "SHA1", false },
	{ "TLS_RSA_WITH_AES_128_GCM_SHA256", "RSA", "AES-128-GCM", "AEAD", false },
	{ "TLS_RSA_WITH_AES_256_GCM_SHA384", "RSA", "AES-256-GCM", "AEAD", false },
	{ "TLS_AES_128_GCM_SHA256", NULL, NULL, NULL, false },
	{ "TLS_AES_256_GCM_SHA384", NULL, NULL, NULL, false },
	{ "TLS_CHACHA20_POLY1305_SHA256", NULL, NULL, NULL, false },
	{ "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA", "AES-128-CBC", "SHA1", false },
	{ "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA", "AES-256-CBC", "SHA1", false },
	{ "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA", "AES-128-CBC", "SHA1", false },
	{ "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA", "AES-256-CBC", "SHA1", false },
	{ "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA", "AES-128-GCM", "AEAD", false },
	{ "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA", "AES-256-GCM", "AEAD", false },
	{ "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA", "AES-128-GCM", "AEAD", false },
	{ "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA", "AES-256-GCM", "AEAD", false },
	{ "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA", "CHACHA20-POLY1305", "AEAD",
	  false },
	{ "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA", "CHACHA20-POLY1305",
	  "AEAD", false },
	{ "TLS_RSA_WITH_RC4_128_SHA", NULL, NULL, NULL, true },
	{ "TLS_RSA_WITH_3DES_EDE_CBC_SHA", NULL, NULL, NULL, true },
	{ "TLS_RSA_WITH_AES_128_CBC_SHA256", NULL, NULL, NULL, true },
	{ "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA", NULL, NULL, NULL, true },
	{ "TLS_ECDHE_RSA_WITH_RC4_128_SHA", NULL, NULL, NULL, true },
	{ "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA", NULL, NULL, NULL, true },
	{ "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", NULL, NULL, NULL, true },
	{ "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", NULL, NULL, NULL, true },
};

#define NSUITES (sizeof(suites) / sizeof(suites[0]))

/* exporter-toolkit's curve names and GnuTLS's groups. */
static const struct {
	const char *name, *group;
} curves[] = {
	{ "CurveP256", "GROUP-SECP256R1" },
	{ "CurveP384", "GROUP-SECP384R1" },
	{ "CurveP521", "GROUP-SECP521R1" },
	{ "X25519", "GROUP-X25519" },
};

static const char *const client_auth_names[] = {
	[TLS_NO_CLIENT_CERT] = "NoClientCert",
	[TLS_REQUEST_CLIENT_CERT] = "RequestClientCert",
	[TLS_REQUIRE_ANY_CLIENT_CERT] = "RequireAnyClientCert",
	[TLS_VERIFY_CLIENT_CERT_IF_GIVEN] = "VerifyClientCertIfGiven",
	[TLS_REQUIRE_AND_VERIFY_CLIENT_CERT] = "RequireAndVerifyClientCert",
};

const char tlsconf_client_auth_names[] = "NoClientCert, RequestClientCert, RequireAnyClientCert, "
					 "VerifyClientCertIfGiven, RequireAndVerifyClientCert";

int tlsconf_client_auth(const char *name, enum tls_client_auth *out)
{
	for (size_t i = 0; i < sizeof(client_auth_names) / sizeof(client_auth_names[0]); i++)
		if (!strcmp(name, client_auth_names[i])) {
			*out = (enum tls_client_auth)i;
			return 0;
		}
	/* exporter-toolkit still takes the name older releases used. */
	if (!strcmp(name, "RequireClientCert")) {
		*out = TLS_REQUIRE_ANY_CLIENT_CERT;
		return 0;
	}
	return -EINVAL;
}

const char *tlsconf_client_auth_name(enum tls_client_auth a)
{
	return client_auth_names[a];
}

static const struct suite *find_suite(const char *name)
{
	for (size_t i = 0; i < NSUITES; i++)
		if (!strcmp(suites[i].name, name))
			return &suites[i];
	return NULL;
}

int tlsconf_check_cipher(const char *name, char *err, size_t len)
{
	const struct suite *s = find_suite(name);

	if (s && !s->insecure)
		return 0;
	if (s)
		snprintf(err, len,
			 "cipher suite \"%s\" is one Go lists as insecure, which exporter-toolkit "
			 "refuses too; pick from Go's tls.CipherSuites(), e.g. "
			 "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
			 name);
	else
		snprintf(err, len,
			 "unknown cipher suite \"%s\" (Go's names, e.g. "
			 "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 or "
			 "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384)",
			 name);
	return -EINVAL;
}

int tlsconf_check_curve(const char *name, char *err, size_t len)
{
	for (size_t i = 0; i < sizeof(curves) / sizeof(curves[0]); i++)
		if (!strcmp(curves[i].name, name))
			return 0;
	snprintf(err, len, "unknown curve \"%s\" (known: CurveP256, CurveP384, CurveP521, X25519)",
		 name);
	return -EINVAL;
}

/* Appends ":+word" to the string in f unless an earlier part put it there. */
static void add_once(FILE *f, char **words, size_t *n, const char *word)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp(words[i], word))
			return;
	words[(*n)++] = (char *)word;
	fprintf(f, ":+%s", word);
}

/* Whether prio offers the suite whose GnuTLS parts are s's. */
static bool offers(gnutls_priority_t prio, const struct suite *s)
{
	const char *want = gnutls_cipher_suite_get_name(
	    gnutls_kx_get_id(s->kx), gnutls_cipher_get_id(s->cipher), gnutls_mac_get_id(s->mac));
	unsigned int i, idx;
	int r;

	if (!want)
		return false;
	for (i = 0;; i++) {
		gnutls_kx_algorithm_t kx;
		gnutls_cipher_algorithm_t c;
		gnutls_mac_algorithm_t m;

		r = gnutls_priority_get_cipher_suite_index(prio, i, &idx);
		if (r == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE)
			return false;
		if (r)
			continue;
		gnutls_cipher_suite_info(idx, NULL, &kx, &c, &m, NULL);
		if (kx == gnutls_kx_get_id(s->kx) && c == gnutls_cipher_get_id(s->cipher) &&
		    m == gnutls_mac_get_id(s->mac))
			return true;
	}
}

int tlsconf_priorities(const struct tlsconf_prio *p, char **out, char *err, size_t len)
{
	/* Every part at most once: kx, cipher and MAC of each suite, TLS 1.3's four. */
	char *seen[3 * NSUITES + 8];
	size_t nseen = 0, n12 = 0, sz = 0;
	gnutls_priority_t prio;
	const char *where;
	char *s = NULL;
	FILE *f = open_memstream(&s, &sz);
	int r;

	*out = NULL;
	if (!f)
		return -ENOMEM;
	fputs("NORMAL", f);
	if (p->prefer_server)
		fputs(":%SERVER_PRECEDENCE", f);
	fputs(":-VERS-ALL", f);
	for (unsigned int v = p->max_version; v >= p->min_version && v >= 10; v--)
		fprintf(f, ":+VERS-TLS1.%u", v - 10);
	for (size_t i = 0; i < p->nciphers; i++)
		n12 += find_suite(p->ciphers[i])->kx != NULL;
	if (p->nciphers) {
		fputs(":-KX-ALL:-CIPHER-ALL:-MAC-ALL", f);
		for (size_t i = 0; i < p->nciphers; i++) {
			const struct suite *st = find_suite(p->ciphers[i]);

			if (!st->kx)
				continue;
			add_once(f, seen, &nseen, st->kx);
			add_once(f, seen, &nseen, st->cipher);
			add_once(f, seen, &nseen, st->mac);
		}
		/* Go's cipher_suites leave TLS 1.3's alone: so does this. */
		if (p->max_version >= 13) {
			add_once(f, seen, &nseen, "AES-256-GCM");
			add_once(f, seen, &nseen, "CHACHA20-POLY1305");
			add_once(f, seen, &nseen, "AES-128-GCM");
			add_once(f, seen, &nseen, "AES-128-CCM");
			add_once(f, seen, &nseen, "AEAD");
		}
	}
	if (p->ncurves) {
		fputs(":-GROUP-ALL", f);
		for (size_t i = 0; i < p->ncurves; i++)
			for (size_t j = 0; j < sizeof(curves) / sizeof(curves[0]); j++)
				if (!strcmp(curves[j].name, p->curves[i]))
					fprintf(f, ":+%s", curves[j].group);
	}
	if (fclose(f) || !s) {
		free(s);
		return -ENOMEM;
	}
	if (p->nciphers && !n12 && p->max_version < 13) {
		snprintf(err, len,
			 "cipher_suites names only TLS 1.3 suites, but max_version is below "
			 "TLS13: no handshake could succeed");
		free(s);
		return -EINVAL;
	}
	r = gnutls_priority_init(&prio, s, &where);
	if (r < 0) {
		snprintf(err, len, "GnuTLS does not take the TLS settings (%s, at \"%s\")",
			 gnutls_strerror(r), where ? where : "?");
		free(s);
		return -EINVAL;
	}
	for (size_t i = 0; i < p->nciphers; i++) {
		const struct suite *st = find_suite(p->ciphers[i]);

		if (st->kx && (p->min_version > 12 || !offers(prio, st))) {
			snprintf(err, len,
				 p->min_version > 12
				     ? "cipher suite \"%s\" is for TLS 1.2 and lower, but "
				       "min_version is TLS13"
				     : "cipher suite \"%s\" has no equivalent in this system's "
				       "GnuTLS (its crypto policy may disable it); leave it out",
				 st->name);
			gnutls_priority_deinit(prio);
			free(s);
			return -EINVAL;
		}
	}
	gnutls_priority_deinit(prio);
	*out = s;
	return 0;
}

bool tlsconf_suite_allowed(const struct tls_settings *t, unsigned int kx, unsigned int cipher,
			   unsigned int mac)
{
	if (!t->ncipher_suites)
		return true;
	for (size_t i = 0; i < t->ncipher_suites; i++) {
		const struct suite *s = find_suite(t->cipher_suites[i]);

		if (s && s->kx && (unsigned int)gnutls_kx_get_id(s->kx) == kx &&
		    (unsigned int)gnutls_cipher_get_id(s->cipher) == cipher &&
		    (unsigned int)gnutls_mac_get_id(s->mac) == mac)
			return true;
	}
	return false;
}

int tlsconf_copy(struct tls_settings *dst, const struct tls_settings *src)
{
	bool oom = false;

	*dst = (struct tls_settings){ .client_auth = src->client_auth,
				      .nallowed_sans = src->nallowed_sans,
				      .ncipher_suites = src->ncipher_suites };
	dst->cert_pem = strv_dup_or_null(src->cert_pem, &oom);
	dst->key_pem = strv_dup_or_null(src->key_pem, &oom);
	dst->client_ca_pem = strv_dup_or_null(src->client_ca_pem, &oom);
	dst->priorities = strv_dup_or_null(src->priorities, &oom);
	dst->allowed_sans = strv_dup(src->allowed_sans, src->nallowed_sans, &oom);
	dst->cipher_suites = strv_dup(src->cipher_suites, src->ncipher_suites, &oom);
	if (oom) {
		/* A list calloc that failed leaves its count with no array. */
		if (!dst->allowed_sans)
			dst->nallowed_sans = 0;
		if (!dst->cipher_suites)
			dst->ncipher_suites = 0;
		tlsconf_free(dst);
		return -ENOMEM;
	}
	return 0;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool same_list(char *const *a, size_t na, char *const *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (!same_str(a[i], b[i]))
			return false;
	return true;
}

bool tlsconf_equal(const struct tls_settings *a, const struct tls_settings *b)
{
	return same_str(a->cert_pem, b->cert_pem) && same_str(a->key_pem, b->key_pem) &&
	       same_str(a->client_ca_pem, b->client_ca_pem) && a->client_auth == b->client_auth &&
	       same_str(a->priorities, b->priorities) &&
	       same_list(a->allowed_sans, a->nallowed_sans, b->allowed_sans, b->nallowed_sans) &&
	       same_list(a->cipher_suites, a->ncipher_suites, b->cipher_suites, b->ncipher_suites);
}

void tlsconf_free(struct tls_settings *t)
{
	if (!t)
		return;
	free(t->cert_pem);
	if (t->key_pem) {
		explicit_bzero(t->key_pem, strlen(t->key_pem));
		free(t->key_pem);
	}
	free(t->client_ca_pem);
	free(t->priorities);
	strv_free(t->allowed_sans, t->nallowed_sans);
	strv_free(t->cipher_suites, t->ncipher_suites);
	memset(t, 0, sizeof(*t));
}
