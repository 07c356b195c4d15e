// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Settings of the iolat mixin: the one place for selectors, windows and
// thresholds. Override any of them from your own jsonnet, e.g.
//   (import 'iolat-mixin/mixin.libsonnet') + { _config+:: { iolatSelector: 'job="node-iolat"' } }
{
  _config+:: {
    // Label matchers (without braces) that select iolat's series everywhere:
    // recording rules, alerts on raw metrics, and the dashboards' defaults.
    // IolatDown and IolatProgramsDetached apply it to `up`, so it must tell
    // iolat's targets from the others (name iolat's job).
    iolatSelector: 'job="iolat"',

    // The label that tells clusters (or regions, sites) apart when one
    // Prometheus, Thanos or Mimir holds several: a target label your scrape
    // configs or external_labels set, e.g. `cluster`. It is one of
    // hostLabels, so recording rules keep it and alerts join on it, and the
    // dashboards get a Cluster variable. A label that is absent costs
    // nothing: `by (cluster)` and `cluster=~".*"` match series without it.
    // '' drops it from hostLabels and the dashboards.
    clusterLabel: 'cluster',
    // The dashboards' Cluster variable: shown (true), or hidden (false: it
    // stays All, which matches every cluster and series without the label).
    showMultiCluster: true,

    // Labels that identify one host (one iolat process). Recording rules keep
    // them, and alerts join on them. Overriding it, keep clusterLabel in it
    // (or set clusterLabel: '').
    hostLabels: std.filter(function(l) l != '', [self.clusterLabel, 'job', 'instance']),

    // Whether the rules and dashboards have their native-histogram side
    // ("native expression or classic expression"). false for a store without
    // native histograms whose query language lacks their functions:
    // VictoriaMetrics 1.79 (vmalert, MetricsQL) fails a whole expression
    // on histogram_count, histogram_sum or histogram_fraction. false leaves
    // the classic side alone, which Prometheus answers as well
    // (docs/dashboards.md, "On VictoriaMetrics").
    nativeHistograms: true,

    // Range of the rate() in the recording rules. The "5m" in the recording
    // rules' names stays as it is when this changes (the names are the
    // contract dashboards and alerts rely on).
    rateInterval: '5m',

    // Quantiles recorded for every latency histogram, as strings: each one is
    // both the value given to histogram_quantile and the `quantile` label of
    // its series. Alerts use '0.99' (see workloadLatencyQuantile and
    // regressionQuantile), so keep it in the list.
    quantiles: ['0.5', '0.9', '0.99', '0.999'],

    // Disk latency SLO: an I/O is "slow" when its device time (D2C) is above
    // this many seconds: diskLatencySLOThreshold on disks that are not
    // rotational (SSD, NVMe, virtual and stacked disks: everything whose
    // iolat_block_device_info is not rotational="1", or that has none), and
    // diskLatencySLOThresholdRotational on spinning disks
    // (iolat_block_device_info{rotational="1"}). Strings, and each must be
    // one of the classic `le` bounds iolat exports (by default 0.000005
    // 0.00001 0.000025 0.00005 0.0001 0.00025 0.0005 0.001 0.0025 0.005 0.01
    // 0.025 0.05 0.1 0.25 0.5 1 2.5 5 10, and whatever
    // buckets.latency_seconds sets), written exactly as
    // iolat writes it, since the classic path selects le="<this>".
    diskLatencySLOThreshold: '0.01',
    diskLatencySLOThresholdRotational: '0.05',

    // Disk latency SLO target: the fraction of I/Os, per host, disk and
    // operation, that must be at or below diskLatencySLOThreshold.
    diskLatencySLOTarget: 0.99,

    // Multiwindow, multi-burn-rate alerts on the disk latency SLO (Google SRE
    // workbook, chapter 5). An alert fires when the slow-I/O ratio is above
    // factor * (1 - diskLatencySLOTarget) over both its long and its short
    // window. Each window gets its own recording rule,
    // instance_device_op:iolat_block_device_latency_slow:ratio_rate<window>,
    // so the windows must be Prometheus durations usable in a rule name.
    // Which disks and I/Os the burn-rate alerts are for (the slow-I/O ratio
    // rules are recorded for every disk and operation; the dashboards show
    // them all):
    //  - operations matching diskLatencySLOOps: reads and writes. A flush or
    //    a discard is the disk's cache or its garbage collection at work,
    //    and takes long by nature.
    diskLatencySLOOps: 'read|write',
    //  - not the disks whose name matches diskLatencySLOExcludedDevices (a
    //    regex): loop devices (their time is the file system under them),
    //    RAM disks and zram (swap and memory, not storage).
    diskLatencySLOExcludedDevices: 'loop[0-9]+|ram[0-9]+|zram[0-9]+',
    //  - only the top of a stack: a disk that another disk is built on (a
    //    leg of a dm/LVM, dm-crypt or md device: it appears as `device` in
    //    iolat_block_stack_info) does not page, its upper disk does, so one
    //    slow disk under an LV pages once. true: legs page too.
    diskLatencySLOIncludeStackLegs: false,
    //  - disks that did at least diskLatencySLOMinRate of those I/Os per
    //    second over the alert's long window (1/s: 3 600 I/Os in the fast
    //    burn's hour). On an idle disk a few I/Os make any ratio: 1 slow I/O
    //    in 5 is 20 %.
    diskLatencySLOMinRate: 1,

    diskLatencySLOBurnRateAlerts: [
      {
        alert: 'IolatDiskLatencySLOBurnFast',
        longWindow: '1h',  // long window: the burn is sustained
        shortWindow: '5m',  // short window: the burn is still going on (resets fast)
        factor: 14.4,  // 2% of a 30-day budget in 1 h
        'for': '2m',  // how long both windows must stay above the burn rate
        severity: 'critical',
      },
      {
        alert: 'IolatDiskLatencySLOBurnSlow',
        longWindow: '6h',
        shortWindow: '30m',
        factor: 6,  // 5% of a 30-day budget in 6 h
        'for': '15m',
        severity: 'warning',
      },
    ],

    // Quantiles recorded per host and workload
    // (instance_workload:iolat_workload_device_latency_seconds:quantile5m),
    // as strings like quantiles.
    workloadQuantiles: ['0.5', '0.9', '0.99'],

    // IolatSeriesOverBudget: iolat on one host exports more series than this
    // (the sum of its iolat_series gauge, every family) for seriesBudgetFor.
    // The budget a metrics store gives each host's exporter; docs/serve.md
    // says what each workload, disk and option costs.
    seriesBudgetPerHost: 10000,
    seriesBudgetFor: '30m',

    // IolatWorkloadLatencyHigh: a workload's (VM, pod, container, service,
    // cgroup) device-time quantile, over all its disks, above this many
    // seconds for workloadLatencyFor.
    workloadP99Threshold: 0.05,
    // Which workloads that alert is for: named ones. Not the root cgroup
    // ("/": a whole machine's I/O outside any child cgroup, a guest's all
    // of it; the disk SLO alerts cover it), not `other` (the cap's mix of
    // many workloads) and not `none` (I/O without a cgroup).
    workloadAlertSelector: 'workload!="/", kind!~"none|other"',
    // The quantile that alert looks at; must be in quantiles.
    workloadLatencyQuantile: '0.99',
    // How long the workload's latency must stay above the threshold.
    workloadLatencyFor: '5m',

    // IolatDiskLatencyRegression: a disk's device-time quantile is above
    // regressionFactor times what it was regressionOffset before, and above
    // regressionMinLatency seconds (so that 50 us -> 120 us on an idle NVMe
    // disk does not page), for regressionFor.
    regressionFactor: 2,
    regressionMinLatency: 0.001,
    // The quantile compared; must be in quantiles.
    regressionQuantile: '0.99',
    // How far back the comparison looks (same hour, same weekday).
    regressionOffset: '1w',
    // How long the regression must last.
    regressionFor: '30m',

    // IolatScrapeSlow: iolat took more than this many seconds to build and
    // render its last answer (iolat_scrape_duration_seconds), for
    // scrapeSlowFor.
    scrapeDurationThreshold: 1,
    // ... or Prometheus' own scrape of iolat (scrape_duration_seconds) took
    // more than this fraction of the scrape timeout ...
    scrapeTimeoutRatio: 0.8,
    // ... the timeout being scrape_timeout_seconds when Prometheus exports
    // it (--enable-feature=extra-scrape-metrics), else this many seconds
    // (Prometheus' default scrape_timeout).
    scrapeTimeoutDefault: 10,
    // How long the scrape must stay slow.
    scrapeSlowFor: '15m',

    // IolatUntimedCompletions: the fraction of a disk's completions that were
    // counted but not timed (the start of the I/O was not seen) over
    // untimedWindow is above this.
    untimedRatioThreshold: 0.01,
    // Window of that ratio.
    untimedWindow: '10m',
    // Which iolat_block_untimed_total series that alert looks at, as label
    // matchers, one selector each. Left out by default: flush requests'
    // total time. The kernel's flush machinery makes those requests itself
    // and stamps no creation time on them, so on a disk with a volatile
    // write cache every flush counts as untimed in view="total" (their device
    // time is measured).
    untimedSelectors: ['view="device"', 'view="total",op!="flush"'],
    // How long the ratio must stay above the threshold.
    untimedFor: '15m',

    // IolatMapFull: window in which a "map full" event
    // (iolat_collector_events_total{event=~"hist_map_full|rq_map_full|bio_map_full"})
    // must have happened.
    mapFullWindow: '10m',

    // IolatWorkloadCardinalityCap: fires while the number of workload label
    // sets has been at its cap (workloads.max) at some time in this window.
    // (Not on iolat_workload_folded_completions_total alone: it also counts
    // the I/O of cgroups that were gone before iolat could name them, which
    // a host running many short-lived cgroups has all the time.)
    workloadCapWindow: '30m',

    // IolatDown: how long `up` must be 0.
    downFor: '5m',

    // IolatProgramsDetached: how long iolat may be up without its completion
    // program attached. Regexp of the completion programs' names in
    // iolat_bpf_program_runs_total{program}.
    programsDetachedFor: '5m',
    completionProgramRegexp: 'rq_complete.*|bio_complete.*',

    // IolatConfigReloadFailed: how long the last SIGHUP may stay refused.
    configReloadFailedFor: '5m',

    // IolatUserConfigDown: how long a user's config (--config.dir) may stay
    // failed.
    userConfigDownFor: '5m',

    // Where the runbooks are: each alert's runbook_url is this plus
    // '#' + the alert name in lower case (the anchor of its section, as
    // Markdown renderers make it). The default is the copy the package
    // installs on every host running iolat (make install: PREFIX/share/doc/
    // iolat/runbooks.md, kept uncompressed by the Debian package). Set it to
    // where your on-call reads docs/runbooks.md from a browser: your wiki,
    // your Git server's view of the file (e.g.
    // 'https://git.example.com/ops/iolat/blob/main/docs/runbooks.md') or an
    // internal web server serving /usr/share/doc/iolat.
    runbookURLBase: 'file:///usr/share/doc/iolat/runbooks.md',
  },
}
