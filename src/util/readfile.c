// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* readfile.c - a whole file into memory (readfile.h). */
#define _GNU_SOURCE
#include "util/readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int readfile_all(const char *path, size_t max, char **out, size_t *len)
{
	size_t n = 0, cap = 4096;
	char *data, *d;
	ssize_t r;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	data = malloc(cap);
	if (!data) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		if (n + 1 >= cap) {
			if (cap > max) {
				ret = -EFBIG;
				goto fail;
			}
			d = realloc(data, cap * 2);
			if (!d) {
				ret = -ENOMEM;
				goto fail;
			}
			data = d;
			cap *= 2;
		}
		r = read(fd, data + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ret = -errno;
			goto fail;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (n > max) {
		ret = -EFBIG;
		fd = -1;
		goto fail;
	}
	data[n] = '\0';
	*out = data;
	if (len)
		*len = n;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	explicit_bzero(data, cap);
	free(data);
	return ret;
}

const char *readfile_strerror(int rc, size_t max)
{
	static __thread char msg[48];

	if (rc != -EFBIG)
		return strerror(-rc);
	if (max % (1 << 20) == 0)
		snprintf(msg, sizeof(msg), "larger than %zu MiB", max >> 20);
	else
		snprintf(msg, sizeof(msg), "larger than %zu bytes", max);
	return msg;
}
