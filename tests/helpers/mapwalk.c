// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mapwalk.c - the floor of a map read: walks one BPF map with
 * BPF_MAP_LOOKUP_BATCH as a bare reader would (buffers sized once for the
 * whole map, every value summed, nothing else) and prints the time per
 * walk, so bench/userprogs.sh can set iolat's scrape beside it.
 *
 * Usage: mapwalk [-n WALKS] [-b FIRST] MAP
 * MAP: id:ID, pid:PID:NAME (the map named NAME that process PID holds
 * open), or a pinned map's path.
 * Prints one line: "walks N entries E median_ns M min_ns L sum S".
 *
 * -b FIRST walks through iolat's own walker instead (core/mapbatch.c), its
 * buffers starting at FIRST entries, so a test can hold it to the bare walk
 * (the same entries and sum) and see it grow at a hash bucket bigger than
 * its buffers; the line then ends "chunk C" (entries its buffers hold at
 * the end), or is "refused" when the kernel has no batch lookups for the
 * map (exit 0: the callers fall back).
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/mapbatch.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Map id of process fd `fdinfo` (a /proc/PID/fdinfo/N path), or 0. */
static uint32_t fdinfo_map_id(const char *fdinfo)
{
	FILE *f = fopen(fdinfo, "r");
	char line[256];
	unsigned id = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "map_id: %u", &id) == 1)
			break;
	fclose(f);
	return id;
}

/* An fd of the map called name among those process pid holds, or -1. */
static int open_by_pid(const char *pid, const char *name)
{
	char dir[64], path[128];
	struct dirent *e;
	DIR *d;
	int fd = -1;

	snprintf(dir, sizeof(dir), "/proc/%s/fdinfo", pid);
	d = opendir(dir);
	if (!d)
		return -1;
	while (fd < 0 && (e = readdir(d))) {
		struct bpf_map_info info = { 0 };
		uint32_t len = sizeof(info), id;

		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		id = e->d_name[0] != '.' ? fdinfo_map_id(path) : 0;
		if (!id || (fd = bpf_map_get_fd_by_id(id)) < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &len) || strcmp(info.name, name)) {
			close(fd);
			fd = -1;
		}
	}
	closedir(d);
	return fd;
}

static int open_map(const char *spec)
{
	char pid[32];
	const char *colon;

	if (!strncmp(spec, "id:", 3))
		return bpf_map_get_fd_by_id((uint32_t)strtoul(spec + 3, NULL, 10));
	if (!strncmp(spec, "pid:", 4) && (colon = strchr(spec + 4, ':')) &&
	    (size_t)(colon - spec - 4) < sizeof(pid)) {
		snprintf(pid, sizeof(pid), "%.*s", (int)(colon - spec - 4), spec + 4);
		return open_by_pid(pid, colon + 1);
	}
	return bpf_obj_get(spec);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* One walk of the whole map: entries seen, or -errno. Adds every value's
 * 64-bit words into *sum, as a reader that uses them would touch them. */
static long walk(int fd, const struct bpf_map_info *info, void *keys, uint64_t *vals, size_t vwords,
		 uint64_t *sum)
{
	uint64_t in = 0, out = 0;
	long total = 0;
	int first = 1;

	for (;;) {
		LIBBPF_OPTS(bpf_map_batch_opts, opts);
		uint32_t count = info->max_entries;
		int e =
		    bpf_map_lookup_batch(fd, first ? NULL : &in, &out, keys, vals, &count, &opts)
			? errno
			: 0;

		if (e && e != ENOENT)
			return -e;
		for (size_t i = 0; i < (size_t)count * vwords; i++)
			*sum += vals[i];
		total += count;
		if (e == ENOENT)
			return total;
		in = out;
		first = 0;
	}
}

/* mapbatch_walk's callback: sums the value's 64-bit words, counts the entry. */
struct sum_walk {
	size_t vwords;
	uint64_t *sum;
	long entries;
};

static int sum_entry(void *arg, const void *key, const void *value)
{
	struct sum_walk *w = arg;
	uint64_t x;

	(void)key;
	for (size_t i = 0; i < w->vwords; i++) {
		memcpy(&x, (const unsigned char *)value + i * 8, sizeof(x));
		*w->sum += x;
	}
	w->entries++;
	return 0;
}

/* One walk through iolat's walker: entries seen, or -errno. */
static long walk_iolat(struct mapbatch *b, int fd, const struct bpf_map_info *info, size_t vwords,
		       uint64_t *sum)
{
	const struct mapbatch_map m = { .fd = fd,
					.key_size = info->key_size,
					.max_entries = info->max_entries,
					.val_size = vwords * 8 };
	struct sum_walk w = { .vwords = vwords, .sum = sum };
	int rc = mapbatch_walk(b, &m, sum_entry, &w);

	return rc < 0 ? rc : w.entries;
}

/* One map and the way it is walked: bare (keys, vals) or iolat's walker. */
struct walker {
	int fd;
	struct bpf_map_info info;
	size_t vwords;
	void *keys;
	uint64_t *vals;
	bool iolat;
	struct mapbatch batch;
};

static long walk_once(struct walker *w, uint64_t *sum)
{
	if (w->iolat)
		return walk_iolat(&w->batch, w->fd, &w->info, w->vwords, sum);
	return walk(w->fd, &w->info, w->keys, w->vals, w->vwords, sum);
}

static int usage(void)
{
	fprintf(stderr, "usage: mapwalk [-n WALKS] [-b FIRST] MAP\n");
	return 2;
}

/* Opens MAP and sizes the bare walk's buffers for the whole map. */
static int open_walker(struct walker *w, const char *spec)
{
	uint32_t len = sizeof(w->info);

	w->fd = open_map(spec);
	if (w->fd < 0 || bpf_obj_get_info_by_fd(w->fd, &w->info, &len)) {
		fprintf(stderr, "mapwalk: cannot open map %s: %s\n", spec,
			strerror(errno ? errno : ENOENT));
		return -1;
	}
	w->vwords = (w->info.value_size + 7) / 8;
	if (w->info.type == BPF_MAP_TYPE_PERCPU_HASH ||
	    w->info.type == BPF_MAP_TYPE_LRU_PERCPU_HASH ||
	    w->info.type == BPF_MAP_TYPE_PERCPU_ARRAY)
		w->vwords *= (size_t)libbpf_num_possible_cpus();
	/* Sized once, and touched before the first walk: no page faults timed. */
	w->keys = calloc(w->info.max_entries, w->info.key_size);
	w->vals = calloc(w->info.max_entries, w->vwords * 8);
	if (!w->keys || !w->vals) {
		fprintf(stderr, "mapwalk: out of memory\n");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct walker w = { 0 };
	int walks = 20, opt, first = 0;
	uint64_t *ns, sum = 0;
	long n;

	while ((opt = getopt(argc, argv, "n:b:")) != -1) {
		if (opt == 'n' && (walks = atoi(optarg)) >= 1)
			continue;
		if (opt == 'b' && (first = atoi(optarg)) >= 1)
			continue;
		return usage();
	}
	if (optind != argc - 1)
		return usage();
	w.iolat = first > 0;
	w.batch.first_chunk = (uint32_t)first;
	ns = calloc((size_t)walks, sizeof(*ns));
	if (!ns || open_walker(&w, argv[optind]))
		return 1;
	n = walk_once(&w, &sum);
	for (int i = 0; n >= 0 && !w.batch.refused && i < walks; i++) {
		uint64_t t0 = now_ns();

		n = walk_once(&w, &sum);
		ns[i] = now_ns() - t0;
	}
	if (n < 0) {
		fprintf(stderr, "mapwalk: batch lookup on %s: %s\n", w.info.name,
			strerror((int)-n));
		return 1;
	}
	qsort(ns, (size_t)walks, sizeof(*ns), cmp_u64);
	if (w.batch.refused) {
		printf("refused\n");
	} else {
		printf("walks %d entries %ld median_ns %llu min_ns %llu sum %llu", walks, n,
		       (unsigned long long)ns[walks / 2], (unsigned long long)ns[0],
		       (unsigned long long)sum);
		if (w.iolat)
			printf(" chunk %u", w.batch.chunk);
		printf("\n");
	}
	mapbatch_free(&w.batch);
	free(w.keys);
	free(w.vals);
	free(ns);
	close(w.fd);
	return 0;
}
