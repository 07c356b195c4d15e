/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * kubenames.h - the Kubernetes names of a pod UID and a container id, from
 * what a node has without API credentials: the kubelet's pod log
 * directories (/var/log/pods/NAMESPACE_POD_UID/CONTAINER/) give a pod UID
 * its namespace and name; the CRI log links
 * (/var/log/containers/POD_NAMESPACE_CONTAINER-ID.log) give a container id
 * its container name. Both read-only; either may be missing.
 *
 * Not thread-safe.
 */
#ifndef IOLAT_KUBENAMES_H
#define IOLAT_KUBENAMES_H

#include <stdbool.h>

/* Kubernetes' own limits: a namespace and a container name are DNS labels
 * (63), a pod name a DNS subdomain (253). */
struct kube_names {
	char ns[64];
	char pod[256];
	char container[64]; /* "": not known */
};

struct kubenames;

/*
 * Reads nothing yet. pods_dir: the kubelet's pod log directory
 * (/var/log/pods); containers_dir: the CRI log links (/var/log/containers);
 * "" for either: not read. NULL when out of memory.
 */
struct kubenames *kubenames_new(const char *pods_dir, const char *containers_dir);
void kubenames_free(struct kubenames *k);

/*
 * Rereads a directory whose modification time changed since its last read
 * (a pod or a container's link came or went), or changed so recently that
 * one more change could share its time stamp; a directory that is gone
 * names nothing. Whether any name changed.
 */
bool kubenames_refresh(struct kubenames *k);

/*
 * The names of pod pod_uid (as the kubelet writes it, with dashes) and of
 * its container container_id ("" or NULL: none). False, out emptied, if
 * the pod is not known. The container is named by its CRI log link; when
 * the links' directory cannot be read, a pod with one container directory
 * names its only container; otherwise its name stays "".
 */
bool kubenames_find(const struct kubenames *k, const char *pod_uid, const char *container_id,
		    struct kube_names *out);

#endif
