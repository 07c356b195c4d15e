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

/* "00" to "99": two digits a division, half the divisions of one by one
 * (a scrape writes tens of thousands of numbers). */
static const char digit_pairs[201] = "00010203040506070809"
				     "10111213141516171819"
				     "20212223242526272829"
				     "30313233343536373839"
				     "40414243444546474849"
				     "50515253545556575859"
				     "60616263646566676869"
				     "70717273747576777879"
				     "80818283848586878889"
				     "90919293949596979899";

/* Digits of n: 1 for 0. */
static size_t digit_count(uint64_t n)
{
	size_t k = 1;

	for (; n >= 10000; n /= 10000)
		k += 4;
	return k + (n >= 10) + (n >= 100) + (n >= 1000);
}

size_t format_digits(char *out, uint64_t n)
{
	size_t len = digit_count(n);
	char *o = out + len;

	/* From the last digit back, written in place: no copy to reverse. */
	while (n >= 100) {
		unsigned pair = (unsigned)(n % 100) * 2;

		n /= 100;
		o -= 2;
		memcpy(o, digit_pairs + pair, 2);
	}
	if (n >= 10) {
		o -= 2;
		memcpy(o, digit_pairs + n * 2, 2);
	} else {
		*--o = (char)('0' + n);
	}
	return len;
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
