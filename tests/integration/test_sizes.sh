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
