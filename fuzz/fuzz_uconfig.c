// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_uconfig.c - libFuzzer target for the user-program config parser: any
 * input must parse or fail cleanly, without leaks, crashes or undefined
 * behaviour (make fuzz).
 */
#include <stddef.h>
#include <stdint.h>

#include "uprog/uconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct uconfig c;
	char err[512];

	if (!uconfig_parse_buffer("<fuzz>", (const char *)data, size, &c, err, sizeof(err)))
		uconfig_free(&c);
	return 0;
}
