// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* fake_collector.c - core/collector.h in memory, for unit tests (fake_collector.h). */
#include "fake_collector.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buckets.h"
#include "core/snapshot.h"
#include "core/systimes.h"

struct collector {
	bool keyed_by_cgroup;
	/* The "kernel map": each key's cumulative values since load, as the
	 * real collector's folds of the 32-bit counters add up to. */
	struct snapshot kernel;
	/* As the real collector's: live series (the map's keys at the last
	 * fold) first, then the kept ones (retired cgroups, gone disks). */
	struct snapshot_store series;
	struct bucket_table lat, size;
	uint64_t lat_store[IOLAT_LAT_SLOTS], size_store[IOLAT_SIZE_SLOTS];
	uint64_t stats[IOLAT_STAT_COUNT];
	struct fake_collector_calls calls;
};

struct collector *fake_collector_new(bool keyed_by_cgroup)
{
	struct collector *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->keyed_by_cgroup = keyed_by_cgroup;
	if (buckets_build_latency(&c->lat, c->lat_store, NULL, 0) ||
	    buckets_build_size(&c->size, c->size_store, NULL, 0)) {
		free(c);
		return NULL;
	}
	return c;
}

void fake_collector_free(struct collector *c)
{
	if (!c)
		return;
	snapshot_free(&c->kernel);
	snapshot_store_free(&c->series);
	free(c);
}

int fake_collector_complete(struct collector *c, const struct iolat_key *k, uint64_t bytes,
			    uint64_t lat_ns)
{
	struct series *s = (struct series *)snapshot_find(&c->kernel, k);

	if (!s)
		s = snapshot_push(&c->kernel, k);
	if (!s)
		return -ENOMEM;
	s->val.ios++;
	s->val.bytes += bytes;
	s->val.size_slots[buckets_slot_of(&c->size, bytes)]++;
	for (int v = 0; v < IOLAT_VIEW_COUNT; v++) {
		struct iolat_lat *l = &s->val.lat[v];

		l->count++;
		l->sum_ns += lat_ns;
		if (lat_ns > l->max_ns)
			l->max_ns = lat_ns;
		l->slots[buckets_slot_of(&c->lat, lat_ns)]++;
	}
	return 0;
}

void fake_collector_set_stat(struct collector *c, enum iolat_stat s, uint64_t v)
{
	c->stats[s] = v;
}

void fake_collector_calls(const struct collector *c, struct fake_collector_calls *out)
{
	*out = c->calls;
}

size_t fake_collector_kernel_keys(const struct collector *c)
{
	return c->kernel.n;
}

/* The live series as the map's keys have them now. */
static int fold_into(const struct collector *c, struct snapshot_store *st)
{
	for (size_t i = 0; i < c->kernel.n; i++) {
		struct series *s = snapshot_store_live(st, &c->kernel.s[i].key);

		if (!s)
			return -ENOMEM;
		s->val = c->kernel.s[i].val;
		memset(s->span, 0, sizeof(s->span));
	}
	return 0;
}

int collector_fold(struct collector *c)
{
	c->calls.folds++;
	return fold_into(c, &c->series);
}

int collector_peek(struct collector *c, struct snapshot_store *out)
{
	int rc = snapshot_store_copy(out, &c->series);

	c->calls.peeks++;
	return rc ? rc : fold_into(c, out);
}

const struct snapshot *collector_series(const struct collector *c)
{
	return &c->series.all;
}

/* Takes key k out of the "kernel map" into *out (zeroed first), with its
 * live series: 1, or 0 if the map had no such key. */
static int take_key(struct collector *c, const struct iolat_key *k, struct iolat_val *out)
{
	memset(out, 0, sizeof(*out));
	if (!snapshot_take(&c->kernel, k, out))
		return 0;
	c->calls.map_writes++;
	snapshot_store_unlive(&c->series, k, NULL);
	return 1;
}

int collector_retire(struct collector *c, const struct iolat_key *k, uint64_t into)
{
	struct iolat_key moved = *k;
	struct iolat_val *sum = calloc(1, sizeof(*sum));
	int rc, taken;

	if (!sum)
		return -ENOMEM;
	taken = take_key(c, k, sum);
	if (snapshot_store_unkeep(&c->series, k, sum) || taken) {
		moved.cgroup = into;
		rc = snapshot_store_keep(&c->series, &moved, sum);
	} else {
		rc = 0;
	}
	free(sum);
	return rc;
}

int collector_retire_disk(struct collector *c, uint32_t dev)
{
	struct iolat_val *sum = calloc(1, sizeof(*sum));
	int moved = 0, rc = sum ? 0 : -ENOMEM;

	for (size_t i = 0; !rc && i < c->kernel.n;) {
		struct iolat_key k = c->kernel.s[i].key;

		if (k.dev != dev) {
			i++;
			continue;
		}
		take_key(c, &k, sum); /* the last key takes its place */
		rc = snapshot_store_keep(&c->series, &k, sum);
		moved++;
	}
	free(sum);
	return rc ? rc : moved;
}

int collector_drop_disk(struct collector *c, uint32_t dev)
{
	struct iolat_val *gone = malloc(sizeof(*gone)); /* 10 KiB: not on the stack */
	struct snapshot kept;

	if (!gone)
		return -ENOMEM;
	for (size_t i = 0; i < c->kernel.n;) {
		struct iolat_key k = c->kernel.s[i].key;

		if (k.dev != dev) {
			i++;
			continue;
		}
		take_key(c, &k, gone); /* the last key takes its place */
	}
	free(gone);
	kept = snapshot_store_kept(&c->series);
	snapshot_drop_dev(&kept, dev);
	snapshot_store_kept_done(&c->series, &kept);
	return 0;
}

int collector_refold(struct collector *c, uint64_t from, uint64_t into)
{
	struct snapshot kept = snapshot_store_kept(&c->series);
	int rc = snapshot_refold(&kept, from, into);

	snapshot_store_kept_done(&c->series, &kept);
	return rc;
}

const struct bucket_table *collector_lat_table(const struct collector *c)
{
	return &c->lat;
}

const struct bucket_table *collector_size_table(const struct collector *c)
{
	return &c->size;
}

bool collector_keyed_by_cgroup(const struct collector *c)
{
	return c->keyed_by_cgroup;
}

bool collector_keyed_by_process(const struct collector *c)
{
	(void)c;
	return false;
}

int collector_comm(struct collector *c, uint32_t tgid, char *out, size_t len)
{
	(void)c;
	snprintf(out, len, "pid%u", tgid);
	return 0;
}

enum attach_mode collector_mode(const struct collector *c)
{
	(void)c;
	return ATTACH_TP_BTF;
}

uint64_t collector_started_ns(const struct collector *c)
{
	(void)c;
	return 1700000000ULL * 1000000000ULL;
}

int collector_stats(struct collector *c, uint64_t out[IOLAT_STAT_COUNT])
{
	memcpy(out, c->stats, sizeof(c->stats));
	return 0;
}

int collector_prog_stats(struct collector *c, struct prog_stats *out, int max)
{
	(void)c, (void)out, (void)max;
	return 0;
}

void collector_hist_map(const struct collector *c, struct hist_map_info *out)
{
	*out = (struct hist_map_info){ .name = c->keyed_by_cgroup ? "hists_shared" : "hists",
				       .keys = 64,
				       .values_per_key = 1,
				       .value_bytes = sizeof(struct iolat_kval) };
}

int collector_map_stats(struct collector *c, struct map_stats *out, int max)
{
	struct hist_map_info h;

	if (max < 1)
		return 0;
	collector_hist_map(c, &h);
	snprintf(out[0].name, sizeof(out[0].name), "%s", h.name);
	out[0].entries = c->kernel.n;
	out[0].capacity = h.keys;
	return 1;
}

bool collector_stat_map(const struct collector *c, enum iolat_stat s, struct map_stats *out,
			const char **lost)
{
	struct hist_map_info h;

	if (s != IOLAT_STAT_HIST_FULL)
		return false;
	collector_hist_map(c, &h);
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", h.name);
	out->capacity = h.keys;
	*lost = "I/O of a disk, operation or workload not in it yet is not counted";
	return true;
}

/* core/systimes.h has no in-memory form: the exporter's tests run without
 * the system-call families, which a real kernel's tests cover
 * (tests/integration/test_vm_syscalls.sh). Opening them fails as a kernel
 * without the tracepoints would. */
int systimes_test_knobs(struct systimes_opts *o, char *(*env)(const char *name), char *err,
			size_t len)
{
	(void)o;
	(void)env;
	(void)err;
	(void)len;
	return 0;
}

int systimes_open(struct systimes **out, const struct systimes_opts *o, char *err, size_t len)
{
	(void)o;
	*out = NULL;
	snprintf(err, len, "no system call programs in unit tests");
	return -EOPNOTSUPP;
}

uint64_t systimes_lost(struct systimes *s)
{
	(void)s;
	return 0;
}

void systimes_close(struct systimes *s)
{
	(void)s;
}

int systimes_read(struct systimes *s, struct snapshot *snap)
{
	(void)s;
	snap->n = 0;
	return 0;
}

int systimes_forget_gone(struct systimes *s, const struct snapshot *now,
			 const struct snapshot *before, struct workload_cache *names)
{
	(void)s;
	(void)now;
	(void)before;
	(void)names;
	return 0;
}
