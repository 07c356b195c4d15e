// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* workload.c - cgroup ids to workload names (workload.h). */
#define _GNU_SOURCE
#include "workload.h"

#include <ftw.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cgroups.h"

/* systemd escapes unit-name characters as \xHH ("-" is \x2d). */
static void unescape(const char *in, size_t len, char *out, size_t outlen)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + 1 < outlen; i++) {
		unsigned int c;

		if (in[i] == '\\' && i + 3 < len && in[i + 1] == 'x' &&
		    sscanf(in + i + 2, "%2x", &c) == 1) {
			out[o++] = (char)c;
			i += 3;
		} else {
			out[o++] = in[i];
		}
	}
	out[o] = '\0';
}

static bool ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && !strncmp(s + len - n, suffix, n);
}

/* "machine-qemu-3-web01.scope" or "qemu-3-web01.libvirt-qemu" -> "web01". */
static bool vm_name(const char *c, char *name, size_t len)
{
	const char *p = strncmp(c, "machine-qemu-", 13) == 0 ? c + 13
			: strncmp(c, "qemu-", 5) == 0	       ? c + 5
							       : NULL;
	const char *end;

	if (!p)
		return false;
	end = strstr(p, ".scope");
	if (!end)
		end = strstr(p, ".libvirt-qemu");
	if (!end)
		return false;
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p != '-' || p + 1 >= end)
		return false;
	snprintf(name, len, "%.*s", (int)(end - p - 1), p + 1);
	return true;
}

/* "kubepods-burstable-pod12_34.slice" or "pod12-34" (under kubepods) -> "12-34". */
static bool pod_name(const char *c, bool under_kubepods, char *name, size_t len)
{
	const char *p = strstr(c, "-pod");
	size_t n;

	if (p && !strncmp(c, "kubepods", 8))
		p += 4;
	else if (under_kubepods && !strncmp(c, "pod", 3))
		p = c + 3;
	else
		return false;
	n = strcspn(p, ".");
	snprintf(name, len, "%.*s", (int)n, p);
	for (char *q = name; *q; q++)
		if (*q == '_')
			*q = '-';
	return true;
}

/* docker-ID.scope, cri-containerd-ID.scope, crio-ID.scope, docker/ID. */
static bool container_name(const char *c, const char *parent, char *name, size_t len)
{
	static const char *const prefixes[] = { "docker-", "cri-containerd-", "crio-" };
	const char *id = NULL;

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]) && !id; i++)
		if (!strncmp(c, prefixes[i], strlen(prefixes[i])) && strstr(c, ".scope"))
			id = c + strlen(prefixes[i]);
	if (!id && parent && !strcmp(parent, "docker") && strlen(c) >= 12)
		id = c;
	if (!id)
		return false;
	snprintf(name, len, "%.12s", id); /* the short id docker ps shows */
	return true;
}

/* Ranks: the most telling kind found anywhere on the path wins. */
enum rank { R_CGROUP, R_SCOPE, R_SERVICE, R_CONTAINER, R_POD, R_VM };

void workload_classify(const char *path, struct workload *out)
{
	static const char *const kinds[] = { "cgroup", "scope", "service", "container", "pod", "vm" };
	char comp[256], prev[256] = "", name[128];
	enum rank best = R_CGROUP;
	bool kubepods = false;
	const char *p = path;

	memset(out, 0, sizeof(*out));
	snprintf(out->path, sizeof(out->path), "%s", path[0] ? path : "/");
	snprintf(out->name, sizeof(out->name), "%s", out->path);
	while (*p) {
		size_t n;

		p += strspn(p, "/");
		n = strcspn(p, "/");
		if (!n)
			break;
		unescape(p, n, comp, sizeof(comp));
		kubepods |= !strncmp(comp, "kubepods", 8);
		if (vm_name(comp, name, sizeof(name)) && best < R_VM)
			best = R_VM;
		else if (pod_name(comp, kubepods, name, sizeof(name)) && best < R_POD)
			best = R_POD;
		else if (container_name(comp, prev, name, sizeof(name)) && best < R_CONTAINER)
			best = R_CONTAINER;
		else if (ends_with(comp, strlen(comp), ".service") && best < R_SERVICE) {
			snprintf(name, sizeof(name), "%.*s", (int)(strlen(comp) - 8), comp);
			best = R_SERVICE;
		} else if (ends_with(comp, strlen(comp), ".scope") && best < R_SCOPE) {
			snprintf(name, sizeof(name), "%.*s", (int)(strlen(comp) - 6), comp);
			best = R_SCOPE;
		} else {
			snprintf(prev, sizeof(prev), "%s", comp);
			p += n;
			continue;
		}
		snprintf(out->name, sizeof(out->name), "%s", name);
		snprintf(prev, sizeof(prev), "%s", comp);
		p += n;
	}
	snprintf(out->kind, sizeof(out->kind), "%s", kinds[best]);
}

struct entry {
	uint64_t id; /* 0: empty */
	struct workload w;
};

struct workload_cache {
	struct entry *e;
	size_t cap, n;
	time_t walked;
	char root[4096];
	struct workload unknown, unattributed;
};

/* The cache being filled by the nftw callback (nftw has no user pointer). */
static struct workload_cache *filling;

static struct entry *slot_for(struct workload_cache *c, uint64_t id)
{
	size_t i = (size_t)(id * 0x9e3779b97f4a7c15ULL) & (c->cap - 1);

	while (c->e[i].id && c->e[i].id != id)
		i = (i + 1) & (c->cap - 1);
	return &c->e[i];
}

static int grow(struct workload_cache *c)
{
	struct entry *old = c->e;
	size_t oldcap = c->cap;

	c->cap = oldcap ? oldcap * 2 : 256;
	c->e = calloc(c->cap, sizeof(*c->e));
	if (!c->e) {
		c->e = old;
		c->cap = oldcap;
		return -1;
	}
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].id)
			*slot_for(c, old[i].id) = old[i];
	free(old);
	return 0;
}

static void remember(struct workload_cache *c, uint64_t id, const char *rel)
{
	struct entry *e;

	if ((c->n + 1) * 2 > c->cap && grow(c))
		return;
	e = slot_for(c, id);
	if (e->id)
		return; /* known: keep its name, even if the path is reused */
	e->id = id;
	workload_classify(rel, &e->w);
	c->n++;
}

static int on_dir(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)f;
	if (flag == FTW_D)
		remember(filling, (uint64_t)st->st_ino, path + strlen(filling->root));
	return 0;
}

static void walk(struct workload_cache *c)
{
	if (!c->root[0] || time(NULL) == c->walked)
		return;
	c->walked = time(NULL);
	filling = c;
	nftw(c->root, on_dir, 16, FTW_PHYS | FTW_MOUNT);
	filling = NULL;
}

struct workload_cache *workload_cache_new(void)
{
	struct workload_cache *c = calloc(1, sizeof(*c));
	const char *root = cgroups_io_root();

	if (!c || grow(c)) {
		free(c);
		return NULL;
	}
	snprintf(c->root, sizeof(c->root), "%s", root ? root : "");
	snprintf(c->unattributed.kind, sizeof(c->unattributed.kind), "none");
	snprintf(c->unattributed.name, sizeof(c->unattributed.name), "unattributed");
	walk(c);
	return c;
}

void workload_cache_free(struct workload_cache *c)
{
	if (!c)
		return;
	free(c->e);
	free(c);
}

const struct workload *workload_lookup(struct workload_cache *c, uint64_t id)
{
	struct entry *e;

	if (!id)
		return &c->unattributed;
	e = slot_for(c, id);
	if (!e->id) {
		walk(c);
		e = slot_for(c, id);
	}
	if (e->id)
		return &e->w;
	snprintf(c->unknown.kind, sizeof(c->unknown.kind), "cgroup");
	snprintf(c->unknown.name, sizeof(c->unknown.name), "cgroup-%" PRIu64, id);
	snprintf(c->unknown.path, sizeof(c->unknown.path), "?");
	return &c->unknown;
}
