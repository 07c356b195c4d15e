/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * yamldoc.h - helpers over a libyaml document for config parsers: typed
 * getters, mappings with known fields, lists, and a work budget, each failure
 * written as "file:line:col: what" into the caller's buffer. Nothing prints.
 *
 * The scalar readers (yamldoc_scalar, yamldoc_bool) need no document and
 * report nothing, so a parser with its own error style can share them too.
 */
#ifndef IOLAT_YAMLDOC_H
#define IOLAT_YAMLDOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

struct yamldoc {
	yaml_document_t doc;
	const char *file; /* as messages name it */
	char *err;	  /* the caller's buffer for the one error */
	size_t errlen;
	size_t work; /* spent of work_limit */
	size_t work_limit;
};

/* The text of scalar n; NULL if n is a mapping or a list. */
const char *yamldoc_scalar(const yaml_node_t *n);

/* "true" or "false" in *out; -1 (and *out untouched) for anything else. */
int yamldoc_bool(const yaml_node_t *n, bool *out);

/* Each writes "file:line:col: <fmt...>" into d->err and returns -1. */
int yamldoc_fail_at(struct yamldoc *d, size_t line, size_t col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int yamldoc_fail(struct yamldoc *d, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * Spends units of d->work_limit on node n. YAML aliases let one node be read
 * many times, so the input's size alone bounds no parse: whatever reads,
 * copies or compiles in proportion to a node charges for it.
 */
int yamldoc_charge(struct yamldoc *d, const yaml_node_t *n, size_t units);

/*
 * Loads buf (len bytes) into d->doc; a syntax error, a second document, or
 * none at all (then the message is empty_msg) fails, and leaves no document
 * to delete. Otherwise the caller deletes d->doc.
 */
int yamldoc_load(struct yamldoc *d, const char *buf, size_t len, const char *empty_msg);

yaml_node_t *yamldoc_node(struct yamldoc *d, int id);

/* A copy of scalar n, at most max characters, in *out (the caller frees it). */
int yamldoc_get_str(struct yamldoc *d, yaml_node_t *n, size_t max, char **out);
/* Like yamldoc_get_str, for strings that must not be empty (what names them). */
int yamldoc_get_text(struct yamldoc *d, yaml_node_t *n, const char *what, size_t max, char **out);
/* Numbers are strict: no leading space, nothing after them. */
int yamldoc_get_int(struct yamldoc *d, const yaml_node_t *n, int64_t lo, int64_t hi, int64_t *out);
int yamldoc_get_unsigned(struct yamldoc *d, const yaml_node_t *n, unsigned lo, unsigned hi,
			 unsigned *out);
int yamldoc_get_num(struct yamldoc *d, const yaml_node_t *n, double *out);
int yamldoc_get_bool(struct yamldoc *d, const yaml_node_t *n, bool *out);

/* Reads the value v of field key; returns 1 for a key it does not know. */
typedef int (*yamldoc_key_fn)(struct yamldoc *d, const char *key, yaml_node_t *v, void *arg);

/*
 * Calls fn for each field of mapping map. what names the mapping and known
 * lists its fields, for messages: "unknown field 'x' in <what> (known:
 * <known>)". A field given twice is an error, as libyaml keeps both.
 */
int yamldoc_each_key(struct yamldoc *d, yaml_node_t *map, const char *what, const char *known,
		     yamldoc_key_fn fn, void *arg);

/* The length of list n, which must hold min..max items of what. */
int yamldoc_list_len(struct yamldoc *d, yaml_node_t *n, const char *what, size_t min, size_t max,
		     size_t *len);
yaml_node_t *yamldoc_item(struct yamldoc *d, yaml_node_t *list, size_t i);

#endif
