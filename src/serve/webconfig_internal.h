/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * webconfig_internal.h - what webconfig.c (the file's parser) and
 * webconfig_auth.c (the basic-auth check) share: the hash length and the
 * check's state, made once a file names users.
 */
#ifndef IOLAT_WEBCONFIG_INTERNAL_H
#define IOLAT_WEBCONFIG_INTERNAL_H

#include "serve/webconfig.h"

#define WEBCONFIG_BCRYPT_LEN 60 /* "$2b$" + 2-digit cost + "$" + 22 salt + 31 hash chars */

/*
 * The check's state for users whose hashes cost at most `cost`: a random
 * key for its cache and the dummy hash unknown users are checked against.
 * 0, -ENOMEM, or getrandom's -errno.
 */
int webconfig_auth_new(int cost, struct webconfig_auth **out);
void webconfig_auth_free(struct webconfig_auth *a);

#endif /* IOLAT_WEBCONFIG_INTERNAL_H */
