// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Template variables of the iolat dashboards. The same names everywhere:
// datasource, job, instance, device, op, kind, workload, plus a dashboard's
// own (topn, group_by, model, shift). Each query variable lists the values
// found under the variables before it (job -> instance -> device -> op;
// kind -> workload), so choosing a host narrows the disks offered.
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

local query(name, label, q, multi=true, includeAll=true, allValue='.+', current=null, hide=0, description='') = {
  name: name,
  label: label,
  [if description != '' then 'description']: description,
  type: 'query',
  datasource: ds,
  query: q,
  definition: q,
  refresh: 2,
  regex: '',
  sort: 1,
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

  // Jobs that scrape iolat. The default is the job of _config.iolatSelector
  // (job="iolat" selects iolat; a regex job=~"..." becomes the value of All).
  job(selector, multi=true)::
    local j = selectorJob(selector);
    query('job', 'Job', 'label_values(iolat_build_info, job)', multi=multi, includeAll=true,
          allValue=if j != null && j.regex then j.value else '.+',
          current=if j != null && !j.regex then valueCurrent(j.value, multi) else null,
          description='Prometheus job(s) scraping iolat.'),

  // Hosts (iolat processes). multi=false on a one-host dashboard.
  instance(multi=true)::
    query('instance', 'Host', 'label_values(iolat_build_info{job=~"$job"}, instance)',
          multi=multi, includeAll=multi,
          description='Host(s): the instance label of the iolat target.'),

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
          'label_values(iolat_workload_completions_total{job=~"$job", instance=~"$instance"}, kind)',
          description='vm, pod, container, service, scope, cgroup, process; other = past the workloads.max cap; none = I/O with no cgroup.'),

  // One workload or a few (each gets its own row); no All, as that would be
  // one row per workload on the host.
  workload::
    query('workload', 'Workload',
          'label_values(iolat_workload_completions_total{job=~"$job", instance=~"$instance", kind=~"$kind"}, workload)',
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
