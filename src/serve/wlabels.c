// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* wlabels.c - bounded workload label sets (wlabels.h). */
#include "serve/wlabels.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/wlstate.h"
#include "util/buf.h"
#include "util/idmap.h"
#include "util/log.h"

/* User-space cgroup ids (ops->retire) for retired series: wlabels.h's two,
 * then one per label set. */
#define ID_FIRST_SET WLABELS_ID_FIRST_SET
/* idmap keys must be non-zero: I/O charged to no cgroup (id 0) uses this. */
#define ID_NONE (COLLECTOR_CG_USER - 1)

static uint64_t track_id(uint64_t cgroup)
{
	return cgroup ? cgroup : ID_NONE;
}

struct lset {
	struct wl_label label;
	uint64_t id;	    /* its retired series' cgroup id */
	uint64_t hash;	    /* its key in by_name */
	size_t members;	    /* live cgroups in it */
	time_t empty_since; /* when members fell to 0 */
};

/* A cgroup seen doing I/O. */
struct tracked {
	struct lset *set; /* NULL: not named yet */
	time_t first_seen;
	uint64_t ios, ios_now; /* completions at the previous pass, and this one */
	bool gone;
};

struct wlabels {
	struct wlabels_ops ops;
	struct workload_cache *names;
	struct wlabels_opts o;
	struct idmap cgroups; /* cgroup id -> struct tracked */
	struct idmap sets;    /* set id -> struct lset */
	struct idmap by_name; /* hash of kind/name -> struct lset (chained by probing) */
	struct lset other;
	uint64_t next_id;
	struct wlabels_stats st;
	uint64_t kube_gen; /* of the names the sets were given */
};

struct wlabels *wlabels_new(const struct wlabels_ops *ops, struct workload_cache *names,
			    const struct wlabels_opts *o)
{
	struct wlabels *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->ops = *ops;
	w->names = names;
	w->o = *o;
	w->next_id = ID_FIRST_SET;
	strcpy(w->other.label.kind, "other");
	strcpy(w->other.label.name, "other");
	w->other.id = WLABELS_ID_OTHER;
	return w;
}

static void free_tracked(void *ctx, uint64_t id, void *val)
{
	(void)ctx;
	(void)id;
	free(val);
}

void wlabels_free(struct wlabels *w)
{
	if (!w)
		return;
	idmap_each(&w->cgroups, free_tracked, NULL);
	idmap_each(&w->sets, free_tracked, NULL);
	idmap_free(&w->cgroups);
	idmap_free(&w->sets);
	idmap_free(&w->by_name);
	free(w);
}

void wlabels_set_opts(struct wlabels *w, const struct wlabels_opts *o)
{
	w->o = *o; /* a lower cap applies to sets made from now on */
}

/* FNV-1a of a label set's strings, each ended by its '\0'; never 0
 * (idmap's empty mark). */
static uint64_t name_hash(const struct wl_label *l)
{
	const char *const parts[] = { l->kind, l->name, l->ns, l->pod, l->container };
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		for (const char *p = parts[i]; *p; p++)
			h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
		h *= 0x100000001b3ULL;
	}
	return h ? h : 1;
}

static bool same_label(const struct wl_label *a, const struct wl_label *b)
{
	return !strcmp(a->kind, b->kind) && !strcmp(a->name, b->name) && !strcmp(a->ns, b->ns) &&
	       !strcmp(a->pod, b->pod) && !strcmp(a->container, b->container);
}

/* The label set workload n is given. */
static void label_of(const struct workload *n, struct wl_label *out)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->kind, sizeof(out->kind), "%s", n->kind);
	snprintf(out->name, sizeof(out->name), "%s", n->name);
	snprintf(out->ns, sizeof(out->ns), "%s", n->kube.names.ns);
	snprintf(out->pod, sizeof(out->pod), "%s", n->kube.names.pod);
	snprintf(out->container, sizeof(out->container), "%s", n->kube.names.container);
}

/* The set labelled l, or NULL; *free_h: where by_name has room for it.
 * Collisions of the 64-bit hash are resolved by probing h+1, h+2... */
static struct lset *set_named(const struct wlabels *w, const struct wl_label *l, uint64_t *free_h)
{
	uint64_t h = name_hash(l);
	struct lset *s;

	for (; (s = idmap_get(&w->by_name, h)); h = h + 1 ? h + 1 : 1)
		if (same_label(&s->label, l))
			return s;
	*free_h = h;
	return NULL;
}

/* The set labelled l, made if the cap allows; &other if not. */
static struct lset *set_for(struct wlabels *w, const struct wl_label *l)
{
	uint64_t h;
	struct lset *s = set_named(w, l, &h);

	if (s)
		return s;
	if (w->st.sets >= w->o.max_sets)
		goto fold;
	s = calloc(1, sizeof(*s));
	if (!s)
		goto fold;
	s->label = *l;
	s->id = w->next_id++;
	s->hash = h;
	if (idmap_put(&w->sets, s->id, s) || idmap_put(&w->by_name, h, s)) {
		idmap_del(&w->sets, s->id);
		free(s);
		goto fold;
	}
	w->st.sets++;
	return s;
fold:
	w->st.folded_cgroups++;
	log_debug("workload folded into other", LOG_STR("kind", l->kind),
		  LOG_STR("workload", l->name),
		  LOG_STR("reason",
			  w->st.sets >= w->o.max_sets ? "workloads.max reached" : "out of memory"),
		  LOG_UINT("max", w->o.max_sets));
	return &w->other;
}

/* Ids gathered while walking a map, acted on after the walk. */
struct idlist {
	uint64_t *id;
	size_t n, cap;
	int failed;
	struct wlabels *w;
	time_t now;
};

static void idlist_add(struct idlist *l, uint64_t id)
{
	if (array_make_room((void **)&l->id, &l->cap, l->n, sizeof(*l->id), 16))
		l->failed = 1;
	else
		l->id[l->n++] = id;
}

/* Names a followed cgroup once the cache can: a cgroup younger than the
 * cache's last walk waits a pass; one never found is gone: "other". */
static void name_it(struct wlabels *w, uint64_t id, struct tracked *t, time_t now)
{
	const struct workload *n = workload_lookup(w->names, id);

	if (workload_is_unknown(n)) {
		if (now - t->first_seen < 2)
			return;
		w->st.folded_cgroups++;
		t->set = &w->other;
		log_debug("workload folded into other", LOG_UINT("cgroup", id),
			  LOG_STR("reason", "cgroup gone before it was named"));
	} else {
		struct wl_label l;

		label_of(n, &l);
		t->set = set_for(w, &l);
	}
	t->set->members++;
}

/* A cgroup leaves its set: an empty set starts to age. */
static void leave_set(struct lset *s, time_t now)
{
	if (--s->members == 0)
		s->empty_since = now;
}

/* Gathers the named Kubernetes cgroups (their sets are not "other"). */
static void collect_pods(void *ctx, uint64_t id, void *val)
{
	struct idlist *l = ctx;
	const struct tracked *t = val;

	if (t->set && t->set != &l->w->other &&
	    (t->set->label.pod[0] || !strcmp(t->set->label.kind, "pod")))
		idlist_add(l, id);
}

/* The Kubernetes names changed: each pod's cgroup goes to the set of its
 * names now (a pod gone from the directories back to its UID). */
static int rename_pods(struct wlabels *w, time_t now)
{
	struct idlist pods = { .w = w, .now = now };

	idmap_each(&w->cgroups, collect_pods, &pods);
	for (size_t i = 0; i < pods.n; i++) {
		struct tracked *t = idmap_get(&w->cgroups, pods.id[i]);
		const struct workload *n = workload_lookup(w->names, pods.id[i]);
		struct wl_label l;

		if (workload_is_unknown(n))
			continue;
		label_of(n, &l);
		if (same_label(&t->set->label, &l))
			continue;
		log_debug("workload renamed", LOG_UINT("cgroup", pods.id[i]),
			  LOG_STR("from", t->set->label.name), LOG_STR("to", l.name));
		leave_set(t->set, now);
		t->set = set_for(w, &l);
		t->set->members++;
	}
	free(pods.id);
	return pods.failed ? -ENOMEM : 0;
}

static struct tracked *follow(struct wlabels *w, uint64_t id, time_t now)
{
	struct tracked *t = idmap_get(&w->cgroups, id);

	if (t)
		return t;
	t = calloc(1, sizeof(*t));
	if (!t || idmap_put(&w->cgroups, id, t)) {
		free(t);
		return NULL;
	}
	t->first_seen = now;
	w->st.cgroups++;
	return t;
}

int wlabels_assign(struct wlabels *w, const struct snapshot *snap, time_t now)
{
	uint64_t gen = workload_cache_refresh(w->names);

	if (gen != w->kube_gen) {
		w->kube_gen = gen;
		if (rename_pods(w, now))
			return -ENOMEM;
	}
	for (size_t i = 0; i < snap->n; i++) {
		uint64_t id = snap->s[i].key.cgroup;
		struct tracked *t;

		if (id >= COLLECTOR_CG_USER)
			continue;
		t = follow(w, track_id(id), now);
		if (!t)
			return -ENOMEM;
		t->ios_now += snap->s[i].val.ios;
	}
	for (size_t i = 0; i < snap->n; i++) {
		uint64_t id = snap->s[i].key.cgroup;
		struct tracked *t =
		    id < COLLECTOR_CG_USER ? idmap_get(&w->cgroups, track_id(id)) : NULL;

		if (t && !t->set)
			name_it(w, id, t, now);
	}
	return 0;
}

const struct wl_label *wlabels_of(struct wlabels *w, uint64_t cgroup)
{
	struct tracked *t;
	struct lset *s;

	if (cgroup == WLABELS_ID_OTHER)
		return &w->other.label;
	if (cgroup >= COLLECTOR_CG_USER) {
		s = idmap_get(&w->sets, cgroup);
		return s ? &s->label : NULL;
	}
	t = idmap_get(&w->cgroups, track_id(cgroup));
	return t && t->set ? &t->set->label : NULL;
}

int wlabels_is_other(const struct wlabels *w, const struct wl_label *l)
{
	return l == &w->other.label;
}

/* A named cgroup with no I/O since the previous pass: it may be gone. */
static void check_idle(void *ctx, uint64_t id, void *val)
{
	struct idlist *l = ctx;
	struct tracked *t = val;
	bool idle = t->ios_now == t->ios;

	t->ios = t->ios_now;
	t->ios_now = 0;
	if (t->set && idle && id != ID_NONE)
		idlist_add(l, id);
}

/* Keeps in l the idle cgroups whose directory is gone, marked gone; asked
 * all at once, so siblings cost one read of their parent (workload.h). */
static void check_gone(struct wlabels *w, struct idlist *l)
{
	bool *alive = l->n ? calloc(l->n, sizeof(*alive)) : NULL;
	size_t n = 0;

	if (l->n && !alive) {
		l->failed = 1;
		l->n = 0;
		return;
	}
	workload_alive_many(w->names, l->id, l->n, alive);
	for (size_t i = 0; i < l->n; i++) {
		struct tracked *t = alive[i] ? NULL : idmap_get(&w->cgroups, l->id[i]);

		if (!t)
			continue;
		t->gone = true;
		l->id[n++] = l->id[i];
	}
	l->n = n;
	free(alive);
}

/*
 * Moves a gone cgroup's kernel keys under its label set's user-space id.
 * The keys are gathered first: snap may be the collector's own series,
 * which each retire changes.
 */
static int retire_keys(struct wlabels *w, const struct snapshot *snap)
{
	struct iolat_key *keys = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	for (size_t i = 0; i < snap->n; i++) {
		const struct iolat_key *k = &snap->s[i].key;
		struct tracked *t;

		if (k->cgroup >= COLLECTOR_CG_USER)
			continue;
		t = idmap_get(&w->cgroups, track_id(k->cgroup));
		if (!t || !t->gone)
			continue;
		if (array_make_room((void **)&keys, &cap, n, sizeof(*keys), 16)) {
			free(keys);
			return -ENOMEM;
		}
		keys[n++] = *k;
	}
	for (size_t i = 0; !rc && i < n; i++) {
		struct tracked *t = idmap_get(&w->cgroups, track_id(keys[i].cgroup));

		rc = w->ops.retire(w->ops.ctx, &keys[i], t->set->id);
	}
	free(keys);
	return rc;
}

static void unfollow(struct wlabels *w, uint64_t id, time_t now)
{
	struct tracked *t = idmap_del(&w->cgroups, id);

	if (!t)
		return;
	if (t->set)
		leave_set(t->set, now);
	log_debug("workload cgroup gone; kernel keys retired", LOG_UINT("cgroup", id),
		  LOG_STR("kind", t->set ? t->set->label.kind : NULL),
		  LOG_STR("workload", t->set ? t->set->label.name : NULL));
	workload_forget(w->names, id);
	w->st.cgroups--;
	w->st.retired_cgroups++;
	free(t);
}

static void check_expired(void *ctx, uint64_t id, void *val)
{
	struct idlist *l = ctx;
	struct lset *s = val;

	if (!s->members && l->now - s->empty_since >= (time_t)l->w->o.expire_s)
		idlist_add(l, id);
}

/* An expired set's counts stay in the per-disk totals, under no workload. */
static int expire(struct wlabels *w, uint64_t id)
{
	struct lset *s = idmap_del(&w->sets, id);
	int rc;

	if (!s)
		return 0;
	idmap_del(&w->by_name, s->hash);
	log_debug("workload expired", LOG_STR("kind", s->label.kind),
		  LOG_STR("workload", s->label.name), LOG_UINT("expire_seconds", w->o.expire_s));
	rc = w->ops.refold(w->ops.ctx, s->id, WLABELS_ID_EXPIRED);
	free(s);
	w->st.sets--;
	w->st.expired_sets++;
	return rc;
}

int wlabels_prune(struct wlabels *w, const struct snapshot *snap, time_t now)
{
	struct idlist gone = { .w = w, .now = now }, old = { .w = w, .now = now };
	int rc;

	idmap_each(&w->cgroups, check_idle, &gone);
	check_gone(w, &gone);
	rc = retire_keys(w, snap);
	for (size_t i = 0; i < gone.n; i++)
		unfollow(w, gone.id[i], now);
	idmap_each(&w->sets, check_expired, &old);
	for (size_t i = 0; !rc && i < old.n; i++)
		rc = expire(w, old.id[i]);
	free(gone.id);
	free(old.id);
	if (!rc && (gone.failed || old.failed))
		rc = -ENOMEM;
	return rc;
}

void wlabels_stats(const struct wlabels *w, struct wlabels_stats *out)
{
	*out = w->st;
}

/* Fills a wlstate's arrays from the idmaps (wlabels_save). */
struct save_walk {
	struct wlstate *out;
};

static void save_set(void *ctx, uint64_t id, void *val)
{
	struct save_walk *sw = ctx;
	const struct lset *s = val;
	struct wlstate_set *o = &sw->out->sets[sw->out->nsets++];

	o->id = id;
	o->empty_since = s->members ? 0 : (int64_t)s->empty_since;
	o->label = s->label;
}

static void save_cgroup(void *ctx, uint64_t id, void *val)
{
	struct save_walk *sw = ctx;
	const struct tracked *t = val;
	struct wlstate_cgroup *o = &sw->out->cgroups[sw->out->ncgroups++];

	o->id = id;
	o->set = t->set ? t->set->id : 0;
	o->first_seen = (int64_t)t->first_seen;
}

int wlabels_save(const struct wlabels *w, struct wlstate *out)
{
	struct save_walk sw = { .out = out };

	memset(out, 0, sizeof(*out));
	out->sets = calloc(w->sets.n ? w->sets.n : 1, sizeof(*out->sets));
	out->cgroups = calloc(w->cgroups.n ? w->cgroups.n : 1, sizeof(*out->cgroups));
	if (!out->sets || !out->cgroups) {
		wlstate_free(out);
		return -ENOMEM;
	}
	idmap_each(&w->sets, save_set, &sw);
	idmap_each(&w->cgroups, save_cgroup, &sw);
	out->next_id = w->next_id;
	out->folded_cgroups = w->st.folded_cgroups;
	out->retired_cgroups = w->st.retired_cgroups;
	out->expired_sets = w->st.expired_sets;
	return 0;
}

/* Back to what wlabels_new made: nothing followed, no set. */
static void reset(struct wlabels *w)
{
	idmap_free_all(&w->cgroups);
	idmap_free_all(&w->sets);
	idmap_free(&w->by_name);
	memset(&w->st, 0, sizeof(w->st));
	w->other.members = 0;
	w->next_id = ID_FIRST_SET;
}

static bool terminated(const char *s, size_t len)
{
	return memchr(s, '\0', len) != NULL;
}

static int restore_set(struct wlabels *w, const struct wlstate *in, const struct wlstate_set *r)
{
	struct lset *s;
	uint64_t h;

	if (r->id < ID_FIRST_SET || r->id >= in->next_id || idmap_get(&w->sets, r->id) ||
	    !terminated(r->label.kind, sizeof(r->label.kind)) ||
	    !terminated(r->label.name, sizeof(r->label.name)) ||
	    !terminated(r->label.ns, sizeof(r->label.ns)) ||
	    !terminated(r->label.pod, sizeof(r->label.pod)) ||
	    !terminated(r->label.container, sizeof(r->label.container)) ||
	    set_named(w, &r->label, &h))
		return -EPROTO;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->label = r->label;
	s->id = r->id;
	s->hash = h;
	s->empty_since = (time_t)r->empty_since;
	if (idmap_put(&w->sets, s->id, s)) {
		free(s);
		return -ENOMEM;
	}
	if (idmap_put(&w->by_name, h, s))
		return -ENOMEM; /* s is the sets map's: reset frees it */
	w->st.sets++;
	return 0;
}

static int restore_cgroup(struct wlabels *w, const struct wlstate_cgroup *r)
{
	struct lset *set = NULL;
	struct tracked *t;

	if (r->set == WLABELS_ID_OTHER)
		set = &w->other;
	else if (r->set && !(set = idmap_get(&w->sets, r->set)))
		return -EPROTO;
	if (!r->id || r->id >= COLLECTOR_CG_USER || idmap_get(&w->cgroups, r->id))
		return -EPROTO;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->set = set;
	t->first_seen = (time_t)r->first_seen;
	if (idmap_put(&w->cgroups, r->id, t)) {
		free(t);
		return -ENOMEM;
	}
	if (set)
		set->members++;
	w->st.cgroups++;
	return 0;
}

/*
 * The collector's series under user-space ids of no restored set (saved
 * by a run that crashed between the collector's save and its own): folded
 * under WLABELS_ID_EXPIRED, like an expired set's, and their ids never
 * given to a new set.
 */
static int restore_orphans(struct wlabels *w, const struct snapshot *series)
{
	struct idlist orphans = { .w = w };
	int rc = 0;

	for (size_t i = 0; i < series->n; i++) {
		uint64_t id = series->s[i].key.cgroup;
		bool seen = false;

		if (id < ID_FIRST_SET)
			continue;
		if (id >= w->next_id)
			w->next_id = id + 1;
		if (idmap_get(&w->sets, id))
			continue;
		for (size_t j = 0; j < orphans.n && !seen; j++)
			seen = orphans.id[j] == id;
		if (!seen)
			idlist_add(&orphans, id);
	}
	rc = orphans.failed ? -ENOMEM : 0;
	for (size_t i = 0; !rc && i < orphans.n; i++)
		rc = w->ops.refold(w->ops.ctx, orphans.id[i], WLABELS_ID_EXPIRED);
	free(orphans.id);
	return rc;
}

int wlabels_restore(struct wlabels *w, const struct wlstate *in, const struct snapshot *series)
{
	int rc = 0;

	if (w->st.sets || w->st.cgroups)
		return -EBUSY;
	if (in->next_id < ID_FIRST_SET || in->next_id >= ID_FIRST_SET + (1ULL << 48))
		return -EPROTO;
	for (size_t i = 0; !rc && i < in->nsets; i++)
		rc = restore_set(w, in, &in->sets[i]);
	for (size_t i = 0; !rc && i < in->ncgroups; i++)
		rc = restore_cgroup(w, &in->cgroups[i]);
	if (rc) {
		reset(w);
		return rc;
	}
	w->next_id = in->next_id;
	w->st.folded_cgroups = in->folded_cgroups;
	w->st.retired_cgroups = in->retired_cgroups;
	w->st.expired_sets = in->expired_sets;
	return series ? restore_orphans(w, series) : 0;
}
