/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * uconfig_internal.h - what the config parser's modules (uconfig.c,
 * uconfig_labels.c) share: the name rules and the bound on free text.
 * Not for use outside the parser.
 */
#ifndef IOLAT_UCONFIG_INTERNAL_H
#define IOLAT_UCONFIG_INTERNAL_H

#include <stdbool.h>
#include <yaml.h>

#include "util/yamldoc.h"

#define MAX_TEXT 1024 /* help, regexp, replace, static_map strings */

/* s is [A-Za-z<first>][A-Za-z0-9<rest>]*. */
bool uconfig_name_ok(const char *s, const char *first, const char *rest);

/*
 * A name that ok accepts, of a bounded length, in *out; else fails with
 * "<what> '<name>' must match <rule>".
 */
int uconfig_get_name(struct yamldoc *x, yaml_node_t *v, bool (*ok)(const char *), const char *what,
		     const char *rule, char **out);

/* A BPF map name (the kernel's rules, libbpf's length), in *out. */
int uconfig_get_bpf_name(struct yamldoc *x, yaml_node_t *n, char **out);

#endif
