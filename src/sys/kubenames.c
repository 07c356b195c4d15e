// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* kubenames.c - Kubernetes names from the kubelet's log directories (kubenames.h). */
#define _GNU_SOURCE
#include "sys/kubenames.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "util/buf.h"

/* A pod: its UID (the sort key, first), its names, no container. */
struct kpod {
	char uid[64];
	struct kube_names n;
};

/* A container's log link: its id (the sort key, first) and its names. */
struct kctr {
	char id[72];
	struct kube_names n;
};

/* One directory and what its last read found. */
struct kdir {
	char path[4096]; /* "": not read */
	struct timespec mtime;
	bool have; /* its last stat found it */
	void *items;
	size_t n;
};

struct kubenames {
	struct kdir pods; /* struct kpod, sorted by uid */
	struct kdir ctrs; /* struct kctr, sorted by id */
};

/* A directory whose change time is this recent is reread even if it looks
 * unchanged: a second change within the file system's time-stamp tick
 * would leave the same time. */
#define KUBENAMES_SETTLE_S 2

struct kubenames *kubenames_new(const char *pods_dir, const char *containers_dir)
{
	struct kubenames *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	snprintf(k->pods.path, sizeof(k->pods.path), "%s", pods_dir ? pods_dir : "");
	snprintf(k->ctrs.path, sizeof(k->ctrs.path), "%s", containers_dir ? containers_dir : "");
	return k;
}

void kubenames_free(struct kubenames *k)
{
	if (!k)
		return;
	free(k->pods.items);
	free(k->ctrs.items);
	free(k);
}

/* Copies s[0..n) into out (size len) if it fits and is not empty. */
static bool take(const char *s, size_t n, char *out, size_t len)
{
	if (!n || n >= len)
		return false;
	memcpy(out, s, n);
	out[n] = '\0';
	return true;
}

/* "NAMESPACE_POD_UID": the kubelet's name for a pod's log directory.
 * Namespaces and pod names have no '_' (DNS names), so the split is sure. */
static bool parse_pod(const char *name, void *item)
{
	struct kpod *p = item;
	const char *a = strchr(name, '_'), *b = a ? strchr(a + 1, '_') : NULL;

	return b && !strchr(b + 1, '_') &&
	       take(name, (size_t)(a - name), p->n.ns, sizeof(p->n.ns)) &&
	       take(a + 1, (size_t)(b - a - 1), p->n.pod, sizeof(p->n.pod)) &&
	       take(b + 1, strlen(b + 1), p->uid, sizeof(p->uid));
}

/* "POD_NAMESPACE_CONTAINER-ID.log": the CRI log link of a container. A
 * container name may hold '-', its id (hex) not: the last '-' splits them. */
static bool parse_ctr(const char *name, void *item)
{
	struct kctr *c = item;
	size_t len = strlen(name);
	const char *a = strchr(name, '_'), *b = a ? strchr(a + 1, '_') : NULL, *dash;

	if (len < 4 || strcmp(name + len - 4, ".log") || !b || strchr(b + 1, '_'))
		return false;
	len -= 4; /* ".log" has no '_' or '-': b is before it */
	dash = memrchr(b + 1, '-', (size_t)(name + len - (b + 1)));
	if (!dash || !take(dash + 1, (size_t)(name + len - dash - 1), c->id, sizeof(c->id)))
		return false;
	for (const char *p = c->id; *p; p++)
		if (!isxdigit((unsigned char)*p))
			return false;
	return take(name, (size_t)(a - name), c->n.pod, sizeof(c->n.pod)) &&
	       take(a + 1, (size_t)(b - a - 1), c->n.ns, sizeof(c->n.ns)) &&
	       take(b + 1, (size_t)(dash - b - 1), c->n.container, sizeof(c->n.container));
}

/* Both item types begin with their key string. */
static int by_key(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

/*
 * The entries of dir that parse names, as items of size bytes, sorted by
 * key (each zeroed before parse, so that equal lists compare equal byte
 * for byte). 0 or -errno.
 */
static int read_items(const char *dir, bool (*parse)(const char *, void *), size_t size, void **out,
		      size_t *n)
{
	char *items = NULL;
	size_t cap = 0, count = 0;
	struct dirent *e;
	DIR *d = opendir(dir);

	if (!d)
		return -errno;
	for (errno = 0; (e = readdir(d)); errno = 0) {
		if (e->d_name[0] == '.')
			continue;
		if (array_make_room((void **)&items, &cap, count, size, 64))
			break;
		memset(items + count * size, 0, size);
		if (parse(e->d_name, items + count * size))
			count++;
	}
	if (e || errno) {
		int rc = e ? -ENOMEM : -errno;

		closedir(d);
		free(items);
		return rc;
	}
	closedir(d);
	if (count)
		qsort(items, count, size, by_key);
	*out = items;
	*n = count;
	return 0;
}

/* Whether dir must be read again, and its state now in *st (false: gone). */
static bool stale(const struct kdir *d, struct stat *st, bool *exists)
{
	struct timespec now;

	*exists = stat(d->path, st) == 0;
	if (!*exists)
		return d->have;
	clock_gettime(CLOCK_REALTIME, &now);
	return !d->have || st->st_mtim.tv_sec != d->mtime.tv_sec ||
	       st->st_mtim.tv_nsec != d->mtime.tv_nsec ||
	       now.tv_sec - st->st_mtim.tv_sec <= KUBENAMES_SETTLE_S;
}

/* Rereads d if it changed; whether its items did. A read that fails keeps
 * what the last one found. */
static bool refresh_dir(struct kdir *d, bool (*parse)(const char *, void *), size_t size)
{
	void *items = NULL;
	size_t n = 0;
	struct stat st;
	bool exists, changed;

	if (!d->path[0] || !stale(d, &st, &exists))
		return false;
	if (exists && read_items(d->path, parse, size, &items, &n))
		return false;
	changed = n != d->n || (n && memcmp(items, d->items, n * size));
	free(d->items);
	d->items = items;
	d->n = n;
	d->have = exists;
	d->mtime = exists ? st.st_mtim : (struct timespec){ 0 };
	return changed;
}

bool kubenames_refresh(struct kubenames *k)
{
	bool pods = refresh_dir(&k->pods, parse_pod, sizeof(struct kpod));
	bool ctrs = refresh_dir(&k->ctrs, parse_ctr, sizeof(struct kctr));

	return pods || ctrs;
}

/* The one container directory of pod p's log directory: "" if it has
 * none or several (or cannot be read). */
static void only_container(const struct kubenames *k, const struct kpod *p, char *out, size_t len)
{
	char dir[4096 + 512];
	struct dirent *e;
	int found = 0;
	DIR *d;

	out[0] = '\0';
	snprintf(dir, sizeof(dir), "%s/%s_%s_%s", k->pods.path, p->n.ns, p->n.pod, p->uid);
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d)) && found < 2) {
		if (e->d_name[0] == '.' || (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN))
			continue;
		if (!found++)
			snprintf(out, len, "%s", e->d_name);
	}
	closedir(d);
	if (found != 1)
		out[0] = '\0';
}

bool kubenames_find(const struct kubenames *k, const char *pod_uid, const char *container_id,
		    struct kube_names *out)
{
	const struct kpod *p = NULL;
	const struct kctr *c = NULL;

	memset(out, 0, sizeof(*out));
	if (k->pods.n)
		p = bsearch(pod_uid, k->pods.items, k->pods.n, sizeof(*p), by_key);
	if (!p)
		return false;
	*out = p->n;
	if (!container_id || !container_id[0])
		return true;
	if (k->ctrs.n)
		c = bsearch(container_id, k->ctrs.items, k->ctrs.n, sizeof(*c), by_key);
	/* A link names its pod too: a container id of another pod's is no
	 * name for this one's. */
	if (c && !strcmp(c->n.ns, p->n.ns) && !strcmp(c->n.pod, p->n.pod))
		snprintf(out->container, sizeof(out->container), "%s", c->n.container);
	else if (!k->ctrs.have)
		only_container(k, p, out->container, sizeof(out->container));
	return true;
}
