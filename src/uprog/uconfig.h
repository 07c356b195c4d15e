/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * uconfig.h - a user program's config: which compiled BPF object to load,
 * and how each of its maps becomes a metric (docs/userprogs.md).
 *
 *   name: timers                 # optional; default: the file's base name
 *   metrics_prefix: iolat_user_  # optional; serve's default (userprogs.h)
 *   object: timers.bpf.o         # relative to the config's directory
 *   metrics:
 *     counters:
 *       - name: kernel_timer_starts_total
 *         help: Timers started, by callback function
 *         map: timer_starts
 *         labels:                # the map's key, field by field, in order
 *           - name: function
 *             size: 8
 *             decoders:
 *               - name: ksym
 *     histograms:
 *       - name: run_queue_latency_seconds
 *         help: ...
 *         map: run_queue_latency
 *         bucket_type: exp2      # exp2 | linear | fixed
 *         bucket_multiplier: 0.000001
 *         bucket_min: 0
 *         bucket_max: 26
 *         labels:                # the last key field is the bucket
 *           - name: bucket
 *             size: 8
 *             decoders:
 *               - name: uint
 *
 * Parsing checks everything that can be checked without the object; the
 * loader (uprog.c) checks the rest (maps exist, key sizes add up).
 */
#ifndef IOLAT_UCONFIG_H
#define IOLAT_UCONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Key fields per metric, the histogram's bucket field included. */
#define UCONF_MAX_FIELDS 9
/* Buckets per histogram (bucket_max - bucket_min + 1, or bucket_keys). */
#define UCONF_MAX_BUCKETS 512

/*
 * Every label decoder, once: X(KIND, "name") gives UDEC_<KIND> and the name
 * a config writes. The kinds, their name table (uconfig_labels.c) and the
 * table of decode functions (decoders.c, a DECODER_<KIND> row each) all
 * come from this list, so a decoder missing from either table does not
 * build.
 */
#define UDEC_KINDS(X)                                                                              \
	X(UINT, "uint")		    /* little-endian unsigned, 1/2/4/8 bytes, decimal */           \
	X(HEX, "hex")		    /* the same number in hex, 0x... */                            \
	X(STRING, "string")	    /* NUL-terminated within the field */                          \
	X(KSYM, "ksym")		    /* kernel address -> symbol (/proc/kallsyms) */                \
	X(MAJORMINOR, "majorminor") /* dev_t (major << 20 | minor) -> disk name */                 \
	X(CGROUP, "cgroup")	    /* cgroup id -> path under the cgroup root */                  \
	X(STATIC_MAP, "static_map") /* string -> string, from the config */                        \
	X(REGEXP, "regexp")	    /* keep the series only on a match; or rewrite */              \
	X(SYSCALL, "syscall")	    /* syscall number -> name (this architecture) */               \
	X(ERRNO, "errno")	    /* errno (either sign) -> ENOENT... */                         \
	X(KSTACK, "kstack")	    /* stack id in a stack-trace map -> symbols */

#define UDEC_KIND_ENUM(kind, name) UDEC_##kind,
enum udec_kind { UDEC_KINDS(UDEC_KIND_ENUM) };
#undef UDEC_KIND_ENUM

/* How many decoders there are. */
#define UDEC_KIND_ONE(kind, name) +1
#define UDEC_COUNT (0 UDEC_KINDS(UDEC_KIND_ONE))

struct udec_conf {
	enum udec_kind kind;
	/* static_map: from[i] -> to[i]; a value not listed becomes "unknown",
	 * or stays as it is with allow_unknown. */
	char **from, **to;
	size_t nmap;
	bool allow_unknown;
	/* regexp: POSIX ERE; without replace a filter, with it a rewrite
	 * (\0..\9 for the groups). */
	char *regexp;
	char *replace;
	/* kstack: the BPF_MAP_TYPE_STACK_TRACE map the ids index. */
	char *stack_map;
	int line, col;
};

struct ulabel_conf {
	char *name;
	unsigned size;	  /* bytes of the key this field takes */
	unsigned padding; /* bytes skipped after it (alignment) */
	struct udec_conf *dec;
	size_t ndec;
	int line, col;
};

/*
 * The last key field of a histogram is its bucket index b. Bucket b counts
 * the values v (in the program's unit) with, for
 *   exp2:   2^(b-1) < v <= 2^b   (b = bucket_min..bucket_max; b = min
 *                                 takes everything <= 2^min)
 *   linear: b - 1 < v <= b       (b = bucket_min..bucket_max)
 *   fixed:  keys[b-1] < v <= keys[b]  (b = 0..nkeys-1)
 * so its `le` bound is 2^b, b or keys[b], times bucket_multiplier. Values
 * past the last bucket go into the last. The sum key, b = bucket_max + 1
 * (fixed: nkeys), holds the sum of the values; without it the histogram's
 * _sum is 0 (docs/userprogs.md).
 */
enum ubucket_type {
	UBUCKET_EXP2,
	UBUCKET_LINEAR,
	UBUCKET_FIXED,
	/* iolat's own histograms (the configs in builtin/): each map value is a
	 * histogram over iolat's bucket table (buckets.h), latency in ns or
	 * sizes in bytes; every key field is a label, there is no bucket
	 * field, and the `le` bounds are serve's. */
	UBUCKET_IOLAT_LATENCY,
	UBUCKET_IOLAT_SIZE,
	/* Latency again, with serve's shorter `le` set for per-workload
	 * histograms (buckets.workload_latency_seconds): hundreds of
	 * workloads times each bound is where a host's series go. */
	UBUCKET_IOLAT_WORKLOAD_LATENCY,
};

/* Whether t is one of iolat's own histogram kinds. */
static inline bool ubucket_is_iolat(enum ubucket_type t)
{
	return t == UBUCKET_IOLAT_LATENCY || t == UBUCKET_IOLAT_SIZE ||
	       t == UBUCKET_IOLAT_WORKLOAD_LATENCY;
}

struct umetric_conf {
	char *name;
	char *help;
	char *map;
	bool histogram;
	/* Histograms only. */
	enum ubucket_type bucket_type;
	double bucket_multiplier; /* to the metric's unit; default 1 */
	int64_t bucket_min, bucket_max;
	double *bucket_keys; /* fixed: ascending upper bounds */
	size_t nkeys;
	struct ulabel_conf field[UCONF_MAX_FIELDS];
	size_t nfields;
	unsigned skip; /* key bytes before the first field: a folded first field */
	int line, col;
};

/* A perf event that drives a SEC("perf_event") program (uconfig_perf.h). */
struct uperf_conf {
	uint32_t type;			     /* PERF_TYPE_SOFTWARE or PERF_TYPE_HARDWARE */
	uint64_t config;		     /* the event (perf_event_attr.config) */
	uint64_t sample_freq, sample_period; /* one of them */
	char *program;
	int line, col;
};

struct uconfig {
	char *file; /* as given */
	char *name;
	char *object; /* resolved against the config's directory */
	/* metrics_prefix as written ("" allowed); NULL when the config gives
	 * none. Parsing keeps metric names as written: whoever exports them
	 * (userprogs.c) puts the prefix in front. */
	char *metrics_prefix;
	struct umetric_conf *metric;
	size_t nmetrics;
	struct uperf_conf *perf;
	size_t nperf;
};

/*
 * Parses a config file or buffer (`file` names it in messages). Every
 * error is one line, "file:line:col: what is wrong", in err; returns 0 or
 * -errno: -EINVAL for a wrong config, -ENOMEM, or the file's open error
 * (out is then empty and needs no free).
 */
int uconfig_parse_file(const char *file, struct uconfig *out, char *err, size_t errlen);
int uconfig_parse_buffer(const char *file, const char *buf, size_t len, struct uconfig *out,
			 char *err, size_t errlen);
void uconfig_free(struct uconfig *c);

/*
 * Editing a parsed config (serve's options over its built-in ones): drops
 * the metric named `name`, if there is one; and makes the field `label` of
 * every metric no label: its bytes become the previous field's padding (the
 * metric's skip for the first field), so entries that differ only in it sum
 * into one series. -1, and nothing changed, if a metric would be left
 * without a field.
 */
void uconfig_drop_metric(struct uconfig *c, const char *name);
int uconfig_fold_label(struct uconfig *c, const char *label);

/* "ksym", "uint"... and back; -1 for an unknown name. */
const char *udec_name(enum udec_kind k);
int udec_kind_of(const char *name);

#endif /* IOLAT_UCONFIG_H */
