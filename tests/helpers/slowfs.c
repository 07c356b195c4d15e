// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * slowfs.c - a FUSE filesystem with one file, "disk", held in memory, whose
 * reads each sleep a fixed time. A loop device over that file is a block
 * device with a known added latency per read, for iolat's latency tests.
 *
 * Usage: slowfs MOUNTPOINT --size-mib=N --delay-us=N [--files=N]
 *               [--eio-offsets=OFF,OFF...] [FUSE options]
 * The file is opened with direct_io so that every read reaches us.
 * --eio-offsets: a read or write whose byte range holds one of these offsets
 * (bytes, decimal, at most 64) fails with EIO and moves no data, every time:
 * a loop device over the file then completes those requests with an error.
 * --files=N (N > 1) serves N such files, disk0 ... disk<N-1>, instead: loop
 * devices over them share one backing store, and with FUSE's -s (one thread)
 * one queue, where one device's reads wait behind the other's.
 */
#define FUSE_USE_VERSION 31
#include <errno.h>
#include <fuse.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define MAX_EIO 64

static struct {
	unsigned long size_mib;
	unsigned long delay_us;
	unsigned long files;
	char *eio_list; /* --eio-offsets as given */
	off_t eio[MAX_EIO];
	size_t neio;
	char *data;
	size_t size;
} fs;

static const struct fuse_opt opts[] = {
	{ "--size-mib=%lu", offsetof(typeof(fs), size_mib), 0 },
	{ "--delay-us=%lu", offsetof(typeof(fs), delay_us), 0 },
	{ "--files=%lu", offsetof(typeof(fs), files), 0 },
	{ "--eio-offsets=%s", offsetof(typeof(fs), eio_list), 0 },
	FUSE_OPT_END,
};

/* file_index: which file PATH names (0 ... files-1), or -1 if none. */
static long file_index(const char *path)
{
	char *end;
	unsigned long i;

	if (fs.files == 1)
		return strcmp(path, "/disk") ? -1 : 0;
	if (strncmp(path, "/disk", 5) || path[5] < '0' || path[5] > '9')
		return -1;
	i = strtoul(path + 5, &end, 10);
	return *end || i >= fs.files || (path[5] == '0' && path[6]) ? -1 : (long)i;
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	memset(st, 0, sizeof(*st));
	if (!strcmp(path, "/")) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	if (file_index(path) < 0)
		return -ENOENT;
	st->st_mode = S_IFREG | 0600;
	st->st_nlink = 1;
	st->st_size = (off_t)fs.size;
	return 0;
}

static int fs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	(void)off, (void)fi, (void)flags;
	if (strcmp(path, "/"))
		return -ENOENT;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	for (unsigned long i = 0; i < fs.files; i++) {
		char name[32];

		if (fs.files == 1)
			snprintf(name, sizeof(name), "disk");
		else
			snprintf(name, sizeof(name), "disk%lu", i);
		fill(buf, name, NULL, 0, 0);
	}
	return 0;
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
	long i = file_index(path);

	if (i < 0)
		return -ENOENT;
	fi->fh = (uint64_t)i;
	fi->direct_io = 1;
	return 0;
}

static size_t clamp(off_t off, size_t len)
{
	if (off < 0 || (size_t)off >= fs.size)
		return 0;
	return len < fs.size - (size_t)off ? len : fs.size - (size_t)off;
}

/* Whether [off, off + len) holds one of the --eio-offsets. */
static bool fails(off_t off, size_t len)
{
	for (size_t i = 0; i < fs.neio; i++)
		if (fs.eio[i] >= off && (size_t)(fs.eio[i] - off) < len)
			return true;
	return false;
}

static int fs_read(const char *path, char *buf, size_t len, off_t off, struct fuse_file_info *fi)
{
	struct timespec d = { (time_t)(fs.delay_us / 1000000),
			      (long)(fs.delay_us % 1000000) * 1000 };

	(void)path;
	while (nanosleep(&d, &d) && errno == EINTR)
		;
	if (fails(off, len))
		return -EIO;
	len = clamp(off, len);
	memcpy(buf, fs.data + fi->fh * fs.size + off, len);
	return (int)len;
}

static int fs_write(const char *path, const char *buf, size_t len, off_t off,
		    struct fuse_file_info *fi)
{
	(void)path;
	if (fails(off, len))
		return -EIO;
	len = clamp(off, len);
	memcpy(fs.data + fi->fh * fs.size + off, buf, len);
	return (int)len;
}

static const struct fuse_operations ops = {
	.getattr = fs_getattr,
	.readdir = fs_readdir,
	.open = fs_open,
	.read = fs_read,
	.write = fs_write,
};

/* "4096,40960" into fs.eio; 0, or -1 for a list that is not one. */
static int parse_eio(const char *list)
{
	const char *p = list;
	char *end;

	while (list && *p) {
		unsigned long long v = strtoull(p, &end, 10);

		if (end == p || (*end && *end != ',') || fs.neio == MAX_EIO)
			return -1;
		fs.eio[fs.neio++] = (off_t)v;
		p = *end ? end + 1 : end;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);

	fs.size_mib = 16;
	fs.files = 1;
	if (fuse_opt_parse(&args, &fs, opts, NULL) || fs.files < 1 || fs.files > 64 ||
	    parse_eio(fs.eio_list)) {
		fprintf(stderr, "slowfs: bad options (see the comment at the top of slowfs.c)\n");
		return 2;
	}
	fs.size = fs.size_mib << 20;
	fs.data = calloc(fs.files, fs.size);
	if (!fs.data)
		return 1;
	return fuse_main(args.argc, args.argv, &ops, NULL);
}
