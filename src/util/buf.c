// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* buf.c - a growable byte buffer (buf.h). */
#include "util/buf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool reserve(struct buf *b, size_t more)
{
	size_t cap;
	char *d;

	if (b->failed)
		return false;
	if (b->len + more + 1 <= b->cap)
		return true;
	cap = b->cap ? b->cap : 4096;
	while (cap < b->len + more + 1)
		cap *= 2;
	d = realloc(b->data, cap);
	if (!d) {
		b->failed = true;
		return false;
	}
	b->data = d;
	b->cap = cap;
	return true;
}

void buf_append(struct buf *b, const void *p, size_t n)
{
	if (!reserve(b, n))
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void buf_puts(struct buf *b, const char *s)
{
	buf_append(b, s, strlen(s));
}

void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

bool buf_reserve(struct buf *b, size_t n)
{
	return reserve(b, n);
}

bool buf_failed(const struct buf *b)
{
	return b->failed;
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	b->failed = false;
	if (b->data)
		b->data[0] = '\0';
}

void buf_free(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
	b->failed = false;
}

int array_make_room(void **items, size_t *cap, size_t n, size_t size, size_t first)
{
	size_t want = *cap ? *cap * 2 : first;
	void *p;

	if (n < *cap)
		return 0;
	p = realloc(*items, want * size);
	if (!p)
		return -ENOMEM;
	*items = p;
	*cap = want;
	return 0;
}

size_t format_digits(char *out, uint64_t n)
{
	char tmp[FORMAT_DIGITS_MAX];
	size_t k = 0, i = 0;

	do {
		tmp[k++] = (char)('0' + n % 10);
		n /= 10;
	} while (n);
	while (k)
		out[i++] = tmp[--k];
	return i;
}

void format_decimal(char *out, size_t outlen, uint64_t mag, bool negative)
{
	char digits[FORMAT_DIGITS_MAX];
	size_t n = format_digits(digits, mag), i = 0;

	if (negative && i + 1 < outlen)
		out[i++] = '-';
	for (size_t k = 0; k < n && i + 1 < outlen; k++)
		out[i++] = digits[k];
	if (outlen)
		out[i] = '\0';
}
