# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# iolat trace --syscalls: block I/O linked to the synchronous syscall it was
# queued in. Direct preads on a 5 ms device: every record linked to its
# pread64, one syscall record per pread, at least as slow as its I/O; on
# both attach paths. Buffered writes to a raw block device flushed by `sync`
# (another process) are linked through the page cache to the writes that
# dirtied them, not to a syscall of their own; those flushed by fsync are
# linked to fsync as well. Without the flag, no syscall program is loaded.
source tests/integration/lib.sh

# prog_names IDS: the names of the given program ids (a list, one a line).
prog_names() {
	local id ids
	mapfile -t ids <<<"$1"
	for id in "${ids[@]}"; do
		bpftool prog show id "$id" 2>/dev/null | sed -nE 's/^[0-9]+: .*name ([a-z_]+) .*/\1/p'
	done
}

make_cgroup trace-sys
cg=$CG

# 1. Direct preads of a device that takes 5 ms per read.
N=20
make_slow_loop 5000
slow=$LOOP
sname=${slow#/dev/}
for mode in tp_btf raw_tp; do
	out=$WORK/pread.$mode.json
	IOLAT_FORCE_ATTACH=$mode start_iolat "$out" trace --syscalls -j -d "$sname" -c "$cg"
	names=$(prog_names "$OUR_PROGS" | tr '\n' ' ')
	sfx=${mode%_tp}; sfx=${sfx#tp_}
	[[ "$names" == *"trace_se_$sfx"* && "$names" == *"trace_sx_$sfx"* ]] ||
		fail "$mode: sys_enter/sys_exit programs not loaded ($names)"
	in_cgroup "$cg" "$DIO" read "$slow" $N 4096 || fail "dio read"
	stop_iolat INT
	assert_detached
	python3 - "$out" $N >"$WORK/check" <<'PY' || fail "$mode: preads not linked as expected: $(cat "$WORK/check")"
import json, sys
ios, calls = [], {}
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["type"] == "io":
        ios.append(r)
    else:
        calls[(r["tid"], r["enter_ns"])] = r
n = int(sys.argv[2])
assert len(calls) == n, ("syscall records", len(calls), n)
reads = [r for r in ios if r["rwbs"].startswith("R")]
# A completion BPF did not see (README, "Known error bounds and misses")
# leaves its pread without an I/O record: allowed as assert_counted allows
# (the shell prints the WARNING), never more records than reads.
missed = n - len(reads)
assert 0 <= missed <= 3, ("read records", len(reads), n)
print("missed", missed)
pids = {r["pid"] for r in reads}
assert len(pids) == 1, pids
for r in reads:
    assert r["syscall"] == "pread64" and r["comm"] == "dio" and r["tid"] == r["pid"], r
    s = calls[(r["tid"], r["syscall_enter_ns"])]
    assert s["syscall"] == "pread64" and s["pid"] == r["pid"] and s["tid"] == r["tid"], s
    assert s["ret"] == 4096 and s["ios"] == 1 and s["ios_shown"] == 1, s
    assert s["enter_ns"] <= r["ts_ns"]["q"] and r["ts_ns"]["c"] <= s["exit_ns"], (r, s)
    assert s["lat_ns"] >= r["lat_ns"]["q2c"] and s["lat_ns"] >= 5e6, (r, s)
    assert s["q2c_sum_ns"] == r["lat_ns"]["q2c"] and s["d2c_sum_ns"] == r["lat_ns"]["d2c"], s
lat = sorted(s["lat_ns"] for s in calls.values())
print("pread: %d reads linked, syscall latency median %.3f ms" % (n - missed, lat[n // 2] / 1e6))
PY
	sed '/^missed /d' "$WORK/check"
	assert_counted "$mode: pread records (trace: $(grep -h 'records emitted' "$out.err"))" $N \
		$((N - $(sed -n 's/^missed //p' "$WORK/check")))
	echo "ok: $mode: every pread64 linked"
done

# Direct pwrites: linked to pwrite64.
out=$WORK/pwrite.json
start_iolat "$out" trace --syscalls -j -o write -d "$sname" -c "$cg"
in_cgroup "$cg" "$DIO" write "$slow" 10 4096 || fail "dio write"
stop_iolat INT
assert_detached
python3 - "$out" <<'PY' || fail "pwrites not linked to pwrite64"
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
ios = [r for r in rs if r["type"] == "io"]
calls = [r for r in rs if r["type"] == "syscall"]
assert len(ios) == 10 and all(r["syscall"] == "pwrite64" for r in ios), ios
assert len(calls) == 10 and all(s["syscall"] == "pwrite64" and s["ret"] == 4096 for s in calls), calls
PY
echo "ok: every pwrite64 linked"

# Text: a SYSCALL column, and a line per syscall after its I/O.
out=$WORK/pread.txt
start_iolat "$out" trace --syscalls -d "$sname" -c "$cg"
in_cgroup "$cg" "$DIO" read "$slow" 5 4096 || fail "dio read"
stop_iolat INT
assert_detached
head -1 "$out" | grep -qE ' Q2M SYSCALL$' || fail "text header: $(head -1 "$out")"
assert_eq "text: linked I/O lines" 5 "$(awk '$2 == "dio" && $NF == "pread64"' "$out" | wc -l)"
assert_eq "text: syscall lines" 5 "$(grep -cE '^  pread64 by dio\[[0-9]+/[0-9]+\] returned 4096: [0-9.]+ ms in the syscall, [0-9.]+ ms of it in 1 block I/O \(D2C [0-9.]+ ms\)$' "$out")"
grep -q "iolat: 5 syscall records" "$out.err" || fail "text: no syscall count in the summary"
# Each syscall line follows its I/O's line.
awk '/^  pread64/ { if (prev !~ /pread64$/) exit 1 } { prev = $0 }' "$out" ||
	fail "text: a syscall line not right after its I/O"
echo "ok: text output"

# 2. Buffered writes to the raw device (no O_DIRECT): flushed by sync from
# another process, linked to dd's writes through the page cache only;
# flushed inside fsync, linked to fsync too.
make_loop 64
dev=$LOOP
name=${dev#/dev/}
out=$WORK/sync.json
start_iolat "$out" trace --syscalls -j -o write -d "$name"
# Held open, so that dd's close is not the device's last, which would flush
# it (in close, unlisted) before sync could.
exec 3<"$dev"
dd if=/dev/zero of="$dev" bs=4k count=64 status=none || fail "dd"
sync || fail "sync"
exec 3<&-
stop_iolat INT
assert_detached
python3 - "$out" <<'PY' || fail "writes flushed by sync not linked to dd's writes alone"
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
ios = [r for r in rs if r["type"] == "io"]
calls = {(r["tid"], r["enter_ns"]): r for r in rs if r["type"] == "syscall"}
links = [r for r in rs if r["type"] == "page_cache"]
assert ios, "no write records"
assert all(r["syscall"] is None for r in ios), [r for r in ios if r["syscall"]]
assert not [r for r in ios if r["comm"] == "dd"], "writes issued by dd"
assert len(calls) == 64 and all(s["comm"] == "dd" and s["syscall"] == "write" and s["folios"] == 1
                                for s in calls.values()), "dd's 64 writes, a folio each"
assert all((l["tid"], l["syscall_enter_ns"]) in calls for l in links), "a link to no write"
assert sum(l["bytes"] for l in links) == 64 * 4096 == sum(r["pc_bytes"] for r in ios)
print("sync: %d write records issued by %s, carrying dd's 64 writes (%d links)" %
      (len(ios), sorted({r["comm"] for r in ios}), len(links)))
PY
echo "ok: writeback of sync linked to the writes through the page cache, to no syscall of its own"

out=$WORK/fsync.json
start_iolat "$out" trace --syscalls -j -o write -d "$name"
dd if=/dev/zero of="$dev" bs=4k count=64 conv=fsync status=none || fail "dd conv=fsync"
stop_iolat INT
assert_detached
python3 - "$out" <<'PY' || fail "writes flushed by fsync are not linked to it"
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
ios = [r for r in rs if r["type"] == "io"]
calls = [r for r in rs if r["type"] == "syscall" and r["syscall"] == "fsync"]
writes = [r for r in rs if r["type"] == "syscall" and r["syscall"] == "write"]
assert ios, "no write records"
assert len(calls) == 1 and calls[0]["comm"] == "dd", calls
assert len(writes) == 64 and sum(r["pc_bytes"] for r in ios) == 64 * 4096, "page-cache links"
s = calls[0]
for r in ios:
    assert r["syscall"] == "fsync" and r["syscall_enter_ns"] == s["enter_ns"], r
    assert r["pid"] == s["pid"] and r["tid"] == s["tid"], (r, s)
    assert s["enter_ns"] <= r["ts_ns"]["q"], (r, s)
    end = r["ts_ns"]["c"] or r["ts_ns"]["m"]
    assert end <= s["exit_ns"], (r, s)
assert s["ios"] == len(ios) == s["ios_shown"], (s, len(ios))
assert sum(r["bytes"] for r in ios) >= 64 * 4096
print("fsync: %d write records (%d merged) linked to one fsync of %.3f ms" %
      (len(ios), sum(r["merged"] for r in ios), s["lat_ns"] / 1e6))
PY
echo "ok: writeback in fsync linked to fsync"

# 3. Off by default: no syscall program loaded, so the default cost is
# unchanged.
out=$WORK/off.json
start_iolat "$out" trace -j -d "$name"
names=$(prog_names "$OUR_PROGS" | tr '\n' ' ')
[[ "$names" == *trace_q_* ]] || fail "default: program names not found ($names)"
[[ "$names" != *trace_se_* && "$names" != *trace_sx_* ]] ||
	fail "default: syscall programs loaded ($names)"
bpftool prog show | grep -qE 'name trace_s[ex]_' && fail "default: a syscall program is loaded"
"$DIO" read "$dev" 5 4096 || fail "dio read"
stop_iolat INT
assert_detached
[ -s "$out" ] || fail "default: no records"
! grep -q '"syscall' "$out" || fail "default: records carry syscall fields"
echo "ok: off by default: no syscall program, no syscall fields"

# 4. blk-throttle against a slow device: both make preads slow, in
# different places. The throttle holds a bio back before block_bio_queue,
# and its dispatcher (a kworker) queues it later: such a record has the
# kworker as its task, no syscall, a short Q2C, and a wait before its Q. The slow device's delay is in D2C,
# inside the pread (part 1).
make_cgroup trace-throttle
tcg=$CG
throttle_reads "$tcg" "$dev" 50
out=$WORK/throttle.json
start_iolat "$out" trace --syscalls -j -o read -d "$name" -c "$tcg"
in_cgroup "$tcg" "$DIO" read "$dev" 20 4096 || fail "dio read (throttled)"
stop_iolat INT
assert_detached
python3 - "$out" "$WORK/pread.tp_btf.json" <<'PY' || fail "throttle and slow device not told apart"
import json, sys
ios = [r for l in open(sys.argv[1]) for r in [json.loads(l)] if r["type"] == "io"]
assert len(ios) == 20, len(ios)
held = [r for r in ios if r["comm"].startswith("kworker")]
# blk-throttle lets a slice's budget through at once and holds the rest.
assert len(held) >= 2, ("queued by the throttle's dispatcher", len(held))
assert all(r["syscall"] is None for r in held), held
assert all(r["syscall"] == "pread64" for r in ios if r not in held), ios
# dio reads one at a time: a held read's wait is between the previous
# read's completion and its own Q, not inside Q..C.
ios.sort(key=lambda r: r["ts_ns"]["q"])
waits = [b["ts_ns"]["q"] - a["ts_ns"]["c"] for a, b in zip(ios, ios[1:]) if b in held]
q2c = sorted(r["lat_ns"]["q2c"] for r in held)
assert min(waits) >= 15e6 and q2c[len(q2c) // 2] < 2e6, (waits, q2c)
slow = [r for l in open(sys.argv[2]) for r in [json.loads(l)] if r["type"] == "io"]
assert all(r["comm"] == "dio" and r["syscall"] == "pread64" for r in slow), slow
d2c = sorted(r["lat_ns"]["d2c"] for r in slow)
s2q = sorted(r["lat_ns"]["s2q"] for r in slow)
assert d2c[len(d2c) // 2] >= 5e6 and s2q[len(s2q) // 2] < 1e6, (d2c, s2q)
print("throttled: %d of 20 held and queued by the dispatcher after %.1f ms or more, Q2C %.3f ms; "
      "slow device: D2C %.2f ms inside pread64" % (len(held), min(waits) / 1e6,
      q2c[len(q2c) // 2] / 1e6, d2c[len(d2c) // 2] / 1e6))
PY
echo "ok: blk-throttle's delay is before Q (queued by its dispatcher), the slow device's in D2C"

# 5. io_uring: direct reads submitted inline by io_uring_enter are linked to
# it, as asynchronous submissions (the syscall returns before the I/O ends).
# A request io_uring hands to its worker threads (iou-wrk) is queued outside
# the syscall, and is left unlinked.
out=$WORK/uring.json
start_iolat "$out" trace --syscalls -j -o read -d "$name" -c "$cg"
in_cgroup "$cg" fio --name=uring --filename="$dev" --rw=randread --bs=4k --size=800k \
	--io_size=800k --iodepth=8 --ioengine=io_uring --direct=1 --output-format=json \
	>"$WORK/uring.fio" || fail "fio io_uring"
stop_iolat INT
assert_detached
python3 - "$out" <<'PY' || fail "io_uring reads not linked to io_uring_enter"
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
ios = [r for r in rs if r["type"] == "io" and r["bytes"] == 4096]
calls = {(r["tid"], r["enter_ns"]): r for r in rs if r["type"] == "syscall"}
assert len(ios) == 200, len(ios)
linked = [r for r in ios if r["syscall"] == "io_uring_enter"]
for r in ios:
    assert r["syscall"] in ("io_uring_enter", None), r
    if r["syscall"] is None:
        assert r["comm"].startswith("iou-"), r
for r in linked:
    s = calls[(r["tid"], r["syscall_enter_ns"])]
    assert s["async"] and s["syscall"] == "io_uring_enter" and s["pid"] == r["pid"], s
    assert s["enter_ns"] <= r["ts_ns"]["q"] <= s["exit_ns"], (r, s)
assert sum(s["ios"] for s in calls.values()) == len(linked), "ios per syscall"
assert len(linked) >= 180, ("linked", len(linked))
print("io_uring: %d of 200 reads linked to %d io_uring_enter calls" % (len(linked), len(calls)))
PY
echo "ok: io_uring submissions linked"
