// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Template variables of the iolat dashboards. The same names everywhere:
// datasource, cluster, job, instance, device, op, kind, workload, plus a
// dashboard's own (topn, disks, group_by, model, shift). Each query variable
// lists the values found under the variables before it (cluster -> job ->
// instance -> device -> op; kind -> workload), so choosing a host narrows
// the disks offered. The data links between the dashboards set them by
// these names (var-instance=..., var-device=...).
local ds = { type: 'prometheus', uid: '${datasource}' };

// The job iolatSelector names (job="iolat" or job=~"iolat|iolat-vm"), or null.
local selectorJob(selector) =
  local matchers = [std.stripChars(m, ' ') for m in std.split(selector, ',')];
  local jobs = [m for m in matchers if std.startsWith(m, 'job=')];
  if std.length(jobs) == 0 then null
  else
    local m = jobs[0];
    local regex = std.startsWith(m, 'job=~');
    local value = std.stripChars(std.substr(m, if regex then 5 else 4, std.length(m)), '"');
    { regex: regex, value: value };

local allCurrent(multi) =
  if multi then { selected: true, text: ['All'], value: ['$__all'] }
  else { selected: true, text: 'All', value: '$__all' };

local valueCurrent(v, multi) =
  if multi then { selected: true, text: [v], value: [v] }
  else { selected: true, text: v, value: v };

local query(name, label, q, multi=true, includeAll=true, allValue='.+', current=null, hide=0, description='',
            regex='', sort=1) = {
  name: name,
  label: label,
  [if description != '' then 'description']: description,
  type: 'query',
  datasource: ds,
  query: q,
  definition: q,
  refresh: 2,
  regex: regex,
  sort: sort,
  multi: multi,
  includeAll: includeAll,
  [if includeAll then 'allValue']: allValue,
  current: if current != null then current else if includeAll then allCurrent(multi) else {},
  options: [],
  hide: hide,
  skipUrlSync: false,
};

{
  // The Prometheus data source every panel queries.
  datasource:: {
    name: 'datasource',
    label: 'Data source',
    description: 'The Prometheus that scrapes iolat.',
    type: 'datasource',
    query: 'prometheus',
    regex: '',
    current: {},
    options: [],
    hide: 0,
    includeAll: false,
    multi: false,
    refresh: 1,
    skipUrlSync: false,
  },

  // Clusters: the values of _config.clusterLabel (label) on iolat's series.
  // All (.*) also matches series without the label, so a Prometheus that
  // has none shows every host under All. show=false hides the variable
  // (showMultiCluster), which then stays All.
  // Without a cluster label (label ''), a hidden constant, so that the
  // links that pass ${cluster:queryparam} on stay the same.
  cluster(label, show=true)::
    if label == '' then {
      name: 'cluster',
      label: 'Cluster',
      description: 'No cluster label (clusterLabel is empty).',
      type: 'constant',
      query: '',
      current: { text: '', value: '' },
      options: [],
      hide: 2,
      skipUrlSync: true,
    } else
      query('cluster', 'Cluster', 'label_values(iolat_build_info, %s)' % label,
            allValue='.*', hide=if show then 0 else 2,
            description='Cluster(s): the %s label of the iolat targets (All also matches hosts without it).' % label),

  // Matchers of the cluster variable: [] without one (label '').
  clusterMatchers(label):: if label == '' then [] else ['%s=~"$cluster"' % label],

  // Jobs that scrape iolat. The default is the job of _config.iolatSelector
  // (job="iolat" selects iolat; a regex job=~"..." becomes the value of All).
  // cluster: _config.clusterLabel when the dashboard has the cluster
  // variable ('' when not).
  job(selector, multi=true, cluster='')::
    local j = selectorJob(selector);
    local c = self.clusterMatchers(cluster);
    query('job', 'Job', 'label_values(iolat_build_info%s, job)' % (if c == [] then '' else '{%s}' % c[0]),
          multi=multi, includeAll=true,
          allValue=if j != null && j.regex then j.value else '.+',
          current=if j != null && !j.regex then valueCurrent(j.value, multi) else null,
          description='Prometheus job(s) scraping iolat.'),

  // Hosts (iolat processes). multi=false on a one-host dashboard.
  instance(multi=true, cluster='')::
    query('instance', 'Host',
          'label_values(iolat_build_info{%s}, instance)' % std.join(', ', self.clusterMatchers(cluster) + ['job=~"$job"']),
          multi=multi, includeAll=multi,
          description='Host(s): the instance label of the iolat target.'),

  // The disks of the host, busiest first (most completed I/Os over the time
  // range shown): options from an instant query sorted by its value. No All:
  // the saved selection is empty, so Grafana selects the first option, the
  // busiest disk, whatever the host; pick others in the list.
  busiestDevice(cluster='')::
    query('device', 'Disk',
          'query_result(sort_desc(sum by (device) (increase(iolat_block_completions_total{%s}[$__range]))))'
          % std.join(', ', self.clusterMatchers(cluster) + ['job=~"$job"', 'instance=~"$instance"']),
          multi=true, includeAll=false, current={}, regex='/device="(?<value>[^"]+)"/', sort=0,
          description='The disk(s) the "Disk" rows show, the busiest of the time range first (the default).'),

  device(metric='iolat_block_completions_total')::
    query('device', 'Disk', 'label_values(%s{job=~"$job", instance=~"$instance"}, device)' % metric,
          description='Whole disks (the device label): sda, nvme0n1, vda, dm-0, md0, loop0...'),

  // op is missing when iolat runs with labels.op: false; All (.*) still
  // matches then.
  op(metric='iolat_block_completions_total')::
    query('op', 'Operation', 'label_values(%s{job=~"$job", instance=~"$instance", device=~"$device"}, op)' % metric,
          allValue='.*',
          description='read, write, flush, discard, write_zeroes, other.'),

  kind::
    query('kind', 'Workload kind',
          'label_values(iolat_workload_bytes_total{job=~"$job", instance=~"$instance"}, kind)',
          description='vm, pod, container, service, scope, cgroup, process; other = past the workloads.max cap; none = I/O with no cgroup.'),

  // One workload or a few (each gets its own row); no All, as that would be
  // one row per workload on the host.
  workload::
    query('workload', 'Workload',
          'label_values(iolat_workload_bytes_total{job=~"$job", instance=~"$instance", kind=~"$kind"}, workload)',
          multi=true, includeAll=false,
          description='The workload(s) shown in the per-workload rows: a VM name, pod UID, container id, unit or cgroup path.'),

  // Models of the disks (iolat_block_device_info).
  model::
    query('model', 'Disk model',
          'label_values(iolat_block_device_info{job=~"$job", instance=~"$instance"}, model)',
          allValue='.*',
          description='Disk model from sysfs (device/model); "unknown" for disks without one (loop, zram, dm, md, virtio-blk).'),

  // A fixed list of values; `default` must be one of them.
  custom(name, label, values, default, description='')::
    assert std.member(values, default) : 'default %s of %s is not among its values' % [default, name];
    {
      name: name,
      label: label,
      [if description != '' then 'description']: description,
      type: 'custom',
      query: std.join(',', values),
      current: { selected: true, text: default, value: default },
      options: [{ selected: v == default, text: v, value: v } for v in values],
      hide: 0,
      includeAll: false,
      multi: false,
      skipUrlSync: false,
    },
}
