# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The mixin on two stores: a short recording of a real `iolat serve` (a few
# named workloads reading and writing two loop devices) replayed as HOSTS
# hosts (bench/fleet_replay.py) into Prometheus 2.42 and into
# VictoriaMetrics fed by vmagent, with vmalert evaluating the same rule and
# alert files there (the mixin rendered with a RATE_W-second window, and
# with nativeHistograms: false: classic mode, the rendering docs/dashboards.md
# gives for VictoriaMetrics 1.79, which lacks histogram_count, _sum and
# _fraction and fails a whole expression that names one).
#   - every recording rule's and alert's expression, every recording rule's
#     output and every query of every dashboard, asked of both at one
#     evaluation time, answer the same series with values that agree by the
#     rules written in fleet_compare.py (VictoriaMetrics' rate() without
#     extrapolation, its histogram_quantile, the NaNs it leaves out, the
#     native-histogram functions 1.79 lacks); an error of either fails;
#   - once the replay is frozen: each host's series in each store are the
#     very samples of its body, same labels (its instance label added by
#     relabelling) and same values, none missing, none more.
source tests/integration/lib.sh
for c in curl prometheus jsonnet; do
	command -v $c >/dev/null || skip "$c is not installed"
done
for c in victoria-metrics vmagent vmalert; do
	command -v $c >/dev/null || skip "$c is not installed (Debian package victoria-metrics)"
done
python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml is not installed"

HOSTS=5
INTERVAL=1 # scrape and evaluation interval, seconds
STEP=4     # seconds the replay serves each recorded scrape
RATE_W=32  # the rules' rate() window, seconds: a whole number of steps
WORKLOADS=4
FLEET_DIR=$WORK/fleet
mkdir "$FLEET_DIR"
# shellcheck source=bench/lib_fleet.sh
source bench/lib_fleet.sh
on_exit fleet_cleanup

cat >"$WORK/fleet.jsonnet" <<EOF
(import 'mixin.libsonnet') + { _config+:: { rateInterval: '${RATE_W}s', nativeHistograms: false } }
EOF
bash scripts/render_mixin.sh "$WORK/mixin" "$WORK/fleet.jsonnet" >"$WORK/render.log" 2>&1 ||
	fail "cannot render the mixin: $(tail -5 "$WORK/render.log")"

t0=$SECONDS
fleet_record "$FLEET_DIR/rec" $WORKLOADS 2 5 2 || fail "recording failed"
last=$FLEET_DIR/rec/body.004
nseries=$(grep -vc '^#' "$last")
echo "recorded 5 scrapes of iolat serve ($nseries series, $WORKLOADS workloads) in $((SECONDS - t0)) s"
grep -q '^iolat_workload_bytes_total{.*workload="w1"' "$last" || fail "workload w1 is not in the recording"

fleet_stores $HOSTS $STEP ${INTERVAL}s "$WORK/mixin/prometheus_rules.yaml" \
	"$WORK/mixin/prometheus_alerts.yaml" || fail "the stores did not start"
echo "replaying $HOSTS hosts into Prometheus ($PROM) and vmagent -> VictoriaMetrics ($VM), vmalert ($VMALERT)"

# count URL PROMQL: the number of series an instant query returns now.
count() {
	curl -s --get --data-urlencode "query=$2" "$1/api/v1/query" |
		python3 -c 'import json, sys; print(len(json.load(sys.stdin)["data"]["result"]))' 2>/dev/null || echo 0
}
for _ in $(seq 60); do
	[ "$(count "$PROM" 'up{job="iolat"} == 1')" = $HOSTS ] && [ "$(count "$VM" 'up{job="iolat"} == 1')" = $HOSTS ] && break
	sleep 1
done
assert_eq "hosts up in Prometheus" $HOSTS "$(count "$PROM" 'up{job="iolat"} == 1')"
assert_eq "hosts up in VictoriaMetrics" $HOSTS "$(count "$VM" 'up{job="iolat"} == 1')"
# A whole rate window of replayed data in both, and the rules' outputs.
sleep $((RATE_W + 3))
rec='instance_device_op:iolat_block_completions:rate5m'
[ "$(count "$PROM" "$rec")" -gt 0 ] || fail "Prometheus recorded no $rec"
[ "$(count "$VM" "$rec")" -gt 0 ] || fail "vmalert recorded no $rec in VictoriaMetrics: $(tail -3 "$FLEET_DIR/vmalert.log")"

# Every panel target, variables filled in: host0000, a loop device the
# workloads used, workload w1; their windows ($__rate_interval 1m, $__range
# 5m) cut to RATE_W as the rules' are: a window the replay does not fill
# yet is one where Prometheus' rate() divides by the whole window and
# VictoriaMetrics' by the samples' span.
# (Workload series may or may not carry device and op: whatever serve's
# defaults are, the variables are those of w1.)
dev=$(sed -n 2p "$FLEET_DIR/rec/disks")
kind=$(sed -nE 's/^iolat_workload_bytes_total\{.*kind="([a-z]*)",workload="w1".*/\1/p' "$last" | head -1)
[ -n "$kind" ] || fail "no kind for workload w1 in the recording"
python3 tests/mixin/panel_queries.py --var job=iolat --var instance=host0000:9617 --var device="$dev" \
	--var op=read --var disks=50 --var kind="$kind" --var workload=w1 --var model=unknown \
	"$WORK"/mixin/dashboards_out/*.json >"$WORK/panels.full" || fail "panel_queries.py"
sed -E "s/\[(1m|5m)\]/[${RATE_W}s]/g" "$WORK/panels.full" >"$WORK/panels.tsv"
grep -o 'le="[^"]*"' "$last" | sort -u | sed -E 's/le="(.*)"/\1/' >"$WORK/buckets"
echo "$(wc -l <"$WORK/panels.tsv") dashboard queries, $(grep -c '"record":' "$WORK/mixin/prometheus_rules.yaml") recording rules," \
	"$(grep -c '"alert":' "$WORK/mixin/prometheus_alerts.yaml") alerts"

# eval_time: the latest time, 2 s ago or more, half a step past a step's
# start. A window of whole steps that ends there starts half a step past
# one too: with a scrape every second, each store's last sample before the
# window and first in it are of one replayed body, and so are their last
# samples before the time: both stores count the very same increase (only
# Prometheus' extrapolation and VictoriaMetrics' span, the rate rule, set
# them apart), and instant values are the same.
eval_time() {
	curl -sf "$REPLAY/-/status" | python3 -c '
import json, math, sys, time
s = json.load(sys.stdin)
n = math.floor((time.time() - 2 - s["started"]) / s["step_seconds"] - 0.5)
print(round(s["started"] + (n + 0.5) * s["step_seconds"], 3))'
}
# compare FLAGS...: fleet_compare.py's queries on the test's files.
compare() {
	local at
	at=$(eval_time)
	python3 tests/integration/fleet_compare.py queries --prom "$PROM" --vm "$VM" --time "$at" \
		--window $RATE_W --interval $INTERVAL --rules "$WORK/mixin/prometheus_rules.yaml" \
		--alerts "$WORK/mixin/prometheus_alerts.yaml" --panels "$WORK/panels.tsv" \
		--buckets "$WORK/buckets" "$@" >"$WORK/compare.txt"
	rc=$?
	grep -v '^ok ' "$WORK/compare.txt"
	[ $rc = 0 ] || fail "Prometheus and VictoriaMetrics answer the mixin's queries differently (above)"
}
compare
echo "ok: every rule, alert and dashboard query agrees between Prometheus and VictoriaMetrics"

# Frozen: every host serves one body from now on; after a few scrapes both
# stores' last samples are that body.
curl -sf -X POST "$REPLAY/-/freeze" >/dev/null || fail "cannot freeze the replay"
sleep $((4 * INTERVAL + 2))
at=$(python3 -c 'import time; print(round(time.time() - 1, 3))')
python3 tests/integration/fleet_compare.py raw --prom "$PROM" --vm "$VM" --time "$at" \
	--replay "$REPLAY" --hosts $HOSTS >"$WORK/raw.txt"
rc=$?
grep -v '^ok ' "$WORK/raw.txt"
[ $rc = 0 ] || fail "a store does not hold the replayed series as served (above)"
echo "ok: both stores hold each host's $nseries series exactly as served, labelled by host"
compare --frozen
echo "ok: the instant queries' values are the same in both, frozen"
echo "replayer: $(curl -sf "$REPLAY/-/status")"
echo "ok: whole run took $((SECONDS - t0)) s"
