// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Alerts of the iolat mixin (group iolat.alerts). Every threshold, window and
// selector comes from $._config (config.libsonnet); every alert links to its
// section of docs/runbooks.md.
//
// Alerts on recording rules (instance_device_op:..., instance_workload_op:...)
// do not repeat iolatSelector: the rules were built from selected series
// only, and they keep no label the selector could name except hostLabels.
{
  local cfg = $._config,

  assert std.member(cfg.quantiles, cfg.workloadLatencyQuantile) :
         'workloadLatencyQuantile must be one of quantiles',
  assert std.member(cfg.quantiles, cfg.regressionQuantile) :
         'regressionQuantile must be one of quantiles',

  local sel(extra=[]) =
    '{' + std.join(',', std.filter(function(m) m != '', [cfg.iolatSelector] + extra)) + '}',
  local hostOn = 'on(%s)' % std.join(',', cfg.hostLabels),

  // A number as PromQL and people write it: 0.144, not 0.14400000000000013.
  // (jsonnet's %g fails on 0.)
  local num(x) = if x == 0 then '0' else std.format('%g', x),

  local runbook(alert) = cfg.runbookURLBase + '#' + std.asciiLower(alert),

  // The parts every alert has: its runbook and its severity.
  local alert(name, severity, expr, summary, description, forDuration=null) = {
    alert: name,
    expr: expr,
    labels: { severity: severity },
    annotations: {
      summary: summary,
      description: description,
      runbook_url: runbook(name),
    },
  } + (if forDuration != null then { 'for': forDuration } else {}),

  // Template that prints the current value of `metric` for this alert's
  // host (or `labels`, taken from the alert's own labels), formatted by
  // `fmt` (a template function such as humanize or humanizeDuration).
  // `matchers` are added to the selector, and `wrap` puts the selector in an
  // expression ('increase(%s[30m])'). "unknown" when the query finds nothing.
  local valueOf(metric, fmt, labels=cfg.hostLabels, matchers=[], wrap='%s') =
    local selector = '%s{%s}' % [
      metric,
      std.join(',', std.filter(function(m) m != '', matchers) + ['%s=%%q' % l for l in labels]),
    ];
    '{{ with printf `%s` %s | query }}{{ . | first | value | %s }}{{ else }}unknown{{ end }}'
    % [wrap % selector, std.join(' ', ['$labels.' + l for l in labels]), fmt],
  // iolatSelector as a matcher inside such a template's printf format.
  local printfSel = std.strReplace(cfg.iolatSelector, '%', '%%'),

  local errorBudget = 1 - cfg.diskLatencySLOTarget,

  // The slow-I/O ratio over `window` of the operations and disks the SLO
  // alerts are for.
  local sloSelector = '{op=~"%s",device!~"%s"}' % [cfg.diskLatencySLOOps, cfg.diskLatencySLOExcludedDevices],
  local slowRatio(window) =
    'instance_device_op:iolat_block_device_latency_slow:ratio_rate' + window + sloSelector,
  local hostDeviceOn = 'on(%s)' % std.join(',', cfg.hostLabels + ['device']),
  local hostDeviceOpLabels = std.join(',', cfg.hostLabels + ['device', 'op']),

  // A burn-rate alert's expression: both windows above the burn rate, on a
  // disk that did at least diskLatencySLOMinRate I/Os a second over the long
  // window, and (unless diskLatencySLOIncludeStackLegs) is no other disk's
  // leg: a leg is the `device` of an iolat_block_stack_info series.
  local sloBurn(a) =
    local burn = num(a.factor * errorBudget);
    |||
      (
        %(long)s > %(burn)s
        and
        %(short)s > %(burn)s
      )
      and on(%(by)s)
      sum by (%(by)s) (rate(iolat_block_completions_total%(sel)s[%(w)s])) >= %(min)s
    ||| % {
      long: slowRatio(a.longWindow),
      short: slowRatio(a.shortWindow),
      burn: burn,
      by: hostDeviceOpLabels,
      sel: sel(),
      w: a.longWindow,
      min: num(cfg.diskLatencySLOMinRate),
    }
    + (if cfg.diskLatencySLOIncludeStackLegs then ''
       else 'unless %s\niolat_block_stack_info%s\n' % [hostDeviceOn, sel()]),

  // The SLO threshold of the alert's disk, as a template: the rotational
  // one when iolat_block_device_info says the disk is rotational.
  local sloThreshold =
    local labels = cfg.hostLabels + ['device'];
    '{{ if printf `iolat_block_device_info{%s}` %s | query }}%s{{ else }}%s{{ end }}' % [
      std.join(',', std.filter(function(m) m != '', [printfSel, 'rotational="1"']) + ['%s=%%q' % l for l in labels]),
      std.join(' ', ['$labels.' + l for l in labels]),
      cfg.diskLatencySLOThresholdRotational,
      cfg.diskLatencySLOThreshold,
    ],

  prometheusAlerts+:: {
    groups+: [
      {
        name: 'iolat.alerts',
        rules:
          // The disk latency SLO, multiwindow multi-burn-rate, for the disks
          // and I/Os that should page (config.libsonnet: diskLatencySLOOps,
          // ...ExcludedDevices, ...IncludeStackLegs, ...MinRate).
          [
            alert(
              a.alert,
              a.severity,
              sloBurn(a),
              'Disk {{ $labels.device }} on {{ $labels.instance }} burns its {{ $labels.op }} latency error budget %s times too fast.'
              % num(a.factor),
              ('{{ $value | humanizePercentage }} of the {{ $labels.op }} I/Os of {{ $labels.device }} on {{ $labels.instance }} '
               + 'took more than %(t)ss of device time over the last %(long)s (and over the last %(short)s); '
               + 'the SLO allows %(budget)s, and above %(factor)s times that a 30-day error budget lasts less than %(days)s days.')
              % {
                t: sloThreshold,
                long: a.longWindow,
                short: a.shortWindow,
                budget: std.format('%g%%', 100 * errorBudget),
                factor: num(a.factor),
                days: std.format('%.2g', 30 / a.factor),
              },
              a['for'],
            )
            for a in cfg.diskLatencySLOBurnRateAlerts
          ]
          + [
            alert(
              'IolatWorkloadLatencyHigh',
              'warning',
              'instance_workload_op:iolat_workload_device_latency_seconds:quantile5m{quantile="%s"%s} > %s'
              % [cfg.workloadLatencyQuantile,
                 if cfg.workloadAlertSelector == '' then '' else ', ' + cfg.workloadAlertSelector,
                 num(cfg.workloadP99Threshold)],
              // `op` is absent where serve folds it away (its default): "slow I/O".
              'Workload {{ $labels.kind }}/{{ $labels.workload }} on {{ $labels.instance }} has slow {{ with $labels.op }}{{ . }} {{ end }}I/O.',
              'The p%(p)s device time of the %(op)sI/Os of %(w)s on {{ $labels.instance }}, all its disks together, is {{ $value | humanizeDuration }}, above %(t)ss for %(for)s.'
              % {
                p: num(100 * std.parseJson(cfg.workloadLatencyQuantile)),
                op: '{{ with $labels.op }}{{ . }} {{ end }}',
                w: '{{ $labels.kind }} {{ $labels.workload }}',
                t: num(cfg.workloadP99Threshold),
                'for': cfg.workloadLatencyFor,
              },
              cfg.workloadLatencyFor,
            ),

            local qName = 'instance_device_op:iolat_block_device_latency_seconds:quantile5m';
            local qMatch = 'quantile="%s"' % cfg.regressionQuantile;
            local q = '%s{%s}' % [qName, qMatch];
            alert(
              'IolatDiskLatencyRegression',
              'warning',
              |||
                %(q)s > %(factor)s * (%(q)s offset %(offset)s)
                and
                %(q)s > %(min)s
              ||| % {
                q: q,
                factor: num(cfg.regressionFactor),
                offset: cfg.regressionOffset,
                min: num(cfg.regressionMinLatency),
              },
              'Disk {{ $labels.device }} on {{ $labels.instance }} got slower than %s before.' % cfg.regressionOffset,
              ('The p%(p)s device time of {{ $labels.op }} I/Os on {{ $labels.device }} at {{ $labels.instance }} is {{ $value | humanizeDuration }}, '
               + 'more than %(factor)s times the %(before)s it was %(offset)s before, for %(for)s.')
              % {
                p: num(100 * std.parseJson(cfg.regressionQuantile)),
                factor: num(cfg.regressionFactor),
                offset: cfg.regressionOffset,
                'for': cfg.regressionFor,
                before: valueOf(
                  qName,
                  'humanizeDuration',
                  labels=cfg.hostLabels + ['device', 'op'],
                  matchers=[qMatch],
                  wrap='%s offset ' + cfg.regressionOffset,
                ),
              },
              cfg.regressionFor,
            ),

            alert(
              'IolatDiskErrors',
              'warning',
              'instance_device_op:iolat_block_errors:rate5m > 0',
              'Disk {{ $labels.device }} on {{ $labels.instance }} completes {{ $labels.op }} I/Os with errors.',
              '{{ $labels.device }} on {{ $labels.instance }} completed {{ $value | printf "%.3g" }} {{ $labels.op }} I/Os per second with an error status over the last 5m.',
            ),

            alert(
              'IolatDown',
              'warning',
              'up%s == 0' % sel(),
              'iolat on {{ $labels.instance }} is down.',
              'Prometheus has failed to scrape iolat at {{ $labels.instance }} (job {{ $labels.job }}) for %s: that host\'s disk latency is not monitored.'
              % cfg.downFor,
              cfg.downFor,
            ),

            alert(
              'IolatProgramsDetached',
              'warning',
              'up%s == 1 unless %s iolat_bpf_program_runs_total%s'
              % [sel(), hostOn, sel(['program=~"%s"' % cfg.completionProgramRegexp])],
              'iolat on {{ $labels.instance }} runs without its completion program.',
              'iolat at {{ $labels.instance }} answers scrapes but has exported no iolat_bpf_program_runs_total series of a completion program (%s) for %s: it counts no I/O, and its block metrics do not move.'
              % [cfg.completionProgramRegexp, cfg.programsDetachedFor],
              cfg.programsDetachedFor,
            ),

            alert(
              'IolatMapFull',
              'warning',
              'increase(iolat_collector_events_total%s[%s]) > 0'
              % [sel(['event=~"hist_map_full|rq_map_full|bio_map_full"']), cfg.mapFullWindow],
              'A kernel map of iolat on {{ $labels.instance }} is full.',
              'iolat at {{ $labels.instance }} counted {{ $value | humanize }} {{ $labels.event }} events in the last %s: I/O that did not fit in a full kernel map (not counted, or counted but not timed).'
              % cfg.mapFullWindow,
            ),

            alert(
              'IolatUntimedCompletions',
              'warning',
              |||
                sum by (%(byView)s) (
                  %(untimed)s
                )
                / ignoring(view) group_left
                sum by (%(by)s) (rate(iolat_block_completions_total%(sel)s[%(w)s]))
                > %(t)s
              ||| % {
                by: std.join(',', cfg.hostLabels + ['device', 'op']),
                byView: std.join(',', cfg.hostLabels + ['device', 'op', 'view']),
                untimed: std.join(
                  '\n  or\n  ',
                  ['rate(iolat_block_untimed_total%s[%s])' % [sel([m]), cfg.untimedWindow] for m in cfg.untimedSelectors]
                ),
                sel: sel(),
                w: cfg.untimedWindow,
                t: num(cfg.untimedRatioThreshold),
              },
              'iolat on {{ $labels.instance }} cannot time many {{ $labels.op }} I/Os of {{ $labels.device }}.',
              '{{ $value | humanizePercentage }} of the {{ $labels.op }} completions of {{ $labels.device }} on {{ $labels.instance }} over the last %s were counted without a {{ $labels.view }} time (their start was not seen); above %s for %s, so its latency histograms leave them out.'
              % [cfg.untimedWindow, std.format('%g%%', 100 * cfg.untimedRatioThreshold), cfg.untimedFor],
              cfg.untimedFor,
            ),

            alert(
              'IolatScrapeSlow',
              'warning',
              |||
                iolat_scrape_duration_seconds%(sel)s > %(t)s
                or
                scrape_duration_seconds%(sel)s > %(on)s (%(ratio)s * scrape_timeout_seconds%(sel)s)
                or
                (scrape_duration_seconds%(sel)s > %(fallback)s unless %(on)s scrape_timeout_seconds%(sel)s)
              ||| % {
                sel: sel(),
                t: num(cfg.scrapeDurationThreshold),
                on: hostOn,
                ratio: num(cfg.scrapeTimeoutRatio),
                fallback: num(cfg.scrapeTimeoutRatio * cfg.scrapeTimeoutDefault),
              },
              'Scraping iolat on {{ $labels.instance }} is slow.',
              ('iolat at {{ $labels.instance }} took %(own)s to build its last answer (threshold %(t)ss), and Prometheus took %(prom)s to scrape it '
               + '(threshold %(ratio)s of its scrape timeout), for %(for)s. Slow scrapes end in timeouts and gaps in every iolat series.')
              % {
                own: valueOf('iolat_scrape_duration_seconds', 'humanizeDuration', matchers=[printfSel]),
                prom: valueOf('scrape_duration_seconds', 'humanizeDuration', matchers=[printfSel]),
                t: num(cfg.scrapeDurationThreshold),
                ratio: std.format('%g%%', 100 * cfg.scrapeTimeoutRatio),
                'for': cfg.scrapeSlowFor,
              },
              cfg.scrapeSlowFor,
            ),

            alert(
              'IolatWorkloadCardinalityCap',
              'warning',
              |||
                max_over_time(iolat_workload_label_sets%(sel)s[%(w)s])
                >= %(on)s
                iolat_workload_label_sets_max%(sel)s
              ||| % { sel: sel(), on: hostOn, w: cfg.workloadCapWindow },
              'iolat on {{ $labels.instance }} reached its cap of workload label sets.',
              ('iolat at {{ $labels.instance }} had {{ $value | humanize }} workload label sets, its cap (workloads.max %(max)s), '
               + 'in the last %(w)s, and has %(sets)s now; %(folded)s completions went to kind="other",workload="other" '
               + 'in that time: the I/O of workloads past the cap is not told apart.')
              % {
                sets: valueOf('iolat_workload_label_sets', 'humanize', matchers=[printfSel]),
                max: valueOf('iolat_workload_label_sets_max', 'humanize', matchers=[printfSel]),
                folded: valueOf('iolat_workload_folded_completions_total', 'humanize', matchers=[printfSel], wrap='increase(%s[' + cfg.workloadCapWindow + '])'),
                w: cfg.workloadCapWindow,
              },
            ),

            // iolat_series{family,mode}: serve's own count of the series it
            // exports, per family. Info: it pages nobody, it tells the team
            // running the metrics store which hosts cost more than planned.
            alert(
              'IolatSeriesOverBudget',
              'info',
              'sum by (%(by)s) (iolat_series%(sel)s) > %(budget)s' % {
                by: std.join(',', cfg.hostLabels),
                sel: sel(),
                budget: cfg.seriesBudgetPerHost,
              },
              'iolat on {{ $labels.instance }} exports more series than its budget.',
              ('iolat at {{ $labels.instance }} has exported {{ $value | humanize }} series for %(for)s, more than '
               + 'seriesBudgetPerHost (%(budget)s): the metrics store pays for each one. iolat_series{family} says which families.')
              % { 'for': cfg.seriesBudgetFor, budget: cfg.seriesBudgetPerHost },
              cfg.seriesBudgetFor,
            ),

            alert(
              'IolatConfigReloadFailed',
              'warning',
              'iolat_config_last_reload_successful%s == 0' % sel(),
              'iolat on {{ $labels.instance }} refused its last configuration reload.',
              'The last SIGHUP of iolat at {{ $labels.instance }} was refused %s or more ago: it still runs the configuration from before, the files on disk are not what runs, and a restart with them would fail.'
              % cfg.configReloadFailedFor,
              cfg.configReloadFailedFor,
            ),

            alert(
              'IolatUserConfigDown',
              'warning',
              'iolat_user_config_up%s == 0' % sel(),
              'User config {{ $labels.config }} of iolat on {{ $labels.instance }} failed.',
              'The user config {{ $labels.config }} (--config.dir) of iolat at {{ $labels.instance }} failed to load or attach and has been disabled for %s: its metrics are missing.'
              % cfg.userConfigDownFor,
              cfg.userConfigDownFor,
            ),
          ],
      },
      // Completions the kernel counted and iolat did not
      // (iolat_block_unseen_completions, docs/serve.md "The kernel's count
      // beside iolat's"). Its settings are completionsUnseen in _config, if
      // given, over the defaults here.
      local unseen = {
        // New misses in this window, against the kernel's completions in it.
        window: '30m',
        // Above 0.1 % (1 in 1 000): 5 times the rate at which BPF programs
        // were measured to miss a completion now and then (README, "Known
        // error bounds and misses": 1 in 5 000 to 30 000), so that alone
        // does not fire, while a full map or a detached program does.
        ratio: 0.001,
        // And at least this many in the window: an idle disk's one miss is
        // not a trend.
        minMissed: 10,
        'for': '15m',
      } + (if std.objectHas(cfg, 'completionsUnseen') then cfg.completionsUnseen else {});
      // The difference without a scrape's dip below 0 (I/O completing while
      // it reads both counts): misses only add, so the highest value of a
      // few scrapes is the count.
      local missed(offset) =
        'max_over_time(iolat_block_unseen_completions%s[5m]%s)' % [sel(), offset];
      local grown = '(%s - %s)' % [missed(''), missed(' offset ' + unseen.window)];
      {
        name: 'iolat.completions',
        rules: [
          alert(
            'IolatCompletionsUnseen',
            'warning',
            |||
              %(grown)s
              / clamp_min(increase(iolat_block_kernel_completed_total%(sel)s[%(w)s]), 1)
              > %(ratio)s
              and
              %(grown)s > %(min)s
            ||| % {
              grown: grown,
              sel: sel(),
              w: unseen.window,
              ratio: num(unseen.ratio),
              min: unseen.minMissed,
            },
            'iolat on {{ $labels.instance }} misses {{ $labels.op }} completions of {{ $labels.device }}.',
            'iolat at {{ $labels.instance }} did not count {{ $value | humanizePercentage }} of the {{ $labels.op }} completions the kernel counted on {{ $labels.device }} over the last %s (more than %s, and at least %d): its counts and latency histograms of that disk are short.'
            % [unseen.window, std.format('%g%%', 100 * unseen.ratio), unseen.minMissed],
            unseen['for'],
          ),
        ],
      },
    ],
  },
}
