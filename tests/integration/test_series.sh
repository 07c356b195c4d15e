# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The series iolat serve adds to a metrics store (issue 30's budget):
#   1. by default a workload is one latency histogram (the 8 bounds of the
#      short per-workload set) and one byte counter, summed per host: no
#      device or op label, and their counts are exact (the known direct
#      reads and writes each workload did);
#   2. iolat_series{family,mode} adds up to the answer: classic to its
#      sample lines, native to them with each histogram taken as one;
#   3. `iolat check --series` projects the same numbers per family for the
#      same host (one disk read and written, the workloads seen), and serve's
#      own families within a few series;
#   4. a reload to workloads.labels [device, op], metrics [completions,
#      device_time] and two workload bounds brings each back, exact;
#   5. bad lists and bounds get one clear message (flags: exit 2; a reload:
#      logged, nothing changed, still serving).
source tests/integration/lib.sh
source tests/integration/lib_serve.sh

make_loop 64
dev=$LOOP
disk=${dev#/dev/}
workload_base series
base=$BASE
port=$(free_port)
url=http://127.0.0.1:$port/metrics
echo "workloads: {}" >"$WORK/iolat.yml"
# Only this disk (testing only): other tests' disks do not add series.
IOLAT_TEST_DISK=$disk start_serve "$WORK/serve.log" --web.listen-address="127.0.0.1:$port" \
	--config.file="$WORK/iolat.yml" --maintenance.interval=100ms
scrape() { after_pass "$url"; curl -sf "$url" >"$WORK/m" || fail "scrape failed"; }
value() { metric "$WORK/m" "$1" "${2:-}"; }

# Workload svcN does 3N reads and N writes of 4 KiB.
W=4
for i in $(seq 1 $W); do
	mkdir "$base/svc$i.service"
	in_cgroup "$base/svc$i.service" "$DIO" read "$dev" $((3 * i)) 4096 || fail "dio read"
	in_cgroup "$base/svc$i.service" "$DIO" write "$dev" "$i" 4096 || fail "dio write"
done
sleep 1.1 # a cgroup younger than the last walk of the hierarchy waits one
scrape
scrape

# 1. Per host, two families, exact.
for i in $(seq 1 $W); do
	sel="{kind=\"service\",workload=\"svc$i\"}"
	assert_eq "svc$i: completions (histogram count)" $((4 * i)) \
		"$(value iolat_workload_device_latency_seconds_count "$sel")"
	assert_eq "svc$i: bytes" $((4 * i * 4096)) "$(value iolat_workload_bytes_total "$sel")"
done
grep -E '^iolat_workload_[a-z_]+\{[^}]*(device|op)=' "$WORK/m" &&
	fail "a workload series by disk or op under the defaults"
families=$(grep -oE '^iolat_workload_[a-z_]+\{kind=' "$WORK/m" | sed -E 's/(_bucket|_sum|_count)?\{kind=//' | sort -u | tr '\n' ' ')
assert_eq "workload families" "iolat_workload_bytes_total iolat_workload_device_latency_seconds " "$families"
les=$(grep -oE '^iolat_workload_device_latency_seconds_bucket\{kind="service",workload="svc1",le="[^"]+"' "$WORK/m" |
	sed -E 's/.*le="([^"]+)"/\1/' | tr '\n' ' ')
assert_eq "workload bounds" "0.0001 0.00025 0.0005 0.001 0.0025 0.01 0.05 0.25 +Inf " "$les"
echo "ok: defaults: $W workloads, each one histogram of 8 bounds and one byte counter, exact"

# 2. iolat_series against the answer itself.
python3 - "$WORK/m" <<'PY' || fail "iolat_series does not add up to the answer"
import re, sys
lines = [l for l in open(sys.argv[1]) if l.strip() and not l.startswith("#")]
types = dict(re.findall(r"^# TYPE (\S+) (\S+)", open(sys.argv[1]).read(), re.M))
classic, native, per = 0, 0, {}
for l in lines:
    name = l.split("{")[0].split(" ")[0]
    if name == "iolat_series":
        fam, mode = re.search(r'family="([^"]+)",mode="([^"]+)"', l).groups()
        per[(fam, mode)] = float(l.split()[-1])
        continue
base = {}
for l in lines:
    name = l.split("{")[0].split(" ")[0]
    fam = re.sub(r"_(bucket|sum|count)$", "", name) if types.get(re.sub(r"_(bucket|sum|count)$", "", name)) == "histogram" else name
    c = base.setdefault(fam, [0, 0])
    c[0] += 1
    c[1] += name.endswith("_count") and fam != name or types.get(fam) != "histogram"
bad = [(f, c, per.get((f, "classic")), per.get((f, "native"))) for f, c in base.items()
       if per.get((f, "classic")) != c[0] or per.get((f, "native")) != c[1]]
if bad or len(per) != 2 * len(base):
    print("mismatch:", bad[:5], len(per), 2 * len(base)); sys.exit(1)
print(f"ok: iolat_series: {len(base)} families, {len(lines)} lines = classic "
      f"{sum(v for (f, m), v in per.items() if m == 'classic'):.0f}, native "
      f"{sum(v for (f, m), v in per.items() if m == 'native'):.0f}")
PY

# 3. check --series for this host: the disk-op pairs the answer has (this
# machine's other disks too), each as a disk of one op; the workloads it
# has (the root cgroup's and unattributed I/O too).
pairs=$(grep -c '^iolat_block_completions_total{' "$WORK/m")
nwl=$(grep -c '^iolat_workload_bytes_total{' "$WORK/m")
"$IOLAT" check --series --disks "$pairs" --ops 1 --workloads "$nwl" >"$WORK/proj" ||
	fail "check --series: $(cat "$WORK/proj")"
series() { metric "$WORK/m" iolat_series "{family=\"$1\",mode=\"$2\"}"; }
proj() { awk -v f="$1" -v c="$2" '$1 == f { print $c }' "$WORK/proj"; }
while read -r fam; do
	assert_eq "$fam: classic, projected" "$(series "$fam" classic)" "$(proj "$fam" 3)"
	assert_eq "$fam: native, projected" "$(series "$fam" native)" "$(proj "$fam" 4)"
done < <(awk '$1 ~ /^iolat_(block_(device_latency|total_latency|request_size|completions|bytes|errors|untimed)|workload_)/ { print $1 }' "$WORK/proj")
self=$(grep -E '^iolat_series\{family="[a-z_]+",mode="classic"\}' "$WORK/m" |
	grep -vE 'family="iolat_(block|series)|family="iolat_workload_(device_latency_seconds|bytes_total)"' |
	awk '{ s += $2 } END { print s }')
pself=$(awk '/^  serve.s own families/ { print $(NF - 1) }' "$WORK/proj")
if [ $((self - pself)) -gt 12 ] || [ $((pself - self)) -gt 12 ]; then
	fail "serve's own families: $self series, projected $pself"
fi
echo "ok: check --series matches the answer per family ($nwl workloads; serve's own $self, projected $pself)"

# 4. Reload to every label, two families, two bounds.
cat >"$WORK/iolat.yml" <<'YML'
workloads:
  labels: [device, op]
  metrics: [completions, device_time]
buckets:
  workload_latency_seconds: [0.001, 0.01]
YML
kill -HUP "$SERVE_PID"
wait_for_line "$WORK/serve.log" 'configuration reloaded' || fail "no reload: $(tail -3 "$WORK/serve.log")"
scrape
for i in $(seq 1 $W); do
	for op in read:$((3 * i)) write:$i; do
		assert_eq "svc$i ${op%%:*}s after the reload" "${op#*:}" \
			"$(value iolat_workload_completions_total "{device=\"$disk\",op=\"${op%%:*}\",kind=\"service\",workload=\"svc$i\"}")"
	done
done
grep -q '^iolat_workload_bytes_total' "$WORK/m" && fail "bytes still exported after the reload"
les=$(grep -oE "^iolat_workload_device_latency_seconds_bucket\{device=\"$disk\",op=\"read\",kind=\"service\",workload=\"svc1\",le=\"[^\"]+\"" "$WORK/m" |
	sed -E 's/.*le="([^"]+)"/\1/' | tr '\n' ' ')
assert_eq "workload bounds after the reload" "0.001 0.01 +Inf " "$les"
echo "ok: reload: workloads by disk and op, completions and two bounds, exact"

# 5. Bad input.
expect_serve_error() {
	local rc=0
	"$IOLAT" serve --web.listen-address="127.0.0.1:$(free_port)" "$@" >/dev/null 2>"$WORK/err" || rc=$?
	assert_eq "serve $*: exit" 2 "$rc"
	assert_eq "serve $*: one line" 1 "$(wc -l <"$WORK/err")"
}
expect_serve_error --workloads.labels=disk
grep -q "unknown name 'disk'.*device,op" "$WORK/err" || fail "labels message: $(cat "$WORK/err")"
expect_serve_error --workloads.metrics=
grep -q "device_time" "$WORK/err" || fail "metrics message: $(cat "$WORK/err")"
rc=0
"$IOLAT" check --ops 2 >/dev/null 2>"$WORK/err" || rc=$?
assert_eq "check --ops without --series: exit" 2 "$rc"
grep -q "add --series" "$WORK/err" || fail "check message: $(cat "$WORK/err")"
# A reload to a bound the running collector has no slot at, and to an
# unknown family: refused, the last settings kept.
for bad in 'buckets: {workload_latency_seconds: [0.003]}' 'workloads: {metrics: [latency]}' 'workloads: {metrics: []}'; do
	echo "$bad" >"$WORK/iolat.yml"
	n=$(grep -c 'reload failed' "$WORK/serve.log" || true)
	kill -HUP "$SERVE_PID"
	for _ in $(seq 1 100); do
		[ "$(grep -c 'reload failed' "$WORK/serve.log")" -gt "$n" ] && break
		sleep 0.1
	done
	scrape
	assert_eq "after '$bad': last reload failed" 0 "$(value iolat_config_last_reload_successful)"
	assert_eq "after '$bad': svc1 reads still by op" 3 \
		"$(value iolat_workload_completions_total "{device=\"$disk\",op=\"read\",kind=\"service\",workload=\"svc1\"}")"
done
grep 'reload failed' "$WORK/serve.log" | tail -2 | sed 's/^/  /'
echo "ok: bad lists and bounds refused with one message; a bad reload keeps the last settings"
stop_serve "serve"
