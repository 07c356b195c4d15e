/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * config.h - `iolat serve` settings: built-in defaults, then the YAML file
 * (--config.file), then command-line flags. The file can say everything the
 * flags can; SIGHUP reads it again.
 *
 *   web:
 *     listen_addresses: [":9617"]
 *     telemetry_path: /metrics
 *     config_file: /etc/iolat/web.yml     # TLS and basic auth
 *   views:
 *     device_time: true                   # iolat_block_device_latency_seconds
 *     total_time: true                    # iolat_block_total_latency_seconds
 *     request_size: true                  # iolat_block_request_size_bytes
 *   buckets:
 *     latency_seconds: [0.0001, 0.001, 0.01, 0.1, 1]
 *     size_bytes: [4096, 65536, 1048576]
 *   labels:
 *     op: true                            # false: one series per disk, all ops summed
 *     size_class: false                   # true: a size label, <=4KiB ... >1MiB
 *   workloads:                            # iolat_workload_* series per VM/pod/...
 *     enabled: true
 *     by: cgroup                          # or process: COMM[PID] of the submitter
 *     max: 500                            # label sets; past it: workload="other"
 *     expire: 5m                          # a gone workload's series stay this long
 *     rules:                              # tried before the built-in names
 *       - match: '^/tenants/([^/]+)'      # POSIX extended regexp on the cgroup path
 *         kind: tenant
 *         name: '\1'
 *   disks:
 *     expire: 5m                          # a gone disk's series stay this long
 *   bpf_stats: false                      # keep kernel BPF run-time stats on
 *   bpf_map_sizes:                        # entries of the collector's maps
 *     rq_starts: 65536                    # (default: chosen from the host)
 *   log_level: info                       # debug, info, warn, error
 *   log_format: logfmt                    # or json
 */
#ifndef IOLAT_CONFIG_H
#define IOLAT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buckets.h"
#include "core/mapsize.h"
#include "serve/listen_addr.h"
#include "sys/workload.h"
#include "util/log.h"

#define CONFIG_MAX_LISTEN 8
#define CONFIG_MAX_BOUNDS 64
/* How long a gone workload's label set and a gone disk's series stay, by
 * default (workloads.expire, disks.expire). */
#define CONFIG_DEFAULT_EXPIRE_S 300
/* Every listen address gives at least one socket. */
_Static_assert(CONFIG_MAX_LISTEN <= LISTEN_ADDR_MAX, "more listen addresses than sockets");

struct serve_config {
	char listen[CONFIG_MAX_LISTEN][128];
	size_t nlisten;
	char telemetry_path[128];
	char web_config_file[512]; /* "" for plain HTTP without auth */
	bool device_view, total_view, size_view;
	bool op_label;
	bool size_label;		    /* labels.size_class: latency by request size class */
	uint64_t lat_le[CONFIG_MAX_BOUNDS]; /* ns */
	size_t nlat_le;			    /* 0: defaults */
	uint64_t size_le[CONFIG_MAX_BOUNDS];
	size_t nsize_le;
	uint64_t wl_lat_le[CONFIG_MAX_BOUNDS]; /* ns: per-workload histograms' */
	size_t nwl_lat_le;		       /* 0: defaults */
	bool bpf_stats;
	enum log_level log_level;
	enum log_format log_format;
	bool workloads;
	bool workloads_by_process; /* COMM[PID] of the submitter, not the cgroup */
	size_t workloads_max;
	unsigned wl_labels;  /* workloads.labels (uprog/builtins.h bits) */
	unsigned wl_metrics; /* workloads.metrics */
	unsigned int workloads_expire_s;
	unsigned int disks_expire_s; /* a gone disk's series stay this long (>= 1) */
	struct workload_rule rules[WORKLOAD_MAX_RULES];
	size_t nrules;
	uint32_t map_sizes[MAPSIZE_COUNT]; /* bpf_map_sizes; 0: from the host */
	/* kubernetes.pod_logs_dir, .container_logs_dir: where pods' names are
	 * read (sys/kubenames.h); "": not read */
	char kube_pods_dir[512];
	char kube_containers_dir[512];
};

/* The defaults: ":9617", "/metrics", every view, default buckets. */
void config_defaults(struct serve_config *c);

/* The bounds of t nearest v (v not one of them), as a message names them:
 * "0.000029223 or 0.000030517", or the one there is. */
void config_bounds_near(const struct bucket_table *t, uint64_t v, char *out, size_t len);

/*
 * Reads a YAML file over c. Unknown keys, wrong types and bad values are
 * errors, reported as "FILE:LINE:COLUMN: what" in err. Returns 0 or -errno.
 */
int config_load(const char *path, struct serve_config *c, char *err, size_t errlen);

/*
 * The settings that differ between a and b, by their names in the file
 * ("web.telemetry_path,labels.op"), into out; "" if none. For the log of a
 * reload.
 */
void config_changes(const struct serve_config *a, const struct serve_config *b, char *out,
		    size_t len);

#endif
