# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Restarts without a gap (serve --handover): under a steady fio load on a
# loop device, `iolat serve --handover=NAME` is stopped and started again
# 20 times, by SIGTERM and by kill -9 in turn. Each run adopts the pinned
# collector of the one before: its disk's completion counter at the end
# must equal the kernel's diskstats over the whole run, and no counter of
# any scrape may be below the one before. Then `serve --unpin` must leave
# nothing in bpffs or /run and nothing attached; and pins iolat cannot
# read are replaced with a warning, not adopted.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh

RESTARTS=${RESTARTS:-20}
command -v fio >/dev/null || skip "no fio"
NAME=test-handover-$$
PINS=/sys/fs/bpf/iolat/$NAME
STATE=/run/iolat/$NAME
# Leave bpffs as it was found: iolat mounts it where nothing did.
if ! mountpoint -q /sys/fs/bpf; then on_exit "umount /sys/fs/bpf"; fi
on_exit "rm -rf $PINS $STATE"
# The default instance is used too (--handover without NAME).
[ ! -e /sys/fs/bpf/iolat/serve ] || skip "a collector is pinned as 'serve' already (someone's serve --handover)"
on_exit "rm -rf /sys/fs/bpf/iolat/serve /run/iolat/serve"

make_loop 256
disk=${LOOP#/dev/}
export IOLAT_TEST_DISK=$disk
port=$(free_port)
before=$(all_prog_ids)

scrape() { curl -sf "http://127.0.0.1:$port/metrics" >"$1" || fail "scrape failed"; }

start_serve "$WORK/serve.0.log" --web.listen-address=127.0.0.1:"$port" --handover=$NAME
[ -d "$PINS" ] || fail "no pins in $PINS"
grep -q "collector pinned: a restart within the lease adopts it\" dir=$PINS lease_seconds=" "$WORK/serve.0.log" || fail "no pin message: $(cat "$WORK/serve.0.log")"
"$IOLAT" check >"$WORK/check" 2>&1
grep -A1 "^  $NAME: made by iolat .* at .*, map layout [0-9]*$" "$WORK/check" |
	grep -qE "[0-9]+ programs attached, [0-9]+ maps; taken over 0 times, last by pid $SERVE_PID \(running\)" ||
	fail "iolat check does not list the pinned collector: $(grep -A3 Pinned "$WORK/check")"
scrape "$WORK/m.0"
d0=$(diskstats_ios "$disk") i0=$(scraped_ios "$WORK/m.0" "$disk")
born=$(gauge "$WORK/m.0" iolat_collector_start_time_seconds)
[ -n "$born" ] || fail "no iolat_collector_start_time_seconds"

fio --name=handover --filename="$LOOP" --rw=randrw --bs=4k --direct=1 --ioengine=psync \
	--rate_iops=1500 --time_based --runtime=600 >/dev/null 2>&1 &
FIO=$!
on_exit "kill $FIO"
sleep 1

for ((i = 1; i <= RESTARTS; i++)); do
	if ((i % 2)); then
		kill -TERM "$SERVE_PID"
		rc=0
		wait "$SERVE_PID" || rc=$?
		assert_eq "restart $i: exit status after SIGTERM" 0 "$rc"
	else
		kill -KILL "$SERVE_PID"
		wait "$SERVE_PID" 2>/dev/null
	fi
	# Stopped, the programs still count: nothing attached was let go.
	[ -d "$PINS" ] || fail "restart $i: the pins are gone"
	start_serve "$WORK/serve.$i.log" --web.listen-address=127.0.0.1:"$port" --handover=$NAME
	grep -q "msg=\"adopted the pinned collector\" dir=$PINS " "$WORK/serve.$i.log" ||
		fail "restart $i: not adopted: $(cat "$WORK/serve.$i.log")"
	! grep -q "level=warn" "$WORK/serve.$i.log" || fail "restart $i: $(grep level=warn "$WORK/serve.$i.log")"
	scrape "$WORK/m.$i"
	check_monotonic "$WORK/m.$((i - 1))" "$WORK/m.$i" iolat_bpf_program_
	assert_eq "restart $i: iolat_collector_start_time_seconds" "$born" \
		"$(gauge "$WORK/m.$i" iolat_collector_start_time_seconds)"
	python3 -c 'import sys; import math; sys.exit(not float(sys.argv[1]) >= max(float(sys.argv[2]), math.floor(float(sys.argv[3]))))' \
		"$(gauge "$WORK/m.$i" iolat_start_time_seconds)" \
		"$(gauge "$WORK/m.$((i - 1))" iolat_start_time_seconds)" "$born" ||
		fail "restart $i: iolat_start_time_seconds is before the last run's or the collector's"
	[ "$(scraped_ios "$WORK/m.$i" "$disk")" -gt "$(scraped_ios "$WORK/m.$((i - 1))" "$disk")" ] ||
		fail "restart $i: the completions did not grow under fio"
	sleep 0.3
done
kill "$FIO"
wait "$FIO" 2>/dev/null
sleep 0.5
d1=$(diskstats_ios "$disk")
scrape "$WORK/m.end"
check_monotonic "$WORK/m.$RESTARTS" "$WORK/m.end" iolat_bpf_program_
done_ios=$((d1 - d0))
[ "$done_ios" -gt 1000 ] || fail "fio did only $done_ios I/Os"
assert_counted "completions over $RESTARTS restarts" "$done_ios" "$(($(scraped_ios "$WORK/m.end" "$disk") - i0))"
echo "ok: $done_ios completions over $RESTARTS restarts (SIGTERM and kill -9), counted exactly, no counter went backwards"

# Stopped, then --unpin: nothing pinned, saved or attached.
kill -TERM "$SERVE_PID"
wait "$SERVE_PID"
"$IOLAT" serve --unpin=$NAME >"$WORK/unpin.out" 2>&1 || fail "serve --unpin failed: $(cat "$WORK/unpin.out")"
grep -qE "^removed $PINS \([1-9][0-9]* links, [1-9][0-9]* maps\): its programs are detached$" "$WORK/unpin.out" ||
	fail "serve --unpin said: $(cat "$WORK/unpin.out")"
[ ! -e "$PINS" ] || fail "--unpin left $(ls "$PINS")"
[ ! -e "$STATE" ] || fail "--unpin left $(ls "$STATE")"
settle orphans_since "$before" || fail "programs left attached after --unpin: $LEFT"
"$IOLAT" serve --unpin=$NAME >"$WORK/unpin.out" 2>&1 || fail "a second serve --unpin failed"
assert_eq "a second serve --unpin" "nothing pinned as $NAME" "$(cat "$WORK/unpin.out")"
expect_error 2 "bad --unpin instance name 'a/b'" serve --unpin=a/b
echo "ok: --unpin leaves nothing pinned, saved or attached"

# --handover off, with pins an earlier run left: taken over, no counter
# reset, and at stop nothing is left pinned, saved or attached. (The
# default instance, serve.)
start_serve "$WORK/serve.c.log" --web.listen-address=127.0.0.1:"$port" --handover
scrape "$WORK/m.c"
kill -KILL "$SERVE_PID"
wait "$SERVE_PID" 2>/dev/null
start_serve "$WORK/serve.d.log" --web.listen-address=127.0.0.1:"$port"
grep -q "found the collector an earlier run with --handover left pinned\" dir=/sys/fs/bpf/iolat/serve " "$WORK/serve.d.log" ||
	fail "--handover off: the left pins not found: $(cat "$WORK/serve.d.log")"
grep -q "msg=\"adopted the pinned collector\" dir=/sys/fs/bpf/iolat/serve " "$WORK/serve.d.log" ||
	fail "--handover off: the left pins not adopted: $(cat "$WORK/serve.d.log")"
scrape "$WORK/m.d"
check_monotonic "$WORK/m.c" "$WORK/m.d" iolat_bpf_program_
kill -TERM "$SERVE_PID"
wait "$SERVE_PID"
[ ! -e /sys/fs/bpf/iolat/serve ] || fail "--handover off: left $(ls /sys/fs/bpf/iolat/serve)"
[ ! -e /run/iolat/serve ] || fail "--handover off: left $(ls /run/iolat/serve)"
settle orphans_since "$before" || fail "--handover off: programs left attached: $LEFT"
echo "ok: with --handover off, what an earlier run left pinned is taken over and removed at stop"

# Pins iolat cannot read (a control map that is not its own) are replaced,
# loudly. (Pins of other settings or another release are taken over:
# test_upgrade.sh.)
mkdir -p "$PINS"
bpftool map create "$PINS/control" type array key 4 value 96 entries 1 name control ||
	fail "bpftool map create failed"
start_serve "$WORK/serve.b.log" --web.listen-address=127.0.0.1:"$port" --handover=$NAME
grep -q "level=warn msg=\"replaced the pinned collector\" dir=$PINS reason=\"unreadable pins" "$WORK/serve.b.log" ||
	fail "unreadable pins not replaced with a warning: $(cat "$WORK/serve.b.log")"
! grep -q "adopted\|taking over" "$WORK/serve.b.log" || fail "unreadable pins adopted"
kill -TERM "$SERVE_PID"
wait "$SERVE_PID"
"$IOLAT" serve --unpin=$NAME >/dev/null || fail "serve --unpin failed"
[ ! -e "$PINS" ] || fail "left $(ls "$PINS")"
settle orphans_since "$before" || fail "programs left attached: $LEFT"
echo "ok: pins iolat cannot read are replaced with a warning"
