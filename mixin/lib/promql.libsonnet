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
  // Whether the queries have their native-histogram side. A store without
  // native histograms may not know the functions of that side either
  // (VictoriaMetrics 1.79 has no histogram_count, histogram_sum or
  // histogram_fraction, and fails the whole query on them): the dashboards
  // set it from _config.nativeHistograms.
  native:: true,
  // "native or classic", or the classic side alone.
  either(native, classic):: if self.native then native + 'or\n' + classic else classic,

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
    local a = { q: q, sum: sumBy(labels), byLe: byLe(labels), m: metric, s: selector, r: range, f: filter, o: off };
    self.either(
      'histogram_quantile(%(q)s, %(sum)s (rate(%(m)s%(s)s[%(r)s]%(o)s)%(f)s))\n' % a,
      'histogram_quantile(%(q)s, sum by (%(byLe)s) (rate(%(m)s_bucket%(s)s[%(r)s]%(o)s)%(f)s))\n' % a,
    ),

  // Quantile q of a histogram aggregated by `labels`, for the fleet
  // dashboard, which reads no raw bucket: the classic side from the bucket
  // rates a recording rule kept (rules.libsonnet: LEVEL:METRIC_bucket:rate5m),
  // the native side from the native histograms themselves (one series per
  // disk and operation, no buckets; Prometheus 2.42 cannot record their sums
  // reliably, see rules.libsonnet).
  ruleQuantile(q, level, metric, selector, labels, filter='', offset='')::
    local off = if offset != '' then ' offset ' + offset else '';
    local a = { q: q, sum: sumBy(labels), byLe: byLe(labels), l: level, m: metric, s: selector, f: filter, o: off };
    self.either(
      'histogram_quantile(%(q)s, %(sum)s (rate(%(m)s%(s)s[$__rate_interval]%(o)s)%(f)s))\n' % a,
      'histogram_quantile(%(q)s, sum by (%(byLe)s) (%(l)s:%(m)s_bucket:rate5m%(s)s%(o)s%(f)s))\n' % a,
    ),

  // Heatmap from the same: the native histograms' rate, or the recorded
  // classic bucket rates (both sides' names are in the query, as heatmap's).
  ruleHeatmap(level, metric, selector, filter='')::
    local a = { l: level, m: metric, s: std.lstripChars(selector, '{'), f: filter };
    self.either(
      'sum by (le) (rate({__name__=~"%(m)s", %(s)s[$__rate_interval])%(f)s)\n' % a,
      'sum by (le) ({__name__=~"%(l)s:%(m)s(_bucket)?:rate5m", %(s)s%(f)s)\n' % a,
    ),

  // Rate of observations (I/Os) counted by a histogram.
  countRate(metric, selector, labels, range='$__rate_interval', filter='')::
    local a = { sum: sumBy(labels), m: metric, s: selector, r: range, f: filter };
    self.either(
      '%(sum)s (histogram_count(rate(%(m)s%(s)s[%(r)s]))%(f)s)\n' % a,
      '%(sum)s (rate(%(m)s_count%(s)s[%(r)s])%(f)s)\n' % a,
    ),

  // Rate of the sum of observations (seconds of latency per second, bytes per second).
  sumRate(metric, selector, labels, range='$__rate_interval', filter='')::
    local a = { sum: sumBy(labels), m: metric, s: selector, r: range, f: filter };
    self.either(
      '%(sum)s (histogram_sum(rate(%(m)s%(s)s[%(r)s]))%(f)s)\n' % a,
      '%(sum)s (rate(%(m)s_sum%(s)s[%(r)s])%(f)s)\n' % a,
    ),

  // Fraction of observations above `threshold` (a classic le bound).
  fractionAbove(threshold, metric, selector, labels, range='$__rate_interval', filter='')::
    local a = {
      t: threshold,
      sum: sumBy(labels),
      m: metric,
      s: selector,
      sLe: std.rstripChars(selector, '}') + ', le="%s"}' % threshold,
      r: range,
      f: filter,
    };
    self.either(
      '1 - histogram_fraction(0, %(t)s, %(sum)s (rate(%(m)s%(s)s[%(r)s])%(f)s))\n' % a,
      |||
        1 - (
          %(sum)s (rate(%(m)s_bucket%(sLe)s[%(r)s])%(f)s)
          /
          %(sum)s (rate(%(m)s_count%(s)s[%(r)s])%(f)s)
        )
      ||| % a,
    ),

  // Heatmap of a histogram, native or classic, in one query: the name
  // matches the native series (`metric`) and the classic buckets
  // (`metric`_bucket), and a Prometheus has one or the other (native
  // histograms are a feature flag of the whole server; scraping both is
  // per job, scrape_classic_histograms). sum by (le) gives one series per
  // bucket from classic buckets, and one native histogram (which has no
  // le) per step from native ones (format heatmap): never an empty panel
  // beside a full one.
  heatmap(metric, selector, filter='')::
    'sum by (le) (rate({__name__=~"%s(_bucket)?", %s[$__rate_interval])%s)' % [
      metric,
      std.lstripChars(selector, '{'),
      filter,
    ],

  // Rate of a counter.
  rate(metric, selector, labels, range='$__rate_interval', filter='')::
    '%s (rate(%s%s[%s])%s)' % [sumBy(labels), metric, selector, range, filter],
}
