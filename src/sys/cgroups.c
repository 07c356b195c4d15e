// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* cgroups.c - cgroup paths and the ids on bios (cgroups.h). */
#define _GNU_SOURCE
#include "sys/cgroups.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct mount {
	char dir[PATH_MAX];
	bool v2;
	bool blkio; /* v1 hierarchy with the blkio controller */
};

/* Walks /proc/self/mountinfo for cgroup mounts; fills up to max. */
static int cgroup_mounts(struct mount *m, int max)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	int n = 0;

	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		char dir[PATH_MAX], *sep = strstr(line, " - "), fstype[32], opts[1024] = "";

		if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", dir) != 1)
			continue;
		if (sscanf(sep + 3, "%31s %*s %1023s", fstype, opts) < 1)
			continue;
		if (strcmp(fstype, "cgroup2") && strcmp(fstype, "cgroup"))
			continue;
		snprintf(m[n].dir, sizeof(m[n].dir), "%s", dir);
		m[n].v2 = strcmp(fstype, "cgroup2") == 0;
		m[n].blkio = !m[n].v2 && strstr(opts, "blkio") != NULL;
		n++;
	}
	fclose(f);
	return n;
}

int cgroups_io_root(char *out, size_t len)
{
	struct mount m[32];
	int n = cgroup_mounts(m, 32);

	out[0] = '\0';
	for (int i = 0; i < n; i++)
		if (m[i].blkio)
			snprintf(out, len, "%s", m[i].dir);
	for (int i = 0; i < n && !out[0]; i++)
		if (m[i].v2)
			snprintf(out, len, "%s", m[i].dir);
	return out[0] ? 0 : -ENOENT;
}

/* The cgroup mount that holds path (longest prefix), or NULL. */
static const char *mount_of(const char *path, struct mount *m, int n)
{
	const char *best = NULL;
	size_t bestlen = 0;

	for (int i = 0; i < n; i++) {
		size_t len = strlen(m[i].dir);

		if (strncmp(path, m[i].dir, len) == 0 && (path[len] == '/' || !path[len]) &&
		    len > bestlen) {
			best = m[i].dir;
			bestlen = len;
		}
	}
	return best;
}

static int depth_below(const char *path, const char *root)
{
	int level = 0;

	for (const char *p = path + strlen(root); *p; p++)
		if (*p == '/' && p[1] && p[1] != '/')
			level++;
	return level;
}

int cgroups_resolve(const char *arg, struct cgroup_ref *out)
{
	struct mount m[32];
	int n = cgroup_mounts(m, 32);
	char joined[PATH_MAX], real[PATH_MAX], io_root[PATH_MAX];
	const char *root, *io = cgroups_io_root(io_root, sizeof(io_root)) ? NULL : io_root;
	struct stat st;

	if (!realpath(arg, real) || !mount_of(real, m, n)) {
		/* Not a path under a cgroup mount: relative to the io hierarchy. */
		if (!io)
			return -ENOENT;
		snprintf(joined, sizeof(joined), "%s/%s", io, arg[0] == '/' ? arg + 1 : arg);
		if (!realpath(joined, real))
			return -ENOENT;
	}
	root = mount_of(real, m, n);
	if (!root || stat(real, &st) || !S_ISDIR(st.st_mode))
		return -ENOTDIR;
	/* Bios carry cgroups of the io controller's hierarchy only. */
	if (io && strcmp(root, io))
		return -EXDEV;
	out->id = (uint64_t)st.st_ino;
	out->level = depth_below(real, root);
	snprintf(out->path, sizeof(out->path), "%s", real);
	return 0;
}

/* nftw has no user pointer: the walk in progress, one per thread. */
static __thread struct {
	size_t rootlen;
	cgroups_walk_fn fn;
	void *ctx;
} walking;

static int on_dir(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)f;
	if (flag == FTW_D)
		walking.fn(walking.ctx, (uint64_t)st->st_ino, path + walking.rootlen);
	return 0;
}

int cgroups_walk(const char *root, cgroups_walk_fn fn, void *ctx)
{
	int rc;

	walking.rootlen = strlen(root);
	walking.fn = fn;
	walking.ctx = ctx;
	rc = nftw(root, on_dir, 16, FTW_PHYS | FTW_MOUNT);
	walking.fn = NULL;
	return rc;
}
