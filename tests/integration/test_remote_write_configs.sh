# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The remote-write configurations of deploy/remote-write/ (docs/remote_write.md),
# checked by the real tools and then run: promtool check config accepts the
# Prometheus ones (the edge one with the mixin's rule files), vmagent -dryRun
# the vmagent ones (and refuses a relabelling with a wrong action, so the
# check can fail). Then each path runs for real against a private
# victoria-metrics, scraping a fixed exposition of 3 workloads under serve's
# default per-workload labels (no device or op; the latency histogram and
# the bytes), its counters growing: the Prometheus agent (cluster dc1) and
# vmagent (dc2) must deliver every iolat series but the 9 per-workload
# buckets, and the edge Prometheus evaluating the mixin's rules (dc3) only
# recording-rule outputs and the 3 info/self series, with each workload's
# 3 quantiles, and none of the per-workload rules it keeps at the edge.
# No kernel needed; about 20 s.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh
for b in prometheus promtool victoria-metrics vmagent; do
	command -v $b >/dev/null || skip "$b is not installed (Debian packages prometheus, victoria-metrics)"
done
rw=deploy/remote-write

# The tools' own checks.
promtool check config "$rw/prometheus-agent.yml" >"$WORK/check.log" 2>&1 ||
	fail "promtool check config prometheus-agent.yml: $(cat "$WORK/check.log")"
mkdir "$WORK/edge"
cp "$rw/prometheus-edge-rules.yml" mixin/prometheus_rules.yaml mixin/prometheus_alerts.yaml "$WORK/edge/"
(cd "$WORK/edge" && promtool check config prometheus-edge-rules.yml) >"$WORK/check.log" 2>&1 ||
	fail "promtool check config prometheus-edge-rules.yml: $(cat "$WORK/check.log")"
vmagent -dryRun -promscrape.config="$rw/vmagent-scrape.yml" \
	-remoteWrite.relabelConfig="$rw/vmagent-drop-workload-buckets.yml" >"$WORK/check.log" 2>&1 ||
	fail "vmagent -dryRun: $(grep -v 'flag "' "$WORK/check.log" | tail -3)"
sed 's/action: drop/action: dorp/' "$rw/vmagent-drop-workload-buckets.yml" >"$WORK/bad-relabel.yml"
! vmagent -dryRun -promscrape.config="$rw/vmagent-scrape.yml" \
	-remoteWrite.relabelConfig="$WORK/bad-relabel.yml" >/dev/null 2>&1 ||
	fail "vmagent -dryRun accepted an unknown relabel action: the check above proves nothing"
echo "ok: promtool check config (agent, edge with the mixin's rules) and vmagent -dryRun accept deploy/remote-write/"

# The exposition: 1 disk, 3 workloads; counters grow with the seconds since start.
port=$(free_port)
python3 - "$port" >"$WORK/exporter.log" 2>&1 <<'PY' &
import http.server, sys, time
start = time.time()
def body():
    t = time.time() - start
    n = lambda per_s: "%g" % (per_s * t)
    out = ['iolat_build_info{version="test"} 1',
           'iolat_block_device_info{device="vda",model="m",rotational="0"} 1',
           'iolat_series{family="iolat_workload_device_latency_seconds",mode="classic"} 15',
           'iolat_block_completions_total{device="vda",op="read"} ' + n(100)]
    for le, c in (("0.001", 50), ("0.01", 90), ("+Inf", 100)):
        out.append('iolat_block_device_latency_seconds_bucket{device="vda",op="read",le="%s"} %s' % (le, n(c)))
    out += ['iolat_block_device_latency_seconds_sum{device="vda",op="read"} ' + n(0.3),
            'iolat_block_device_latency_seconds_count{device="vda",op="read"} ' + n(100)]
    for w in ("web01", "db01", "app01"):
        lab = 'kind="vm",workload="%s"' % w
        for le, c in (("0.001", 5), ("0.01", 9), ("+Inf", 10)):
            out.append('iolat_workload_device_latency_seconds_bucket{%s,le="%s"} %s' % (lab, le, n(c)))
        out += ['iolat_workload_device_latency_seconds_sum{%s} %s' % (lab, n(0.03)),
                'iolat_workload_device_latency_seconds_count{%s} %s' % (lab, n(10)),
                'iolat_workload_bytes_total{%s} %s' % (lab, n(40960))]
    return ("\n".join(out) + "\n").encode()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        b = body()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
on_exit "kill $!"
target=127.0.0.1:$port
# iolat series in the exposition: 4 + 5 (disk histogram) + 3 x 6 (workloads)
exposed=27

vm_port=$(free_port)
vm=http://127.0.0.1:$vm_port
victoria-metrics -storageDataPath="$WORK/vm" -httpListenAddr="127.0.0.1:$vm_port" \
	-retentionPeriod=1 -search.latencyOffset=0s >"$WORK/vm.log" 2>&1 &
# (stopped before $WORK goes: it writes its data until it exits)
on_exit "kill $!; wait $!"
for _ in $(seq 1 100); do
	curl -sf "$vm/health" >/dev/null && curl -sf "http://$target/" >/dev/null && break
	sleep 0.1
done
curl -sf "$vm/health" >/dev/null || fail "victoria-metrics did not start: $(tail -3 "$WORK/vm.log")"

# The shipped files with this test's target, store, cluster and a 1 s
# interval (and a 1 s send deadline for Prometheus' remote write).
localize() {
	sed -e "s|localhost:19617|$target|" -e "s|http://victoria-metrics.example:8428|$vm|" \
		-e "s|cluster: dc1|cluster: $2|" -e "s|_interval: 30s|_interval: 1s|" "$1"
}
with_deadline() {
	sed -e 's|^  - url: \(.*\)$|  - url: \1\n    queue_config:\n      batch_send_deadline: 1s|'
}
localize "$rw/prometheus-agent.yml" dc1 | with_deadline >"$WORK/agent.yml"
# (a Prometheus stopped waits up to --storage.remote.flush-deadline, 1 min by
# default, to send what it holds: 1 s here, and waited for, so none outlives
# the test)
prometheus --enable-feature=agent --config.file="$WORK/agent.yml" --storage.agent.path="$WORK/agent" \
	--storage.remote.flush-deadline=1s --web.listen-address="127.0.0.1:$(free_port)" >"$WORK/agent.log" 2>&1 &
on_exit "kill $!; wait $!"
localize "$rw/vmagent-scrape.yml" dc2 >"$WORK/vmagent.yml"
vmagent -promscrape.config="$WORK/vmagent.yml" -remoteWrite.url="$vm/api/v1/write" \
	-remoteWrite.relabelConfig="$rw/vmagent-drop-workload-buckets.yml" -remoteWrite.flushInterval=1s \
	-remoteWrite.tmpDataPath="$WORK/vmagent-data" -httpListenAddr="127.0.0.1:$(free_port)" >"$WORK/vmagent.log" 2>&1 &
on_exit "kill $!; wait $!"
localize "$WORK/edge/prometheus-edge-rules.yml" dc3 | with_deadline >"$WORK/edge/edge.yml"
prometheus --config.file="$WORK/edge/edge.yml" --storage.tsdb.path="$WORK/edge/tsdb" \
	--storage.remote.flush-deadline=1s --web.listen-address="127.0.0.1:$(free_port)" >"$WORK/edge.log" 2>&1 &
on_exit "kill $!; wait $!"

# count PROMQL: the store's answer to count(PROMQL), 0 when empty.
count() {
	curl -s --get --data-urlencode "query=count($1)" "$vm/api/v1/query" |
		python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)'
}
# What each path must deliver, as "PROMQL WANT" lines.
expect() {
	cat <<EOF
{cluster="dc1",__name__=~"iolat_.*"} $((exposed - 9))
{cluster="dc1",__name__=~"iolat_workload_.*_bucket"} 0
iolat_workload_device_latency_seconds_count{cluster="dc1"} 3
{cluster="dc2",__name__=~"iolat_.*"} $((exposed - 9))
{cluster="dc2",__name__=~"iolat_workload_.*_bucket"} 0
iolat_workload_device_latency_seconds_count{cluster="dc2"} 3
{cluster="dc3",__name__=~"iolat_.*"} 3
instance_workload:iolat_workload_device_latency_seconds:quantile5m{cluster="dc3"} 9
instance_workload:iolat_workload_completions:rate5m{cluster="dc3"} 3
{cluster="dc3",__name__=~"instance_workload_op:.*|instance_workload:.*_bucket:rate5m"} 0
instance_device_op:iolat_block_device_latency_seconds_bucket:rate5m{cluster="dc3"} 3
up{cluster=~"dc1|dc3"} 2
EOF
}
for _ in $(seq 1 40); do
	sleep 1
	curl -sf "$vm/internal/force_flush" >/dev/null
	ok=1
	while read -r q want; do
		[ "$(count "$q")" = "$want" ] || { ok=0; break; }
	done < <(expect)
	[ $ok = 1 ] && break
done
bad=0
while read -r q want; do
	got=$(count "$q")
	[ "$got" = "$want" ] || { echo "count($q): $got, want $want"; bad=$((bad + 1)); }
done < <(expect)
[ $bad = 0 ] || fail "$bad remote-write paths delivered other series (agent: $(tail -2 "$WORK/agent.log"); vmagent: $(grep -c error "$WORK/vmagent.log") errors; edge: $(tail -2 "$WORK/edge.log"))"
echo "ok: agent and vmagent deliver every iolat series but the per-workload buckets; the edge Prometheus only rule outputs and the info/self series"
