/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * uconfig_labels.h - the `labels:` list of a user-program metric: the map
 * key, field by field, and how each field's bytes become a label value.
 *
 *   labels:
 *     - name: op
 *       size: 4                 # bytes of the key
 *       padding: 4              # bytes skipped after it (alignment)
 *       decoders:               # applied in order; the first reads the bytes
 *         - name: static_map
 *           static_map: { 0: read, 1: write }
 *           allow_unknown: true
 *         - name: regexp
 *           regexp: ^(read|write)$
 */
#ifndef IOLAT_UCONFIG_LABELS_H
#define IOLAT_UCONFIG_LABELS_H

#include <yaml.h>

#include "uprog/uconfig.h"
#include "util/yamldoc.h"

/* Parses the list n into m->field. 0, or -1 with the error in x. */
int uconfig_parse_labels(struct yamldoc *x, yaml_node_t *n, struct umetric_conf *m);
/* Frees what one parsed label holds (its name and decoders), not l itself. */
void uconfig_free_label(struct ulabel_conf *l);

#endif
