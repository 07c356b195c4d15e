// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* mapmem.c - kernel memory of a BPF map from its definition (mapmem.h). */
#include "core/mapmem.h"

#include <linux/bpf.h>

/*
 * The kernel's per-element and per-map overheads on 64-bit, as its
 * map_mem_usage callbacks count them (6.4+):
 * - hash maps: struct htab_elem (48 bytes: the list node, the LRU node or
 *   per-CPU pointer, the hash) before each key; a 16-byte bucket (list head
 *   and lock) per power-of-two slot; 8 lock counters (ints) per CPU; and
 *   for the plain (non-LRU, non-per-CPU) hash, one spare element and its
 *   pointer per CPU, for updates that must not fail in a tracing program.
 * - arrays: one rounded value per entry (per CPU for per-CPU arrays, with a
 *   pointer per entry); global data (mmapable) rounded up to pages, and a
 *   page for the array's header, which shares the mapping.
 * - ring buffers: the data pages and three pages of positions and header.
 * Each map's own header (struct bpf_htab and the like, under 1 KiB) is
 * left out: the figures fall short of the kernel's by that much a map.
 */
#define HTAB_ELEM_BYTES 48
#define HTAB_BUCKET_BYTES 16
#define HTAB_LOCK_COUNT 8
#define PAGE_BYTES 4096ULL

static uint64_t round_up(uint64_t v, uint64_t to)
{
	return (v + to - 1) / to * to;
}

static uint64_t pow2_at_least(uint64_t v)
{
	uint64_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

static uint64_t hash_bytes(const struct map_def *m, uint64_t cpus)
{
	bool percpu =
	    m->type == BPF_MAP_TYPE_PERCPU_HASH || m->type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
	bool lru = m->type == BPF_MAP_TYPE_LRU_HASH || m->type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
	uint64_t value = round_up(m->value_size, 8);
	uint64_t elem = HTAB_ELEM_BYTES + round_up(m->key_size, 8) + (percpu ? 8 : value);
	uint64_t entries = m->max_entries, bytes;

	if (!percpu && !lru)
		entries += cpus; /* the spare elements */
	bytes = HTAB_BUCKET_BYTES * pow2_at_least(m->max_entries);
	bytes += sizeof(int) * HTAB_LOCK_COUNT * cpus;
	bytes += elem * entries;
	if (percpu)
		bytes += value * cpus * entries;
	else if (!lru)
		bytes += sizeof(void *) * cpus;
	return bytes;
}

uint64_t mapmem_bytes(const struct map_def *m, int ncpus)
{
	uint64_t cpus = ncpus > 0 ? (uint64_t)ncpus : 1;
	uint64_t value = round_up(m->value_size, 8);

	switch (m->type) {
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
		return hash_bytes(m, cpus);
	case BPF_MAP_TYPE_ARRAY:
		if (m->mmapable)
			return round_up(value * m->max_entries, PAGE_BYTES) + PAGE_BYTES;
		return value * m->max_entries;
	case BPF_MAP_TYPE_PERCPU_ARRAY:
		return (value * cpus + sizeof(void *)) * m->max_entries;
	case BPF_MAP_TYPE_RINGBUF:
		return m->max_entries + 3 * PAGE_BYTES;
	default:
		return 0;
	}
}
