# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The mixin's rules and alerts on VictoriaMetrics (Debian's victoria-metrics:
# victoria-metrics 1.79 and vmalert, MetricsQL, no native histograms), in a
# few seconds and without a kernel: a fixed data set of classic series (the
# numbers of mixin/tests/edge_test.yaml, plus every family a rule reads),
# imported into a private victoria-metrics with timestamps over the last
# 12 minutes; then vmalert loads the mixin rendered with
# nativeHistograms: false (MetricsQL 1.79 fails a whole expression on
# histogram_count, histogram_sum or histogram_fraction, the native side of
# the default rendering), parsing rules and templates, evaluates every group
# and writes the recording rules back. Every dashboard query of that
# rendering is also run through VictoriaMetrics' query API: none may fail. It fails if
# vmalert refuses a rule, if any rule or alert errors when evaluated, if a
# recording rule records nothing, or if the edge rules' values differ
# from what promtool finds on Prometheus (edge_test.yaml) by more than 1e-9
# relative: rate() without extrapolation and histogram_quantile give the same
# numbers here, since the counters grow linearly.
# What differs between the two stores, and why: docs/dashboards.md, "On
# VictoriaMetrics". The full fleet comparison at scale is test_fleet_scale.sh.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh
for b in victoria-metrics vmalert jsonnet; do
	command -v $b >/dev/null || skip "$b is not installed (Debian package victoria-metrics)"
done

vm_port=$(free_port)
vm=http://127.0.0.1:$vm_port
victoria-metrics -storageDataPath="$WORK/vm" -httpListenAddr="127.0.0.1:$vm_port" \
	-retentionPeriod=1 -search.latencyOffset=0s -search.disableCache \
	>"$WORK/vm.log" 2>&1 &
# (stopped before $WORK goes: it writes its data until it exits)
on_exit "kill $!; wait $!"
for _ in $(seq 1 100); do
	curl -sf "$vm/health" >/dev/null && break
	sleep 0.1
done
curl -sf "$vm/health" >/dev/null || fail "victoria-metrics did not start: $(tail -5 "$WORK/vm.log")"

# The data: one sample every 15 s for 12 minutes, up to now; a counter
# growing by N a minute grows by N/4 a sample.
python3 - >"$WORK/data.prom" <<'PY'
import time
end = int(time.time()) * 1000
steps = 49
les = ["0.0005", "0.001", "0.005", "0.01", "0.05", "0.1", "0.5", "+Inf"]
out = []
def counter(name, labels, per_min):
    for i in range(steps):
        t = end - (steps - 1 - i) * 15000
        out.append("%s{%s} %r %d" % (name, labels, per_min * i / 4, t))
def gauge(name, labels, v):
    for i in range(steps):
        out.append("%s{%s} %r %d" % (name, labels, v, end - (steps - 1 - i) * 15000))
def hist(name, labels, bounds, per_min):
    for le, c in zip(bounds, per_min):
        counter(name + "_bucket", '%s,le="%s"' % (labels, le), c)
    counter(name + "_count", labels, per_min[-1])
    counter(name + "_sum", labels, per_min[-1] * 0.004)
base = 'cluster="c1",job="iolat"'
nginx = base + ',instance="h1",kind="container",workload="shop/web-0/nginx",namespace="shop",pod="web-0",container="nginx"'
db = base + ',instance="h1",kind="vm",workload="db01"'
web = base + ',instance="h2",kind="vm",workload="web02"'
fast = [0, 60, 120, 150, 180, 180, 180, 180]
slow = [0, 0, 0, 0, 10, 40, 60, 60]
for labels, h, b in ((nginx, fast, 245760), (db, slow, 61440), (web, fast, 122880)):
    hist("iolat_workload_device_latency_seconds", labels, les, h)
    counter("iolat_workload_bytes_total", labels, b)
# not iolat's: left out by every rule
hist("iolat_workload_device_latency_seconds", 'job="node",instance="h1",kind="vm",workload="db01"', les, slow)
disk_les = ["0.001", "0.01", "+Inf"]
for inst, h in (("h1", [60, 120, 120]), ("h2", [0, 60, 120])):
    labels = base + ',instance="%s",device="vda",op="read"' % inst
    for view in ("device", "total"):
        hist("iolat_block_%s_latency_seconds" % view, labels, disk_les, h)
    counter("iolat_block_completions_total", labels, h[-1])
    counter("iolat_block_bytes_total", labels, h[-1] * 4096)
    counter("iolat_block_errors_total", labels, 0)
    counter("iolat_block_untimed_total", labels + ',view="device"', 0)
    counter("iolat_block_kernel_completed_total", labels, h[-1])
    gauge("iolat_block_unseen_completions", labels, 0)
    gauge("iolat_block_device_info", base + ',instance="%s",device="vda",model="unknown",rotational="0"' % inst, 1)
    gauge("up", base + ',instance="%s"' % inst, 1)
    gauge("iolat_series", base + ',instance="%s",family="iolat_workload_device_latency_seconds",mode="classic"' % inst, 11000 if inst == "h1" else 100)
    gauge("iolat_workload_label_sets", base + ',instance="%s"' % inst, 3)
    gauge("iolat_workload_label_sets_max", base + ',instance="%s"' % inst, 1000)
    gauge("iolat_config_last_reload_successful", base + ',instance="%s"' % inst, 1)
    gauge("iolat_scrape_duration_seconds", base + ',instance="%s"' % inst, 0.01)
    counter("iolat_collector_events_total", base + ',instance="%s",event="hist_map_full"' % inst, 0)
    counter("iolat_bpf_program_runs_total", base + ',instance="%s",program="rq_complete_btf"' % inst, 60)
print("\n".join(out))
PY
curl -sf --data-binary @"$WORK/data.prom" "$vm/api/v1/import/prometheus" || fail "import into victoria-metrics"
curl -sf "$vm/internal/force_flush" >/dev/null || fail "force_flush"

# The mixin for a store without native histograms.
echo "(import 'mixin.libsonnet') + { _config+:: { nativeHistograms: false } }" >"$WORK/vm.jsonnet"
bash scripts/render_mixin.sh "$WORK/mixin" "$WORK/vm.jsonnet" || fail "cannot render the mixin with nativeHistograms: false"
! grep -qE 'histogram_(count|sum|fraction)' "$WORK"/mixin/*.yaml "$WORK"/mixin/dashboards_out/*.json ||
	fail "nativeHistograms: false still has native-histogram functions"

# vmalert: parse (MetricsQL), then evaluate every 2 s, writing back.
alert_port=$(free_port)
vmalert -rule="$WORK/mixin/prometheus_rules.yaml" -rule="$WORK/mixin/prometheus_alerts.yaml" \
	-datasource.url="$vm" -remoteWrite.url="$vm" -remoteWrite.flushInterval=1s \
	-evaluationInterval=2s -notifier.url="http://127.0.0.1:$(free_port)" -httpListenAddr="127.0.0.1:$alert_port" \
	>"$WORK/vmalert.log" 2>&1 &
on_exit "kill $!; wait $!"
for _ in $(seq 1 100); do
	curl -sf "http://127.0.0.1:$alert_port/api/v1/rules" >/dev/null && break
	kill -0 $! 2>/dev/null || fail "vmalert refused the mixin: $(grep -E 'error|fatal' "$WORK/vmalert.log" | tail -5)"
	sleep 0.1
done
# Evaluations of every group until the rules on rules have their inputs
# (a series vmalert writes is searchable a few seconds later).
for _ in $(seq 1 30); do
	sleep 1
	curl -sf "$vm/internal/force_flush" >/dev/null
	[ "$(curl -s "$vm/api/v1/query?query=count(job:iolat_workload_bytes:rate5m)" | grep -c '"value"')" = 1 ] && break
done
sleep 3
curl -sf "$vm/internal/force_flush" >/dev/null

python3 - "$vm" "http://127.0.0.1:$alert_port" <<'PY' || fail "the mixin on VictoriaMetrics"
import json, sys, urllib.parse, urllib.request
vm, va = sys.argv[1], sys.argv[2]
def get(url):
    with urllib.request.urlopen(url, timeout=30) as f:
        return json.load(f)
def query(q):
    r = get(vm + "/api/v1/query?" + urllib.parse.urlencode({"query": q}))
    assert r["status"] == "success", (q, r)
    return r["data"]["result"]
bad = []
groups = get(va + "/api/v1/rules")["data"]["groups"]
nrec = nalert = 0
for g in groups:
    for r in g["rules"]:
        if r.get("lastError"):
            bad.append("%s: %s" % (r["name"], r["lastError"]))
        if r["type"] == "alerting":
            nalert += 1
            continue
        nrec += 1
        if not query(r["name"]):
            bad.append("%s recorded nothing" % r["name"])
if nrec < 40 or nalert < 10:
    bad.append("vmalert has only %d recording rules and %d alerts" % (nrec, nalert))
# The edge rules, as promtool finds them (edge_test.yaml).
expect = [
    ('instance_workload:iolat_workload_completions:rate5m{workload="shop/web-0/nginx"}', 3),
    ('instance_workload:iolat_workload_completions:rate5m{workload="db01"}', 1),
    ('instance_workload:iolat_workload_bytes:rate5m{workload="shop/web-0/nginx"}', 4096),
    ('instance_workload:iolat_workload_bytes:rate5m{workload="web02"}', 2048),
    ('instance_workload:iolat_workload_device_latency_seconds_bucket:rate5m{workload="db01",le="0.1"}', 2 / 3),
    ('instance_workload:iolat_workload_device_latency_seconds:quantile5m{workload="shop/web-0/nginx",quantile="0.5"}', 0.003),
    ('instance_workload:iolat_workload_device_latency_seconds:quantile5m{workload="shop/web-0/nginx",quantile="0.9"}', 0.026),
    ('instance_workload:iolat_workload_device_latency_seconds:quantile5m{workload="shop/web-0/nginx",quantile="0.99"}', 0.0476),
    ('instance_workload:iolat_workload_device_latency_seconds:quantile5m{workload="db01",quantile="0.5"}', 0.05 + 0.05 * 20 / 30),
    ('instance_workload:iolat_workload_device_latency_seconds:quantile5m{workload="db01",quantile="0.99"}', 0.488),
    ('instance_workload_op:iolat_workload_completions:rate5m{workload="web02"}', 3),
    ('job_op:iolat_block_device_latency_seconds_bucket:rate5m{le="0.01"}', 3),
    ('job_op:iolat_block_device_latency_seconds:quantile5m{quantile="0.5"}', 0.0055),
    ('op:iolat_block_device_latency_seconds:quantile5m{quantile="0.5"}', 0.0055),
    ('job:iolat_workload_completions:rate5m', 7),
    ('job:iolat_workload_bytes:rate5m', 7168),
    ('instance_device_op:iolat_block_completions:rate5m{instance="h1"}', 2),
    ('instance_device_op:iolat_block_device_latency_seconds:quantile5m{instance="h1",quantile="0.9"}', 0.001 + 0.009 * 48 / 60),
]
for q, want in expect:
    res = query(q)
    got = [float(s["value"][1]) for s in res]
    if len(got) != 1 or abs(got[0] - want) > 1e-9 * max(1, abs(want)):
        bad.append("%s: want %r, got %r" % (q, want, got))
# The quantile in the +Inf bucket: the last finite bound, as Prometheus.
for q in ("0.9", "0.999"):
    res = query('job_op:iolat_block_device_latency_seconds:quantile5m{quantile="%s"}' % q)
    got = [float(s["value"][1]) for s in res]
    if got != [0.01]:
        bad.append("job_op quantile %s in +Inf: want [0.01], got %r" % (q, got))
if bad:
    print("\n".join(bad))
    sys.exit(1)
print("ok: vmalert evaluated %d recording rules and %d alerts without error; %d edge rule values as on Prometheus" % (nrec, nalert, len(expect) + 2))
PY

# Every dashboard query, variables filled in, through the query API.
python3 tests/mixin/panel_queries.py --var job=iolat --var instance=h1 --var device=vda --var op=read \
	--var kind=vm --var workload=db01 --var model=unknown \
	"$WORK"/mixin/dashboards_out/*.json >"$WORK/panels.tsv" || fail "panel_queries.py"
python3 - "$vm" "$WORK/panels.tsv" <<'PY' || fail "dashboard queries on VictoriaMetrics"
import json, os, sys, urllib.error, urllib.parse, urllib.request
vm = sys.argv[1]
n = empty = 0
bad = []
for line in open(sys.argv[2]):
    path, title, ref, expr = line.rstrip("\n").split("\t", 3)
    n += 1
    data = urllib.parse.urlencode({"query": expr}).encode()
    try:
        with urllib.request.urlopen(vm + "/api/v1/query", data, timeout=30) as f:
            r = json.load(f)
    except urllib.error.HTTPError as e:
        r = json.load(e)
    if r.get("status") != "success":
        bad.append("%s / %s / %s: %s" % (os.path.basename(path), title, ref, str(r.get("error"))[-300:]))
    elif not r["data"]["result"]:
        empty += 1
if bad:
    print("\n".join(bad))
    sys.exit(1)
print("ok: %d dashboard queries answered by VictoriaMetrics (%d empty on this small data set)" % (n, empty))
PY
