# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `iolat serve` when a kernel map fills up (small capacities through
# --bpf.map-size and, testing-only, IOLAT_TEST_MAX_ENTRIES, and
# IOLAT_TEST_DISK so only this test's loop device reaches the collector): the
# I/O that did not fit is counted exactly (the kernel's own /sys/block/X/stat
# says how much there was), one warning is logged the first time, however
# often it is scraped, and the daemon keeps serving and stops cleanly.
#  0. A map nearing full: the histogram map holding 10 keys warns once when
#     9 cgroups' reads take 90 % of it, before anything is lost; once 4 of
#     them are gone (retired) it is re-armed, and 4 new ones warn again; a
#     reload that changes its size (bpf_map_sizes) is refused.
#  1. The histogram map (keyed by cgroup) holding 2 keys: the reads of a
#     third cgroup are not counted, and hist_map_full says exactly how many.
#  2. The request map of the fallback (forced) holding 8 entries under fio at
#     queue depth 32: every completion whose times it lost is counted in
#     rq_map_full, and is exactly the one the total view could not time.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh
command -v fio >/dev/null || skip "fio is not installed"

make_loop 64
dev=$LOOP
name=${dev#/dev/}

# Each scrape after a pass (they run every 100ms here): the warnings a pass
# logs and the keys it retires show.
scrape() {
	after_pass "http://127.0.0.1:$port/metrics"
	curl -sf "http://127.0.0.1:$port/metrics" >"$1" || fail "scrape $1 failed"
}
# sample FILE NAME LABELS: one sample's value, 0 when absent.
sample() { local v; v=$(metric "$1" "$2" "$3"); echo "${v:-0}"; }
event() { sample "$1" iolat_collector_events_total "{event=\"$2\"}"; }
# Reads and writes the kernel completed on the test's disk.
kernel_reads() { awk '{ print $1 }' "/sys/block/$name/stat"; }
# warned LOG MAP: how many times the full-map warning for MAP was logged.
warned() { grep -c "level=warn msg=\"BPF map full\" map=$2 " "$1"; }
# filling LOG MAP: how many times the 90 % warning for MAP was logged.
filling() { grep -c "level=warn msg=\"BPF map filling up\" map=$2 " "$1"; }

# 0. The 90 % warning. Ten keys; each cgroup's reads take one (disk, read,
# cgroup). Reads only, as below.
fill_cgroups=()
for i in $(seq 1 13); do
	make_cgroup "fill$i"
	fill_cgroups+=("$CG")
done
port=$(free_port)
# The size from the settings file this time (part 1 gives it as a flag).
echo 'bpf_map_sizes: {hists: 10}' >"$WORK/fill.yml"
IOLAT_TEST_DISK=$name start_serve "$WORK/fill.log" "${WL_FULL[@]}" --web.listen-address="127.0.0.1:$port" \
	--config.file="$WORK/fill.yml" --maintenance.interval=100ms
grep -q 'msg="started" .* map_hists_shared=10 .* maps_set=hists_shared ' "$WORK/fill.log" || fail "sizes not logged: $(cat "$WORK/fill.log")"
scrape "$WORK/f0"
assert_eq "capacity set by --bpf.map-size" 10 "$(sample "$WORK/f0" iolat_bpf_map_capacity_entries '{map="hists_shared"}')"
for i in $(seq 0 7); do
	in_cgroup "${fill_cgroups[i]}" "$DIO" read "$dev" 2 4096 || fail "dio fill$i"
done
scrape "$WORK/f1"
assert_eq "8 of 10 keys: no warning yet" 0 "$(filling "$WORK/fill.log" hists_shared)"
assert_eq "fill ratio at 8" 0.8 "$(sample "$WORK/f1" iolat_bpf_map_fill_ratio '{map="hists_shared"}')"
in_cgroup "${fill_cgroups[8]}" "$DIO" read "$dev" 2 4096 || fail "dio fill8"
for i in 2 3 4; do scrape "$WORK/f$i"; done
assert_eq "fill ratio at 9" 0.9 "$(sample "$WORK/f4" iolat_bpf_map_fill_ratio '{map="hists_shared"}')"
assert_eq "90 % warnings, over 3 scrapes" 1 "$(filling "$WORK/fill.log" hists_shared)"
grep -q 'level=warn msg="BPF map filling up" map=hists_shared percent=90 entries=9 capacity=10 effect="I/O of a disk, operation or workload not in it yet will not be counted" hint="give it more with --bpf.map-size=hists=ENTRIES or bpf_map_sizes in the config file"$' \
	"$WORK/fill.log" || fail "90 % warning text: $(grep 'full' "$WORK/fill.log")"
assert_eq "nothing lost before full" 0 $(($(event "$WORK/f4" hist_map_full) - $(event "$WORK/f0" hist_map_full)))
assert_eq "no full-map warning" 0 "$(warned "$WORK/fill.log" hists_shared)"
# Four cgroups go: idle and gone, their keys are retired (two passes).
for i in 0 1 2 3; do rmdir "${fill_cgroups[i]}" || fail "rmdir fill$i"; done
for i in 5 6 7; do scrape "$WORK/f$i"; done
assert_eq "keys after 4 cgroups went" 5 "$(sample "$WORK/f7" iolat_bpf_map_entries '{map="hists_shared"}')"
for i in 9 10 11 12; do
	in_cgroup "${fill_cgroups[i]}" "$DIO" read "$dev" 2 4096 || fail "dio fill$i"
done
scrape "$WORK/f8"
scrape "$WORK/f9"
assert_eq "keys again" 9 "$(sample "$WORK/f9" iolat_bpf_map_entries '{map="hists_shared"}')"
assert_eq "90 % warnings after it emptied and filled again" 2 "$(filling "$WORK/fill.log" hists_shared)"
assert_eq "other maps' warnings" 2 "$(grep -c 'msg="BPF map filling up"' "$WORK/fill.log")"
# A reload cannot resize a map: refused, and the map keeps its size.
echo 'bpf_map_sizes: {hists: 20}' >"$WORK/fill.yml"
kill -HUP "$SERVE_PID"
wait_for_line "$WORK/fill.log" 'reload failed, keeping the running configuration" err="changing bpf_map_sizes needs a restart' ||
	fail "the resizing reload was not refused: $(tail -3 "$WORK/fill.log")"
scrape "$WORK/f10"
assert_eq "capacity after the refused reload" 10 "$(sample "$WORK/f10" iolat_bpf_map_capacity_entries '{map="hists_shared"}')"
stop_serve "filling map"
echo "ok: the histogram map warned at 90 % before it lost anything, and again after it emptied"

# 1. Histogram map. Cgroups a and c take the two keys (their reads); b's
# reads find the map full. Reads only: a write would make udev read the
# device when it is closed, from a cgroup of its own.
make_cgroup mapa
cga=$CG
make_cgroup mapb
cgb=$CG
make_cgroup mapc
cgc=$CG
port=$(free_port)
IOLAT_TEST_DISK=$name start_serve "$WORK/hist.log" "${WL_FULL[@]}" --web.listen-address="127.0.0.1:$port" \
	--bpf.map-size=hists_shared=2 --maintenance.interval=100ms
scrape "$WORK/h0"
k0=$(kernel_reads)
assert_eq "histogram map capacity" 2 "$(sample "$WORK/h0" iolat_bpf_map_capacity_entries '{map="hists_shared"}')"
in_cgroup "$cga" "$DIO" read "$dev" 7 4096 || fail "dio a"
in_cgroup "$cgc" "$DIO" read "$dev" 5 4096 || fail "dio c"
in_cgroup "$cgb" "$DIO" read "$dev" 11 4096 || fail "dio b"
scrape "$WORK/h1"
k1=$(kernel_reads)
counted=$(($(sample "$WORK/h1" iolat_block_completions_total "{device=\"$name\",op=\"read\"}") -
	$(sample "$WORK/h0" iolat_block_completions_total "{device=\"$name\",op=\"read\"}")))
full=$(($(event "$WORK/h1" hist_map_full) - $(event "$WORK/h0" hist_map_full)))
echo "histogram map: kernel $((k1 - k0)) reads, iolat counted $counted, hist_map_full $full"
assert_eq "reads that did not fit (hist_map_full)" 11 "$full"
assert_eq "reads counted" 12 "$counted"
assert_eq "kernel reads = counted + did not fit" $((k1 - k0)) $((counted + full))
assert_eq "entries" 2 "$(sample "$WORK/h1" iolat_bpf_map_entries '{map="hists_shared"}')"
wl() { sample "$WORK/h1" iolat_workload_completions_total "{device=\"$name\",op=\"read\",kind=\"cgroup\",workload=\"${1#"$(cgroup_root)"}\"}"; }
assert_eq "cgroup a" 7 "$(wl "$cga")"
assert_eq "cgroup c" 5 "$(wl "$cgc")"
assert_eq "cgroup b (did not fit)" 0 "$(wl "$cgb")"
# More of it, and more scrapes: one warning in all, and still serving.
in_cgroup "$cgb" "$DIO" read "$dev" 3 4096 || fail "dio b again"
for i in 2 3 4; do scrape "$WORK/h$i"; done
assert_eq "hist_map_full after 3 more" 14 $(($(event "$WORK/h4" hist_map_full) - $(event "$WORK/h0" hist_map_full)))
assert_eq "warnings for hists_shared" 1 "$(warned "$WORK/hist.log" hists_shared)"
grep -q 'level=warn msg="BPF map full" map=hists_shared entries=2 effect="I/O of a disk, operation or workload not in it yet is not counted" counter=iolat_collector_events_total event=hist_map_full$' \
	"$WORK/hist.log" || fail "warning text: $(grep 'BPF map full' "$WORK/hist.log")"
assert_eq "health" 200 "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/-/healthy")"
stop_serve "histogram map"
echo "ok: histogram map full: 14 reads not counted, counted as such, one warning"

# 2. Request map, on both attach paths (tp_btf reads the request directly,
# raw_tp through probe reads). The first read attaches the fallback; one more
# after it makes the issue program run once (it marks from when an entry is
# owed), then everything measured was issued after.
rq_map_full() {
	local mode=$1 log=$WORK/rq-$1.log r=$WORK/rq-$1
	port=$(free_port)
	IOLAT_FORCE_ATTACH=$mode IOLAT_FORCE_RQ_MAP=1 IOLAT_TEST_DISK=$name \
		IOLAT_TEST_MAX_ENTRIES=rq_starts=8 \
		start_serve "$log" --web.listen-address="127.0.0.1:$port" --no-collector.workloads \
			--maintenance.interval=100ms
	"$DIO" read "$dev" 1 4096 || fail "warm-up read"
	for _ in $(seq 1 30); do
		grep -q "attached the request-map fallback" "$log" && break
		sleep 0.1
	done
	grep -q "attached the request-map fallback" "$log" || fail "$mode: the fallback never attached"
	"$DIO" read "$dev" 1 4096 || fail "second warm-up read"
	sleep 0.1
	scrape "$r.0"
	k0=$(kernel_reads)
	fio --name=fill --filename="$dev" --rw=randread --bs=4k --ioengine=io_uring --iodepth=32 \
		--direct=1 --io_size=40M --output="$WORK/fio.out" || fail "fio"
	for i in 1 2 3; do scrape "$r.$i"; done
	k1=$(kernel_reads)
	d() { echo $(($(sample "$r.3" "$@") - $(sample "$r.0" "$@"))); }
	ios=$(d iolat_block_completions_total "{device=\"$name\",op=\"read\"}")
	lost=$(($(event "$r.3" rq_map_full) - $(event "$r.0" rq_map_full)))
	miss=$(($(event "$r.3" rq_map_miss) - $(event "$r.0" rq_map_miss)))
	untimed_total=$(d iolat_block_untimed_total "{device=\"$name\",op=\"read\",view=\"total\"}")
	untimed_device=$(d iolat_block_untimed_total "{device=\"$name\",op=\"read\",view=\"device\"}")
	echo "request map ($mode): kernel $((k1 - k0)) reads, iolat $ios, rq_map_full $lost," \
		"untimed total $untimed_total, device $untimed_device, rq_map_miss $miss"
	assert_counted "$mode: reads counted" $((k1 - k0)) "$ios"
	[ "$lost" -ge 100 ] || fail "$mode: rq_map_full $lost: an 8-entry map at depth 32 should lose hundreds"
	assert_eq "$mode: untimed in the total view = lost by the map" "$lost" "$untimed_total"
	[ "$untimed_device" -le "$lost" ] || fail "$mode: untimed in the device view $untimed_device > lost $lost"
	[ "$untimed_device" -gt 0 ] || fail "$mode: no request lost its whole entry"
	assert_eq "$mode: misses of requests under way before the fallback" 0 "$miss"
	assert_eq "$mode: warnings for rq_starts" 1 "$(warned "$log" rq_starts)"
	assert_eq "$mode: no other full map" 1 "$(grep -c 'msg="BPF map full"' "$log")"
	"$DIO" read "$dev" 10 4096 || fail "dio after"
	scrape "$r.4"
	assert_counted "$mode: still counting" $((k1 - k0 + 10)) \
		"$(($(sample "$r.4" iolat_block_completions_total "{device=\"$name\",op=\"read\"}") -
			$(sample "$r.0" iolat_block_completions_total "{device=\"$name\",op=\"read\"}")))"
	stop_serve "$mode request map"
	echo "ok: $mode: request map full: $lost of $ios completions lost their times, each counted, one warning"
}
rq_map_full tp_btf
rq_map_full raw_tp
