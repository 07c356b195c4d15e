// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// "iolat / iolat itself": the exporter's own health and cost: BPF run time
// per I/O, kernel maps, scrapes, configuration, process resources.
local g = import '../lib/grafana.libsonnet';
local p = import '../lib/promql.libsonnet';
local v = import '../lib/variables.libsonnet';
local t = g.target;

{
  grafanaDashboards+:: {
    'iolat-self.json':
      local cfg = $._config;
      local p = (import '../lib/promql.libsonnet') { native:: cfg.nativeHistograms };
      local hostBy = cfg.hostLabels;
      local hostList = std.join(', ', hostBy);
      local host = ['job=~"$job"', 'instance=~"$instance"'];
      local s = p.sel(host);
      local onHost = '{{instance}}';
      local gauge(metric, extra=[]) = 'max by (%s) (%s%s)' % [std.join(', ', hostBy + extra), metric, s];
      local buildInfo = 'max by (%s, version, kernel, attach) (iolat_build_info%s)' % [hostList, s];
      local selfNote = 'Sampled: at a few I/Os a second, read it over minutes. A host with an iolat older than these series has no data here.';

      g.dashboard(
        uid='iolat-self',
        title='iolat / iolat itself',
        description='The health and cost of iolat on each host: versions, configuration, BPF program run time per I/O, kernel map occupancy, scrape time and size, memory and file descriptors.',
        tags=['exporter'],
        variables=[
          v.datasource,
          v.job(cfg.iolatSelector),
          v.instance(),
        ],
        rows=[
          g.row('Hosts', [
            g.stat('Targets up', 'iolat targets Prometheus scraped successfully (up == 1) among the selected ones.',
                   [t('sum(up%s)' % s, 'up')], unit='short', graph=false),
            g.stat('Targets down', 'iolat targets whose last scrape failed (up == 0). Alert IolatDown.',
                   [t('sum(up%s == bool 0)' % s, 'down')], unit='short', steps=[[1, 'red']], graph=false),
            g.stat('Reloads refused', 'Hosts whose last configuration reload (SIGHUP) was refused (iolat_config_last_reload_successful == 0): they run the configuration from before it. Alert IolatConfigReloadFailed.',
                   [t('sum(iolat_config_last_reload_successful%s == bool 0)' % s, 'refused')], unit='short', steps=[[1, 'red']], graph=false),
            g.stat('Users\' configs down', 'Users\' programs (--config.dir) that failed to load or run (iolat_user_config_up == 0); no data where no host runs users\' programs. Alert IolatUserConfigDown.',
                   [t('sum(iolat_user_config_up%s == bool 0)' % s, 'down')], unit='short', steps=[[1, 'red']], graph=false),
            g.stat('Versions', 'How many iolat versions run on the selected hosts (iolat_build_info{version}); more than one during an upgrade.',
                   [t('count(count by (version) (iolat_build_info%s))' % s, 'versions')], unit='short', steps=[[2, 'orange']], graph=false),
            g.stat('iolat CPU', 'CPU used by the iolat processes, all selected hosts together (process_cpu_seconds_total), in cores. The BPF programs\' time is not in it (the kernel charges it to whoever does the I/O): see BPF CPU time below.',
                   [t(p.rate('process_cpu_seconds_total', s, []), 'cores')], unit='percentunit'),
            g.table('Build info per host',
                    'One line per host: iolat version, kernel, the attach path in use (tp_btf, raw_tp; iolat_build_info), time since iolat started collecting (iolat_start_time_seconds), whether the last reload succeeded, and resident memory.',
                    [
                      t('%s\n* on (%s) group_left ()\n(time() - %s)' % [buildInfo, hostList, gauge('iolat_start_time_seconds')]),
                      t('%s\n* on (%s) group_left\n%s' % [buildInfo, hostList, gauge('iolat_config_last_reload_successful')]),
                      t('%s\n* on (%s) group_left\n%s' % [buildInfo, hostList, gauge('process_resident_memory_bytes')]),
                    ],
                    labels=hostBy + ['version', 'kernel', 'attach'],
                    columns=['uptime', 'last reload OK', 'resident memory'],
                    units=['s', 'bool', 'bytes'],
                    h=8),
          ]),
          g.row('BPF programs', [
            g.timeseries('BPF time per run',
                         'Average time one run of each of iolat\'s BPF programs takes, as the programs measure it themselves (iolat_bpf_sampled_seconds_total / iolat_bpf_sampled_runs_total: 1 run in 64 timed between two clock reads, without --bpf.stats too). The completion programs (rq_complete*, bio_complete*) run once per I/O. ' + selfNote,
                         [t('%s\n/\n(%s > 0)' % [p.rate('iolat_bpf_sampled_seconds_total', s, hostBy + ['program']), p.rate('iolat_bpf_sampled_runs_total', s, hostBy + ['program'])], '{{program}} on ' + onHost)],
                         unit='s', w=8),
            g.timeseries('BPF time per completed I/O (all programs)',
                         'Time in all of iolat\'s BPF programs per completed I/O: the estimated time of every program (iolat_bpf_estimated_seconds_total, 64 times the sampled time) over iolat_block_completions_total. What iolat adds to each I/O, issue and start programs included. No data while a host completes no I/O. ' + selfNote,
                         [t('%s\n/\n(%s > 0)' % [p.rate('iolat_bpf_estimated_seconds_total', s, hostBy), p.rate('iolat_block_completions_total', s, hostBy)], onHost)],
                         unit='s', w=8),
            g.timeseries('BPF CPU time',
                         'Share of one CPU that each program takes (rate of iolat_bpf_estimated_seconds_total). The kernel charges it to whoever does the I/O, so it is not in process_cpu_seconds_total. ' + selfNote,
                         [t(p.rate('iolat_bpf_estimated_seconds_total', s, hostBy + ['program']), '{{program}} on ' + onHost)],
                         unit='percentunit', w=8),
            g.timeseries('BPF program runs', 'Runs per second of each program, counted by the program itself (iolat_bpf_self_runs_total); a completion program with no runs while the host does I/O is detached (alert IolatProgramsDetached).',
                         [t(p.rate('iolat_bpf_self_runs_total', s, hostBy + ['program']), '{{program}} on ' + onHost)],
                         unit='ops', w=8),
            g.timeseries('BPF time per run: self-measured and kernel stats',
                         'Per program, the self-measured time per run beside the kernel\'s BPF statistics (iolat_bpf_program_run_seconds_total / iolat_bpf_program_runs_total), which exist only with iolat serve --bpf.stats (CAP_SYS_ADMIN): without it the kernel line has no data. The kernel\'s figure is higher by what the program\'s own clock reads cannot see, mostly the ~70-80 ns the kernel\'s statistics charge any run (docs/serve.md, "BPF cost without --bpf.stats").',
                         [
                           t('%s\n/\n(%s > 0)' % [p.rate('iolat_bpf_sampled_seconds_total', s, hostBy + ['program']), p.rate('iolat_bpf_sampled_runs_total', s, hostBy + ['program'])], 'self: {{program}} on ' + onHost),
                           t('%s\n/\n(%s > 0)' % [p.rate('iolat_bpf_program_run_seconds_total', s, hostBy + ['program']), p.rate('iolat_bpf_program_runs_total', s, hostBy + ['program'])], 'kernel: {{program}} on ' + onHost),
                         ],
                         unit='s', w=8),
            g.timeseries('BPF recursion misses', 'Runs the kernel skipped because the program was already running on that CPU (iolat_bpf_program_recursion_misses_total): those I/Os were not seen. Should stay 0.',
                         [t(p.rate('iolat_bpf_program_recursion_misses_total', s, hostBy + ['program']), '{{program}} on ' + onHost)],
                         unit='ops', w=8),
          ]),
          g.row('Kernel maps', [
            g.timeseries('Map fill (entries / capacity)',
                         'Occupancy of each BPF map (iolat_bpf_map_entries / iolat_bpf_map_capacity_entries). hists_shared (histograms per disk, op, workload) full means new keys are not counted (hist_map_full); rq_starts and bio_starts are LRU maps of I/O under way, which evict their oldest entries when full (rq_map_full, bio_map_full). Alert IolatMapFull.',
                         [t('%s\n/\n%s' % [gauge('iolat_bpf_map_entries', ['map']), gauge('iolat_bpf_map_capacity_entries', ['map'])], '{{map}} on ' + onHost)],
                         unit='percentunit', min=0, max=1, thresholdLine=[0.9, 'orange']),
            g.timeseries('Collector events',
                         'iolat_collector_events_total per second: hist_map_full (I/O not counted), rq_map_full and bio_map_full (I/O not timed or not counted: a map overflowed), rq_map_miss and bio_map_miss (completions of I/O under way before iolat attached), partial_completion, same_stamps (total time equal to device time, one plug\'s cached clock).',
                         [t(p.rate('iolat_collector_events_total', s, hostBy + ['event']), '{{event}} on ' + onHost)],
                         unit='ops'),
          ]),
          g.row('Scrapes, connections and configuration', [
            g.timeseries('Scrape duration',
                         'iolat_scrape_duration_seconds: how long iolat took to build and render its previous answer; scrape_duration_seconds: how long Prometheus\' whole scrape took (network included). The dashed line is scrapeDurationThreshold (%g s, alert IolatScrapeSlow).' % cfg.scrapeDurationThreshold,
                         [
                           t(gauge('iolat_scrape_duration_seconds'), 'iolat render on ' + onHost),
                           t(gauge('scrape_duration_seconds'), 'Prometheus scrape of ' + onHost),
                         ], unit='s', thresholdLine=[cfg.scrapeDurationThreshold, 'red'], w=8),
            g.timeseries('Scrape size', 'Size of iolat\'s previous answer before compression (iolat_scrape_size_bytes): grows with disks, workloads and the --label.size-class label.',
                         [t(gauge('iolat_scrape_size_bytes'), onHost)], unit='bytes', w=8),
            g.timeseries('Samples per scrape', 'Samples Prometheus took from each scrape (scrape_samples_scraped; a native histogram counts as one).',
                         [t(gauge('scrape_samples_scraped'), onHost)], unit='short', w=8),
            g.timeseries('HTTP connections', 'Connections open now (iolat_http_connections) and connections closed or refused by iolat\'s limits per second, by reason (iolat_http_connections_closed_total: per_ip_limit, full, evicted, header_timeout, write_timeout, body). Prometheus alone never meets a limit.',
                         [
                           t(gauge('iolat_http_connections'), 'open on ' + onHost),
                           t(p.rate('iolat_http_connections_closed_total', s, hostBy + ['reason']), 'closed: {{reason}} on ' + onHost),
                         ], unit='short'),
            g.timeseries('Configuration', 'Whether the last reload succeeded (iolat_config_last_reload_successful, 0 = refused, the previous configuration runs) and each user config\'s state (iolat_user_config_up{config}, only with --config.dir).',
                         [
                           t(gauge('iolat_config_last_reload_successful'), 'last reload OK on ' + onHost),
                           t(gauge('iolat_user_config_up', ['config']), 'config {{config}} up on ' + onHost),
                         ], unit='short', min=0, max=1),
          ]),
          g.row('Series iolat exports', [
            g.timeseries('Series per host',
                         'Series iolat exports on each host, every family together (sum of iolat_series): what each host costs the metrics store. The dashed line is seriesBudgetPerHost (%d, alert IolatSeriesOverBudget). A native histogram counts as one series. Empty with an iolat that does not export iolat_series.' % cfg.seriesBudgetPerHost,
                         [t('sum by (%s) (iolat_series%s)' % [hostList, s], onHost)],
                         unit='short', min=0, thresholdLine=[cfg.seriesBudgetPerHost, 'red'], w=12),
            g.timeseries('Series per family',
                         'Series iolat exports per metric family and histogram mode (iolat_series{family,mode}, mode classic or native): which families make the total, and what --workloads.labels, --workloads.metrics, workloads.max or native histograms would save.',
                         [t(gauge('iolat_series', ['family', 'mode']), '{{family}} ({{mode}}) on ' + onHost)],
                         unit='short', min=0, w=12),
          ]),
          g.row('Process', [
            g.timeseries('Memory', 'Resident memory (process_resident_memory_bytes) and heap in use (iolat_heap_allocated_bytes). Resident growing while the heap stays flat is memory the allocator keeps; both growing is something kept that should not be.',
                         [
                           t(gauge('process_resident_memory_bytes'), 'resident on ' + onHost),
                           t(gauge('iolat_heap_allocated_bytes'), 'heap on ' + onHost),
                         ], unit='bytes', w=8),
            g.timeseries('File descriptors', 'Open file descriptors (process_open_fds) against the limit (process_max_fds).',
                         [
                           t(gauge('process_open_fds'), 'open on ' + onHost),
                           t(gauge('process_max_fds'), 'limit on ' + onHost),
                         ], unit='short', log=true, w=8),
            g.timeseries('CPU', 'CPU iolat uses in user and system time (rate of process_cpu_seconds_total), as a share of one CPU, and beside it its BPF programs\' estimated time (iolat_bpf_estimated_seconds_total, all programs), which the kernel charges to whoever does the I/O and not to iolat. Idle, iolat sleeps; it works at each scrape.',
                         [
                           t(p.rate('process_cpu_seconds_total', s, hostBy), 'process on ' + onHost),
                           t(p.rate('iolat_bpf_estimated_seconds_total', s, hostBy), 'BPF programs on ' + onHost),
                         ], unit='percentunit', w=8),
          ]),
          g.row('Disks and workloads that come and go', [
            g.timeseries('Gone disks still exported', 'Disks that are gone but whose series iolat still exports (count of iolat_disks_gone_since_seconds); they leave disks.expire after they last changed.',
                         [t('count by (%s) (iolat_disks_gone_since_seconds%s)' % [hostList, s], onHost)], unit='short', w=8),
            g.timeseries('Disks retired and expired', 'Per second: gone disks whose kernel map keys moved to user space (iolat_disks_retired_total) and gone disks whose series left the output (iolat_disks_expired_total).',
                         [
                           t(p.rate('iolat_disks_retired_total', s, hostBy), 'retired on ' + onHost),
                           t(p.rate('iolat_disks_expired_total', s, hostBy), 'expired on ' + onHost),
                         ], unit='ops', w=8),
            g.timeseries('Workloads retired and expired', 'Per second: removed cgroups whose kernel keys moved to user space (iolat_workload_retired_cgroups_total), and workloads whose series left the output after workloads.expire (iolat_workload_expired_total).',
                         [
                           t(p.rate('iolat_workload_retired_cgroups_total', s, hostBy), 'cgroups retired on ' + onHost),
                           t(p.rate('iolat_workload_expired_total', s, hostBy), 'workloads expired on ' + onHost),
                         ], unit='ops', w=8),
          ]),
        ],
      ),
  },
}
