// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* handover_bounds.c - a pinned collector's slot bounds and their map to ours (handover_bounds.h).
 */
#include "core/handover_bounds.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Where the variable `name` lies in a data section's value; -ENOENT. */
static int var_at(const struct btf *btf, const struct btf_type *sec, const char *name,
		  size_t want_size, size_t *off)
{
	const struct btf_var_secinfo *vi = btf_var_secinfos(sec);

	for (int i = 0; i < btf_vlen(sec); i++, vi++) {
		const struct btf_type *v = btf__type_by_id(btf, vi->type);

		if (v && !strcmp(btf__name_by_offset(btf, v->name_off), name)) {
			if (vi->size != want_size)
				return -ENOENT;
			*off = vi->offset;
			return 0;
		}
	}
	return -ENOENT;
}

/* The two arrays from one read-only data map (its info in mi). */
static int read_rodata(int map_fd, const struct bpf_map_info *mi, uint64_t *lat, uint64_t *size)
{
	struct btf *btf = btf__load_from_kernel_by_id(mi->btf_id);
	const struct btf_type *sec = btf ? btf__type_by_id(btf, mi->btf_value_type_id) : NULL;
	size_t lat_off, size_off;
	__u32 zero = 0;
	char *val = NULL;
	int rc = -ENOENT;

	if (sec && btf_is_datasec(sec) &&
	    !var_at(btf, sec, "lat_bounds", IOLAT_LAT_SLOTS * sizeof(*lat), &lat_off) &&
	    !var_at(btf, sec, "size_bounds", IOLAT_SIZE_SLOTS * sizeof(*size), &size_off) &&
	    (val = malloc(mi->value_size))) {
		rc = bpf_map_lookup_elem(map_fd, &zero, val) ? -errno : 0;
		if (!rc) {
			memcpy(lat, val + lat_off, IOLAT_LAT_SLOTS * sizeof(*lat));
			memcpy(size, val + size_off, IOLAT_SIZE_SLOTS * sizeof(*size));
		}
	}
	free(val);
	btf__free(btf);
	return rc;
}

/* The maps of the program behind a link: their ids (at most max), or -errno. */
static int prog_map_ids(int link_fd, __u32 *ids, __u32 max)
{
	struct bpf_link_info li = {};
	struct bpf_prog_info pi = {};
	__u32 len = sizeof(li), plen = sizeof(pi);
	int fd, rc = 0;

	if (bpf_obj_get_info_by_fd(link_fd, &li, &len))
		return -errno;
	fd = bpf_prog_get_fd_by_id(li.prog_id);
	if (fd < 0)
		return -errno;
	pi.nr_map_ids = max;
	pi.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(fd, &pi, &plen))
		rc = -errno;
	close(fd);
	return rc ? rc : (int)(pi.nr_map_ids < max ? pi.nr_map_ids : max);
}

int handover_bounds_read(int link_fd, uint64_t lat[IOLAT_LAT_SLOTS],
			 uint64_t size[IOLAT_SIZE_SLOTS])
{
	__u32 ids[64];
	int n = prog_map_ids(link_fd, ids, 64), rc = -ENOENT;

	for (int i = 0; i < n && rc == -ENOENT; i++) {
		struct bpf_map_info mi = {};
		__u32 len = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(ids[i]);
		const char *dot;

		if (fd < 0)
			continue;
		/* libbpf names it after the object, cut to fit: "iolat_bp.rodata". */
		if (!bpf_obj_get_info_by_fd(fd, &mi, &len) && (dot = strrchr(mi.name, '.')) &&
		    !strcmp(dot, ".rodata") && mi.btf_id)
			rc = read_rodata(fd, &mi, lat, size);
		close(fd);
	}
	return n < 0 ? n : rc;
}

/* Each of its n slots to the one of ours holding its upper bound (its
 * padding bounds, UINT64_MAX, to our overflow slot). */
static void map_table(uint16_t *map, const uint64_t *theirs, size_t n, const struct bucket_table *t)
{
	for (size_t i = 0; i < n; i++)
		map[i] = (uint16_t)buckets_slot_of(t, theirs[i]);
}

void handover_bounds_map(struct handover_slot_map *m, const uint64_t lat[IOLAT_LAT_SLOTS],
			 const uint64_t size[IOLAT_SIZE_SLOTS], const struct bucket_table *our_lat,
			 const struct bucket_table *our_size)
{
	map_table(m->lat, lat, IOLAT_LAT_SLOTS, our_lat);
	map_table(m->size, size, IOLAT_SIZE_SLOTS, our_size);
}

/* Moves n counts by map, in place (tmp: scratch of n). */
static void move_slots(__u64 *slots, const uint16_t *map, size_t n, __u64 *tmp)
{
	memset(tmp, 0, n * sizeof(*tmp));
	for (size_t i = 0; i < n; i++)
		tmp[map[i]] += slots[i];
	memcpy(slots, tmp, n * sizeof(*tmp));
}

void handover_bounds_apply(const struct handover_slot_map *m, struct iolat_val *v)
{
	__u64 tmp[IOLAT_LAT_SLOTS];

	for (int view = 0; view < IOLAT_VIEW_COUNT; view++)
		move_slots(v->lat[view].slots, m->lat, IOLAT_LAT_SLOTS, tmp);
	move_slots(v->size_slots, m->size, IOLAT_SIZE_SLOTS, tmp);
}
