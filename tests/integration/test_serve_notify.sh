# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# systemd readiness: with NOTIFY_SOCKET set (as systemd does for Type=notify),
# iolat serve sends READY=1 once it listens, RELOADING=1 then READY=1 around
# a SIGHUP, and STOPPING=1 on SIGTERM.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh

sock=$WORK/notify.sock
python3 - "$sock" >"$WORK/notes" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(15)
try:
    while True:
        msg = s.recv(4096).decode()
        print(msg.replace("\n", " "), flush=True)
        if "STOPPING=1" in msg:
            break
except socket.timeout:
    pass
PY
listener=$!
on_exit "kill $listener"
for _ in $(seq 1 50); do [ -S "$sock" ] && break; sleep 0.1; done
port=$(free_port)
NOTIFY_SOCKET=$sock start_serve "$WORK/serve.log" --web.listen-address="127.0.0.1:$port"
for _ in $(seq 1 30); do grep -q READY=1 "$WORK/notes" && break; sleep 0.1; done
grep -q "READY=1" "$WORK/notes" || fail "no READY=1"
kill -HUP "$SERVE_PID"
for _ in $(seq 1 30); do [ "$(grep -c READY=1 "$WORK/notes")" -ge 2 ] && break; sleep 0.1; done
grep -q "RELOADING=1" "$WORK/notes" || fail "no RELOADING=1 on SIGHUP"
kill -TERM "$SERVE_PID"
wait "$SERVE_PID" || fail "exit status"
wait $listener
assert_eq "notifications" "READY=1 RELOADING=1 READY=1 STOPPING=1" "$(tr -s ' \n' ' ' <"$WORK/notes" | sed 's/ $//')"
echo "ok: sd_notify READY, RELOADING, STOPPING"
