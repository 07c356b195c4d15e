# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The kernel matrix: one iolat binary, built once here, in qemu/TCG guests
# of Debian's 5.10 (bullseye), 6.1 (bookworm) and 6.12 (trixie) kernels
# (IOLAT_KERNELS picks others), beside the host's own kernel, which the
# other tests cover. In each guest:
#   - `iolat check` passes, and says what the kernel lacks and what iolat
#     does instead;
#   - `hist`, `serve` (one scrape), `top` and `trace` each count exactly the
#     direct reads and writes done on /dev/vda while they run, against the
#     guest's own /sys/block/vda/stat, and so does a user program served
#     through its config (examples/biosize);
#   - the views' truth (issue 29): `hist --json` and `trace --json`
#     attached together (hist first) over the same I/O on vda (virtio-blk
#     behind mq-deadline), for three workloads: the direct 4 KiB reads one
#     at a time of hist's run above (dio read), 4 KiB reads kept 32 in
#     flight and submitted 16 at a time by one io_submit, inside one plug
#     (dio aread), and 1 MiB direct reads the block layer splits into 128
#     KiB requests inside one plug (dd, max_sectors_kb lowered); the last
#     two in one run, apart by hist -S's size classes. stamp_truth.py sets
#     hist's device and total p50/p90/p99 against the times trace took at
#     the tracepoints for the same requests; a view of the batched or
#     split reads outside its bound on any kernel fails the test, after
#     every kernel's lines are printed (the plain reads' lines are shown
#     only: two programs' run time under TCG is larger than their bound).
#     Beside it, per workload, how far the kernel's own request stamps
#     (which hist times from) are from the tracepoints: the creation stamp
#     from G (block_getrq), the issue stamp from D (block_rq_issue); on a
#     kernel with the plug clock (6.9+) the two stamps of a plugged
#     request are one time.
# Each guest's `IOLAT-GUEST` lines (its uptime after each part) are printed.
# The guests run side by side, as many at once as the host has CPUs (a TCG
# guest keeps one busy; GUEST_JOBS, tests/vm/guest.sh), each timing its own
# I/O with its own clock.
source tests/integration/lib.sh
source tests/vm/guest.sh

KERNELS=${IOLAT_KERNELS:-5.10 6.1 6.12}
READS=200 WRITES=40

# The STATIC=1 build (libbpf linked in): what a distribution would ship.
# $OUT's objects linked as `make STATIC=1` links them: no second compile.
make -s OUT="$OUT" "$OUT/iolat-static" >"$WORK/static.log" 2>&1 ||
	fail "make $OUT/iolat-static failed: $(tail -3 "$WORK/static.log")"
vm_add_program "$PWD/$OUT/iolat-static" /bin/iolat
# A user program (served through its config), for the user-program path.
EX=${OUT:-build}/examples
[ -f "$EX/biosize.bpf.o" ] || make -s examples >"$WORK/examples.log" 2>&1 ||
	fail "make examples failed: $(tail -3 "$WORK/examples.log")"
vm_add_file "$EX/biosize.bpf.o" /etc/iolat/examples/biosize.bpf.o
vm_add_file examples/biosize.yaml /etc/iolat/examples/biosize.yaml
make_cgroup kernels

# The guest's commands. Each collector runs while the same I/O is done
# (READS 4 KiB reads, WRITES 8 KiB writes, direct); the disk's counters
# before and after it are printed beside what the collector printed, each
# line tagged IOLAT-<NAME>, so the host can compare them.
cat >"$WORK/guest.sh" <<EOF
READS=$READS WRITES=$WRITES
EOF
cat >>"$WORK/guest.sh" <<'EOF'
set +e
for a in mkdir sed grep kill seq cut head tail wc ip wget dd sync; do busybox ln -sf busybox /bin/$a; done
mkdir -p /tmp
ip link set lo up
t() { echo "IOLAT-GUEST: $(cut -d' ' -f1 /proc/uptime) s: $*"; }
tag() { sed "s/^/IOLAT-$1: /" "$2"; }
stat_of() { echo "IOLAT-$1-STAT: $(cat /sys/block/vda/stat)"; }
io() {
	dio read /dev/vda $READS 4096 >/dev/null && dio write /dev/vda $WRITES 8192 >/dev/null ||
		echo "IOLAT-ERROR: dio"
}
# wait_for FILE PATTERN: until FILE has PATTERN (30 s at most).
wait_for() {
	for i in $(seq 1 300); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
	echo "IOLAT-ERROR: no '$2' in $1"
	return 1
}

rc=0
iolat check >/tmp/check 2>&1 || rc=$?
tag check /tmp/check
echo "IOLAT-check-RC: $rc"
if [ $rc != 0 ]; then
	# libbpf's messages (stderr) only: the verifier's last words end them.
	iolat check -v 2>&1 >/dev/null | grep -v '^libbpf: \(prog\|map\|elf\|sec\|CO-RE\|struct\)' | tail -40 >/tmp/check-v
	tag check-v /tmp/check-v
fi
t "check done"

# hist: until SIGINT, then one JSON object; trace beside it over the same
# I/O (every I/O of the disk, one JSON record each): its own counts, and
# the plain reads' truth below. hist attaches first: where two programs
# share a tracepoint the first one's clock is read before the other's
# program runs (MACHINE.md: the tool under test first).
iolat hist -D -O --json >/tmp/hist 2>/tmp/hist.err &
pid=$!
wait_for /tmp/hist.err Tracing
iolat trace --json --max-rate 0 -d vda >/tmp/trace 2>/tmp/trace.err &
tpid=$!
wait_for /tmp/trace.err Tracing
stat_of hist-FROM
stat_of trace-FROM
io
stat_of hist-TO
stat_of trace-TO
sleep 0.5
kill -INT $pid $tpid
wait $pid
echo "IOLAT-hist-RC: $?"
wait $tpid
echo "IOLAT-trace-RC: $?"
tag hist /tmp/hist
tag hist-ERR /tmp/hist.err
tag trace /tmp/trace
tag trace-ERR /tmp/trace.err
t "hist and trace done"

# serve: one scrape after the I/O.
iolat serve --web.listen-address=127.0.0.1:9400 --no-collector.workloads \
	--config.dir=/etc/iolat/examples --config.names=biosize >/tmp/serve 2>&1 &
pid=$!
wait_for /tmp/serve "listening on"
stat_of serve-FROM
io
stat_of serve-TO
wget -q -O /tmp/metrics http://127.0.0.1:9400/metrics
echo "IOLAT-serve-RC: $?"
grep -E '^(iolat_(block_completions_total|build_info)|iolat_user_block_request_size_bytes_count)' /tmp/metrics |
	sed 's/^/IOLAT-serve: /'
kill -TERM $pid
wait $pid
echo "IOLAT-serve-EXIT: $?"
tag serve-LOG /tmp/serve
t "serve done"

# top: one interval, long enough for the I/O after it attached.
iolat top --once --json -d vda 8 >/tmp/top 2>/tmp/top.err &
pid=$!
wait_for /tmp/top.err Tracing
stat_of top-FROM
io
stat_of top-TO
wait $pid
echo "IOLAT-top-RC: $?"
tag top /tmp/top
tag top-ERR /tmp/top.err
t "top done"

# The views' truth (issue 29) for the plugged loads: hist -S and trace
# attached together over 4 KiB reads kept 32 in flight and submitted 16 at
# a time by one io_submit (one plug each), then 1 MiB direct reads split
# into 128 KiB requests (max_sectors_kb 128) inside dd's plug; the size
# classes (<=4KiB, 64KiB-1MiB) keep the two apart. The plain reads' truth
# comes from the hist and trace run above.
plugged() {
	dio aread /dev/vda 512 4096 32 16 || echo "IOLAT-ERROR: dio aread"
	msk=$(cat /sys/block/vda/queue/max_sectors_kb)
	echo 128 >/sys/block/vda/queue/max_sectors_kb
	dd if=/dev/vda of=/dev/null bs=1M count=16 iflag=direct 2>/dev/null || echo "IOLAT-ERROR: dd"
	echo "$msk" >/sys/block/vda/queue/max_sectors_kb
}
echo "IOLAT-truth-SCHED: $(cat /sys/block/vda/queue/scheduler)"
iolat hist -S --json -d vda >/tmp/th 2>/tmp/th.err &
pid=$!
wait_for /tmp/th.err Tracing
iolat trace --json --max-rate 0 -d vda >/tmp/tt 2>/tmp/tt.err &
tpid=$!
wait_for /tmp/tt.err Tracing
plugged
sleep 0.5
kill -INT $pid $tpid
wait $pid
echo "IOLAT-truth-hist-RC: $?"
wait $tpid
echo "IOLAT-truth-trace-RC: $?"
tag truth-hist /tmp/th
tag truth-trace /tmp/tt
tag truth-ERR /tmp/tt.err
t "truth done"

# trace --syscalls: 64 buffered 4 KiB writes to the raw disk, flushed by
# sync (and dd's close): followed through the page cache where the kernel
# allows it (bpf_loop, 5.17+), and said so where it does not.
iolat trace --syscalls --json -d vda >/tmp/pc 2>/tmp/pc.err &
pid=$!
wait_for /tmp/pc.err Tracing
dd if=/dev/zero of=/dev/vda bs=4096 count=64 seek=4096 2>/dev/null
sync
sleep 0.5
kill -INT $pid
wait $pid
echo "IOLAT-pc-RC: $?"
tag pc /tmp/pc
tag pc-ERR /tmp/pc.err
t "page cache done"
EOF

# stat_delta LOG NAME FIELD: the change of /sys/block/vda/stat's FIELD over
# collector NAME's run (1: reads completed, 5: writes completed).
stat_delta() {
	local from to
	from=$(sed -n "s/^IOLAT-$2-FROM-STAT: //p" "$1" | awk -v f="$3" '{ print $f }')
	to=$(sed -n "s/^IOLAT-$2-TO-STAT: //p" "$1" | awk -v f="$3" '{ print $f }')
	echo $((to - from))
}

# The guests, as many at once as VM_JOBS (tests/vm/guest.sh), each on a
# disk of its own, the newest kernel first: under TCG its guest takes
# longest (6.12: 96-106 s, 5.10 and 6.1: 55-64 s), and the others share the
# other CPU meanwhile. Then each one's console read in the matrix's order.
declare -A T0
for k in $(tr ' ' '\n' <<<"$KERNELS" | sort -rV); do
	vm_series "$k"
	vm_prepare
	make_loop 64
	vm_slot
	T0[$k]=$(date +%s)
	vm_start "guest-$k" "$CG" "$LOOP" "$WORK/guest.sh" "$WORK/console-$k"
done
OFF=()
for k in $KERNELS; do
	vm_series "$k"
	LOG=$WORK/console-$k
	vm_wait "guest-$k" "$LOG" 300
	# Its run: from its start to its console's last line.
	t0=$((SECONDS - ($(stat -c %Y "$LOG") - ${T0[$k]})))
	tr -d '\r' <"$LOG" >"$LOG.txt"
	L=$LOG.txt
	tagged() { sed -n "s/^IOLAT-$1: //p" "$L"; }
	echo "--- $k ($(cat "$VM_DIR/package"), $((SECONDS - t0)) s): iolat check ---"
	tagged check
	[ "$(tagged check-RC)" = 0 ] || { tagged check-v; fail "$k: iolat check failed"; }
	grep '^IOLAT-ERROR' "$L" && fail "$k: the guest's commands failed"
	# No kernel stamp predates blk-throttle's wait (issue 15); these kernels
	# keep bio.bi_issue (checked in their BTF), 6.18 issue_time_ns.
	tagged check >"$WORK/check-$k"
	grep -q "^Submit time (above the block layer): no kernel stamp predates" "$WORK/check-$k" ||
		fail "$k: check says nothing of the submit stamp"
	case $k in
	5.10 | 6.1 | 6.12)
		grep -q "^  bio stamp: bio\.bi_issue, " "$WORK/check-$k" ||
			fail "$k: check does not name bio.bi_issue: $(tail -8 "$WORK/check-$k")"
		;;
	esac

	# The disk's own counts over each run: exactly the I/O done, since
	# nothing else runs in the guest.
	for c in hist serve top trace; do
		assert_eq "$k: $c: reads the disk completed" $READS "$(stat_delta "$L" $c 1)"
		assert_eq "$k: $c: writes the disk completed" $WRITES "$(stat_delta "$L" $c 5)"
		assert_eq "$k: $c exit status" 0 "$(tagged $c-RC)"
	done

	tagged hist >"$WORK/hist-$k.json"
	assert_eq "$k: hist reads" $READS "$(jget "$WORK/hist-$k.json" "s('vda','read')['ios']")"
	assert_eq "$k: hist writes" $WRITES "$(jget "$WORK/hist-$k.json" "s('vda','write')['ios']")"
	assert_eq "$k: hist timed reads" $READS \
		"$(jget "$WORK/hist-$k.json" "s('vda','read')['device']['count']")"

	tagged serve >"$WORK/serve-$k"
	assert_eq "$k: serve reads" $READS \
		"$(awk '$1 == "iolat_block_completions_total{device=\"vda\",op=\"read\"}" { print $2 }' "$WORK/serve-$k")"
	assert_eq "$k: serve writes" $WRITES \
		"$(awk '$1 == "iolat_block_completions_total{device=\"vda\",op=\"write\"}" { print $2 }' "$WORK/serve-$k")"
	assert_eq "$k: serve stopped cleanly" 0 "$(tagged serve-EXIT)"
	assert_eq "$k: user program biosize: requests issued" $((READS + WRITES)) \
		"$(awk '$1 == "iolat_user_block_request_size_bytes_count{device=\"vda\"}" { print $2 }' "$WORK/serve-$k")"

	tagged top >"$WORK/top-$k.json"
	python3 - "$WORK/top-$k.json" $READS $WRITES <<'PY' || fail "$k: top did not count the I/O: $(cat "$WORK/top-$k.json")"
import json, sys
top = json.load(open(sys.argv[1]))
reads = sum(w["reads"] for w in top["workloads"])
writes = sum(w["writes"] for w in top["workloads"])
assert (reads, writes) == (int(sys.argv[2]), int(sys.argv[3])), (reads, writes)
PY

	tagged trace >"$WORK/trace-$k.json"
	python3 - "$WORK/trace-$k.json" $READS $WRITES <<'PY' || fail "$k: trace records: $(tail -3 "$WORK/trace-$k.json")"
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
rs = [r for r in rs if r["type"] == "io"]
reads = sum(1 for r in rs if r["rwbs"].startswith("R") and r["bytes"] == 4096)
writes = sum(1 for r in rs if r["rwbs"].startswith("W") and r["bytes"] == 8192)
assert (reads, writes, len(rs)) == (int(sys.argv[2]), int(sys.argv[3]), reads + writes), (reads, writes, len(rs))
PY
	echo "ok: $k: check passes; hist, serve, top and trace each counted $READS reads and $WRITES writes, as the disk did"

	# Page-cache linkage: on where the kernel has bpf_loop (6.1, 6.12),
	# off with its reason on 5.10; trace --syscalls runs on all.
	assert_eq "$k: trace --syscalls exit status" 0 "$(tagged pc-RC)"
	tagged pc >"$WORK/pc-$k.json"
	tagged pc-ERR >"$WORK/pc-$k.err"
	if [ "$k" = 5.10 ]; then
		grep -q "page cache: not followed: it needs .* bpf_loop" "$WORK/pc-$k.err" ||
			fail "$k: no word that page-cache linkage is off: $(cat "$WORK/pc-$k.err")"
		grep -q "^  page cache: no: no bpf_loop" "$WORK/check-$k" ||
			fail "$k: check does not say page-cache linkage is off: $(grep -A2 'Trace linkage' "$WORK/check-$k")"
		echo "ok: $k: trace --syscalls runs, page-cache linkage off (no bpf_loop), and says so"
	else
		assert_eq "$k: bytes of dd's writes linked through the page cache" $((64 * 4096)) \
			"$(python3 -c '
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
print(sum(r["bytes"] for r in rs if r["type"] == "page_cache" and r["comm"] == "dd"))' "$WORK/pc-$k.json")"
		grep -q "^  page cache: yes (writeback_dirty_folio, bpf_loop):" "$WORK/check-$k" ||
			fail "$k: check does not report page-cache linkage: $(grep -A2 'Trace linkage' "$WORK/check-$k")"
		echo "ok: $k: dd's 64 buffered writes linked through the page cache"
	fi

	# The views' truth: each workload's hist series and trace records apart
	# (truth-K-W.hist, .trace), then stamp_truth.py on each, and how far
	# the kernel's stamps are from the same tracepoints. The plain reads
	# are those of hist's and trace's run above (vda's reads, 4 KiB).
	case $(tagged truth-SCHED) in
	*"[mq-deadline]"*) ;;
	*) fail "$k: vda's scheduler is not mq-deadline: $(tagged truth-SCHED)" ;;
	esac
	for tool in hist trace; do
		assert_eq "$k: truth: $tool exit status" 0 "$(tagged "truth-$tool-RC")"
		tagged "truth-$tool" >"$WORK/truth-$k-$tool"
	done
	python3 - "$WORK" "$k" <<'PY' || fail "$k: the truth runs' outputs"
import json, statistics, sys
work, k = sys.argv[1:]
def objects(path):
    return [json.loads(l) for l in open(path) if l.startswith("{")]
def last_series(path):
    objs = objects(path)
    return objs[-1]["series"] if objs else []
ios = lambda path: [r for r in objects(path) if r["type"] == "io"]
plain, plugged = f"{work}/trace-{k}.json", f"{work}/truth-{k}-trace"
# workload: (hist series, trace requests, what the stamps line calls it)
workloads = {
    "sync": ([s for s in last_series(f"{work}/hist-{k}.json") if (s["disk"], s["op"]) == ("vda", "read")],
             [r for r in ios(plain) if r["rwbs"].startswith("R")],
             "4 KiB reads, one at a time"),
    "split": ([s for s in last_series(f"{work}/truth-{k}-hist") if s["size_class"] == "64KiB-1MiB"],
              [r for r in ios(plugged) if r["rq_bytes"] > 4096],
              "1 MiB reads, split"),
    "aread": ([s for s in last_series(f"{work}/truth-{k}-hist") if s["size_class"] == "<=4KiB"],
              [r for r in ios(plugged) if r["rq_bytes"] == 4096],
              "4 KiB reads, QD32, batches of 16"),
}
# Exactly the requests the guest made: 512 batched reads, 16 x 8 pieces.
want = {"split": 128, "aread": 512}
for w, (series, records, name) in workloads.items():
    got = [x["ios"] for x in series]
    assert w not in want or got == [want[w]], f"{w}: hist counted {got} requests, not {want[w]}"
    with open(f"{work}/truth-{k}-{w}.hist", "w") as f:
        print(json.dumps({"series": series}), file=f)
    with open(f"{work}/truth-{k}-{w}.trace", "w") as f:
        for r in records:
            print(json.dumps(r), file=f)
    sel = [r for r in records if r["k_issue_ns"] and r["k_start_ns"] and r["ts_ns"]["d"] and r["ts_ns"]["g"]]
    assert sel, f"{w}: no request with both stamps and both tracepoint times"
    di = [(r["k_issue_ns"] - r["ts_ns"]["d"]) / 1e3 for r in sel]
    dg = [(r["k_start_ns"] - r["ts_ns"]["g"]) / 1e3 for r in sel]
    same = sum(r["k_issue_ns"] == r["k_start_ns"] for r in sel)
    print(f"stamps {k} {name}: {len(sel)} requests; issue stamp - D: median {statistics.median(di):+.1f} us, "
          f"max |{max(abs(x) for x in di):.1f}| us; start stamp - G: median {statistics.median(dg):+.1f} us; "
          f"start = issue stamp: {same}")
PY
	# --allow-us 60: under TCG hist's completion program runs 10-40 us
	# before trace's reads its clock (5.10 and 6.1, whose stamps are within
	# ~3 us of the tracepoints, read 10-23 us low on the split reads' mean
	# and up to 49 us low at p90, in three runs); the plug clock's error it
	# must catch on 6.12 is hundreds of us (batched reads' p50 +335 us).
	# --shown-only p99: the p99 of 128 or 512 requests is one or two of
	# them, and a vCPU stopped by the host between two programs' clock
	# reads moved one by 130-270 us (6.1, split reads, exact stamps).
	# --rank-slack 1: such a request moves p90 too where the requests'
	# times have a gap at its rank (5.10, split reads, exact stamps: p90
	# 138 us low, p50 and mean within 23 us); p50/p90 are held to within
	# their bound of the reference one rank either side.
	for w in split aread; do
		python3 tests/integration/stamp_truth.py --allow-us 60 --rank-slack 1 --shown-only p99 \
			--label "truth $k $w: " \
			"$WORK/truth-$k-$w.hist" "$WORK/truth-$k-$w.trace" || OFF+=("$k $w")
	done
	# The plain reads' lines are shown, not held to the bound: under TCG a
	# BPF program runs for 10-20 us, and hist's and trace's programs at one
	# tracepoint read their clocks one program apart, which moves a ~170 us
	# read by 6-9 % either way (a 6.1 guest: hist attached first -12.6 us
	# at p50, trace first +15.3 us). The host (test_plugclock.sh, programs
	# of ~0.1 us) holds them to it.
	python3 tests/integration/stamp_truth.py --label "truth $k sync (shown only): " \
		"$WORK/truth-$k-sync.hist" "$WORK/truth-$k-sync.trace" || true
	echo "guest time, $k:"
	sed -n 's/^IOLAT-GUEST: /  /p' "$L"
done
# Every kernel's lines first, then the verdict: a view off on any kernel
# fails the test.
[ ${#OFF[@]} -eq 0 ] || fail "a view is not the tracepoints' times (stamp_truth.py) on: ${OFF[*]}"
echo "ok: on every kernel, hist's device and total p50/p90/p99 are within their bounds of the tracepoint times"
