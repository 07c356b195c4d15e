/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * uprog_perf.h - attaches a user's SEC("perf_event") program to a perf
 * event (a CPU clock, page faults, a hardware counter), opened on every
 * CPU, as its config's perf_events section says (uconfig_perf.h).
 */
#ifndef IOLAT_UPROG_PERF_H
#define IOLAT_UPROG_PERF_H

#include <stddef.h>

#include <bpf/libbpf.h>

#include "uprog/uconfig.h"

/* The links made, one per CPU; the caller destroys them. */
struct perf_links {
	struct bpf_link **link;
	size_t n, cap;
};

/*
 * Opens the event of pe on every CPU and attaches prog to each. 0, or
 * -errno with one line in err (the event not available here, or not allowed);
 * the links made before a failure stay in *out, for the caller to destroy.
 */
int uprog_perf_attach(struct bpf_program *prog, const struct uperf_conf *pe, struct perf_links *out,
		      char *err, size_t errlen);

void perf_links_destroy(struct perf_links *l);

#endif
