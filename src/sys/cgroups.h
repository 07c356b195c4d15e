/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * cgroups.h - cgroup paths to the ids the kernel puts on bios, and back.
 *
 * A bio is charged to a block cgroup (blkcg). On a pure cgroup v2 host that
 * is a v2 cgroup; where the blkio controller is bound to a v1 hierarchy it is
 * a cgroup of that hierarchy. Either way its id is the inode number of the
 * cgroup's directory (kernfs), which is what stat() reports.
 */
#ifndef IOLAT_CGROUPS_H
#define IOLAT_CGROUPS_H

#include <stddef.h>
#include <stdint.h>

struct cgroup_ref {
	uint64_t id;
	int level;	/* 0 for a hierarchy's root */
	char path[512]; /* the directory resolved */
};

/*
 * Resolves a cgroup given as a directory under a cgroup mount, or as a path
 * relative to the hierarchy that holds the io (blkio) controller.
 * Returns 0, -ENOENT (no such cgroup), -ENOTDIR (not a cgroup directory) or
 * -EXDEV (a cgroup of a hierarchy without the io controller: no bio carries it).
 */
int cgroups_resolve(const char *arg, struct cgroup_ref *out);

/* The mount point of the hierarchy the io controller is on, into out:
 * 0, or -ENOENT (and "") when none is mounted. */
int cgroups_io_root(char *out, size_t len);

/*
 * Calls fn for every cgroup directory under root (root included), with its
 * id and its path relative to root ("" for root itself). Stays on root's
 * file system and follows no links. Returns nftw's result: 0, or -1 if
 * root cannot be read. Reentrant across threads, not within fn.
 */
typedef void (*cgroups_walk_fn)(void *ctx, uint64_t id, const char *rel);
int cgroups_walk(const char *root, cgroups_walk_fn fn, void *ctx);

#endif
