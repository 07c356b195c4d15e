# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Stop means stop, restart means no gap (serve --handover, issue 26), the
# two ways iolat is deployed:
#   - the systemd unit: its own ExecStopPost= script, taken from
#     contrib/iolat.service, run as systemd would after each exit, with
#     SERVICE_RESULT and a systemctl that reports the job systemd runs (a
#     stop or a restart). tests/vm/test_systemd_guest.sh does the same
#     under a real systemd.
#   - the DaemonSet (and a terminal): SIGTERM and nothing after it; the
#     next pod must come within the lease.
# Each case makes a known number of direct reads on a loop device of its
# own while no iolat runs, and checks what the next run counts against the
# kernel's diskstats: exactly all of them after a restart or a crash, none
# after a stop (nothing attached), none once the lease is over (the pinned
# maps do not change) and then a fresh start that says why.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh

NAME=test-lifecycle-$$
PINS=/sys/fs/bpf/iolat/$NAME
LEASE=4
if ! mountpoint -q /sys/fs/bpf; then on_exit "umount /sys/fs/bpf"; fi
on_exit "rm -rf $PINS /run/iolat/$NAME"

make_loop 64
disk=${LOOP#/dev/}
port=$(free_port)
before=$(all_prog_ids)

scrape() { curl -sf "http://127.0.0.1:$port/metrics" >"$1" || fail "scrape failed"; }
serve() { start_serve "$1" --web.listen-address=127.0.0.1:"$port" --handover=$NAME --handover.lease=${LEASE}s; }
reads() { dd if="$LOOP" of=/dev/null bs=4k count="$1" skip=$((RANDOM % 1000)) iflag=direct status=none || fail "dd failed"; }

# The unit's ExecStopPost= script, with this build's iolat and instance.
stop_post=$(sed -n "/^ExecStopPost=+\/bin\/sh -c '/,/'$/p" contrib/iolat.service |
	sed -e "1s/^ExecStopPost=+\/bin\/sh -c '//" -e "\$s/'$//" -e 's/\\$//' -e 's/\$\$/$/g' \
		-e 's/%n/iolat.service/g' -e "s|/usr/local/bin/iolat serve --unpin|$IOLAT serve --unpin=$NAME|")
[ -n "$stop_post" ] || fail "no ExecStopPost=+/bin/sh -c '...' in contrib/iolat.service"
grep -q -- "--unpin=$NAME" <<<"$stop_post" || fail "the ExecStopPost= script does not run iolat serve --unpin: $stop_post"
# A systemctl that lists the job systemd would be running for the unit.
mkdir "$WORK/bin"
cat >"$WORK/bin/systemctl" <<'EOF'
#!/bin/sh
[ "$1 $2 $3" = "list-jobs --no-legend iolat.service" ] || { echo "unexpected: systemctl $*" >&2; exit 1; }
[ -z "$JOB" ] || echo "4242 iolat.service $JOB running"
EOF
chmod +x "$WORK/bin/systemctl"
# after_exit RESULT JOB: the unit's ExecStopPost= as systemd runs it.
after_exit() {
	SERVICE_RESULT=$1 JOB=$2 PATH="$WORK/bin:$PATH" sh -c "$stop_post" >"$WORK/stoppost.log" 2>&1 ||
		fail "ExecStopPost= ($1, job ${2:-none}) failed: $(cat "$WORK/stoppost.log")"
}
term() {
	kill -TERM "$SERVE_PID"
	local rc=0
	wait "$SERVE_PID" || rc=$?
	assert_eq "exit status after SIGTERM" 0 "$rc"
}

# restart_counts WHAT: the run before stopped and some I/O was made; a new
# run must adopt the collector and have counted all of it.
restart_counts() {
	serve "$WORK/serve.$1.log"
	grep -q "msg=\"adopted the pinned collector\" dir=$PINS " "$WORK/serve.$1.log" ||
		fail "$1: not adopted: $(cat "$WORK/serve.$1.log")"
	scrape "$WORK/m.$1"
	assert_counted "$1: completions across it" "$(($(diskstats_ios "$disk") - d0))" \
		"$(($(scraped_ios "$WORK/m.$1" "$disk") - i0))"
	echo "ok: $1: adopted, every I/O made in between counted"
}

serve "$WORK/serve.0.log"
grep -q "a restart within the lease adopts it\" dir=$PINS lease_seconds=$LEASE$" "$WORK/serve.0.log" || fail "no lease in: $(cat "$WORK/serve.0.log")"
"$IOLAT" check >"$WORK/check" 2>&1
grep -A3 "^  $NAME: " "$WORK/check" | grep -q "held: its run renews the lease" ||
	fail "iolat check does not show the lease held: $(grep -A4 "^  $NAME: " "$WORK/check")"
scrape "$WORK/m.0"
d0=$(diskstats_ios "$disk") i0=$(scraped_ios "$WORK/m.0" "$disk")

# 1. systemctl restart: exit 0, a restart job: kept.
term
grep -q "msg=\"stopped: the collector stays pinned for a successor\" dir=$PINS lease_seconds=$LEASE " "$WORK/serve.0.log" ||
	fail "no stop line with the lease: $(tail -n 2 "$WORK/serve.0.log")"
reads 300
after_exit success restart
[ -d "$PINS" ] || fail "systemctl restart: ExecStopPost= removed the pins"
restart_counts "systemctl restart"

# 2. A crash (kill -9), then Restart=: kept, whatever job there is.
kill -KILL "$SERVE_PID"
wait "$SERVE_PID" 2>/dev/null
reads 200
after_exit signal ""
[ -d "$PINS" ] || fail "a crash: ExecStopPost= removed the pins"
restart_counts "kill -9 and Restart="

# 3. The DaemonSet's rolling update: SIGTERM, the next pod within the lease.
term
reads 100
sleep 1
restart_counts "a rolling update (SIGTERM, the next run 1 s later)"

# 4. systemctl stop (and disable --now, removal, shutdown): exit 0, a stop
# job: nothing pinned and nothing attached once ExecStopPost= is done.
term
after_exit success stop
grep -qE "^removed $PINS \([1-9][0-9]* links, [1-9][0-9]* maps\): its programs are detached$" "$WORK/stoppost.log" ||
	fail "systemctl stop: ExecStopPost= said: $(cat "$WORK/stoppost.log")"
[ ! -e "$PINS" ] || fail "systemctl stop left $(ls "$PINS")"
settle orphans_since "$before" || fail "programs left attached after systemctl stop: $LEFT"
echo "ok: systemctl stop: nothing pinned or attached after ExecStopPost="

# 5. No successor (kubectl delete of the DaemonSet, a stop at a terminal):
# the lease ends; from then the pinned maps change no more, whatever I/O
# is made, and check says so; the next run starts afresh and says why.
serve "$WORK/serve.5.log"
grep -q "adopted" "$WORK/serve.5.log" && fail "adopted after a stop: $(cat "$WORK/serve.5.log")"
born=$(gauge "$(scrape "$WORK/m.5" && echo "$WORK/m.5")" iolat_collector_start_time_seconds)
term
dump() { for m in hists hists_shared stats; do bpftool -j map dump pinned "$PINS/$m"; done | sha256sum; }
h0=$(dump)
reads 100
h1=$(dump)
[ "$h0" != "$h1" ] || fail "within the lease, 100 reads changed nothing in the pinned maps"
sleep $((LEASE + 1))
"$IOLAT" check >"$WORK/check" 2>&1
grep -A3 "^  $NAME: " "$WORK/check" | grep -q "lease over [0-9]* s ago: attached but counting nothing" ||
	fail "iolat check does not show the lease over: $(grep -A4 "^  $NAME: " "$WORK/check")"
h2=$(dump)
reads 500
h3=$(dump)
assert_eq "pinned maps after 500 reads past the lease" "$h2" "$h3"
echo "ok: no successor: the lease ends, and 500 reads after it changed nothing"
serve "$WORK/serve.6.log"
grep -qE "level=warn msg=\"replaced the pinned collector\" dir=$PINS reason=\".*left without a successor: its lease ended [0-9]+ s ago" "$WORK/serve.6.log" ||
	fail "a start past the lease: $(cat "$WORK/serve.6.log")"
scrape "$WORK/m.6"
[ "$(gauge "$WORK/m.6" iolat_collector_start_time_seconds)" != "$born" ] ||
	fail "a start past the lease kept the old collector's start time"
echo "ok: a start past the lease starts afresh and says why"
term
"$IOLAT" serve --unpin=$NAME >/dev/null 2>&1 || fail "serve --unpin failed"
settle orphans_since "$before" || fail "programs left attached after --unpin: $LEFT"
