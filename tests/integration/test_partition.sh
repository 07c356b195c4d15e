# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# -d accepts a partition and means its whole disk: I/O to the partition is
# counted under the disk (iolat keys by gendisk), and `-d DISKpN` selects it.
source tests/integration/lib.sh

img=$WORK/parted.img
truncate -s 32M "$img"
# One MBR partition from sector 2048 to the end (type 0x83), written by hand:
# the machine has no partitioning tool.
python3 - "$img" <<'PY'
import struct, sys
sectors = 32 * 2048
entry = struct.pack("<B3sB3sII", 0, b"\0\0\0", 0x83, b"\0\0\0", 2048, sectors - 2048)
with open(sys.argv[1], "r+b") as f:
    f.seek(446); f.write(entry)
    f.seek(510); f.write(b"\x55\xaa")
PY
make_loop 32 "$img" -P
dev=$LOOP
name=${dev#/dev/}
for _ in $(seq 1 20); do [ -b "${dev}p1" ] && break; sleep 0.1; done
[ -b "${dev}p1" ] || skip "no partition device for $dev: this kernel reads no partition tables (/proc/partitions)"
make_cgroup part
cg=$CG

start_iolat "$WORK/out" hist -D -O --json -c "$cg" -d "${name}p1"
in_cgroup "$cg" "$DIO" read "${dev}p1" 33 4096 || fail "dio read"
stop_iolat INT
assert_detached
assert_eq "disks" "['$name']" "$(jget "$WORK/out" "sorted(set(x['disk'] for x in d['series']))")"
assert_eq "reads" 33 "$(jget "$WORK/out" "s('$name','read')['ios']")"
echo "ok: -d ${name}p1 means $name"
