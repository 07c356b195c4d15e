/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * decoders.h - a user program's map key fields to Prometheus label values
 * (issue 6, docs/userprogs.md).
 *
 * Each label of a metric is one field of the map's key, decoded by a chain
 * (struct ulabel_conf in uconfig.h): the first decoder reads the field's
 * raw bytes, each later one the previous one's output string (numeric
 * decoders parse it back, decimal or 0x-hex). Lookups that need the system
 * (kernel symbols, disk names, cgroup paths) go through one decoder_env per
 * process, whose caches have fixed caps: values never seen before never
 * grow memory without bound.
 *
 * Not thread-safe: one scrape at a time uses an env and its decoders.
 */
#ifndef IOLAT_DECODERS_H
#define IOLAT_DECODERS_H

#include <stdbool.h>
#include <stddef.h>

#include "uprog/uconfig.h"

/* Caches shared by every config of the process. */
struct decoder_env;

/* Where the env looks; a NULL member (or NULL paths): the real system's
 * /proc/kallsyms, /sys/dev/block, /sys/fs/cgroup. Tests use fixtures. */
struct decoder_env_paths {
	const char *kallsyms;
	const char *sys_dev_block;
	const char *cgroup_root;
};

/* NULL when out of memory. Reads nothing until a decoder needs it. */
struct decoder_env *decoder_env_new(const struct decoder_env_paths *paths);
void decoder_env_free(struct decoder_env *env);

/* Once per scrape: ages the caches (disk numbers get reused by new disks). */
void decoder_env_scrape_done(struct decoder_env *env);

/* Forgets the name of disk number dev (another disk took the number). */
void decoder_env_forget_disk(struct decoder_env *env, uint32_t dev);

/* What the caches hold now, and their caps (for tests and self-metrics). */
struct decoder_cache_sizes {
	size_t majorminor, majorminor_cap;
	size_t cgroup, cgroup_cap;
	size_t ksyms; /* symbols loaded from kallsyms */
};
void decoder_env_cache_sizes(const struct decoder_env *env, struct decoder_cache_sizes *out);

/* One label's compiled chain. */
struct label_decoder;

/* kstack: the fd of the program's stack-trace map map_name, <0 if none. */
typedef int (*decoder_map_fd_fn)(void *arg, const char *map_name);

/*
 * Compiles l's chain (regexps, map fds). Returns 0, or -errno (-EINVAL,
 * -ENOENT for a missing map, -ENOMEM) with one line "line:col: what is
 * wrong" in err (the decoder's place in the config).
 */
int label_decoder_new(const struct ulabel_conf *l, decoder_map_fd_fn fd_of, void *arg,
		      struct label_decoder **out, char *err, size_t errlen);
void label_decoder_free(struct label_decoder *d);

/*
 * Whether d's output depends on the raw bytes alone (uint, hex, string,
 * static_map, regexp, syscall, errno), not on what the system says at the
 * time (ksym, majorminor, cgroup, kstack): then the same bytes decode to
 * the same value at every scrape, and a caller may reuse the last one.
 */
bool label_decoder_pure(const struct label_decoder *d);

enum decode_result {
	DECODE_DROP = 0, /* a regexp filter did not match: leave the series out */
	DECODE_OK = 1,
};

/*
 * Decodes raw, the field's l->size bytes of a key, into out (always
 * NUL-terminated, truncated to outlen). Returns DECODE_OK, DECODE_DROP, or
 * -EINVAL for a value it cannot decode (a later numeric decoder given a
 * string that is no number); the series is dropped, nothing to word.
 */
int label_decode(struct label_decoder *d, struct decoder_env *env, const void *raw, char *out,
		 size_t outlen);

#endif /* IOLAT_DECODERS_H */
