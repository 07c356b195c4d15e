# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Dense rows (bpf/iolat.bpf.c): keyed by disk and op only, completions count
# in a row found by the request queue's id once user space has given the
# disk and op one, and each series is exactly its hash value plus its row's.
# Proved on loop devices: the row takes every I/O after the first (which asks
# for it), a disk added after start gets rows too, and a disk and op left
# without a row (rows run out: IOLAT_TEST_ROWS=1) still count exactly.
# Then serve --handover with per-disk keys only, under fio: adopted by a
# restart and taken over by other settings, its rows' counts go on exactly.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh

N=200 RSIZE=4096 M=30 WSIZE=65536
make_cgroup dense
cg=$CG

# our_map NAME: the id of the BPF map NAME that our iolat holds.
our_map() {
	local id ids
	mapfile -t ids < <(grep -rhs '^map_id:' "/proc/$IOLAT_PID/fdinfo/" | awk '{ print $2 }' | sort -u)
	for id in "${ids[@]}"; do
		bpftool map show id "$id" 2>/dev/null | grep -q " name $1 " && { echo "$id"; return; }
	done
	fail "iolat holds no map $1"
}

# row_of DEV OP: the row user space gave (dev, op), or -1; from row_keys.
row_of() {
	bpftool map dump id "$(our_map row_keys)" -j | python3 -c '
import json, sys
dev, op = int(sys.argv[1]), int(sys.argv[2])
for e in json.load(sys.stdin):
    v = e["formatted"]["value"]
    if v["state"] == 1 and v["dev"] == dev and v["op"] == op:
        print(e["formatted"]["key"]); break
else:
    print(-1)' "$1" "$2"
}

# wait_row DEV OP: the row of (dev, op) once user space has given it.
wait_row() {
	local r
	for _ in $(seq 1 50); do
		r=$(row_of "$1" "$2")
		[ "$r" != -1 ] && { echo "$r"; return; }
		sleep 0.1
	done
	echo -1
}

# row_ios ROW: the completions row ROW holds, over the CPUs (device view:
# timed and unseen; iolat.h), in rows or, with shared values, rows_shared.
row_ios() {
	local map=rows
	[ "${IOLAT_TEST_SHARED_VALUES:-0}" = 1 ] && map=rows_shared
	# The key: the row as four bytes, little-endian (rows stay below 256).
	bpftool map lookup id "$(our_map $map)" key "$1" 0 0 0 -j | python3 -c '
import json, sys
d = json.load(sys.stdin)["formatted"]
vals = [v["value"] for v in d["values"]] if "values" in d else [d["value"]]
print(sum(sum(v["lat_slots"][0]) + v["unseen"][0] for v in vals))'
}

# The kernel's encoding of a disk's dev (major << 20 | minor).
kdev() {
	local mm
	mm=$(cat "/sys/class/block/${1#/dev/}/dev")
	echo $(((${mm%:*} << 20) | ${mm#*:}))
}

# check_disk LABEL DEV: a read and a write ask for rows; N reads and M
# writes after them. Expects rows given to both ops unless EXPECT_NO_WRITE_ROW.
check_disk() {
	local label=$1 dev=$2 name=${2#/dev/} k rr wr
	k=$(kdev "$dev")
	in_cgroup "$cg" "$DIO" read "$dev" 1 $RSIZE || fail "$label: first read"
	in_cgroup "$cg" "$DIO" write "$dev" 1 $WSIZE || fail "$label: first write"
	rr=$(wait_row "$k" 0)
	[ "$rr" != -1 ] || fail "$label: no row for the reads"
	if [ "${EXPECT_NO_WRITE_ROW:-0}" = 1 ]; then
		sleep 0.5
		wr=$(row_of "$k" 1)
		assert_eq "$label: writes without a row (rows ran out)" -1 "$wr"
	else
		wr=$(wait_row "$k" 1)
		[ "$wr" != -1 ] || fail "$label: no row for the writes"
	fi
	in_cgroup "$cg" "$DIO" read "$dev" $N $RSIZE || fail "$label: reads"
	in_cgroup "$cg" "$DIO" write "$dev" $M $WSIZE || fail "$label: writes"
	# The first of each op asked for the row and went to the hash; every
	# later one found the row.
	assert_eq "$label: reads in the row" $N "$(row_ios "$rr")"
	[ "$wr" = -1 ] || assert_eq "$label: writes in the row" $M "$(row_ios "$wr")"
	echo "ok: $label rows read=$rr write=$wr"
}

# check_counts OUT LABEL NAME: the exact series of one disk.
check_counts() {
	local out=$1 label=$2 name=$3
	assert_eq "$label reads" $((N + 1)) "$(jget "$out" "s('$name','read')['ios']")"
	assert_eq "$label writes" $((M + 1)) "$(jget "$out" "s('$name','write')['ios']")"
	assert_eq "$label read bytes" $(((N + 1) * RSIZE)) "$(jget "$out" "s('$name','read')['bytes']")"
	assert_eq "$label write bytes" $(((M + 1) * WSIZE)) \
		"$(jget "$out" "s('$name','write')['bytes']")"
	for view in device total; do
		assert_eq "$label read $view timed" $((N + 1)) \
			"$(jget "$out" "s('$name','read')['$view']['count']")"
		assert_eq "$label write $view timed" $((M + 1)) \
			"$(jget "$out" "s('$name','write')['$view']['count']")"
	done
	assert_eq "$label read size slots" "[(4096, $((N + 1)))]" \
		"$(jget "$out" "[(x['hi'], x['count']) for x in s('$name','read')['size_slots']]")"
	echo "ok: $label counts"
}

# Rows for every disk and op, and a disk that comes after the start.
make_loop 64
first=$LOOP
start_iolat "$WORK/rows.json" hist -D -O --json -c "$cg"
check_disk first "$first"
make_loop 64
second=$LOOP
check_disk "added after start" "$second"
stop_iolat INT
assert_detached
check_counts "$WORK/rows.json" first "${first#/dev/}"
check_counts "$WORK/rows.json" "added after start" "${second#/dev/}"

# One row in all: the writes count in the hash alone, as exactly.
IOLAT_TEST_ROWS=1 start_iolat "$WORK/one.json" hist -D -O --json -c "$cg" -d "${first#/dev/}"
EXPECT_NO_WRITE_ROW=1 check_disk "one row" "$first"
stop_iolat INT
assert_detached
check_counts "$WORK/one.json" "one row" "${first#/dev/}"

# Shared values (a host of many CPUs): the rows are shared too, atomic adds.
export IOLAT_TEST_SHARED_VALUES=1
start_iolat "$WORK/shared.json" hist -D -O --json -c "$cg" -d "${first#/dev/}"
check_disk "shared values" "$first"
stop_iolat INT
assert_detached
check_counts "$WORK/shared.json" "shared values" "${first#/dev/}"
unset IOLAT_TEST_SHARED_VALUES

# Keyed by more than disk and op, there are no rows.
start_iolat "$WORK/flags.json" hist -D -O -F --json -c "$cg" -d "${first#/dev/}"
in_cgroup "$cg" "$DIO" read "$first" 1 $RSIZE || fail "keyed by flags: read"
sleep 0.5
assert_eq "keyed by flags: no row" -1 "$(row_of "$(kdev "$first")" 0)"
stop_iolat INT
assert_detached
echo "ok: no rows when keyed by flags"

# serve --handover with rows: a restart adopts them, other settings take
# them over; the disk's completions equal the kernel's over the whole run.
command -v fio >/dev/null || skip "no fio"
NAME=test-dense-$$
PINS=/sys/fs/bpf/iolat/$NAME
if ! mountpoint -q /sys/fs/bpf; then on_exit "umount /sys/fs/bpf"; fi
on_exit "rm -rf $PINS /run/iolat/$NAME"
export IOLAT_TEST_HANDOVER_GRACE_S=2
make_loop 128
disk=${LOOP#/dev/}
export IOLAT_TEST_DISK=$disk
port=$(free_port)
scrape() { curl -sf "http://127.0.0.1:$port/metrics" >"$1" || fail "scrape failed"; }
serve_on() {
	start_serve "$WORK/serve.$1.log" --web.listen-address=127.0.0.1:"$port" --handover=$NAME \
		--no-collector.workloads "${@:2}"
}
# pinned_rows: the live rows of our disk in the pinned row_keys, as op:row.
pinned_rows() {
	bpftool map dump pinned "$PINS/row_keys" -j | python3 -c '
import json, sys
dev = int(sys.argv[1])
print(" ".join(sorted("%d:%d" % (e["formatted"]["value"]["op"], e["formatted"]["key"])
    for e in json.load(sys.stdin)
    if e["formatted"]["value"]["state"] == 1 and e["formatted"]["value"]["dev"] == dev)))' \
		"$(kdev "$LOOP")"
}
serve_on 0
scrape "$WORK/h.0"
d0=$(diskstats_ios "$disk") i0=$(scraped_ios "$WORK/h.0" "$disk")
fio --name=dense --filename="$LOOP" --rw=randrw --bs=4k --direct=1 --ioengine=psync \
	--rate_iops=1500 --time_based --runtime=600 >/dev/null 2>&1 &
FIO=$!
on_exit "kill $FIO"
sleep 1
rows=$(pinned_rows)
assert_eq "rows for reads and writes" 2 "$(wc -w <<<"$rows")"
kill -TERM "$SERVE_PID"
wait "$SERVE_PID" || fail "serve: exit status after SIGTERM"
serve_on 1
grep -q 'msg="adopted the pinned collector"' "$WORK/serve.1.log" || fail "not adopted: $(cat "$WORK/serve.1.log")"
sleep 1
assert_eq "adopted: the same rows" "$rows" "$(pinned_rows)"
kill -TERM "$SERVE_PID"
wait "$SERVE_PID" || fail "serve: exit status after SIGTERM"
serve_on 2 --bpf.map-size=rq_starts=8192
grep -q 'msg="taking over the pinned collector"' "$WORK/serve.2.log" || fail "no takeover: $(cat "$WORK/serve.2.log")"
for _ in $(seq 100); do
	grep -q "handover done" "$WORK/serve.2.log" && break
	sleep 0.1
done
grep -q "handover done" "$WORK/serve.2.log" || fail "the handover did not end"
sleep 1
assert_eq "taken over: rows for reads and writes" 2 "$(wc -w <<<"$(pinned_rows)")"
kill "$FIO"
wait "$FIO" 2>/dev/null
sleep 0.5
d1=$(diskstats_ios "$disk")
scrape "$WORK/h.end"
[ $((d1 - d0)) -gt 1000 ] || fail "fio did only $((d1 - d0)) I/Os"
assert_counted "completions over an adoption and a takeover, in rows" $((d1 - d0)) \
	"$(($(scraped_ios "$WORK/h.end" "$disk") - i0))"
kill -TERM "$SERVE_PID"
wait "$SERVE_PID" || fail "serve: exit status after SIGTERM"
"$IOLAT" serve --unpin=$NAME >/dev/null || fail "serve --unpin failed"
echo "ok: $((d1 - d0)) completions counted in rows across an adoption and a takeover"
