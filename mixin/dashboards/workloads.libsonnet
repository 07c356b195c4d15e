// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// "iolat / VMs and workloads": I/O latency per workload (VM, pod, container,
// systemd service or scope, cgroup, process), from iolat_workload_*.
// Serve exports by default only the device-time histogram and the bytes per
// workload, without `device` and `op` (--workloads.labels and
// --workloads.metrics add them): every panel works from those two (IOPS is
// the histogram's count) and splits by disk or operation where the labels
// are there; only the total-time (Q2C) panels need --workloads.metrics.
local g = import '../lib/grafana.libsonnet';
local p = import '../lib/promql.libsonnet';
local v = import '../lib/variables.libsonnet';
local t = g.target;

{
  grafanaDashboards+:: {
    'iolat-workloads.json':
      local cfg = $._config;
      local p = (import '../lib/promql.libsonnet') { native:: cfg.nativeHistograms };
      local host = v.clusterMatchers(cfg.clusterLabel) + ['job=~"$job"', 'instance=~"$instance"'];
      local disk = host + ['device=~"$device"', 'op=~"$op"'];
      // Every workload on the selected disks (noisy neighbours, shares).
      local all = p.sel(disk);
      // Workloads of the selected kinds (top-N).
      local kinds = p.sel(disk + ['kind=~"$kind"']);
      // The selected workload(s): each repeated row has one.
      local one = p.sel(disk + ['kind=~"$kind"', 'workload=~"$workload"']);
      local folded = p.sel(disk + ['kind="other"']);
      local dev = 'iolat_workload_device_latency_seconds';
      local tot = 'iolat_workload_total_latency_seconds';
      local bytes = 'iolat_workload_bytes_total';
      local hostBy = cfg.hostLabels;
      local wl = hostBy + ['kind', 'workload'];
      local d2c = 'Device time is blktrace D2C: from the issue of the request to the driver to its completion.';
      local q2c = 'Total time is blktrace Q2C at the request layer: from the creation of the request to its completion (queueing in the block layer, Q2D, plus D2C).';
      local attribution = 'An I/O belongs to the cgroup its bio was charged to when it entered the block layer (the io controller\'s cgroup), not to the task running at completion.';
      local both = 'Works with native histograms and with classic buckets.';
      local wlLegend = '{{kind}}/{{workload}} on {{instance}}';
      // share(x, labels): x by labels + kind/workload, over x by labels.
      local share(metricRate, labels) =
        '%s\n/ on (%s) group_left\n%s' % [
          metricRate(all, labels + ['kind', 'workload']),
          std.join(', ', labels),
          metricRate(all, labels),
        ];
      // IOPS from the latency histogram's count (iolat_workload_completions_total
      // exists only with --workloads.metrics=completions).
      local compRate(s, labels, range='$__rate_interval') = p.countRate(dev, s, labels, range);
      local bytesRate(s, labels, range='$__rate_interval') = p.rate(bytes, s, labels, range);
      local timeRate(s, labels) = p.sumRate(dev, s, labels);
      local diskBy = hostBy + ['device'];
      // Drill-down: a workload's series or bar to its own row here; a disk's
      // series to the host dashboard with that disk chosen.
      local field(l) = '${__field.labels.%s}' % l;
      local toWorkload = [
        g.link('Workload ' + field('kind') + '/' + field('workload'), 'iolat-workloads', carry=['device', 'op'],
               set=[['job', field('job')], ['instance', field('instance')], ['kind', field('kind')], ['workload', field('workload')]]),
      ];
      local toDisk = [
        g.link('Disk ' + field('device') + ' on ' + field('instance'), 'iolat-disks', carry=['op'],
               set=[['job', field('job')], ['instance', field('instance')], ['device', field('device')]]),
      ];

      g.dashboard(
        uid='iolat-workloads',
        title='iolat / VMs and workloads',
        description='Block I/O latency per VM, pod, container, service or cgroup as iolat attributes it in the kernel: top workloads, one workload\'s latency, and which workloads share (and load) each disk.',
        tags=['block-io', 'latency', 'workloads'],
        variables=[
          v.datasource,
          v.cluster(cfg.clusterLabel, cfg.showMultiCluster),
          v.job(cfg.iolatSelector, cluster=cfg.clusterLabel),
          v.instance(cluster=cfg.clusterLabel),
          v.device('iolat_workload_bytes_total'),
          v.op('iolat_workload_bytes_total'),
          v.kind,
          v.workload,
          v.custom('topn', 'Top N', ['5', '10', '20', '50'], '10', description='How many workloads the top-N panels show.'),
        ],
        rows=[
          g.row('Top $topn workloads over the time range', [
            g.bargauge('Top $topn workloads by p99 device time (D2C)',
                       '99th percentile of device time per workload over the whole time range shown, all its selected disks and operations together. ' + d2c + ' A workload with few I/Os has a noisy p99: check its IOPS. ' + both,
                       [t('topk($topn,\n' + p.quantile('0.99', dev, kinds, wl, range='$__range') + ')', wlLegend)], unit='s', links=toWorkload),
            g.bargauge('Top $topn workloads by IOPS',
                       'Average completed I/Os per second per workload over the time range shown (the count of iolat_workload_device_latency_seconds). ' + attribution,
                       [t('topk($topn, %s)' % compRate(kinds, wl, '$__range'), wlLegend)], unit='iops', links=toWorkload),
            g.bargauge('Top $topn workloads by throughput',
                       'Average bytes per second per workload over the time range shown (iolat_workload_bytes_total).',
                       [t('topk($topn, %s)' % bytesRate(kinds, wl, '$__range'), wlLegend)], unit='Bps', links=toWorkload),
          ]),
          g.row('Workload $workload', repeat='workload', description='One row per selected workload.', panels=[
            g.heatmap('$workload device time (D2C)',
                      'Distribution of device time of $workload\'s I/O on the selected disks and operations, from native histograms or classic le buckets, whichever Prometheus scrapes. ' + d2c,
                      [t(p.heatmap(dev, one), '{{le}}')]),
            g.heatmap('$workload total time (Q2C)',
                      'Distribution of total time of $workload\'s I/O, from native histograms or classic le buckets, whichever Prometheus scrapes. ' + q2c + ' For a VM this is close to what the guest sees for its disk, minus the virtualisation path.',
                      [t(p.heatmap(tot, one), '{{le}}')]),
            g.timeseries('$workload: p99 device time (D2C) per disk and operation',
                         '99th percentile of $workload\'s device time per disk and operation: one line per host where serve folds the device and op labels away (its default; --workloads.labels=device,op splits them). The dashed line is workloadP99Threshold (%g s, alert IolatWorkloadLatencyHigh). ' % cfg.workloadP99Threshold + d2c + ' ' + both,
                         [t(p.quantile('0.99', dev, one, hostBy + ['device', 'op']), '{{device}} {{op}} on {{instance}}')],
                         unit='s', log=true, thresholdLine=[cfg.workloadP99Threshold, 'red'], links=toDisk),
            g.timeseries('$workload: p99 total time (Q2C) per disk and operation',
                         '99th percentile of $workload\'s total time per disk and operation. ' + q2c + ' Empty unless serve runs with --workloads.metrics including total_latency. ' + both,
                         [t(p.quantile('0.99', tot, one, hostBy + ['device', 'op']), '{{device}} {{op}} on {{instance}}')],
                         unit='s', log=true, thresholdLine=[cfg.workloadP99Threshold, 'red'], links=toDisk),
            g.timeseries('$workload IOPS', 'Completed I/Os per second of $workload per disk and operation (the count of iolat_workload_device_latency_seconds). ' + attribution,
                         [t(compRate(one, hostBy + ['device', 'op']), '{{device}} {{op}} on {{instance}}')], unit='iops', w=8, links=toDisk),
            g.timeseries('$workload throughput', 'Bytes per second of $workload per disk and operation (iolat_workload_bytes_total).',
                         [t(bytesRate(one, hostBy + ['device', 'op']), '{{device}} {{op}} on {{instance}}')], unit='Bps', w=8, links=toDisk),
            g.timeseries('$workload average block size', 'Average size of $workload\'s I/Os per disk and operation (iolat_workload_bytes_total over the count of iolat_workload_device_latency_seconds).',
                         [t('%s\n/\n%s' % [bytesRate(one, hostBy + ['device', 'op']), compRate(one, hostBy + ['device', 'op'])], '{{device}} {{op}} on {{instance}}')], unit='bytes', w=8, links=toDisk),
          ]),
          g.row('Noisy neighbours: each workload\'s share of a disk', [
            g.timeseries('Share of each disk\'s I/Os',
                         'For each disk, the share of its completed I/Os (selected operations) that each workload made, stacked to 100 %: who loads the disk when its latency rises. Every workload counts here whatever the kind selection, including kind="other" (folded past the cap) and kind="none" (no cgroup). ' + attribution,
                         [t(share(compRate, diskBy), '{{device}} on {{instance}}: {{kind}}/{{workload}}')], unit='percentunit', stack=true, min=0, max=1, w=8),
            g.timeseries('Share of each disk\'s bytes',
                         'For each disk, the share of its bytes that each workload moved, stacked to 100 %: a few large sequential I/Os can take a disk from many small ones.',
                         [t(share(bytesRate, diskBy), '{{device}} on {{instance}}: {{kind}}/{{workload}}')], unit='percentunit', stack=true, min=0, max=1, w=8),
            g.timeseries('Share of each disk\'s busy time (sum of D2C)',
                         'For each disk, the share of the device time (the sum of D2C over its I/Os) that each workload\'s I/Os took, stacked to 100 %: the closest to "who keeps the disk busy", since a slow 1 MiB write costs more than a 4 KiB read. ' + d2c + ' ' + both,
                         [t('(\n%s)\n/ on (%s) group_left ()\n(\n%s)' % [timeRate(all, diskBy + ['kind', 'workload']), std.join(', ', diskBy), timeRate(all, diskBy)], '{{device}} on {{instance}}: {{kind}}/{{workload}}')],
                         unit='percentunit', stack=true, min=0, max=1, w=8),
          ]),
          g.row('Folded ("other") and unattributed ("none") I/O', [
            g.timeseries('Share of each disk\'s I/O not named',
                         'Share of each disk\'s completions counted under kind="other" (cgroups past the workloads.max cap, or too short-lived to be named) and kind="none" (I/O with no cgroup, e.g. some kernel writeback). This I/O is counted, never dropped, just not attributed to a workload of its own; a large "other" share means raising workloads.max.',
                         [t('%s\n/ on (%s) group_left\n%s' % [compRate(p.sel(disk + ['kind=~"other|none"']), diskBy + ['kind']), std.join(', ', diskBy), compRate(all, diskBy)], '{{device}} on {{instance}}: {{kind}}')],
                         unit='percentunit', min=0, w=6),
            g.timeseries('Folded I/O (workload="other")',
                         'Completions and cgroups counted under workload="other" per second (iolat_workload_folded_completions_total, iolat_workload_folded_cgroups_total): past the workloads.max cap, or cgroups gone before iolat could name them. Alert IolatWorkloadCardinalityCap.',
                         [
                           t(p.rate('iolat_workload_folded_completions_total', p.sel(host), hostBy), 'completions on {{instance}}'),
                           t(p.rate('iolat_workload_folded_cgroups_total', p.sel(host), hostBy), 'cgroups on {{instance}}'),
                         ], unit='ops', w=6),
            g.timeseries('p99 device time (D2C) of the "other" I/O',
                         'Latency of the folded I/O, per disk: it is real I/O of real workloads and can be the slow part. ' + d2c + ' ' + both,
                         [t(p.quantile('0.99', dev, folded, diskBy), '{{device}} on {{instance}}')], unit='s', log=true, w=6),
            g.timeseries('Workload label sets and cap',
                         'Workload label sets exported now (iolat_workload_label_sets, "other" not counted) and the cap (iolat_workload_label_sets_max, workloads.max): at the cap, new cgroups fold into "other".',
                         [
                           t('max by (%s) (iolat_workload_label_sets%s)' % [std.join(', ', hostBy), p.sel(host)], 'label sets on {{instance}}'),
                           t('max by (%s) (iolat_workload_label_sets_max%s)' % [std.join(', ', hostBy), p.sel(host)], 'cap on {{instance}}'),
                         ], unit='short', min=0, w=6),
          ]),
        ],
      ),
  },
}
