// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* workload.c - cgroup ids to workload names (workload.h). */
#define _GNU_SOURCE
#include "sys/workload.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "iolat.h"
#include "sys/cgroups.h"
#include "util/buf.h"
#include "util/idmap.h"
#include "util/regex_guard.h"
#include <linux/types.h>

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
			: strncmp(c, "qemu-", 5) == 0	     ? c + 5
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

/*
 * A container's cgroup right under a pod's: cri-containerd-ID.scope,
 * crio-ID.scope, docker-ID.scope (the systemd cgroup driver), ID or
 * crio-ID (cgroupfs). CRI-O's crio-conmon-ID.scope is its monitor, not
 * the container: no id.
 */
static void kube_container_id(const char *c, char *id, size_t len)
{
	static const char *const prefixes[] = { "cri-containerd-", "crio-", "docker-" };
	size_t n;

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(c, prefixes[i], strlen(prefixes[i]))) {
			c += strlen(prefixes[i]);
			break;
		}
	n = strcspn(c, ".");
	if ((c[n] && strcmp(c + n, ".scope")) || n < 12 || n >= len)
		return;
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)c[i]))
			return;
	snprintf(id, len, "%.*s", (int)n, c);
}

/* Ranks: the most telling kind found anywhere on the path wins. */
enum rank { R_CGROUP, R_SCOPE, R_SERVICE, R_CONTAINER, R_POD, R_VM };

void workload_classify(const char *path, struct workload *out)
{
	static const char *const kinds[] = {
		"cgroup", "scope", "service", "container", "pod", "vm"
	};
	char comp[256], prev[256] = "", name[128];
	enum rank best = R_CGROUP;
	bool kubepods = false, in_pod = false;
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
		if (in_pod) /* the component right under a pod's */
			kube_container_id(comp, out->kube.container_id,
					  sizeof(out->kube.container_id));
		in_pod = false;
		if (vm_name(comp, name, sizeof(name)) && best < R_VM) {
			best = R_VM;
		} else if (pod_name(comp, kubepods, name, sizeof(name)) && best < R_POD) {
			best = R_POD;
			in_pod = true;
			snprintf(out->kube.pod_uid, sizeof(out->kube.pod_uid), "%s", name);
		} else if (container_name(comp, prev, name, sizeof(name)) && best < R_CONTAINER)
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
	if (best != R_POD) /* a VM in a pod is a VM */
		memset(&out->kube, 0, sizeof(out->kube));
}

struct rule {
	regex_t re;
	struct workload_rule spec;
};

struct workload_cache {
	struct idmap names; /* cgroup id -> struct workload (owned) */
	time_t walked;
	char root[4096];
	struct workload unknown, unattributed;
	struct rule rules[WORKLOAD_MAX_RULES];
	size_t nrules;
	workload_comm_fn comm_of; /* names processes (keyed by process) */
	void *comm_ctx;
	struct kubenames *kube; /* NULL: pods keep their UIDs */
	uint64_t kube_gen;	/* changes when kube's names do */
};

/* Expands \0-\9 in a rule's name template from the match groups. */
static void expand(const char *tmpl, const char *path, const regmatch_t *m, char *out, size_t len)
{
	size_t o = 0;

	for (const char *t = tmpl; *t && o + 1 < len; t++) {
		if (t[0] == '\\' && t[1] >= '0' && t[1] <= '9') {
			const regmatch_t *g = &m[t[1] - '0'];

			for (regoff_t i = g->rm_so; g->rm_so >= 0 && i < g->rm_eo && o + 1 < len;
			     i++)
				out[o++] = path[i];
			t++;
		} else {
			out[o++] = *t;
		}
	}
	out[o] = '\0';
}

/* The first user rule matching path names it; false if none does. */
static bool apply_rules(const struct workload_cache *c, const char *path, struct workload *out)
{
	regmatch_t m[10];

	for (size_t i = 0; i < c->nrules; i++) {
		if (regexec(&c->rules[i].re, path, 10, m, 0))
			continue;
		memset(out, 0, sizeof(*out));
		snprintf(out->path, sizeof(out->path), "%s", path[0] ? path : "/");
		snprintf(out->kind, sizeof(out->kind), "%s", c->rules[i].spec.kind);
		expand(c->rules[i].spec.name, path, m, out->name, sizeof(out->name));
		if (!out->name[0])
			snprintf(out->name, sizeof(out->name), "%s", out->path);
		return true;
	}
	return false;
}

int workload_rule_check(const struct workload_rule *r, char *err, size_t len)
{
	regex_t re;
	int rc;

	/* Before regcomp, which some patterns make take gigabytes or minutes. */
	if (regex_guard_nodes(r->match) > REGEX_GUARD_MAX_NODES) {
		snprintf(err, len,
			 "regular expression \"%s\" is too complex (nested or large "
			 "repetitions): simplify it",
			 r->match);
		return -EINVAL;
	}
	rc = regcomp(&re, r->match, REG_EXTENDED);
	if (rc) {
		char why[128];

		regerror(rc, &re, why, sizeof(why));
		snprintf(err, len, "bad regular expression \"%s\": %s", r->match, why);
		return -EINVAL;
	}
	if (re.re_nsub > 9) {
		snprintf(err, len, "regular expression \"%s\" has more than 9 groups", r->match);
		regfree(&re);
		return -EINVAL;
	}
	regfree(&re);
	if (!r->kind[0]) {
		snprintf(err, len, "rule \"%s\" has no kind", r->match);
		return -EINVAL;
	}
	return 0;
}

static void clear_rules(struct workload_cache *c)
{
	for (size_t i = 0; i < c->nrules; i++)
		regfree(&c->rules[i].re);
	c->nrules = 0;
}

static void remember(void *ctx, uint64_t id, const char *rel)
{
	struct workload_cache *c = ctx;
	struct workload *w;

	if (idmap_get(&c->names, id))
		return; /* known: keep its name, even if the path is reused */
	w = malloc(sizeof(*w));
	if (!w)
		return;
	if (!apply_rules(c, rel, w))
		workload_classify(rel, w);
	if (idmap_put(&c->names, id, w))
		free(w);
}

static void walk(struct workload_cache *c)
{
	if (!c->root[0] || time(NULL) == c->walked)
		return;
	c->walked = time(NULL);
	cgroups_walk(c->root, remember, c);
	workload_cache_refresh(c); /* new cgroups may be new pods' */
}

uint64_t workload_cache_refresh(struct workload_cache *c)
{
	if (c->kube && kubenames_refresh(c->kube))
		c->kube_gen++;
	return c->kube_gen;
}

void workload_cache_set_kube(struct workload_cache *c, struct kubenames *k)
{
	if (k)
		kubenames_refresh(k);
	kubenames_free(c->kube);
	c->kube = k;
	c->kube_gen++; /* every pod is named again, from k */
}

/* "A/B" or "A/B/C" into out, cut to its size. */
static void join_names(char *out, size_t len, const char *a, const char *b, const char *c)
{
	if (snprintf(out, len, "%s/%s%s%s", a, b, c[0] ? "/" : "", c) >= (int)len)
		out[len - 1] = '\0'; /* cut: a label set keeps the whole names apart */
}

/* Names a pod's cgroup by what the Kubernetes directories say now. */
static void kube_name(const struct workload_cache *c, struct workload *w)
{
	struct workload_kube *k = &w->kube;

	if (!k->pod_uid[0] || k->gen == c->kube_gen)
		return;
	k->gen = c->kube_gen;
	if (!c->kube || !kubenames_find(c->kube, k->pod_uid, k->container_id, &k->names)) {
		memset(&k->names, 0, sizeof(k->names));
		snprintf(w->kind, sizeof(w->kind), "pod");
		snprintf(w->name, sizeof(w->name), "%s", k->pod_uid);
		return;
	}
	snprintf(w->kind, sizeof(w->kind), "%s", k->names.container[0] ? "container" : "pod");
	join_names(w->name, sizeof(w->name), k->names.ns, k->names.pod, k->names.container);
}

struct workload_cache *workload_cache_new_at(const char *root)
{
	struct workload_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	snprintf(c->root, sizeof(c->root), "%s", root); /* "": nothing to walk */
	snprintf(c->unattributed.kind, sizeof(c->unattributed.kind), "none");
	snprintf(c->unattributed.name, sizeof(c->unattributed.name), "unattributed");
	c->kube_gen = 1; /* a workload's names are of generation 0: none yet */
	walk(c);
	return c;
}

struct workload_cache *workload_cache_new(void)
{
	char root[4096];
	struct workload_cache *c;
	struct kubenames *k;

	cgroups_io_root(root, sizeof(root)); /* "" if none */
	c = workload_cache_new_at(root);
	k = c ? kubenames_new(WORKLOAD_KUBE_PODS_DIR, WORKLOAD_KUBE_CONTAINERS_DIR) : NULL;
	if (c && !k) {
		workload_cache_free(c);
		return NULL;
	}
	if (c)
		workload_cache_set_kube(c, k);
	return c;
}

void workload_cache_free(struct workload_cache *c)
{
	if (!c)
		return;
	clear_rules(c);
	idmap_free_all(&c->names);
	kubenames_free(c->kube);
	free(c);
}

int workload_cache_set_rules(struct workload_cache *c, const struct workload_rule *r, size_t n,
			     char *err, size_t len)
{
	int rc;

	if (n > WORKLOAD_MAX_RULES) {
		snprintf(err, len, "more than %d workload rules", WORKLOAD_MAX_RULES);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		rc = workload_rule_check(&r[i], err, len);
		if (rc)
			return rc;
	}
	clear_rules(c);
	for (size_t i = 0; i < n; i++) {
		regcomp(&c->rules[i].re, r[i].match, REG_EXTENDED);
		c->rules[i].spec = r[i];
		c->nrules++;
	}
	/* Names follow the new rules: start over (the next lookup walks). */
	idmap_free_all(&c->names);
	c->walked = 0;
	return 0;
}

void workload_forget(struct workload_cache *c, uint64_t id)
{
	free(idmap_del(&c->names, id));
}

/* What the cache knows of cgroup id, for a look at its path; NULL: none. */
static const struct workload *known(struct workload_cache *c, uint64_t id)
{
	const struct workload *w = idmap_get(&c->names, id);

	if (!w) {
		walk(c); /* names dropped by new rules come back from the hierarchy */
		w = idmap_get(&c->names, id);
	}
	return w && c->root[0] ? w : NULL;
}

bool workload_alive(struct workload_cache *c, uint64_t id)
{
	const struct workload *w;
	char path[4096 + 512];
	struct stat st;

	if (id & IOLAT_KEY_PROCESS) {
		uint32_t pid = (uint32_t)(id & ~IOLAT_KEY_PROCESS);

		snprintf(path, sizeof(path), "/proc/%u", pid);
		return !pid || stat(path, &st) == 0;
	}
	w = known(c, id);
	if (!w)
		return false;
	snprintf(path, sizeof(path), "%s%s", c->root, strcmp(w->path, "/") ? w->path : "");
	/* The directory's inode number is the cgroup id: a new cgroup at the
	 * same path is a different cgroup. */
	return stat(path, &st) == 0 && (uint64_t)st.st_ino == id;
}

/* One cgroup of workload_alive_many's: its answer, and its parent's path
 * (path's first parent_len bytes, relative to the root). */
struct alive_ask {
	uint64_t id;
	bool *alive;
	const char *path;
	size_t parent_len;
};

static int by_parent(const void *a, const void *b)
{
	const struct alive_ask *x = a, *y = b;
	size_t n = x->parent_len < y->parent_len ? x->parent_len : y->parent_len;
	int r = memcmp(x->path, y->path, n);

	return r ? r : (x->parent_len > y->parent_len) - (x->parent_len < y->parent_len);
}

/* A directory entry: its inode number, and its name in a buffer of names. */
struct dir_entry {
	uint64_t ino;
	size_t name_at;
};

static int by_ino(const void *a, const void *b)
{
	uint64_t x = ((const struct dir_entry *)a)->ino, y = ((const struct dir_entry *)b)->ino;

	return (x > y) - (x < y);
}

/* A parent with fewer asks than this is not read: a path lookup each costs
 * less than a listing. */
#define ALIVE_LIST_MIN 4

/*
 * Answers n asks of one parent from one read of that directory: a child is
 * alive if the parent has an entry of its name whose inode number is its
 * cgroup id (what workload_alive's stat compares). False, with nothing
 * answered, when the read failed for another reason than the parent being
 * gone.
 */
static bool alive_by_listing(const struct workload_cache *c, struct alive_ask *asks, size_t n)
{
	char dir[4096 + 512];
	struct dir_entry *ents = NULL;
	struct buf names = { 0 };
	size_t ne = 0, cap = 0;
	struct dirent *e;
	bool failed;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s%.*s", c->root, (int)asks[0].parent_len, asks[0].path);
	d = opendir(dir);
	if (!d) {
		if (errno != ENOENT)
			return false;
		for (size_t i = 0; i < n; i++) /* the parent is gone: so are they */
			*asks[i].alive = false;
		return true;
	}
	for (errno = 0; (e = readdir(d)); errno = 0) {
		if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN)
			continue;
		if (array_make_room((void **)&ents, &cap, ne, sizeof(*ents), 64))
			break;
		ents[ne++] = (struct dir_entry){ e->d_ino, names.len };
		buf_append(&names, e->d_name, strlen(e->d_name) + 1);
	}
	failed = e || errno || buf_failed(&names); /* out of memory, or the read failed */
	closedir(d);
	if (!failed) {
		qsort(ents, ne, sizeof(*ents), by_ino);
		for (size_t i = 0; i < n; i++) {
			struct dir_entry key = { .ino = asks[i].id };
			const struct dir_entry *hit =
			    ne ? bsearch(&key, ents, ne, sizeof(*ents), by_ino) : NULL;

			*asks[i].alive = hit && !strcmp(names.data + hit->name_at,
							asks[i].path + asks[i].parent_len + 1);
		}
	}
	free(ents);
	buf_free(&names);
	return !failed;
}

void workload_alive_many(struct workload_cache *c, const uint64_t *ids, size_t n, bool *alive)
{
	struct alive_ask *asks = calloc(n ? n : 1, sizeof(*asks));
	size_t na = 0;

	for (size_t i = 0; i < n; i++) {
		const struct workload *w = ids[i] & IOLAT_KEY_PROCESS ? NULL : known(c, ids[i]);
		const char *slash = w ? strrchr(w->path, '/') : NULL;

		/* Processes, the root cgroup, and all of them without memory:
		 * one at a time. */
		if (!asks || !slash || !strcmp(w->path, "/")) {
			alive[i] = (ids[i] & IOLAT_KEY_PROCESS || w) && workload_alive(c, ids[i]);
			continue;
		}
		asks[na++] =
		    (struct alive_ask){ ids[i], &alive[i], w->path, (size_t)(slash - w->path) };
	}
	qsort(asks, na, sizeof(*asks), by_parent);
	for (size_t i = 0, j; i < na; i = j) {
		for (j = i + 1; j < na && !by_parent(&asks[i], &asks[j]); j++)
			;
		if (j - i >= ALIVE_LIST_MIN && alive_by_listing(c, asks + i, j - i))
			continue;
		for (size_t k = i; k < j; k++)
			*asks[k].alive = workload_alive(c, asks[k].id);
	}
	free(asks);
}

bool workload_is_unknown(const struct workload *w)
{
	return !strcmp(w->path, "?");
}

void workload_cache_set_comm(struct workload_cache *c, workload_comm_fn fn, void *ctx)
{
	c->comm_of = fn;
	c->comm_ctx = ctx;
}

/* A process key: "COMM[PID]", from the kernel's note of its name (kept after
 * the process exits), else /proc. */
static const struct workload *process_of(struct workload_cache *c, uint64_t id)
{
	uint32_t pid = (uint32_t)(id & ~IOLAT_KEY_PROCESS);
	struct workload *w = idmap_get(&c->names, id);
	char comm[64] = "", path[64];
	FILE *f;

	if (w)
		return w;
	w = calloc(1, sizeof(*w));
	if (!w)
		return &c->unattributed;
	if (!pid) {
		snprintf(w->name, sizeof(w->name), "unknown");
	} else {
		if (!c->comm_of || c->comm_of(c->comm_ctx, pid, comm, sizeof(comm))) {
			snprintf(path, sizeof(path), "/proc/%u/comm", pid);
			f = fopen(path, "re");
			if (!f || !fgets(comm, sizeof(comm), f))
				snprintf(comm, sizeof(comm), "pid");
			if (f)
				fclose(f);
			comm[strcspn(comm, "\n")] = '\0';
		}
		snprintf(w->name, sizeof(w->name), "%s[%u]", comm, pid);
	}
	snprintf(w->kind, sizeof(w->kind), "process");
	snprintf(w->path, sizeof(w->path), "/proc/%u", pid);
	if (idmap_put(&c->names, id, w)) {
		free(w);
		return &c->unattributed;
	}
	return w;
}

const struct workload *workload_lookup(struct workload_cache *c, uint64_t id)
{
	const struct workload *w;

	if (!id)
		return &c->unattributed;
	if (id & IOLAT_KEY_PROCESS)
		return process_of(c, id);
	w = idmap_get(&c->names, id);
	if (!w) {
		walk(c);
		w = idmap_get(&c->names, id);
	}
	if (w) {
		kube_name(c, (struct workload *)w); /* the cache's own entry */
		return w;
	}
	snprintf(c->unknown.kind, sizeof(c->unknown.kind), "cgroup");
	snprintf(c->unknown.name, sizeof(c->unknown.name), "cgroup-%" PRIu64, id);
	snprintf(c->unknown.path, sizeof(c->unknown.path), "?");
	return &c->unknown;
}
