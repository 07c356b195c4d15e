// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* pin.c - a collector's programs and maps kept in bpffs (pin.h). */
#include "core/pin.h"

#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <linux/magic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "iolat.h"

int pin_dir_of(const char *name, char *out, size_t len)
{
	size_t n = strlen(name);

	if (!n || n >= 64)
		return -EINVAL;
	for (const char *p = name; *p; p++)
		if (!(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') &&
		    !(*p >= '0' && *p <= '9') && *p != '-' && *p != '_')
			return -EINVAL;
	if ((size_t)snprintf(out, len, "%s/%s", PIN_ROOT, name) >= len)
		return -ENAMETOOLONG;
	return 0;
}

static bool is_bpffs(const char *path)
{
	struct statfs fs;

	return !statfs(path, &fs) && fs.f_type == BPF_FS_MAGIC;
}

int pin_state_dir(const char *name, bool make, char *out, size_t len)
{
	if ((size_t)snprintf(out, len, "%s/%s", PIN_STATE_ROOT, name) >= len)
		return -ENAMETOOLONG;
	if (make && ((mkdir(PIN_STATE_ROOT, 0700) && errno != EEXIST) ||
		     (mkdir(out, 0700) && errno != EEXIST)))
		return -errno;
	return 0;
}

int pin_dir_make(const char *dir, char *err, size_t errlen)
{
	/* Systemd mounts it at boot; where nothing did, iolat does, as
	 * bpftool does before it pins. */
	if (!is_bpffs("/sys/fs/bpf") && mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700")) {
		snprintf(err, errlen,
			 "/sys/fs/bpf is not a BPF file system and mounting one failed (%s): "
			 "mount one there (mount -t bpf bpf /sys/fs/bpf) to keep the collector "
			 "across restarts",
			 strerror(errno));
		return -ENOTSUP;
	}
	if ((mkdir(PIN_ROOT, 0700) && errno != EEXIST) || (mkdir(dir, 0700) && errno != EEXIST)) {
		int rc = -errno;

		snprintf(err, errlen, "cannot make %s: %s", dir, strerror(-rc));
		return rc;
	}
	return 0;
}

void pin_path(const char *dir, const char *name, char *out, size_t len)
{
	size_t d = (size_t)snprintf(out, len, "%s/", dir);

	for (const char *p = name; *p && d + 1 < len; p++)
		out[d++] = *p == '.' ? '_' : *p;
	if (d < len)
		out[d] = '\0';
}

uint64_t pin_hash(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	if (!h)
		h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* The control map's fd, or -errno. */
static int control_fd(const char *dir)
{
	char path[256];
	int fd;

	pin_path(dir, PIN_CONTROL, path, sizeof(path));
	fd = bpf_obj_get(path);
	return fd < 0 ? -errno : fd;
}

int pin_control_read(const char *dir, struct pin_control *out)
{
	struct bpf_map_info info = { 0 };
	__u32 info_len = sizeof(info), key = 0;
	unsigned char value[1024];
	int fd = control_fd(dir), rc = 0;

	if (fd < 0)
		return fd;
	memset(out, 0, sizeof(*out));
	if (bpf_obj_get_info_by_fd(fd, &info, &info_len)) {
		rc = -errno;
	} else if (info.type != BPF_MAP_TYPE_ARRAY || info.key_size != sizeof(key) ||
		   info.value_size > sizeof(value) || info.value_size < 8) {
		rc = -EPROTO;
	} else if (bpf_map_lookup_elem(fd, &key, value)) {
		rc = -errno;
	} else {
		/* An older iolat's value is shorter, a newer one's longer: the
		 * fields both know. */
		memcpy(out, value, info.value_size < sizeof(*out) ? info.value_size : sizeof(*out));
		out->version[sizeof(out->version) - 1] = '\0';
		if (out->magic != PIN_MAGIC)
			rc = -EPROTO;
	}
	close(fd);
	return rc;
}

int pin_control_write(const char *dir, const struct pin_control *c)
{
	char path[256];
	__u32 key = 0;
	int fd = control_fd(dir), rc = 0;

	if (fd == -ENOENT) {
		fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "iolat_control", sizeof(key), sizeof(*c), 1,
				    NULL);
		if (fd < 0)
			return -errno;
		pin_path(dir, PIN_CONTROL, path, sizeof(path));
		if (bpf_obj_pin(fd, path))
			rc = -errno;
	}
	if (fd < 0)
		return fd;
	if (!rc && bpf_map_update_elem(fd, &key, c, BPF_ANY))
		rc = -errno;
	close(fd);
	return rc;
}

/* Removes dir's files (not subdirectories) and dir. */
static int remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[512];
	int rc = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (unlink(path) && !rc)
			rc = -errno;
	}
	closedir(d);
	if (rmdir(dir) && !rc)
		rc = -errno;
	return rc;
}

int pin_remove(const char *dir)
{
	return remove_dir(dir);
}

int pin_state_remove(const char *name)
{
	char dir[256];
	int rc = pin_state_dir(name, false, dir, sizeof(dir));

	return rc ? rc : remove_dir(dir);
}

int pin_instance_remove(const char *name)
{
	char dir[256];
	int rc = pin_dir_of(name, dir, sizeof(dir));

	if (!rc)
		rc = pin_remove(dir);
	return rc ? rc : pin_state_remove(name);
}

int pin_lease_read(const char *dir, uint64_t *until_ns)
{
	struct iolat_window w;
	char path[512];
	uint32_t key = 0;
	int fd, rc = 0;

	pin_path(dir, PIN_WINDOW, path, sizeof(path));
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	if (bpf_map_lookup_elem(fd, &key, &w))
		rc = -errno;
	close(fd);
	if (!rc)
		*until_ns = w.until_ns;
	return rc;
}

/* Counts one instance directory's pins and reads its control value. */
static void look_at(const char *dir, struct pin_instance *in)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	in->has_control = !pin_control_read(dir, &in->control);
	in->has_lease = !pin_lease_read(dir, &in->lease_ns);
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (!strncmp(e->d_name, "link_", 5))
			in->links++;
		else
			in->maps++;
	}
	if (d)
		closedir(d);
}

int pin_list(struct pin_instance *out, int max)
{
	DIR *d = opendir(PIN_ROOT);
	struct dirent *e;
	int n = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d))) {
		char dir[256];

		if (e->d_name[0] == '.' || pin_dir_of(e->d_name, dir, sizeof(dir)))
			continue;
		if (n < max) {
			memset(&out[n], 0, sizeof(out[n]));
			snprintf(out[n].name, sizeof(out[n].name), "%s", e->d_name);
			look_at(dir, &out[n]);
		}
		n++;
	}
	closedir(d);
	return n;
}
