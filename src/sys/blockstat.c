// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* blockstat.c - a disk's completed-I/O counts from sysfs (blockstat.h). */
#include "sys/blockstat.h"

#include "sys/disks.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Fields a stat line has at least (up to 4.18: no discards, no flushes). */
#define BLOCKSTAT_MIN_FIELDS 11

/* Where each group's "I/Os completed" field is (Documentation/block/stat.rst,
 * counted from 0), and the fewest fields a line with it has. */
static const struct {
	const char *name;
	int field, needs;
} groups[BLOCKSTAT_GROUPS] = {
	[BLOCKSTAT_READ] = { "read", 0, 11 },
	[BLOCKSTAT_WRITE] = { "write", 4, 11 },
	[BLOCKSTAT_DISCARD] = { "discard", 11, 15 },
	[BLOCKSTAT_FLUSH] = { "flush", 15, 17 },
};

const char *blockstat_group_name(int g)
{
	return g >= 0 && g < BLOCKSTAT_GROUPS ? groups[g].name : NULL;
}

int blockstat_parse(const char *text, struct blockstat *out)
{
	uint64_t v[17];
	int n = 0;
	const char *p = text;

	for (;;) {
		char *end;
		unsigned long long x;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '\n')
			break;
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		errno = 0;
		x = strtoull(p, &end, 10);
		if (errno || (*end && !isspace((unsigned char)*end)))
			return -EINVAL;
		if (n < (int)(sizeof(v) / sizeof(v[0])))
			v[n] = x;
		n++;
		p = end;
	}
	if (*p == '\n' && p[1])
		return -EINVAL; /* one line only */
	if (n < BLOCKSTAT_MIN_FIELDS)
		return -EINVAL;
	for (int g = 0; g < BLOCKSTAT_GROUPS; g++) {
		out->has[g] = n >= groups[g].needs;
		out->done[g] = out->has[g] ? v[groups[g].field] : 0;
	}
	return 0;
}

/* The small file open at fd, from its start, into buf; 0 or -errno. sysfs
 * writes the file anew for a read from offset 0, so a descriptor kept open
 * reads fresh values each time. */
static int pread_small(int fd, char *buf, size_t len)
{
	ssize_t got = pread(fd, buf, len - 1, 0);

	if (got < 0)
		return -errno;
	buf[got] = '\0';
	return 0;
}

/* dir/name/leaf, opened for reading: its descriptor, or -errno. */
static int open_leaf(const char *dir, const char *name, const char *leaf)
{
	char path[512];
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s/%s", dir, name, leaf) >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* The small file dir/name/leaf into buf; 0 or -errno. */
static int read_small(const char *dir, const char *name, const char *leaf, char *buf, size_t len)
{
	int fd = open_leaf(dir, name, leaf), rc;

	if (fd < 0)
		return fd;
	rc = pread_small(fd, buf, len);
	close(fd);
	return rc;
}

int blockstat_open(const char *sys_block, const char *name, int *stat_fd, int *iostats_fd)
{
	*stat_fd = open_leaf(sys_block, name, "stat");
	if (*stat_fd < 0)
		return *stat_fd;
	*iostats_fd = open_leaf(sys_block, name, "queue/iostats");
	if (*iostats_fd < 0)
		*iostats_fd = -1;
	return 0;
}

int blockstat_read_open(int stat_fd, int iostats_fd, struct blockstat *out)
{
	char line[512];
	int rc = pread_small(stat_fd, line, sizeof(line));

	if (!rc)
		rc = blockstat_parse(line, out);
	if (rc)
		return rc;
	/* A disk without the file (very old kernels) counts as on: the
	 * kernel then had no way to turn the counts off. */
	out->iostats =
	    iostats_fd < 0 || pread_small(iostats_fd, line, sizeof(line)) || line[0] != '0';
	return 0;
}

int blockstat_read(const char *sys_block, const char *name, struct blockstat *out)
{
	int stat_fd, iostats_fd, rc = blockstat_open(sys_block, name, &stat_fd, &iostats_fd);

	if (rc)
		return rc;
	rc = blockstat_read_open(stat_fd, iostats_fd, out);
	close(stat_fd);
	if (iostats_fd >= 0)
		close(iostats_fd);
	return rc;
}

int blockstat_disk(const char *sys_block, const char *name, uint32_t *dev, uint64_t *sectors)
{
	char buf[64], *end;
	unsigned int major, minor;
	unsigned long long size;
	int rc = read_small(sys_block, name, "dev", buf, sizeof(buf));

	if (rc)
		return rc;
	if (sscanf(buf, "%u:%u", &major, &minor) != 2)
		return -EINVAL;
	rc = read_small(sys_block, name, "size", buf, sizeof(buf));
	if (rc)
		return rc;
	errno = 0;
	size = strtoull(buf, &end, 10);
	if (errno || end == buf || (*end && *end != '\n'))
		return -EINVAL;
	*dev = disk_mkdev(major, minor);
	*sectors = size;
	return 0;
}
