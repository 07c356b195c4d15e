// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Small builders for Grafana dashboard JSON (the model of Grafana 10/11,
// schemaVersion 39), written in plain jsonnet: no grafonnet, nothing fetched.
//
// A dashboard is a list of rows; each row holds panels that carry only their
// width and height. dashboard() lays them out left to right (a panel that does
// not fit in the 24 columns starts a new line) and numbers every panel, rows
// and the panels of collapsed rows included, so ids are unique and gridPos
// never overlaps.
//
// Every panel queries the `datasource` template variable, and every target
// gets a refId (A, B, ...), its expr and a legendFormat.

local ds = { type: 'prometheus', uid: '${datasource}' };
local refIds = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

// Targets of a panel: the defaults of its kind, then what the caller gave.
local withTargets(targets, defaults) = [
  {
    datasource: ds,
    editorMode: 'code',
    refId: refIds[i],
    legendFormat: '',
  } + defaults + targets[i]
  for i in std.range(0, std.length(targets) - 1)
];

local rangeTarget = { range: true, instant: false, format: 'time_series' };
local instantTarget = { range: false, instant: true, format: 'table' };

// Thresholds: a list of [value, colour] after a base colour.
local thresholds(base, steps) = {
  mode: 'absolute',
  steps: [{ color: base, value: null }] + [{ color: s[1], value: s[0] } for s in steps],
};

// Data links of a panel's values (fieldConfig.defaults.links).
local withLinks(links) = if links == [] then {} else { fieldConfig+: { defaults+: { links: links } } };

local panel(type, title, description, targets, w, h, targetDefaults) =
  assert std.length(description) > 0 : 'panel "%s" needs a description' % title;
  {
    type: type,
    title: title,
    description: description,
    datasource: ds,
    gridPos: { w: w, h: h, x: 0, y: 0 },
    targets: withTargets(targets, targetDefaults),
  };

// Places panels on lines starting at y0, numbering them from id0.
local place(panels, y0, id0) =
  local step(acc, p) =
    local w = p.gridPos.w;
    local h = p.gridPos.h;
    local wrap = acc.x + w > 24;
    local x = if wrap then 0 else acc.x;
    local y = if wrap then acc.y + acc.lineH else acc.y;
    {
      x: x + w,
      y: y,
      lineH: if wrap then h else std.max(acc.lineH, h),
      id: acc.id + 1,
      out: acc.out + [p { id: acc.id, gridPos: { x: x, y: y, w: w, h: h } }],
    };
  local end = std.foldl(step, panels, { x: 0, y: y0, lineH: 0, id: id0, out: [] });
  { panels: end.out, nextY: end.y + end.lineH, nextId: end.id };

// Every row and panel of the dashboard, positioned and numbered.
local layout(rows) =
  local step(acc, r) =
    local placed = place(r.children, acc.y + 1, acc.id + 1);
    local collapsed = r.collapsed;
    {
      y: if collapsed then acc.y + 1 else placed.nextY,
      id: placed.nextId,
      out: acc.out
           + [r { id: acc.id, gridPos: { h: 1, w: 24, x: 0, y: acc.y }, panels: if collapsed then placed.panels else [] }]
           + (if collapsed then [] else placed.panels),
    };
  std.foldl(step, rows, { y: 0, id: 1, out: [] }).out;

{
  datasource:: ds,

  // One query: a PromQL expression and its legend ('{{device}} {{op}}').
  // `extra` may set e.g. interval or format.
  target(expr, legend='', extra={}):: { expr: std.rstripChars(expr, '\n'), legendFormat: legend } + extra,

  thresholds:: thresholds,

  // A data link to another iolat dashboard (or this one), keeping the time
  // range, the data source and the cluster selection. carry: variables of
  // this dashboard passed on as they are (${job:queryparam}); set:
  // variables to set, as [name, value] (a value may be a field's label,
  // '${__field.labels.instance}', or a table cell, '${__data.fields.device}').
  // Grafana prefixes its sub-path to a URL that starts with /.
  link(title, uid, carry=[], set=[]):: {
    title: title,
    url: '/d/%s?%s' % [
      uid,
      std.join('&', ['${__url_time_range}']
                    + ['${%s:queryparam}' % n for n in ['datasource', 'cluster'] + carry]
                    + ['var-%s=%s' % [kv[0], kv[1]] for kv in set]),
    ],
    targetBlank: false,
  },

  // A row of panels. repeat: the name of a variable to repeat the row (and
  // its panels) for each of its values. collapsed rows keep their panels
  // inside and load them when opened.
  row(title, panels, collapsed=false, repeat=null, description=''):: {
    type: 'row',
    title: title,
    collapsed: collapsed,
    [if description != '' then 'description']: description,
    [if repeat != null then 'repeat']: repeat,
    children:: panels,
  },

  // A time series graph. unit: a Grafana unit ('s', 'iops', 'Bps', 'percentunit').
  // log: log10 y axis (latency quantiles span decades). stack: stacked areas.
  // thresholdLine: [value, colour] drawn as a dashed line (an SLO, a limit).
  timeseries(title, description, targets, unit='short', w=12, h=8, log=false,
             stack=false, min=null, max=null, thresholdLine=null,
             calcs=['mean', 'max', 'lastNotNull'], legendRight=false, links=[])::
    panel('timeseries', title, description, targets, w, h, rangeTarget) {
      fieldConfig: {
        defaults: {
          unit: unit,
          color: { mode: 'palette-classic' },
          [if min != null then 'min']: min,
          [if max != null then 'max']: max,
          custom: {
            drawStyle: 'line',
            lineInterpolation: 'linear',
            lineWidth: 1,
            fillOpacity: if stack then 60 else 10,
            gradientMode: 'none',
            showPoints: 'never',
            pointSize: 4,
            spanNulls: false,
            axisPlacement: 'auto',
            axisLabel: '',
            axisCenteredZero: false,
            barAlignment: 0,
            stacking: { mode: if stack then 'normal' else 'none', group: 'A' },
            scaleDistribution: if log then { type: 'log', log: 10 } else { type: 'linear' },
            hideFrom: { legend: false, tooltip: false, viz: false },
            thresholdsStyle: { mode: if thresholdLine != null then 'dashed' else 'off' },
          },
          thresholds:
            if thresholdLine != null then thresholds('transparent', [thresholdLine])
            else thresholds('green', []),
        },
        overrides: [],
      },
      options: {
        legend: {
          showLegend: true,
          displayMode: 'table',
          placement: if legendRight then 'right' else 'bottom',
          calcs: calcs,
          [if std.member(calcs, 'max') then 'sortBy']: 'Max',
          [if std.member(calcs, 'max') then 'sortDesc']: true,
        },
        tooltip: { mode: 'multi', sort: 'desc' },
      },
    } + withLinks(links),

  // A heatmap of a histogram that Prometheus already bucketed: one target
  // (promql.libsonnet's heatmap()) whose query returns the native histogram
  // where Prometheus scrapes native histograms and the classic `le` buckets
  // where it scrapes classic ones (format heatmap; the panel computes
  // nothing). The log2 y axis spreads native buckets (each a few % wide)
  // over the decades they cover; classic buckets are drawn as one row per
  // `le`, whatever the scale.
  heatmap(title, description, targets, unit='s', w=12, h=8)::
    assert std.length(targets) == 1 : 'heatmap "%s" takes one target, for native and classic histograms alike' % title;
    panel('heatmap', title, description, targets, w, h,
          rangeTarget { format: 'heatmap' }) {
      maxDataPoints: 200,
      fieldConfig: {
        defaults: {
          custom: {
            hideFrom: { legend: false, tooltip: false, viz: false },
            scaleDistribution: { type: 'linear' },
          },
        },
        overrides: [],
      },
      options: {
        calculate: false,
        cellGap: 1,
        cellValues: { unit: 'reqps' },
        color: {
          mode: 'scheme',
          scheme: 'Spectral',
          reverse: true,
          scale: 'exponential',
          exponent: 0.5,
          steps: 64,
          fill: 'dark-orange',
        },
        exemplars: { color: 'rgba(255,0,255,0.7)' },
        filterValues: { le: 1e-9 },
        legend: { show: true },
        rowsFrame: { layout: 'auto' },
        selectionMode: 'x',
        showValue: 'never',
        tooltip: { mode: 'single', yHistogram: true, showColorScale: false },
        yAxis: {
          axisPlacement: 'left',
          reverse: false,
          unit: unit,
          scaleDistribution: { type: 'log', log: 2 },
        },
      },
    },

  // A single number (the last value) with a sparkline. steps: thresholds as
  // [value, colour] above the base colour.
  stat(title, description, targets, unit='short', w=4, h=4, base='green', steps=[],
       graph=true, calc='lastNotNull', mappings=[])::
    panel('stat', title, description, targets, w, h, rangeTarget) {
      fieldConfig: {
        defaults: {
          unit: unit,
          color: { mode: 'thresholds' },
          thresholds: thresholds(base, steps),
          mappings: mappings,
        },
        overrides: [],
      },
      options: {
        reduceOptions: { calcs: [calc], fields: '', values: false },
        colorMode: 'value',
        graphMode: if graph then 'area' else 'none',
        justifyMode: 'auto',
        orientation: 'auto',
        textMode: 'auto',
        wideLayout: true,
        showPercentChange: false,
      },
    },

  // Horizontal bars, one per series of an instant query (a top-N).
  bargauge(title, description, targets, unit='short', w=8, h=10, steps=[], links=[])::
    panel('bargauge', title, description, targets, w, h, instantTarget { format: 'time_series' }) {
      fieldConfig: {
        defaults: {
          unit: unit,
          min: 0,
          color: { mode: 'continuous-GrYlRd' },
          thresholds: thresholds('green', steps),
        },
        overrides: [],
      },
      options: {
        reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
        orientation: 'horizontal',
        displayMode: 'gradient',
        valueMode: 'color',
        namePlacement: 'auto',
        showUnfilled: true,
        sizing: 'auto',
        minVizWidth: 8,
        minVizHeight: 16,
        maxVizHeight: 300,
      },
    } + withLinks(links),

  // A table of instant queries, one row per label set: the queries are merged
  // on their labels (transformation merge). Columns: the labels in `labels`,
  // then the value of each of the first len(columns) targets, named by
  // `columns` (with its unit from `units`); values of further targets, or all
  // of them when columns is [], are left out (an info metric's 1).
  // sortBy: the column to sort by, descending.
  // links: data links of the table's cells.
  table(title, description, targets, labels, columns=[], units=[], sortBy=null, w=24, h=8, links=[])::
    local n = std.length(targets);
    // A single query's value column is `Value`; several give `Value #A`, ...
    local valueName(i) = if n == 1 then 'Value' else 'Value #' + refIds[i];
    local fields = labels + [valueName(i) for i in std.range(0, std.length(columns) - 1)];
    panel('table', title, description, targets, w, h, instantTarget) {
      fieldConfig: {
        defaults: {
          custom: { align: 'auto', cellOptions: { type: 'auto' }, inspect: false, filterable: true },
          thresholds: thresholds('green', []),
        },
        overrides: [
          {
            matcher: { id: 'byName', options: columns[i] },
            properties: [{ id: 'unit', value: units[i] }],
          }
          for i in std.range(0, std.length(units) - 1)
        ],
      },
      options: {
        showHeader: true,
        cellHeight: 'sm',
        footer: { show: false, reducer: ['sum'], countRows: false, fields: '' },
        [if sortBy != null then 'sortBy']: [{ displayName: sortBy, desc: true }],
      },
      transformations: [
        { id: 'merge', options: {} },
        { id: 'filterFieldsByName', options: { include: { names: fields } } },
        {
          id: 'organize',
          options: {
            excludeByName: {},
            indexByName: { [fields[i]]: i for i in std.range(0, std.length(fields) - 1) },
            renameByName: { [valueName(i)]: columns[i] for i in std.range(0, std.length(columns) - 1) },
          },
        },
      ],
    } + withLinks(links),

  // The dashboard: rows laid out and numbered, the template variables, links
  // to the other iolat dashboards (tag iolat) keeping time and variables.
  dashboard(uid, title, description, rows, variables, tags=[], time='now-3h', refresh='1m'):: {
    annotations: {
      list: [
        {
          builtIn: 1,
          datasource: { type: 'grafana', uid: '-- Grafana --' },
          enable: true,
          hide: true,
          iconColor: 'rgba(0, 211, 255, 1)',
          name: 'Annotations & Alerts',
          type: 'dashboard',
        },
      ],
    },
    description: description,
    editable: true,
    fiscalYearStartMonth: 0,
    graphTooltip: 1,
    id: null,
    links: [
      {
        asDropdown: true,
        icon: 'external link',
        includeVars: true,
        keepTime: true,
        tags: ['iolat'],
        targetBlank: false,
        title: 'iolat dashboards',
        tooltip: '',
        type: 'dashboards',
        url: '',
      },
    ],
    liveNow: false,
    panels: layout(rows),
    refresh: refresh,
    schemaVersion: 39,
    tags: ['iolat'] + tags,
    templating: { list: variables },
    time: { from: time, to: 'now' },
    timepicker: {},
    timezone: '',
    title: title,
    uid: uid,
    version: 1,
    weekStart: '',
  },
}
