/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * json.h - a small streaming JSON writer for iolat's --json outputs.
 * Tracks nesting so callers never place commas by hand.
 */
#ifndef IOLAT_JSON_H
#define IOLAT_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 16

struct json {
	FILE *f;
	int depth;
	bool need_comma[JSON_MAX_DEPTH];
};

void json_init(struct json *j, FILE *f);
void json_key(struct json *j, const char *key);
void json_begin_object(struct json *j);
void json_end_object(struct json *j);
void json_begin_array(struct json *j);
void json_end_array(struct json *j);
void json_string(struct json *j, const char *s);
void json_uint(struct json *j, uint64_t v);
void json_double(struct json *j, double v);
void json_bool(struct json *j, bool v);
void json_int(struct json *j, int64_t v);
void json_null(struct json *j);

/* key: value shorthands, for objects. */
void json_kv_string(struct json *j, const char *key, const char *s);
void json_kv_uint(struct json *j, const char *key, uint64_t v);
void json_kv_double(struct json *j, const char *key, double v);
void json_kv_bool(struct json *j, const char *key, bool v);
void json_kv_int(struct json *j, const char *key, int64_t v);
void json_kv_null(struct json *j, const char *key);

#endif
