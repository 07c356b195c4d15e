// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* builtin_views.c - the collector's series as maps for iolat's own configs (builtin_views.h). */
#include "serve/builtin_views.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <linux/bpf.h>

#include "serve/wlabels.h"

/*
 * The views' keys. builtin/block.yaml reads the block and untimed keys,
 * builtin/workloads.yaml the workload key (a series under its cgroup's
 * workload label set, wlabels.h). Their labels (size, padding) spell these
 * layouts byte for byte; tests/unit/test_builtin.c packs a series here and
 * decodes it there, field by field.
 */
struct builtin_block_key {
	__u32 dev;
	__u8 op;
	__u8 size_class;
	__u16 pad;
};

/* A workload's label set as both workload keys end with it (wlabels.h). */
struct builtin_wl_names {
	char kind[16];
	char workload[128];
	char ns[64];
	char pod[256];
	char container[64];
};

struct builtin_workload_key {
	__u32 dev;
	__u8 op;
	__u8 pad[3];
	struct builtin_wl_names names;
};
/* The key's strings are a label set's, copied whole (names_of): the
 * same sizes, or the copy would read past one or cut the other. */
_Static_assert(sizeof(((struct builtin_wl_names *)0)->kind) == sizeof(((struct wl_label *)0)->kind),
	       "workload kind sizes differ");
_Static_assert(sizeof(((struct builtin_wl_names *)0)->workload) ==
		   sizeof(((struct wl_label *)0)->name),
	       "workload name sizes differ");
_Static_assert(sizeof(((struct builtin_wl_names *)0)->ns) == sizeof(((struct wl_label *)0)->ns) &&
		   sizeof(((struct builtin_wl_names *)0)->pod) ==
		       sizeof(((struct wl_label *)0)->pod) &&
		   sizeof(((struct builtin_wl_names *)0)->container) ==
		       sizeof(((struct wl_label *)0)->container),
	       "Kubernetes name sizes differ");

/* The system-call families' key (builtin/workloads.yaml's syscall_labels):
 * the workload key without a disk, which a call is not tied to. */
struct builtin_syscall_key {
	__u8 op;
	__u8 pad[3];
	struct builtin_wl_names names;
};

struct builtin_untimed_key {
	__u32 dev;
	__u8 op;
	__u8 size_class;
	__u8 view;
	__u8 pad;
};

enum view {
	VIEW_DEVICE_LATENCY,
	VIEW_TOTAL_LATENCY,
	VIEW_REQUEST_SIZE,
	VIEW_COMPLETIONS,
	VIEW_BYTES,
	VIEW_ERRORS,
	VIEW_UNTIMED,
	/* The same per workload: view - VIEW_WORKLOAD is the view above. */
	VIEW_WORKLOAD,
	VIEW_WORKLOAD_END = VIEW_WORKLOAD + VIEW_ERRORS + 1,
	/* The system calls' series (builtin_views.sys) per workload: their
	 * latency, bytes and errors, as the block views' of the same names. */
	VIEW_SYSCALL = VIEW_WORKLOAD_END,
	VIEW_SYSCALL_LATENCY = VIEW_SYSCALL,
	VIEW_SYSCALL_BYTES,
	VIEW_SYSCALL_ERRORS,
	VIEW_COUNT,
};

static const char *const view_names[VIEW_COUNT] = {
	"device_latency",
	"total_latency",
	"request_size",
	"completions",
	"bytes",
	"errors",
	"untimed",
	"workload_device_latency",
	"workload_total_latency",
	"workload_request_size",
	"workload_completions",
	"workload_bytes",
	"workload_errors",
	"workload_syscall_latency",
	"workload_syscall_bytes",
	"workload_syscall_errors",
};

static size_t key_size_of(int view)
{
	if (view == VIEW_UNTIMED)
		return sizeof(struct builtin_untimed_key);
	if (view >= VIEW_SYSCALL)
		return sizeof(struct builtin_syscall_key);
	if (view >= VIEW_WORKLOAD)
		return sizeof(struct builtin_workload_key);
	return sizeof(struct builtin_block_key);
}

static int views_map(void *ctx, const char *name, struct umap *out, char *err, size_t errlen)
{
	(void)ctx;
	memset(out, 0, sizeof(*out));
	for (int v = 0; v < VIEW_COUNT; v++) {
		if (strcmp(name, view_names[v]))
			continue;
		out->m.fd = v;
		out->m.type = BPF_MAP_TYPE_HASH;
		out->m.key_size = (unsigned)key_size_of(v);
		out->m.value_size = 8;
		out->m.name = view_names[v];
		out->iolat_hist = v <= VIEW_REQUEST_SIZE || v == VIEW_SYSCALL_LATENCY ||
				  (v >= VIEW_WORKLOAD && v < VIEW_WORKLOAD_END &&
				   v - VIEW_WORKLOAD <= VIEW_REQUEST_SIZE);
		return 0;
	}
	snprintf(err, errlen,
		 "map %s is not one of the collector's views (device_latency, "
		 "total_latency, request_size, completions, bytes, errors, untimed, and "
		 "workload_ before the first six, workload_syscall_latency, "
		 "workload_syscall_bytes, workload_syscall_errors)",
		 name);
	return -1;
}

/* A series' value in one view (not untimed); span: where its slots may be
 * non-zero (struct series), NULL: not known. */
static struct uvalue value_of(const struct iolat_val *val, const struct histo_span *span,
			      enum view view)
{
	const struct histo_span *sp = NULL;
	struct uvalue v = { 0 };

	switch (view) {
	case VIEW_DEVICE_LATENCY:
	case VIEW_TOTAL_LATENCY: {
		const struct iolat_lat *l =
		    &val->lat[view == VIEW_DEVICE_LATENCY ? IOLAT_VIEW_DEVICE : IOLAT_VIEW_TOTAL];

		/* A view's count is the sum of its slots, as histo_fold sums it
		 * (and histo_add keeps it): the metrics need not sum it again. */
		v = (struct uvalue){ .slots = l->slots,
				     .count = l->count,
				     .sum_raw = l->sum_ns,
				     .count_summed = true };
		sp = span
			 ? &span[view == VIEW_DEVICE_LATENCY ? IOLAT_VIEW_DEVICE : IOLAT_VIEW_TOTAL]
			 : NULL;
		break;
	}
	case VIEW_REQUEST_SIZE:
		v = (struct uvalue){ .slots = val->size_slots,
				     .count = val->ios,
				     .sum_raw = val->bytes };
		sp = span ? &span[HISTO_SPAN_SIZE] : NULL;
		break;
	case VIEW_COMPLETIONS:
		v.u64 = val->ios;
		break;
	case VIEW_BYTES:
		v.u64 = val->bytes;
		break;
	case VIEW_ERRORS:
		v.u64 = val->errors;
		break;
	default:
		break;
	}
	if (sp) {
		v.slot_lo = sp->lo;
		v.slot_hi = sp->hi;
	}
	return v;
}

/* A label set's strings into a key (their sizes: the asserts above). */
static void names_of(struct builtin_wl_names *n, const struct wl_label *l)
{
	memcpy(n->kind, l->kind, sizeof(n->kind));
	memcpy(n->workload, l->name, sizeof(n->workload));
	memcpy(n->ns, l->ns, sizeof(n->ns));
	memcpy(n->pod, l->pod, sizeof(n->pod));
	memcpy(n->container, l->container, sizeof(n->container));
}

/* A series under its workload's label set l; none for a workload not shown. */
static int workload_entry(const struct iolat_key *key, const struct iolat_val *val,
			  const struct histo_span *span, const struct wl_label *l, enum view view,
			  usource_fn fn, void *arg)
{
	struct builtin_workload_key k;
	struct uvalue v;

	if (!l)
		return 0;
	memset(&k, 0, sizeof(k));
	k.dev = key->dev;
	k.op = key->op;
	names_of(&k.names, l);
	v = value_of(val, span, view);
	return fn(arg, &k, &v);
}

/* A system call series under its workload's label set l (none for a
 * workload not shown): the latency in its device view (core/systimes.h). */
static int syscall_entry(const struct iolat_key *key, const struct iolat_val *val,
			 const struct wl_label *l, enum view view, usource_fn fn, void *arg)
{
	static const enum view as[] = { VIEW_DEVICE_LATENCY, VIEW_BYTES, VIEW_ERRORS };
	struct builtin_syscall_key k;
	struct uvalue v;

	if (!l)
		return 0;
	memset(&k, 0, sizeof(k));
	k.op = key->op;
	names_of(&k.names, l);
	v = value_of(val, NULL, as[view - VIEW_SYSCALL]);
	return fn(arg, &k, &v);
}

/*
 * One series' entry (two for untimed: the device view's, then the total's);
 * span: where its slots may be non-zero (NULL: not known); l: its
 * workload's label set, for the workload views. The metrics borrow val's
 * slots until the scrape is written: val must outlive the call.
 */
static int series_entry(const struct iolat_key *key, const struct iolat_val *val,
			const struct histo_span *span, const struct wl_label *l, enum view view,
			usource_fn fn, void *arg)
{
	struct builtin_block_key k = { key->dev, key->op, key->size_class, 0 };
	struct builtin_untimed_key u = { key->dev, key->op, key->size_class, 0, 0 };
	struct uvalue v;
	int rc;

	if (view >= VIEW_WORKLOAD)
		return workload_entry(key, val, span, l, (enum view)(view - VIEW_WORKLOAD), fn,
				      arg);
	if (view != VIEW_UNTIMED) {
		v = value_of(val, span, view);
		return fn(arg, &k, &v);
	}
	v = (struct uvalue){ .u64 = val->lat[IOLAT_VIEW_DEVICE].unseen };
	rc = fn(arg, &u, &v);
	if (rc)
		return rc;
	u.view = 1;
	v.u64 = val->lat[IOLAT_VIEW_TOTAL].unseen;
	return fn(arg, &u, &v);
}

/*
 * Testing (--test.synthetic-disks): fake disks with a fixed spread, to
 * measure large scrapes. Their numbers (major 4095) name no real disk, so
 * they show as "4095:N".
 */
static int synthetic_entries(const struct builtin_views *bv, enum view view, usource_fn fn,
			     void *arg)
{
	/*
	 * Process-wide, a one-time constant: every fake disk has these values,
	 * and the metrics borrow its slots until the scrape is written, so it
	 * outlives this call. Filled on the first call, never changed after.
	 */
	static struct iolat_val spread;
	struct iolat_key key = {};
	int rc = 0;

	if (!spread.ios) {
		for (size_t i = 0; i < IOLAT_LAT_SLOTS; i += 7) {
			spread.lat[0].slots[i] = spread.lat[1].slots[i] = i + 1;
			/* Each view's count is the sum of its slots, as histo_fold's. */
			spread.lat[0].count += i + 1;
			spread.lat[1].count += i + 1;
		}
		spread.ios = 1000;
		spread.size_slots[100] = 1000;
	}
	for (unsigned int d = 0; !rc && d < bv->synthetic; d++)
		for (int op = 0; !rc && op < 2; op++) {
			key.dev = (4095u << 20) | d;
			key.op = (__u8)op;
			rc = series_entry(&key, &spread, NULL, NULL, view, fn, arg);
		}
	return rc;
}

/*
 * Zero series of reads and writes for every disk known to be there, so an
 * idle disk's rate is 0, not missing. Reads and writes only: every disk
 * with a medium can do both, while a flush or a discard series would claim
 * a write cache or discard support the disk may not have.
 */
static int known_entries(const struct builtin_views *bv, enum view view, usource_fn fn, void *arg)
{
	static const struct iolat_val zero; /* outlives the scrape, as spread does */
	struct iolat_key key = {};
	int rc = 0;

	for (size_t d = 0; !rc && d < bv->nknown; d++)
		for (int op = IOLAT_OP_READ; !rc && op <= IOLAT_OP_WRITE; op++) {
			key.dev = bv->known_devs[d];
			key.op = (__u8)op;
			rc = series_entry(&key, &zero, NULL, NULL, view, fn, arg);
		}
	return rc;
}

static int views_read(void *ctx, const struct umap *m, usource_fn fn, void *arg, char *err,
		      size_t errlen)
{
	const struct builtin_views *bv = ctx;
	enum view view = (enum view)m->m.fd;
	int rc = 0;

	(void)err;
	(void)errlen;
	if (view >= VIEW_SYSCALL) {
		for (size_t i = 0; !rc && bv->sys && bv->sys_labels && i < bv->sys->n; i++)
			rc = syscall_entry(&bv->sys->s[i].key, &bv->sys->s[i].val,
					   bv->sys_labels[i], view, fn, arg);
		return rc;
	}
	if (view >= VIEW_WORKLOAD && !bv->labels)
		return 0;
	for (size_t i = 0; !rc && bv->snap && i < bv->snap->n; i++)
		rc = series_entry(&bv->snap->s[i].key, &bv->snap->s[i].val, bv->snap->s[i].span,
				  bv->labels ? bv->labels[i] : NULL, view, fn, arg);
	if (!rc && view < VIEW_WORKLOAD)
		rc = synthetic_entries(bv, view, fn, arg);
	if (!rc && view < VIEW_WORKLOAD)
		rc = known_entries(bv, view, fn, arg);
	return rc;
}

static const struct bucket_table *views_table(void *ctx, enum ubucket_type t)
{
	const struct builtin_views *bv = ctx;

	switch (t) {
	case UBUCKET_IOLAT_LATENCY:
	case UBUCKET_IOLAT_WORKLOAD_LATENCY:
		return bv->lat;
	case UBUCKET_IOLAT_SIZE:
		return bv->size;
	default:
		return NULL;
	}
}

static const uint64_t *views_le(void *ctx, enum ubucket_type t, size_t *n)
{
	const struct builtin_views *bv = ctx;

	switch (t) {
	case UBUCKET_IOLAT_LATENCY:
		*n = bv->nlat_le;
		return bv->lat_le;
	case UBUCKET_IOLAT_WORKLOAD_LATENCY:
		*n = bv->nwl_lat_le;
		return bv->wl_lat_le;
	default:
		*n = bv->nsize_le;
		return bv->size_le;
	}
}

void builtin_views_source(struct builtin_views *v, struct usource *out)
{
	*out = (struct usource){
		.ctx = v, .map = views_map, .read = views_read, .table = views_table, .le = views_le
	};
}
