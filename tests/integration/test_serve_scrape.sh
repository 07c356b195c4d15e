# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A scrape only reads, and maintenance keeps its own time (issue 27):
# - a scrape's block counts are the kernel's at the scrape (a fold on
#   demand), exact against the I/O made just before it, with no maintenance
#   pass run for it;
# - scrapes run no pass: iolat_maintenance_passes_total stays put under a
#   burst of scrapes, and moves at --maintenance.interval without any;
# - a scrape writes nothing: under strace, the serving process makes no BPF
#   map update or delete and opens, renames or unlinks no file while it
#   answers scrapes; with --handover its series file keeps its inode and
#   mtime across them, and a pass saves it;
# - label sets are as of the last pass: a new cgroup's I/O counts on its
#   disk at once, and gets its workload series from the pass after.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh
command -v strace >/dev/null || skip "strace is not installed"

make_loop 32
dev=$LOOP
name=${dev#/dev/}
port=$(free_port)
url=http://127.0.0.1:$port
inst=scrape$$
on_exit "$IOLAT serve --unpin=$inst >/dev/null 2>&1"
# A lease of 5m, so passes keep to the 1m asked (with --handover they run at
# least three times a lease).
start_serve "$WORK/serve.log" --web.listen-address="127.0.0.1:$port" \
	--maintenance.interval=1m --handover="$inst" --handover.lease=5m

scrape() { curl -sf "$url/metrics" >"$WORK/m" || fail "scrape failed"; }
value() { metric "$WORK/m" "$1" "${2:-}"; }
# The first pass runs at start; after it, none for a minute.
first_pass() {
	for _ in $(seq 1 100); do
		scrape
		[ "$(value iolat_maintenance_passes_total)" -ge 1 ] && return 0
		sleep 0.05
	done
	fail "no pass at start"
}
reads() { local v; v=$(value iolat_block_completions_total "{device=\"$name\",op=\"read\"}"); echo "${v:-0}"; }

# 1. Fresh counts without a pass.
first_pass
assert_eq "interval gauge" 60 "$(value iolat_maintenance_interval_seconds)"
passes0=$(value iolat_maintenance_passes_total)
before=$(reads)
"$DIO" read "$dev" 37 4096 || fail "dio read"
scrape
assert_eq "reads right after the I/O, no pass between" 37 "$(($(reads) - before))"
"$DIO" read "$dev" 5 4096 || fail "dio read"
scrape
assert_eq "and again" 42 "$(($(reads) - before))"
echo "ok: a scrape counts the I/O just before it (37, then 42) with no pass"

# 2. Scrapes run no pass; and write nothing (strace of every thread).
state=/run/iolat/$inst # pin_state_dir: the series file is saved there
# (made at the first save: a scrape must not make it either)
state_files() { find "$state" -printf '%p %i %T@\n' 2>/dev/null | sort; }
files0=$(state_files)
strace -f -qq -p "$SERVE_PID" -e trace=bpf,openat,rename,renameat,renameat2,unlink,unlinkat \
	-o "$WORK/strace" &
strace_pid=$!
sleep 1 # attached to every thread
for i in $(seq 1 20); do
	"$DIO" read "$dev" 1 4096 || fail "dio read"
	scrape
done
kill -INT "$strace_pid"
wait "$strace_pid" 2>/dev/null || true
assert_eq "passes under 20 scrapes" "$passes0" "$(value iolat_maintenance_passes_total)"
assert_eq "reads after 20 more" 62 "$(($(reads) - before))"
grep -q 'BPF_MAP_LOOKUP_ELEM\|BPF_MAP_GET_NEXT_KEY' "$WORK/strace" ||
	fail "strace saw no map read: $(head -5 "$WORK/strace")"
writes=$(grep -E 'BPF_MAP_(UPDATE|DELETE|LOOKUP_AND_DELETE)_ELEM|rename|unlink|O_WRONLY|O_RDWR|O_CREAT' "$WORK/strace" || true)
[ -z "$writes" ] || fail "a scrape wrote: $(echo "$writes" | head -5)"
assert_eq "the state directory after the scrapes" "$files0" "$(state_files)"
echo "ok: 20 scrapes ran no pass, updated or deleted no map entry, wrote no file"

# 3. Passes keep their own time, without scrapes; a pass saves the series.
# Pinned (--handover): it stays attached for the next run, which adopts it.
stop_pinned() { kill -TERM "$SERVE_PID"; wait "$SERVE_PID" || fail "$1: exit status $?"; }
stop_pinned "a 1m interval"
start_serve "$WORK/serve2.log" --web.listen-address="127.0.0.1:$port" \
	--maintenance.interval=300ms --handover="$inst"
scrape
p1=$(value iolat_maintenance_passes_total)
sleep 2
scrape
p2=$(value iolat_maintenance_passes_total)
n=$((p2 - p1))
{ [ "$n" -ge 4 ] && [ "$n" -le 8 ]; } || fail "$n passes in 2 s at 300ms, expected about 6"
dur=$(value iolat_maintenance_duration_seconds)
awk -v d="$dur" 'BEGIN { exit !(d > 0 && d < 1) }' || fail "pass duration $dur"
[ -s "$state/series" ] || fail "no pass saved the series: $(state_files)"
echo "ok: $n passes in 2 s without being asked, the last took ${dur}s; a pass saved the series"

# 4. Label sets come from passes: a new cgroup's reads count on its disk at
# once, and under its own workload from a pass later.
base=$(cgroup_root)/iolat-scrape$$.slice
mkdir "$base" "$base/fresh.service"
on_exit "rmdir $base/fresh.service $base"
stop_pinned "a 300ms interval"
"$IOLAT" serve --unpin="$inst" >/dev/null 2>&1 || fail "unpin $inst"
start_serve "$WORK/serve3.log" --web.listen-address="127.0.0.1:$port" \
	--maintenance.interval=1m --collector.workloads
first_pass
before=$(reads)
in_cgroup "$base/fresh.service" "$DIO" read "$dev" 9 4096 || fail "dio in cgroup"
scrape
assert_eq "the new cgroup's reads on the disk" 9 "$(($(reads) - before))"
grep -q 'workload="fresh' "$WORK/m" && fail "named before any pass"
stop_serve "a 1m interval with workloads"
echo "ok: a new cgroup counts on its disk at once and waits for a pass to be named"
