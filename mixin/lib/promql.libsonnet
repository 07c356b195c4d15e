// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// PromQL pieces shared by the dashboards.
//
// iolat's histograms reach Prometheus as native histograms (Prometheus with
// --enable-feature=native-histograms: one series, no _bucket/_sum/_count) or
// as classic ones (_bucket/_sum/_count series), never both. Every histogram
// expression here is therefore "native form  or  classic form": only the side
// whose series exist returns anything, and a fleet with hosts in both modes
// gets each host from its own side. Nothing multiplies a native histogram by
// a float (Prometheus 2.42 returns nothing for that): disks are picked with
// `and on(...)`.
{
  // '{a, b}' from a list of matchers.
  sel(matchers):: '{' + std.join(', ', matchers) + '}',

  local by(labels) = std.join(', ', labels),
  local byLe(labels) = std.join(', ', labels + ['le']),
  local sumBy(labels) = if std.length(labels) == 0 then 'sum' else 'sum by (%s)' % by(labels),

  // `filter` is appended inside the sum, after the rate: ' and on(job, instance,
  // device) iolat_block_device_info{model=~"$model"}' keeps only some disks.

  // Quantile q of histogram `metric` (without suffix), aggregated by `labels`.
  quantile(q, metric, selector, labels, range='$__rate_interval', filter='', offset='')::
    local off = if offset != '' then ' offset ' + offset else '';
    |||
      histogram_quantile(%(q)s, %(sum)s (rate(%(m)s%(s)s[%(r)s]%(o)s)%(f)s))
      or
      histogram_quantile(%(q)s, sum by (%(byLe)s) (rate(%(m)s_bucket%(s)s[%(r)s]%(o)s)%(f)s))
    ||| % { q: q, sum: sumBy(labels), byLe: byLe(labels), m: metric, s: selector, r: range, f: filter, o: off },

  // Rate of observations (I/Os) counted by a histogram.
  countRate(metric, selector, labels, range='$__rate_interval')::
    |||
      %(sum)s (histogram_count(rate(%(m)s%(s)s[%(r)s])))
      or
      %(sum)s (rate(%(m)s_count%(s)s[%(r)s]))
    ||| % { sum: sumBy(labels), m: metric, s: selector, r: range },

  // Rate of the sum of observations (seconds of latency per second, bytes per second).
  sumRate(metric, selector, labels, range='$__rate_interval')::
    |||
      %(sum)s (histogram_sum(rate(%(m)s%(s)s[%(r)s])))
      or
      %(sum)s (rate(%(m)s_sum%(s)s[%(r)s]))
    ||| % { sum: sumBy(labels), m: metric, s: selector, r: range },

  // Fraction of observations above `threshold` (a classic le bound).
  fractionAbove(threshold, metric, selector, labels, range='$__rate_interval')::
    |||
      1 - histogram_fraction(0, %(t)s, %(sum)s (rate(%(m)s%(s)s[%(r)s])))
      or
      1 - (
        %(sum)s (rate(%(m)s_bucket%(sLe)s[%(r)s]))
        /
        %(sum)s (rate(%(m)s_count%(s)s[%(r)s]))
      )
    ||| % {
      t: threshold,
      sum: sumBy(labels),
      m: metric,
      s: selector,
      sLe: std.rstripChars(selector, '}') + ', le="%s"}' % threshold,
      r: range,
    },

  // Heatmap of a native histogram: one histogram per step (format heatmap).
  heatmapNative(metric, selector, filter='')::
    'sum(rate(%s%s[$__rate_interval])%s)' % [metric, selector, filter],

  // Heatmap of classic buckets: one series per le (format heatmap).
  heatmapClassic(metric, selector, filter='')::
    'sum by (le) (rate(%s_bucket%s[$__rate_interval])%s)' % [metric, selector, filter],

  // Rate of a counter.
  rate(metric, selector, labels, range='$__rate_interval')::
    '%s (rate(%s%s[%s]))' % [sumBy(labels), metric, selector, range],
}
