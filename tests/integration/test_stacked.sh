# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Stacked block devices and real drivers, in qemu/TCG guests of Debian's
# 5.10, 6.1 and 6.12 kernels (IOLAT_KERNELS picks others): dm-linear (what
# LVM builds) on a virtio disk, dm-crypt on another, md raid1 over an NVMe
# and a SCSI disk
# (qemu's nvme and virtio-scsi), all of it driven by real direct I/O from
# two cgroups. Checked, on every layer:
#   - `hist -D` counts each device's reads and writes exactly as the
#     device's own /sys/block/X/stat does, the dm and md devices at the bio
#     layer and their legs at the request layer, and names which device
#     sits on which; `hist` without -D counts the top layers only, so no
#     I/O is counted twice;
#   - `check` draws the stacks, each disk with the names it is known by;
#   - `serve` charges each cgroup exactly its own I/O at the dm layer and
#     on its leg, and says which device is on which (iolat_block_stack_info)
#     and what each is called (iolat_block_volume_info: the dm-linear one is
#     named as LVM names a volume; the md array's name; the NVMe disk's
#     serial, namespace and wwid in iolat_block_device_info).
# And two devices whose numbers are known:
#   - a GPT disk (partitioned here with sfdisk; the host kernel reads no
#     partition tables, the guest's does): I/O on its second partition
#     counts for the disk, as the partition's own stat says, and `-d` with
#     the partition means the disk;
#   - null_blk completing every request after exactly 2 ms (irqmode=2,
#     completion_nsec), one request at a time (hw_queue_depth=1) behind
#     mq-deadline: the median device time lies in the bucket holding 2 ms,
#     and with two readers at once the total time (which includes the wait
#     in the scheduler) is about twice the device time.
# And: `top` counts each I/O once (top layers only); `trace` follows the dm
# reads and raid1 writes through block_bio_remap to each leg's request, one
# chain each; scsi_debug's injected medium errors are counted by op exactly
# and named by `trace`.
# On each kernel of the matrix (IOLAT_KERNELS, as test_kernels.sh), one
# guest each: this script runs itself once per kernel, as many at once as
# GUEST_JOBS says (tests/vm/guest.sh's VM_JOBS: the host's CPUs; a TCG
# guest keeps one busy), each run's output printed whole, in the matrix's
# order, and the first failure's status in that order the test's.
if [ -z "${STACKED_ONE:-}" ]; then
	# The binary every run puts in its guest, linked once here: runs side
	# by side would otherwise link it at once (their own make finds it
	# made; a failure is theirs to report).
	make -s OUT="${OUT:-build}" "${OUT:-build}/iolat-static" >/dev/null 2>&1
	runs=$(mktemp -d /tmp/iolat-stacked.XXXXXX) || exit 1
	trap 'rm -rf "$runs"' EXIT
	kernels=${IOLAT_KERNELS:-5.10 6.1 6.12}
	declare -A pid
	# Started newest first: under TCG a newer kernel's guest takes longest.
	for k in $(tr ' ' '\n' <<<"$kernels" | sort -rV); do
		while [ "$(jobs -rp | wc -l)" -ge "${GUEST_JOBS:-$(nproc)}" ]; do wait -n; done
		VM_SERIES=$k STACKED_ONE=1 bash "$0" >"$runs/$k" 2>&1 &
		pid[$k]=$!
	done
	rc=0
	for k in $kernels; do
		wait "${pid[$k]}"
		r=$?
		echo "=== $k"
		cat "$runs/$k"
		[ $rc -ne 0 ] || rc=$r
	done
	exit $rc
fi
source tests/integration/lib.sh
source tests/vm/guest.sh
vm_prepare
vm_add_tools

# $OUT's objects linked as `make STATIC=1` links them: no second compile.
make -s OUT="$OUT" "$OUT/iolat-static" >"$WORK/static.log" 2>&1 ||
	fail "make $OUT/iolat-static failed: $(tail -3 "$WORK/static.log")"
vm_add_program "$PWD/$OUT/iolat-static" /bin/iolat
# Three virtio disks (one with a GPT), nvme0n1, sda (virtio-scsi).
command -v sfdisk >/dev/null || skip "sfdisk (package fdisk) is not installed"
truncate -s 32M "$WORK/gpt.img"
printf 'label: gpt\n,8MiB\n,\n' | sfdisk -q "$WORK/gpt.img" || fail "sfdisk"
make_loop 32 "$WORK/gpt.img"
BOOT=$LOOP
for kind in virtio virtio nvme scsi; do
	make_loop 32
	vm_add_disk "$kind" "$LOOP"
done
make_cgroup stacked

cat >"$WORK/guest.sh" <<'EOF'
set +e
for a in mkdir sed grep kill seq cut head wc ip wget basename; do busybox ln -sf busybox /bin/$a; done
mkdir -p /tmp
ip link set lo up
export DM_DISABLE_UDEV=1
t() { echo "IOLAT-GUEST: $(cut -d' ' -f1 /proc/uptime) s: $*"; }
err() { echo "IOLAT-ERROR: $*"; }
tag() { sed "s/^/IOLAT-$1: /" "$2"; }
for m in dm-mod dm-crypt ecb xts aes_generic md-mod raid1 nvme virtio_scsi sd_mod; do
	load $m || err "load $m"
done
load null_blk queue_mode=2 irqmode=2 completion_nsec=2000000 hw_queue_depth=1 \
	submit_queues=1 nr_devices=1 gb=1 || err "load null_blk"
echo mq-deadline >/sys/block/nullb0/queue/scheduler || err "nullb0 scheduler"
for d in vda vdb vdc nvme0n1 sda nullb0; do
	i=0
	while [ ! -b /dev/$d ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	[ -b /dev/$d ] || err "no /dev/$d"
done
# Which virtio disk is which depends on PCI slots: the GPT one has vdX2.
V1= V2= G=
for d in vda vdb vdc; do
	if [ -e /sys/block/$d/${d}2 ]; then G=$d; elif [ -z "$V1" ]; then V1=$d; else V2=$d; fi
done
[ -n "$G" ] || err "no partitioned virtio disk"
S=$(cat /sys/block/$V1/size)
# Named as LVM names a volume: LV "lin" of VG "iolat-vg", its '-' doubled.
dmsetup create iolat--vg-lin --uuid LVM-0123456789abcdef0123456789abcdefFEDCBA9876543210FEDCBA9876543210 \
	--table "0 $S linear /dev/$V1 0" || err "dmsetup lin"
dmsetup create cry --table "0 $(cat /sys/block/$V2/size) crypt aes-xts-plain64 $(seq -s '' 1 8 | sed 's/./&&&&&&&&/g') 0 /dev/$V2 0" ||
	err "dmsetup cry"
mdadm --create /dev/md0 --level=1 --raid-devices=2 --assume-clean --run --metadata=1.2 \
	/dev/nvme0n1 /dev/sda >/tmp/mdadm 2>&1 || { cat /tmp/mdadm; err "mdadm"; }
# md marks the array clean in its superblock 200 ms after the last write: a
# write on both legs at a moment this script does not choose. Not during it.
echo 600 >/sys/block/md0/md/safe_mode_delay || err "safe_mode_delay"
# The array's name as udev links it (no udev here).
rm -rf /dev/md && mkdir /dev/md && ln -s ../md0 /dev/md/data || err "/dev/md/data"
dm() { for d in /sys/block/dm-*; do [ "$(cat $d/dm/name)" = "$1" ] && basename $d; done; }
LIN=$(dm iolat--vg-lin) CRY=$(dm cry)
echo "IOLAT-NAMES: $LIN $CRY $V1 $V2 $G"
DEVS="$LIN $CRY md0 $V1 $V2 nvme0n1 sda"

CG=/sys/fs/cgroup
mount -t cgroup2 none $CG
echo +io >$CG/cgroup.subtree_control
mkdir $CG/tenant-a.service $CG/tenant-b.service
in_cgroup() { sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$@"; }
wait_for() {
	for i in $(seq 1 300); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
	err "no '$2' in $1"
}

iolat check >/tmp/check 2>&1 || err "iolat check"
tag check /tmp/check

iolat serve --workloads.labels=device,op --workloads.metrics=all --web.listen-address=127.0.0.1:9400 --maintenance.interval=100ms >/tmp/serve 2>&1 &
serve=$!
iolat hist -D -O --json >/tmp/histD 2>/tmp/histD.err &
histD=$!
iolat hist -O --json >/tmp/hist 2>/tmp/hist.err &
hist=$!
iolat top --once --json 30 >/tmp/top 2>/tmp/top.err &
top=$!
wait_for /tmp/serve "listening on"
wait_for /tmp/histD.err Tracing
wait_for /tmp/hist.err Tracing
wait_for /tmp/top.err Tracing
for d in $DEVS; do echo "IOLAT-FROM: $d $(cat /sys/block/$d/stat)"; done
in_cgroup $CG/tenant-a.service dio read /dev/$LIN 100 4096 >/dev/null || err "dio a"
in_cgroup $CG/tenant-b.service dio write /dev/$LIN 30 8192 >/dev/null || err "dio b"
in_cgroup $CG/tenant-a.service dio read /dev/$CRY 50 4096 >/dev/null || err "dio crypt read"
in_cgroup $CG/tenant-b.service dio write /dev/$CRY 20 4096 >/dev/null || err "dio crypt write"
in_cgroup $CG/tenant-a.service dio write /dev/md0 40 4096 >/dev/null || err "dio md write"
in_cgroup $CG/tenant-a.service dio read /dev/md0 60 4096 >/dev/null || err "dio md read"
for d in $DEVS; do echo "IOLAT-TO: $d $(cat /sys/block/$d/stat)"; done

# A whole maintenance pass after the I/O: the workloads are named.
passes() { wget -q -O - http://127.0.0.1:9400/metrics | sed -n 's/^iolat_maintenance_passes_total //p'; }
p0=$(passes)
for _ in $(seq 1 100); do [ "$(passes)" -ge $((p0 + 2)) ] && break; sleep 0.1; done
wget -q -O /tmp/metrics http://127.0.0.1:9400/metrics || err "scrape"
kill -INT $histD $hist $top
wait $histD $hist $top
grep -E '^iolat_(block_completions_total|workload_completions_total|block_stack_info|block_device_info|block_volume_info)' /tmp/metrics |
	sed 's/^/IOLAT-METRIC: /'
for d in nvme0n1 sda vda; do
	echo "IOLAT-MODEL: $d $(cat /sys/block/$d/device/model 2>/dev/null || echo unknown)"
done
echo "IOLAT-WWID: $(cat /sys/block/nvme0n1/wwid)"
kill -TERM $serve
wait $serve
tag histD /tmp/histD
tag hist /tmp/hist
tag serve /tmp/serve

# trace through the stacks: dm-linear reads, raid1 writes.
iolat trace --json >/tmp/trace 2>/tmp/trace.err &
pid=$!
wait_for /tmp/trace.err Tracing
dio read /dev/$LIN 20 4096 >/dev/null || err "dio trace lin"
dio write /dev/md0 10 4096 >/dev/null || err "dio trace md0"
sleep 0.5
kill -INT $pid
wait $pid
tag trace /tmp/trace
tag trace-ERR /tmp/trace.err
tag top /tmp/top

# Errors from a real driver: scsi_debug fails reads of sectors 4660-4669
# (opts=2: medium errors from medium_error_start, medium_error_count long).
load scsi_debug dev_size_mb=8 delay=0 opts=2 medium_error_start=4660 medium_error_count=10 ||
	err "load scsi_debug"
SD=
for i in $(seq 1 100); do
	for d in /sys/block/sd*; do
		[ "$(cat $d/device/model 2>/dev/null | cut -c1-9)" = scsi_debu ] && SD=${d##*/}
	done
	[ -n "$SD" ] && break
	sleep 0.1
done
echo "IOLAT-SD: $SD"
iolat hist -D -O --json -d $SD >/tmp/err 2>/tmp/err.err &
pid=$!
iolat trace --json -d $SD >/tmp/errtrace 2>/tmp/errtrace.err &
tpid=$!
wait_for /tmp/err.err Tracing
wait_for /tmp/errtrace.err Tracing
echo "IOLAT-FROM: $SD $(cat /sys/block/$SD/stat)"
# 4 KiB reads from sector 0: reads 582 and 583 cover sectors 4656-4671.
echo "IOLAT-EIO: $(dio read /dev/$SD 600 4096 --eio-ok)"
echo "IOLAT-TO: $SD $(cat /sys/block/$SD/stat)"
sleep 0.5
kill -INT $pid $tpid
wait $pid $tpid
tag err /tmp/err
tag errtrace /tmp/errtrace
# A partition, and a device of known latency.
iolat hist -O --json -d ${G}2 >/tmp/part 2>/tmp/part.err &
part=$!
wait_for /tmp/part.err Tracing
for d in $G $G/${G}2; do echo "IOLAT-FROM: ${d#*/} $(cat /sys/block/$d/stat)"; done
dio read /dev/${G}2 70 4096 >/dev/null || err "dio ${G}2"
for d in $G $G/${G}2; do echo "IOLAT-TO: ${d#*/} $(cat /sys/block/$d/stat)"; done
kill -INT $part
wait $part
tag part /tmp/part
iolat hist -D -O --json -d nullb0 >/tmp/null1 2>/tmp/null1.err &
pid=$!
wait_for /tmp/null1.err Tracing
dio read /dev/nullb0 100 4096 >/dev/null || err "dio nullb0"
kill -INT $pid
wait $pid
tag null1 /tmp/null1
iolat hist -D -O --json -d nullb0 >/tmp/null2 2>/tmp/null2.err &
pid=$!
wait_for /tmp/null2.err Tracing
dio read /dev/nullb0 100 4096 >/dev/null &
r1=$!
# The second reader in the middle of the 1 GiB disk: two readers of
# neighbouring blocks (both from block 0, one a block behind) would have
# their requests merged where they wait, in the scheduler at queue depth 1,
# and make fewer than 200 (seen: 199, a guest slowed by a busy host).
dd if=/dev/nullb0 of=/dev/null bs=4096 count=100 skip=131072 iflag=direct 2>/dev/null ||
	err "dio nullb0 (2)"
wait $r1 || err "dio nullb0 (1)"
kill -INT $pid
wait $pid
tag null2 /tmp/null2
EOF

vm_start stacked "$CG" "$BOOT" "$WORK/guest.sh" "$WORK/console"
vm_wait stacked "$WORK/console" 300
L=$WORK/console.txt
tr -d '\r' <"$WORK/console" >"$L"
tagged() { sed -n "s/^IOLAT-$1: //p" "$L"; }
if grep '^IOLAT-ERROR' "$L"; then
	grep -v '^IOLAT-\(METRIC\|hist\|histD\|check\):' "$L" | tail -n 60 >&2
	fail "the guest's commands failed"
fi
read -r LIN CRY V1 V2 G < <(tagged NAMES)
echo "guest: dm-linear $LIN on $V1, dm-crypt $CRY on $V2, md0 (raid1) on nvme0n1 and sda; GPT on $G"
tagged check | sed -n '/^Stacks/,/^$/p'

# delta DEV FIELD: the change of the device's stat FIELD over the I/O.
delta() {
	local from to
	from=$(tagged FROM | awk -v d="$1" -v f="$2" '$1 == d { print $(f + 1) }')
	to=$(tagged TO | awk -v d="$1" -v f="$2" '$1 == d { print $(f + 1) }')
	echo $((to - from))
}
tagged histD >"$WORK/histD.json"
tagged hist >"$WORK/hist.json"

# Every layer counts as its device does.
for d in $LIN $CRY md0 $V1 $V2 nvme0n1 sda; do
	assert_eq "$d: reads" "$(delta "$d" 1)" "$(jget "$WORK/histD.json" "s('$d','read')['ios']")"
	assert_eq "$d: writes" "$(delta "$d" 5)" "$(jget "$WORK/histD.json" "s('$d','write')['ios']")"
done
echo "ok: every layer's reads and writes as its /sys/block/X/stat says"
assert_eq "$LIN reads done" 100 "$(delta "$LIN" 1)"
assert_eq "md0 writes done" 40 "$(delta md0 5)"
# A raid1 write is one write on md0 and one on each leg (md's own metadata
# writes, if any, land on both legs alike).
assert_eq "raid1 legs' writes" "$(delta nvme0n1 5)" "$(delta sda 5)"
[ "$(delta nvme0n1 5)" -ge 40 ] || fail "raid1: $(delta nvme0n1 5) writes on a leg, fewer than md0's 40"
echo "ok: raid1 writes on both legs"

# Layers and stacks named.
stack() { jget "$WORK/histD.json" "' '.join([s('$1','$2')['layer'], ','.join(sorted(s('$1','$2')['on'])) or '-', ','.join(s('$1','$2')['under']) or '-'])"; }
assert_eq "$LIN: layer, on, under" "bio $V1 -" "$(stack "$LIN" read)"
assert_eq "$V1: layer, on, under" "request - $LIN" "$(stack "$V1" read)"
assert_eq "md0: layer, on, under" "bio nvme0n1,sda -" "$(stack md0 write)"
tagged check | grep -q "^  md0 (bio layer)" || fail "check draws no md0 stack"
tagged check | grep -q "^      \`- nvme0n1 (request layer)" || fail "check: nvme0n1 not under md0"
# Real drivers: the kernel stamps NVMe and SCSI requests, and check says so.
for d in nvme0n1 sda; do
	tagged check | grep -Eq "^  $d .*request-based.*kernel timestamps \(fast path\)" ||
		fail "check: $d not on the fast path: $(tagged check | grep "^  $d ")"
done
echo "ok: layers and stacks named in hist -D and check; NVMe and SCSI on the fast path"

# Without -D: the top layers only, each I/O once.
top_reads=$(($(delta "$LIN" 1) + $(delta "$CRY" 1) + $(delta md0 1)))
top_writes=$(($(delta "$LIN" 5) + $(delta "$CRY" 5) + $(delta md0 5)))
assert_eq "hist: reads, top layers" $top_reads "$(jget "$WORK/hist.json" "s(None,'read')['ios']")"
assert_eq "hist: writes, top layers" $top_writes "$(jget "$WORK/hist.json" "s(None,'write')['ios']")"
echo "ok: hist without -D counts the top layers only"

# Per workload through dm: each tenant its own I/O, on dm and on the leg.
tagged METRIC >"$WORK/metrics"
wl() { awk -v k="iolat_workload_completions_total{device=\"$1\",op=\"$2\",kind=\"service\",workload=\"$3\"}" \
	'$1 == k { print $2 }' "$WORK/metrics"; }
for d in "$LIN" $V1; do
	assert_eq "$d: tenant-a reads" 100 "$(wl "$d" read tenant-a)"
	assert_eq "$d: tenant-b writes" 30 "$(wl "$d" write tenant-b)"
	assert_eq "$d: tenant-b reads" "" "$(wl "$d" read tenant-b)"
done
grep -q "^iolat_block_stack_info{device=\"$V1\",upper=\"$LIN\"} 1$" "$WORK/metrics" ||
	fail "no iolat_block_stack_info for $V1 under $LIN: $(grep stack_info "$WORK/metrics")"
grep -q '^iolat_block_stack_info{device="sda",upper="md0"} 1$' "$WORK/metrics" ||
	fail "no iolat_block_stack_info for sda under md0"
echo "ok: two cgroups through dm-linear each charged their own I/O on dm and its leg; stacks in serve"
# Each disk's model as the guest's sysfs has it (trimmed; qemu pads SCSI's).
for d in nvme0n1 sda vda; do
	want=$(tagged MODEL | awk -v d=$d '$1 == d { $1 = ""; sub(/^ +/, ""); sub(/ +$/, ""); print }')
	[ -n "$want" ] || fail "no model line for $d from the guest"
	grep -q "^iolat_block_device_info{device=\"$d\",model=\"$want\",rotational=\"[01]\"," "$WORK/metrics" ||
		fail "$d: model '$want' not in iolat_block_device_info: $(grep device_info "$WORK/metrics")"
done
echo "ok: iolat_block_device_info names each disk's model (nvme0n1, sda; vda has none)"
# The names operators know: the NVMe disk's serial (vm_add_disk's), its
# namespace and wwid; the LVM volume's VG and LV from its escaped dm name;
# the md array's name; each in the series and in check's tree.
wwid=$(tagged WWID)
[ -n "$wwid" ] || fail "no wwid for nvme0n1 in the guest's sysfs"
info() { grep "^iolat_block_$1_info{device=\"$2\"," "$WORK/metrics" | sed 's/model="[^"]*",rotational="[01]",//'; }
assert_eq "nvme0n1 names" \
	"iolat_block_device_info{device=\"nvme0n1\",serial=\"iolat3\",wwid=\"$wwid\",nvme_nsid=\"1\"} 1" \
	"$(info device nvme0n1)"
assert_eq "$LIN names" \
	"iolat_block_volume_info{device=\"$LIN\",dm_name=\"iolat--vg-lin\",lvm_vg=\"iolat-vg\",lvm_lv=\"lin\",md_name=\"\"} 1" \
	"$(info volume "$LIN")"
assert_eq "$CRY names" \
	"iolat_block_volume_info{device=\"$CRY\",dm_name=\"cry\",lvm_vg=\"\",lvm_lv=\"\",md_name=\"\"} 1" \
	"$(info volume "$CRY")"
assert_eq "md0 names" \
	"iolat_block_volume_info{device=\"md0\",dm_name=\"\",lvm_vg=\"\",lvm_lv=\"\",md_name=\"data\"} 1" \
	"$(info volume md0)"
assert_eq "$V1: no volume" "" "$(info volume "$V1")"
assert_eq "check: $LIN" "  $LIN (bio layer) [dm iolat--vg-lin, LVM iolat-vg/lin]" "$(tagged check | grep "^  $LIN (")"
assert_eq "check: md0" "  md0 (bio layer) [md data]" "$(tagged check | grep "^  md0 (")"
assert_eq "check: nvme0n1" "      \`- nvme0n1 (request layer) [nsid 1, serial iolat3, wwid $wwid]" \
	"$(tagged check | grep "^      \`- nvme0n1 ")"
echo "ok: the LVM volume's VG and LV, dm and md names, NVMe serial, namespace and wwid, in serve and check"

# The partition: ${G}2's reads are $G's, exactly, and -d ${G}2 names $G.
tagged part >"$WORK/part.json"
assert_eq "${G}2 reads done" 70 "$(delta "${G}2" 1)"
assert_eq "$G: reads (partition ${G}2's I/O)" "$(delta "$G" 1)" "$(jget "$WORK/part.json" "s(None,'read')['ios']")"
assert_eq "$G reads = ${G}2 reads" "$(delta "${G}2" 1)" "$(delta "$G" 1)"
echo "ok: I/O on partition ${G}2 counted for $G, exactly (-d ${G}2)"

# null_blk: 2 ms per request, one at a time.
tagged null1 >"$WORK/null1.json"
tagged null2 >"$WORK/null2.json"
assert_eq "null_blk reads" 100 "$(jget "$WORK/null1.json" "s('nullb0','read')['ios']")"
python3 - "$WORK/null1.json" "$WORK/null2.json" <<'PY' || fail "null_blk latencies"
import json, sys
def series(path):
    d = json.loads([l for l in open(path) if l.strip()][-1])
    return [x for x in d["series"] if x["disk"] == "nullb0" and x["op"] == "read"][0]
one, two = series(sys.argv[1]), series(sys.argv[2])
dev = one["device"]
# The bucket holding the median holds 2 ms, or lies just above it: timer
# slack only adds, and in a TCG guest it is not small (medians of 2.09 to
# 2.23 ms seen, the most on 6.12 with the host busy).
acc, half, slot = 0, dev["count"] / 2, None
for s in dev["slots"]:
    acc += s["count"]
    if acc >= half:
        slot = s
        break
print(f"one reader: device p50 {dev['p50_ns'] / 1e6:.3f} ms in [{slot['lo']}, {slot['hi']}] ns")
assert slot["lo"] <= 2_000_000 <= slot["hi"] or 2_000_000 <= slot["lo"] < 2_500_000, slot
d2, t2 = two["device"], two["total"]
ratio = t2["mean_ns"] / d2["mean_ns"]
print(f"two readers, queue depth 1: device mean {d2['mean_ns'] / 1e6:.3f} ms, total mean {t2['mean_ns'] / 1e6:.3f} ms (x{ratio:.2f})")
assert two["ios"] == 200, two["ios"]
assert 2_000_000 <= d2["p50_ns"] < 2_500_000, d2["p50_ns"]
assert 1.5 <= ratio <= 2.3, ratio
PY
echo "ok: null_blk's 2 ms in the median's bucket; total time about twice device time at queue depth 1 with two readers"

# trace: each dm-linear read and raid1 write is a chain: the bio on the top
# device, and the bio it was remapped to on each leg with its request's
# stages (D, C), linked by parent, the leg's completion inside the parent's.
tagged trace >"$WORK/trace.json"
python3 - "$WORK/trace.json" "$LIN" "$V1" <<'PY' || fail "trace through remaps: $(tagged trace-ERR)"
import json, sys
path, lin, leg = sys.argv[1:]
rs = [r for r in (json.loads(l) for l in open(path) if l.startswith("{")) if r["type"] == "io"]
by_id = {r["id"]: r for r in rs}
def chains(disk, rwbs):
    tops = [r for r in rs if r["disk"] == disk and r["rwbs"].startswith(rwbs) and not r["remapped"]]
    kids = {t["id"]: [r for r in rs if r["remapped"] and r["parent"] == t["id"]] for t in tops}
    return tops, kids
tops, kids = chains(lin, "R")
assert len(tops) == 20, len(tops)
for t in tops:
    (k,) = kids[t["id"]]
    assert k["disk"] == leg and k["bytes"] == 4096 and k["ts_ns"]["d"] and k["ts_ns"]["c"], k
    assert t["ts_ns"]["q"] <= k["ts_ns"]["q"] <= k["ts_ns"]["d"] < k["ts_ns"]["c"] <= t["ts_ns"]["c"], (t, k)
tops, kids = chains("md0", "W")
assert len(tops) == 10, len(tops)
for t in tops:
    legs = sorted(k["disk"] for k in kids[t["id"]])
    assert legs == ["nvme0n1", "sda"], (t, kids[t["id"]])
    for k in kids[t["id"]]:
        assert k["ts_ns"]["d"] and k["ts_ns"]["c"] <= t["ts_ns"]["c"], (t, k)
print(f"trace: {len(rs)} records; 20 dm reads and 10 raid1 writes each linked to their legs' I/O")
PY
echo "ok: trace follows dm-linear reads and raid1 writes through their remaps to the legs' requests"

# top, per workload, counts the top layers only.
tagged top >"$WORK/top.json"
python3 - "$WORK/top.json" "$top_reads" "$top_writes" <<'PY' || fail "top counted the lower layers too: $(cat "$WORK/top.json")"
import json, sys
top = json.loads([l for l in open(sys.argv[1]) if l.strip()][-1])
reads = sum(w["reads"] for w in top["workloads"])
writes = sum(w["writes"] for w in top["workloads"])
assert (reads, writes) == (int(sys.argv[2]), int(sys.argv[3])), (reads, writes)
PY
echo "ok: top counts each I/O once, at the top layer"

# Medium errors from scsi_debug: counted by op exactly, shown by trace.
SD=$(tagged SD)
tagged err >"$WORK/err.json"
tagged errtrace >"$WORK/errtrace.json"
failed=$(tagged EIO | awk '{ print $2 }')
[ -n "$failed" ] || { grep -E "IOLAT-(EIO|SD|err)|scsi|sd 2:|medium|I/O error" "$L" | head -30 >&2; }
assert_eq "$SD: reads that failed (dio)" 2 "$failed"
assert_eq "$SD: reads (diskstats)" "$(delta "$SD" 1)" "$(jget "$WORK/err.json" "s('$SD','read')['ios']")"
assert_eq "$SD: read errors" 2 "$(jget "$WORK/err.json" "s('$SD','read')['errors']")"
assert_eq "$SD: write errors" 0 "$(jget "$WORK/err.json" "s('$SD','write')['errors']")"
python3 - "$WORK/errtrace.json" <<'PY' || fail "trace: the failed reads"
import json, sys
rs = [r for r in (json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")) if r["type"] == "io"]
bad = sorted((r["sector"], r["error_name"]) for r in rs if r["error"])
assert [s for s, _ in bad] == [4656, 4664], bad
assert all(name for _, name in bad), bad
print(f"trace: failed reads at sectors {[s for s, _ in bad]}: {bad[0][1]}")
PY
echo "ok: scsi_debug's medium errors counted exactly by op, and named by trace"
