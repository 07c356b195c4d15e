// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* handover.c - taking over from another pinned collector (handover.h). */
#include "core/handover.h"

#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/collector_rows.h"
#include "core/handover_bounds.h"
#include "core/histo.h"
#include "core/percpu.h"
#include "core/seriesfile.h"
#include "util/monotonic.h"

/* Pins of one instance: its maps, the control map and a link per program. */
#define HANDOVER_MAX_PINS 32

struct pinned {
	char name[64];
	int fd;
};

/* One of its histogram maps, read in its own layout. */
struct old_hists {
	int fd;
	int nvals;	   /* values per key: CPUs, or 1 if shared */
	size_t key_size;   /* at most ours: keys too are only extended */
	size_t val_stride; /* one value as a lookup returns it (rounded to 8) */
};

struct handover {
	struct pinned pin[HANDOVER_MAX_PINS];
	int npins;
	struct old_hists hists[2]; /* hists, hists_shared */
	struct rows rows[2];	   /* their dense rows (rows, _shared); layout 3+ */
	int stats_fd, window_fd;
	int ncpus;
	/* Its series as of the last fold: what it saved, then each fold's. */
	struct snapshot_store series;
	uint64_t saved_stats[IOLAT_STAT_COUNT]; /* counters it was handed */
	bool folded;				/* the first fold is done */
	uint64_t due_ns;			/* when the grace ends */
	void *raw;				/* one lookup's values, its layout */
	struct iolat_kval *vals;		/* the same, in ours */
	struct handover_slot_map *slots;	/* its slots to ours; NULL: alike */
};

static int pinned_fd(const struct handover *h, const char *name)
{
	for (int i = 0; i < h->npins; i++)
		if (!strcmp(h->pin[i].name, name))
			return h->pin[i].fd;
	return -1;
}

bool handover_had_link(const struct handover *h, const char *link_name)
{
	return pinned_fd(h, link_name) >= 0;
}

/* Takes a descriptor of everything pinned in dir. */
static int open_pins(struct handover *h, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[512];
	int rc = 0;

	if (!d)
		return -errno;
	while (!rc && (e = readdir(d))) {
		struct pinned *p = &h->pin[h->npins];

		if (e->d_name[0] == '.')
			continue;
		if (h->npins == HANDOVER_MAX_PINS || strlen(e->d_name) >= sizeof(p->name)) {
			rc = -E2BIG;
			break;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		p->fd = bpf_obj_get(path);
		if (p->fd < 0) {
			rc = -errno;
			break;
		}
		snprintf(p->name, sizeof(p->name), "%s", e->d_name);
		h->npins++;
	}
	closedir(d);
	return rc;
}

/* How one of its histogram maps is read; -EPROTO if not as ours or a
 * prefix of ours. */
static int hists_layout(struct handover *h, struct old_hists *m, const char *name, int ncpus)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	m->fd = pinned_fd(h, name);
	if (m->fd < 0)
		return -EPROTO;
	if (bpf_obj_get_info_by_fd(m->fd, &info, &len))
		return -errno;
	if (info.key_size > sizeof(struct iolat_key) || info.value_size > sizeof(struct iolat_kval))
		return -EPROTO;
	m->key_size = info.key_size;
	m->val_stride = (info.value_size + 7) & ~7u;
	m->nvals = info.type == BPF_MAP_TYPE_PERCPU_HASH ? ncpus : 1;
	return 0;
}

/* Its dense rows of map `name` (the pair of hists[i]), read in its own
 * layout; none before layout 3. 0, -EPROTO if laid out unlike ours, or
 * -ENOMEM. */
static int rows_layout(struct handover *h, struct rows *r, const char *name, int ncpus)
{
	int keys_fd = pinned_fd(h, "row_keys"), fd = pinned_fd(h, name);
	struct bpf_map_info info = {}, kinfo = {};
	__u32 len = sizeof(info), klen = sizeof(kinfo);

	if (keys_fd < 0 || fd < 0)
		return rows_open(r, -1, -1, 0, 0, 0);
	if (bpf_obj_get_info_by_fd(fd, &info, &len) ||
	    bpf_obj_get_info_by_fd(keys_fd, &kinfo, &klen))
		return -errno;
	if (info.value_size > sizeof(struct iolat_kval) ||
	    kinfo.value_size != sizeof(struct iolat_row_key))
		return -EPROTO;
	return rows_open(r, keys_fd, fd, info.type == BPF_MAP_TYPE_PERCPU_ARRAY ? ncpus : 1,
			 (info.value_size + 7) & ~7u, kinfo.max_entries);
}

int handover_open(struct handover **out, const char *dir, const struct pin_control *ctl,
		  const char *series_path, int ncpus, char *why, size_t len)
{
	struct seriesfile_owner owner = { .identity = ctl->identity,
					  .created_ns = ctl->created_ns };
	struct handover *h = calloc(1, sizeof(*h));
	int rc;

	if (!h)
		return -ENOMEM;
	h->ncpus = ncpus;
	rc = open_pins(h, dir);
	if (rc) {
		snprintf(why, len, "its pins cannot be opened (%s)", strerror(-rc));
		goto fail;
	}
	h->window_fd = pinned_fd(h, PIN_WINDOW);
	h->stats_fd = pinned_fd(h, "stats");
	if (h->window_fd < 0 || h->stats_fd < 0) {
		snprintf(why, len, "it predates handing over (no window map)");
		rc = -EPROTO;
		goto fail;
	}
	rc = hists_layout(h, &h->hists[0], "hists", ncpus);
	if (!rc)
		rc = hists_layout(h, &h->hists[1], "hists_shared", ncpus);
	if (!rc)
		rc = rows_layout(h, &h->rows[0], "rows", ncpus);
	if (!rc)
		rc = rows_layout(h, &h->rows[1], "rows_shared", ncpus);
	if (rc) {
		snprintf(why, len, "its histogram maps are laid out unlike any this iolat reads");
		goto fail;
	}
	h->raw = calloc((size_t)ncpus, sizeof(struct iolat_kval));
	h->vals = calloc((size_t)ncpus, sizeof(struct iolat_kval));
	if (!h->raw || !h->vals) {
		rc = -ENOMEM;
		goto fail;
	}
	/* Not there, or another's: its maps are read from zero. */
	if (seriesfile_read(series_path, &owner, &h->series, h->saved_stats))
		memset(h->saved_stats, 0, sizeof(h->saved_stats));
	*out = h;
	return 0;
fail:
	handover_free(h);
	return rc;
}

int handover_share(struct handover *h, struct bpf_map *m)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char pin[64];
	int fd;

	pin_path("", bpf_map__name(m), pin, sizeof(pin));
	fd = pinned_fd(h, pin + 1);
	if (fd < 0)
		return 0;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	if (info.type != bpf_map__type(m) || info.key_size != bpf_map__key_size(m) ||
	    info.value_size != bpf_map__value_size(m) || info.map_flags != bpf_map__map_flags(m))
		return 0;
	return bpf_map__reuse_fd(m, fd);
}

int handover_switch(struct handover *h, struct iolat_window *ours, unsigned int grace_s)
{
	struct iolat_window w;
	uint32_t zero = 0;
	uint64_t at = monotonic_ns() + HANDOVER_LEAD_MS * NSEC_PER_MSEC;

	if (bpf_map_lookup_elem(h->window_fd, &zero, &w))
		return -errno;
	/* Ours first: both are ahead, so until both are written neither
	 * counts differently. */
	__atomic_store_n(&ours->from_ns, at, __ATOMIC_RELEASE);
	w.until_ns = at;
	if (bpf_map_update_elem(h->window_fd, &zero, &w, BPF_ANY))
		return -errno;
	h->due_ns = at + grace_s * NSEC_PER_SEC;
	return monotonic_ns() < at ? 0 : -ETIME;
}

uint64_t handover_due_ns(const struct handover *h)
{
	return h->due_ns;
}

/* One lookup's values in our layout: each its prefix, zero-extended. */
static void to_ours(struct handover *h, const struct old_hists *m)
{
	const char *p = h->raw;

	for (int i = 0; i < m->nvals; i++, p += m->val_stride) {
		memset(&h->vals[i], 0, sizeof(h->vals[i]));
		memcpy(&h->vals[i], p,
		       m->val_stride < sizeof(h->vals[i]) ? m->val_stride : sizeof(h->vals[i]));
	}
}

/* Adds series s's change since `before` to into's kept series, in our
 * slots. */
static int keep_change(const struct handover *h, struct snapshot_store *into,
		       const struct series *s, const struct iolat_val *before)
{
	struct iolat_val d;

	histo_sub(&d, &s->val, before);
	if (!d.ios && !d.bytes && !d.errors)
		return 0; /* nothing completed: unchanged */
	if (h->slots)
		handover_bounds_apply(h->slots, &d);
	return snapshot_store_keep(into, &s->key, &d);
}

int handover_map_slots(struct handover *h, const struct bucket_table *lat,
		       const struct bucket_table *size)
{
	uint64_t their_lat[IOLAT_LAT_SLOTS], their_size[IOLAT_SIZE_SLOTS];
	int rc = -ENOENT;

	for (int i = 0; i < h->npins && rc; i++)
		if (!strncmp(h->pin[i].name, "link_", 5) && h->pin[i].fd >= 0)
			rc = handover_bounds_read(h->pin[i].fd, their_lat, their_size);
	if (rc)
		return rc;
	if (!memcmp(their_lat, lat->bound, sizeof(their_lat)) &&
	    !memcmp(their_size, size->bound, sizeof(their_size)))
		return 0; /* alike: slot i is slot i */
	h->slots = malloc(sizeof(*h->slots));
	if (!h->slots)
		return -ENOMEM;
	handover_bounds_map(h->slots, their_lat, their_size, lat, size);
	return 0;
}

/* Folds its live rows whose keys its map of them did not hold this pass
 * into `mine`, and what each gained into into's kept series. */
static int fold_rows_rest(struct handover *h, struct rows *r, struct snapshot_store *mine,
			  struct snapshot_store *into)
{
	struct iolat_key key;
	int rc = 0;

	for (int i = 0; !rc && (i = rows_next_rest(r, (uint32_t)i, &key)) >= 0; i++) {
		struct series *s = snapshot_store_live(mine, &key);
		struct iolat_val before;

		if (!s)
			return -ENOMEM;
		before = s->val;
		histo_fold(&s->val, &r->val[i], 1);
		rc = keep_change(h, into, s, &before);
	}
	return rc;
}

/* Folds one of its maps, with its rows (a key's value is the two summed),
 * into `mine` (its series: its own, or a peek's copy of them), and what
 * each key gained into into's kept series. */
static int fold_map(struct handover *h, const struct old_hists *m, struct rows *rows,
		    struct snapshot_store *mine, struct snapshot_store *into)
{
	struct iolat_key key, next;
	struct iolat_val before;
	void *prev = NULL;
	int rc = rows_read(rows), row;

	memset(&next, 0, sizeof(next));
	while (!rc && bpf_map_get_next_key(m->fd, prev, &next) == 0) {
		struct series *s;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(m->fd, &key, h->raw))
			continue; /* deleted under us */
		to_ours(h, m);
		s = snapshot_store_live(mine, &key);
		if (!s)
			return -ENOMEM;
		before = s->val;
		row = rows_find(rows, &key);
		if (row >= 0) {
			rows->folded[row] = true;
			histo_fold(&s->val, rows_add(rows, h->vals, m->nvals, row), 1);
		} else {
			histo_fold(&s->val, h->vals, m->nvals);
		}
		rc = keep_change(h, into, s, &before);
	}
	return rc ? rc : fold_rows_rest(h, rows, mine, into);
}

/* handover_fold's work on `mine`, its series or a copy; *folded: whether
 * what it counted up to its last save is in into already (set once it is). */
static int fold_into(struct handover *h, struct snapshot_store *mine, bool *folded,
		     struct snapshot_store *into)
{
	static const struct iolat_val zero;
	int rc = 0;

	/* First, all it counted up to its last save: its kept series and
	 * its live ones as they stood. */
	for (size_t i = 0; !*folded && !rc && i < mine->all.n; i++)
		rc = keep_change(h, into, &mine->all.s[i], &zero);
	if (rc)
		return rc;
	*folded = true;
	for (int i = 0; i < 2 && !rc; i++)
		rc = fold_map(h, &h->hists[i], &h->rows[i], mine, into);
	return rc;
}

int handover_fold(struct handover *h, struct snapshot_store *into)
{
	return fold_into(h, &h->series, &h->folded, into);
}

int handover_peek(struct handover *h, struct snapshot_store *into)
{
	struct snapshot_store mine = { 0 };
	bool folded = h->folded;
	int rc = snapshot_store_copy(&mine, &h->series);

	if (!rc)
		rc = fold_into(h, &mine, &folded, into);
	snapshot_store_free(&mine);
	return rc;
}

void handover_add_stats(struct handover *h, uint64_t out[IOLAT_STAT_COUNT])
{
	uint64_t now[IOLAT_STAT_COUNT] = { 0 };

	/* Its stats map has IOLAT_STAT_COUNT entries or, older, fewer: the
	 * ones it lacks stay 0. */
	percpu_array_sums(h->stats_fd, h->ncpus, now, IOLAT_STAT_COUNT);
	for (int i = 0; i < IOLAT_STAT_COUNT; i++)
		out[i] += h->saved_stats[i] + now[i];
}

/* Lets its programs go: the links this holds were all that kept them. */
static void detach(struct handover *h)
{
	for (int i = 0; i < h->npins; i++) {
		if (!strncmp(h->pin[i].name, "link_", 5) && h->pin[i].fd >= 0) {
			close(h->pin[i].fd);
			h->pin[i].fd = -1;
		}
	}
}

int handover_finish(struct handover *h, struct snapshot_store *into,
		    uint64_t stats[IOLAT_STAT_COUNT], struct iolat_window *ours)
{
	int rc;

	detach(h);
	rc = handover_fold(h, into);
	handover_add_stats(h, stats);
	__atomic_store_n(&ours->from_ns, 0, __ATOMIC_RELEASE);
	handover_free(h);
	return rc;
}

void handover_free(struct handover *h)
{
	if (!h)
		return;
	for (int i = 0; i < h->npins; i++)
		if (h->pin[i].fd >= 0)
			close(h->pin[i].fd);
	snapshot_store_free(&h->series);
	rows_free(&h->rows[0]);
	rows_free(&h->rows[1]);
	free(h->raw);
	free(h->vals);
	free(h->slots);
	free(h);
}
