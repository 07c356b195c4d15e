/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * buf.h - a growable byte buffer that exposition formats render into.
 * On allocation failure it stops growing and remembers the failure, so
 * renderers need not check every append; callers check buf_failed().
 */
#ifndef IOLAT_BUF_H
#define IOLAT_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct buf {
	char *data;
	size_t len, cap;
	bool failed;
};

void buf_append(struct buf *b, const void *p, size_t n);
void buf_puts(struct buf *b, const char *s);
void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool buf_failed(const struct buf *b);
/* Makes room for n more bytes, so appending them reallocates nothing (a
 * body the size of the last one, say). false if it cannot: the buffer is
 * then failed, as an append would have left it. */
bool buf_reserve(struct buf *b, size_t n);
void buf_reset(struct buf *b); /* empties it, keeps the memory */
void buf_free(struct buf *b);

/*
 * Makes room for one more element in a growable array (*items holding n of
 * *cap elements of `size` bytes), doubling from `first`. The caller's
 * pointers into the array are stale after a successful call. 0 or -ENOMEM.
 */
int array_make_room(void **items, size_t *cap, size_t n, size_t size, size_t first);

/* The decimal digits of n into out (which holds FORMAT_DIGITS_MAX), not
 * NUL-terminated; how many. */
#define FORMAT_DIGITS_MAX 20
size_t format_digits(char *out, uint64_t n);

/*
 * mag in decimal, after a '-' when negative, without printf (scrapes write
 * tens of thousands). Truncated to fit out; NUL-terminated when outlen > 0.
 */
void format_decimal(char *out, size_t outlen, uint64_t mag, bool negative);

#endif
