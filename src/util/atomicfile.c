// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* atomicfile.c - a file replaced whole, through a temp file (atomicfile.h). */
#include "util/atomicfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* All of len bytes, across short writes and signals. 0 or -errno. */
static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Writes and flushes the parts to the open fd (named tmp), and closes it.
 * 0 or -errno with what failed in err. */
static int fill(int fd, const char *tmp, const struct atomicfile_part *parts, size_t n, char *err,
		size_t errlen)
{
	int rc = 0;

	for (size_t i = 0; !rc && i < n; i++)
		if (parts[i].len)
			rc = write_all(fd, parts[i].data, parts[i].len);
	if (rc) {
		close(fd);
		snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(-rc));
		return rc;
	}
	/* Flushed before the rename: else a crash could leave the new name
	 * on an empty file, the old contents gone. */
	if (fsync(fd)) {
		rc = -errno;
		close(fd);
		snprintf(err, errlen, "cannot flush %s to disk: %s", tmp, strerror(-rc));
		return rc;
	}
	if (close(fd)) {
		rc = -errno;
		snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(-rc));
	}
	return rc;
}

int atomicfile_write(const char *path, const struct atomicfile_part *parts, size_t n, char *err,
		     size_t errlen)
{
	char tmp[PATH_MAX];
	int fd, rc;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp)) {
		snprintf(err, errlen, "a path of %zu bytes: %s", strlen(path),
			 strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	/* In path's own directory, so that the rename stays on one file system. */
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot create %s: %s", tmp, strerror(-rc));
		return rc;
	}
	rc = fill(fd, tmp, parts, n, err, errlen);
	if (!rc && rename(tmp, path)) {
		rc = -errno;
		snprintf(err, errlen, "cannot rename %s to %s: %s", tmp, path, strerror(-rc));
	}
	if (rc)
		unlink(tmp);
	return rc;
}
