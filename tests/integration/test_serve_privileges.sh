# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# iolat as an unprivileged user with only the capabilities docs/serve.md
# ("Privileges") lists, through setpriv and a throwaway user:
#  - CAP_BPF + CAP_PERFMON: `iolat serve` starts, serves exact counts per
#    disk and per workload, keeps just those two, stops cleanly; check,
#    hist and top run too;
#  - one of them missing, or both: exit 1 with one line naming the missing
#    capability (serve, hist, top, check), nothing left loaded;
#  - what needs more: --bpf.stats (CAP_SYS_ADMIN), a port below 1024
#    (CAP_NET_BIND_SERVICE), a user program on a tracepoint/ SEC
#    (CAP_DAC_READ_SEARCH, for tracefs), kernel symbol names (CAP_SYSLOG):
#    each refused with the capability named, and working once it is given.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh
command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
command -v useradd >/dev/null || skip "useradd (passwd) is not installed"
[ -e "$OUT/examples/timers.bpf.o" ] || fail "$OUT/examples/timers.bpf.o missing: run make examples"

# A throwaway system user; useradd waits for no one holding /etc/passwd.
user=iolatpriv$$
for _ in 1 2 3 4 5; do
	useradd --system --no-create-home --shell /usr/sbin/nologin "$user" 2>"$WORK/useradd.err" && break
	sleep 0.5
done
id "$user" >/dev/null 2>&1 || fail "useradd: $(cat "$WORK/useradd.err")"
on_exit "userdel $user"
uid=$(id -u "$user")
# The binary and examples, copied where the user can reach them (the
# checkout may be where only root can go): IOLAT and EX.
unpriv_iolat "$uid" "$(id -g "$user")"

# as CAPS: WRAP for running iolat as the user with exactly CAPS (e.g. +bpf,+perfmon).
as() { echo "setpriv --reuid=$uid --regid=$(id -g "$user") --clear-groups --inh-caps=-all,$1 --ambient-caps=$1"; }
scrape() { curl -sf "http://127.0.0.1:$port/metrics" >"$1" || fail "scrape $1 failed"; }
stop_serve() {
	local t0 t1 rc=0
	t0=$(date +%s%N)
	kill -TERM "$SERVE_PID"
	wait "$SERVE_PID" || rc=$?
	t1=$(date +%s%N)
	assert_eq "$1: exit status" 0 "$rc"
	[ $(((t1 - t0) / 1000000)) -lt 1000 ] || fail "$1: took $(((t1 - t0) / 1000000)) ms to exit"
	assert_detached
}
# capeff PID: the effective capability set, as /proc shows it.
capeff() { awk '/^CapEff:/ { print $2 }' "/proc/$1/status"; }

make_loop 32
dev=$LOOP
name=${dev#/dev/}

# 1. CAP_BPF and CAP_PERFMON: everything the daemon does by default.
port=$(free_port)
WRAP=$(as +bpf,+perfmon) start_serve "$WORK/serve.log" "${WL_FULL[@]}" --web.listen-address="127.0.0.1:$port" \
	--maintenance.interval=100ms
assert_eq "uid of the daemon" "$uid" "$(awk '/^Uid:/ { print $2 }' "/proc/$SERVE_PID/status")"
assert_eq "effective capabilities (CAP_PERFMON, CAP_BPF)" 000000c000000000 "$(capeff "$SERVE_PID")"
"$DIO" read "$dev" 77 4096 || fail "dio read"
after_pass "http://127.0.0.1:$port/metrics" # names the workload
scrape "$WORK/m1"
assert_eq "completions" 77 "$(metric "$WORK/m1" iolat_block_completions_total "{device=\"$name\",op=\"read\"}")"
assert_eq "histogram count" 77 \
	"$(metric "$WORK/m1" iolat_block_device_latency_seconds_count "{device=\"$name\",op=\"read\"}")"
# Workload names come from the cgroup hierarchy, readable by anyone: the
# reads are under the test's own cgroup, by name, not an unnamed id.
python3 - "$WORK/m1" "$name" <<'PY' || fail "workload series"
import re, sys
total, names = 0, []
for line in open(sys.argv[1]):
    m = re.match(r'iolat_workload_completions_total\{device="%s",op="read",kind="([^"]*)",workload="([^"]*)"\} (\S+)$' % sys.argv[2], line)
    if m:
        total += float(m.group(3))
        names.append((m.group(1), m.group(2)))
assert total == 77, (total, names)
assert all(not w.startswith("cgroup-") and k != "other" for k, w in names), names
print("workloads: %s" % names)
PY
! grep -qvE 'level=info|^$' "$WORK/serve.log" || fail "warnings or errors: $(grep -v 'level=info' "$WORK/serve.log")"
stop_serve "serve with CAP_BPF and CAP_PERFMON"
echo "ok: serve as uid $uid with CAP_BPF and CAP_PERFMON: exact counts, named workloads, clean stop"

$(as +bpf,+perfmon) "$IOLAT" check >"$WORK/check.out" 2>&1 || fail "check: $(tail -3 "$WORK/check.out")"
grep -q "^Load test: loaded and attached" "$WORK/check.out" || fail "check: $(tail -3 "$WORK/check.out")"
$(as +bpf,+perfmon) "$IOLAT" hist -d "$name" 0.2 1 >"$WORK/hist.out" 2>&1 || fail "hist: $(cat "$WORK/hist.out")"
$(as +bpf,+perfmon) "$IOLAT" top --once 0.2 >"$WORK/top.out" 2>&1 || fail "top: $(cat "$WORK/top.out")"
echo "ok: check, hist and top with CAP_BPF and CAP_PERFMON"

# 2. One missing, or both: one line naming it, exit 1, nothing loaded.
for caps in +bpf:CAP_PERFMON +perfmon:CAP_BPF -all:"CAP_BPF and CAP_PERFMON"; do
	missing=${caps#*:}
	for cmd in "serve --web.listen-address=127.0.0.1:$(free_port)" "hist 0.1 1" "top --once 0.1"; do
		# shellcheck disable=SC2086
		WRAP=$(as "${caps%%:*}") expect_error 1 "^iolat: missing $missing: loading BPF tracing programs .* takes CAP_BPF and CAP_PERFMON \(run it as root, or grant" $cmd
	done
	rc=0
	$(as "${caps%%:*}") "$IOLAT" check >"$WORK/check.out" 2>"$WORK/check.err" || rc=$?
	assert_eq "check without $missing: exit" 1 "$rc"
	grep -q "^iolat: missing $missing: " "$WORK/check.err" || fail "check without $missing: $(cat "$WORK/check.err")"
done
echo "ok: without CAP_BPF, CAP_PERFMON or both: exit 1 naming it"

# 3a. --bpf.stats takes CAP_SYS_ADMIN, unless the kernel keeps the stats on
# already (then there is nothing to turn on).
stats_on() { cat /proc/sys/kernel/bpf_stats_enabled; }
before=$(stats_on)
rc=0
read -ra wrap <<<"$(as +bpf,+perfmon)"
timeout -s TERM 5 "${wrap[@]}" "$IOLAT" serve --web.listen-address="127.0.0.1:$(free_port)" \
	--bpf.stats >"$WORK/stats.out" 2>"$WORK/stats.err" || rc=$?
if [ "$rc" = 124 ] && [ "$before$(stats_on)" != 00 ]; then
	# Another process had the kernel's stats on meanwhile: then nothing
	# needs turning on, and iolat rightly served.
	echo "note: kernel.bpf_stats_enabled was on (another process): --bpf.stats needed no CAP_SYS_ADMIN"
else
	assert_eq "--bpf.stats without CAP_SYS_ADMIN: exit" 1 "$rc"
	assert_eq "one line" 1 "$(wc -l <"$WORK/stats.err")"
	grep -q "^iolat: missing CAP_SYS_ADMIN: --bpf.stats turns on the kernel's BPF run-time statistics, which only CAP_SYS_ADMIN may do (grant CAP_SYS_ADMIN, or have root run 'sysctl kernel.bpf_stats_enabled=1' first" \
		"$WORK/stats.err" || fail "--bpf.stats: $(cat "$WORK/stats.err")"
	echo "ok: iolat serve --bpf.stats -> $(cat "$WORK/stats.err")"
fi
port=$(free_port)
WRAP=$(as +bpf,+perfmon,+sys_admin) start_serve "$WORK/stats.log" "${WL_FULL[@]}" --web.listen-address="127.0.0.1:$port" --bpf.stats
assert_eq "effective capabilities after start (CAP_SYS_ADMIN dropped)" 000000c000000000 "$(capeff "$SERVE_PID")"
"$DIO" read "$dev" 20 4096 || fail "dio read"
scrape "$WORK/m2"
runs=$(metric "$WORK/m2" iolat_bpf_program_runs_total '{program="rq_complete_btf"}')
[ "${runs:-0}" -ge 20 ] || fail "BPF stats: rq_complete runs ${runs:-none} < 20"
stop_serve "serve --bpf.stats with CAP_SYS_ADMIN"
echo "ok: --bpf.stats: refused without CAP_SYS_ADMIN, counts runs with it"

# 3b. A port below 1024 takes CAP_NET_BIND_SERVICE.
low=$((600 + RANDOM % 300))
WRAP=$(as +bpf,+perfmon) expect_error 1 "^iolat: cannot listen on '127.0.0.1:$low': permission denied .* takes CAP_NET_BIND_SERVICE\)" \
	serve --web.listen-address=127.0.0.1:$low

# 3c. User programs: a tracepoint/ SEC needs tracefs (root's only), hence
# CAP_DAC_READ_SEARCH; tp_btf and raw_tp programs need nothing more.
WRAP=$(as +bpf,+perfmon) expect_error 1 "^iolat: config 'timers': .*timers.bpf.o: cannot attach program timer_start \(SEC \"tracepoint/timer/timer_start\"\): missing CAP_DAC_READ_SEARCH" \
	serve --web.listen-address="127.0.0.1:$(free_port)" --config.dir="$EX" --config.names=timers --config.strict
# 3d. With it the program runs; kernel symbol names then take CAP_SYSLOG
# (kallsyms shows addresses only to it): without, functions stay in hex.
for extra in "" ,+syslog; do
	port=$(free_port)
	WRAP=$(as +bpf,+perfmon,+dac_read_search$extra) start_serve "$WORK/timers$extra.log" "${WL_FULL[@]}" \
		--web.listen-address="127.0.0.1:$port" --config.dir="$EX" --config.names=timers,biosize --config.strict
	sleep 0.5
	"$DIO" read "$dev" 9 4096 || fail "dio read"
	scrape "$WORK/t$extra"
	assert_eq "biosize (raw_tp) under the user$extra" 9 \
		"$(metric "$WORK/t$extra" iolat_user_block_request_size_bytes_count "{device=\"$name\"}")"
	named=$(grep -cE '^iolat_user_kernel_timer_starts_total\{function="[a-z_]' "$WORK/t$extra")
	hex=$(grep -cE '^iolat_user_kernel_timer_starts_total\{function="0x' "$WORK/t$extra")
	echo "timers$extra: $named functions by name, $hex in hex"
	if [ -z "$extra" ]; then
		{ [ "$named" = 0 ] && [ "$hex" -gt 0 ]; } || fail "without CAP_SYSLOG: $named named, $hex hex"
	else
		[ "$named" -gt 0 ] || fail "with CAP_SYSLOG no function by name"
	fi
	stop_serve "serve with timers$extra"
done
echo "ok: tracepoint/ programs need CAP_DAC_READ_SEARCH, symbol names CAP_SYSLOG"

# 4. Every example `iolat serve --help` gives, run as the systemd unit runs
# iolat (CAP_BPF and CAP_PERFMON): it serves, unless it says it "needs
# CAP_X as well"; then it exits 1 with one line naming CAP_X. Its paths are
# stand-ins the user can read: the examples' copy for
# /usr/share/iolat/examples, the tree's contrib/iolat.yml for
# /etc/iolat/iolat.yml, a web config with no TLS and no users for
# /etc/iolat/web.yml; its port (19617, or none) a free one.
cp contrib/iolat.yml "$UNPRIV_DIR/iolat.yml"
echo 'basic_auth_users: {}' >"$UNPRIV_DIR/web.yml"
chmod 644 "$UNPRIV_DIR/iolat.yml" "$UNPRIV_DIR/web.yml"
"$IOLAT" serve --help | sed -n '/^Examples/,$p' | sed 1,2d |
	awk '/^  iolat serve/ { if (l != "") print l; l = $0; next } { l = l " " $0 } END { print l }' >"$WORK/examples"
[ "$(grep -c . "$WORK/examples")" -ge 4 ] || fail "serve --help has fewer than 4 examples: $(cat "$WORK/examples")"
n=0
while read -r line; do
	n=$((n + 1))
	need=$(grep -oE 'needs CAP_[A-Z_]+' <<<"$line" | sed 's/needs //')
	cmd=${line%%needs CAP_*}
	cmd=${cmd#iolat serve}
	cmd=${cmd//\/usr\/share\/iolat\/examples/$EX}
	cmd=${cmd//\/etc\/iolat\/iolat.yml/$UNPRIV_DIR/iolat.yml}
	cmd=${cmd//\/etc\/iolat\/web.yml/$UNPRIV_DIR/web.yml}
	port=$(free_port)
	cmd=${cmd//19617/$port}
	[[ $cmd == *--web.listen-address=* ]] || cmd="$cmd --web.listen-address=127.0.0.1:$port"
	# A users' program that fails stops serve (--config.strict needs --config.dir).
	[[ $cmd == *--config.dir=* ]] && cmd="$cmd --config.strict"
	read -ra args <<<"$cmd"
	if [ -n "$need" ]; then
		# --bpf.stats needs nothing while another process keeps the stats on.
		[ "$need" = CAP_SYS_ADMIN ] && [ "$(cat /proc/sys/kernel/bpf_stats_enabled)" != 0 ] && continue
		WRAP=$(as +bpf,+perfmon) expect_error 1 "missing $need" serve "${args[@]}"
	else
		WRAP=$(as +bpf,+perfmon) start_serve "$WORK/example.$n.log" "${args[@]}"
		scrape "$WORK/example.$n.prom"
		grep -q '^iolat_build_info' "$WORK/example.$n.prom" || fail "example '$line': no iolat_build_info"
		stop_serve "example '$line'"
	fi
	echo "ok: serve --help example '$line'"
done <"$WORK/examples"
