#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# check.sh OUTDIR: the monitoring mixin, without a kernel or root.
#   - mixin/*.yaml and mixin/dashboards_out/ are exactly what the jsonnet
#     sources render to (so the shipped files are the tested ones);
#   - promtool check rules: both rule files clean;
#   - promtool test rules: every alert fires where it should and only there;
#   - every dashboard passes the headless Grafana model lint;
#   - rendered without a cluster label, with it hidden, or named otherwise,
#     the rules still pass promtool check and the dashboards the lint.
# What the queries return against real data: tests/integration/test_dashboards.sh.
set -eu
cd "$(dirname "$0")/../.."
out=$1
fail() { echo "FAIL mixin: $*" >&2; exit 1; }
rm -rf "$out"
bash scripts/render_mixin.sh "$out" || fail "jsonnet could not render mixin/mixin.libsonnet"
{ diff -ru mixin/dashboards_out "$out/dashboards_out" >"$out.diff" &&
	diff -u mixin/prometheus_rules.yaml "$out/prometheus_rules.yaml" >>"$out.diff" &&
	diff -u mixin/prometheus_alerts.yaml "$out/prometheus_alerts.yaml" >>"$out.diff"; } ||
	fail "the committed rendering is stale: run 'make mixin' and commit ($(head -c 2000 "$out.diff"))"
echo "ok: rendered mixin matches the committed files"
promtool check rules mixin/prometheus_rules.yaml mixin/prometheus_alerts.yaml >"$out.log" 2>&1 ||
	fail "promtool check rules: $(cat "$out.log")"
! grep -qi warn "$out.log" || fail "promtool check rules warns: $(cat "$out.log")"
echo "ok: promtool check rules: $(grep -c SUCCESS "$out.log") files, $(grep -o '[0-9]* rules found' "$out.log" | paste -sd, -)"
(cd mixin && promtool test rules tests/*.yaml) >"$out.log" 2>&1 ||
	fail "promtool test rules: $(tail -40 "$out.log")"
rule_tests=(mixin/tests/*.yaml)
echo "ok: promtool test rules (${#rule_tests[@]} files)"
dashboards=(mixin/dashboards_out/*.json)
python3 tests/mixin/lint_dashboards.py "${dashboards[@]}" ||
	fail "dashboard lint"
echo "ok: dashboards lint clean (${#dashboards[@]} dashboards)"
for setting in "clusterLabel: ''" "showMultiCluster: false" "clusterLabel: 'region'" "nativeHistograms: false"; do
	printf "(import 'mixin.libsonnet') + { _config+:: { %s } }\n" "$setting" >"$out.jsonnet"
	rm -rf "$out.variant"
	bash scripts/render_mixin.sh "$out.variant" "$out.jsonnet" >"$out.log" 2>&1 ||
		fail "cannot render with $setting: $(tail -5 "$out.log")"
	promtool check rules "$out.variant"/*.yaml >"$out.log" 2>&1 ||
		fail "promtool check rules with $setting: $(cat "$out.log")"
	python3 tests/mixin/lint_dashboards.py "$out.variant"/dashboards_out/*.json ||
		fail "dashboard lint with $setting"
done
echo "ok: rendered without a cluster label, with it hidden, named region, or without native histograms: rules and dashboards clean"
