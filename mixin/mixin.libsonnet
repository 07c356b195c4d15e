// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The iolat monitoring mixin: recording rules, alerts and Grafana dashboards
// for `iolat serve`'s metrics. Every selector and threshold is in
// config.libsonnet; override them by importing this file and adding
// `{ _config+:: { iolatSelector: 'job="node-iolat"' } }`.
// `make mixin` renders it to prometheus_rules.yaml, prometheus_alerts.yaml
// and dashboards_out/ (committed, so they can be used without jsonnet).
(import 'config.libsonnet') +
(import 'rules.libsonnet') +
(import 'alerts.libsonnet') +
(import 'dashboards/dashboards.libsonnet')
