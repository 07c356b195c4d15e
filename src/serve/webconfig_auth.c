// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * webconfig_auth.c - checks basic-auth credentials against the web
 * configuration's bcrypt hashes (webconfig.h: webconfig_check), in time that
 * does not tell which names exist, with a short cache of successful checks.
 */
#define _GNU_SOURCE
#include <crypt.h>
#include <errno.h>
#include <nettle/hmac.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "serve/webconfig_internal.h"
#include "util/monotonic.h"

/*
 * Successful checks are remembered this long. Long enough that a scrape every
 * few seconds pays one bcrypt a minute, short enough to bound how long a
 * credential stays warm. Entries are not refreshed on a hit for that reason.
 */
#define CACHE_TTL_NS (60 * NSEC_PER_SEC)
#define CACHE_SLOTS 16 /* one per distinct client is plenty */

struct cache_slot {
	uint8_t mac[SHA256_DIGEST_SIZE];
	uint64_t expires; /* CLOCK_MONOTONIC ns; 0 = empty */
};

struct webconfig_auth {
	pthread_mutex_t lock; /* guards slot[]; libmicrohttpd may call from several threads */
	/*
	 * Keyed per load so the cache never holds a plain fast hash of a
	 * password: a core dump would otherwise undo what bcrypt buys.
	 */
	uint8_t key[32];
	char dummy[WEBCONFIG_BCRYPT_LEN + 1];
	struct cache_slot slot[CACHE_SLOTS];
};

/*
 * The dummy that unknown users are checked against: a fixed salt at the
 * highest configured cost, so a miss costs what the slowest hit costs.
 */
static void make_dummy(char *out, size_t len, int cost)
{
	snprintf(out, len, "$2b$%02d$%s", cost,
		 "UOsUHWZ821XM98uojkxesOjwRNkZQZKY1GhutOdanAMM4kR7qwRJ2");
}

int webconfig_auth_new(int cost, struct webconfig_auth **out)
{
	struct webconfig_auth *a = calloc(1, sizeof(*a));
	size_t got = 0;
	ssize_t r;

	if (!a)
		return -ENOMEM;
	while (got < sizeof(a->key)) {
		r = getrandom(a->key + got, sizeof(a->key) - got, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = -errno;

			free(a);
			return e;
		}
		got += (size_t)r;
	}
	pthread_mutex_init(&a->lock, NULL);
	make_dummy(a->dummy, sizeof(a->dummy), cost);
	*out = a;
	return 0;
}

void webconfig_auth_free(struct webconfig_auth *a)
{
	if (!a)
		return;
	pthread_mutex_destroy(&a->lock);
	explicit_bzero(a, sizeof(*a));
	free(a);
}

/* Equal, in time that depends only on len. */
static bool ct_equal(const void *a, const void *b, size_t len)
{
	const volatile uint8_t *x = a, *y = b;
	uint8_t d = 0;
	size_t i;

	for (i = 0; i < len; i++)
		d |= x[i] ^ y[i];
	return d == 0;
}

static void cache_mac(const struct webconfig_auth *a, const char *user, const char *password,
		      uint8_t mac[SHA256_DIGEST_SIZE])
{
	struct hmac_sha256_ctx ctx;

	hmac_sha256_set_key(&ctx, sizeof(a->key), a->key);
	/* With the NUL, ("ab", "c") and ("a", "bc") cannot collide. */
	hmac_sha256_update(&ctx, strlen(user) + 1, (const uint8_t *)user);
	hmac_sha256_update(&ctx, strlen(password), (const uint8_t *)password);
	hmac_sha256_digest(&ctx, SHA256_DIGEST_SIZE, mac);
	explicit_bzero(&ctx, sizeof(ctx));
}

static bool cache_hit(struct webconfig_auth *a, const uint8_t mac[SHA256_DIGEST_SIZE])
{
	uint64_t now = monotonic_ns();
	bool hit = false;
	int i;

	pthread_mutex_lock(&a->lock);
	for (i = 0; i < CACHE_SLOTS; i++)
		if (a->slot[i].expires > now && ct_equal(a->slot[i].mac, mac, SHA256_DIGEST_SIZE))
			hit = true;
	pthread_mutex_unlock(&a->lock);
	return hit;
}

/* Into an empty or expired slot, else over the one closest to expiry. */
static void cache_put(struct webconfig_auth *a, const uint8_t mac[SHA256_DIGEST_SIZE])
{
	uint64_t now = monotonic_ns();
	int i, victim = 0;

	pthread_mutex_lock(&a->lock);
	for (i = 0; i < CACHE_SLOTS; i++)
		if (a->slot[i].expires < a->slot[victim].expires)
			victim = i;
	memcpy(a->slot[victim].mac, mac, SHA256_DIGEST_SIZE);
	a->slot[victim].expires = now + CACHE_TTL_NS;
	pthread_mutex_unlock(&a->lock);
}

/*
 * One bcrypt of password with hash's salt and cost, compared in constant
 * time. crypt_data is 32 KiB: on the heap, not on a server thread's stack.
 */
static bool bcrypt_matches(const char *password, const char *hash)
{
	struct crypt_data *cd = calloc(1, sizeof(*cd));
	const char *r;
	bool ok;

	if (!cd)
		return false;
	r = crypt_rn(password, hash, cd, sizeof(*cd));
	ok = r && strlen(r) == WEBCONFIG_BCRYPT_LEN && ct_equal(r, hash, WEBCONFIG_BCRYPT_LEN);
	explicit_bzero(cd, sizeof(*cd));
	free(cd);
	return ok;
}

bool webconfig_check(const struct webconfig *wc, const char *user, const char *password)
{
	const struct webconfig_user *u = NULL;
	uint8_t mac[SHA256_DIGEST_SIZE];
	size_t i;
	bool ok;

	/*
	 * A hash of "" would let a blank login in: nobody means that, and
	 * clients send it when no credentials were configured.
	 */
	if (!wc || !wc->auth || !user || !password || !*password)
		return false;
	/* Not stopping at the match keeps the position of the name in the file hidden. */
	for (i = 0; i < wc->nusers; i++)
		if (!strcmp(wc->users[i].name, user) && !u)
			u = &wc->users[i];

	cache_mac(wc->auth, user, password, mac);
	if (u && cache_hit(wc->auth, mac)) {
		explicit_bzero(mac, sizeof(mac));
		return true;
	}
	ok = bcrypt_matches(password, u ? u->hash : wc->auth->dummy) && u;
	if (ok)
		cache_put(wc->auth, mac);
	explicit_bzero(mac, sizeof(mac));
	return ok;
}
