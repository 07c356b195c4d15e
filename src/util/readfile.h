/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * readfile.h - a whole (small) file into memory, for the config readers.
 */
#ifndef IOLAT_READFILE_H
#define IOLAT_READFILE_H

#include <stddef.h>

/*
 * Reads all of path into a NUL-terminated *out (*len bytes without the NUL;
 * len may be NULL), the caller frees it. Returns 0, -errno, or -EFBIG past
 * max bytes: a cap stops a mistaken /dev/zero. Reading (not fstat) catches
 * directories and FIFOs alike. A failed read leaves nothing of the file in
 * memory, as it may be a private key.
 */
int readfile_all(const char *path, size_t max, char **out, size_t *len);

/* What a failure of readfile_all means, for messages ("larger than 1 MiB"). */
const char *readfile_strerror(int rc, size_t max);

#endif
