// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * dio.c - issues an exact number of O_DIRECT reads or writes, one at a time,
 * so the block layer sees exactly that many requests of exactly that size
 * (synchronous direct I/O is neither merged nor read ahead).
 *
 * Usage: dio read|write DEVICE COUNT SIZE [--eio-ok]
 * I/O i goes to offset (i * SIZE) modulo the device size.
 * --eio-ok: an I/O that fails with an I/O error (EIO, or ENODATA: the
 * kernel's errno for a medium error) does not stop the run; at the end
 * "eio N" (how many failed) is printed on stdout.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static long long number(const char *s)
{
	char *end;
	long long v = strtoll(s, &end, 10);

	if (*end || v <= 0) {
		fprintf(stderr, "dio: '%s' is not a positive number\n", s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	unsigned long long devsize = 0;
	long long count, size, eio = 0;
	int writing, fd;
	bool eio_ok = argc == 6 && !strcmp(argv[5], "--eio-ok");
	void *buf;

	if ((argc != 5 && !eio_ok) || (strcmp(argv[1], "read") && strcmp(argv[1], "write"))) {
		fprintf(stderr, "usage: dio read|write DEVICE COUNT SIZE [--eio-ok]\n");
		return 2;
	}
	writing = !strcmp(argv[1], "write");
	count = number(argv[3]);
	size = number(argv[4]);
	fd = open(argv[2], (writing ? O_WRONLY : O_RDONLY) | O_DIRECT);
	if (fd < 0 || ioctl(fd, BLKGETSIZE64, &devsize) || devsize < (unsigned long long)size) {
		fprintf(stderr, "dio: %s: %s\n", argv[2], strerror(errno ? errno : EINVAL));
		return 1;
	}
	if (posix_memalign(&buf, 4096, (size_t)size))
		return 1;
	memset(buf, 0xa5, (size_t)size);
	for (long long i = 0; i < count; i++) {
		off_t off =
		    (off_t)(((unsigned long long)i * (unsigned long long)size) %
			    (devsize / (unsigned long long)size * (unsigned long long)size));
		ssize_t n = writing ? pwrite(fd, buf, (size_t)size, off)
				    : pread(fd, buf, (size_t)size, off);

		if (n < 0 && (errno == EIO || errno == ENODATA) && eio_ok) {
			eio++;
			continue;
		}
		if (n != size) {
			fprintf(stderr, "dio: I/O %lld at %lld: %s\n", i, (long long)off,
				n < 0 ? strerror(errno) : "short");
			return 1;
		}
	}
	free(buf);
	if (eio_ok)
		printf("eio %lld\n", eio);
	return close(fd) ? 1 : 0;
}
