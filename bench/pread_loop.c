// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pread_loop.c - bench/syscalls.sh's load: COUNT 1-byte pread64 calls on a
 * file the page cache holds, timed as a whole; prints the mean ns per call.
 * What a call costs with and without programs on its tracepoints.
 *
 * Usage: pread_loop FILE COUNT
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec a, b;
	char *end, c;
	long long count;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: pread_loop FILE COUNT\n");
		return 2;
	}
	count = strtoll(argv[2], &end, 10);
	if (*end || count <= 0) {
		fprintf(stderr, "pread_loop: COUNT '%s' is not a positive number\n", argv[2]);
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || pread(fd, &c, 1, 0) != 1) {
		perror(argv[1]);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long long i = 0; i < count; i++)
		if (pread(fd, &c, 1, 0) != 1) {
			perror("pread");
			return 1;
		}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.1f\n",
	       ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) /
		   (double)count);
	return close(fd) ? 1 : 0;
}
