# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Upgrades and setting changes without a gap (serve --handover, another
# build or other settings: src/core/handover.h). Under a steady fio load on
# a loop device, `iolat serve --handover=NAME` is replaced, each time by
# SIGTERM and a start:
#   1. by itself with other settings (--label.size-class): a takeover;
#   2. by the "next release", built here with a field appended to the
#      kernel values and the map layout one version on (make LAYOUT_NEXT=1):
#      it reads the current maps and takes them over;
#   3. by that build again: it adopts its own pins.
# Each takeover must say so, finish its handover, and leave one collector
# attached; the disk's completions at the end must equal the kernel's
# diskstats over the whole run, and no counter may go backwards between
# scrapes of the same settings. Then the rollback: the current build finds
# the next one's layout, says it cannot read it, and starts afresh.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh

command -v fio >/dev/null || skip "no fio"
NAME=test-upgrade-$$
PINS=/sys/fs/bpf/iolat/$NAME
STATE=/run/iolat/$NAME
if ! mountpoint -q /sys/fs/bpf; then on_exit "umount /sys/fs/bpf"; fi
on_exit "rm -rf $PINS $STATE"

# The next release: this tree, built with LAYOUT_NEXT=1 (Makefile), in a
# directory of its own that later runs (make sanitize, tsan) build on.
NEXT=build-next
make --no-print-directory -s OUT="$NEXT" LAYOUT_NEXT=1 VERSION=9.9.9-next "$NEXT/iolat" >"$WORK/next.build" 2>&1 ||
	fail "building the next release failed: $(tail -20 "$WORK/next.build")"
CURRENT=$IOLAT
# Three takeovers' graces in one test: shorter than the 10 s of a real one.
export IOLAT_TEST_HANDOVER_GRACE_S=3

make_loop 256
disk=${LOOP#/dev/}
export IOLAT_TEST_DISK=$disk
port=$(free_port)
before=$(all_prog_ids)

scrape() { curl -sf "http://127.0.0.1:$port/metrics" >"$1" || fail "scrape failed"; }
# Programs loaded now that were not before the test, less those other
# processes hold (another iolat on a shared machine): ours, and any of ours
# still attached through pins or not yet freed.
held_by_others() {
	local p
	for p in /proc/[0-9]*; do
		[ "${p#/proc/}" = "$SERVE_PID" ] || grep -hs '^prog_id:' "$p"/fdinfo/*
	done | awk '{ print $2 }' | sort -u
}
loaded() { comm -23 <(loaded_since "$before") <(held_by_others) | grep -c .; }
# one_collector STEP: as many programs as one collector loads (the kernel
# frees the ones let go after an RCU grace period: up to 3 s).
one_collector() {
	for _ in $(seq 30); do
		[ "$(loaded)" = "$ones" ] && return 0
		sleep 0.1
	done
	fail "$1: $(loaded) programs loaded, where one collector loads $ones"
}


# restart STEP BINARY [FLAGS...]: SIGTERM the running serve, start BINARY.
restart() {
	local step=$1 bin=$2 rc=0
	shift 2
	kill -TERM "$SERVE_PID"
	wait "$SERVE_PID" || rc=$?
	assert_eq "$step: exit status after SIGTERM" 0 "$rc"
	[ -d "$PINS" ] || fail "$step: the pins are gone"
	IOLAT=$bin start_serve "$WORK/serve.$step.log" --web.listen-address=127.0.0.1:"$port" \
		--handover=$NAME "$@"
	! grep -q "level=warn" "$WORK/serve.$step.log" || fail "$step: $(grep level=warn "$WORK/serve.$step.log")"
}

# handed_over STEP: the takeover said so, and ends within its grace.
handed_over() {
	local step=$1 log=$WORK/serve.$1.log
	grep -q "msg=\"taking over the pinned collector\" dir=$PINS .* grace_seconds=3 " "$log" ||
		fail "$step: no takeover: $(cat "$log")"
	for _ in $(seq 150); do
		grep -q "handover done" "$log" && break
		sleep 0.1
	done
	grep -q "handover done" "$log" || fail "$step: the handover did not end: $(cat "$log")"
}

IOLAT=$CURRENT start_serve "$WORK/serve.0.log" --web.listen-address=127.0.0.1:"$port" --handover=$NAME
scrape "$WORK/m.0"
d0=$(diskstats_ios "$disk") i0=$(scraped_ios "$WORK/m.0" "$disk")
born=$(gauge "$WORK/m.0" iolat_collector_start_time_seconds)
ones=$(loaded)

fio --name=upgrade --filename="$LOOP" --rw=randrw --bs=4k --direct=1 --ioengine=psync \
	--rate_iops=1500 --time_based --runtime=600 >/dev/null 2>&1 &
FIO=$!
on_exit "kill $FIO"
sleep 1
scrape "$WORK/m.0b"

# 1. Other settings: the size-class label.
restart 1 "$CURRENT" --label.size-class
scrape "$WORK/m.1"
[ "$(scraped_ios "$WORK/m.1" "$disk")" -ge "$(scraped_ios "$WORK/m.0b" "$disk")" ] || fail "1: completions went back at the takeover"
handed_over 1
one_collector 1
scrape "$WORK/m.1b"
check_monotonic "$WORK/m.1" "$WORK/m.1b"
grep -q 'size="<=4KiB"' "$WORK/m.1b" || fail "1: no size-class label after the takeover"

# 2. The next release, a field more in every kernel value.
restart 2 "$NEXT/iolat"
grep -q "made_by=[^ ]* layout=3 our_layout=4 " "$WORK/serve.2.log" ||
	fail "2: the takeover does not name the layouts: $(cat "$WORK/serve.2.log")"
scrape "$WORK/m.2"
[ "$(scraped_ios "$WORK/m.2" "$disk")" -ge "$(scraped_ios "$WORK/m.1b" "$disk")" ] || fail "2: completions went back at the upgrade"
handed_over 2
one_collector 2
scrape "$WORK/m.2b"
check_monotonic "$WORK/m.2" "$WORK/m.2b"

# 3. Restarted, the next release adopts its own pins.
restart 3 "$NEXT/iolat"
grep -q "msg=\"adopted the pinned collector\" dir=$PINS made_by=9.9.9-next" "$WORK/serve.3.log" ||
	fail "3: not adopted: $(cat "$WORK/serve.3.log")"
scrape "$WORK/m.3"
check_monotonic "$WORK/m.2b" "$WORK/m.3"
for m in 1 1b 2 2b 3; do
	assert_eq "iolat_collector_start_time_seconds in scrape $m" "$born" \
		"$(gauge "$WORK/m.$m" iolat_collector_start_time_seconds)"
done
sleep 1
kill "$FIO"
wait "$FIO" 2>/dev/null
sleep 0.5
d1=$(diskstats_ios "$disk")
scrape "$WORK/m.end"
check_monotonic "$WORK/m.3" "$WORK/m.end"
done_ios=$((d1 - d0))
[ "$done_ios" -gt 1000 ] || fail "fio did only $done_ios I/Os"
assert_counted "completions over two takeovers and a restart" "$done_ios" \
	"$(($(scraped_ios "$WORK/m.end" "$disk") - i0))"
echo "ok: $done_ios completions across a settings change, an upgrade to layout 4 and a restart, counted exactly"

# Rollback: the current build cannot read layout 4; it says so and starts
# afresh (its counts begin again), with one collector attached.
kill -TERM "$SERVE_PID"
wait "$SERVE_PID"
IOLAT=$CURRENT start_serve "$WORK/serve.4.log" --web.listen-address=127.0.0.1:"$port" --handover=$NAME
grep -q "level=warn msg=\"replaced the pinned collector\" dir=/sys/fs/bpf/iolat/$NAME reason=\"iolat 9.9.9-next's collector has map layout 4, which this iolat cannot read (it reads layouts 1 to 3)" \
	"$WORK/serve.4.log" || fail "rollback: no clear refusal: $(cat "$WORK/serve.4.log")"
! grep -q "adopted\|taking over" "$WORK/serve.4.log" || fail "rollback: took the newer layout's maps"
scrape "$WORK/m.4"
[ "$(gauge "$WORK/m.4" iolat_collector_start_time_seconds)" != "$born" ] ||
	fail "rollback: the collector start time did not change"
[ "$(scraped_ios "$WORK/m.4" "$disk")" -lt "$(scraped_ios "$WORK/m.end" "$disk")" ] || fail "rollback: counters did not start again"
one_collector rollback
kill -TERM "$SERVE_PID"
wait "$SERVE_PID"
"$IOLAT" serve --unpin=$NAME >/dev/null || fail "serve --unpin failed"
settle orphans_since "$before" || fail "programs left attached: $LEFT"
echo "ok: a rollback refuses the newer layout clearly and starts afresh"
