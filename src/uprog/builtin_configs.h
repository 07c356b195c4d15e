/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * builtin_configs.h - iolat's own metric configs (the YAML files of builtin/), built
 * into the binary by scripts/embed_configs.sh.
 */
#ifndef IOLAT_BUILTIN_CONFIGS_H
#define IOLAT_BUILTIN_CONFIGS_H

/* builtin/block.yaml: the per-disk block-I/O families of `iolat serve`. */
extern const char builtin_block_yaml[];

/* builtin/workloads.yaml: the per-workload (VM, pod, ...) families. */
extern const char builtin_workloads_yaml[];

#endif
