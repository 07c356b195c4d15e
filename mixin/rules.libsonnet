// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Recording rules of the iolat mixin (group iolat.rules).
//
// Every rule is built from $._config (config.libsonnet). The "5m" at the end
// of the names is part of the names, not of the window: rules named ...5m use
// $._config.rateInterval whatever it is. The slow-I/O ratio rules are named
// after their own windows (those of the burn-rate alerts).
//
// Histograms: a Prometheus with --enable-feature=native-histograms scrapes
// iolat's histograms as native ones only (a single series, no _bucket/_count
// series); without it, as classic _bucket/_sum/_count series only. Each
// latency rule is therefore "native expression or classic expression": the
// side whose series exist answers. Never multiply a native histogram by a
// float vector here: Prometheus 2.42 returns nothing for that.
// The fleet-wide (op:...) rules merge every host's histograms; a host scraped
// in the other mode than the rest is left out of them (native and classic
// histograms cannot be summed together).
{
  local cfg = $._config,

  // Label matchers joined into a selector: sel(['le="0.01"']) gives
  // {job="iolat",le="0.01"} (and {le="0.01"} when iolatSelector is '').
  local sel(extra=[]) =
    '{' + std.join(',', std.filter(function(m) m != '', [cfg.iolatSelector] + extra)) + '}',

  local by(labels) = std.join(',', labels),

  // "native or classic", or the classic side alone (nativeHistograms: false).
  local either(native, classic) =
    if cfg.nativeHistograms then native + 'or\n' + classic else classic,

  local hostDeviceOp = cfg.hostLabels + ['device', 'op'],
  // A workload's labels: kind and workload, and a pod's namespace, pod and
  // container (absent on other workloads: `by` them costs nothing there).
  local workloadLabels = ['kind', 'workload', 'namespace', 'pod', 'container'],
  local hostWorkload = cfg.hostLabels + workloadLabels,
  // `op` is a per-workload label only when serve runs with
  // --workloads.labels=op (or device,op): where it is absent, `by (op)`
  // gives one series per workload without it, so these rules still answer.
  local hostWorkloadOp = hostWorkload + ['op'],
  // The fleet level: per cluster and job, every host merged.
  local fleetLabels = std.filter(function(l) l != 'instance', cfg.hostLabels),

  // sum by (labels) of the rate of a counter.
  local sumRate(metric, labels) =
    'sum by (%s) (rate(%s%s[%s]))' % [by(labels), metric, sel(), cfg.rateInterval],

  // Quantile q of histogram `metric` aggregated by `labels`, from native
  // buckets or else from classic ones.
  local quantile(q, metric, labels) =
    local a = { q: q, by: by(labels), m: metric, sel: sel(), w: cfg.rateInterval };
    either(
      'histogram_quantile(%(q)s, sum by (%(by)s) (rate(%(m)s%(sel)s[%(w)s])))\n' % a,
      'histogram_quantile(%(q)s, sum by (%(by)s,le) (rate(%(m)s_bucket%(sel)s[%(w)s])))\n' % a,
    ),

  // One recording rule per quantile in cfg.quantiles.
  local quantileRules(record, metric, labels) = [
    {
      record: record,
      expr: quantile(q, metric, labels),
      labels: { quantile: q },
    }
    for q in cfg.quantiles
  ],

  // The rate of classic histogram `metric`'s buckets summed by `labels` and
  // le, kept as a recording rule (LEVEL:METRIC_bucket:rate5m) so that the
  // fleet dashboard and the fleet rules never read raw per-workload or
  // per-bucket series; `from` names the level whose rule it sums further.
  // Native histograms get no such rule: Prometheus 2.42 discards most
  // evaluations of a rule whose result is a summed native histogram
  // ("observations found in buckets, but the Count field is ...": the
  // buckets' float sum exceeds the count by a rounding error; Prometheus
  // issue 12713), and a native histogram is one series per disk and
  // operation anyway, so the quantile rules below and the fleet dashboard
  // read it raw.
  local bucketRateRule(level, metric, labels, from=null) = {
    record: '%s:%s_bucket:rate5m' % [level, metric],
    expr: if from == null then
      'sum by (%s) (rate(%s_bucket%s[%s]))' % [by(labels + ['le']), metric, sel(), cfg.rateInterval]
    else
      'sum by (%s) (%s:%s_bucket:rate5m%s)' % [by(labels + ['le']), from, metric, sel()],
  },

  // Quantiles `qs` of histogram `metric` by `labels`: the native side from the
  // native histograms, the classic side from the bucket rates `from` recorded
  // (summed by `labels` and le: the same level, or one below).
  local rateQuantileRules(record, metric, labels, qs, from) = [
    {
      record: record,
      local a = {
        q: q,
        by: by(labels),
        m: metric,
        sel: sel(),
        w: cfg.rateInterval,
        from: from,
      },
      expr: either(
        'histogram_quantile(%(q)s, sum by (%(by)s) (rate(%(m)s%(sel)s[%(w)s])))\n' % a,
        'histogram_quantile(%(q)s, sum by (%(by)s,le) (%(from)s:%(m)s_bucket:rate5m%(sel)s))\n' % a,
      ),
      labels: { quantile: q },
    }
    for q in qs
  ],

  // I/Os per second counted by a histogram: its native count or its classic
  // _count (a workload's IOPS without iolat_workload_completions_total, which
  // serve exports only when asked to).
  local countRate(metric, labels) =
    local a = { by: by(labels), m: metric, sel: sel(), w: cfg.rateInterval };
    either(
      'sum by (%(by)s) (histogram_count(rate(%(m)s%(sel)s[%(w)s])))\n' % a,
      'sum by (%(by)s) (rate(%(m)s_count%(sel)s[%(w)s]))\n' % a,
    ),

  // Fraction of I/Os whose device time is above the SLO threshold of the
  // disk's class over `window`: diskLatencySLOThresholdRotational for the
  // disks iolat_block_device_info says are rotational, diskLatencySLOThreshold
  // for every other disk (and for one without that series). Native:
  // 1 - histogram_fraction(0, T, ...); classic: 1 - bucket{le=T} / count.
  // Each class is picked with `and`/`unless` on the info series (a native
  // histogram cannot be multiplied by it). NaN when the disk did no I/O in
  // the window.
  local slowRatio(window) =
    local m = 'iolat_block_device_latency_seconds';
    local rotational = 'iolat_block_device_info%s' % sel(['rotational="1"']);
    local onDisk = 'on(%s)' % by(cfg.hostLabels + ['device']);
    local classes = [
      { t: cfg.diskLatencySLOThresholdRotational, pick: ' and %s %s' % [onDisk, rotational] },
      { t: cfg.diskLatencySLOThreshold, pick: ' unless %s %s' % [onDisk, rotational] },
    ];
    local native(c) =
      '1 - histogram_fraction(0, %(t)s, sum by (%(by)s) (rate(%(m)s%(sel)s[%(w)s])%(pick)s))' % {
        t: c.t, by: by(hostDeviceOp), m: m, sel: sel(), w: window, pick: c.pick,
      };
    local classic(c) =
      |||
        1 - (
          sum by (%(by)s) (rate(%(m)s_bucket%(selLe)s[%(w)s])%(pick)s)
          /
          sum by (%(by)s) (rate(%(m)s_count%(sel)s[%(w)s])%(pick)s)
        )
      ||| % {
        by: by(hostDeviceOp),
        m: m,
        sel: sel(),
        selLe: sel(['le="%s"' % c.t]),
        w: window,
        pick: c.pick,
      };
    std.join('or\n', (if cfg.nativeHistograms then [native(c) + '\n' for c in classes] else [])
                     + [classic(c) for c in classes]),

  // Seconds in a Prometheus duration such as '5m', '1h30m' or '1w'.
  local seconds(d) =
    local units = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400, w: 604800, y: 31536000 };
    local isDigit(c) = c >= '0' && c <= '9';
    local step(acc, c) =
      if isDigit(c) then
        if acc.unit != '' then
          { total: acc.total + std.parseInt(acc.num) * units[acc.unit], num: c, unit: '' }
        else acc { num+: c }
      else acc { unit+: c };
    local end = std.foldl(step, std.stringChars(d), { total: 0, num: '', unit: '' });
    assert end.num != '' && std.objectHas(units, end.unit) : 'not a Prometheus duration: ' + d;
    end.total + std.parseInt(end.num) * units[end.unit],

  // The windows of the slow-I/O ratio: every long and short window of the
  // burn-rate alerts, each once, shortest first.
  local sloWindows =
    std.set(
      std.flattenArrays([[a.shortWindow, a.longWindow] for a in cfg.diskLatencySLOBurnRateAlerts]),
      keyF=seconds,
    ),

  prometheusRules+:: {
    groups+: [
      {
        name: 'iolat.rules',
        rules:
          // Per host, disk and operation: counters.
          [
            {
              record: 'instance_device_op:iolat_block_%s:rate5m' % c,
              expr: sumRate('iolat_block_%s_total' % c, hostDeviceOp),
            }
            for c in ['completions', 'bytes', 'errors']
          ]
          // Per host, disk and operation: latency quantiles.
          + std.flattenArrays([
            quantileRules(
              'instance_device_op:iolat_block_%s_latency_seconds:quantile5m' % v,
              'iolat_block_%s_latency_seconds' % v,
              hostDeviceOp,
            )
            for v in ['device', 'total']
          ])
          // Per host, disk and operation: fraction of slow I/O, per window.
          + [
            {
              record: 'instance_device_op:iolat_block_device_latency_slow:ratio_rate%s' % w,
              expr: slowRatio(w),
            }
            for w in sloWindows
          ]
          // Per host, disk and operation: the latency histograms' rates,
          // what the fleet dashboard and the fleet rules aggregate.
          + std.flattenArrays([
            [bucketRateRule('instance_device_op', 'iolat_block_%s_latency_seconds' % v, hostDeviceOp)]
            for v in ['device', 'total']
          ])
          // Per host and workload (all its disks and operations): IOPS from the
          // latency histogram's count, bytes/s, the latency histogram's rate
          // and its quantiles. O(hosts x workloads) series, without buckets
          // in the quantiles: what a fleet view ranks workloads by.
          + [
            {
              record: 'instance_workload:iolat_workload_completions:rate5m',
              expr: countRate('iolat_workload_device_latency_seconds', hostWorkload),
            },
            {
              record: 'instance_workload:iolat_workload_bytes:rate5m',
              expr: sumRate('iolat_workload_bytes_total', hostWorkload),
            },
          ]
          + [bucketRateRule('instance_workload', 'iolat_workload_device_latency_seconds', hostWorkload)]
          + rateQuantileRules(
            'instance_workload:iolat_workload_device_latency_seconds:quantile5m',
            'iolat_workload_device_latency_seconds',
            hostWorkload,
            cfg.workloadQuantiles,
            'instance_workload',
          )
          // Per host, workload and operation (all the workload's disks; one
          // series per workload where serve folds `op` away).
          + [
            {
              record: 'instance_workload_op:iolat_workload_completions:rate5m',
              expr: countRate('iolat_workload_device_latency_seconds', hostWorkloadOp),
            },
            {
              record: 'instance_workload_op:iolat_workload_bytes:rate5m',
              expr: sumRate('iolat_workload_bytes_total', hostWorkloadOp),
            },
          ]
          + quantileRules(
            'instance_workload_op:iolat_workload_device_latency_seconds:quantile5m',
            'iolat_workload_device_latency_seconds',
            hostWorkloadOp,
          )
          // Fleet level, per cluster and job (every host merged): the disks'
          // latency per operation and the workloads' IOPS and bytes/s, from
          // the per-host rules above.
          + [bucketRateRule('job_op', 'iolat_block_device_latency_seconds', fleetLabels + ['op'], from='instance_device_op')]
          + rateQuantileRules(
            'job_op:iolat_block_device_latency_seconds:quantile5m',
            'iolat_block_device_latency_seconds',
            fleetLabels + ['op'],
            cfg.quantiles,
            'job_op',
          )
          + [
            {
              record: 'job:iolat_workload_%s:rate5m' % c,
              expr: 'sum by (%s) (instance_workload:iolat_workload_%s:rate5m%s)' % [by(fleetLabels), c, sel()],
            }
            for c in ['completions', 'bytes']
          ]
          // Fleet-wide, per operation: every host's disks merged (classic:
          // from the per-host bucket rates above).
          + std.flattenArrays([
            rateQuantileRules(
              'op:iolat_block_%s_latency_seconds:quantile5m' % v,
              'iolat_block_%s_latency_seconds' % v,
              ['op'],
              cfg.quantiles,
              'instance_device_op',
            )
            for v in ['device', 'total']
          ]),
      },
    ],
  },
}
