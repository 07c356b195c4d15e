/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * regex_guard.h - refuses regular expressions that glibc's regcomp would
 * blow up on, before they reach it.
 *
 * Why: regcomp copies a group once per count of a bounded repetition, and
 * x+ into x x*; its epsilon closures then grow with the square of the
 * optional copies. Fuzzing the user-program config found regcomp using over
 * 2 GB on ab+++...+, and ((a?)*(b+)*){1500} taking 224 s; (((a{100}){100})
 * {100}){100} or (a?){4000} are as bad. Repeating a group or repetition that
 * can match empty, as in (|()*){20}, (^|()|^){50} or (a?*$){50}, takes it
 * exponential time even when the pattern is short.
 */
#ifndef IOLAT_REGEX_GUARD_H
#define IOLAT_REGEX_GUARD_H

#include <stdint.h>

/* Patterns whose estimate is past this many nodes are to be refused. */
#define REGEX_GUARD_MAX_NODES 1000

/*
 * An upper bound of the nodes regcomp makes of the extended regexp pattern,
 * expanded, saturating at REGEX_GUARD_MAX_NODES + 1; that too for a pattern
 * it could take exponential time on. Compiling takes up to cubic time in the
 * nodes, which is what a caller with a work budget may charge.
 */
uint64_t regex_guard_nodes(const char *pattern);

#endif
