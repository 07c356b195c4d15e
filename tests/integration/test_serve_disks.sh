# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Disks that come and go under a running `iolat serve`: one loop device
# (a number of our own, loop2NN) is attached, used, detached 100 times,
# removed from the kernel and added back under the same number every tenth
# time. After each cycle its series must hold exactly the I/O done so far
# (the kernel's diskstats per disk, our own reads and writes per workload),
# so no counter ever goes backwards; once the disk is gone its kernel map
# keys must be gone too (bounded however often it comes and goes), the
# series staying under its name until disks.expire, then leaving. Ten more
# numbers, used once each, show the same for disks that never come back.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh

CYCLES=${CYCLES:-100} R=3 W=2 EXPIRE=6 OTHERS=10
[ -w /dev/loop-control ] || skip "no /dev/loop-control"

# Bad disks.expire values: exit 2 and one line on stderr. (Not expect_error:
# its check that no program was left loaded counts every iolat on the
# machine, and other tests load and unload theirs meanwhile; these fail
# while reading the flags, before anything is loaded.)
bad_input() {
	local pattern=$1 rc=0
	shift
	"$IOLAT" serve "$@" >"$WORK/out" 2>"$WORK/err" </dev/null || rc=$?
	assert_eq "iolat serve $*: exit" 2 "$rc"
	assert_eq "iolat serve $*: stderr lines" 1 "$(wc -l <"$WORK/err")"
	grep -qE "$pattern" "$WORK/err" || fail "iolat serve $*: '$(cat "$WORK/err")' does not match '$pattern'"
	[ ! -s "$WORK/out" ] || fail "iolat serve $*: printed on stdout"
}
bad_input "bad --disks.expire '0' \(at least 1s" --disks.expire=0
bad_input "bad --disks.expire 'soon'" --disks.expire=soon
printf 'disks:\n  expire: 0\n' >"$WORK/bad.yml"
bad_input "bad.yml:2:11: expected a duration of at least 1s" --config.file="$WORK/bad.yml"
printf 'disks:\n  expir: 5m\n' >"$WORK/bad.yml"
bad_input "bad.yml:2:3: unknown key 'expir' \(known: expire\)" --config.file="$WORK/bad.yml"
echo "ok: bad disks.expire values refused"

# loop_ctl add|remove N: LOOP_CTL_ADD / LOOP_CTL_REMOVE on /dev/loop-control
# (perl: it starts in milliseconds where python takes a second on a busy machine).
loop_ctl() {
	perl -e 'open(my $f, "+<", "/dev/loop-control") or die "loop-control: $!\n";
		defined(ioctl($f, $ARGV[0] eq "add" ? 0x4C80 : 0x4C81, $ARGV[1] + 0)) or die "$ARGV[0] $ARGV[1]: $!\n"' "$1" "$2"
}
# Loop numbers nobody uses: from 200 up, with no such disk now.
free_numbers() {
	local n=200 found=0
	while [ "$found" -lt "$1" ]; do
		[ -e "/sys/block/loop$n" ] || [ -e "/dev/loop$n" ] || {
			echo $n
			found=$((found + 1))
		}
		n=$((n + 1))
	done
}
mapfile -t numbers < <(free_numbers $((OTHERS + 1)))
N=${numbers[0]}
disk=loop$N
dev=/dev/$disk
devnum=$(((7 << 20) | N))
loop_ctl add "$N" || fail "cannot add $disk"
on_exit "losetup -d $dev; loop_ctl remove $N"
truncate -s 16M "$WORK/disk.img"
make_cgroup disks
cg=$CG
cgid=$(stat -c %i "$cg")
port=$(free_port)
url=http://127.0.0.1:$port/metrics
start_serve "$WORK/serve.log" "${WL_FULL[@]}" --web.listen-address="127.0.0.1:$port" --disks.expire=${EXPIRE}s \
	--maintenance.interval=100ms

# Each scrape after a pass: what a pass decided since the last step shows.
scrape() { after_pass "$url"; curl -sf "$url" >"$WORK/m" || fail "scrape failed"; }
# The kernel's completed reads and writes on a disk (diskstats), "0 0" when
# the disk does not exist.
kernel_ios() { awk '{ print $1, $5 }' "/sys/block/$1/stat" 2>/dev/null || echo "0 0"; }
attach() {
	losetup --direct-io=on "/dev/$1" "$WORK/disk.img" || fail "losetup $1"
	echo 1 >"/sys/block/$1/queue/iostats"
}

# state DISK DEVNUM: from the last scrape ($WORK/m) and the serve's kernel
# map, into S_DR S_DW (the disk's reads and writes), S_OURR S_OURW (those of
# our cgroup's workload), S_SERIES (series of the disk), S_SINCE (its
# iolat_disks_gone_since_seconds, 0: not gone), S_RETIRED S_EXPIRED (these
# two count every disk on the machine, and other tests' loop devices come
# and go too), S_KEYS (kernel keys of the disk), S_MINE (... and our cgroup).
# One python process answers them all: starting one takes a second here.
cat >"$WORK/state.py" <<'PY'
import ctypes, glob, os, struct, sys

metrics, cgpath, cgid, pid = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR_BPF = {"x86_64": 321, "aarch64": 280}[os.uname().machine]
def bpf(cmd, attr):
    buf = ctypes.create_string_buffer(attr, 128)
    return libc.syscall(NR_BPF, cmd, buf, 128)
# The serve's histogram map: 16-byte keys, struct iolat_val values, more than
# one entry (the map not in use is shrunk to one); per-CPU or shared.
def open_map(pid):
    map_id = None
    for f in glob.glob("/proc/%s/fdinfo/*" % pid):
        try:  # serve opens and closes files meanwhile (a maintenance pass)
            info = {k: v.strip() for k, v in (l.split(":", 1) for l in open(f) if ":" in l)}
        except FileNotFoundError:
            continue
        if (info.get("key_size") == "16" and info.get("value_size") == "5184" and
                int(info.get("max_entries", 0)) > 1):
            map_id = int(info["map_id"])
    return bpf(14, struct.pack("<III", map_id or 0, 0, 0))  # BPF_MAP_GET_FD_BY_ID
fd = open_map(pid)
cur, nxt = ctypes.create_string_buffer(16), ctypes.create_string_buffer(16)

def kernel_keys(devnum):
    first, keys, mine = True, 0, 0
    while bpf(4, struct.pack("<IIQQ", fd, 0, 0 if first else ctypes.addressof(cur),
                             ctypes.addressof(nxt))) == 0:  # BPF_MAP_GET_NEXT_KEY
        first = False
        cgroup, dev, _, _, _ = struct.unpack("<QIHBB", nxt.raw)
        if dev == devnum:
            keys += 1
            mine += cgroup == cgid
        ctypes.memmove(cur, nxt, 16)
    return keys, mine

for req in sys.stdin:
    disk, devnum = req.split()
    if disk == "serve":  # another serve process
        os.close(fd)
        fd = open_map(devnum)
    if fd < 0:
        print("error: no histogram map in the serve's fds", flush=True)
        continue
    if disk == "serve":
        print("ok", flush=True)
        continue
    vals, series = {}, 0
    for line in open(metrics):
        if line.startswith("#"):
            continue
        name, _, v = line.rstrip("\n").rpartition(" ")
        vals[name] = float(v)
        if 'device="%s"' % disk in name and not name.startswith("iolat_disks_"):
            series += 1
    v = lambda name: int(vals.get(name, 0))
    ours = lambda op: sum(int(x) for n, x in vals.items()
                          if n.startswith("iolat_workload_completions_total{") and
                          'device="%s",op="%s"' % (disk, op) in n and
                          n.endswith('workload="%s"}' % cgpath))
    print(v('iolat_block_completions_total{device="%s",op="read"}' % disk),
          v('iolat_block_completions_total{device="%s",op="write"}' % disk),
          ours("read"), ours("write"), series,
          v('iolat_disks_gone_since_seconds{device="%s"}' % disk),
          v("iolat_disks_retired_total"), v("iolat_disks_expired_total"),
          *kernel_keys(int(devnum)), flush=True)
PY
coproc STATE { python3 "$WORK/state.py" "$WORK/m" "/${cg#"$(cgroup_root)"/}" "$cgid" "$SERVE_PID"; }
state() {
	local line
	echo "$1 $2" >&"${STATE[1]}"
	read -r line <&"${STATE[0]}" || fail "the state helper died"
	[[ "$line" != error* ]] || fail "$line"
	read -r S_DR S_DW S_OURR S_OURW S_SERIES S_SINCE S_RETIRED S_EXPIRED S_KEYS S_MINE <<<"$line"
}

scrape
state "$disk" "$devnum"
assert_eq "$disk before any I/O" "0 0" "$S_DR $S_DW"
reads=0 writes=0 t0=$(date +%s)
for i in $(seq 1 "$CYCLES"); do
	removed=$((i % 10 == 0))
	[ -e "/sys/block/$disk" ] || loop_ctl add "$N" || fail "cycle $i: cannot add $disk back"
	attach "$disk"
	read -r kr kw <<<"$(kernel_ios "$disk")"
	in_cgroup "$cg" "$DIO" read "$dev" $R 4096 || fail "cycle $i: dio read"
	in_cgroup "$cg" "$DIO" write "$dev" $W 8192 || fail "cycle $i: dio write"
	scrape # sees the disk busy
	t_io=$(date +%s)
	state "$disk" "$devnum"
	assert_eq "cycle $i: kernel keys of $disk and our cgroup while attached" 2 "$S_MINE"
	assert_eq "cycle $i: $disk gone while attached" 0 "$S_SINCE"
	losetup -d "$dev" || fail "cycle $i: losetup -d"
	# Everyone's I/O on the disk this cycle, as the kernel counted it (it
	# keeps its counts until the disk is removed).
	read -r kr2 kw2 <<<"$(kernel_ios "$disk")"
	reads=$((reads + kr2 - kr)) writes=$((writes + kw2 - kw))
	[ "$removed" = 1 ] && { loop_ctl remove "$N" || fail "cycle $i: cannot remove $disk"; }
	scrape # idle: found gone, its keys retired
	# (still under its name when the kernel no longer has the disk)
	state "$disk" "$devnum"
	assert_counted "cycle $i: $disk reads" "$reads" "$S_DR"
	assert_counted "cycle $i: $disk writes" "$writes" "$S_DW"
	assert_counted "cycle $i: our reads" $((i * R)) "$S_OURR"
	assert_counted "cycle $i: our writes" $((i * W)) "$S_OURW"
	assert_eq "cycle $i: kernel keys of the gone $disk" 0 "$S_KEYS"
	# Gone since its last change: the scrape that saw this cycle's I/O.
	((S_SINCE >= t_io - 2 && S_SINCE <= t_io)) ||
		fail "cycle $i: $disk gone since $S_SINCE, its I/O seen at $t_io"
	((S_RETIRED >= i)) || fail "cycle $i: $S_RETIRED retirements, fewer than $disk's $i"
	((i % 10 == 0)) && echo "cycle $i: $disk $S_DR reads, $S_DW writes ($S_OURR, $S_OURW ours)," \
		"$S_SERIES series, no kernel keys once gone$([ $removed = 1 ] && echo ", removed from the kernel")"
done
t1=$(date +%s)
assert_eq "reads the kernel counted" $((CYCLES * R)) "$reads"
assert_eq "writes the kernel counted" $((CYCLES * W)) "$writes"
echo "ok: $CYCLES attach/use/detach cycles in $((t1 - t0)) s: exact, never backwards, no kernel keys once gone"

# Ten other numbers, each used once and removed: their keys leave the kernel
# map, their series stay, then all expire with the first disk.
for n in "${numbers[@]:1}"; do
	loop_ctl add "$n" || fail "cannot add loop$n"
	on_exit "losetup -d /dev/loop$n; loop_ctl remove $n"
	attach "loop$n"
	in_cgroup "$cg" "$DIO" read "/dev/loop$n" 1 4096 || fail "dio read loop$n"
done
scrape
for n in "${numbers[@]:1}"; do
	{ losetup -d "/dev/loop$n" && loop_ctl remove "$n"; } || fail "cannot remove loop$n"
done
scrape
for n in "${numbers[@]:1}"; do
	state "loop$n" $(((7 << 20) | n))
	assert_eq "loop$n: reads kept" "1 1" "$S_DR $S_OURR"
	assert_eq "loop$n: kernel keys" 0 "$S_KEYS"
done
((S_RETIRED >= CYCLES + OTHERS)) || fail "$S_RETIRED retirements, fewer than our $((CYCLES + OTHERS))"
# (loop$N's own clock started at its last cycle: it may have expired by now.)
others=${numbers[*]:1}
assert_eq "the $OTHERS disks shown gone" "$OTHERS" \
	"$(grep -cE "^iolat_disks_gone_since_seconds\{device=\"loop(${others// /|})\"\}" "$WORK/m")"
echo "ok: $OTHERS more disks used once and removed: series kept, no kernel keys"

# Expiry: EXPIRE s without change, and every series of the gone disks leaves.
sleep $((EXPIRE + 1))
scrape # expires them
scrape
state "$disk" "$devnum"
assert_eq "$disk series after expiry" 0 "$S_SERIES"
((S_EXPIRED >= OTHERS + 1)) || fail "$S_EXPIRED expired, fewer than our $((OTHERS + 1))"
for n in "${numbers[@]}"; do
	assert_eq "loop$n series after expiry" 0 "$(grep -c "device=\"loop$n\"" "$WORK/m")"
done
echo "ok: after disks.expire (${EXPIRE}s) every series of the $((OTHERS + 1)) gone disks left"

# Back after expiry: a new series from 0 (nothing kept), counted exactly.
[ -e "/sys/block/$disk" ] || loop_ctl add "$N" || fail "cannot add $disk"
attach "$disk"
in_cgroup "$cg" "$DIO" read "$dev" 5 4096 || fail "dio read"
scrape
state "$disk" "$devnum"
assert_counted "$disk back after expiry: reads" 5 "$S_DR"
assert_eq "$disk back after expiry: writes" 0 "$S_DW"
assert_eq "$disk back after expiry: our reads" 5 "$S_OURR"
assert_eq "$disk back after expiry: kernel keys" 1 "$S_MINE"
echo "ok: $disk back after its series expired starts a new series: 5 reads"

kill -TERM "$SERVE_PID"
wait "$SERVE_PID" || fail "serve exited with $?"
assert_detached
echo "ok: serve stopped and detached"

# Without workloads the kernel map is per-CPU: the same, per disk, 5 times.
port=$(free_port)
url=http://127.0.0.1:$port/metrics
start_serve "$WORK/serve2.log" --web.listen-address="127.0.0.1:$port" --no-collector.workloads \
	--disks.expire=${EXPIRE}s --maintenance.interval=100ms
echo "serve $SERVE_PID" >&"${STATE[1]}"
read -r line <&"${STATE[0]}"
assert_eq "state helper on the second serve" ok "$line"
losetup -d "$dev"
scrape
state "$disk" "$devnum"
reads=$S_DR
for i in $(seq 1 5); do
	attach "$disk"
	read -r kr _ <<<"$(kernel_ios "$disk")"
	in_cgroup "$cg" "$DIO" read "$dev" $R 4096 || fail "dio read"
	scrape
	state "$disk" "$devnum"
	assert_eq "per-CPU $i: kernel keys of $disk while attached" 1 "$S_KEYS"
	losetup -d "$dev" || fail "losetup -d"
	read -r kr2 _ <<<"$(kernel_ios "$disk")"
	reads=$((reads + kr2 - kr))
	scrape
	state "$disk" "$devnum"
	assert_counted "per-CPU $i: $disk reads" "$reads" "$S_DR"
	assert_eq "per-CPU $i: kernel keys of the gone $disk" 0 "$S_KEYS"
	((S_SINCE > 0)) || fail "per-CPU $i: $disk not shown gone"
done
echo "ok: per-CPU map (--no-collector.workloads): 5 cycles exact, no kernel keys once gone"
kill -TERM "$SERVE_PID"
wait "$SERVE_PID" || fail "serve exited with $?"
assert_detached

