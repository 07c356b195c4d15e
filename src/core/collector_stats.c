// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* collector_stats.c - the collector's own statistics: its event counters,
 * its programs' run stats and its maps' occupancy (collector.h).
 */

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/collector_internal.h"
#include "core/percpu.h"

bool collector_stat_map(const struct collector *c, enum iolat_stat s, struct map_stats *out,
			const char **lost)
{
	const struct bpf_map *m;

	switch (s) {
	case IOLAT_STAT_HIST_FULL:
		m = c->hists;
		*lost = "I/O of a disk, operation or workload not in it yet is not counted";
		break;
	case IOLAT_STAT_RQMAP_FULL:
		m = c->skel->maps.rq_starts;
		*lost = "requests whose times it lost are counted but not timed";
		break;
	case IOLAT_STAT_BIOMAP_FULL:
		m = c->skel->maps.bio_starts;
		*lost = "bios it could not hold are not counted";
		break;
	default:
		return false;
	}
	snprintf(out->name, sizeof(out->name), "%s", bpf_map__name(m));
	out->capacity = bpf_map__max_entries(m);
	out->entries = 0;
	return true;
}

int collector_stats(struct collector *c, uint64_t out[IOLAT_STAT_COUNT])
{
	uint64_t handed[IOLAT_STAT_COUNT];
	int rc =
	    percpu_array_sums(bpf_map__fd(c->skel->maps.stats), c->ncpus, out, IOLAT_STAT_COUNT);

	collector_handed_stats(c, handed);
	for (int i = 0; !rc && i < IOLAT_STAT_COUNT; i++)
		out[i] += handed[i];
	return rc;
}

uint64_t collector_stat_growth(struct collector *c, enum iolat_stat stat, uint64_t *seen)
{
	uint64_t st[IOLAT_STAT_COUNT], grew;

	if (collector_stats(c, st))
		return 0;
	grew = st[stat] - *seen;
	*seen = st[stat];
	return grew;
}

/* The program link l runs (an adopted link runs the program of the run
 * that attached it, not this run's copy): its info, 0 or -errno. */
static int linked_prog_info(struct bpf_link *l, struct bpf_prog_info *info)
{
	struct bpf_link_info li = {};
	__u32 len = sizeof(li), plen = sizeof(*info);
	int fd, rc = 0;

	if (bpf_obj_get_info_by_fd(bpf_link__fd(l), &li, &len))
		return -errno;
	fd = bpf_prog_get_fd_by_id(li.prog_id);
	if (fd < 0)
		return -errno;
	if (bpf_obj_get_info_by_fd(fd, info, &plen))
		rc = -errno;
	close(fd);
	return rc;
}

/* The selfcost map's slots are the tracepoints' (bpf/iolat.h). */
#define SAME_SLOT(tp, prog) ((int)(tp) == (int)(prog))
_Static_assert(SAME_SLOT(TP_COUNT, IOLAT_PROG_COUNT) &&
		   SAME_SLOT(TP_RQ_COMPLETE, IOLAT_PROG_RQ_COMPLETE) &&
		   SAME_SLOT(TP_RQ_ISSUE, IOLAT_PROG_RQ_ISSUE) &&
		   SAME_SLOT(TP_IO_START, IOLAT_PROG_IO_START) &&
		   SAME_SLOT(TP_RQ_INSERT, IOLAT_PROG_RQ_INSERT) &&
		   SAME_SLOT(TP_BIO_QUEUE, IOLAT_PROG_BIO_QUEUE) &&
		   SAME_SLOT(TP_BIO_COMPLETE, IOLAT_PROG_BIO_COMPLETE),
	       "enum iolat_prog must follow enum probe_tp");

/* What every program measured of itself, summed over CPUs: 0 or -errno. */
static int selfcost_sums(struct collector *c, struct iolat_selfcost out[IOLAT_PROG_COUNT])
{
	_Static_assert(sizeof(struct iolat_selfcost) == 3 * sizeof(uint64_t),
		       "struct iolat_selfcost is three counters");
	uint64_t sums[3];
	int fd = bpf_map__fd(c->skel->maps.selfcost), rc = 0;

	for (__u32 p = 0; p < IOLAT_PROG_COUNT; p++) {
		rc = percpu_slot_sums(fd, p, c->ncpus, sums, 3);
		if (rc)
			return rc;
		out[p] = (struct iolat_selfcost){ sums[0], sums[1], sums[2] };
	}
	return 0;
}

int collector_prog_stats(struct collector *c, struct prog_stats *out, int max)
{
	struct iolat_selfcost self[IOLAT_PROG_COUNT] = {};
	int n = 0;

	/* Without it, the programs' own figures are left 0. */
	(void)selfcost_sums(c, self);
	/* Loaded but not (yet) attached programs cost nothing: only the
	 * attached ones. */
	for (int i = 0; i < TP_COUNT && n < max; i++) {
		struct bpf_prog_info info = {};

		if (!c->prog[i] || !c->link[i] || linked_prog_info(c->link[i], &info))
			continue;
		snprintf(out[n].name, sizeof(out[n].name), "%s", bpf_program__name(c->prog[i]));
		out[n].run_cnt = info.run_cnt;
		out[n].run_time_ns = info.run_time_ns;
		out[n].recursion_misses = info.recursion_misses;
		out[n].self_runs = self[i].runs;
		out[n].sampled_runs = self[i].sampled_runs;
		out[n].sampled_ns = self[i].sampled_ns;
		n++;
	}
	return n;
}

static uint64_t count_keys(int fd, size_t key_size)
{
	char key[64], next[64];
	void *prev = NULL;
	uint64_t n = 0;

	if (key_size > sizeof(key))
		return 0;
	while (bpf_map_get_next_key(fd, prev, next) == 0) {
		memcpy(key, next, key_size);
		prev = key;
		n++;
	}
	return n;
}

int collector_map_stats(struct collector *c, struct map_stats *out, int max)
{
	struct bpf_map *maps[] = { c->hists, c->skel->maps.rq_starts, c->skel->maps.bio_starts,
				   c->skel->maps.comms };
	int n = 0;

	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]) && n < max; i++, n++) {
		snprintf(out[n].name, sizeof(out[n].name), "%s", bpf_map__name(maps[i]));
		out[n].capacity = bpf_map__max_entries(maps[i]);
		/* The histogram map's keys are the live series once a fold has
		 * walked them all: no second walk of thousands of keys. */
		if (maps[i] == c->hists && c->folded_all)
			out[n].entries = c->series.nlive;
		else
			out[n].entries =
			    count_keys(bpf_map__fd(maps[i]), bpf_map__key_size(maps[i]));
	}
	return n;
}
