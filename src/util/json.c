// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* json.c - a small streaming JSON writer (json.h). */
#include "util/json.h"

#include <inttypes.h>
#include <math.h>

void json_init(struct json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->need_comma[0] = false;
}

/* Before a value: a comma if this container already holds one. */
static void before_value(struct json *j)
{
	if (j->need_comma[j->depth])
		fputc(',', j->f);
	j->need_comma[j->depth] = true;
}

static void write_escaped(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void json_key(struct json *j, const char *key)
{
	before_value(j);
	write_escaped(j->f, key);
	fputc(':', j->f);
	/* The value that follows belongs to this key: no comma before it. */
	j->need_comma[j->depth] = false;
}

static void open_container(struct json *j, char c)
{
	before_value(j);
	fputc(c, j->f);
	if (j->depth < JSON_MAX_DEPTH - 1)
		j->depth++;
	j->need_comma[j->depth] = false;
}

static void close_container(struct json *j, char c)
{
	fputc(c, j->f);
	if (j->depth > 0)
		j->depth--;
	j->need_comma[j->depth] = true;
}

void json_begin_object(struct json *j)
{
	open_container(j, '{');
}
void json_end_object(struct json *j)
{
	close_container(j, '}');
}
void json_begin_array(struct json *j)
{
	open_container(j, '[');
}
void json_end_array(struct json *j)
{
	close_container(j, ']');
}

void json_string(struct json *j, const char *s)
{
	before_value(j);
	write_escaped(j->f, s);
}

void json_uint(struct json *j, uint64_t v)
{
	before_value(j);
	fprintf(j->f, "%" PRIu64, v);
}

void json_int(struct json *j, int64_t v)
{
	before_value(j);
	fprintf(j->f, "%" PRId64, v);
}

void json_null(struct json *j)
{
	before_value(j);
	fputs("null", j->f);
}

void json_double(struct json *j, double v)
{
	before_value(j);
	if (isfinite(v))
		fprintf(j->f, "%.9g", v);
	else
		fputs("null", j->f);
}

void json_bool(struct json *j, bool v)
{
	before_value(j);
	fputs(v ? "true" : "false", j->f);
}

void json_kv_string(struct json *j, const char *k, const char *s)
{
	json_key(j, k);
	json_string(j, s);
}
void json_kv_uint(struct json *j, const char *k, uint64_t v)
{
	json_key(j, k);
	json_uint(j, v);
}
void json_kv_double(struct json *j, const char *k, double v)
{
	json_key(j, k);
	json_double(j, v);
}
void json_kv_bool(struct json *j, const char *k, bool v)
{
	json_key(j, k);
	json_bool(j, v);
}
void json_kv_int(struct json *j, const char *k, int64_t v)
{
	json_key(j, k);
	json_int(j, v);
}
void json_kv_null(struct json *j, const char *k)
{
	json_key(j, k);
	json_null(j);
}
