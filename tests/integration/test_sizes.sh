# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Latency by block size: -S splits histograms by request size class, so
# 4 KiB latency is not mixed with 512 KiB latency; counts are exact per class.
source tests/integration/lib.sh

make_loop 64
dev=$LOOP
name=${dev#/dev/}
make_cgroup sizes
cg=$CG
start_iolat "$WORK/out" hist -O -S --json -c "$cg" -d "$name"
in_cgroup "$cg" "$DIO" read "$dev" 50 4096 || fail "dio 4k"
in_cgroup "$cg" "$DIO" read "$dev" 40 16384 || fail "dio 16k"
in_cgroup "$cg" "$DIO" read "$dev" 30 65536 || fail "dio 64k"
in_cgroup "$cg" "$DIO" read "$dev" 20 524288 || fail "dio 512k"
stop_iolat INT
assert_detached
assert_eq "reads per size class" \
	"[('16-64KiB', 30), ('4-16KiB', 40), ('64KiB-1MiB', 20), ('<=4KiB', 50)]" \
	"$(jget "$WORK/out" "sorted((x['size_class'], x['ios']) for x in d['series'] if x['op'] == 'read')")"
assert_eq "512 KiB bytes" $((20 * 524288)) \
	"$(jget "$WORK/out" "[x['bytes'] for x in d['series'] if x.get('size_class') == '64KiB-1MiB'][0]")"
echo "ok: per-size-class histograms with exact counts"

# The exporter: --label.size-class adds a size label to the per-disk
# families, with the same exact counts, and latency histograms per class.
source tests/integration/lib_serve.sh
port=$(free_port)
start_serve "$WORK/serve.log" --web.listen-address="127.0.0.1:$port" --label.size-class
curl -sf "http://127.0.0.1:$port/metrics" >"$WORK/m0" || fail "scrape"
in_cgroup "$cg" "$DIO" read "$dev" 50 4096 || fail "dio 4k"
in_cgroup "$cg" "$DIO" read "$dev" 20 524288 || fail "dio 512k"
curl -sf "http://127.0.0.1:$port/metrics" >"$WORK/m1" || fail "scrape"
delta() { # FAMILY LABELS: its growth between the two scrapes
	local now before
	now=$(metric "$WORK/m1" "$1" "$2")
	before=$(metric "$WORK/m0" "$1" "$2")
	echo $((${now:-0} - ${before:-0}))
}
assert_counted "4 KiB reads" 50 "$(delta iolat_block_completions_total "{device=\"$name\",op=\"read\",size=\"<=4KiB\"}")"
assert_counted "512 KiB reads" 20 "$(delta iolat_block_completions_total "{device=\"$name\",op=\"read\",size=\"64KiB-1MiB\"}")"
assert_counted "512 KiB latency samples" 20 \
	"$(delta iolat_block_device_latency_seconds_count "{device=\"$name\",op=\"read\",size=\"64KiB-1MiB\"}")"
grep -q 'iolat_block_untimed_total{device="'"$name"'",op="read",size="<=4KiB",view="device"}' "$WORK/m1" ||
	fail "untimed series lack the size label"
echo "ok: serve --label.size-class: per-class series with exact counts"
