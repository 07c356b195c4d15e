# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Buffered writes flushed later by writeback count where the kernel charges
# them, not to the flusher: iolat's bytes per cgroup equal the kernel's own
# per-cgroup accounting of the disk (v1 blkio.throttle.io_service_bytes, v2
# io.stat). On v1 (this machine) the kernel charges writeback to the root;
# with cgroup writeback on v2 to the cgroup that dirtied the pages. Direct
# writes from the same cgroup are charged to it in both.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 is not installed"

make_loop 128
dev=$LOOP
disk=${dev#/dev/}
majmin=$(cat "/sys/class/block/$disk/dev")
# No lazy initialisation: no background writes of its own during the test.
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$dev" || fail "mkfs.ext4"
mkdir "$WORK/mnt"
mount -o noinit_itable "$dev" "$WORK/mnt" || fail "mount"
on_exit "umount $WORK/mnt"
make_cgroup wb
cg=$CG
root=$(cgroup_root)
# v1 keeps blkio.throttle.* stats only for disks blk-throttle is active on
# (since 6.x it starts on a disk's first limit): a limit no write reaches.
# Without it the kernel's side reads 0, unless an earlier test throttled a
# loop device of the same number.
if [ -f "$cg/blkio.throttle.write_bps_device" ]; then
	echo "$majmin 1099511627776" >"$cg/blkio.throttle.write_bps_device" || fail "blkio limit"
	on_exit "echo '$majmin 0' > '$cg/blkio.throttle.write_bps_device'"
fi

# Bytes the kernel charged to cgroup CG on our disk for writes.
kernel_wbytes() {
	if [ -f "$1/blkio.throttle.io_service_bytes" ]; then
		awk -v d="$majmin" '$1 == d && $2 == "Write" { print $3 }' "$1/blkio.throttle.io_service_bytes"
	else
		sed -n "s/^$majmin .*wbytes=\([0-9]*\).*/\1/p" "$1/io.stat"
	fi
}
kw() { local v; v=$(kernel_wbytes "$1"); echo "${v:-0}"; }
# iolat's write bytes on our disk for the workload of cgroup path P ("/" = root).
iolat_wbytes() {
	python3 - "$WORK/m" "$disk" "$1" <<'PY'
import re, sys
path, disk, want = sys.argv[1:]
total = 0
for line in open(path):
    m = re.match(r'iolat_workload_bytes_total\{device="([^"]*)",op="write",kind="([^"]*)",workload="([^"]*)"\} (\S+)', line)
    if m and m.group(1) == disk and m.group(3) == want:
        total += float(m.group(4))
print(int(total))
PY
}

port=$(free_port)
start_serve "$WORK/serve.log" "${WL_FULL[@]}" --web.listen-address="127.0.0.1:$port" --maintenance.interval=100ms
sync
# Each scrape after a pass: the workloads of the I/O before it are named.
scrape() {
	after_pass "http://127.0.0.1:$port/metrics"
	curl -sf "http://127.0.0.1:$port/metrics" >"$WORK/m" || fail "scrape failed"
}
scrape
i0_cg=$(iolat_wbytes "${cg#"$root"}") i0_root=$(iolat_wbytes /)
k0_cg=$(kw "$cg") k0_root=$(kw "$root")
disk_wbytes() { echo $(($(awk '{ print $7 }' "/sys/block/$disk/stat") * 512)); }
d0=$(disk_wbytes)

# 8 MiB buffered from the cgroup, flushed by sync from outside it; then
# 1 MiB of direct writes from the cgroup.
in_cgroup "$cg" dd if=/dev/zero of="$WORK/mnt/buffered" bs=1M count=8 status=none || fail dd
sync
in_cgroup "$cg" dd if=/dev/zero of="$WORK/mnt/direct" bs=64k count=16 oflag=direct status=none || fail dd
sync
sleep 0.5
scrape
i_cg=$(($(iolat_wbytes "${cg#"$root"}") - i0_cg)) i_root=$(($(iolat_wbytes /) - i0_root))
k_cg=$(($(kw "$cg") - k0_cg)) k_root=$(($(kw "$root") - k0_root))
d=$(($(disk_wbytes) - d0))
echo "written bytes charged: cgroup kernel $k_cg iolat $i_cg; root kernel $k_root iolat $i_root;" \
	"disk $d"
assert_eq "cgroup's write bytes (kernel vs iolat)" "$k_cg" "$i_cg"
assert_eq "root's write bytes (kernel vs iolat)" "$k_root" "$i_root"
[ "$k_root" -ge $((8 * 1024 * 1024)) ] || fail "the kernel charged the root only $k_root bytes"
[ "$i_cg" -ge $((1024 * 1024)) ] || fail "the cgroup's direct writes are missing ($i_cg bytes)"
# Everything written to the disk is the cgroup's or the root's (the
# flusher and jbd2 run there), to the byte. ext4's journal writes once
# sized iolat's requests 1 KiB larger at issue than at completion.
assert_eq "cgroup + root write bytes (disk stats vs iolat)" "$d" "$((i_cg + i_root))"
echo "ok: writeback and direct writes charged as the kernel charges them"
