// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_webconfig.c - libFuzzer target for the web config loader (make fuzz):
 * any input must load or fail cleanly, without leaks, crashes or undefined
 * behaviour, and keep webconfig.h's promises either way: a failure leaves the
 * result zeroed with a message naming the file; a success is a consistent
 * config (both PEMs or neither, a CA only with client certificates, a TLS
 * version only with TLS, valid distinct users, the check cache iff users).
 *
 * Relative PEM paths are taken from the unit tests' fixture directory
 * (tests/unit/data: a throwaway certificate and key), so the fuzzer can
 * reach a successful TLS load. Run it from the repository root, as make does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "serve/webconfig.h"

#define FIXTURES "tests/unit/data"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The files a config may open: a certificate, a key, something not PEM, a directory. */
static const char *const fixture_names[] = { "server.crt", "server.key", "README", "" };
#define NFIXTURES (sizeof(fixture_names) / sizeof(fixture_names[0]))
static char fixture_dir[PATH_MAX];
static char fixture_path[NFIXTURES][PATH_MAX + 16];
static bool loading;

/* Stops the run: libFuzzer keeps the input that got here. */
#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz_webconfig: " __VA_ARGS__);                           \
			fputc('\n', stderr);                                                       \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/*
 * The fuzzer writes the config, and the config names files: left alone it
 * would open whatever path it makes up (/dev/tty waits for a keyboard, a
 * watchdog device reboots the machine). So while a config loads, this open()
 * (which the loader's calls reach instead of libc's) lets only the fixtures
 * through, and anything else fails as missing.
 */
int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;
	size_t i;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	if (loading) {
		for (i = 0; i < NFIXTURES; i++)
			if (!strcmp(path, fixture_path[i]))
				break;
		if (i == NFIXTURES) {
			errno = ENOENT;
			return -1;
		}
	}
	return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	size_t i;

	(void)argc, (void)argv;
	if (!realpath(FIXTURES, fixture_dir)) {
		fprintf(stderr, "fuzz_webconfig: no %s here: run me from the repository root\n",
			FIXTURES);
		exit(1);
	}
	for (i = 0; i < NFIXTURES; i++)
		snprintf(fixture_path[i], sizeof(fixture_path[i]), "%s%s%s", fixture_dir,
			 *fixture_names[i] ? "/" : "", fixture_names[i]);
	return 0;
}

static bool all_zero(const struct webconfig *wc)
{
	static const struct webconfig zero;

	return !memcmp(wc, &zero, sizeof(zero));
}

static void check_pem(const char *what, const char *path, const char *pem)
{
	CHECK(path && pem, "%s: path %p, PEM %p", what, (void *)path, (void *)pem);
	CHECK(strstr(pem, "-----BEGIN "), "%s %s loaded without a BEGIN line", what, path);
}

static void check_loaded(const struct webconfig *wc)
{
	const struct tls_settings *t = &wc->tls;
	size_t i, j;

	if (t->cert_pem) {
		CHECK(strstr(t->cert_pem, "-----BEGIN "), "a certificate without a BEGIN line");
		CHECK(t->key_pem && strstr(t->key_pem, "-----BEGIN "),
		      "a key without a BEGIN line");
		if (wc->cert_file)
			check_pem("cert_file", wc->cert_file, t->cert_pem);
		if (wc->key_file)
			check_pem("key_file", wc->key_file, t->key_pem);
		CHECK(wc->tls_min_version >= 10 && wc->tls_min_version <= wc->tls_max_version &&
			  wc->tls_max_version <= 13,
		      "TLS from version %u to %u", wc->tls_min_version, wc->tls_max_version);
		CHECK(t->priorities && !strncmp(t->priorities, "NORMAL", 6), "priorities %s",
		      t->priorities ? t->priorities : "none");
	} else {
		CHECK(!wc->cert_file && !wc->key_file && !t->key_pem, "a key without a cert");
		CHECK(!wc->tls_min_version && !wc->tls_max_version && !t->priorities &&
			  t->client_auth == TLS_NO_CLIENT_CERT && !wc->client_ca_file &&
			  !t->client_ca_pem && !t->nallowed_sans && !t->ncipher_suites,
		      "TLS settings without TLS");
	}
	if (tls_client_auth_verifies(t->client_auth))
		CHECK(t->client_ca_pem, "%s without client CAs",
		      tlsconf_client_auth_name(t->client_auth));
	if (t->client_ca_pem)
		CHECK(t->client_auth != TLS_NO_CLIENT_CERT, "client CAs that are never used");
	if (wc->client_ca_file)
		check_pem("client_ca_file", wc->client_ca_file, t->client_ca_pem);
	CHECK(!!t->allowed_sans == !!t->nallowed_sans && !!t->cipher_suites == !!t->ncipher_suites,
	      "lists and their lengths disagree");
	CHECK(!!wc->headers == !!wc->nheaders, "%zu headers, headers %p", wc->nheaders,
	      (void *)wc->headers);
	for (i = 0; i < 2 * wc->nheaders; i++)
		CHECK(*wc->headers[i] && !strpbrk(wc->headers[i], "\r\n"), "header part \"%s\"",
		      wc->headers[i]);
	CHECK(!!wc->rate_interval_ns == !!wc->rate_burst, "rate limit every %llu ns, burst %u",
	      (unsigned long long)wc->rate_interval_ns, wc->rate_burst);

	CHECK(!!wc->users == !!wc->nusers && !!wc->auth == !!wc->nusers,
	      "%zu users, users %p, auth %p", wc->nusers, (void *)wc->users, (void *)wc->auth);
	for (i = 0; i < wc->nusers; i++) {
		const struct webconfig_user *u = &wc->users[i];

		CHECK(*u->name && !strchr(u->name, ':'), "user name \"%s\"", u->name);
		CHECK(strlen(u->hash) == 60 && !strncmp(u->hash, "$2", 2), "user %s's hash %s",
		      u->name, u->hash);
		for (j = 0; j < i; j++)
			CHECK(strcmp(u->name, wc->users[j].name), "user %s twice", u->name);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct webconfig wc;
	char err[512];
	int ret;

	memset(&wc, 0xa5, sizeof(wc));
	memset(err, 0xa5, sizeof(err));
	loading = true;
	ret =
	    webconfig_parse("<fuzz>", fixture_dir, (const char *)data, size, &wc, err, sizeof(err));
	loading = false;
	CHECK(memchr(err, '\0', sizeof(err)), "the message is not terminated");
	if (ret) {
		CHECK(ret < 0 && ret > -4096, "returned %d", ret);
		CHECK(all_zero(&wc), "failed (%d) but left a config behind", ret);
		CHECK(!strncmp(err, "<fuzz>", 6), "message \"%s\" does not name the file", err);
		return 0;
	}
	CHECK(!err[0], "loaded, with a message: %s", err);
	check_loaded(&wc);
	webconfig_free(&wc);
	CHECK(all_zero(&wc), "not zeroed when freed");
	return 0;
}
