// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * slowfs.c - a FUSE filesystem with one file, "disk", held in memory, whose
 * reads each sleep a fixed time. A loop device over that file is a block
 * device with a known added latency per read, for iolat's latency tests.
 *
 * Usage: slowfs MOUNTPOINT --size-mib=N --delay-us=N [FUSE options]
 * The file is opened with direct_io so that every read reaches us.
 */
#define FUSE_USE_VERSION 31
#include <errno.h>
#include <fuse.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static struct {
	unsigned long size_mib;
	unsigned long delay_us;
	char *data;
	size_t size;
} fs;

static const struct fuse_opt opts[] = {
	{ "--size-mib=%lu", offsetof(typeof(fs), size_mib), 0 },
	{ "--delay-us=%lu", offsetof(typeof(fs), delay_us), 0 },
	FUSE_OPT_END,
};

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	memset(st, 0, sizeof(*st));
	if (!strcmp(path, "/")) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	if (strcmp(path, "/disk"))
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
	fill(buf, "disk", NULL, 0, 0);
	return 0;
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
	if (strcmp(path, "/disk"))
		return -ENOENT;
	fi->direct_io = 1;
	return 0;
}

static size_t clamp(off_t off, size_t len)
{
	if (off < 0 || (size_t)off >= fs.size)
		return 0;
	return len < fs.size - (size_t)off ? len : fs.size - (size_t)off;
}

static int fs_read(const char *path, char *buf, size_t len, off_t off, struct fuse_file_info *fi)
{
	struct timespec d = { (time_t)(fs.delay_us / 1000000), (long)(fs.delay_us % 1000000) * 1000 };

	(void)path, (void)fi;
	while (nanosleep(&d, &d) && errno == EINTR)
		;
	len = clamp(off, len);
	memcpy(buf, fs.data + off, len);
	return (int)len;
}

static int fs_write(const char *path, const char *buf, size_t len, off_t off,
		    struct fuse_file_info *fi)
{
	(void)path, (void)fi;
	len = clamp(off, len);
	memcpy(fs.data + off, buf, len);
	return (int)len;
}

static const struct fuse_operations ops = {
	.getattr = fs_getattr,
	.readdir = fs_readdir,
	.open = fs_open,
	.read = fs_read,
	.write = fs_write,
};

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);

	fs.size_mib = 16;
	if (fuse_opt_parse(&args, &fs, opts, NULL))
		return 2;
	fs.size = fs.size_mib << 20;
	fs.data = calloc(1, fs.size);
	if (!fs.data)
		return 1;
	return fuse_main(args.argc, args.argv, &ops, NULL);
}
