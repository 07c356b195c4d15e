// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* percpu.c - per-CPU array counters summed over the CPUs (percpu.h). */
#include "core/percpu.h"

#include <errno.h>
#include <stdlib.h>

#include <bpf/bpf.h>

int percpu_array_sums(int fd, int ncpus, uint64_t *out, uint32_t n)
{
	uint64_t *vals = calloc((size_t)(ncpus > 0 ? ncpus : 1), sizeof(*vals));

	if (!vals)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		out[i] = 0;
		if (bpf_map_lookup_elem(fd, &i, vals))
			continue;
		for (int cpu = 0; cpu < ncpus; cpu++)
			out[i] += vals[cpu];
	}
	free(vals);
	return 0;
}

int percpu_slot_sums(int fd, uint32_t key, int ncpus, uint64_t *out, uint32_t words)
{
	uint64_t *vals = calloc((size_t)(ncpus > 0 ? ncpus : 1) * words, sizeof(*vals));
	int rc = 0;

	for (uint32_t w = 0; w < words; w++)
		out[w] = 0;
	if (!vals)
		return -ENOMEM;
	if (bpf_map_lookup_elem(fd, &key, vals))
		rc = -errno;
	for (int cpu = 0; !rc && cpu < ncpus; cpu++)
		for (uint32_t w = 0; w < words; w++)
			out[w] += vals[(size_t)cpu * words + w];
	free(vals);
	return rc;
}
