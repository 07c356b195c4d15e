# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The views on a kernel that caches its clock in the plug (6.9+): a request
# created and issued in one plug gets the plug's one cached time in both
# stamps, so the kernel's stamps make the total view the device view and
# start both early. iolat restamps such requests from its own clock at
# block_io_start and block_rq_issue; here its device and total times are
# compared, over the same I/O, with the times `iolat trace` takes at the
# tracepoints (stamp_truth.py: percentiles within max(2 us, 2 %) plus a
# slot, exact means, the queue time between the views), for a synchronous
# read, io_uring at QD32 with batched submission, and 1 MiB reads split
# behind mq-deadline; and the counts stay exact (hist = trace = the disk's
# own count). Then what iolat says when it cannot make them true: every
# stamp kept with restamping off, most of them with a one-slot table.
source tests/integration/lib.sh

command -v fio >/dev/null || skip "fio is not installed"
bpftool btf dump file /sys/kernel/btf/vmlinux 2>/dev/null |
	awk "/STRUCT 'blk_plug'/ { f = 1; next } f && /^\[/ { exit } f" |
	grep -q "'cur_ktime'" || skip "this kernel has no plug clock (blk_plug.cur_ktime, 6.9+)"

make_loop 64
dev=$LOOP
name=${dev#/dev/}
q=/sys/block/$name/queue

# Completed reads and writes, from the disk's own count.
completed() { awk '{ print $1 + $5 }' "/sys/block/$name/stat"; }

# truth LABEL WORKLOAD...: hist and trace over WORKLOAD, checked.
truth() {
	local label=$1 before after ios trace_pid
	shift
	# hist first: at each tracepoint its program then runs before trace's,
	# whose heavier completion (a record to its ring buffer) then comes
	# after both clocks were read rather than between them.
	start_iolat "$WORK/$label.hist" hist --json -d "$name"
	: >"$WORK/$label.trace.err"
	"$IOLAT" trace --json --max-rate 0 --ringbuf-kib 65536 -d "$name" >"$WORK/$label.trace" \
		2>"$WORK/$label.trace.err" &
	trace_pid=$!
	on_exit "kill $trace_pid 2>/dev/null"
	wait_for_line "$WORK/$label.trace.err" "Tracing block device I/O" 10 ||
		fail "$label: trace did not attach: $(cat "$WORK/$label.trace.err")"
	before=$(completed)
	"$@" || fail "$label: the workload failed"
	after=$(completed)
	stop_iolat INT
	kill -INT "$trace_pid"
	wait "$trace_pid" || fail "$label: trace exited with $?"
	grep -q " 0 lost" "$WORK/$label.trace.err" ||
		fail "$label: trace lost records: $(cat "$WORK/$label.trace.err")"
	ios=$(jget "$WORK/$label.hist" "s()['ios']")
	assert_eq "$label: hist's I/O against the disk's count" $((after - before)) "$ios"
	python3 tests/integration/stamp_truth.py --label "$label: " "$WORK/$label.hist" \
		"$WORK/$label.trace" || fail "$label: iolat's views are not the tracepoints' times"
	restamped=$(jget "$WORK/$label.hist" "d['collector']['restamped']")
	untrue=$(jget "$WORK/$label.hist" "d['collector']['untrue_stamps']")
	same=$(jget "$WORK/$label.hist" "d['collector']['same_stamps']")
	echo "$label: $ios I/O, $same with one cached stamp, $restamped restamped, $untrue untrue"
	# The kernel cached its stamps here (that is what this test is about):
	# iolat restamped them, and left at most 1 % (a table slot two requests
	# in flight shared) as they were.
	[ "$same" -gt 0 ] || fail "$label: no I/O with one cached stamp: the test proves nothing"
	[ "$restamped" -ge "$same" ] || fail "$label: $same with one stamp, $restamped restamped"
	[ $((untrue * 100)) -le "$ios" ] || fail "$label: $untrue of $ios I/O left untrue"
}

truth sync "$DIO" read "$dev" 2000 4096
truth uring fio --name=qd32 --filename="$dev" --direct=1 --ioengine=io_uring --rw=randread \
	--bs=4k --iodepth=32 --iodepth_batch_submit=16 --iodepth_batch_complete_min=1 \
	--number_ios=8000 --size=48M --output=/dev/null

echo mq-deadline >"$q/scheduler" || skip "no mq-deadline scheduler"
on_exit "echo none > $q/scheduler"
old_max=$(cat "$q/max_sectors_kb")
echo 128 >"$q/max_sectors_kb" || fail "cannot lower max_sectors_kb"
on_exit "echo $old_max > $q/max_sectors_kb"
truth split dd if="$dev" of=/dev/null bs=1M count=48 iflag=direct status=none
split_ios=$(jget "$WORK/split.hist" "s()['ios']")
assert_eq "split: 48 reads of 1 MiB in 128 KiB requests" 384 "$split_ios"
echo none >"$q/scheduler"
echo "$old_max" >"$q/max_sectors_kb"
echo "ok: device and total views true on io_uring QD32, split reads and a synchronous read"

# Restamping off: every completion keeps the cached stamps, counted, and
# the text says so under the interval.
IOLAT_TEST_NO_RESTAMP=1 start_iolat "$WORK/off.json" hist --json -d "$name"
"$DIO" read "$dev" 200 4096 || fail "dio read"
stop_iolat INT
assert_eq "restamping off: restamped" 0 "$(jget "$WORK/off.json" "d['collector']['restamped']")"
same=$(jget "$WORK/off.json" "d['collector']['same_stamps']")
[ "$same" -gt 0 ] || fail "restamping off: no I/O with one cached stamp"
assert_eq "restamping off: untrue" "$same" "$(jget "$WORK/off.json" "d['collector']['untrue_stamps']")"
IOLAT_TEST_NO_RESTAMP=1 start_iolat "$WORK/off.txt" hist -d "$name"
"$DIO" read "$dev" 20 4096 || fail "dio read"
stop_iolat INT
grep -q "^note: this kernel caches its clock in the plug (6.9+) and iolat does not restamp" \
	"$WORK/off.txt" || fail "restamping off: no note under the interval: $(cat "$WORK/off.txt")"

# A one-slot table: requests whose slot is out of it keep their stamps;
# the line says how many, the number JSON gives.
IOLAT_TEST_RESTAMP_SLOTS=1 start_iolat "$WORK/slot.txt" hist -d "$name"
"$DIO" read "$dev" 100 4096 || fail "dio read"
stop_iolat INT
kept=$(sed -nE 's/^note: ([0-9]+) I\/O kept the plug clock.s cached stamps \(untrue_stamps\).*/\1/p' \
	"$WORK/slot.txt")
if [ -z "$kept" ] || [ "$kept" -eq 0 ] || [ "$kept" -gt 100 ]; then
	fail "one-slot table: no count of untrue I/O under the interval: $(cat "$WORK/slot.txt")"
fi
IOLAT_TEST_RESTAMP_SLOTS=1 start_iolat "$WORK/slot.json" hist --json -d "$name"
"$DIO" read "$dev" 100 4096 || fail "dio read"
stop_iolat INT
untrue=$(jget "$WORK/slot.json" "d['collector']['untrue_stamps']")
if [ "$untrue" -eq 0 ] || [ "$untrue" -gt 100 ]; then
	fail "one-slot table: $untrue of 100 I/O untrue"
fi
echo "ok: untrue stamps counted and said ($kept of 100 on screen, $untrue of 100 in JSON)"
