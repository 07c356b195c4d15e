/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * names.h - the one spelling of the names bpf/iolat.h numbers: operations,
 * request flags, size classes and the collector's own counters. Every
 * output takes them from here (hist in text and JSON, top, trace, check,
 * serve's self-metrics), and the YAML of builtin/, whose static_map decoders
 * spell ops and size classes for serve's block families, is checked
 * against this table by tests/unit/test_builtin.c.
 */
#ifndef IOLAT_NAMES_H
#define IOLAT_NAMES_H

#include <linux/types.h>

#include "iolat.h"

/* "read", "write", ... for an enum iolat_op; NULL out of range. */
const char *names_op(int op);

/* blktrace's RWBS letter of an operation ('R', 'W', 'F', 'D', 'N'); 'N'
 * out of range, as blktrace has no letter for the others. */
char names_op_rwbs(int op);

/* "sync", "fua", ... for bit i of enum iolat_flag; NULL out of range. */
const char *names_flag(int bit);

/* "<=4KiB", "4-16KiB", ... for an enum iolat_size_class; NULL out of range. */
const char *names_size_class(int c);

/* A collector counter's name (enum iolat_stat): the `event` label of
 * iolat_collector_events_total and the key in hist --json; "unknown" out
 * of range. */
const char *names_stat(int s);

#endif /* IOLAT_NAMES_H */
