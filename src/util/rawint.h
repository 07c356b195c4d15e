/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rawint.h - integers of 1, 2, 4 or 8 bytes in host order (what a BPF
 * program wrote into a map key), read from unaligned bytes.
 */
#ifndef IOLAT_RAWINT_H
#define IOLAT_RAWINT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Callers check size is 1, 2, 4 or 8; any other size reads the first
 * min(size, 8) bytes into a zeroed 64-bit value. */
static inline uint64_t rawint_unsigned(const void *p, size_t size)
{
	uint8_t v8;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64 = 0;

	switch (size) {
	case 1:
		memcpy(&v8, p, 1);
		return v8;
	case 2:
		memcpy(&v16, p, 2);
		return v16;
	case 4:
		memcpy(&v32, p, 4);
		return v32;
	default:
		memcpy(&v64, p, size < 8 ? size : 8);
		return v64;
	}
}

/* The same, sign-extended from its size. */
static inline int64_t rawint_signed(const void *p, size_t size)
{
	uint64_t v = rawint_unsigned(p, size);

	switch (size) {
	case 1:
		return (int8_t)v;
	case 2:
		return (int16_t)v;
	case 4:
		return (int32_t)v;
	default:
		return (int64_t)v;
	}
}

#endif /* IOLAT_RAWINT_H */
