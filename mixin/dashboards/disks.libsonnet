// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// "iolat / Host and disks": one host's disks, from iolat's per-disk
// histograms and counters (iolat_block_*).
local g = import '../lib/grafana.libsonnet';
local p = import '../lib/promql.libsonnet';
local v = import '../lib/variables.libsonnet';
local t = g.target;

{
  grafanaDashboards+:: {
    'iolat-disks.json':
      local cfg = $._config;
      local p = (import '../lib/promql.libsonnet') { native:: cfg.nativeHistograms };
      local host = v.clusterMatchers(cfg.clusterLabel) + ['job=~"$job"', 'instance=~"$instance"'];
      local hostBy = cfg.hostLabels;
      local diskOn = 'on (%s)' % std.join(', ', hostBy + ['device']);
      // Every disk of the host (the "busiest" rows, the overview, errors).
      local sAll = p.sel(host + ['op=~"$op"']);
      // The disks chosen in $device (the "Disk" rows).
      local s = p.sel(host + ['device=~"$device"', 'op=~"$op"']);
      local dev = 'iolat_block_device_latency_seconds';
      local tot = 'iolat_block_total_latency_seconds';
      local size = 'iolat_block_request_size_bytes';
      local d2c = 'Device time is blktrace D2C: from the issue of the request to the driver to its completion, the time the disk (and its driver) took.';
      local q2c = 'Total time is blktrace Q2C at the request layer: from the creation of the request to its completion, so the time queued in the block layer and the I/O scheduler (Q2D) plus the device time (D2C).';
      local sloT = cfg.diskLatencySLOThreshold;
      local sloTRot = cfg.diskLatencySLOThresholdRotational;
      local slowBudget = std.floor((1 - cfg.diskLatencySLOTarget) * 1e9 + 0.5) / 1e9;
      local quantiles = [['0.5', 'p50'], ['0.9', 'p90'], ['0.99', 'p99'], ['0.999', 'p99.9']];
      local quantileTargets(metric) = [
        t(p.quantile(q[0], metric, s, ['device', 'op']), '{{device}} {{op}} ' + q[1])
        for q in quantiles
      ];
      local both = 'Works with native histograms and with classic buckets (the query has both forms; the one Prometheus has answers).';
      // The $disks disks with the most completed I/Os over the time range
      // (@ end(): the same disks at every step of the graph).
      local busiest = ' and %s topk($disks, sum by (%s) (increase(iolat_block_completions_total%s[$__range] @ end())))'
                      % [diskOn, std.join(', ', hostBy + ['device']), p.sel(host)];
      // Disks no other disk is built on: the host's totals count a raid1
      // write once, on md0, not again on each leg.
      local topOfStack = ' unless %s iolat_block_stack_info%s' % [diskOn, p.sel(host)];
      // The share of I/Os above the SLO threshold of each disk's class, as
      // the recording rules and alerts count it.
      local rotational = 'iolat_block_device_info%s' % p.sel(host + ['rotational="1"']);
      local slowShare(sel, labels, filter='') =
        '(\n%s)\nor\n(\n%s)' % [
          p.fractionAbove(sloTRot, dev, sel, labels, filter=filter + ' and %s %s' % [diskOn, rotational]),
          p.fractionAbove(sloT, dev, sel, labels, filter=filter + ' unless %s %s' % [diskOn, rotational]),
        ];
      // From a disk's series: its heatmaps here, its workloads there.
      local diskLinks(field) = [
        g.link('Disk ' + field + ': heatmaps and detail', 'iolat-disks',
               carry=['job', 'instance', 'op'], set=[['device', field]]),
        g.link('Workloads on disk ' + field, 'iolat-workloads',
               carry=['job', 'instance', 'op'], set=[['device', field]]),
      ];
      local seriesLinks = diskLinks('${__field.labels.device}');
      local threshold = if sloT == sloTRot then '%s s' % sloT else '%s s, %s s on rotational disks' % [sloT, sloTRot];

      g.dashboard(
        uid='iolat-disks',
        title='iolat / Host and disks',
        description='Block I/O latency of one host\'s disks as iolat measures it in the kernel: device time (D2C) and total time (Q2C), IOPS, throughput, request sizes, errors and I/O iolat could not time.',
        tags=['block-io', 'latency'],
        variables=[
          v.datasource,
          v.cluster(cfg.clusterLabel, cfg.showMultiCluster),
          v.job(cfg.iolatSelector, cluster=cfg.clusterLabel),
          v.instance(multi=false, cluster=cfg.clusterLabel),
          v.busiestDevice(cluster=cfg.clusterLabel),
          v.op(),
          v.custom('disks', 'Busiest disks', ['5', '10', '20', '50'], '10',
                   description='How many disks the "busiest disks" panels show: those with the most completed I/Os over the time range.'),
        ],
        rows=[
          g.row('Overview: $instance (top-of-stack disks)', [
            g.stat('IOPS', 'Completed I/Os per second of the host, the selected operations, counted on the disks no other disk is built on (a write to an LV counts once, not again on the disk under it) (iolat_block_completions_total: requests, or bios on bio-based disks).',
                   [t(p.rate('iolat_block_completions_total', sAll, [], filter=topOfStack), 'IOPS')], unit='iops'),
            g.stat('Throughput', 'Bytes per second completed on the host\'s top-of-stack disks, the selected operations (iolat_block_bytes_total).',
                   [t(p.rate('iolat_block_bytes_total', sAll, [], filter=topOfStack), 'throughput')], unit='Bps'),
            g.stat('p99 device time (D2C)', '99th percentile of device time over the host\'s top-of-stack disks and the selected operations together. ' + d2c + ' ' + both,
                   [t(p.quantile('0.99', dev, sAll, [], filter=topOfStack), 'p99 D2C')], unit='s',
                   steps=[[std.parseJson(sloT), 'red']]),
            g.stat('p99 total time (Q2C)', '99th percentile of total time over the host\'s top-of-stack disks and the selected operations together. ' + q2c + ' ' + both,
                   [t(p.quantile('0.99', tot, sAll, [], filter=topOfStack), 'p99 Q2C')], unit='s'),
            g.stat('Slow I/O (D2C above the SLO threshold)',
                   'Share of the host\'s I/Os (top-of-stack disks, selected operations) whose device time (D2C) was above the SLO threshold of their disk\'s class, %s; the SLO allows %g%% (target %g%%). Thresholds and target are diskLatencySLOThreshold, diskLatencySLOThresholdRotational and diskLatencySLOTarget in mixin/config.libsonnet. ' % [threshold, slowBudget * 100, cfg.diskLatencySLOTarget * 100] + both,
                   [t('sum(\n%s\n* on (%s) group_left\n%s)\n/\n%s' % [
                     slowShare(sAll, hostBy + ['device'], topOfStack),
                     std.join(', ', hostBy + ['device']),
                     p.rate('iolat_block_completions_total', sAll, hostBy + ['device'], filter=topOfStack),
                     p.rate('iolat_block_completions_total', sAll, [], filter=topOfStack),
                   ], 'slow')], unit='percentunit',
                   steps=[[slowBudget, 'red']]),
            g.stat('Errors', 'Completions with an error status per second, every disk of the host (iolat_block_errors_total).',
                   [t(p.rate('iolat_block_errors_total', sAll, []), 'errors/s')], unit='reqps',
                   steps=[[0.000001, 'red']]),
          ]),
          g.row('The $disks busiest disks of $instance', description='The disks with the most completed I/Os over the time range, as series: a host with hundreds of disks shows its busiest few. Click a series for that disk\'s heatmaps or its workloads.', panels=[
            g.timeseries('p99 device time (D2C) per disk and op',
                         '99th percentile of device time per disk and operation, for the $disks busiest disks of the time range ("Busiest disks"). ' + d2c + ' The dashed line is the SLO threshold (%s). ' % threshold + both,
                         [t(p.quantile('0.99', dev, sAll, ['device', 'op'], filter=busiest), '{{device}} {{op}}')],
                         unit='s', log=true, thresholdLine=[std.parseJson(sloT), 'red'], h=10, links=seriesLinks),
            g.timeseries('p99 total time (Q2C) per disk and op',
                         '99th percentile of total time per disk and operation, for the $disks busiest disks. ' + q2c + ' Total time far above device time means I/O waits in the block layer queue (a busy disk, a scheduler, a throttle). ' + both,
                         [t(p.quantile('0.99', tot, sAll, ['device', 'op'], filter=busiest), '{{device}} {{op}}')],
                         unit='s', log=true, h=10, links=seriesLinks),
            g.timeseries('Slow I/O share per disk and op',
                         'Share of each disk\'s I/Os (per operation) whose device time (D2C) was above the SLO threshold of its class (%s), for the $disks busiest disks. The dashed line is the error budget, 1 - target = %g%%: above it for long, the SLO burns (alerts IolatDiskLatencySLOBurnFast/Slow, which page for reads and writes of top-of-stack disks only). Set them in mixin/config.libsonnet (the thresholds must be classic le bounds). ' % [threshold, slowBudget * 100] + both,
                         [t(slowShare(sAll, hostBy + ['device', 'op'], busiest), '{{device}} {{op}}')],
                         unit='percentunit', min=0, thresholdLine=[slowBudget, 'red'], w=8, links=seriesLinks),
            g.timeseries('IOPS per disk and op', 'Completed I/Os per second per disk and operation, for the $disks busiest disks (iolat_block_completions_total: requests; bios on bio-based disks such as dm or md without a request queue).',
                         [t(p.rate('iolat_block_completions_total', sAll, ['device', 'op'], filter=busiest), '{{device}} {{op}}')], unit='iops', w=8, links=seriesLinks),
            g.timeseries('Throughput per disk and op', 'Bytes per second completed per disk and operation, for the $disks busiest disks (iolat_block_bytes_total).',
                         [t(p.rate('iolat_block_bytes_total', sAll, ['device', 'op'], filter=busiest), '{{device}} {{op}}')], unit='Bps', w=8, links=seriesLinks),
          ]),
          g.row('Disk $device', description='The disk(s) chosen in "Disk" (by default the busiest of the time range); several chosen disks are merged in the heatmaps.', panels=[
            g.heatmap('$device device time (D2C)',
                      'Distribution of device time on $device (the selected operations): each column is one interval, each cell the I/Os per second whose D2C fell in that bucket (4.4 %% wide for native histograms; for classic buckets, one row per le bound). %s Native histograms or classic buckets, whichever Prometheus scrapes.' % d2c,
                      [t(p.heatmap(dev, s), '{{le}}')]),
            g.heatmap('$device total time (Q2C)',
                      'Distribution of total time on $device. ' + q2c + ' Native histograms or classic buckets, whichever Prometheus scrapes.',
                      [t(p.heatmap(tot, s), '{{le}}')]),
            g.timeseries('$device device time (D2C) quantiles per op',
                         'p50, p90, p99 and p99.9 of device time per disk and operation, over $__rate_interval. ' + d2c + ' The dashed line is the SLO threshold for non-rotational disks (%s s). ' % sloT + both,
                         quantileTargets(dev), unit='s', log=true, thresholdLine=[std.parseJson(sloT), 'red'], w=8, links=seriesLinks),
            g.timeseries('$device total time (Q2C) quantiles per op',
                         'p50, p90, p99 and p99.9 of total time per disk and operation. ' + q2c + ' ' + both,
                         quantileTargets(tot), unit='s', log=true, w=8, links=seriesLinks),
            g.timeseries('$device mean device time (D2C) and queue time (Q2D)',
                         'Mean device time (D2C) per disk and operation, and the mean time requests waited before issue (Q2D = mean Q2C - mean D2C): where the time goes, on average. From the histograms\' sums and counts. ' + both,
                         [
                           t('(\n' + p.sumRate(dev, s, ['device', 'op']) + ')\n/\n(\n' + p.countRate(dev, s, ['device', 'op']) + ')', '{{device}} {{op}} D2C'),
                           t('(\n' + p.sumRate(tot, s, ['device', 'op']) + ')\n/\n(\n' + p.countRate(tot, s, ['device', 'op']) + ')\n-\n(\n' + p.sumRate(dev, s, ['device', 'op']) + ')\n/\n(\n' + p.countRate(dev, s, ['device', 'op']) + ')', '{{device}} {{op}} Q2D'),
                         ], unit='s', w=8, links=seriesLinks),
            g.heatmap('$device request sizes',
                      'Sizes of completed requests on $device and the selected operations (iolat_block_request_size_bytes): native buckets 9 % wide, or the classic le buckets (512 B ... 4 MiB), whichever Prometheus scrapes.',
                      [t(p.heatmap(size, s), '{{le}}')], unit='bytes'),
            g.timeseries('$device average request size per op', 'Bytes per completed I/O (iolat_block_bytes_total / iolat_block_completions_total): 4 KiB random I/O and 1 MiB streaming I/O have very different normal latencies.',
                         [t('%s\n/\n%s' % [p.rate('iolat_block_bytes_total', s, ['device', 'op']), p.rate('iolat_block_completions_total', s, ['device', 'op'])], '{{device}} {{op}}')], unit='bytes', links=seriesLinks),
          ]),
          g.row('Disk $device by request size class (needs --label.size-class)', [
            g.timeseries('p99 device time (D2C) by size class',
                         '99th percentile of device time per disk and size class (<=4KiB, 4-16KiB, 16-64KiB, 64KiB-1MiB, >1MiB), so 4 KiB latency is not mixed with 1 MiB latency. The size label exists only when iolat serve runs with --label.size-class (labels.size_class: true); without it this panel is empty. ' + d2c + ' ' + both,
                         [t(p.quantile('0.99', dev, s, ['device', 'size']), '{{device}} {{size}}')], unit='s', log=true, w=8),
            g.timeseries('p99 total time (Q2C) by size class',
                         '99th percentile of total time per disk and size class. Needs iolat serve --label.size-class (empty without it). ' + q2c + ' ' + both,
                         [t(p.quantile('0.99', tot, s, ['device', 'size']), '{{device}} {{size}}')], unit='s', log=true, w=8),
            g.timeseries('IOPS by size class',
                         'Completed I/Os per second per disk and size class. Needs iolat serve --label.size-class (empty without it).',
                         [t(p.rate('iolat_block_completions_total', s, ['device', 'size']), '{{device}} {{size}}')], unit='iops', w=8),
          ]),
          g.row('Errors and I/O that could not be timed, every disk of $instance', [
            g.timeseries('Errors per disk and op', 'Completions with an error status per second (iolat_block_errors_total), per disk and operation: only the disks that had errors in the time range are drawn, whatever their number.',
                         [t('%s\n> 0' % p.rate('iolat_block_errors_total', sAll, ['device', 'op']), '{{device}} {{op}}')], unit='reqps', w=8, links=seriesLinks),
            g.timeseries('Untimed completions (share)',
                         'Share of completions counted but not timed because iolat did not see their start (iolat_block_untimed_total / iolat_block_completions_total), per disk and view, for the disks that have any: view="device" for device time (D2C), view="total" for total time (Q2C). A few right after iolat starts are I/O already under way; a lasting share means a kernel map overflowed (see the events panel). Alert IolatUntimedCompletions.',
                         [t('%s\n/ ignoring (view) group_left\n%s\n> 0' % [p.rate('iolat_block_untimed_total', sAll, ['device', 'view']), p.rate('iolat_block_completions_total', sAll, ['device'])], '{{device}} {{view}}')],
                         unit='percentunit', min=0, w=8, links=seriesLinks),
            g.timeseries('Unmatched completions and full maps (collector events)',
                         'Collector events per second (iolat_collector_events_total, for the whole host): rq_map_miss and bio_map_miss are completions of requests or bios whose start iolat never saw (under way when its programs were attached, or evicted); rq_map_full, bio_map_full and hist_map_full count I/O that did not fit in a full kernel map (untimed or not counted). Alert IolatMapFull.',
                         [t(p.rate('iolat_collector_events_total', p.sel(host + ['event=~"rq_map_miss|bio_map_miss|rq_map_full|bio_map_full|hist_map_full"']), ['event']), '{{event}}')],
                         unit='reqps', w=8),
          ]),
          g.row('Disks of $instance', [
            g.table('Disk models',
                    'Each disk\'s model and whether it is rotational (iolat_block_device_info; model "unknown" for disks without one: loop, zram, dm, md, virtio-blk). Rotational disks have their own SLO threshold (%s s). Click a disk for its heatmaps.' % sloTRot,
                    [t('max by (device, model, rotational) (iolat_block_device_info%s)' % p.sel(host))],
                    labels=['device', 'model', 'rotational'], w=12, h=7, links=diskLinks('${__data.fields.device}')),
            g.table('Stacked disks (LVM/dm, dm-crypt, md)',
                    'Disks built on other disks (iolat_block_stack_info): each layer is timed on its own and the upper disk\'s I/O includes the lower\'s (a raid1 write is one on md and one on each leg), so add up the top layer only. The SLO alerts page for the upper disk only (diskLatencySLOIncludeStackLegs). Click a row for the upper disk.',
                    [t('max by (upper, device) (iolat_block_stack_info%s)' % p.sel(host))],
                    labels=['upper', 'device'], w=12, h=7, links=diskLinks('${__data.fields.upper}')),
          ]),
        ],
      ),
  },
}
