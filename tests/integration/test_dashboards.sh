# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The monitoring mixin against real software: a real `iolat serve` under real
# I/O (three libvirt-named VMs' cgroups; cgroups that do I/O and are gone
# before iolat names them, so their I/O is folded into `other`; a disk that
# goes away; a user program, size classes, BPF stats), scraped
# by two real Prometheus servers, one with native histograms and one
# without, each loading the mixin's recording rules and alerts. Then every
# panel query of every dashboard, with its template variables filled in,
# and every recording rule and alert expression go through each Prometheus's
# HTTP API: a query that errors fails the test, and so does a panel query
# or recording rule that returns nothing (alerts may be silent).
#
# Every heatmap panel has one query for both kinds of histogram: it must
# return classic `le` buckets from one server and a native histogram from
# the other. The host dashboard's disk variable lists the host's disks
# busiest first (its default is the first), and includes the loaded disk.
# Exceptions, each for a reason: "Stacked disks" needs a dm or md device,
# which this host's kernel cannot make (test_stacked.sh checks
# iolat_block_stack_info in a guest). A panel that draws only the disks that
# have some (errors, untimed completions: `... > 0`) is run without its
# last "> 0", so that its query is still checked against data.
# Panels that compare with the past (`offset 1w`, `offset 1d`) cannot have
# data in a Prometheus that is a minute old: they are run with the offset
# shortened to 20s, so their expressions are still checked against data.
# Panels of
# iolat_series (serve's own series count) are left out while the iolat under
# test does not export it.
#
# Before any of that, without a kernel: the fleet dashboard (every panel
# query and every variable query) names no raw per-workload series and no
# raw histogram bucket: only recording rules' outputs (LEVEL:METRIC:OPERATIONS)
# and the cheap per-host series in fleet_raw_allowed, so that a global view
# reads O(hosts x disks) series. (The disks' native histograms are among
# them: one series per disk and operation, no buckets; Prometheus 2.42
# cannot record their sums reliably, mixin/rules.libsonnet says why.)
source tests/integration/lib.sh
source tests/integration/lib_serve.sh
[ -s mixin/prometheus_rules.yaml ] || fail "mixin/prometheus_rules.yaml is missing (make mixin)"

fleet_raw_allowed="up iolat_build_info iolat_block_device_info
	iolat_block_device_latency_seconds iolat_block_total_latency_seconds"
python3 - mixin/dashboards_out/iolat-fleet.json "$fleet_raw_allowed" <<'PY' || fail "the fleet dashboard reads raw series"
import json, re, sys
allowed = set(sys.argv[2].split())
exprs = []
def walk(node):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "expr" and isinstance(v, str):
                exprs.append(v)
            elif k == "query" and isinstance(v, str) and "(" in v:
                exprs.append(v)
            else:
                walk(v)
    elif isinstance(node, list):
        for v in node:
            walk(v)
walk(json.load(open(sys.argv[1])))
assert len(exprs) >= 20, "only %d queries in the fleet dashboard" % len(exprs)
bad = []
for e in exprs:
    # strings are searched too: {__name__=~"iolat_x(_bucket)?"} is a raw read
    for name in re.findall(r"[A-Za-z_:][A-Za-z0-9_:]*", e):
        raw = ":" not in name and (name.startswith("iolat_") or name == "up")
        if raw and name not in allowed:
            bad.append("%s in: %s" % (name, " ".join(e.split())[:160]))
print("\n".join(bad))
if bad:
    sys.exit(1)
print("ok: %d fleet dashboard queries read only recording rules and %s" % (len(exprs), ", ".join(sorted(allowed))))
PY
command -v prometheus >/dev/null || skip "prometheus (Debian package) is not installed"

make_loop 64
dev=$LOOP
name=${dev#/dev/}
# A disk that has I/O and then goes away, for the gone-disk panels.
make_loop 16
gone=$LOOP
make_cgroup vms
mkdir "$CG/machine.slice" && on_exit "rmdir $CG/machine.slice"
web=$CG/machine.slice/'machine-qemu\x2d1\x2dweb01.scope'
db=$CG/machine.slice/'machine-qemu\x2d2\x2ddb01.scope'
app=$CG/machine.slice/'machine-qemu\x2d3\x2dapp01.scope'
mkdir "$web" "$db" "$app" && on_exit "rmdir '$web' '$db' '$app'"

port=$(free_port)
# Every per-workload family (the workload dashboard has panels for each),
# under serve's default labels: a workload summed per host.
start_serve "$WORK/serve.log" --web.listen-address="127.0.0.1:$port" --bpf.stats --workloads.metrics=all \
	--label.size-class --maintenance.interval=1s \
	--config.dir="$OUT/examples" --config.names=biosize
target=127.0.0.1:$port

# What both Prometheus servers load: the mixin's rules, and iolat.
config() {
	cat <<YML
rule_files:
  - $PWD/mixin/prometheus_rules.yaml
  - $PWD/mixin/prometheus_alerts.yaml
scrape_configs:
  - job_name: iolat
    static_configs:
      - targets: ['$target']
YML
}
start_prometheus classic < <(config)
start_prometheus native --enable-feature=native-histograms < <(config)

# I/O of every kind the panels show, for the whole test: reads and writes
# of several sizes from the three VMs' cgroups, and a few reads from a
# cgroup removed right after them (folded into `other`: not a cap of label
# sets, which this host's other cgroups doing I/O could fill first).
load() {
	local n=0
	while :; do
		for cg in "$web" "$db" "$app"; do
			in_cgroup "$cg" "$DIO" read "$dev" 100 4096
			in_cgroup "$cg" "$DIO" write "$dev" 20 65536
			in_cgroup "$cg" "$DIO" read "$dev" 10 262144
		done
		n=$((n + 1))
		mkdir "$CG/brief$n" && in_cgroup "$CG/brief$n" "$DIO" read "$dev" 10 4096
		rmdir "$CG/brief$n"
		sleep 0.2
	done
}
load >/dev/null 2>&1 &
on_exit "kill $!"
in_cgroup "$web" "$DIO" read "$gone" 10 4096 || fail "dio on $gone"
sleep 2
losetup -d "$gone" || fail "losetup -d $gone"

# query URL PROMQL: prints "error: ..." or the number of series returned.
query() {
	curl -s --get --data-urlencode "query=$2" "$1/api/v1/query" | python3 -c '
import json, sys
try:
    r = json.load(sys.stdin)
except ValueError:
    print("error: not JSON"); sys.exit()
if r.get("status") != "success":
    print("error:", r.get("error")); sys.exit()
print(len(r["data"]["result"]))'
}

# Wait until both have rule results (the 5m rules need two samples).
# shellcheck disable=SC2154 # classic_url, native_url: set by start_prometheus
for _ in $(seq 1 90); do
	sleep 1
	c=$(query "$classic_url" 'instance_device_op:iolat_block_device_latency_seconds:quantile5m')
	n=$(query "$native_url" 'instance_device_op:iolat_block_device_latency_seconds:quantile5m')
	[ "${c:-0}" -gt 0 ] 2>/dev/null && [ "${n:-0}" -gt 0 ] 2>/dev/null && break
done
sleep 15 # a few more evaluations, so every rate has points in its window
for u in "$classic_url" "$native_url"; do
	assert_eq "up ($u)" 1 "$(query "$u" 'count(up{job="iolat"} == 1)')"
done

# The workload variable: a VM that got a label set (the cap folds the rest).
curl -sf "http://$target/metrics" >"$WORK/m" || fail "scrape"
# (iolat_workload_bytes_total: serve exports it whatever --workloads.metrics
# says, with or without the device and op labels)
vm=$(sed -nE "s/^iolat_workload_bytes_total\{([^}]*,)?kind=\"vm\",workload=\"([a-z0-9]+)\"[,}].*/\2/p" "$WORK/m" | head -1)
[ -n "$vm" ] || fail "no VM workload on $name: $(grep '^iolat_workload_bytes_total' "$WORK/m")"
grep -qE "^iolat_workload_bytes_total\{([^}]*,)?kind=\"other\",workload=\"other\"" "$WORK/m" ||
	fail "nothing folded into other from cgroups removed right after their I/O"
echo "workload: $vm (and I/O folded into other)"

# Every panel target, variables filled in.
# On the workload dashboard, Disk and Operation list the workload series'
# device and op labels: where serve folds them away (its default), the
# variables are empty, and the empty value matches series without them.
wl_device=$name wl_op=read
grep -q '^iolat_workload_bytes_total{[^}]*device=' "$WORK/m" || wl_device=
grep -q '^iolat_workload_bytes_total{[^}]*op=' "$WORK/m" || wl_op=
{
	python3 tests/mixin/panel_queries.py \
		--var job=iolat --var instance="$target" --var device="$name" --var op=read --var disks=50 \
		--var model=unknown \
		mixin/dashboards_out/iolat-{disks,fleet,self}.json &&
		python3 tests/mixin/panel_queries.py \
			--var job=iolat --var instance="$target" --var device="$wl_device" --var op="$wl_op" \
			--var kind=vm --var workload="$vm" mixin/dashboards_out/iolat-workloads.json
} >"$WORK/panels.tsv" || fail "panel_queries.py"
npanels=$(wc -l <"$WORK/panels.tsv")
[ "$npanels" -ge 20 ] || fail "only $npanels panel queries found"

# The rules' expressions, and the names the recording rules record.
for kind in prometheusRules prometheusAlerts; do
	jsonnet -J mixin -e "(import 'mixin/mixin.libsonnet').$kind" |
		python3 -c '
import json, sys
for g in json.load(sys.stdin)["groups"]:
    for r in g["rules"]:
        name = r.get("record") or r.get("alert")
        kind = "record" if "record" in r else "alert"
        print("%s\t%s\t%s" % (kind, name, " ".join(r["expr"].split())))'
done >"$WORK/rules.tsv" || fail "cannot list the mixin's rules"
nrules=$(grep -c '^record' "$WORK/rules.tsv")
nalerts=$(grep -c '^alert' "$WORK/rules.tsv")

# kind URL PROMQL: "native" when the result holds native histograms,
# "classic N" for N series with an le label, else what it holds.
kind() {
	curl -s --get --data-urlencode "query=$2" "$1/api/v1/query" | python3 -c '
import json, sys
r = json.load(sys.stdin)
if r.get("status") != "success":
    print("error:", r.get("error")); sys.exit()
res = r["data"]["result"]
if res and all("histogram" in s for s in res):
    print("native")
elif res and all("le" in s["metric"] for s in res):
    print("classic", len(res))
else:
    print("other:", len(res), "series")'
}

# The heatmap panels' queries, variables filled in as for panels.tsv.
python3 - "$WORK/panels.tsv" "device=$name" "workload=$vm" "model=unknown" \
	mixin/dashboards_out/*.json >"$WORK/heatmaps.tsv" <<'PY' || fail "cannot list heatmaps"
import json, sys
values = dict(a.split("=", 1) for a in sys.argv[2:5])
heatmaps = set()
for path in sys.argv[5:]:
    for p in json.load(open(path))["panels"]:
        for q in [p] + p.get("panels", []):
            if q.get("type") == "heatmap":
                title = q["title"]
                for k, v in values.items():
                    title = title.replace("$" + k, v)
                heatmaps.add((path, title))
found = set()
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    # titles in panels.tsv have the variables filled in, as here
    if (f[0], f[1]) in heatmaps:
        print(line, end="")
        found.add((f[0], f[1]))
missing = heatmaps - found
assert not missing, "heatmaps without a query in panels.tsv: %s" % sorted(missing)
PY
nheat=$(wc -l <"$WORK/heatmaps.tsv")
[ "$nheat" -ge 7 ] || fail "only $nheat heatmap queries found"
bad=0
while IFS=$'\t' read -r file title _ expr; do
	c=$(kind "$classic_url" "$expr")
	n=$(kind "$native_url" "$expr")
	# at least two le buckets: the loaded disk's I/O spans several
	if [ "${c%% *}" != classic ] || [ "${c#classic }" -lt 2 ] 2>/dev/null || [ "$n" != native ]; then
		echo "heatmap $(basename "$file") / $title: classic server: $c; native server: $n"
		bad=$((bad + 1))
	fi
done <"$WORK/heatmaps.tsv"
[ "$bad" = 0 ] || fail "$bad heatmap queries are not classic buckets in one server and native histograms in the other"
echo "ok: $nheat heatmap queries: classic le buckets from the classic server, native histograms from the native one"

# The host dashboard's disk variable: busiest first, the loaded disk among them.
# shellcheck disable=SC2016 # $job, $instance... are Grafana's, replaced in Python
dq=$(python3 -c '
import json, sys
v = [v for v in json.load(open(sys.argv[1]))["templating"]["list"] if v["name"] == "device"][0]
q = v["query"]
assert q.startswith("query_result(") and q.endswith(")"), q
assert not v["includeAll"] and not v["current"], "device defaults to All or a fixed disk"
print(q[len("query_result("):-1].replace("$__range", "5m").replace("$cluster", ".*")
      .replace("$job", "iolat").replace("$instance", sys.argv[2]))' mixin/dashboards_out/iolat-disks.json "$target") ||
	fail "the host dashboard's device variable is not a busiest-first query"
curl -s --get --data-urlencode "query=$dq" "$classic_url/api/v1/query" >"$WORK/devices.json"
python3 - "$WORK/devices.json" "$name" <<'PY' || fail "device variable: $(head -c 600 "$WORK/devices.json")"
import json, sys
res = json.load(open(sys.argv[1]))["data"]["result"]
values = [float(r["value"][1]) for r in res]
devices = [r["metric"]["device"] for r in res]
assert values == sorted(values, reverse=True), values
assert sys.argv[2] in devices, devices
print("ok: device variable lists %d disks busiest first (%s), %s among them" % (len(devices), ", ".join(devices[:3]), sys.argv[2]))
PY

# Every panel query and rule in one Python process (a curl and a python per
# query took minutes on a loaded machine; the 1m rate windows then emptied).
series_exported=$(grep -c '^iolat_series{' "$WORK/m" || true)
python3 - "$classic_url" "$native_url" "$WORK/panels.tsv" "$WORK/rules.tsv" "$series_exported" <<'PY' >"$WORK/bad.txt"
import json, os, re, sys, urllib.parse, urllib.request

def query(url, q):
    """The number of series q returns, or "error: ..."."""
    data = urllib.parse.urlencode({"query": q}).encode()
    try:
        with urllib.request.urlopen(url + "/api/v1/query", data, timeout=60) as f:
            r = json.load(f)
    except (OSError, ValueError) as e:
        return "error: %s" % e
    if r.get("status") != "success":
        return "error: %s" % r.get("error")
    return len(r["data"]["result"])

def past(q):
    """Comparisons with the past run 20s back (Prometheus is a minute old)."""
    return re.sub(r"offset [0-9]+[wdh]", "offset 20s", q)

for mode, url in (("classic", sys.argv[1]), ("native", sys.argv[2])):
    for line in open(sys.argv[3]):
        path, title, ref, expr = line.rstrip("\n").split("\t", 3)
        if title.startswith("Stacked disks"):
            continue
        if sys.argv[5] == "0" and "iolat_series" in expr:
            continue
        q = re.sub(r" > 0$", "", past(expr))
        r = query(url, q)
        if r == 0 or isinstance(r, str):
            print("%s: %s / %s / %s: %s: %s" % (mode, os.path.basename(path), title, ref, r or "no data", q))
    for line in open(sys.argv[4]):
        kind, name, expr = line.rstrip("\n").split("\t", 2)
        # classic bucket rates: empty where the histograms are native
        if kind == "record" and mode == "native" and name.endswith("_bucket:rate5m"):
            continue
        r = query(url, name if kind == "record" else past(expr))
        # an alert may be silent
        if (kind == "record" and r == 0) or isinstance(r, str):
            print("%s: %s %s: %s" % (mode, kind, name, r or "no data"))
PY
bad=$(wc -l <"$WORK/bad.txt")
cat "$WORK/bad.txt"
[ "$bad" = 0 ] || fail "$bad queries errored or returned nothing"
echo "ok: $npanels panel queries, $nrules recording rules and $nalerts alert expressions answered by Prometheus with and without native histograms"

# Rule evaluation itself: no rule group failed in either server.
for mode in classic native; do
	url=${mode}_url
	curl -s "${!url}/api/v1/rules" | python3 -c '
import json, sys
bad = [r["name"] + ": " + r["lastError"] for g in json.load(sys.stdin)["data"]["groups"]
       for r in g["rules"] if r.get("lastError")]
print("\n".join(bad)); sys.exit(1 if bad else 0)' || fail "$mode: rules failed to evaluate"
done
echo "ok: every rule evaluates without error in both servers"
