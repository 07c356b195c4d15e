/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * yamldoc.h - the one way iolat reads its YAML files (serve settings, web
 * config, user-program configs): loading one document, typed getters,
 * mappings with known keys, lists, and a work budget, each failure written
 * as "file:line:col: what" into the caller's buffer and returned as -EINVAL
 * (-ENOMEM when memory ran out). Nothing prints.
 *
 * The three files were written apart and their users know their messages,
 * so the words of a mapping's errors are a file's own (yamldoc_words_fn);
 * what is checked, and where the error points, is the same for all.
 *
 * The scalar readers (yamldoc_scalar, yamldoc_bool, yamldoc_number) need no
 * document and report nothing: for checks that word their own message.
 */
#ifndef IOLAT_YAMLDOC_H
#define IOLAT_YAMLDOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

struct yamldoc;

/* What can be wrong with a mapping or the document as a whole. */
enum yamldoc_problem {
	YAMLDOC_NOT_MAPPING,	 /* at: the value that should be a mapping */
	YAMLDOC_KEY_NOT_STRING,	 /* at: the key */
	YAMLDOC_UNKNOWN_KEY,	 /* at: the key; key: its name */
	YAMLDOC_REPEATED_KEY,	 /* at: the second one; key: its name */
	YAMLDOC_SECOND_DOCUMENT, /* at: its root */
};

/*
 * Words a problem of mapping what (whose keys are known, "a, b") in a
 * file's own terms, through yamldoc_fail; returns what that returns.
 * what and known are NULL for YAMLDOC_SECOND_DOCUMENT.
 */
typedef int (*yamldoc_words_fn)(struct yamldoc *d, const yaml_node_t *at,
				enum yamldoc_problem problem, const char *key, const char *what,
				const char *known);

struct yamldoc {
	yaml_document_t doc;
	const char *file; /* as messages name it */
	char *err;	  /* the caller's buffer for the one error */
	size_t errlen;
	size_t work;		/* spent of work_limit */
	size_t work_limit;	/* 0: no limit (a file only its owner writes) */
	yamldoc_words_fn words; /* NULL: yamldoc_default_words */
	bool repeat_wins;	/* a repeated key overrides the first rather than failing */
	const yaml_node_t *key; /* in a yamldoc_key_fn: the key node, for errors about it */
};

/*
 * The words of the user-program configs, and of any new file: "unknown field
 * 'x' in <what> (known: <known>)", "duplicate field 'x' in <what>".
 */
int yamldoc_default_words(struct yamldoc *d, const yaml_node_t *at, enum yamldoc_problem problem,
			  const char *key, const char *what, const char *known);

/* The text of scalar n; NULL if n is a mapping or a list. */
const char *yamldoc_scalar(const yaml_node_t *n);

/* "true" or "false" in *out; -1 (and *out untouched) for anything else. */
int yamldoc_bool(const yaml_node_t *n, bool *out);

/* A finite number, strictly written, in *out; -1 (*out untouched) if n is not one. */
int yamldoc_number(const yaml_node_t *n, double *out);

/* Each writes "file:line:col: <fmt...>" into d->err and returns -EINVAL. */
int yamldoc_fail_at(struct yamldoc *d, size_t line, size_t col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int yamldoc_fail(struct yamldoc *d, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* For what has no place in the file (it cannot be read): "file: <fmt...>"; returns rc. */
int yamldoc_fail_file(struct yamldoc *d, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * Refuses a document with a scalar holding a NUL (YAML's "\0"): C strings
 * would end there, so "cert_file\0x" would pass for the key cert_file.
 */
int yamldoc_check_nul(struct yamldoc *d);

/*
 * Spends units of d->work_limit on node n. YAML aliases let one node be read
 * many times, so the input's size alone bounds no parse: whatever reads,
 * copies or compiles in proportion to a node charges for it.
 */
int yamldoc_charge(struct yamldoc *d, const yaml_node_t *n, size_t units);

/*
 * Loads buf (len bytes) into d->doc; a syntax error, a second document, or
 * none at all when empty_msg is not NULL (then that is the message) fails,
 * and leaves no document to delete. Otherwise the caller deletes d->doc,
 * whose root is NULL for an empty file (allowed when empty_msg is NULL).
 */
int yamldoc_load(struct yamldoc *d, const char *buf, size_t len, const char *empty_msg);

yaml_node_t *yamldoc_node(struct yamldoc *d, int id);

/* A copy of scalar n, at most max characters, in *out (the caller frees it). */
int yamldoc_get_str(struct yamldoc *d, yaml_node_t *n, size_t max, char **out);
/* Scalar n into out, which holds len - 1 characters and the NUL. */
int yamldoc_get_strbuf(struct yamldoc *d, const yaml_node_t *n, char *out, size_t len);
/* Like yamldoc_get_str, for strings that must not be empty (what names them). */
int yamldoc_get_text(struct yamldoc *d, yaml_node_t *n, const char *what, size_t max, char **out);
/* Numbers are strict: no leading space, nothing after them. */
int yamldoc_get_int(struct yamldoc *d, const yaml_node_t *n, int64_t lo, int64_t hi, int64_t *out);
int yamldoc_get_unsigned(struct yamldoc *d, const yaml_node_t *n, unsigned lo, unsigned hi,
			 unsigned *out);
int yamldoc_get_num(struct yamldoc *d, const yaml_node_t *n, double *out);
int yamldoc_get_bool(struct yamldoc *d, const yaml_node_t *n, bool *out);
/* A duration (util/parse.h: "300", "90s", "5m", "1h") of at least min_s seconds. */
int yamldoc_get_duration(struct yamldoc *d, const yaml_node_t *n, unsigned int min_s,
			 unsigned int *out);

/* Reads the value v of field key; returns 1 for a key it does not know. */
typedef int (*yamldoc_key_fn)(struct yamldoc *d, const char *key, yaml_node_t *v, void *arg);

/*
 * Calls fn for each key of mapping map, in file order. what names the
 * mapping and known lists its keys, for the messages (d->words). A key fn
 * does not know is refused, naming the known ones; a key given twice is
 * refused too (libyaml keeps both), unless d->repeat_wins. Stops at the
 * first error: fn's, or -EINVAL.
 */
int yamldoc_each_key(struct yamldoc *d, yaml_node_t *map, const char *what, const char *known,
		     yamldoc_key_fn fn, void *arg);

/* The length of list n, which must hold min..max items of what. */
int yamldoc_list_len(struct yamldoc *d, yaml_node_t *n, const char *what, size_t min, size_t max,
		     size_t *len);
yaml_node_t *yamldoc_item(struct yamldoc *d, yaml_node_t *list, size_t i);

#endif
