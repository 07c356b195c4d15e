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
      local host = ['job=~"$job"', 'instance=~"$instance"'];
      local disk = host + ['device=~"$device"', 'op=~"$op"'];
      local s = p.sel(disk);
      local dev = 'iolat_block_device_latency_seconds';
      local tot = 'iolat_block_total_latency_seconds';
      local size = 'iolat_block_request_size_bytes';
      local d2c = 'Device time is blktrace D2C: from the issue of the request to the driver to its completion, the time the disk (and its driver) took.';
      local q2c = 'Total time is blktrace Q2C at the request layer: from the creation of the request to its completion, so the time queued in the block layer and the I/O scheduler (Q2D) plus the device time (D2C).';
      local sloT = cfg.diskLatencySLOThreshold;
      local slowBudget = std.floor((1 - cfg.diskLatencySLOTarget) * 1e9 + 0.5) / 1e9;
      local quantiles = [['0.5', 'p50'], ['0.9', 'p90'], ['0.99', 'p99'], ['0.999', 'p99.9']];
      local quantileTargets(metric) = [
        t(p.quantile(q[0], metric, s, ['device', 'op']), '{{device}} {{op}} ' + q[1])
        for q in quantiles
      ];
      local both = 'Works with native histograms and with classic buckets (the query has both forms; the one Prometheus has answers).';

      g.dashboard(
        uid='iolat-disks',
        title='iolat / Host and disks',
        description='Block I/O latency of one host\'s disks as iolat measures it in the kernel: device time (D2C) and total time (Q2C), IOPS, throughput, request sizes, errors and I/O iolat could not time.',
        tags=['block-io', 'latency'],
        variables=[
          v.datasource,
          v.job(cfg.iolatSelector),
          v.instance(multi=false),
          v.device(),
          v.op(),
        ],
        rows=[
          g.row('Overview: $instance', [
            g.stat('IOPS', 'Completed I/Os per second on the selected disks and operations (iolat_block_completions_total: requests, or bios on bio-based disks).',
                   [t(p.rate('iolat_block_completions_total', s, []), 'IOPS')], unit='iops'),
            g.stat('Throughput', 'Bytes per second completed on the selected disks and operations (iolat_block_bytes_total).',
                   [t(p.rate('iolat_block_bytes_total', s, []), 'throughput')], unit='Bps'),
            g.stat('p99 device time (D2C)', '99th percentile of device time over the selected disks and operations together. ' + d2c + ' ' + both,
                   [t(p.quantile('0.99', dev, s, []), 'p99 D2C')], unit='s',
                   steps=[[std.parseJson(sloT), 'red']]),
            g.stat('p99 total time (Q2C)', '99th percentile of total time over the selected disks and operations together. ' + q2c + ' ' + both,
                   [t(p.quantile('0.99', tot, s, []), 'p99 Q2C')], unit='s'),
            g.stat('Slow I/O (D2C > %s s)' % sloT,
                   'Share of I/Os whose device time (D2C) was above the SLO threshold, %s s; the SLO allows %g%% (target %g%%). Threshold and target are diskLatencySLOThreshold and diskLatencySLOTarget in mixin/config.libsonnet. ' % [sloT, slowBudget * 100, cfg.diskLatencySLOTarget * 100] + both,
                   [t(p.fractionAbove(sloT, dev, s, []), 'slow')], unit='percentunit',
                   steps=[[slowBudget, 'red']]),
            g.stat('Errors', 'Completions with an error status per second (iolat_block_errors_total).',
                   [t(p.rate('iolat_block_errors_total', s, []), 'errors/s')], unit='reqps',
                   steps=[[0.000001, 'red']]),
          ]),
          g.row('Latency per disk and operation', [
            g.timeseries('Device time (D2C) quantiles per disk and op',
                         'p50, p90, p99 and p99.9 of device time per disk and operation, over $__rate_interval. ' + d2c + ' The dashed line is the SLO threshold (%s s). ' % sloT + both,
                         quantileTargets(dev), unit='s', log=true, thresholdLine=[std.parseJson(sloT), 'red'], h=10),
            g.timeseries('Total time (Q2C) quantiles per disk and op',
                         'p50, p90, p99 and p99.9 of total time per disk and operation. ' + q2c + ' Total time far above device time means I/O waits in the block layer queue (a busy disk, a scheduler, a throttle). ' + both,
                         quantileTargets(tot), unit='s', log=true, h=10),
            g.timeseries('Mean device time (D2C) and mean queue time (Q2D)',
                         'Mean device time (D2C) per disk and operation, and the mean time requests waited before issue (Q2D = mean Q2C - mean D2C): where the time goes, on average. From the histograms\' sums and counts. ' + both,
                         [
                           t('(\n' + p.sumRate(dev, s, ['device', 'op']) + ')\n/\n(\n' + p.countRate(dev, s, ['device', 'op']) + ')', '{{device}} {{op}} D2C'),
                           t('(\n' + p.sumRate(tot, s, ['device', 'op']) + ')\n/\n(\n' + p.countRate(tot, s, ['device', 'op']) + ')\n-\n(\n' + p.sumRate(dev, s, ['device', 'op']) + ')\n/\n(\n' + p.countRate(dev, s, ['device', 'op']) + ')', '{{device}} {{op}} Q2D'),
                         ], unit='s'),
            g.timeseries('Slow I/O share per disk (D2C > %s s)' % sloT,
                         'Share of each disk\'s I/Os (per operation) whose device time (D2C) was above the SLO threshold, %s s. The dashed line is the error budget, 1 - target = %g%%: above it for long, the SLO burns (alerts IolatDiskLatencySLOBurnFast/Slow). Set both in mixin/config.libsonnet (diskLatencySLOThreshold must be a classic le bound). ' % [sloT, slowBudget * 100] + both,
                         [t(p.fractionAbove(sloT, dev, s, ['device', 'op']), '{{device}} {{op}}')],
                         unit='percentunit', min=0, thresholdLine=[slowBudget, 'red']),
          ]),
          g.row('Latency heatmaps: $device', repeat='device', description='One row per selected disk.', panels=[
            g.heatmap('$device device time (D2C), native histogram',
                      'Distribution of device time on $device (the selected operations), from the native histogram: each column is one interval, each cell the I/Os per second whose D2C fell in that bucket (4.4 % wide). ' + d2c + ' Empty when Prometheus scrapes classic buckets only (no --enable-feature=native-histograms): see the classic panel beside it.',
                      [t(p.heatmapNative(dev, s), 'D2C')], native=true, w=6),
            g.heatmap('$device total time (Q2C), native histogram',
                      'Distribution of total time on $device from the native histogram. ' + q2c + ' Empty without native histograms.',
                      [t(p.heatmapNative(tot, s), 'Q2C')], native=true, w=6),
            g.heatmap('$device device time (D2C), classic buckets',
                      'Distribution of device time on $device from the classic le buckets (0.1 ms ... 10 s, each row one bucket, labelled by its upper bound). ' + d2c + ' Empty when Prometheus scrapes native histograms (no _bucket series then): see the native panel.',
                      [t(p.heatmapClassic(dev, s), '{{le}}')], native=false, w=6),
            g.heatmap('$device total time (Q2C), classic buckets',
                      'Distribution of total time on $device from the classic le buckets. ' + q2c + ' Empty with native histograms.',
                      [t(p.heatmapClassic(tot, s), '{{le}}')], native=false, w=6),
          ]),
          g.row('Throughput', [
            g.timeseries('IOPS per disk and op', 'Completed I/Os per second per disk and operation (iolat_block_completions_total: requests; bios on bio-based disks such as dm or md without a request queue).',
                         [t(p.rate('iolat_block_completions_total', s, ['device', 'op']), '{{device}} {{op}}')], unit='iops', w=8),
            g.timeseries('Throughput per disk and op', 'Bytes per second completed per disk and operation (iolat_block_bytes_total).',
                         [t(p.rate('iolat_block_bytes_total', s, ['device', 'op']), '{{device}} {{op}}')], unit='Bps', w=8),
            g.timeseries('Average request size per disk and op', 'Bytes per completed I/O (iolat_block_bytes_total / iolat_block_completions_total): 4 KiB random I/O and 1 MiB streaming I/O have very different normal latencies.',
                         [t('%s\n/\n%s' % [p.rate('iolat_block_bytes_total', s, ['device', 'op']), p.rate('iolat_block_completions_total', s, ['device', 'op'])], '{{device}} {{op}}')], unit='bytes', w=8),
          ]),
          g.row('Request sizes', [
            g.heatmap('Request size distribution, native histogram',
                      'Sizes of completed requests on the selected disks and operations (iolat_block_request_size_bytes), from the native histogram (buckets 9 % wide). Choose one disk to see one disk. Empty without native histograms: see the classic panel.',
                      [t(p.heatmapNative(size, s), 'size')], unit='bytes', native=true),
            g.heatmap('Request size distribution, classic buckets',
                      'Sizes of completed requests from the classic le buckets (512 B ... 4 MiB). Empty with native histograms: see the native panel.',
                      [t(p.heatmapClassic(size, s), '{{le}}')], unit='bytes', native=false),
          ]),
          g.row('Latency by request size class (needs --label.size-class)', [
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
          g.row('Errors and I/O that could not be timed', [
            g.timeseries('Errors per disk and op', 'Completions with an error status per second (iolat_block_errors_total), per disk and operation.',
                         [t(p.rate('iolat_block_errors_total', s, ['device', 'op']), '{{device}} {{op}}')], unit='reqps', w=8),
            g.timeseries('Untimed completions (share)',
                         'Share of completions counted but not timed because iolat did not see their start (iolat_block_untimed_total / iolat_block_completions_total), per disk and view: view="device" for device time (D2C), view="total" for total time (Q2C). A few right after iolat starts are I/O already under way; a lasting share means a kernel map overflowed (see the events panel). Alert IolatUntimedCompletions.',
                         [t('%s\n/ ignoring (view) group_left\n%s' % [p.rate('iolat_block_untimed_total', s, ['device', 'view']), p.rate('iolat_block_completions_total', s, ['device'])], '{{device}} {{view}}')],
                         unit='percentunit', min=0, w=8),
            g.timeseries('Unmatched completions and full maps (collector events)',
                         'Collector events per second (iolat_collector_events_total, for the whole host): rq_map_miss and bio_map_miss are completions of requests or bios whose start iolat never saw (under way when its programs were attached, or evicted); rq_map_full, bio_map_full and hist_map_full count I/O that did not fit in a full kernel map (untimed or not counted). Alert IolatMapFull.',
                         [t(p.rate('iolat_collector_events_total', p.sel(host + ['event=~"rq_map_miss|bio_map_miss|rq_map_full|bio_map_full|hist_map_full"']), ['event']), '{{event}}')],
                         unit='reqps', w=8),
          ]),
          g.row('Disks of $instance', [
            g.table('Disk models',
                    'Each disk\'s model and whether it is rotational (iolat_block_device_info; model "unknown" for disks without one: loop, zram, dm, md, virtio-blk).',
                    [t('max by (device, model, rotational) (iolat_block_device_info{job=~"$job", instance=~"$instance", device=~"$device"})')],
                    labels=['device', 'model', 'rotational'], w=12, h=7),
            g.table('Stacked disks (LVM/dm, dm-crypt, md)',
                    'Disks built on other disks (iolat_block_stack_info): each layer is timed on its own and the upper disk\'s I/O includes the lower\'s (a raid1 write is one on md and one on each leg), so add up the top layer only.',
                    [t('max by (upper, device) (iolat_block_stack_info{job=~"$job", instance=~"$instance"})')],
                    labels=['upper', 'device'], w=12, h=7),
          ]),
        ],
      ),
  },
}
