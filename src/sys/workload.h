/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * workload.h - from the cgroup id on a bio to a name people know.
 *
 * A cgroup id resolves to its path in the hierarchy the io controller is on
 * (cgroups.h); built-in rules then turn the path into a workload kind and
 * name: libvirt/qemu VMs, Kubernetes pods (containerd and CRI-O), Docker
 * containers, systemd services and scopes. Without a rule: the path.
 */
#ifndef IOLAT_WORKLOAD_H
#define IOLAT_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sys/kubenames.h"

/* A Kubernetes pod's cgroup: the ids its path carries, and the names the
 * node's log directories give them (kubenames.h). */
struct workload_kube {
	char pod_uid[48];	 /* "": not a pod's cgroup */
	char container_id[72];	 /* "": the pod's own cgroup, or not a container's */
	struct kube_names names; /* all "": not known (yet) */
	uint64_t gen;		 /* the cache's names generation they are of */
};

struct workload {
	char kind[16]; /* "vm", "pod", "container", "service", "scope", "cgroup" */
	char name[128];
	char path[512]; /* relative to the hierarchy's root, "/" for the root */
	struct workload_kube kube;
};

/*
 * Names a cgroup path (relative to its hierarchy's root). Pure: no I/O.
 * Examples: "/machine.slice/machine-qemu\x2d3\x2dweb01.scope" -> vm web01;
 * "/system.slice/nginx.service" -> service nginx. A Kubernetes pod's cgroup
 * (or one of its containers') is pod UID, with the pod UID and container id
 * noted in out->kube for a cache to name (containerd's
 * cri-containerd-ID.scope, CRI-O's crio-ID.scope under a pod's slice, or a
 * bare ID or crio-ID under cgroupfs' /kubepods/QOS/podUID).
 */
void workload_classify(const char *path, struct workload *out);

struct workload_cache;

/* A cache of id -> workload over the io hierarchy; NULL on failure. */
struct workload_cache *workload_cache_new(void);

/* The same over the directory tree at root, which stands in for the io
 * hierarchy: a directory's inode number is its cgroup id (tests). */
struct workload_cache *workload_cache_new_at(const char *root);
void workload_cache_free(struct workload_cache *c);

/*
 * The workload of cgroup id (0: I/O the kernel charged to no cgroup).
 * Unknown ids trigger one walk of the hierarchy (at most once a second);
 * an id still unknown (a cgroup already gone) is named by its number.
 * A cgroup seen once keeps its name after it is removed.
 */
const struct workload *workload_lookup(struct workload_cache *c, uint64_t id);

/*
 * Keyed by process (IOLAT_KEY_PROCESS ids), names come from fn: the command
 * name the kernel noted for pid; 0 or -errno. Without it, from /proc.
 */
typedef int (*workload_comm_fn)(void *ctx, uint32_t pid, char *out, size_t len);
void workload_cache_set_comm(struct workload_cache *c, workload_comm_fn fn, void *ctx);

/*
 * Kubernetes names from k (kubenames.h), which the cache takes (NULL:
 * none, pods keep their UIDs). workload_cache_new reads the kubelet's
 * WORKLOAD_KUBE_PODS_DIR and WORKLOAD_KUBE_CONTAINERS_DIR; workload_cache_new_at
 * nothing. A pod's cgroup whose pod k names is "pod NAMESPACE/POD", or
 * "container NAMESPACE/POD/CONTAINER" when its container is named too; else,
 * as before, "pod UID".
 */
#define WORKLOAD_KUBE_PODS_DIR "/var/log/pods"
#define WORKLOAD_KUBE_CONTAINERS_DIR "/var/log/containers"
void workload_cache_set_kube(struct workload_cache *c, struct kubenames *k);

/*
 * Rereads the Kubernetes directories if they changed (kubenames_refresh):
 * a lookup after it names pods by what they say now. The names' generation,
 * which changes when a name did. (Walks refresh them too.)
 */
uint64_t workload_cache_refresh(struct workload_cache *c);

/* A cgroup a lookup could not name (never seen in a walk: already gone). */
bool workload_is_unknown(const struct workload *w);

/* Whether cgroup id still exists (its path is there with the same id). */
bool workload_alive(struct workload_cache *c, uint64_t id);

/*
 * The same for ids[0..n), into alive[0..n): cgroups that share a parent
 * directory are answered by one read of it (a child's entry carries its
 * cgroup id as inode number), not by a path lookup each, so a pass over
 * 500 idle services of one slice reads one directory instead of making 500
 * stat calls.
 */
void workload_alive_many(struct workload_cache *c, const uint64_t *ids, size_t n, bool *alive);

/* Drops what the cache knows of id (its cgroup is gone and accounted for). */
void workload_forget(struct workload_cache *c, uint64_t id);

/*
 * User rules, tried before the built-in ones: the first whose POSIX
 * extended regexp matches the cgroup path (relative to the hierarchy's
 * root) names it; \1-\9 in name are the match's groups ("" = the path).
 */
#define WORKLOAD_MAX_RULES 32
struct workload_rule {
	char match[256];
	char kind[16];
	char name[128];
};

/* 0, or -EINVAL with what is wrong in err. */
int workload_rule_check(const struct workload_rule *r, char *err, size_t len);

/* Replaces the rules (names already given are recomputed). 0 or -EINVAL. */
int workload_cache_set_rules(struct workload_cache *c, const struct workload_rule *r, size_t n,
			     char *err, size_t len);

#endif
