# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A fleet on one machine, watched through the monitoring mixin: the host and
# two qemu/TCG guests (Debian 6.1 kernel, the static iolat build) each run
# `iolat serve`; one Prometheus scrapes all three (the guests through qemu's
# user-mode port forwards) in job "iolat", evaluates the mixin's recording
# rules and alerts (rendered with short windows for the test) and sends the
# alerts to one Alertmanager. The VMs sit in libvirt-named cgroups on the
# host: noisy01's disk is a loop device over a slowfs file (one FUSE thread,
# every read DELAY_US), calm01's a plain loop device.
#   - calm: both VMs do light QD1 reads; IolatWorkloadLatencyHigh is active
#     nowhere in Alertmanager;
#   - noisy: noisy01 hammers its disk with 8 readers (each read queues
#     behind the others in the one FUSE thread): the alert becomes active for
#     instance=<the host>, kind="vm", workload="noisy01", and for no other
#     instance or workload;
#   - the fleet-wide p99 of the read device time, from the recording rule
#     op:iolat_block_device_latency_seconds:quantile5m, evaluated at a quiet
#     point whose window holds the whole noisy phase and nothing else, is
#     within one classic bucket of the p99 of the three hosts' histograms
#     merged here from their /metrics before and after the phase (and so
#     are the p50 and p90);
#   - throttled: blk-throttle holds noisy01 to THROTTLE read IOPS while it
#     goes on hammering: its device time falls back, and the alert leaves
#     Alertmanager's active alerts.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh
source tests/vm/guest.sh
for c in curl prometheus prometheus-alertmanager jsonnet; do
	command -v $c >/dev/null || skip "$c is not installed"
done
vm_prepare

VMS=(noisy01 calm01)
# noisy01's reads take DELAY_US alone, 8 x DELAY_US behind its 8 readers.
# Throttled, blk-throttle lets a burst of THROTTLE / 10 reads through at the
# start of each of its 100 ms slices, and those queue behind each other (at
# 50/s, bursts of 5; at 10/s, one read at a time). On a busy 2-CPU machine,
# host scheduling adds a tail of tens of ms to any read (the loop worker,
# the FUSE thread, qemu's completions wait for a CPU): with DELAY_US 2 ms,
# as in test_vm_neighbour.sh, noisy01's p99 was 10-19 ms calm, 40-65 ms
# noisy and 38-64 ms throttled at 50/s, too close to tell apart; with 10 ms,
# 43 ms calm (calm01's: 16 ms).
DELAY_US=20000
THROTTLE=10
# The mixin's settings for the test: a window of RATE_W seconds (the rules'
# rate() range), the workload alert's threshold between noisy01's p99 calm
# or throttled (DELAY_US and the tail) and noisy (8 x DELAY_US and more),
# and a short `for`.
RATE_W=30
THRESHOLD=0.1
ALERT_FOR=5s
CALM_S=20 # how long the calm phase lasts (longer than the alert's for)
declare -A DEV VMCG LOG GPORT

# $OUT's objects linked as `make STATIC=1` links them: no second compile.
make -s OUT="$OUT" "$OUT/iolat-static" >"$WORK/static.log" 2>&1 ||
	fail "make $OUT/iolat-static failed: $(tail -3 "$WORK/static.log")"
vm_add_program "$PWD/$OUT/iolat-static" /bin/iolat

# One bucket table for every host (Prometheus sums buckets by le across
# hosts): fine from calm01's sub-millisecond reads to the ~8 x DELAY_US of
# the noisy ones. The per-workload histograms (a workload summed per host,
# serve's default) get bounds around the alert's THRESHOLD, as an operator
# sets them around theirs: the default 8 (0.05 then 0.25) would put a calm
# p99 of ~45 ms and a noisy one of ~160 ms in neighbouring buckets.
cat >"$WORK/iolat.yml" <<'EOF'
buckets:
  latency_seconds: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.015,
                    0.02, 0.025, 0.03, 0.04, 0.05, 0.075, 0.1, 0.125, 0.15, 0.175,
                    0.2, 0.25, 0.3, 0.4, 0.5, 0.75, 1, 2.5]
  workload_latency_seconds: [0.001, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5]
EOF
vm_add_file "$WORK/iolat.yml" /etc/iolat.yml

# noisy01's disk: one FUSE thread (-s), so its 8 readers queue behind each
# other; calm01's: a loop device over a file in /dev/shm.
mkdir "$WORK/mnt"
"$SLOWFS" "$WORK/mnt" -s --size-mib=32 --delay-us=$DELAY_US || fail "cannot mount slowfs"
on_exit "fusermount3 -u $WORK/mnt || umount -l $WORK/mnt"
make_loop 32 "$WORK/mnt/disk"
DEV[noisy01]=${LOOP#/dev/}
make_loop 32
DEV[calm01]=${LOOP#/dev/}
n=1
for vm in "${VMS[@]}"; do
	vm_cgroup $n "$vm"
	VMCG[$vm]=$VM_CG
	LOG[$vm]=$WORK/$vm.console
	GPORT[$vm]=$(free_port)
	n=$((n + 1))
done

# The host's own iolat.
hport=$(free_port)
# The VMs' series by op (a host whose operator alerts per operation): the
# alert must name noisy01's reads, not its reads, writes and flushes summed.
start_serve "$WORK/serve.log" --config.file="$WORK/iolat.yml" --web.listen-address="127.0.0.1:$hport" \
	--workloads.labels=op \
	--maintenance.interval=1s
HOST=127.0.0.1:$hport
declare -A TARGET=([host]=$HOST [noisy01]=127.0.0.1:${GPORT[noisy01]} [calm01]=127.0.0.1:${GPORT[calm01]})

# The mixin, with the test's settings.
cat >"$WORK/fleet.jsonnet" <<EOF
(import 'mixin.libsonnet') + {
  _config+:: {
    rateInterval: '${RATE_W}s',
    workloadP99Threshold: $THRESHOLD,
    workloadLatencyFor: '$ALERT_FOR',
  },
}
EOF
bash scripts/render_mixin.sh "$WORK/mixin" "$WORK/fleet.jsonnet" >"$WORK/render.log" 2>&1 ||
	fail "cannot render the mixin: $(tail -5 "$WORK/render.log")"

# Alertmanager: one route, to a receiver that notifies no one; its API is
# what the test reads.
amport=$(free_port)
cat >"$WORK/am.yml" <<'EOF'
route:
  receiver: nobody
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: nobody
EOF
prometheus-alertmanager --config.file="$WORK/am.yml" --storage.path="$WORK/am" \
	--web.listen-address="127.0.0.1:$amport" --cluster.listen-address= >"$WORK/am.log" 2>&1 &
on_exit "kill $!"
AM=http://127.0.0.1:$amport

start_prometheus prom --rules.alert.resend-delay=1s <<EOF
rule_files:
  - $WORK/mixin/prometheus_rules.yaml
  - $WORK/mixin/prometheus_alerts.yaml
alerting:
  alertmanagers:
    - static_configs:
        - targets: ['127.0.0.1:$amport']
scrape_configs:
  - job_name: iolat
    static_configs:
      - targets: ['${TARGET[host]}', '${TARGET[noisy01]}', '${TARGET[calm01]}']
EOF
# shellcheck disable=SC2154 # set by start_prometheus
PROM=$prom_url

# The guests: networking (qemu's user network, 10.0.2.15), cgroup2 mounted
# as on any systemd machine, `iolat serve` on port 19617 of every address.
# `bg CMD...` repeats CMD in the background until `end`; each phase runs
# between two marks, for as long as the host holds the guest at the second.
cat >"$WORK/common.sh" <<'EOF'
for a in ip mkdir grep; do busybox ln -sf busybox /bin/$a; done
mkdir -p /tmp /sys/fs/cgroup
mount -t cgroup2 none /sys/fs/cgroup
load virtio_net
ip link set lo up
ip link set eth0 up
ip addr add 10.0.2.15/24 dev eth0
iolat serve --config.file=/etc/iolat.yml --web.listen-address=0.0.0.0:19617 --maintenance.interval=1s >/tmp/serve.log 2>&1 &
i=0
until grep -q "listening on" /tmp/serve.log; do
	[ $i -lt 600 ] || { cat /tmp/serve.log; exit 1; }
	sleep 0.1
	i=$((i + 1))
done
bg() {
	rm -f /tmp/stop
	(while [ ! -e /tmp/stop ]; do "$@"; done) &
	BG=$!
}
end() {
	touch /tmp/stop
	wait $BG
}
# light: 20 direct 4 KiB reads one at a time, then a pause.
light() {
	dio read /dev/vda 20 4096 >/dev/null
	sleep 0.2
}
EOF
{ cat "$WORK/common.sh"; cat <<'EOF'; } >"$WORK/noisy01.sh"
mark start
bg light
mark calm
end
mark quiet
bg hammer 8 5
mark noisy
end
mark quiet2
bg hammer 8 1
mark throttled
end
mark done
EOF
{ cat "$WORK/common.sh"; cat <<'EOF'; } >"$WORK/calm01.sh"
mark start
bg light
mark calm
end
mark quiet
bg light
mark noisy
end
mark quiet2
bg light
mark throttled
end
mark done
EOF

now() { date +%s.%N; }
# calc EXPR: a Python expression's value (times are floats).
calc() { python3 -c "print($1)"; }

# query PROMQL [TIME]: Prometheus' answer, one "LABELS VALUE" line per
# series (labels as k=v,k=v, sorted).
query() {
	curl -sf --get --data-urlencode "query=$1" ${2:+--data-urlencode "time=$2"} "$PROM/api/v1/query" |
		python3 -c '
import json, sys
for r in json.load(sys.stdin)["data"]["result"]:
    m = r["metric"]
    print("{" + ",".join("%s=%s" % (k, m[k]) for k in sorted(m)) + "}", r["value"][1])'
}

# workload_alerts: IolatWorkloadLatencyHigh alerts active in Alertmanager,
# one "instance kind workload op" line each (and a line that is none of
# them, so it fails any check, if Alertmanager does not answer).
workload_alerts() {
	curl -sf --get --data-urlencode 'filter=alertname="IolatWorkloadLatencyHigh"' \
		--data-urlencode active=true "$AM/api/v2/alerts" >"$WORK/am.json" ||
		{ echo "(Alertmanager does not answer)"; return; }
	python3 -c '
import json, sys
for a in json.load(open(sys.argv[1])):
    if a["status"]["state"] != "active":
        continue
    l = a["labels"]
    print(l.get("instance"), l.get("kind"), l.get("workload"), l.get("op"))' "$WORK/am.json" | sort
}
# ours ALERTS: those of the alerts (workload_alerts lines) the test's load
# can raise: every workload of the guests, the VMs on the host. The host's
# other workloads (the machine's services, other runs' cgroups) are not
# under the test's control: they are only printed, once each.
ours() {
	echo -n "$1" | awk -v host="$HOST" 'NF && ($1 != host || $2 == "vm")'
	echo -n "$1" | awk -v host="$HOST" 'NF && $1 == host && $2 != "vm"' | while read -r l; do
		grep -qxF "$l" "$WORK/ignored" 2>/dev/null && continue
		echo "$l" >>"$WORK/ignored"
		echo "note: IolatWorkloadLatencyHigh for a workload of the host's own: $l" >&2
	done
}
WANTED="$HOST vm noisy01 read"
# others ALERTS: ours but the one the noisy phase must raise.
others() { ours "$1" | grep -vxF "$WANTED"; }
# listed ALERTS: them on one line, and why a root cgroup's is wrong.
listed() {
	tr '\n' ';' <<<"$1"
	grep -q ' cgroup / ' <<<"$1" &&
		echo " (kind=\"cgroup\",workload=\"/\" is a whole machine's root cgroup, here a guest's:" \
			"the workload alert is meant for named workloads)"
}

# workload_p99s [TIME]: the recording rule's p99 for every workload of the
# fleet that read, "instance kind workload p99_ms" lines.
# shellcheck disable=SC2120 # TIME is optional: most callers want now
workload_p99s() {
	query 'instance_workload_op:iolat_workload_device_latency_seconds:quantile5m{quantile="0.99",op="read"}' "${1:-}" |
		sed -E 's/.*instance=([^,]*).*kind=([^,]*).*workload=([^,}]*)[^ ]* (.*)/\1 \2 \3 \4/' |
		awk '{ printf "  %-16s %-7s %-10s p99 %s\n", $1, $2, $3, ($4 == "NaN" ? "NaN" : sprintf("%.2f ms", $4 * 1e3)) }'
}

# scrape NAME: every target's /metrics now, in $WORK/NAME.TARGET.
scrape() {
	local t
	for t in host noisy01 calm01; do
		curl -sf -m 10 "http://${TARGET[$t]}/metrics" >"$WORK/$1.$t" || fail "cannot scrape $t (${TARGET[$t]})"
	done
}

# Boot: each guest its own NIC and port forward.
t0=$SECONDS
for vm in "${VMS[@]}"; do
	VM_DEVICES=()
	vm_add_net "${GPORT[$vm]}" 19617
	vm_start "$vm" "${VMCG[$vm]}" "/dev/${DEV[$vm]}" "$WORK/$vm.sh" "${LOG[$vm]}"
done
VM_DEVICES=()
vms_at_mark start 180
echo "guests booted and serving in $((SECONDS - t0)) s"
# Prometheus scrapes all three.
for _ in $(seq 1 60); do
	[ "$(query 'sum(up{job="iolat"})' | awk '{ print $2 }')" = 3 ] && break
	sleep 1
done
[ "$(query 'sum(up{job="iolat"})' | awk '{ print $2 }')" = 3 ] ||
	fail "Prometheus does not scrape all three iolat: $(query 'up{job="iolat"}' | tr '\n' ' ')"
query 'count(ALERTS) or vector(0)' >/dev/null || fail "Prometheus' API does not answer"
echo "Prometheus scrapes the host ($HOST), noisy01 (${TARGET[noisy01]}) and calm01 (${TARGET[calm01]})"

# Calm: light reads in both VMs. The alert is active nowhere.
vms_resume
vms_at_mark calm 60
end=$((SECONDS + CALM_S))
while [ $SECONDS -lt $end ]; do
	a=$(ours "$(workload_alerts)")
	[ -z "$a" ] || fail "calm phase: IolatWorkloadLatencyHigh active: $(listed "$a"); p99s: $(workload_p99s | tr '\n' ';'); host's noisy01: $(curl -s "http://$HOST/metrics" | grep 'iolat_workload_device_latency_seconds_bucket.*noisy01' | tr '\n' ';')"
	sleep 1
done
echo "calm phase (${CALM_S} s): no IolatWorkloadLatencyHigh in Alertmanager; workload p99s:"
workload_p99s

# Noisy: noisy01 hammers. The I/O stops between phases (marks quiet and
# quiet2); the scrapes there bracket the phase for the fleet p99.
vms_resume
vms_at_mark quiet 60
t_q1=$(now)
sleep 4
scrape before
t_n0=$(now)
vms_resume
vms_at_mark noisy 60
fired='' seen_others=''
limit=$(calc "$t_n0 + $RATE_W - 9")
while :; do
	a=$(workload_alerts)
	o=$(others "$a")
	[ -z "$o" ] || seen_others=$(printf '%s\n%s' "$seen_others" "$o" | awk 'NF && !s[$0]++')
	if [ -z "$fired" ] && grep -qxF "$WANTED" <<<"$a"; then
		fired=$(now)
		# A moment longer: any other alert the load raises has its chance.
		limit=$(calc "$fired + 3")
	fi
	[ "$(calc "$(now) > $limit")" = True ] && break
	sleep 1
done
[ -n "$fired" ] || fail "noisy phase: no IolatWorkloadLatencyHigh for noisy01 on $HOST within $((RATE_W - 9)) s" \
	"(active: $(workload_alerts | tr '\n' ';'))"
echo "noisy phase: IolatWorkloadLatencyHigh{instance=\"$HOST\",kind=\"vm\",workload=\"noisy01\"} active" \
	"$(calc "round($fired - $t_n0, 1)") s after noisy01 began; workload p99s:"
workload_p99s
[ -z "$seen_others" ] || fail "noisy phase: IolatWorkloadLatencyHigh also for: $(listed "$seen_others")"
echo "ok: no IolatWorkloadLatencyHigh for any other instance or workload"
vms_resume
vms_at_mark quiet2 60
t_q2=$(now)
sleep 1.5
scrape after

# The fleet p99: the rule evaluated at a time E whose window (E - RATE_W, E]
# starts after the calm phase's I/O stopped and before the noisy phase's
# began, and ends after all of it was scraped: then it holds the noisy
# phase and nothing else, as the before/after scrapes do. (The rule's value
# at E is from an evaluation up to an interval (1 s) before E, which sees
# the samples stored by then: those of scrapes that began up to another
# interval before; hence the margins.)
E=$(calc "max($t_q2 + 3, $t_q1 + $RATE_W + 2)")
[ "$(calc "$E <= $t_n0 + $RATE_W - 1.5")" = True ] ||
	fail "the noisy phase lasted $(calc "round($t_q2 - $t_n0, 1)") s: too long to fit a $RATE_W s window"
while [ "$(calc "$(now) < $E + 2")" = True ]; do sleep 0.2; done
# The p99, and the median and p90 too: those fall between the VMs' reads,
# where what each host adds to the merge shows.
rules=()
for q in 0.5 0.9 0.99; do
	v=$(query "op:iolat_block_device_latency_seconds:quantile5m{quantile=\"$q\",op=\"read\"}" "$E" | awk '{ print $2 }')
	[ -n "$v" ] || fail "no fleet quantile $q from op:iolat_block_device_latency_seconds:quantile5m"
	rules+=("$q=$v")
done
python3 - "$WORK" "${rules[@]}" <<'PY' || fail "the fleet quantiles of the recording rule are not those of the hosts' merged histograms"
import math, re, sys
work = sys.argv[1]
rules = [(float(q), float(v)) for q, v in (a.split("=") for a in sys.argv[2:])]
fam = "iolat_block_device_latency_seconds_bucket"

def buckets(path):
    """Read device-time buckets of every disk, summed by le."""
    got = {}
    for line in open(path):
        m = re.match(r'^([a-zA-Z_:][\w:]*)\{(.*)\} (\S+)', line)
        if not m or m.group(1) != fam:
            continue
        l = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2)))
        if l.get("op") == "read":
            key = (l["device"], float(l["le"]))
            got[key] = got.get(key, 0) + float(m.group(3))
    return got

def increase(host):
    old, new = buckets(f"{work}/before.{host}"), buckets(f"{work}/after.{host}")
    inc = {}
    for (dev, le), c in new.items():
        inc[le] = inc.get(le, 0) + c - old.get((dev, le), 0)
    return inc

def quantile(q, inc):
    """histogram_quantile over classic buckets, as Prometheus 2.42 does it."""
    b = sorted(inc.items())
    if not b or b[-1][0] != math.inf or b[-1][1] <= 0:
        return math.nan
    for i in range(1, len(b)):  # ensureMonotonic
        if b[i][1] < b[i - 1][1]:
            b[i] = (b[i][0], b[i - 1][1])
    rank = q * b[-1][1]
    i = next(i for i, (_, c) in enumerate(b) if c >= rank)
    if i == len(b) - 1:
        return b[-2][0]
    if i == 0 and b[0][0] <= 0:
        return b[0][0]
    start, count = 0.0, b[i][1]
    if i > 0:
        start, count, rank = b[i - 1][0], count - b[i - 1][1], rank - b[i - 1][1]
    return start + (b[i][0] - start) * (rank / count)

hosts = {h: increase(h) for h in ("host", "noisy01", "calm01")}
merged = {}
for inc in hosts.values():
    for le, c in inc.items():
        merged[le] = merged.get(le, 0) + c
for h, inc in hosts.items():
    print("  %-8s %5d reads, p50 %7.2f ms, p90 %7.2f ms, p99 %7.2f ms" % (
        h, inc.get(math.inf, 0), *(quantile(q, inc) * 1e3 for q in (0.5, 0.9, 0.99))))
bounds = sorted(merged)
idx = lambda v: next(i for i, le in enumerate(bounds) if v <= le)
print("fleet, the noisy phase's %d reads (classic bucket index of %d in brackets):"
      % (merged[math.inf], len(bounds)))
ok = True
for q, rule in rules:
    mine = quantile(q, merged)
    good = abs(idx(mine) - idx(rule)) <= 1
    ok &= good
    print("  %sp%g: %.2f ms [%d] merged here from the three /metrics, %.2f ms [%d] from the recording rule"
          % ("" if good else "FAIL: ", q * 100, mine * 1e3, idx(mine), rule * 1e3, idx(rule)))
sys.exit(not ok)
PY
echo "ok: the fleet p99 (and p50, p90) from the recording rule is within one bucket of the merged histograms'"

# Throttled: noisy01 hammers on, held to THROTTLE read IOPS. Its p99 falls
# below the threshold once the noisy reads left the window: the alert
# resolves.
throttle_reads "${VMCG[noisy01]}" "/dev/${DEV[noisy01]}" $THROTTLE
t_th=$(now)
vms_resume
vms_at_mark throttled 60
resolved=
limit=$(calc "$t_th + 2 * $RATE_W + 15")
while [ "$(calc "$(now) < $limit")" = True ]; do
	a=$(workload_alerts)
	if ! grep -qxF "$WANTED" <<<"$a"; then
		resolved=$(now)
		break
	fi
	sleep 1
done
if [ -z "$resolved" ]; then
	echo "workload p99s:"
	workload_p99s
	fail "throttled phase: the alert for noisy01 is still active $(calc "round($limit - $t_th)") s after the throttle"
fi
echo "throttled phase: the alert left Alertmanager $(calc "round($resolved - $t_th, 1)") s after the throttle" \
	"($(calc "round($resolved - $t_q2, 1)") s after the noisy reads ended); workload p99s:"
workload_p99s
# What noisy01 did on the host while throttled, up to then (from 1 s in).
w=$(calc "max(5, int($resolved - $t_th - 1))")
while [ "$(calc "$(now) < $t_th + $w + 1")" = True ]; do sleep 0.2; done
at=$(calc "$t_th + $w + 1")
sel="instance=\"$HOST\",kind=\"vm\",workload=\"noisy01\",op=\"read\""
rate=$(query "sum(rate(iolat_workload_device_latency_seconds_count{$sel}[${w}s]))" "$at" | awk '{ print $2 }')
p99=$(query "histogram_quantile(0.99, sum by (le) (rate(iolat_workload_device_latency_seconds_bucket{$sel}[${w}s])))" "$at" |
	awk '{ print $2 }')
echo "noisy01 throttled, over $w s: $(calc "round(float('${rate:-0}'), 1)") reads/s (limit $THROTTLE/s)," \
	"p99 $(calc "round(float('${p99:-0}') * 1e3, 2)") ms"
[ "$(calc "float('${rate:-0}') >= $THROTTLE / 2")" = True ] ||
	fail "noisy01 was not reading while throttled: ${rate:-no} reads/s"
echo "ok: the alert resolved while noisy01 went on reading at its limit"

vms_resume
vms_at_mark "done" 60
vms_resume
for vm in "${VMS[@]}"; do vm_wait "$vm" "${LOG[$vm]}" 60; done
echo "ok: whole run took $((SECONDS - t0)) s"
