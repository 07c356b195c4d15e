// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_webconfig.c - the web config loader: valid files, each error with its
 * message and line, and basic-auth checks against bcrypt hashes.
 *
 * YAML cases are written into a temporary directory next to copies of the
 * fixture cert and key (tests/unit/data/, see its README), so relative
 * cert paths are checked too. Run from the repository root, as `make unit` does.
 */
#include <errno.h>
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
	assert_null(wc->cert_pem);
	assert_null(wc->key_pem);
	assert_null(wc->client_ca_file);
	assert_null(wc->client_ca_pem);
	assert_false(wc->require_client_cert);
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
	assert_string_equal(wc.cert_pem, cert_pem);
	assert_string_equal(wc.key_pem, key_pem);
	assert_null(wc.client_ca_file);
	assert_null(wc.client_ca_pem);
	assert_false(wc.require_client_cert);
	assert_int_equal(wc.tls_min_version, 12);
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
	assert_true(wc.require_client_cert);
	assert_non_null(strstr(wc.client_ca_file, "/server.crt"));
	assert_string_equal(wc.client_ca_pem, cert_pem);
	assert_int_equal(wc.tls_min_version, 13);
	webconfig_free(&wc);

	load_ok("tls_server_config:\n"
		"  cert_file: server.crt\n"
		"  key_file: server.key\n"
		"  client_auth_type: NoClientCert\n"
		"  min_version: TLS10\n",
		&wc);
	assert_false(wc.require_client_cert);
	assert_null(wc.client_ca_file);
	assert_int_equal(wc.tls_min_version, 10);
	webconfig_free(&wc);
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
	assert_string_equal(wc.cert_pem, cert_pem);
	assert_string_equal(wc.key_pem, key_pem);
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
	assert_string_equal(wc.key_pem, key_pem);
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
	assert_string_equal(wc.cert_pem, cert_pem);
	webconfig_free(&wc);

	/* Empty text is a valid, empty config. */
	assert_int_equal(webconfig_parse("<web>", dir, "", 0, &wc, err, sizeof(err)), 0);
	assert_true(all_zero(&wc));

	/* Errors name the given name, and leave nothing behind. */
	memset(&wc, 0xa5, sizeof(wc));
	len = sizeof(tls) - 1 - strlen("  key_file: server.key\n");
	ret = webconfig_parse("<web>", dir, tls, len, &wc, err, sizeof(err));
	assert_int_equal(ret, -EINVAL);
	assert_string_equal(err, "<web>:2:14: cert_file is set but key_file is not (both or "
				 "neither)");
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
		   "http_server_config:\n"
		   "  http2: false\n",
		   -EINVAL, 3, 1,
		   "unknown top-level key \"http_server_config\" (known: tls_server_config, "
		   "basic_auth_users)");
	load_fails("tls_server_config:\n"
		   "  cert_file: server.crt\n"
		   "  key_file: server.key\n"
		   "  cipher_suites: [TLS_AES_128_GCM_SHA256]\n",
		   -EINVAL, 4, 3,
		   "unknown key \"cipher_suites\" in tls_server_config (known: cert_file, "
		   "key_file, client_auth_type, client_ca_file, min_version)");
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
		   -EINVAL, 2, 14, "cert_file is set but key_file is not");
	load_fails("tls_server_config:\n"
		   "  client_auth_type: NoClientCert\n"
		   "  key_file: server.key\n",
		   -EINVAL, 3, 13, "key_file is set but cert_file is not");
	load_fails("tls_server_config:\n"
		   "  min_version: TLS12\n",
		   -EINVAL, 1, 1,
		   "tls_server_config sets min_version but not cert_file and key_file");
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
		   "client_auth_type RequireAndVerifyClientCert needs client_ca_file");
	load_fails("tls_server_config:\n"
		   "  cert_file: server.crt\n"
		   "  key_file: server.key\n"
		   "  client_auth_type: Bogus\n",
		   -EINVAL, 4, 21,
		   "unsupported client_auth_type \"Bogus\" (supported: NoClientCert, "
		   "RequireAndVerifyClientCert)");
	/* Valid for exporter-toolkit, but iolat cannot honour it: refused, not weakened. */
	load_fails("tls_server_config:\n"
		   "  cert_file: server.crt\n"
		   "  key_file: server.key\n"
		   "  client_auth_type: RequireAnyClientCert\n"
		   "  client_ca_file: server.crt\n",
		   -EINVAL, 4, 21, "unsupported client_auth_type \"RequireAnyClientCert\"");
	load_fails("tls_server_config:\n"
		   "  cert_file: server.crt\n"
		   "  key_file: server.key\n"
		   "  client_ca_file: server.crt\n",
		   -EINVAL, 4, 19,
		   "client_ca_file is set but client_auth_type is not RequireAndVerifyClientCert");
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

	t0 = cpu_seconds();
	assert_false(webconfig_check(&wc, "alice", "wrong"));
	miss = cpu_seconds() - t0;

	/* Unknown names pay a bcrypt at the highest configured cost (alice's 10). */
	t0 = cpu_seconds();
	assert_false(webconfig_check(&wc, "mallory", "wrong"));
	unknown = cpu_seconds() - t0;
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
