# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The kernel's own completed-I/O count beside iolat's (docs/serve.md, "The
# kernel's count beside iolat's"; docs/runbooks.md, IolatCompletionsUnseen):
#  1. Zero series: at the very first scrape, a disk that did no I/O since
#     serve started has read and write series of 0 (counters and
#     histograms), no flush or discard series; the kernel's count is
#     /sys/block/X/stat's, exactly.
#  2. A disk with I/O before serve started: that I/O is in the baseline,
#     not in the difference (0).
#  3. N direct reads, M direct writes and a flush (fsync of the device):
#     the kernel's count moves by what iolat counted, the difference stays
#     exactly kernel minus iolat (0 but for a completion BPF did not see, a
#     WARNING as in test_counts.sh), and the cgroup's workload series hold N
#     and M.
#  4. queue/iostats off: no read/write difference (the kernel stops
#     counting them), flushes' stays; on again, a pass rebases to 0.
#  5. A disk attached while serve runs: zero series and a difference of 0
#     from the pass that notes it; its I/O after that counts exactly. A
#     detached disk (no medium) leaves; back, it is based again at 0.
#  6. A full histogram map (2 keys): a third cgroup's reads are not
#     counted, and the difference is exactly hist_map_full's count.
#  7. hist --json: per interval and per disk and op, the kernel's count,
#     iolat's, and the difference; none of it with -c.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh

N=200 M=30 PRE=25 K=17
[ -w /dev/loop-control ] || skip "no /dev/loop-control"

# loop_ctl add|remove N: LOOP_CTL_ADD / LOOP_CTL_REMOVE (as test_serve_disks.sh).
loop_ctl() {
	perl -e 'open(my $f, "+<", "/dev/loop-control") or die "loop-control: $!\n";
		defined(ioctl($f, $ARGV[0] eq "add" ? 0x4C80 : 0x4C81, $ARGV[1] + 0)) or die "$ARGV[0] $ARGV[1]: $!\n"' "$1" "$2"
}
# own_loop FILE: a direct-I/O loop device over FILE (made if missing) in
# $LOOP, of a number from 300 up that no other disk has: a number that
# losetup -f hands out may still be open in a process of an earlier test,
# whose I/O would then land on this one and spoil exact counts.
own_loop() {
	local n=300
	while [ -e "/sys/block/loop$n" ] || [ -e "/dev/loop$n" ] || ! loop_ctl add $n 2>/dev/null; do
		n=$((n + 1))
	done
	on_exit "losetup -d /dev/loop$n; loop_ctl remove $n"
	[ -e "$1" ] || truncate -s 64M "$1" || fail "cannot create $1"
	losetup --direct-io=on "/dev/loop$n" "$1" || fail "losetup loop$n"
	echo 1 >"/sys/block/loop$n/queue/iostats"
	LOOP=/dev/loop$n
}
own_loop "$WORK/a.img"
dev=$LOOP
name=${dev#/dev/}
own_loop "$WORK/idle.img"
idle=${LOOP#/dev/}
make_cgroup kcount
cg=$CG
workload=${cg#"$(cgroup_root)"}

field_of() { case $1 in read) echo 1 ;; write) echo 5 ;; discard) echo 12 ;; flush) echo 16 ;; esac; }
# sample FILE NAME LABELS: one sample's value, "absent" when there is none.
sample() { local v; v=$(metric "$1" "$2" "$3"); echo "${v:-absent}"; }
scrape() { curl -sf "$url" >"$1" || fail "scrape $1 failed"; }
# kscrape FILE DISK...: a scrape between two reads of the disks' stat lines
# (FILE.before, FILE.after), so that the kernel's count it exports can be
# checked even if something else does I/O on a disk meanwhile (a process
# of an earlier test still holding /dev/loopN open, say).
kscrape() {
	local f=$1 d
	shift
	for d in "$@"; do echo "$d $(cat "/sys/block/$d/stat")"; done >"$f.before"
	scrape "$f"
	for d in "$@"; do echo "$d $(cat "/sys/block/$d/stat")"; done >"$f.after"
}
# assert_kernel FILE DISK OP: FILE's kernel count of DISK and OP lies
# between the stat line's before and after the scrape (equal when quiet).
assert_kernel() {
	local b a v n=$(($(field_of "$3") + 1))
	b=$(awk -v d="$2" -v n=$n '$1 == d { print $n }' "$1.before")
	a=$(awk -v d="$2" -v n=$n '$1 == d { print $n }' "$1.after")
	v=$(kernel "$1" "$2" "$3")
	if ! [[ "$v" =~ ^[0-9]+$ ]] || [ "$v" -lt "$b" ] || [ "$v" -gt "$a" ]; then
		fail "$2 kernel $3: exported $v, the stat line said $b before the scrape and $a after"
	fi
}
unseen() { sample "$1" iolat_block_unseen_completions "{device=\"$2\",op=\"$3\"}"; }
kernel() { sample "$1" iolat_block_kernel_completed_total "{device=\"$2\",op=\"$3\"}"; }
done_() { sample "$1" iolat_block_completions_total "{device=\"$2\",op=\"$3\"}"; }

[ "$(wc -w <"/sys/block/$name/stat")" -ge 17 ] || skip "this kernel's stat lines have no flush field"
in_cgroup "$cg" "$DIO" read "$dev" $PRE 4096 || fail "dio read before serve"

# 1. The first scrape, whether or not the first pass has run yet.
port=$(free_port)
url=http://127.0.0.1:$port/metrics
start_serve "$WORK/serve.log" "${WL_FULL[@]}" --web.listen-address="127.0.0.1:$port" --maintenance.interval=100ms
kscrape "$WORK/s0" "$name" "$idle"
for d in "$name" "$idle"; do
	for op in read write; do
		assert_eq "$d $op completions at the first scrape" 0 "$(done_ "$WORK/s0" "$d" $op)"
		assert_eq "$d $op bytes at the first scrape" 0 \
			"$(sample "$WORK/s0" iolat_block_bytes_total "{device=\"$d\",op=\"$op\"}")"
		assert_eq "$d $op device latency count at the first scrape" 0 \
			"$(sample "$WORK/s0" iolat_block_device_latency_seconds_count "{device=\"$d\",op=\"$op\"}")"
		assert_eq "$d $op le=+Inf at the first scrape" 0 \
			"$(sample "$WORK/s0" iolat_block_total_latency_seconds_bucket "{device=\"$d\",op=\"$op\",le=\"+Inf\"}")"
		assert_kernel "$WORK/s0" "$d" $op
	done
	for op in flush discard; do
		assert_eq "$d $op: no zero series" absent "$(done_ "$WORK/s0" "$d" $op)"
		assert_kernel "$WORK/s0" "$d" $op
	done
done
echo "ok: zero read and write series for idle disks at the first scrape"

# 2. The I/O before serve is in the baseline.
after_pass "$url"
scrape "$WORK/s1"
for op in read write discard flush; do
	assert_eq "$name $op difference after I/O before serve" 0 "$(unseen "$WORK/s1" "$name" $op)"
	assert_eq "$idle $op difference" 0 "$(unseen "$WORK/s1" "$idle" $op)"
done
echo "ok: I/O before serve started is in the baseline ($PRE reads), difference 0"

# 3. Reads, writes and a flush, counted exactly on both sides.
in_cgroup "$cg" "$DIO" read "$dev" $N 4096 || fail "dio read"
in_cgroup "$cg" "$DIO" write "$dev" $M 4096 || fail "dio write"
flushed=0
if grep -q "write back" "/sys/block/$name/queue/write_cache"; then
	sync "$dev" || fail "fsync $dev"
	flushed=1
fi
after_pass "$url" # names the cgroup, whose first I/O iolat saw just now
kscrape "$WORK/s2" "$name"
for op in read write flush; do
	kd=$(($(kernel "$WORK/s2" "$name" $op) - $(kernel "$WORK/s1" "$name" $op)))
	id=$(($(done_ "$WORK/s2" "$name" $op | sed 's/absent/0/') - $(done_ "$WORK/s1" "$name" $op | sed 's/absent/0/')))
	u=$(unseen "$WORK/s2" "$name" $op)
	echo "$op: kernel +$kd, iolat +$id, difference $u"
	assert_kernel "$WORK/s2" "$name" $op
	# The same baseline at both scrapes: what the difference moved by is
	# exactly what the kernel's count moved by, less iolat's.
	assert_eq "$op difference = kernel - iolat" $((kd - id)) $((u - $(unseen "$WORK/s1" "$name" $op)))
	# 0 but for a completion BPF did not see (README): a WARNING, as
	# test_counts.sh's. Below 0 would be iolat counting what the kernel did not.
	if [ "$u" -lt 0 ] || [ "$u" -gt 3 ]; then fail "$op difference: $u, expected 0"; fi
	[ "$u" = 0 ] || echo "WARNING: $op: $u completions not seen by BPF"
done
wl() { sample "$WORK/s2" iolat_workload_completions_total "{device=\"$name\",op=\"$1\",kind=\"cgroup\",workload=\"$workload\"}"; }
assert_counted "the cgroup's reads" $N "$(wl read)"
assert_counted "the cgroup's writes" $M "$(wl write)"
[ "$flushed" = 0 ] || [ $(($(kernel "$WORK/s2" "$name" flush) - $(kernel "$WORK/s1" "$name" flush))) -ge 1 ] ||
	fail "fsync made no flush"
echo "ok: $N reads, $M writes, $flushed fsync: difference exactly kernel minus iolat"

# 4. queue/iostats off, then on.
echo 0 >"/sys/block/$name/queue/iostats"
on_exit "echo 1 >/sys/block/$name/queue/iostats"
after_pass "$url"
scrape "$WORK/s3"
assert_eq "no read difference with iostats off" absent "$(unseen "$WORK/s3" "$name" read)"
assert_eq "no write difference with iostats off" absent "$(unseen "$WORK/s3" "$name" write)"
[ "$(kernel "$WORK/s3" "$name" read)" != absent ] || fail "the kernel's read count not exported with iostats off"
[ "$(unseen "$WORK/s3" "$name" flush)" != absent ] || fail "flush difference gone with iostats off"
in_cgroup "$cg" "$DIO" read "$dev" 5 4096 || fail "dio read, iostats off"
echo 1 >"/sys/block/$name/queue/iostats"
after_pass "$url"
scrape "$WORK/s4"
assert_eq "read difference after iostats came back" 0 "$(unseen "$WORK/s4" "$name" read)"
echo "ok: iostats off hides the read/write difference; on again, rebased at 0"

# 5. A disk attached while serve runs, then detached and attached again.
img=$WORK/late.img
own_loop "$img"
late=$LOOP
lname=${late#/dev/}
after_pass "$url"
scrape "$WORK/s5"
assert_eq "late disk zero reads" 0 "$(done_ "$WORK/s5" "$lname" read)"
assert_eq "late disk difference" 0 "$(unseen "$WORK/s5" "$lname" read)"
in_cgroup "$cg" "$DIO" read "$late" $K 4096 || fail "dio read late"
scrape "$WORK/s6"
assert_counted "late disk reads" $K "$(done_ "$WORK/s6" "$lname" read)"
assert_eq "late disk difference = kernel - iolat" \
	$(($(kernel "$WORK/s6" "$lname" read) - $(kernel "$WORK/s5" "$lname" read) - $(done_ "$WORK/s6" "$lname" read))) \
	"$(unseen "$WORK/s6" "$lname" read)"
losetup -d "$late" || fail "detach late"
after_pass "$url"
scrape "$WORK/s7"
assert_eq "detached: no kernel series" absent "$(kernel "$WORK/s7" "$lname" read)"
losetup --direct-io=on "$late" "$img" || fail "attach late again"
echo 1 >"/sys/block/$lname/queue/iostats"
after_pass "$url"
kscrape "$WORK/s8" "$lname"
assert_kernel "$WORK/s8" "$lname" read
assert_eq "back: difference" 0 "$(unseen "$WORK/s8" "$lname" read)"
stop_serve "kernel counts"
echo "ok: a disk attached late is based at its first pass; detached it leaves, back it is based again"

# 6. A full histogram map: what did not fit is the difference.
make_cgroup kfulla
cga=$CG
make_cgroup kfullb
cgb=$CG
make_cgroup kfullc
cgc=$CG
port=$(free_port)
url=http://127.0.0.1:$port/metrics
IOLAT_TEST_DISK=$name start_serve "$WORK/full.log" "${WL_FULL[@]}" --web.listen-address="127.0.0.1:$port" \
	--bpf.map-size=hists_shared=2 --maintenance.interval=100ms
after_pass "$url"
scrape "$WORK/f0"
assert_eq "full map: difference at start" 0 "$(unseen "$WORK/f0" "$name" read)"
in_cgroup "$cga" "$DIO" read "$dev" 7 4096 || fail "dio a"
in_cgroup "$cgc" "$DIO" read "$dev" 5 4096 || fail "dio c"
in_cgroup "$cgb" "$DIO" read "$dev" 11 4096 || fail "dio b"
scrape "$WORK/f1"
full=$(($(sample "$WORK/f1" iolat_collector_events_total '{event="hist_map_full"}') -
	$(sample "$WORK/f0" iolat_collector_events_total '{event="hist_map_full"}')))
echo "full map: hist_map_full +$full, difference $(unseen "$WORK/f1" "$name" read)"
assert_eq "reads that did not fit" 11 "$full"
assert_counted "difference = what did not fit" "$(unseen "$WORK/f1" "$name" read)" "$full"
stop_serve "full map"
echo "ok: a full map's losses show as the difference"

# 7. hist --json.
start_iolat "$WORK/h.json" hist --json -d "$name"
in_cgroup "$cg" "$DIO" read "$dev" $K 4096 || fail "dio read under hist"
stop_iolat INT
assert_detached
row() { jget "$WORK/h.json" "[(r['kernel'], r['iolat'], r['unseen']) for r in d['kernel'] if r['disk'] == '$name' and r['op'] == '$1']"; }
hk=$(jget "$WORK/h.json" "[r['kernel'] for r in d['kernel'] if r['op'] == 'read'][0]")
hi=$(jget "$WORK/h.json" "[r['iolat'] for r in d['kernel'] if r['op'] == 'read'][0]")
echo "hist --json read row: $(row read)"
[ "$hk" -ge $K ] || fail "hist: the kernel's reads, $hk, below the $K done"
assert_counted "hist: iolat reads against the kernel's" "$hk" "$hi"
assert_eq "hist: read row" "[($hk, $hi, $((hk - hi)))]" "$(row read)"
assert_eq "hist: ops" "['read', 'write', 'discard', 'flush']" "$(jget "$WORK/h.json" "[r['op'] for r in d['kernel']]")"
assert_eq "hist: disks" "['$name']" "$(jget "$WORK/h.json" "sorted(set(r['disk'] for r in d['kernel']))")"
start_iolat "$WORK/hc.json" hist --json -c "$cg"
stop_iolat INT
assert_eq "hist -c: no kernel rows" False "$(jget "$WORK/hc.json" "'kernel' in d")"
echo "ok: hist --json carries the kernel's count, iolat's and the difference"
