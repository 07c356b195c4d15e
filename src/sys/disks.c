// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* disks.c - block devices by name and number, from sysfs (disks.h). */
#include "sys/disks.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Reads a small sysfs file into buf without its trailing newline. */
static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	n = strlen(buf);
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return 0;
}

static int read_dev(const char *sysdir, uint32_t *dev)
{
	char path[PATH_MAX], line[32];
	unsigned int maj, min;

	snprintf(path, sizeof(path), "%s/dev", sysdir);
	if (read_line(path, line, sizeof(line)) || sscanf(line, "%u:%u", &maj, &min) != 2)
		return -ENOENT;
	*dev = disk_mkdev(maj, min);
	return 0;
}

/* A partition's sysfs directory (real) made its disk's, which it sits in. */
static int to_whole_dir(char *real)
{
	char path[PATH_MAX + 16], *slash;

	snprintf(path, sizeof(path), "%s/partition", real);
	if (access(path, F_OK))
		return 0;
	slash = strrchr(real, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	return 0;
}

int disks_resolve(const char *name, uint32_t *dev, char *whole, size_t wholelen)
{
	char path[PATH_MAX], real[PATH_MAX];
	const char *base;

	if (strncmp(name, "/dev/", 5) == 0)
		name += 5;
	if (!*name || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return -ENOENT;
	snprintf(path, sizeof(path), "/sys/class/block/%s", name);
	if (!realpath(path, real))
		return -ENOENT;
	if (to_whole_dir(real) || read_dev(real, dev))
		return -ENOENT;
	base = strrchr(real, '/');
	if (whole)
		snprintf(whole, wholelen, "%s", base ? base + 1 : real);
	return 0;
}

void disks_name(uint32_t dev, char *buf, size_t len)
{
	char path[PATH_MAX], real[PATH_MAX];
	const char *base;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", disk_major(dev), disk_minor(dev));
	if (!realpath(path, real) || !(base = strrchr(real, '/'))) {
		disk_number(dev, buf, len);
		return;
	}
	snprintf(buf, len, "%s", base + 1);
}

int disks_lookup(const char *dir, uint32_t dev, char *name, size_t len, uint64_t *sectors)
{
	char path[PATH_MAX + 48], line[256];
	bool named = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u:%u/uevent", dir, disk_major(dev), disk_minor(dev));
	f = fopen(path, "re");
	if (!f)
		return -ENOENT;
	while (!named && fgets(line, sizeof(line), f))
		if (!strncmp(line, "DEVNAME=", 8)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(name, len, "%s", line + 8);
			named = true;
		}
	fclose(f);
	if (!named)
		disk_number(dev, name, len);
	if (sectors) {
		snprintf(path, sizeof(path), "%s/%u:%u/size", dir, disk_major(dev),
			 disk_minor(dev));
		*sectors = read_line(path, line, sizeof(line)) == 0 ? strtoull(line, NULL, 10) : 0;
	}
	return 0;
}

/* Appends word to the space-separated list out (once). */
static void add_word(char *out, size_t len, const char *word)
{
	size_t n = strlen(out), w = strlen(word);
	const char *p = out;

	while ((p = strstr(p, word))) {
		if ((p == out || p[-1] == ' ') && (p[w] == ' ' || p[w] == '\0'))
			return;
		p += w;
	}
	if (n + (n ? 1 : 0) + w < len)
		snprintf(out + n, len - n, "%s%s", n ? " " : "", word);
}

/* The entries of directory dir (holders/ or slaves/) into out; a slave
 * that is a partition is named by its whole disk. */
static void list_links(const char *dir, bool whole, char *out, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char name[DISK_NAME_MAX];
		uint32_t dev;

		if (e->d_name[0] == '.')
			continue;
		if (!whole || disks_resolve(e->d_name, &dev, name, sizeof(name)))
			snprintf(name, sizeof(name), "%s", e->d_name);
		add_word(out, len, name);
	}
	closedir(d);
}

int disks_stack(uint32_t dev, struct disk_stack *out)
{
	char base[PATH_MAX], path[PATH_MAX + 300];
	DIR *d;
	struct dirent *e;

	out->holders[0] = out->slaves[0] = '\0';
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", disk_major(dev), disk_minor(dev));
	if (!realpath(path, base))
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/holders", base);
	list_links(path, false, out->holders, sizeof(out->holders));
	snprintf(path, sizeof(path), "%s/slaves", base);
	list_links(path, true, out->slaves, sizeof(out->slaves));
	/* Partitions are subdirectories with a "partition" file. */
	d = opendir(base);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/partition", base, e->d_name);
		if (access(path, F_OK))
			continue;
		snprintf(path, sizeof(path), "%s/%s/holders", base, e->d_name);
		list_links(path, false, out->holders, sizeof(out->holders));
	}
	closedir(d);
	return 0;
}

/* "[mq-deadline] none" -> "mq-deadline"; a queue with no list -> "". */
static void active_scheduler(const char *line, char *out, size_t len)
{
	const char *open = strchr(line, '['), *close = open ? strchr(open, ']') : NULL;

	if (open && close)
		snprintf(out, len, "%.*s", (int)(close - open - 1), open + 1);
	else
		snprintf(out, len, "%s", line);
}

/* A sysfs model string without the blanks SCSI pads it with. */
static void read_model(const char *name, char *out, size_t len)
{
	char path[PATH_MAX], line[256], *s = line, *e;

	out[0] = '\0';
	snprintf(path, sizeof(path), "/sys/block/%s/device/model", name);
	if (read_line(path, line, sizeof(line)))
		return;
	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	snprintf(out, len, "%s", s);
}

static void fill_info(struct disk_info *d, const char *name)
{
	char path[PATH_MAX], line[256];

	snprintf(d->name, sizeof(d->name), "%s", name);
	snprintf(path, sizeof(path), "/sys/block/%s/mq", name);
	d->bio_based = access(path, F_OK) != 0;
	snprintf(path, sizeof(path), "/sys/block/%s/queue/iostats", name);
	d->iostats = read_line(path, line, sizeof(line)) == 0 && atoi(line) != 0;
	snprintf(path, sizeof(path), "/sys/block/%s/queue/wbt_lat_usec", name);
	d->wbt = read_line(path, line, sizeof(line)) == 0 && atol(line) > 0;
	snprintf(path, sizeof(path), "/sys/block/%s/size", name);
	d->sectors = read_line(path, line, sizeof(line)) == 0 ? strtoull(line, NULL, 10) : 0;
	snprintf(path, sizeof(path), "/sys/block/%s/queue/scheduler", name);
	d->scheduler[0] = '\0';
	if (read_line(path, line, sizeof(line)) == 0)
		active_scheduler(line, d->scheduler, sizeof(d->scheduler));
	snprintf(path, sizeof(path), "/sys/block/%s/queue/rotational", name);
	d->rotational = read_line(path, line, sizeof(line)) == 0 && atoi(line) != 0;
	read_model(name, d->model, sizeof(d->model));
}

/* The next '-' of a name LVM escaped that is not half of a "--": a
 * separator, or the end of s. */
static const char *lvm_separator(const char *s)
{
	for (; *s; s++) {
		if (*s != '-')
			continue;
		if (s[1] != '-')
			return s;
		s++;
	}
	return s;
}

/* s[0..n) with each "--" made one '-', into out. */
static void lvm_unescape(const char *s, size_t n, char *out, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < n && o + 1 < len; i++) {
		out[o++] = s[i];
		if (s[i] == '-' && i + 1 < n && s[i + 1] == '-')
			i++;
	}
	if (len)
		out[o] = '\0';
}

int disks_lvm_split(const char *name, char *vg, size_t vglen, char *lv, size_t lvlen)
{
	const char *sep = lvm_separator(name), *end;

	if (!*sep || sep == name || !sep[1])
		return -EINVAL;
	end = lvm_separator(sep + 1);
	if (end == sep + 1)
		return -EINVAL;
	lvm_unescape(name, (size_t)(sep - name), vg, vglen);
	lvm_unescape(sep + 1, (size_t)(end - sep - 1), lv, lvlen);
	return 0;
}

/* A sysfs identifier as a label value: printable ASCII, no blanks around
 * it (SCSI pads serials, NVMe pads its serial and wwid). */
static void clean_id(const char *in, size_t n, char *out, size_t len)
{
	size_t o = 0;

	while (n && (*in == ' ' || *in == '\t')) {
		in++;
		n--;
	}
	while (n &&
	       (in[n - 1] == ' ' || in[n - 1] == '\t' || in[n - 1] == '\n' || in[n - 1] == '\0'))
		n--;
	for (size_t i = 0; i < n && o + 1 < len; i++)
		if (in[i] >= 0x20 && in[i] < 0x7f)
			out[o++] = in[i];
	if (len)
		out[o] = '\0';
}

/* sysdir/file, one line, cleaned; "" if it is not there. */
static void read_id(const char *sysdir, const char *file, char *out, size_t len)
{
	char path[PATH_MAX], line[256];

	out[0] = '\0';
	snprintf(path, sizeof(path), "%s/%s", sysdir, file);
	if (!read_line(path, line, sizeof(line)))
		clean_id(line, strlen(line), out, len);
}

/*
 * A virtio disk's serial, as udev recorded it when the disk came
 * (udevdir/bMAJ:MIN, "E:ID_SERIAL=..."), only for disks that have one in
 * sysfs. Never read from sysfs here: the kernel keeps no copy of it, and
 * each read of /sys/block/vdX/serial sends the device a request (virtio_blk's
 * serial_show, VIRTIO_BLK_T_GET_ID), which block_rq_issue, and so users'
 * programs, would count as the disk's I/O. Without udev's record: "".
 */
static void read_udev_serial(const char *sysdir, const char *udevdir, char *out, size_t len)
{
	char path[PATH_MAX], dev[32], line[256];
	static const char key[] = "E:ID_SERIAL=";
	FILE *f;

	out[0] = '\0';
	snprintf(path, sizeof(path), "%s/serial", sysdir);
	if (access(path, F_OK))
		return;
	snprintf(path, sizeof(path), "%s/dev", sysdir);
	if (read_line(path, dev, sizeof(dev)))
		return;
	dev[strcspn(dev, "\n")] = '\0';
	snprintf(path, sizeof(path), "%s/b%s", udevdir, dev);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, sizeof(key) - 1)) {
			clean_id(line + sizeof(key) - 1, strlen(line + sizeof(key) - 1), out, len);
			break;
		}
	fclose(f);
}

/*
 * A SCSI disk's serial from its VPD page 0x80 (SPC-4 7.8.19: byte 1 the
 * page code, bytes 2-3 the length, the serial after them), which sysfs
 * hands over raw.
 */
static void read_vpd_serial(const char *sysdir, char *out, size_t len)
{
	char path[PATH_MAX];
	unsigned char page[256];
	size_t n, body;
	FILE *f;

	snprintf(path, sizeof(path), "%s/device/vpd_pg80", sysdir);
	f = fopen(path, "re");
	if (!f)
		return;
	n = fread(page, 1, sizeof(page), f);
	fclose(f);
	if (n < 4 || page[1] != 0x80)
		return;
	body = ((size_t)page[2] << 8) | page[3];
	if (body > n - 4)
		body = n - 4;
	clean_id((const char *)page + 4, body, out, len);
}

/* The md array named by a link in mddir (udev's /dev/md/NAME -> ../md127),
 * else the kernel's own md_NAME. */
static void read_md_name(const char *name, const char *mddir, char *out, size_t len)
{
	DIR *d = opendir(mddir);
	struct dirent *e;

	out[0] = '\0';
	while (d && !out[0] && (e = readdir(d))) {
		char path[PATH_MAX], target[PATH_MAX];
		const char *base;
		ssize_t n;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", mddir, e->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		base = strrchr(target, '/');
		if (!strcmp(base ? base + 1 : target, name))
			snprintf(out, len, "%s", e->d_name);
	}
	if (d)
		closedir(d);
	if (!out[0] && !strncmp(name, "md_", 3))
		snprintf(out, len, "%s", name + 3);
}

void disks_ids_read(const char *sysdir, const char *name, const char *mddir, const char *udevdir,
		    struct disk_ids *out)
{
	char path[PATH_MAX], uuid[160];

	memset(out, 0, sizeof(*out));
	read_id(sysdir, "dm/name", out->dm_name, sizeof(out->dm_name));
	read_id(sysdir, "dm/uuid", uuid, sizeof(uuid));
	if (out->dm_name[0] && !strncmp(uuid, "LVM-", 4) &&
	    disks_lvm_split(out->dm_name, out->lvm_vg, sizeof(out->lvm_vg), out->lvm_lv,
			    sizeof(out->lvm_lv)))
		out->lvm_vg[0] = out->lvm_lv[0] = '\0';
	snprintf(path, sizeof(path), "%s/md", sysdir);
	out->md = access(path, F_OK) == 0;
	if (out->md)
		read_md_name(name, mddir, out->md_name, sizeof(out->md_name));
	if (!strncmp(name, "nvme", 4))
		read_id(sysdir, "nsid", out->nvme_nsid, sizeof(out->nvme_nsid));
	/* virtio-blk has it on the disk, NVMe on its controller (device/). */
	read_udev_serial(sysdir, udevdir, out->serial, sizeof(out->serial));
	if (!out->serial[0])
		read_id(sysdir, "device/serial", out->serial, sizeof(out->serial));
	if (!out->serial[0])
		read_vpd_serial(sysdir, out->serial, sizeof(out->serial));
	read_id(sysdir, "wwid", out->wwid, sizeof(out->wwid));
	if (!out->wwid[0])
		read_id(sysdir, "device/wwid", out->wwid, sizeof(out->wwid));
}

void disks_ids_fill(struct disk_info *d)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/sys/block/%s", d->name);
	disks_ids_read(path, d->name, "/dev/md", "/run/udev/data", &d->ids);
}

int disks_whole(uint32_t dev, uint32_t *whole)
{
	char path[PATH_MAX], real[PATH_MAX];

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", disk_major(dev), disk_minor(dev));
	if (!realpath(path, real) || to_whole_dir(real))
		return -ENOENT;
	return read_dev(real, whole);
}

int disks_names(char *out, size_t len)
{
	DIR *dir = opendir("/sys/block");
	struct dirent *e;
	size_t at = 0;
	int rc = 0;

	if (!dir)
		return -errno;
	if (len)
		out[0] = '\0';
	while (!rc && (e = readdir(dir))) {
		int n;

		if (e->d_name[0] == '.')
			continue;
		n = snprintf(out + at, len - at, "%s%s", at ? " " : "", e->d_name);
		if (n < 0 || (size_t)n >= len - at)
			rc = -ENOSPC;
		else
			at += (size_t)n;
	}
	closedir(dir);
	return rc;
}

int disks_list(struct disk_info *out, size_t max)
{
	DIR *dir = opendir("/sys/block");
	struct dirent *e;
	size_t n = 0;

	if (!dir)
		return -errno;
	while ((e = readdir(dir)) && n < max) {
		char path[PATH_MAX];

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s", e->d_name);
		if (read_dev(path, &out[n].dev))
			continue;
		fill_info(&out[n], e->d_name);
		disks_stack(out[n].dev, &out[n].stack);
		memset(&out[n].ids, 0, sizeof(out[n].ids));
		n++;
	}
	closedir(dir);
	return (int)n;
}

/* Hardware queues of a blk-mq disk: its mq/N directories. */
static unsigned int hw_queues(const char *name)
{
	char path[PATH_MAX];
	struct dirent *e;
	unsigned int n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/sys/block/%s/mq", name);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((e = readdir(dir)))
		n += e->d_name[0] >= '0' && e->d_name[0] <= '9';
	closedir(dir);
	return n;
}

int disks_inflight(uint32_t *disks, uint64_t *inflight)
{
	DIR *dir = opendir("/sys/block");
	char path[PATH_MAX], line[32];
	struct dirent *e;

	*disks = 0;
	*inflight = 0;
	if (!dir)
		return -errno;
	while ((e = readdir(dir))) {
		unsigned int queues;

		if (e->d_name[0] == '.')
			continue;
		(*disks)++;
		queues = hw_queues(e->d_name);
		snprintf(path, sizeof(path), "/sys/block/%s/queue/nr_requests", e->d_name);
		if (queues && !read_line(path, line, sizeof(line)))
			*inflight += strtoull(line, NULL, 10) * queues;
	}
	closedir(dir);
	return 0;
}

int disks_list_new(struct disk_info **out)
{
	int n;

	*out = calloc(DISKS_LIST_MAX, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	n = disks_list(*out, DISKS_LIST_MAX);
	if (n < 0) {
		free(*out);
		*out = NULL;
	}
	return n;
}
