// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* holders.c - the VMs that hold disks open, from /proc (holders.h). */
#define _GNU_SOURCE
#include "sys/holders.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sys/disks.h"

/* The part of a command line read: libvirt's run to ~20 KiB, -name near
 * their start. */
#define HOLDERS_CMDLINE_MAX 65536

bool holders_is_qemu(const char *argv0)
{
	const char *base = strrchr(argv0, '/');

	base = base ? base + 1 : argv0;
	return !strncmp(base, "qemu", 4) || !strcmp(base, "kvm");
}

/*
 * One option of a qemu option string (opts, up to ','; ",," is a comma)
 * into out; returns where the next option starts, or NULL at the end.
 */
static const char *next_option(const char *opts, char *out, size_t len)
{
	size_t o = 0;

	for (; *opts; opts++) {
		if (*opts == ',') {
			if (opts[1] != ',')
				break;
			opts++;
		}
		if (o + 1 < len)
			out[o++] = *opts;
	}
	out[o] = '\0';
	return *opts ? opts + 1 : NULL;
}

/* The guest name in one -name value: "NAME,..." or "...,guest=NAME,...". */
static int name_in_value(const char *value, char *out, size_t outlen)
{
	char opt[256];
	bool first = true;
	int rc = -ENOENT;

	while (value) {
		value = next_option(value, opt, sizeof(opt));
		if (!strncmp(opt, "guest=", 6)) {
			snprintf(out, outlen, "%s", opt + 6);
			rc = 0;
		} else if (first && !strchr(opt, '=')) {
			snprintf(out, outlen, "%s", opt);
			rc = 0;
		}
		first = false;
	}
	return rc;
}

int holders_vm_name(const char *args, size_t len, char *out, size_t outlen)
{
	const char *end = args + len, *a = args;
	int rc = -ENOENT;

	while (a < end) {
		size_t n = strnlen(a, (size_t)(end - a));
		const char *value = a + n + 1;

		if ((!strcmp(a, "-name") || !strcmp(a, "--name")) && value < end &&
		    strnlen(value, (size_t)(end - value)) < (size_t)(end - value) &&
		    !name_in_value(value, out, outlen))
			rc = 0;
		a += n + 1;
	}
	return rc;
}

/* procdir/pid/file into buf (at most len - 1 bytes, NUL added). The bytes
 * read, or -errno. */
static ssize_t read_proc(const char *procdir, const char *pid, const char *file, char *buf,
			 size_t len)
{
	char path[PATH_MAX];
	ssize_t n, total = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/%s/%s", procdir, pid, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((size_t)total + 1 < len && (n = read(fd, buf + total, len - 1 - (size_t)total)) > 0)
		total += n;
	close(fd);
	buf[total] = '\0';
	return total;
}

static void add_holder(struct holder *out, size_t max, size_t *n, uint32_t dev, int pid,
		       const char *vm)
{
	for (size_t i = 0; i < *n; i++)
		if (out[i].dev == dev && !strcmp(out[i].vm, vm))
			return;
	if (*n >= max)
		return;
	out[*n].dev = dev;
	out[*n].pid = pid;
	snprintf(out[*n].vm, sizeof(out[*n].vm), "%s", vm);
	(*n)++;
}

/* The block devices process pid holds open, each as its whole disk.
 * -errno when its descriptors cannot be read (gone, or not ours). */
static int scan_fds(const char *procdir, const char *pid, const char *vm, struct holder *out,
		    size_t max, size_t *n)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%s/fd", procdir, pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		struct stat st;
		uint32_t whole;

		if (e->d_name[0] == '.')
			continue;
		/* stat follows the link to the device itself, whatever path
		 * (/dev/dm-3, /dev/mapper/..., a passed descriptor) opened it. */
		if (fstatat(dirfd(d), e->d_name, &st, 0) || !S_ISBLK(st.st_mode))
			continue;
		if (disks_whole(disk_mkdev(major(st.st_rdev), minor(st.st_rdev)), &whole))
			continue;
		add_holder(out, max, n, whole, atoi(pid), vm);
	}
	closedir(d);
	return 0;
}

/* Whether pid is a qemu; if it is, its VM's name into vm ("" if none). */
static bool qemu_process(const char *procdir, const char *pid, char *cmd, size_t cmdlen, char *vm,
			 size_t vmlen)
{
	/* Most processes are not qemu: their argv[0] is all that is read (one
	 * open and read each; kernel threads have none). */
	ssize_t n = read_proc(procdir, pid, "cmdline", cmd, cmdlen < 256 ? cmdlen : 256);

	if (n <= 0 || !holders_is_qemu(cmd))
		return false;
	if ((size_t)n == 255)
		n = read_proc(procdir, pid, "cmdline", cmd, cmdlen);
	if (n <= 0)
		return false;
	if (holders_vm_name(cmd, (size_t)n, vm, vmlen))
		vm[0] = '\0';
	return true;
}

int holders_scan(const char *procdir, struct holder *out, size_t max, struct holders_stats *st)
{
	char *cmd = malloc(HOLDERS_CMDLINE_MAX), vm[sizeof(out->vm)];
	DIR *d = opendir(procdir);
	struct dirent *e;
	size_t n = 0;
	int rc;

	memset(st, 0, sizeof(*st));
	if (!d || !cmd) {
		rc = d ? -ENOMEM : -errno;
		free(cmd);
		if (d)
			closedir(d);
		return rc;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		if (!qemu_process(procdir, e->d_name, cmd, HOLDERS_CMDLINE_MAX, vm, sizeof(vm)))
			continue;
		st->qemus++;
		rc = scan_fds(procdir, e->d_name, vm, out, max, &n);
		if (rc == -EACCES || rc == -EPERM)
			st->denied++;
	}
	closedir(d);
	free(cmd);
	return (int)n;
}
