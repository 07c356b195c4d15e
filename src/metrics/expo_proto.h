/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * expo_proto.h - Prometheus protobuf exposition: the one format that
 * carries native (exponential) histograms, which Prometheus asks for when
 * native histograms are enabled. Renders a metric_set into a buffer;
 * never touches the kernel. The schema is proto/prometheus.proto.
 */
#ifndef IOLAT_EXPO_PROTO_H
#define IOLAT_EXPO_PROTO_H

#include "metrics/metrics.h"
#include "util/buf.h"

#define EXPO_PROTO_CONTENT_TYPE                                                                    \
	"application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; "               \
	"encoding=delimited"

/*
 * Appends each family that has series as one MetricFamily message, prefixed
 * by its length as a varint (the "delimited" stream Prometheus scrapes).
 * Histograms carry both classic buckets (at family->le, no +Inf bucket:
 * Prometheus derives it from the sample count) and native buckets.
 * Returns 0, or -ENOMEM with `out` holding a partial stream to discard.
 */
int expo_proto(const struct metric_set *set, struct buf *out);

#endif
