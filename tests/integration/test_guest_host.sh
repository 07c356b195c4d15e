# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# One VM I/O from the guest's queue to the host's disk: `iolat trace`
# inside three qemu/TCG guests on their virtio disk, and on the host
# following each guest's qemu (aio=threads, qemu's default: a pread or
# pwrite per request on the VM's raw image); `iolat trace --join` matches
# them.
#   slow: its image is a loop device over a file on slowfs, whose every
#         read sleeps DELAY_US: a known host-side device delay;
#   calm: a raw image file on ext4, on a plain loop device (the image is
#         a file: the host's bios are the file system's, on its disk; reads
#         of its never written, fallocated blocks past its first 512 KiB queue
#         none);
#   native: a plain loop device, qemu with aio=native (io_submit): each
#         request matched to the host bio at its sector.
# The guests do the same I/O: sequential direct 4 KiB reads and 8 KiB
# writes, then 8 readers at once, each keeping 8 direct reads in flight
# (Linux AIO), on a disk the guest holds to 4 requests at once (nr_requests:
# 4 is its least): a guest-side queue.
# The join must match at least 99 % of each guest's requests; every span of
# every chain is within the clock's stated error of >= 0 (and the spans add
# up to the guest's Q2C); the delay shows in the slow VM's host-device span
# of reads and in no other span, nor in the calm VM's, nor in writes
# (slowfs delays reads only); the guest-side queue shows in guest_queue.
# From the host alone, serve's per-VM qemu calls (syscall_time) count the
# calls the host trace saw, and the slow VM's reads sit above the delay, the
# calm VM's below: the delay for that VM only.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh
source tests/vm/guest.sh
vm_prepare
command -v curl >/dev/null || skip "curl is not installed"

# Bad use of --join: one line, the exit status iolat-trace(1) gives.
expect_error 2 "takes two trace files" trace --join "$WORK/one.trace"
expect_error 2 "takes only --json and --summary" trace --join -d nosuchdisk a.trace b.trace
expect_error 2 "unexpected argument" trace --join a.trace b.trace c.trace
expect_error 1 "cannot open $WORK/none" trace --join "$WORK/none" "$WORK/none"
printf 'not a trace' >"$WORK/bad.trace"
expect_error 1 "is not an iolat trace file" trace --join "$WORK/bad.trace" "$WORK/bad.trace"

DELAY_US=${DELAY_US:-4000}
READS=200 WRITES=100 READERS=8 AREADS=32 DEPTH=8
VMS=(slow calm native)
declare -A DEV DUMP VMCG LOG
declare -A AIO=([slow]=threads [calm]=threads [native]=native)

command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 (package e2fsprogs) is not installed"
make_slow_loop "$DELAY_US"
DEV[slow]=$LOOP
make_loop 64
FSDEV=$LOOP
mkfs.ext4 -q "$FSDEV" || fail "mkfs.ext4 $FSDEV failed"
mkdir "$WORK/fs" || fail "cannot make $WORK/fs"
mount "$FSDEV" "$WORK/fs" || fail "cannot mount $FSDEV"
on_exit "umount $WORK/fs"
# Its first 512 KiB written, the rest allocated but never written.
{ fallocate -l 16M "$WORK/fs/calm.img" &&
	dd if=/dev/zero of="$WORK/fs/calm.img" bs=512K count=1 conv=notrunc,fsync status=none; } ||
	fail "cannot make the calm VM's image"
DEV[calm]=$WORK/fs/calm.img
make_loop 16
DEV[native]=$LOOP
n=1
for vm in "${VMS[@]}"; do
	make_loop 4
	DUMP[$vm]=$LOOP
	vm_cgroup $((40 + n)) "gh$vm"
	VMCG[$vm]=$VM_CG
	LOG[$vm]=$WORK/$vm.console
	n=$((n + 1))
done

vm_add_program "$PWD/$OUT/iolat-static" /bin/iolat
[ -x "$OUT/iolat-static" ] || make -s OUT="$OUT" "$OUT/iolat-static" >"$WORK/static.log" 2>&1 ||
	fail "make $OUT/iolat-static failed: $(tail -3 "$WORK/static.log")"

cat >"$WORK/guest.sh" <<EOF
READS=$READS WRITES=$WRITES READERS=$READERS AREADS=$AREADS DEPTH=$DEPTH
EOF
cat >>"$WORK/guest.sh" <<'EOF'
set +e
for a in mkdir grep kill seq wc dd sync sleep; do busybox ln -sf busybox /bin/$a; done
mkdir -p /tmp
wait_for() {
	for i in $(seq 1 300); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
	echo "IOLAT-ERROR: no '$2' in $1"
	return 1
}
mark start
iolat trace -d vda --max-rate 0 -w /tmp/g.trace 2>/tmp/g.err &
tp=$!
wait_for /tmp/g.err Tracing
dio read /dev/vda $READS 4096 >/dev/null || echo "IOLAT-ERROR: dio read"
dio write /dev/vda $WRITES 8192 >/dev/null || echo "IOLAT-ERROR: dio write"
echo 4 >/sys/block/vda/queue/nr_requests || echo "IOLAT-ERROR: nr_requests"
# A task waiting for a request holds the rest of its batch: only its
# current bio has been queued (Q). So several tasks wait at once.
pids=
for i in $(seq 1 $READERS); do
	dio aread /dev/vda $AREADS 4096 $DEPTH $DEPTH >/dev/null &
	pids="$pids $!"
done
for p in $pids; do wait $p || echo "IOLAT-ERROR: dio aread"; done
kill -INT $tp
wait $tp || echo "IOLAT-ERROR: guest trace exited with $?"
sed 's/^/IOLAT-GTRACE: /' /tmp/g.err
mark traced
echo "IOLAT-TRACE-BYTES: $(wc -c </tmp/g.trace)"
dd if=/tmp/g.trace of=/dev/vdb bs=65536 conv=sync 2>/dev/null && sync ||
	echo "IOLAT-ERROR: dump"
EOF

# The host's own view, no guest agent: serve with each VM's qemu calls
# (syscall_time) beside its block I/O, scraped when every guest is held at
# "start" and at "traced", between which the traces run.
PORT=$(free_port)
start_serve "$WORK/serve.log" --web.listen-address="127.0.0.1:$PORT" --maintenance.interval=100ms \
	--workloads.labels=op --workloads.metrics=device_time,bytes,syscall_time
scrape() { curl -sf "http://127.0.0.1:$PORT/metrics" >"$WORK/$1.m" || fail "scrape $1"; }

# The guests boot; at "start" the host begins tracing each qemu.
for vm in "${VMS[@]}"; do
	VM_AIO=${AIO[$vm]}
	# qemu makes the -device disks before the -drive if=virtio one: this
	# is the guest's vda, and the disk the trace comes back on its vdb.
	VM_DEVICES=() VM_NDISKS=0
	vm_add_disk virtio "${DEV[$vm]}"
	vm_start "$vm" "${VMCG[$vm]}" "${DUMP[$vm]}" "$WORK/guest.sh" "${LOG[$vm]}"
done
declare -A HPID
for vm in "${VMS[@]}"; do
	vm_wait_mark "$vm" "${LOG[$vm]}" start 120
	"$IOLAT" trace --syscalls -p "${VM_PIDS[$vm]}" --max-rate 0 -w "$WORK/host-$vm.trace" \
		2>"$WORK/host-$vm.err" &
	HPID[$vm]=$!
	on_exit "kill -INT ${HPID[$vm]} 2>/dev/null"
	wait_for_line "$WORK/host-$vm.err" Tracing 10 || fail "host trace of $vm: $(cat "$WORK/host-$vm.err")"
done
after_pass "http://127.0.0.1:$PORT/metrics"
scrape start
vms_resume
for vm in "${VMS[@]}"; do
	vm_wait_mark "$vm" "${LOG[$vm]}" traced 300
	kill -INT "${HPID[$vm]}"
	wait "${HPID[$vm]}" || fail "host trace of $vm exited with $?: $(cat "$WORK/host-$vm.err")"
done
scrape traced
vms_resume
for vm in "${VMS[@]}"; do
	vm_wait "$vm" "${LOG[$vm]}" 120
	grep -q IOLAT-ERROR "${LOG[$vm]}" && vm_console_fail "$vm" "${LOG[$vm]}" "its commands failed"
	bytes=$(sed -n 's/^IOLAT-TRACE-BYTES: //p' "${LOG[$vm]}" | tr -d '\r')
	[ -n "$bytes" ] || vm_console_fail "$vm" "${LOG[$vm]}" "no trace size"
	# Direct: what qemu wrote, not a page cached before it.
	dd if="${DUMP[$vm]}" iflag=direct bs=64K status=none | head -c "$bytes" >"$WORK/guest-$vm.trace"
	[ "$(stat -c %s "$WORK/guest-$vm.trace")" = "$bytes" ] ||
		fail "$vm: $bytes bytes of trace on ${DUMP[$vm]}, $(stat -c %s "$WORK/guest-$vm.trace") read back"
	grep IOLAT-GTRACE "${LOG[$vm]}" | tr -d '\r' | sed "s/^/$vm guest: /"
	sed "s/^/$vm host: /" "$WORK/host-$vm.err"
	"$IOLAT" trace --join "$WORK/guest-$vm.trace" "$WORK/host-$vm.trace" --json \
		>"$WORK/join-$vm.json" 2>"$WORK/join-$vm.err" || fail "join $vm: $(cat "$WORK/join-$vm.err")"
	"$IOLAT" trace --join "$WORK/guest-$vm.trace" "$WORK/host-$vm.trace" --summary |
		sed "s/^/$vm: /"
	"$IOLAT" trace -r "$WORK/host-$vm.trace" --json >"$WORK/host-$vm.json" 2>/dev/null ||
		fail "cannot read $WORK/host-$vm.trace"
done

# serve's per-VM calls between the two scrapes are the calls the host trace
# saw, exactly, by op; the slow VM's reads all took longer than the 2.5 ms
# bound (the delay is 4 ms), the calm VM's (nearly) all less; the native
# VM's qemu made none (io_submit: not timed there).
python3 - "$WORK" "$DELAY_US" <<'PY' || fail "serve's per-VM calls"
import json, re, sys
work, delay = sys.argv[1], int(sys.argv[2])

def samples(name):
    out = {}
    for line in open(f"{work}/{name}.m"):
        m = re.match(r'iolat_workload_syscall_latency_seconds_(bucket|count)\{(.*)\} (\S+)$', line)
        if m:
            labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
            if labels.get("kind") == "vm":
                key = (labels["workload"], labels["op"], m.group(1), labels.get("le"))
                out[key] = float(m.group(3))
    return out

a, b = samples("start"), samples("traced")
delta = lambda *k: b.get(k, 0) - a.get(k, 0)
for vm in ("slow", "calm", "native"):
    calls = {"read": 0, "write": 0}
    for line in open(f"{work}/host-{vm}.json"):
        o = json.loads(line)
        if o["type"] == "syscall" and o["syscall"] in ("pread64", "preadv", "pwrite64", "pwritev"):
            calls["write" if o["syscall"].startswith("pwrite") else "read"] += 1
    got = {op: delta("gh" + vm, op, "count", None) for op in calls}
    print(f"{vm}: serve counted {got} qemu calls, the host trace {calls}")
    assert got == calls, (vm, got, calls)
    fast = delta("gh" + vm, "read", "bucket", "0.0025")
    if vm == "slow":
        assert calls["read"] > 0 and fast == 0, (vm, fast)
    elif vm == "calm":
        assert calls["read"] > 0 and fast >= 0.9 * calls["read"], (vm, fast, calls)
    else:
        assert calls == {"read": 0, "write": 0}, calls
PY

IMAGES="slow=rdev:$(stat -c '%t:%T' "${DEV[slow]}") native=rdev:$(stat -c '%t:%T' "${DEV[native]}") calm=file:$(stat -c '%i' "${DEV[calm]}"),$(cat "/sys/class/block/${FSDEV#/dev/}/dev")"
python3 - "$WORK" "$DELAY_US" "$READS" "$WRITES" "$((READERS * AREADS))" "$IMAGES" <<'PY' || fail "the join's chains"
import json, sys
work, delay, reads, writes, areads = sys.argv[1], int(sys.argv[2]) * 1000, *map(int, sys.argv[3:6])
images = dict(x.split("=", 1) for x in sys.argv[6].split())
SPANS = ["guest_queue", "virtio_in", "host_fs", "host_block", "host_device", "host_return", "virtio_out"]

def load(vm):
    chains, summary = [], None
    for line in open(f"{work}/join-{vm}.json"):
        o = json.loads(line)
        if o["type"] == "chain":
            chains.append(o)
        else:
            summary = o
    return chains, summary

def pct(v, q):
    v = sorted(v)
    return v[int(q * (len(v) - 1))] if v else None

def p50(v):
    return pct(v, 0.5)

res = {}
for vm in ("slow", "calm", "native"):
    chains, s = load(vm)
    k = s["clock"]
    bound = k["bound_ns"]
    # Every request the guest made on vda, read or write, is in its trace.
    want = reads + writes + areads
    assert s["guest_requests"] >= want, (vm, s["guest_requests"], want)
    assert s["matched"] >= 0.99 * s["guest_requests"], (vm, s)
    # The image found: the slow VM's block device; the calm VM's file, its
    # bios on the file system's disk.
    kind, what = images[vm].split(":", 1)
    if kind == "rdev":
        major, minor = (int(x, 16) for x in what.split(":"))
        assert s.get("image_rdev") == f"{major}:{minor}", (vm, s, what)
    else:
        ino, fsdev = what.split(",")
        assert "image_rdev" not in s and s["image_ino"] == int(ino), (vm, s, what)
        # Its reads of never written (fallocated) blocks, past its first
        # 512 KiB, queue no host bio: ext4 returns zeros. Every other chain's
        # bios are on its disk.
        assert all(c["host_dev"] == fsdev for c in chains if c["host_bios"]), (vm, fsdev, {c["host_dev"] for c in chains})
        unwritten = [c for c in chains if not c["host_bios"]]
        assert unwritten and all(c["op"] == "read" and c["offset"] >= 512 << 10 for c in unwritten), vm
        print(f"{vm}: {sum(1 for c in chains if not c['host_bios'])} reads served with no host bio (unwritten extents)")
    for c in chains:
        sp = c["spans_ns"]
        assert sum(sp.values()) == c["q2c_ns"], (vm, c)
        for name in SPANS:
            floor = -bound if name.startswith("virtio") else 0
            assert sp[name] >= floor, (vm, name, sp[name], bound, c)
        assert c["sys_offset"] <= c["offset"] and c["offset"] + c["bytes"] <= c["sys_offset"] + c["sys_bytes"], c
    # qemu's aio=native submits with io_submit: each request matched to the
    # host bio at its sector of the image; the others to a pread or pwrite.
    calls = {c["syscall"] for c in chains}
    # (a request of several segments is a preadv or pwritev.)
    if vm == "native":
        assert calls == {None}, (vm, calls)
    else:
        assert calls and calls <= {"pread64", "pwrite64", "preadv", "pwritev"}, (vm, calls)
    # The phases, by the guest's clock: reads, writes, then the queued reads.
    first_w = min(c["guest_q_ns"] for c in chains if c["op"] == "write")
    last_w = max(c["guest_c_ns"] for c in chains if c["op"] == "write")
    seq_reads = [c for c in chains if c["op"] == "read" and c["guest_c_ns"] < first_w]
    seq_writes = [c for c in chains if c["op"] == "write"]
    queued = [c for c in chains if c["op"] == "read" and c["guest_q_ns"] > last_w]
    assert len(seq_reads) >= 0.99 * reads and len(seq_writes) >= 0.99 * writes, (len(seq_reads), len(seq_writes))
    assert len(queued) >= 0.99 * areads, len(queued)
    res[vm] = {kind: {n: p50([c["spans_ns"][n] for c in cs]) for n in SPANS}
               for kind, cs in (("reads", seq_reads), ("writes", seq_writes), ("queued", queued))}
    res[vm]["queued_p90"] = {n: pct([c["spans_ns"][n] for c in queued], 0.9) for n in SPANS}
    res[vm]["reads_p90"] = {n: pct([c["spans_ns"][n] for c in seq_reads], 0.9) for n in SPANS}
    print(f"{vm}: {s['matched']} of {s['guest_requests']} guest requests matched; clock offset "
          f"{k['offset_ns']} ns, drift {k['drift_ppm']:.3f} ppm, bound +-{bound / 1e3:.1f} us "
          f"from {k['pairs']} pairs")
    for kind, what in (("reads", "reads, p50"), ("writes", "writes, p50"), ("queued", "queued, p50"),
                       ("queued_p90", "queued, p90")):
        print(f"  {what:12} (ms): " + " ".join(f"{n}={res[vm][kind][n] / 1e6:.3f}" for n in SPANS))

# The delay: in the slow VM's reads' host-device span, by at least the
# delay over the calm VM's, and in no other span of either VM, nor in
# writes (slowfs delays reads only).
slow, calm = res["slow"], res["calm"]
assert slow["reads"]["host_device"] >= delay, slow["reads"]
assert calm["reads"]["host_device"] < delay / 2, calm["reads"]
assert slow["reads"]["host_device"] - calm["reads"]["host_device"] >= 0.9 * delay
for n in SPANS:
    if n != "host_device":
        assert abs(slow["reads"][n] - calm["reads"][n]) < delay / 2, (n, slow["reads"][n], calm["reads"][n])
    assert slow["writes"][n] < delay / 2 and calm["writes"][n] < delay / 2, (n, slow["writes"], calm["writes"])
# The guest-side queue: 8 readers on 4 requests wait in the guest, the
# slower ones (p90) for several reads' service time (the slow VM's, each
# at least the delay), while the host's spans stay those of single reads.
assert slow["queued_p90"]["guest_queue"] >= 2 * delay, slow["queued_p90"]
assert delay <= slow["queued"]["host_device"] < 2 * delay, slow["queued"]
assert calm["queued_p90"]["guest_queue"] > 4 * calm["reads_p90"]["guest_queue"], (calm["queued_p90"], calm["reads_p90"])
assert calm["queued"]["host_device"] < delay / 2, calm["queued"]
PY
echo "ok: guest and host traces joined; the host delay in host_device only, the guest queue in guest_queue"
