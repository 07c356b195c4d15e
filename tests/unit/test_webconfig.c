// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_webconfig.c - the web config loader: valid files, each error with its
 * message and line, and basic-auth checks against bcrypt hashes. Every key
 * of exporter-toolkit's format: the TLS settings as GnuTLS gets them, the
 * headers, http2 and the rate limit.
 *
 * YAML cases are written into a temporary directory next to copies of the
 * fixture cert and key (tests/unit/data/, see its README), so relative
 * cert paths are checked too. Run from the repository root, as `make unit` does.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* After setjmp.h, stdarg.h and stddef.h, which it needs. */
#include <cmocka.h>

#include <gnutls/gnutls.h>

#include "serve/webconfig.h"

#define DATA_DIR "tests/unit/data"

/*
 * Made with apache2-utils: htpasswd -nbBC COST USER PASSWORD. The $2a$ and
 * $2b$ forms are the $2y$ one with the prefix changed, which for an ASCII
 * password is the same hash.
 */
#define ALICE_PW "correct horse"
#define ALICE_HASH "$2y$10$YtvBZQ2h28nXNhDnGpfKQulVtrxLLl1ItppINR/l.EirmXD31MV6q"
#define BOB_PW "s3cret"
#define BOB_TAIL "04$TwYUY/wF1oCp9g2RB/vKX.etA24u/Sa/sreypEr8.3l3yENAnUHIm"
#define CAROL_HASH "$2y$04$bK3NqM2EDSlh72v4zIIouu0sP3jBNCgNhc/0FolG37zHkMwdnV7Ui" /* "" */

#define USERS                                                                                      \
	"basic_auth_users:\n"                                                                      \
	"  alice: " ALICE_HASH "\n"                                                                \
	"  bob: $2y$" BOB_TAIL "\n"                                                                \
	"  bob_b: $2b$" BOB_TAIL "\n"                                                              \
	"  bob_a: '$2a$" BOB_TAIL "'\n"                                                            \
	"  carol: " CAROL_HASH "\n"

static char dir[64];
static char *cert_pem, *key_pem;
static char err[512];

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *s = NULL;
	size_t n = 0;
	ssize_t r;

	if (!f)
		return NULL;
	r = getdelim(&s, &n, '\0', f);
	fclose(f);
	if (r < 0) {
		free(s);
		return NULL;
	}
	return s;
}

static int spit(const char *name, const char *text)
{
	char path[128];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	ret = fputs(text, f) < 0 ? -1 : 0;
	return fclose(f) || ret ? -1 : 0;
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/iolat-webconfig-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	cert_pem = slurp(DATA_DIR "/server.crt");
	key_pem = slurp(DATA_DIR "/server.key");
	if (!cert_pem || !key_pem)
		return -1;
	if (spit("server.crt", cert_pem) || spit("server.key", key_pem))
		return -1;
	return spit("junk.pem", "not a certificate\n");
}

static int teardown(void **state)
{
	static const char *const files[] = { "server.crt", "server.key", "junk.pem", "web.yml" };
	char path[128];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
	free(cert_pem);
	free(key_pem);
	return 0;
}

/* Writes text as web.yml in the temporary directory and loads it. */
static int load(const char *text, struct webconfig *wc)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/web.yml", dir);
	assert_int_equal(spit("web.yml", text), 0);
	return webconfig_load(path, wc, err, sizeof(err));
}

static void load_ok(const char *text, struct webconfig *wc)
{
	int ret = load(text, wc);

	if (ret)
		fail_msg("load failed (%d): %s", ret, err);
}

static bool all_zero(const struct webconfig *wc)
{
	static const struct webconfig zero;

	return !memcmp(wc, &zero, sizeof(zero));
}

/*
 * Loading text fails with ret, and err is "<path>:<line>:<col>: ..." (or
 * "<path>: ..." for line 0) and holds want. The result is left zeroed.
 */
static void load_fails(const char *text, int ret, int line, int col, const char *want)
{
	struct webconfig wc;
	char prefix[160];
	int got;

	memset(&wc, 0xa5, sizeof(wc));
	got = load(text, &wc);
	if (got != ret)
		fail_msg("load returned %d, want %d; err: %s", got, ret, err);
	if (line)
		snprintf(prefix, sizeof(prefix), "%s/web.yml:%d:%d: ", dir, line, col);
	else
		snprintf(prefix, sizeof(prefix), "%s/web.yml: ", dir);
	if (strncmp(err, prefix, strlen(prefix)))
		fail_msg("err \"%s\" does not start with \"%s\"", err, prefix);
	if (!strstr(err, want))
		fail_msg("err \"%s\" does not contain \"%s\"", err, want);
	assert_true(all_zero(&wc));
	webconfig_free(&wc);
}

static void assert_no_tls(const struct webconfig *wc)
{
	assert_null(wc->cert_file);
	assert_null(wc->key_file);
	assert_null(wc->tls.cert_pem);
	assert_null(wc->tls.key_pem);
	assert_null(wc->client_ca_file);
	assert_null(wc->tls.client_ca_pem);
	assert_int_equal(wc->tls.client_auth, TLS_NO_CLIENT_CERT);
	assert_null(wc->tls.priorities);
}

/* The TLS part every case below shares, then more lines. */
#define TLS_HEAD                                                                                   \
	"tls_server_config:\n"                                                                     \
	"  cert_file: server.crt\n"                                                                \
	"  key_file: server.key\n"

/* Loads TLS_HEAD + more, which must succeed. */
static void load_tls(const char *more, struct webconfig *wc)
{
	char text[2048];

	snprintf(text, sizeof(text), TLS_HEAD "%s", more);
	load_ok(text, wc);
}

static void test_empty(void **state)
{
	static const char *const empties[] = {
		"",
		"# only a comment\n",
		"---\n",
		"tls_server_config:\nbasic_auth_users: {}\n",
		"tls_server_config:\n  cert_file: ''\n  key_file:\n",
	};
	struct webconfig wc;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(empties) / sizeof(empties[0]); i++) {
		load_ok(empties[i], &wc);
		assert_true(all_zero(&wc));
		assert_false(webconfig_check(&wc, "alice", ALICE_PW));
		webconfig_free(&wc);
	}
}

static void test_tls_only(void **state)
{
	char path[160], text[512];
	struct webconfig wc;

	(void)state;
	/* A relative cert path (from the file's directory) and an absolute key path. */
	snprintf(text, sizeof(text),
		 "tls_server_config:\n  cert_file: server.crt\n  key_file: %s/server.key\n", dir);
	load_ok(text, &wc);
	snprintf(path, sizeof(path), "%s/server.crt", dir);
	assert_string_equal(wc.cert_file, path);
	snprintf(path, sizeof(path), "%s/server.key", dir);
	assert_string_equal(wc.key_file, path);
	assert_string_equal(wc.tls.cert_pem, cert_pem);
	assert_string_equal(wc.tls.key_pem, key_pem);
	assert_null(wc.client_ca_file);
	assert_null(wc.tls.client_ca_pem);
	assert_int_equal(wc.tls.client_auth, TLS_NO_CLIENT_CERT);
	/* exporter-toolkit's defaults: TLS 1.2 to 1.3, the server's order. */
	assert_int_equal(wc.tls_min_version, 12);
	assert_int_equal(wc.tls_max_version, 13);
	assert_string_equal(wc.tls.priorities,
			    "NORMAL:%SERVER_PRECEDENCE:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2");
	assert_int_equal(wc.tls.ncipher_suites, 0);
	assert_int_equal(wc.tls.nallowed_sans, 0);
	assert_false(wc.http2_off);
	assert_int_equal(wc.nheaders, 0);
	assert_int_equal(wc.rate_interval_ns, 0);
	assert_int_equal(wc.nusers, 0);
	assert_null(wc.users);
	assert_null(wc.auth);
	webconfig_free(&wc);
	assert_true(all_zero(&wc));
}

static void test_tls_client_auth(void **state)
{
	struct webconfig wc;

	(void)state;
	load_ok("tls_server_config:\n"
		"  cert_file: server.crt\n"
		"  key_file: \"server.key\"\n"
		"  client_auth_type: RequireAndVerifyClientCert\n"
		"  client_ca_file: server.crt\n"
		"  min_version: TLS13\n",
		&wc);
	assert_int_equal(wc.tls.client_auth, TLS_REQUIRE_AND_VERIFY_CLIENT_CERT);
	assert_non_null(strstr(wc.client_ca_file, "/server.crt"));
	assert_string_equal(wc.tls.client_ca_pem, cert_pem);
	assert_int_equal(wc.tls_min_version, 13);
	assert_string_equal(wc.tls.priorities, "NORMAL:%SERVER_PRECEDENCE:-VERS-ALL:+VERS-TLS1.3");
	webconfig_free(&wc);

	load_ok("tls_server_config:\n"
		"  cert_file: server.crt\n"
		"  key_file: server.key\n"
		"  client_auth_type: NoClientCert\n"
		"  min_version: TLS10\n",
		&wc);
	assert_int_equal(wc.tls.client_auth, TLS_NO_CLIENT_CERT);
	assert_null(wc.client_ca_file);
	assert_int_equal(wc.tls_min_version, 10);
	assert_non_null(
	    strstr(wc.tls.priorities, "+VERS-TLS1.3:+VERS-TLS1.2:+VERS-TLS1.1:+VERS-TLS1.0"));
	webconfig_free(&wc);
}

/* Go's five policies (and the old name of one), with or without client CAs. */
static void test_tls_client_auth_types(void **state)
{
	static const struct {
		const char *name;
		enum tls_client_auth want;
		bool verifies;
	} types[] = {
		{ "NoClientCert", TLS_NO_CLIENT_CERT, false },
		{ "RequestClientCert", TLS_REQUEST_CLIENT_CERT, false },
		{ "RequireAnyClientCert", TLS_REQUIRE_ANY_CLIENT_CERT, false },
		{ "RequireClientCert", TLS_REQUIRE_ANY_CLIENT_CERT, false },
		{ "VerifyClientCertIfGiven", TLS_VERIFY_CLIENT_CERT_IF_GIVEN, true },
		{ "RequireAndVerifyClientCert", TLS_REQUIRE_AND_VERIFY_CLIENT_CERT, true },
	};
	struct webconfig wc;
	char more[256];

	(void)state;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		/* Without CAs: fine unless the policy verifies. */
		snprintf(more, sizeof(more), "  client_auth_type: %s\n", types[i].name);
		if (types[i].verifies) {
			char text[512];

			snprintf(text, sizeof(text), TLS_HEAD "%s", more);
			load_fails(text, -EINVAL, 4, 21, "needs client_ca_file (or client_ca)");
		} else {
			load_tls(more, &wc);
			assert_int_equal(wc.tls.client_auth, types[i].want);
			assert_null(wc.tls.client_ca_pem);
			webconfig_free(&wc);
		}
		if (types[i].want == TLS_NO_CLIENT_CERT)
			continue; /* CAs with it: test_client_auth_errors */
		snprintf(more, sizeof(more),
			 "  client_auth_type: %s\n  client_ca_file: server.crt\n"
			 "  client_allowed_sans: [scraper.example, 10.0.0.1]\n",
			 types[i].name);
		load_tls(more, &wc);
		assert_int_equal(wc.tls.client_auth, types[i].want);
		assert_int_equal(tls_client_auth_verifies(wc.tls.client_auth), types[i].verifies);
		assert_string_equal(wc.tls.client_ca_pem, cert_pem);
		assert_int_equal(wc.tls.nallowed_sans, 2);
		assert_string_equal(wc.tls.allowed_sans[0], "scraper.example");
		assert_string_equal(wc.tls.allowed_sans[1], "10.0.0.1");
		webconfig_free(&wc);
	}
}

/* cert, key and client_ca given inline instead of as files. */
static void test_tls_inline(void **state)
{
	char *text = NULL, *cert_block = NULL, *key_block = NULL;
	struct webconfig wc;
	size_t n = 0;
	FILE *f;

	(void)state;
	/* The PEM as YAML literal blocks, each line indented. */
	for (int which = 0; which < 2; which++) {
		const char *src = which ? key_pem : cert_pem;
		char **dst = which ? &key_block : &cert_block;
		size_t len = 0;
		FILE *b = open_memstream(dst, &len);

		for (const char *l = src; *l;) {
			const char *nl = strchr(l, '\n');
			size_t ll = nl ? (size_t)(nl - l) : strlen(l);

			fprintf(b, "    %.*s\n", (int)ll, l);
			l += ll + (nl ? 1 : 0);
		}
		fclose(b);
	}
	f = open_memstream(&text, &n);
	fprintf(f,
		"tls_server_config:\n  cert: |\n%s  key: |\n%s  client_auth_type: "
		"RequireAndVerifyClientCert\n  client_ca: |\n%s",
		cert_block, key_block, cert_block);
	fclose(f);
	load_ok(text, &wc);
	assert_null(wc.cert_file);
	assert_null(wc.key_file);
	assert_null(wc.client_ca_file);
	assert_string_equal(wc.tls.cert_pem, cert_pem);
	assert_string_equal(wc.tls.key_pem, key_pem);
	assert_string_equal(wc.tls.client_ca_pem, cert_pem);
	webconfig_free(&wc);
	free(text);
	free(cert_block);
	free(key_block);

	load_fails(TLS_HEAD "  cert: \"-----BEGIN CERTIFICATE-----\"\n", -EINVAL, 4, 9,
		   "set cert_file or cert, not both");
	load_fails("tls_server_config:\n  cert: not a certificate\n  key_file: server.key\n",
		   -EINVAL, 2, 9, "cert is not PEM (no -----BEGIN line)");
	load_fails("tls_server_config:\n  key: \"-----BEGIN KEY-----\"\n", -EINVAL, 1, 1,
		   "key_file (or key) is set but cert_file (or cert) is not");
}

static void test_tls_versions(void **state)
{
	struct webconfig wc;

	(void)state;
	load_tls("  min_version: TLS11\n  max_version: TLS12\n", &wc);
	assert_int_equal(wc.tls_min_version, 11);
	assert_int_equal(wc.tls_max_version, 12);
	assert_non_null(strstr(wc.tls.priorities, ":-VERS-ALL:+VERS-TLS1.2:+VERS-TLS1.1"));
	assert_null(strstr(wc.tls.priorities, "TLS1.3"));
	webconfig_free(&wc);
	load_tls("  max_version: TLS13\n  min_version: TLS13\n", &wc);
	assert_int_equal(wc.tls_min_version, 13);
	webconfig_free(&wc);
	load_fails(TLS_HEAD "  min_version: TLS13\n  max_version: TLS12\n", -EINVAL, 5, 16,
		   "min_version TLS13 is above max_version TLS12");
	load_fails(TLS_HEAD "  max_version: SSL3\n", -EINVAL, 4, 16,
		   "unknown max_version \"SSL3\" (known: TLS10, TLS11, TLS12, TLS13)");
}

/* The suites' parts in GnuTLS's words, and the check tls.c makes of a handshake. */
static void test_cipher_suites(void **state)
{
	struct webconfig wc;

	(void)state;
	load_tls("  cipher_suites:\n"
		 "    - TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256\n"
		 "    - TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256\n"
		 "    - TLS_RSA_WITH_AES_256_CBC_SHA\n"
		 "    - TLS_AES_128_GCM_SHA256\n",
		 &wc);
	assert_int_equal(wc.tls.ncipher_suites, 4);
	assert_string_equal(wc.tls.cipher_suites[1],
			    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256");
	/* In the listed order, each part once; TLS 1.3's own suites stay. */
	assert_non_null(strstr(wc.tls.priorities,
			       ":-KX-ALL:-CIPHER-ALL:-MAC-ALL:+ECDHE-RSA:+AES-128-GCM:+AEAD:"
			       "+ECDHE-ECDSA:+CHACHA20-POLY1305:+RSA:+AES-256-CBC:+SHA1:"
			       "+AES-256-GCM:+AES-128-CCM"));
	/* Listed combinations pass; the product's others do not. */
	assert_true(tlsconf_suite_allowed(&wc.tls, GNUTLS_KX_ECDHE_RSA, GNUTLS_CIPHER_AES_128_GCM,
					  GNUTLS_MAC_AEAD));
	assert_true(tlsconf_suite_allowed(&wc.tls, GNUTLS_KX_RSA, GNUTLS_CIPHER_AES_256_CBC,
					  GNUTLS_MAC_SHA1));
	assert_false(tlsconf_suite_allowed(&wc.tls, GNUTLS_KX_ECDHE_RSA,
					   GNUTLS_CIPHER_CHACHA20_POLY1305, GNUTLS_MAC_AEAD));
	assert_false(tlsconf_suite_allowed(&wc.tls, GNUTLS_KX_RSA, GNUTLS_CIPHER_AES_128_GCM,
					   GNUTLS_MAC_AEAD));
	webconfig_free(&wc);

	/* Without TLS 1.3 its suites are not added back. */
	load_tls("  max_version: TLS12\n  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384]\n",
		 &wc);
	assert_non_null(strstr(wc.tls.priorities, "-MAC-ALL:+ECDHE-RSA:+AES-256-GCM:+AEAD"));
	assert_null(strstr(wc.tls.priorities, "CHACHA20"));
	webconfig_free(&wc);

	/* Without cipher_suites any suite passes. */
	load_tls("", &wc);
	assert_true(tlsconf_suite_allowed(&wc.tls, GNUTLS_KX_RSA, GNUTLS_CIPHER_AES_128_GCM,
					  GNUTLS_MAC_AEAD));
	webconfig_free(&wc);

	load_fails(TLS_HEAD "  cipher_suites:\n    - TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256\n"
			    "    - TLS_RSA_WITH_RC4_128_SHA\n",
		   -EINVAL, 6, 7,
		   "cipher suite \"TLS_RSA_WITH_RC4_128_SHA\" is one Go lists as insecure");
	load_fails(TLS_HEAD "  cipher_suites: [ECDHE-RSA-AES128-GCM-SHA256]\n", -EINVAL, 4, 19,
		   "unknown cipher suite \"ECDHE-RSA-AES128-GCM-SHA256\" (Go's names");
	load_fails(TLS_HEAD "  cipher_suites: TLS_AES_128_GCM_SHA256\n", -EINVAL, 4, 18,
		   "expected a list of cipher_suites");
	load_fails(TLS_HEAD "  min_version: TLS13\n"
			    "  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]\n",
		   -EINVAL, 5, 18, "is for TLS 1.2 and lower, but min_version is TLS13");
	load_fails(TLS_HEAD "  max_version: TLS12\n  cipher_suites: [TLS_AES_128_GCM_SHA256]\n",
		   -EINVAL, 5, 18, "names only TLS 1.3 suites, but max_version is below TLS13");
}

static void test_curves_and_order(void **state)
{
	struct webconfig wc;

	(void)state;
	load_tls("  curve_preferences: [X25519, CurveP384, CurveP256, CurveP521]\n"
		 "  prefer_server_cipher_suites: false\n",
		 &wc);
	assert_non_null(strstr(wc.tls.priorities, ":-GROUP-ALL:+GROUP-X25519:+GROUP-SECP384R1:"
						  "+GROUP-SECP256R1:+GROUP-SECP521R1"));
	assert_null(strstr(wc.tls.priorities, "%SERVER_PRECEDENCE"));
	webconfig_free(&wc);
	load_fails(TLS_HEAD "  curve_preferences: [X25519, P-256]\n", -EINVAL, 4, 31,
		   "unknown curve \"P-256\" (known: CurveP256, CurveP384, CurveP521, X25519)");
	load_fails(TLS_HEAD "  prefer_server_cipher_suites: maybe\n", -EINVAL, 4, 32,
		   "expected true or false");
}

static void test_http_server_config(void **state)
{
	struct webconfig wc;

	(void)state;
	load_ok("http_server_config:\n"
		"  http2: false\n"
		"  headers:\n"
		"    X-Frame-Options: sameorigin\n"
		"    X-Content-Type-Options: nosniff\n"
		"    X-XSS-Protection: \"1; mode=block\"\n"
		"    Content-Security-Policy: \"\"\n"
		"    Strict-Transport-Security: max-age=63072000\n",
		&wc);
	assert_true(wc.http2_off);
	/* A blank value is unset. */
	assert_int_equal(wc.nheaders, 4);
	assert_string_equal(wc.headers[0], "X-Frame-Options");
	assert_string_equal(wc.headers[1], "sameorigin");
	assert_string_equal(wc.headers[4], "X-XSS-Protection");
	assert_string_equal(wc.headers[5], "1; mode=block");
	assert_string_equal(wc.headers[6], "Strict-Transport-Security");
	webconfig_free(&wc);
	load_ok("http_server_config:\n  http2: true\n", &wc);
	assert_true(all_zero(&wc)); /* the defaults */
	webconfig_free(&wc);
	/* Only blank values: no headers at all, not an empty array (found by make fuzz). */
	load_ok("http_server_config:\n  headers:\n    X-Frame-Options: \"\"\n", &wc);
	assert_true(all_zero(&wc));
	webconfig_free(&wc);
	/* A name is set once, even if its first value was blank. */
	load_fails("http_server_config:\n  headers:\n    X-Frame-Options: \"\"\n"
		   "    X-Frame-Options: deny\n",
		   -EINVAL, 4, 5, "duplicate header \"X-Frame-Options\"");

	load_fails("http_server_config:\n  headers:\n    Server: iolat\n", -EINVAL, 3, 5,
		   "HTTP header \"Server\" cannot be configured (exporter-toolkit allows: "
		   "Strict-Transport-Security, X-Content-Type-Options, X-Frame-Options, "
		   "X-XSS-Protection, Content-Security-Policy)");
	/* Names are exact, as in exporter-toolkit. */
	load_fails("http_server_config:\n  headers:\n    x-frame-options: deny\n", -EINVAL, 3, 5,
		   "HTTP header \"x-frame-options\" cannot be configured");
	load_fails("http_server_config:\n  headers:\n    X-Content-Type-Options: sniff\n", -EINVAL,
		   3, 29, "invalid value \"sniff\" for X-Content-Type-Options (expected nosniff)");
	load_fails("http_server_config:\n  headers:\n    X-Frame-Options: DENY\n", -EINVAL, 3, 22,
		   "invalid value \"DENY\" for X-Frame-Options (expected deny or sameorigin)");
	load_fails(
	    "http_server_config:\n  headers:\n    X-XSS-Protection: \"1\\r\\nSet-Cookie: x\"\n",
	    -EINVAL, 3, 23, "the value of X-XSS-Protection must be one line");
	load_fails("http_server_config:\n  http2: sometimes\n", -EINVAL, 2, 10,
		   "expected true or false");
	load_fails("http_server_config:\n  http1: true\n", -EINVAL, 2, 3,
		   "unknown key \"http1\" in http_server_config (known: http2, headers)");
	load_fails("http_server_config:\n  headers: [X-Frame-Options]\n", -EINVAL, 2, 12,
		   "headers must be a mapping of header names to values, not a list");
}

static void test_rate_limit(void **state)
{
	static const struct {
		const char *interval;
		uint64_t ns;
	} ok[] = { { "1s", 1000000000ULL },
		   { "500ms", 500000000ULL },
		   { "1m30s", 90000000000ULL },
		   { "1.5h", 5400000000000ULL },
		   { "250us", 250000ULL } };
	struct webconfig wc;
	char text[128];

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		snprintf(text, sizeof(text), "rate_limit:\n  interval: %s\n  burst: 7\n",
			 ok[i].interval);
		load_ok(text, &wc);
		assert_int_equal(wc.rate_interval_ns, ok[i].ns);
		assert_int_equal(wc.rate_burst, 7);
		webconfig_free(&wc);
	}
	/* An interval of 0 turns it off, as in exporter-toolkit. */
	load_ok("rate_limit:\n  interval: 0\n  burst: 0\n", &wc);
	assert_true(all_zero(&wc));
	load_fails("rate_limit:\n  interval: 1s\n  burst: 0\n", -EINVAL, 3, 10,
		   "rate_limit needs a burst of at least 1");
	load_fails("rate_limit:\n  interval: 1s\n", -EINVAL, 2, 3,
		   "rate_limit needs a burst of at least 1");
	load_fails("rate_limit:\n  interval: soon\n  burst: 1\n", -EINVAL, 2, 13,
		   "interval must be a duration such as 1s, 500ms or 1m30s");
	load_fails("rate_limit:\n  interval: -1s\n  burst: 1\n", -EINVAL, 2, 13,
		   "interval must be a duration");
	load_fails("rate_limit:\n  intervals: 1s\n", -EINVAL, 2, 3,
		   "unknown key \"intervals\" in rate_limit (known: interval, burst)");
}

static void test_auth_only(void **state)
{
	struct webconfig wc;

	(void)state;
	load_ok(USERS, &wc);
	assert_no_tls(&wc);
	assert_int_equal(wc.nusers, 5);
	assert_string_equal(wc.users[0].name, "alice");
	assert_string_equal(wc.users[0].hash, ALICE_HASH);
	assert_string_equal(wc.users[3].name, "bob_a");
	assert_string_equal(wc.users[3].hash, "$2a$" BOB_TAIL);
	assert_non_null(wc.auth);
	webconfig_free(&wc);
}

static void test_tls_and_auth(void **state)
{
	struct webconfig wc;

	(void)state;
	load_ok("# both\n"
		"tls_server_config:\n"
		"  cert_file: server.crt\n"
		"  key_file: server.key\n" USERS,
		&wc);
	assert_string_equal(wc.tls.cert_pem, cert_pem);
	assert_string_equal(wc.tls.key_pem, key_pem);
	assert_int_equal(wc.nusers, 5);
	assert_true(webconfig_check(&wc, "bob", BOB_PW));
	webconfig_free(&wc);
}

/* The buffer entry point: the same parser, with the name and directory given. */
static void test_parse_buffer(void **state)
{
	static const char tls[] = "tls_server_config:\n"
				  "  cert_file: server.crt\n"
				  "  key_file: server.key\n";
	char text[256], path[160];
	struct webconfig wc;
	size_t len;
	int ret;

	(void)state;
	/* Relative paths from dir; only len bytes are read (no NUL after them). */
	snprintf(text, sizeof(text),
		 "%sbasic_auth_users: {alice: " ALICE_HASH "}\n"
		 "junk past len: [",
		 tls);
	ret = webconfig_parse("<web>", dir, text, strlen(text) - strlen("junk past len: ["), &wc,
			      err, sizeof(err));
	if (ret)
		fail_msg("parse failed (%d): %s", ret, err);
	snprintf(path, sizeof(path), "%s/server.crt", dir);
	assert_string_equal(wc.cert_file, path);
	assert_string_equal(wc.tls.key_pem, key_pem);
	assert_int_equal(wc.nusers, 1);
	assert_true(webconfig_check(&wc, "alice", ALICE_PW));
	webconfig_free(&wc);

	/* No dir: from the working directory (make unit runs at the top). */
	snprintf(text, sizeof(text),
		 "tls_server_config:\n  cert_file: " DATA_DIR "/server.crt\n"
		 "  key_file: " DATA_DIR "/server.key\n");
	ret = webconfig_parse("<web>", NULL, text, strlen(text), &wc, err, sizeof(err));
	assert_int_equal(ret, 0);
	assert_string_equal(wc.cert_file, DATA_DIR "/server.crt");
	assert_string_equal(wc.tls.cert_pem, cert_pem);
	webconfig_free(&wc);

	/* Empty text is a valid, empty config. */
	assert_int_equal(webconfig_parse("<web>", dir, "", 0, &wc, err, sizeof(err)), 0);
	assert_true(all_zero(&wc));

	/* Errors name the given name, and leave nothing behind. */
	memset(&wc, 0xa5, sizeof(wc));
	len = sizeof(tls) - 1 - strlen("  key_file: server.key\n");
	ret = webconfig_parse("<web>", dir, tls, len, &wc, err, sizeof(err));
	assert_int_equal(ret, -EINVAL);
	assert_string_equal(err, "<web>:2:14: cert_file (or cert) is set but key_file (or key) is "
				 "not (both or neither)");
	assert_true(all_zero(&wc));
	ret = webconfig_parse("<web>", "/nonexistent", tls, sizeof(tls) - 1, &wc, err, sizeof(err));
	assert_int_equal(ret, -ENOENT);
	assert_string_equal(err, "<web>:2:14: cannot read cert_file /nonexistent/server.crt: No "
				 "such file or directory");
	assert_true(all_zero(&wc));
}

static void test_file_errors(void **state)
{
	struct webconfig wc;
	int ret;

	(void)state;
	memset(&wc, 0xa5, sizeof(wc));
	ret = webconfig_load("/nonexistent/web.yml", &wc, err, sizeof(err));
	assert_int_equal(ret, -ENOENT);
	assert_string_equal(err, "/nonexistent/web.yml: cannot read web config: "
				 "No such file or directory");
	assert_true(all_zero(&wc));

	ret = webconfig_load(dir, &wc, err, sizeof(err));
	assert_int_equal(ret, -EISDIR);
	assert_non_null(strstr(err, "cannot read web config: Is a directory"));

	/* A NULL-sized error buffer is allowed. */
	ret = webconfig_load("/nonexistent/web.yml", &wc, NULL, 0);
	assert_int_equal(ret, -ENOENT);
}

static void test_syntax_errors(void **state)
{
	(void)state;
	load_fails("tls_server_config:\n"
		   "  cert_file: a\n"
		   " key_file: b\n",
		   -EINVAL, 3, 2, "YAML syntax error: did not find expected key");
	load_fails("basic_auth_users:\n"
		   "  alice: [unclosed\n",
		   -EINVAL, 3, 1, "YAML syntax error: did not find expected ',' or ']'");
	load_fails("basic_auth_users:\n"
		   "  alice: \"x\n",
		   -EINVAL, 3, 1, "YAML syntax error: found unexpected end of stream");
	load_fails("basic_auth_users: {}\n"
		   "---\n"
		   "tls_server_config: {}\n",
		   -EINVAL, 3, 1, "only one YAML document is allowed");
	load_fails("- tls_server_config\n", -EINVAL, 1, 1,
		   "the top level must be a mapping, not a list");
	load_fails("tls_server_config\n", -EINVAL, 1, 1,
		   "the top level must be a mapping, not a scalar");
}

/* YAML's "\0" would cut a string short: a key, a path or a name would then pass as another. */
static void test_nul(void **state)
{
	(void)state;
	load_fails("tls_server_config:\n"
		   "  \"cert_file\\0typo\": server.crt\n"
		   "  key_file: server.key\n",
		   -EINVAL, 2, 3, "string holds a NUL character");
	load_fails("tls_server_config:\n"
		   "  cert_file: server.crt\n"
		   "  key_file: \"server.key\\0.bak\"\n",
		   -EINVAL, 3, 13, "string holds a NUL character");
	load_fails("basic_auth_users:\n"
		   "  \"alice\\x00\": " ALICE_HASH "\n",
		   -EINVAL, 2, 3, "string holds a NUL character");
}

static void test_unknown_keys(void **state)
{
	(void)state;
	load_fails("basic_auth_users: {}\n"
		   "\n"
		   "http_server_configs:\n"
		   "  http2: false\n",
		   -EINVAL, 3, 1,
		   "unknown top-level key \"http_server_configs\" (known: tls_server_config, "
		   "http_server_config, rate_limit, basic_auth_users)");
	load_fails("tls_server_config:\n"
		   "  cert_file: server.crt\n"
		   "  key_file: server.key\n"
		   "  cipher_suite: [TLS_AES_128_GCM_SHA256]\n",
		   -EINVAL, 4, 3,
		   "unknown key \"cipher_suite\" in tls_server_config (known: cert_file, "
		   "key_file, cert, key, client_auth_type, client_ca_file, client_ca, "
		   "client_allowed_sans, min_version, max_version, cipher_suites, "
		   "prefer_server_cipher_suites, curve_preferences)");
	load_fails("tls_server_config:\n"
		   "  cert_file: server.crt\n"
		   "  cert_file: server.crt\n",
		   -EINVAL, 3, 3, "duplicate key \"cert_file\" in tls_server_config");
	load_fails("basic_auth_users: {}\n"
		   "basic_auth_users: {}\n",
		   -EINVAL, 2, 1, "duplicate key \"basic_auth_users\"");
	load_fails("tls_server_config: [a]\n", -EINVAL, 1, 20,
		   "tls_server_config must be a mapping, not a list");
	load_fails("tls_server_config:\n"
		   "  cert_file: [server.crt]\n",
		   -EINVAL, 2, 14, "cert_file must be a string, not a list");
}

static void test_cert_key_pairing(void **state)
{
	(void)state;
	load_fails("tls_server_config:\n"
		   "  cert_file: server.crt\n",
		   -EINVAL, 2, 14, "cert_file (or cert) is set but key_file (or key) is not");
	load_fails("tls_server_config:\n"
		   "  client_auth_type: NoClientCert\n"
		   "  key_file: server.key\n",
		   -EINVAL, 3, 13, "key_file (or key) is set but cert_file (or cert) is not");
	load_fails("tls_server_config:\n"
		   "  min_version: TLS12\n",
		   -EINVAL, 1, 1,
		   "tls_server_config sets min_version but not cert_file (or cert) and key_file "
		   "(or key)");
	load_fails("tls_server_config:\n"
		   "  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]\n",
		   -EINVAL, 1, 1, "tls_server_config sets cipher_suites but not cert_file");
	load_fails("tls_server_config:\n"
		   "  client_auth_type: RequireAnyClientCert\n",
		   -EINVAL, 1, 1,
		   "tls_server_config sets client_auth_type but not cert_file (or cert)");
}

static void test_unreadable_pem(void **state)
{
	(void)state;
	load_fails("tls_server_config:\n"
		   "  cert_file: missing.crt\n"
		   "  key_file: server.key\n",
		   -ENOENT, 2, 14, "cannot read cert_file ");
	assert_non_null(strstr(err, "/missing.crt: No such file or directory"));
	/* The cert is read before the key fails: it must not leak or stay behind. */
	load_fails("tls_server_config:\n"
		   "  cert_file: server.crt\n"
		   "  key_file: /nonexistent/server.key\n",
		   -ENOENT, 3, 13,
		   "cannot read key_file /nonexistent/server.key: No such file or directory");
	load_fails("tls_server_config:\n"
		   "  cert_file: server.crt\n"
		   "  key_file: .\n",
		   -EISDIR, 3, 13, "cannot read key_file ");
	load_fails("tls_server_config:\n"
		   "  cert_file: junk.pem\n"
		   "  key_file: server.key\n",
		   -EINVAL, 2, 14, "/junk.pem is not PEM (no -----BEGIN line)");
	load_fails("tls_server_config:\n"
		   "  cert_file: server.crt\n"
		   "  key_file: server.key\n"
		   "  client_auth_type: RequireAndVerifyClientCert\n"
		   "  client_ca_file: missing-ca.crt\n",
		   -ENOENT, 5, 19, "cannot read client_ca_file ");
}

static void test_client_auth_errors(void **state)
{
	(void)state;
	load_fails("tls_server_config:\n"
		   "  cert_file: server.crt\n"
		   "  key_file: server.key\n"
		   "  client_auth_type: RequireAndVerifyClientCert\n",
		   -EINVAL, 4, 21,
		   "client_auth_type RequireAndVerifyClientCert needs client_ca_file (or "
		   "client_ca)");
	load_fails("tls_server_config:\n"
		   "  cert_file: server.crt\n"
		   "  key_file: server.key\n"
		   "  client_auth_type: Bogus\n",
		   -EINVAL, 4, 21,
		   "unknown client_auth_type \"Bogus\" (known: NoClientCert, RequestClientCert, "
		   "RequireAnyClientCert, VerifyClientCertIfGiven, RequireAndVerifyClientCert)");
	load_fails("tls_server_config:\n"
		   "  cert_file: server.crt\n"
		   "  key_file: server.key\n"
		   "  client_ca_file: server.crt\n",
		   -EINVAL, 4, 19,
		   "client_ca_file is set but client_auth_type is NoClientCert, so no client "
		   "certificate would be asked for");
	load_fails(TLS_HEAD "  client_allowed_sans: [a.example]\n", -EINVAL, 4, 24,
		   "client_allowed_sans is set but client_auth_type is NoClientCert");
	load_fails(TLS_HEAD
		   "  client_auth_type: RequestClientCert\n  client_allowed_sans: [\"\"]\n",
		   -EINVAL, 5, 25, "client_allowed_sans must be a list of non-empty strings");
	load_fails("tls_server_config:\n"
		   "  cert_file: server.crt\n"
		   "  key_file: server.key\n"
		   "  min_version: TLS14\n",
		   -EINVAL, 4, 16,
		   "unknown min_version \"TLS14\" (known: TLS10, TLS11, TLS12, TLS13)");
}

static void test_user_errors(void **state)
{
	(void)state;
	load_fails("basic_auth_users:\n"
		   "  alice: " ALICE_HASH "\n"
		   "  bob: plaintext-password\n",
		   -EINVAL, 3, 8, "user \"bob\": not a bcrypt hash");
	/* The rejected value is a secret: it must not reach the logs. */
	assert_null(strstr(err, "plaintext-password"));
	load_fails("basic_auth_users:\n"
		   "  bob: $1$abcdefgh$0123456789012345678901\n",
		   -EINVAL, 2, 8, "user \"bob\": not a bcrypt hash");
	load_fails("basic_auth_users:\n"
		   "  bob: $2x$" BOB_TAIL "\n",
		   -EINVAL, 2, 8, "user \"bob\": not a bcrypt hash");
	load_fails("basic_auth_users:\n"
		   "  bob: $2y$" BOB_TAIL "x\n",
		   -EINVAL, 2, 8, "user \"bob\": not a bcrypt hash");
	load_fails("basic_auth_users:\n"
		   "  bob: $2y$03$TwYUY/wF1oCp9g2RB/vKX.etA24u/Sa/sreypEr8.3l3yENAnUHIm\n",
		   -EINVAL, 2, 8, "user \"bob\": not a bcrypt hash");
	load_fails("basic_auth_users:\n"
		   "  bob:\n",
		   -EINVAL, 2, 7, "user \"bob\": not a bcrypt hash");
	load_fails("basic_auth_users:\n"
		   "  bob: [" ALICE_HASH "]\n",
		   -EINVAL, 2, 8, "user \"bob\": not a bcrypt hash");
	load_fails("basic_auth_users:\n"
		   "  bob: " ALICE_HASH "\n"
		   "  bob: " ALICE_HASH "\n",
		   -EINVAL, 3, 3, "duplicate user \"bob\"");
	load_fails("basic_auth_users:\n"
		   "  'a:b': " ALICE_HASH "\n",
		   -EINVAL, 2, 3, "user name \"a:b\" contains ':'");
	load_fails("basic_auth_users:\n"
		   "  '': " ALICE_HASH "\n",
		   -EINVAL, 2, 3, "user names in basic_auth_users must be non-empty strings");
	load_fails("basic_auth_users:\n"
		   "  - alice\n",
		   -EINVAL, 2, 3,
		   "basic_auth_users must be a mapping of user names to bcrypt "
		   "hashes, not a list");
}

static void test_check(void **state)
{
	struct webconfig wc;

	(void)state;
	load_ok(USERS, &wc);
	assert_true(webconfig_check(&wc, "alice", ALICE_PW));
	assert_true(webconfig_check(&wc, "bob", BOB_PW));
	assert_true(webconfig_check(&wc, "bob_b", BOB_PW));
	assert_true(webconfig_check(&wc, "bob_a", BOB_PW));

	assert_false(webconfig_check(&wc, "alice", "correct horsE"));
	assert_false(webconfig_check(&wc, "alice", BOB_PW));
	assert_false(webconfig_check(&wc, "bob", ALICE_PW));
	assert_false(webconfig_check(&wc, "Alice", ALICE_PW));
	assert_false(webconfig_check(&wc, "mallory", ALICE_PW));
	assert_false(webconfig_check(&wc, "", ALICE_PW));
	assert_false(webconfig_check(&wc, "alice", ""));
	/* carol's hash is of the empty password: still refused. */
	assert_false(webconfig_check(&wc, "carol", ""));
	assert_false(webconfig_check(&wc, NULL, ALICE_PW));
	assert_false(webconfig_check(&wc, "alice", NULL));
	assert_false(webconfig_check(NULL, "alice", ALICE_PW));

	/* Cached successes must not leak to other passwords or users. */
	assert_true(webconfig_check(&wc, "alice", ALICE_PW));
	assert_false(webconfig_check(&wc, "alice", ALICE_PW "x"));
	assert_false(webconfig_check(&wc, "bob", ALICE_PW));
	assert_false(webconfig_check(&wc, "alicecorrect", " horse"));
	webconfig_free(&wc);
}

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Timing, in this thread's CPU time so a busy machine does not skew it: a
 * cost-10 bcrypt is tens of ms, a cache hit a few µs, so the bounds are wide.
 */
static void test_check_timing(void **state)
{
	double t0, miss, cached, unknown;
	struct webconfig wc;
	int i;

	(void)state;
	load_ok(USERS, &wc);

	/* The least of three each: the first bcrypt of a process also pays
	 * for warming up, which made one wrong password look twice an unknown
	 * user's on a busy machine. */
	miss = unknown = 1e9;
	for (i = 0; i < 3; i++) {
		t0 = cpu_seconds();
		assert_false(webconfig_check(&wc, "alice", "wrong"));
		miss = fmin(miss, cpu_seconds() - t0);
		/* Unknown names pay a bcrypt at the highest configured cost (alice's 10). */
		t0 = cpu_seconds();
		assert_false(webconfig_check(&wc, "mallory", "wrong"));
		unknown = fmin(unknown, cpu_seconds() - t0);
	}
	if (unknown < miss / 2)
		fail_msg("unknown user took %.4fs, a wrong password %.4fs", unknown, miss);

	assert_true(webconfig_check(&wc, "alice", ALICE_PW));
	t0 = cpu_seconds();
	for (i = 0; i < 20; i++)
		assert_true(webconfig_check(&wc, "alice", ALICE_PW));
	cached = cpu_seconds() - t0;
	if (cached > miss / 2)
		fail_msg("20 cached checks took %.4fs, one bcrypt %.4fs", cached, miss);

	/* Failures are never cached: each costs a bcrypt. */
	t0 = cpu_seconds();
	assert_false(webconfig_check(&wc, "alice", "wrong"));
	if (cpu_seconds() - t0 < miss / 2)
		fail_msg("a repeated failure was answered without a bcrypt");
	webconfig_free(&wc);
}

static void *check_many(void *arg)
{
	const struct webconfig *wc = arg;
	intptr_t bad = 0;
	int i;

	for (i = 0; i < 200; i++) {
		bad += !webconfig_check(wc, "bob", BOB_PW);
		bad += !webconfig_check(wc, i % 2 ? "bob_a" : "bob_b", BOB_PW);
	}
	bad += webconfig_check(wc, "bob", "nope");
	return (void *)bad;
}

/* libmicrohttpd may check from several threads: the cache must hold up. */
static void test_check_threads(void **state)
{
	pthread_t t[4];
	struct webconfig wc;
	void *bad;
	int i;

	(void)state;
	load_ok(USERS, &wc);
	for (i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, check_many, &wc), 0);
	for (i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(t[i], &bad), 0);
		assert_int_equal((intptr_t)bad, 0);
	}
	webconfig_free(&wc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_tls_only),
		cmocka_unit_test(test_tls_client_auth),
		cmocka_unit_test(test_tls_client_auth_types),
		cmocka_unit_test(test_tls_inline),
		cmocka_unit_test(test_tls_versions),
		cmocka_unit_test(test_cipher_suites),
		cmocka_unit_test(test_curves_and_order),
		cmocka_unit_test(test_http_server_config),
		cmocka_unit_test(test_rate_limit),
		cmocka_unit_test(test_auth_only),
		cmocka_unit_test(test_tls_and_auth),
		cmocka_unit_test(test_parse_buffer),
		cmocka_unit_test(test_file_errors),
		cmocka_unit_test(test_syntax_errors),
		cmocka_unit_test(test_nul),
		cmocka_unit_test(test_unknown_keys),
		cmocka_unit_test(test_cert_key_pairing),
		cmocka_unit_test(test_unreadable_pem),
		cmocka_unit_test(test_client_auth_errors),
		cmocka_unit_test(test_user_errors),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_check_timing),
		cmocka_unit_test(test_check_threads),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
