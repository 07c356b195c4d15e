# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Logs for collectors and socket activation:
#   - --log.format=json (or log_format: json in the file) makes every line
#     one JSON object with ts, level and msg, also for a failed reload whose
#     reason has quotes; a reload to logfmt switches the next lines;
#   - --web.systemd-socket serves on the sockets systemd-socket-activate
#     passes (IPv4 and IPv6), keeps them across SIGHUP, hands them over when
#     TLS is switched on, and stops cleanly; without sockets, or with
#     --web.listen-address too, it refuses with one line.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh

# check_json_lines FILE N: FILE's lines are all JSON log objects, at least N.
check_json_lines() {
	python3 - "$1" "$2" <<'PY' || fail "not JSON log lines: $(cat "$1")"
import json, re, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) >= int(sys.argv[2]), f"{len(lines)} lines"
for l in lines:
    o = json.loads(l)
    assert list(o)[:3] == ["ts", "level", "msg"], o
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", o["ts"]), o
    assert o["level"] in ("debug", "info", "warn", "error"), o
PY
}

port=$(free_port)
printf 'log_format: json\n' >"$WORK/cfg.yml"
start_serve "$WORK/serve.log" --config.file="$WORK/cfg.yml" --web.listen-address="127.0.0.1:$port"
check_json_lines "$WORK/serve.log" 1
# A reload that fails, with a reason that quotes the bad value.
printf 'log_format: json\n"no\\"where": 1\n' >"$WORK/cfg.yml"
kill -HUP "$SERVE_PID"
wait_for_line "$WORK/serve.log" 'reload failed' 5 || fail "no failed reload logged: $(cat "$WORK/serve.log")"
check_json_lines "$WORK/serve.log" 2
python3 -c '
import json, sys
m = [json.loads(l) for l in open(sys.argv[1])][-1]
assert m["level"] == "error" and "no\"where" in m["err"], m' "$WORK/serve.log" ||
	fail "the failed reload's line does not carry its reason: $(tail -1 "$WORK/serve.log")"
echo "ok: JSON lines, a failed reload's reason with its quotes"
printf 'log_format: logfmt\n' >"$WORK/cfg.yml"
kill -HUP "$SERVE_PID"
wait_for_line "$WORK/serve.log" 'level=info msg="configuration reloaded' 5 ||
	fail "reload to logfmt: $(cat "$WORK/serve.log")"
stop_serve "json logs"
tail -1 "$WORK/serve.log" | grep -q '^ts=.* level=info msg="stopping' ||
	fail "after the reload lines are not logfmt: $(tail -1 "$WORK/serve.log")"
echo "ok: a reload switches the format"
expect_error 2 "unknown --log.format 'xml' \\(use logfmt or json\\)" serve --log.format=xml
printf 'log_format: yaml\n' >"$WORK/bad.yml"
expect_error 2 "bad.yml:1:13: log_format is logfmt or json" serve --config.file="$WORK/bad.yml"

# Socket activation. systemd-socket-activate binds, then waits for the
# first connection before it execs iolat (as a .socket unit without
# Accept=), which is the pid it started.
command -v systemd-socket-activate >/dev/null || skip "no systemd-socket-activate"
p4=$(free_port)
p6=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET6); s.bind(("::1",0)); print(s.getsockname()[1])' 2>/dev/null) ||
	skip "no IPv6 loopback"
: >"$WORK/web.yml"
systemd-socket-activate -l "127.0.0.1:$p4" -l "[::1]:$p6" "$IOLAT" serve --web.systemd-socket \
	--web.config.file="$WORK/web.yml" 2>"$WORK/sock.log" &
SERVE_PID=$!
on_exit "kill -TERM $SERVE_PID"
# Once both sockets are bound (it says so), the first scrape starts iolat:
# the connection waits in the socket's backlog meanwhile.
wait_for_line "$WORK/sock.log" "Listening on \[::1\]:$p6" 5 || fail "systemd-socket-activate: $(cat "$WORK/sock.log")"
assert_eq "first scrape (IPv4)" 200 "$(curl -s -m 30 -o "$WORK/m4" -w '%{http_code}' "http://127.0.0.1:$p4/metrics")"
grep -q '^iolat_build_info' "$WORK/m4" || fail "no metrics on the activated socket"
assert_eq "IPv6 socket" 200 "$(curl -s -m 10 -g -o /dev/null -w '%{http_code}' "http://[::1]:$p6/metrics")"
grep -q "msg=\"listening on\" address=127.0.0.1:$p4 path=/metrics tls=false systemd_socket=fd:3$" "$WORK/sock.log" ||
	fail "the log does not say which socket: $(cat "$WORK/sock.log")"
grep -q "msg=\"listening on\" address=\[::1\]:$p6 path=/metrics tls=false systemd_socket=fd:4$" "$WORK/sock.log" ||
	fail "the log does not say which socket: $(cat "$WORK/sock.log")"
OUR_PROGS=$(pid_prog_ids "$SERVE_PID")
listen_inode() {
	awk -v p="$(printf '%04X' "$p4")" '$2 ~ ":"p"$" && $4 == "0A" { print $10 }' /proc/net/tcp
}
sock=$(listen_inode)
kill -HUP "$SERVE_PID"
wait_for_line "$WORK/sock.log" 'configuration reloaded' 5 || fail "reload: $(cat "$WORK/sock.log")"
assert_eq "after SIGHUP" 200 "$(curl -s -m 10 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$p4/metrics")"
# TLS on: the activated socket goes to a TLS successor, not closed.
printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n' "$PWD/tests/unit/data/server.crt" \
	"$PWD/tests/unit/data/server.key" >"$WORK/web.yml"
kill -HUP "$SERVE_PID"
for _ in $(seq 100); do
	[ "$(grep -c 'configuration reloaded' "$WORK/sock.log")" -ge 2 ] && break
	sleep 0.05
done
assert_eq "TLS on the activated socket" 200 "$(curl -s -m 10 -o /dev/null -w '%{http_code}' \
	--cacert tests/unit/data/server.crt --resolve "localhost:$p4:127.0.0.1" "https://localhost:$p4/metrics")"
assert_eq "the same socket" "$sock" "$(listen_inode)"
stop_serve "socket activation"
echo "ok: activated IPv4 and IPv6 sockets served, kept across SIGHUP, handed to TLS"

expect_error 2 "systemd passed 0 sockets" serve --web.systemd-socket
expect_error 2 "web.systemd-socket and --web.listen-address both say where to listen" \
	serve --web.systemd-socket --web.listen-address=:1
echo "PASS"
