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
