// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* systimes.c - load, attach and read the system-call service times (systimes.h). */
#include "core/systimes.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/percpu.h"
#include "sys/workload.h"
#include "sysio.h"
#include "sysio.skel.h"
#include "util/parse.h"
#include "util/verifier_log.h"

struct systimes {
	struct sysio_bpf *skel;
};

/* Writes the settings into the object's read-only data, before load. */
static void configure(struct sysio_bpf *skel, const struct systimes_opts *o)
{
	struct sysio_bpf__rodata *ro = skel->rodata;

	memcpy((void *)ro->lat_bounds, o->lat->bound, sizeof(ro->lat_bounds));
	buckets_cells(o->lat, (uint32_t *)ro->lat_cells);
	ro->filter_cgroup = o->filter_cgroup;
	ro->filter_cgroup_level = o->filter_cgroup_level;
	ro->key_process = o->key_process;
	bpf_map__set_max_entries(skel->maps.sysio_hists,
				 o->max_keys ? o->max_keys : SYSTIMES_MAX_KEYS_DEFAULT);
}

int systimes_test_knobs(struct systimes_opts *o, char *(*env)(const char *name), char *err,
			size_t len)
{
	const char *m = env("IOLAT_TEST_SYSCALL_KEYS");
	uint64_t n;

	if (!m)
		return 0;
	if (parse_uint(m, 1, 65536, &n)) {
		snprintf(err, len, "IOLAT_TEST_SYSCALL_KEYS: want 1 to 65536 keys, got '%s'", m);
		return -EINVAL;
	}
	o->max_keys = (uint32_t)n;
	return 0;
}

int systimes_open(struct systimes **out, const struct systimes_opts *o, char *err, size_t len)
{
	struct systimes *s = calloc(1, sizeof(*s));
	int rc;

	if (!s) {
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	s->skel = sysio_bpf__open();
	if (!s->skel) {
		rc = -errno;
		snprintf(err, len, "cannot open the system call programs: %s", strerror(-rc));
		goto fail;
	}
	configure(s->skel, o);
	rc = sysio_bpf__load(s->skel);
	if (rc) {
		char why[400];

		snprintf(err, len, "loading the system call programs failed: %s%s", strerror(-rc),
			 verifier_log_reason(why, sizeof(why)));
		goto fail;
	}
	/* libbpf finds each tracepoint's id in tracefs. */
	rc = sysio_bpf__attach(s->skel);
	if (rc) {
		snprintf(err, len,
			 "cannot attach to the system call tracepoints (syscalls:sys_enter_pread64 "
			 "and the others): %s; they need a kernel with CONFIG_FTRACE_SYSCALLS and "
			 "tracefs mounted (mount -t tracefs nodev /sys/kernel/tracing)",
			 strerror(-rc));
		goto fail;
	}
	*out = s;
	return 0;
fail:
	systimes_close(s);
	return rc;
}

void systimes_close(struct systimes *s)
{
	if (!s)
		return;
	sysio_bpf__destroy(s->skel);
	free(s);
}

/* One kernel series into snap's next one. */
static int add_series(struct snapshot *snap, const struct sysio_key *k, const struct sysio_val *v)
{
	struct iolat_key key = { .cgroup = k->cgroup, .op = k->op };
	struct series *s = snapshot_push(snap, &key);
	struct iolat_lat *l;

	if (!s)
		return -ENOMEM;
	l = &s->val.lat[IOLAT_VIEW_DEVICE];
	s->val.ios = v->calls;
	s->val.bytes = v->bytes;
	s->val.errors = v->errors;
	l->count = v->calls;
	l->sum_ns = v->sum_ns;
	l->max_ns = v->max_ns;
	memcpy(l->slots, v->slots, sizeof(l->slots));
	return 0;
}

int systimes_read(struct systimes *s, struct snapshot *snap)
{
	int fd = bpf_map__fd(s->skel->maps.sysio_hists);
	struct sysio_key key, next;
	struct sysio_val *val = malloc(sizeof(*val));
	const void *prev = NULL;
	int rc = 0;

	if (!val)
		return -ENOMEM;
	snap->n = 0;
	/* A few hundred keys at most: one lookup each is cheap enough. */
	while (!rc && !bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, val))
			continue; /* removed meanwhile (systimes_forget) */
		rc = add_series(snap, &key, val);
	}
	free(val);
	return rc;
}

uint64_t systimes_lost(struct systimes *s)
{
	uint64_t sum = 0;
	int ncpus = libbpf_num_possible_cpus();

	if (ncpus > 0)
		percpu_array_sums(bpf_map__fd(s->skel->maps.sysio_full), ncpus, &sum, 1);
	return sum;
}

int systimes_forget(struct systimes *s, const struct iolat_key *k)
{
	struct sysio_key key = { .cgroup = k->cgroup, .op = k->op };

	if (bpf_map_delete_elem(bpf_map__fd(s->skel->maps.sysio_hists), &key))
		return -errno;
	return 0;
}

int systimes_forget_gone(struct systimes *s, const struct snapshot *now,
			 const struct snapshot *before, struct workload_cache *names)
{
	for (size_t i = 0; i < now->n; i++) {
		const struct series *n = &now->s[i], *old = snapshot_find(before, &n->key);
		int rc;

		if (!old || old->val.ios != n->val.ios || n->key.cgroup & IOLAT_KEY_PROCESS ||
		    workload_alive(names, n->key.cgroup))
			continue;
		rc = systimes_forget(s, &n->key);
		if (rc && rc != -ENOENT)
			return rc;
	}
	return 0;
}
