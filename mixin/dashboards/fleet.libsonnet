// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// "iolat / Fleet": every host's disks at once: ranked by latency, grouped by
// disk model or by a label, and compared with the week (or day) before.
// It reads only recording rules' outputs (mixin/rules.libsonnet) and cheap
// per-host series (iolat_block_device_info; the disks' native histograms,
// one series per disk and operation), never raw per-workload series or raw
// histogram buckets, so that a global view queries O(hosts x disks) series:
// tests/integration/test_dashboards.sh fails on a raw one.
local g = import '../lib/grafana.libsonnet';
local p = import '../lib/promql.libsonnet';
local v = import '../lib/variables.libsonnet';
local t = g.target;

{
  grafanaDashboards+:: {
    'iolat-fleet.json':
      local cfg = $._config;
      local p = (import '../lib/promql.libsonnet') { native:: cfg.nativeHistograms };
      local hostBy = cfg.hostLabels;
      local hostList = std.join(', ', hostBy);
      local diskBy = hostBy + ['device'];
      local diskList = std.join(', ', diskBy);
      local disk = v.clusterMatchers(cfg.clusterLabel) + ['job=~"$job"', 'instance=~"$instance"', 'device=~"$device"', 'op=~"$op"'];
      local s = p.sel(disk);
      local dev = 'iolat_block_device_latency_seconds';
      local tot = 'iolat_block_total_latency_seconds';
      // Recording rules (mixin/rules.libsonnet, group iolat.rules).
      local lvl = 'instance_device_op';
      local devQ = 'instance_device_op:iolat_block_device_latency_seconds:quantile5m';
      local totQ = 'instance_device_op:iolat_block_total_latency_seconds:quantile5m';
      local iops = 'instance_device_op:iolat_block_completions:rate5m';
      local rq(rule, q) = '%s{quantile="%s", %s}' % [rule, q, std.join(', ', disk)];
      // The mean over the time range of a disk's 5-minute quantile, its
      // slowest selected operation's (floats: the same in every store and
      // with native histograms).
      local rangeQ(rule, q) = 'max by (%s) (avg_over_time(%s[$__range]))' % [diskList, rq(rule, q)];
      local host = v.clusterMatchers(cfg.clusterLabel) + ['job=~"$job"', 'instance=~"$instance"'];
      local wlBy = hostBy + ['kind', 'workload'];
      local wlLegend = '{{kind}}/{{workload}} on {{instance}}';
      local rules = 'From the recording rules of iolat.rules (mixin/rules.libsonnet, window %s): empty if Prometheus does not load them.' % cfg.rateInterval;
      // Disks of the model in $model (a repeated row has one). A native
      // histogram cannot be multiplied by the info metric (Prometheus 2.42
      // returns nothing), so the disks are picked with `and on(...)`.
      local ofModel = ' and on (%s) iolat_block_device_info{model=~"$model"}' % diskList;
      local d2c = 'Device time is blktrace D2C: from the issue of the request to the driver to its completion.';
      local q2c = 'Total time is blktrace Q2C at the request layer: from the creation of the request to its completion (queueing in the block layer, Q2D, plus D2C).';
      local both = 'Works with native histograms and with classic buckets. ' + rules;
      // The $topn disk/op pairs whose p99 D2C grew the most against $shift before.
      local topShift = 'topk($topn, %s / %s offset $shift)' % [rq(devQ, '0.99'), rq(devQ, '0.99')];
      // Drill-down: from a host's or a disk's series (or table row) to the
      // host dashboard, that disk chosen.
      local toHost(f) = [
        g.link('Host ' + f('instance') + ': its disks', 'iolat-disks', carry=['op'],
               set=[['job', f('job')], ['instance', f('instance')]]),
        g.link('Host ' + f('instance') + ': its workloads', 'iolat-workloads', carry=['op'],
               set=[['job', f('job')], ['instance', f('instance')]]),
      ];
      local toDisk(f) = [
        g.link('Disk ' + f('device') + ' on ' + f('instance'), 'iolat-disks', carry=['op'],
               set=[['job', f('job')], ['instance', f('instance')], ['device', f('device')]]),
        g.link('Workloads on ' + f('device') + ' on ' + f('instance'), 'iolat-workloads', carry=['op'],
               set=[['job', f('job')], ['instance', f('instance')], ['device', f('device')]]),
      ] + toHost(f);
      local field(l) = '${__field.labels.%s}' % l;
      local cell(l) = '${__data.fields.%s}' % l;

      g.dashboard(
        uid='iolat-fleet',
        title='iolat / Fleet',
        description='Block I/O latency across every host running iolat: disks ranked by p99, latency per disk model or per label, and hosts whose latency shifted against the week or day before.',
        tags=['block-io', 'latency', 'fleet'],
        time='now-24h',
        variables=[
          v.datasource,
          v.cluster(cfg.clusterLabel, cfg.showMultiCluster),
          v.job(cfg.iolatSelector, cluster=cfg.clusterLabel),
          v.instance(cluster=cfg.clusterLabel),
          v.device(iops),
          v.op(iops),
          v.model,
          v.custom('group_by', 'Group by', std.filter(function(l) l != '', ['instance', 'job', cfg.clusterLabel, 'device', 'op']), 'instance',
                   description='The label the "Latency by ..." panels split the fleet by.'),
          v.custom('shift', 'Compare with', ['1d', '1w'], cfg.regressionOffset,
                   description='How far back the "latency shifts" panels compare: the same hour a day or a week before.'),
          v.custom('topn', 'Top N', ['5', '10', '20', '50'], '10', description='How many disks the top-N panels show.'),
        ],
        rows=[
          g.row('Disks ranked by latency', [
            g.table('Disks ranked by p99 device time (D2C) over the time range',
                    'Every selected host\'s disks, slowest first: p99 and p50 of device time and p99 of total time, each the mean over the time range shown of the 5-minute quantile of the disk\'s slowest selected operation, and the average IOPS over the range (all selected operations together). ' + d2c + ' ' + q2c + ' Sort by any column; a disk with few I/Os has a noisy p99, look at its IOPS. ' + both,
                    [
                      t(rangeQ(devQ, '0.99')),
                      t(rangeQ(devQ, '0.5')),
                      t(rangeQ(totQ, '0.99')),
                      t('sum by (%s) (avg_over_time(%s%s[$__range]))' % [diskList, iops, s]),
                    ],
                    labels=diskBy,
                    columns=['p99 D2C', 'p50 D2C', 'p99 Q2C', 'IOPS'],
                    units=['s', 's', 's', 'iops'],
                    sortBy='p99 D2C', h=10, links=toDisk(cell)),
            g.timeseries('Top $topn disks by p99 device time (D2C)',
                         'The $topn disk/operation pairs with the highest p99 device time at each moment (so more than $topn lines over a long range). ' + d2c + ' ' + rules,
                         [t('topk($topn, %s)' % rq(devQ, '0.99'), '{{instance}} {{device}} {{op}}')],
                         unit='s', log=true, thresholdLine=[std.parseJson(cfg.diskLatencySLOThreshold), 'red'], links=toDisk(field)),
            g.timeseries('Fleet-wide device time (D2C) quantiles per op',
                         'p50, p90, p99 and p99.9 of device time over every host\'s disks merged (one histogram for the fleet, per operation). Not narrowed by job, host or disk: the rule op:iolat_block_device_latency_seconds:quantile5m sums every series iolatSelector selects. ' + d2c + ' ' + rules,
                         [t('op:iolat_block_device_latency_seconds:quantile5m{op=~"$op"}', '{{op}} p{{quantile}}')],
                         unit='s', log=true),
          ]),
          g.row('Latency by $group_by', [
            g.timeseries('Device time (D2C) p50 and p99 by $group_by',
                         'Device time quantiles of the selected disks merged per value of the label chosen in "Group by" (instance, job, device or op): which host, disk name or operation is slow across the fleet. ' + d2c + ' ' + both,
                         [
                           t(p.ruleQuantile('0.5', lvl, dev, s, ['$group_by']), '{{$group_by}} p50'),
                           t(p.ruleQuantile('0.99', lvl, dev, s, ['$group_by']), '{{$group_by}} p99'),
                         ], unit='s', log=true),
            g.timeseries('Total time (Q2C) p50 and p99 by $group_by',
                         'Total time quantiles per value of the "Group by" label. ' + q2c + ' ' + both,
                         [
                           t(p.ruleQuantile('0.5', lvl, tot, s, ['$group_by']), '{{$group_by}} p50'),
                           t(p.ruleQuantile('0.99', lvl, tot, s, ['$group_by']), '{{$group_by}} p99'),
                         ], unit='s', log=true),
            g.timeseries('IOPS by $group_by', 'Completed I/Os per second per value of the "Group by" label (iolat_block_completions_total). ' + rules,
                         [t('sum by ($group_by) (%s%s)' % [iops, s], '{{$group_by}}')], unit='iops', w=8),
            g.heatmap('Fleet device time (D2C)',
                      'Distribution of device time over all the selected hosts\' disks merged, from native histograms or classic le buckets, whichever Prometheus scrapes. ' + d2c,
                      [t(p.ruleHeatmap(lvl, dev, s), '{{le}}')], w=8),
          ]),
          g.row('Disk model: $model', description='The disks of the model(s) chosen in "Disk model" (iolat_block_device_info), merged.', panels=[
            g.heatmap('$model: device time (D2C)',
                      'Distribution of device time over every selected disk of model $model, from native histograms or classic le buckets, whichever Prometheus scrapes (disks picked with "and on(' + diskList + ') iolat_block_device_info{model=...}"; a native histogram cannot be multiplied by the info metric). ' + d2c + ' Empty while iolat does not export iolat_block_device_info.',
                      [t(p.ruleHeatmap(lvl, dev, s, ofModel), '{{le}}')]),
            g.timeseries('$model: device time (D2C) p50 and p99 per op',
                         'Device time quantiles of all disks of model $model merged, per operation: the model\'s normal latency, to compare models or spot one that changed. ' + d2c + ' ' + both,
                         [
                           t(p.ruleQuantile('0.5', lvl, dev, s, ['op'], filter=ofModel), '{{op}} p50'),
                           t(p.ruleQuantile('0.99', lvl, dev, s, ['op'], filter=ofModel), '{{op}} p99'),
                         ], unit='s', log=true),
          ]),
          g.row('Latency shifts: now against $shift before', [
            g.table('Disks whose p99 changed most (now / $shift before)',
                    'Disks (per operation) with the largest ratio of p99 device time now to p99 device time $shift before, at the end of the time range. Above %g (regressionFactor) and %g s (regressionMinLatency) for %s, alert IolatDiskLatencyRegression fires. Empty until Prometheus holds $shift of history. ' % [cfg.regressionFactor, cfg.regressionMinLatency, cfg.regressionFor] + d2c + ' ' + rules,
                    [
                      t(topShift),
                      t('%s\nand on (%s, op)\n%s' % [rq(devQ, '0.99'), diskList, topShift]),
                      t('%s offset $shift\nand on (%s, op)\n%s' % [rq(devQ, '0.99'), diskList, topShift]),
                    ],
                    labels=diskBy + ['op'],
                    columns=['now / before', 'p99 D2C now', 'p99 D2C $shift before'],
                    units=['none', 's', 's'],
                    sortBy='now / before', w=12, h=9, links=toDisk(cell)),
            g.timeseries('p99 device time (D2C) now / $shift before, per host',
                         'Ratio of each host\'s p99 device time (its selected disks merged) to the same quantile $shift earlier. 1 = unchanged. A lasting change shows as a step: it rises when the latency moved and comes back to 1 after $shift, when the compared window has the change too. The dashed line is regressionFactor (%g). Empty until Prometheus holds $shift of history. ' % cfg.regressionFactor + d2c + ' ' + both,
                         [t('(\n%s)\n/\n(\n%s)' % [p.ruleQuantile('0.99', lvl, dev, s, hostBy), p.ruleQuantile('0.99', lvl, dev, s, hostBy, offset='$shift')], '{{instance}}')],
                         unit='none', thresholdLine=[cfg.regressionFactor, 'red'], w=12, h=9, links=toHost(field)),
            g.timeseries('p99 device time (D2C) per host: now and $shift before',
                         'Each host\'s p99 device time (selected disks merged) and the same $shift earlier, drawn over each other: a step between the two is a shift in latency (a firmware, kernel or workload change). ' + d2c + ' ' + both,
                         [
                           t(p.ruleQuantile('0.99', lvl, dev, s, hostBy), '{{instance}} now'),
                           t(p.ruleQuantile('0.99', lvl, dev, s, hostBy, offset='$shift'), '{{instance}} $shift before'),
                         ], unit='s', log=true, w=24, links=toHost(field)),
          ]),
          g.row('Workloads across the fleet', description='Per host and workload (VM, pod, container, service), from the recording rules instance_workload:* (every disk and operation of a workload together): O(hosts x workloads) series, no buckets.', panels=[
            g.timeseries('Top $topn workloads by p99 device time (D2C)',
                         'The $topn workloads of the selected hosts with the highest 5-minute p99 device time at each moment (instance_workload:iolat_workload_device_latency_seconds:quantile5m). ' + d2c + ' A workload with few I/Os has a noisy p99: check its IOPS. ' + rules,
                         [t('topk($topn, instance_workload:iolat_workload_device_latency_seconds:quantile5m%s)' % p.sel(host + ['quantile="0.99"']), wlLegend)],
                         unit='s', log=true, thresholdLine=[cfg.workloadP99Threshold, 'red'], w=8, links=toHost(field)),
            g.timeseries('Top $topn workloads by IOPS',
                         'The $topn workloads with the most completed I/Os per second (the count of their latency histogram: instance_workload:iolat_workload_completions:rate5m). ' + rules,
                         [t('topk($topn, instance_workload:iolat_workload_completions:rate5m%s)' % p.sel(host), wlLegend)],
                         unit='iops', w=8, links=toHost(field)),
            g.timeseries('Top $topn workloads by throughput',
                         'The $topn workloads moving the most bytes per second (instance_workload:iolat_workload_bytes:rate5m). ' + rules,
                         [t('topk($topn, instance_workload:iolat_workload_bytes:rate5m%s)' % p.sel(host), wlLegend)],
                         unit='Bps', w=8, links=toHost(field)),
          ]),
        ],
      ),
  },
}
