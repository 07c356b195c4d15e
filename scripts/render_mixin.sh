#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# render_mixin.sh OUTDIR [ENTRY]: renders the monitoring mixin (mixin/) into
# OUTDIR: prometheus_rules.yaml, prometheus_alerts.yaml, dashboards_out/*.json.
# ENTRY (default mixin/mixin.libsonnet) lets a test render it with other
# settings (a jsonnet file that imports the mixin and overrides _config).
set -eu
out=$1
entry=${2:-mixin/mixin.libsonnet}
command -v jsonnet >/dev/null || { echo "render_mixin.sh: jsonnet is not installed (Debian package jsonnet)" >&2; exit 1; }
mkdir -p "$out/dashboards_out"
jsonnet -J mixin -S -e "std.manifestYamlDoc((import '$entry').prometheusRules)" >"$out/prometheus_rules.yaml"
jsonnet -J mixin -S -e "std.manifestYamlDoc((import '$entry').prometheusAlerts)" >"$out/prometheus_alerts.yaml"
rm -f "$out"/dashboards_out/*.json
jsonnet -J mixin -m "$out/dashboards_out" -e "(import '$entry').grafanaDashboards" >/dev/null
