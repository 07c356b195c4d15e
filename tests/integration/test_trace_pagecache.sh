# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# iolat trace --syscalls through the page cache: buffered writes are
# followed from the write(2) that dirtied a folio to the bio that writes it
# back later (here queued by `sync`, another process). On ext4 and XFS on a
# loop device: dd writes 4 MiB in 4 KiB writes, then sync; every bio
# carrying dd's data is linked to dd's writes, the linked bytes are exactly
# dd's, the only unlinked bios are the file system's own metadata, and each
# link's page-cache wait is at least the time from its write to the sync.
# Then sampling (-s 10: about one write in ten followed, only those
# linked), the text and --summary views, and a --write/--read round trip.
source tests/integration/lib.sh
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 is not installed"
command -v mkfs.xfs >/dev/null || skip "mkfs.xfs is not installed (xfsprogs)"

# check says what --syscalls can follow on this kernel (6.18: both).
"$IOLAT" check --no-load >"$WORK/check.txt" 2>&1 || fail "check: $(tail -3 "$WORK/check.txt")"
grep -q "^  page cache: yes (writeback_dirty_folio, bpf_loop):" "$WORK/check.txt" ||
	fail "check: page-cache linkage not reported: $(grep -A3 'Trace linkage' "$WORK/check.txt")"
grep -q "^  page faults: yes (mm_filemap_fault)" "$WORK/check.txt" || fail "check: fault linkage not reported"
echo "ok: check reports page-cache and fault linkage"

now_ns() { python3 -c 'import time; print(time.monotonic_ns())'; }

# check_links OUT SYNC_NS WRITES: the JSON of a run in which dd made WRITES
# 4 KiB buffered writes and `sync` started at SYNC_NS (CLOCK_MONOTONIC).
check_links() {
	python3 - "$@" <<'PY'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
sync_ns, writes = int(sys.argv[2]), int(sys.argv[3])
ios = {r["id"]: r for r in rs if r["type"] == "io"}
links = [r for r in rs if r["type"] == "page_cache"]
calls = {(r["tid"], r["enter_ns"]): r for r in rs if r["type"] == "syscall"}
dd = {k: s for k, s in calls.items() if s["comm"] == "dd" and s["syscall"] == "write"}
assert len(dd) == writes, ("dd's followed writes", len(dd), writes)
assert all(s["folios"] == 1 and s["ret"] == 4096 for s in dd.values()), "a write dirtied one folio"
assert links, "no page-cache links"
for l in links:
    s = calls.get((l["tid"], l["syscall_enter_ns"]))
    assert s is not None and s["comm"] == "dd" and l["comm"] == "dd", ("link to no dd write", l)
    assert l["io_id"] in ios, ("link to a bio without a record", l)
    io = ios[l["io_id"]]
    assert io["ts_ns"]["q"] == l["queue_ns"] and io["comm"] != "dd", (l, io)
    # Dirtied inside the write, written back only once sync ran.
    assert s["enter_ns"] <= l["dirty_ns"] <= s["exit_ns"], (l, s)
    assert l["queue_ns"] >= sync_ns, ("queued before the sync", l)
    assert l["wait_ns"] >= sync_ns - s["exit_ns"], ("page-cache wait too short", l, s)
linked = sum(l["bytes"] for l in links)
assert linked == writes * 4096, ("linked bytes", linked, writes * 4096)
per_write = {}
for l in links:
    per_write[(l["tid"], l["syscall_enter_ns"])] = per_write.get((l["tid"], l["syscall_enter_ns"]), 0) + l["bytes"]
assert set(per_write) == set(dd) and set(per_write.values()) == {4096}, "each write's 4 KiB once"
for io in ios.values():
    n = sum(1 for l in links if l["io_id"] == io["id"])
    assert io["pc_links"] == n, ("bio's link count", io, n)
    if n:
        assert io["pc_bytes"] == sum(l["bytes"] for l in links if l["io_id"] == io["id"]), io
        assert io["rwbs"].startswith("W") and io["syscall"] is None, io
    elif io["bytes"] and (io["rwbs"].startswith("W") or io["rwbs"].startswith("FW")):
        # Only the file system's own writes are left: journal, metadata
        # (and empty cache flushes).
        assert "meta" in io["flags"].split("|") or io["comm"].startswith("jbd2"), ("unlinked data write", io)
nl = sum(1 for io in ios.values() if io["pc_links"])
waits = sorted(l["wait_ns"] for l in links)
print("%d writes linked through %d links to %d bios; page-cache wait min %.3f s, max %.3f s" %
      (len(dd), len(links), nl, waits[0] / 1e9, waits[-1] / 1e9))
PY
}

# run_fs FS MKFS...: the classic case on a fresh file system.
run_fs() {
	local fs=$1 out
	shift
	make_loop 512
	"$@" "$LOOP" >/dev/null || fail "$fs: mkfs"
	[ "$fs" = ext4 ] && EXT4_LOOP=$LOOP
	mkdir -p "$WORK/$fs"
	mount "$LOOP" "$WORK/$fs" || fail "$fs: mount"
	on_exit "umount $WORK/$fs"
	sync
	out=$WORK/$fs.json
	start_iolat "$out" trace --syscalls -j -d "${LOOP#/dev/}"
	dd if=/dev/zero of="$WORK/$fs/f" bs=4k count=1024 status=none || fail "$fs: dd"
	sleep 1
	sync_ns=$(now_ns)
	sync || fail "$fs: sync"
	stop_iolat INT
	assert_detached
	check_links "$out" "$sync_ns" 1024 >"$WORK/check" || fail "$fs: $(cat "$WORK/check")"
	cat "$WORK/check"
	grep -q "page cache: 1024 folios dirtied by followed writes, 1024 of them written back" "$out.err" ||
		fail "$fs: page-cache counts: $(grep 'page cache' "$out.err")"
	echo "ok: $fs: every write of dd linked to the bios that wrote it back"
}

run_fs ext4 mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0
# The raw_tp programs (kernels without tp_btf) on XFS.
IOLAT_FORCE_ATTACH=raw_tp run_fs xfs mkfs.xfs -q -f
ext4dev=$EXT4_LOOP

# Reads: a sequential buffered read's readahead, synchronous and
# asynchronous, is queued inside the read(2) that triggered it, and linked
# to it; an mmap'd file read by page faults has its bios linked to the
# faults (mm_filemap_fault), with the file's inode. The file's cached pages
# are dropped first (POSIX_FADV_DONTNEED), so the reads go to the disk.
dd if=/dev/urandom of="$WORK/ext4/r" bs=1M count=8 status=none || fail "reads: file"
sync
for kind in read mmap; do
	out=$WORK/$kind.json
	start_iolat "$out" trace --syscalls -j -o read -d "${ext4dev#/dev/}"
	python3 - "$WORK/ext4/r" "$kind" >"$WORK/reader" <<'PY' || fail "$kind: reader"
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
if sys.argv[2] == "read":
    while os.read(fd, 4096):
        pass
else:
    m = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
    sum(m[i] for i in range(0, len(m), 4096))
print(os.getpid(), os.fstat(fd).st_ino)
PY
	stop_iolat INT
	assert_detached
	read -r rpid rino <"$WORK/reader"
	python3 - "$out" "$kind" "$rpid" "$rino" >"$WORK/check" <<'PY' || fail "$kind: reads not linked as expected: $(cat "$WORK/check")"
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
kind, pid, ino = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
ios = [r for r in rs if r["type"] == "io" and r["pid"] == pid]
calls = {(r["tid"], r["enter_ns"]): r for r in rs if r["type"] == "syscall"}
assert sum(r["bytes"] for r in ios) >= 8 << 20, ("bytes read from the disk", sum(r["bytes"] for r in ios))
ra = [r for r in ios if "rahead" in r["flags"].split("|")]
assert ra, "no readahead bios"
if kind == "read":
    for r in ios:
        s = calls.get((r["tid"], r["syscall_enter_ns"]))
        assert r["syscall"] == "read" and s and s["enter_ns"] <= r["ts_ns"]["q"] <= s["exit_ns"], r
    # Asynchronous readahead completes after the read that queued it
    # returned: the read did not wait for it.
    late = [r for r in ra if r["ts_ns"]["c"] > calls[(r["tid"], r["syscall_enter_ns"])]["exit_ns"]]
    print("read: %d bios (%d readahead, %d completed after their read returned), all linked" %
          (len(ios), len(ra), len(late)))
    assert late, "no asynchronous readahead seen"
else:
    for r in ios:
        assert r["syscall"] == "page_fault" and r["fault_ino"] == ino, r
        assert r["syscall_enter_ns"] <= r["ts_ns"]["q"], r
    print("mmap: %d bios (%d readahead), all linked to page faults on inode %d" % (len(ios), len(ra), ino))
PY
	cat "$WORK/check"
	echo "ok: $kind: every bio linked to what caused it"
done

# Sampling: 1 write in 10 followed (per CPU), and only its data linked.
out=$WORK/sampled.json
start_iolat "$out" trace --syscalls -j -s 10 -d "${LOOP#/dev/}"
dd if=/dev/zero of="$WORK/xfs/g" bs=4k count=1000 status=none || fail "sampled: dd"
sync
stop_iolat INT
assert_detached
python3 - "$out" <<'PY' || fail "sampling: not about one write in ten"
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
dd = {(r["tid"], r["enter_ns"]) for r in rs if r["type"] == "syscall" and r["comm"] == "dd"}
links = [r for r in rs if r["type"] == "page_cache"]
# Per-CPU turns: exactly 100 if dd stays on one CPU, a few off if it moves.
assert 90 <= len(dd) <= 110, ("followed writes", len(dd))
assert all((l["tid"], l["syscall_enter_ns"]) in dd for l in links), "a link to a write not followed"
assert sum(l["bytes"] for l in links) == 4096 * len(dd), "linked bytes"
print("sampled: %d of 1000 writes followed, %d links" % (len(dd), len(links)))
PY
echo "ok: -s 10 follows about 100 of 1000 writes, and links only theirs"

# Text and summary: the bio line says what it carries; the summary has the
# page-cache wait (PCW) per writing process and cgroup.
out=$WORK/text.txt
start_iolat "$out" trace --syscalls -d "${LOOP#/dev/}"
dd if=/dev/zero of="$WORK/xfs/h" bs=4k count=64 status=none || fail "text: dd"
sleep 0.5
sync
stop_iolat INT
grep -qE ' <- [0-9]+ writes? by dd\[[0-9]+\], [0-9]+ B, dirty [0-9.]+ ms before Q$' "$out" ||
	fail "text: no page-cache column: $(head -5 "$out")"
assert_eq "text: dd's writes" 64 "$(grep -cE '^  write by dd\[[0-9]+/[0-9]+\] returned 4096: .* it dirtied 1 page-cache folio, linked' "$out")"
out=$WORK/summary.txt
start_iolat "$out" trace --syscalls --summary -d "${LOOP#/dev/}"
dd if=/dev/zero of="$WORK/xfs/i" bs=4k count=64 status=none || fail "summary: dd"
sleep 0.5
sync
stop_iolat INT
awk '/^  dd\[[0-9]+\]: (1 I\/Os; )?262144 bytes of its buffered writes/ { p = 1; next } p && /^    PCW +64 / { ok = 1 } /^  [^ ]/ { p = 0 } END { exit !ok }' "$out" ||
	fail "summary: no PCW row of dd's 64 writes: $(cat "$out")"
grep -q "^Page-cache wait by the writers' cgroup" "$out" || fail "summary: no cgroup section"
echo "ok: text column and summary PCW row"

# A recording keeps the links: --read shows the same summary.
out=$WORK/rec.txt
start_iolat "$out" trace --syscalls -d "${LOOP#/dev/}" -w "$WORK/rec.trace"
dd if=/dev/zero of="$WORK/xfs/j" bs=4k count=32 status=none || fail "rec: dd"
sync
stop_iolat INT
"$IOLAT" trace --read "$WORK/rec.trace" --syscalls -j >"$WORK/rec.json" 2>/dev/null || fail "--read"
assert_eq "--read: linked bytes" $((32 * 4096)) "$(python3 -c '
import json, sys
print(sum(r["bytes"] for l in open(sys.argv[1]) for r in [json.loads(l)] if r["type"] == "page_cache"))' "$WORK/rec.json")"
echo "ok: --write/--read keep the page-cache links"
