/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * uprog_source.h - a user's loaded BPF object (uprog.h) as a source of the
 * map -> metric path (umetrics.h). Apart from umetrics so that the path
 * itself needs no BPF skeleton: unit tests drive it with sources of their
 * own.
 */
#ifndef IOLAT_UPROG_SOURCE_H
#define IOLAT_UPROG_SOURCE_H

#include "uprog/umetrics.h"
#include "uprog/uprog.h"

/* The source of p's maps, each value one u64; p must outlive it. */
void uprog_source(struct uprog *p, struct usource *out);

#endif /* IOLAT_UPROG_SOURCE_H */
