// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The iolat dashboards: { grafanaDashboards+:: { 'iolat-disks.json': ..., ... } }.
// Each file adds one dashboard; all read $._config (config.libsonnet).
(import 'disks.libsonnet') +
(import 'workloads.libsonnet') +
(import 'fleet.libsonnet') +
(import 'self.libsonnet')
