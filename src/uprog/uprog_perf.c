// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* uprog_perf.c - perf-event programs attached on every CPU (uprog_perf.h). */
#define _GNU_SOURCE
#include "uprog/uprog_perf.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/buf.h"

static int perf_open(const struct uperf_conf *pe, int cpu)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = pe->type;
	attr.config = pe->config;
	if (pe->sample_freq) {
		attr.freq = 1;
		attr.sample_freq = pe->sample_freq;
	} else {
		attr.sample_period = pe->sample_period;
	}
	return (int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static int add_link(struct perf_links *l, struct bpf_link *link)
{
	if (array_make_room((void **)&l->link, &l->cap, l->n, sizeof(*l->link), 8))
		return -ENOMEM;
	l->link[l->n++] = link;
	return 0;
}

int uprog_perf_attach(struct bpf_program *prog, const struct uperf_conf *pe, struct perf_links *out,
		      char *err, size_t errlen)
{
	int ncpus = libbpf_num_possible_cpus();

	for (int cpu = 0; cpu < ncpus; cpu++) {
		struct bpf_link *link;
		int fd = perf_open(pe, cpu), e;

		if (fd < 0 && errno == ENODEV)
			continue; /* a possible CPU that is not online */
		if (fd < 0) {
			e = errno;
			snprintf(err, errlen,
				 "perf event of program %s (type %u, event %llu): %s%s",
				 bpf_program__name(prog), pe->type, (unsigned long long)pe->config,
				 strerror(e),
				 e == ENOENT || e == EOPNOTSUPP
				     ? " (this machine does not have that event: virtual "
				       "machines often lack hardware counters; software "
				       "cpu-clock works everywhere)"
				     : "");
			return -e;
		}
		link = bpf_program__attach_perf_event(prog, fd);
		if (!link || add_link(out, link)) {
			e = link ? ENOMEM : errno;
			if (link)
				bpf_link__destroy(link);
			else
				close(fd);
			snprintf(err, errlen, "cannot attach program %s to its perf event: %s",
				 bpf_program__name(prog), strerror(e));
			return e ? -e : -EINVAL;
		}
	}
	return 0;
}

void perf_links_destroy(struct perf_links *l)
{
	for (size_t i = 0; i < l->n; i++)
		bpf_link__destroy(l->link[i]);
	free(l->link);
	memset(l, 0, sizeof(*l));
}
