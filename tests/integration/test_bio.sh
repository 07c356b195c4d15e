# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Bio-based disks make no request events; iolat times them from
# block_bio_queue to block_bio_complete and labels them so. zram is the
# bio-based disk this kernel has; the test uses it only if it is unused.
source tests/integration/lib.sh

z=/sys/block/zram0
[ -d $z ] || skip "no zram0"
[ "$(cat $z/disksize)" = 0 ] || skip "zram0 is in use"

# An empty zram0 can do no I/O, so iolat leaves the bio-layer programs off
# (they would fire for every bio of every disk); sizing it makes iolat
# attach them on its own.
N=200
start_iolat "$WORK/out" hist -D -O --json -d zram0
echo 64M >$z/disksize || skip "cannot size zram0"
on_exit "echo 1 > $z/reset"
wait_for_stderr "$WORK/out" "attached the bio-layer programs" ||
	fail "no bio-layer attach after zram0 got a size"
"$DIO" write /dev/zram0 $N 4096 || fail "dio write"
"$DIO" read /dev/zram0 $N 4096 || fail "dio read"
stop_iolat INT
assert_detached
assert_eq "layer" bio "$(jget "$WORK/out" "s('zram0','read')['layer']")"
assert_eq "reads" $N "$(jget "$WORK/out" "s('zram0','read')['ios']")"
assert_eq "writes" $N "$(jget "$WORK/out" "s('zram0','write')['ios']")"
assert_eq "read bytes" $((N * 4096)) "$(jget "$WORK/out" "s('zram0','read')['bytes']")"
assert_eq "timed" $N "$(jget "$WORK/out" "s('zram0','read')['device']['count']")"
assert_eq "size slots" "[(4096, $N)]" \
	"$(jget "$WORK/out" "[(x['hi'], x['count']) for x in s('zram0','read')['size_slots']]")"
echo "ok: zram0 timed at the bio layer, attached on demand"

# Sized before start: attached at once.
start_iolat "$WORK/again" hist -D -O --json -d zram0
"$DIO" read /dev/zram0 17 8192 || fail "dio read"
stop_iolat TERM
assert_detached
assert_eq "bio layer at start" True "$(jget "$WORK/again" 'd["collector"]["bio_layer"]')"
assert_eq "reads" 17 "$(jget "$WORK/again" "s('zram0','read')['ios']")"
echo "ok: zram0 timed from the start"

# iolat trace on a disk without requests: one record per bio, with Q and C
# only (no request stages exist), labelled bio_based.
start_iolat "$WORK/trace.json" trace -j -d zram0
"$DIO" read /dev/zram0 23 8192 || fail "dio read"
stop_iolat INT
assert_detached
python3 - "$WORK/trace.json" <<'PY' || fail "trace on zram0: records are not Q..C bio records"
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
for r in rs:
    ts = r["ts_ns"]
    assert r["bio_based"] and not r["bio_completion"], r
    assert [s for s in "qgmidrc" if ts[s]] == ["q", "c"], r
    assert r["lat_ns"]["q2c"] == ts["c"] - ts["q"], r
PY
assert_eq "trace: reads" 23 "$(python3 -c '
import json, sys
print(sum(1 for l in open(sys.argv[1]) for r in [json.loads(l)] if r["rwbs"] == "RS" and r["bytes"] == 8192))' "$WORK/trace.json")"
echo "ok: trace on zram0: bio records"
