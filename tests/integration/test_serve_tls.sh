# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# TLS and basic auth from a web config file (exporter-toolkit format): the
# right password gets 200, a wrong one or none 401, plain HTTP to the TLS
# port fails cleanly and the daemon keeps serving. Bad config files are
# refused with one line naming the file and line.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh

# htpasswd -nbBC 10 alice 'correct horse' (see tests/unit/test_webconfig.c)
# shellcheck disable=SC2016 # literal: the $ fields of a bcrypt hash
HASH='$2y$10$YtvBZQ2h28nXNhDnGpfKQulVtrxLLl1ItppINR/l.EirmXD31MV6q'
cat >"$WORK/web.yml" <<YML
tls_server_config:
  cert_file: $PWD/tests/unit/data/server.crt
  key_file: $PWD/tests/unit/data/server.key
basic_auth_users:
  alice: $HASH
YML
port=$(free_port)
start_serve "$WORK/serve.log" --web.listen-address="127.0.0.1:$port" --web.config.file="$WORK/web.yml"
ca=(--cacert tests/unit/data/server.crt --resolve "localhost:$port:127.0.0.1")
lurl=https://localhost:$port/metrics

assert_eq "right password" 200 "$(curl -s -o "$WORK/m" -w '%{http_code}' "${ca[@]}" -u 'alice:correct horse' "$lurl")"
grep -q '^iolat_build_info' "$WORK/m" || fail "no metrics over TLS"
assert_eq "wrong password" 401 "$(curl -s -o /dev/null -w '%{http_code}' "${ca[@]}" -u 'alice:wrong' "$lurl")"
assert_eq "unknown user" 401 "$(curl -s -o /dev/null -w '%{http_code}' "${ca[@]}" -u 'mallory:correct horse' "$lurl")"
assert_eq "no credentials" 401 "$(curl -s -o /dev/null -w '%{http_code}' "${ca[@]}" "$lurl")"
curl -s -o /dev/null -D "$WORK/h" "${ca[@]}" "$lurl"
grep -qi '^www-authenticate: basic' "$WORK/h" || fail "401 without WWW-Authenticate"
# Plain HTTP to the TLS port: the client gets an error, not a hang or a crash.
rc=0
curl -s -m 3 -o /dev/null "http://127.0.0.1:$port/metrics" || rc=$?
{ [ "$rc" -ne 0 ] && [ "$rc" -ne 28 ]; } || fail "plain HTTP to the TLS port: curl exit $rc (28 = timeout)"
kill -0 "$SERVE_PID" || fail "daemon died after a plain-HTTP request"
assert_eq "still serving" 200 "$(curl -s -o /dev/null -w '%{http_code}' "${ca[@]}" -u 'alice:correct horse' "$lurl")"
# TLS 1.1 is refused (TLS 1.2 is the default minimum).
if curl -s -o /dev/null --tlsv1.1 --tls-max 1.1 "${ca[@]}" -u 'alice:correct horse' "$lurl" 2>/dev/null; then
	fail "TLS 1.1 accepted"
fi
echo "ok: TLS, basic auth 200/401, plain HTTP refused cleanly, TLS 1.1 refused"

# SIGHUP with a new certificate: the listener hands its socket to a
# successor (same socket inode), which presents the new certificate.
listen_inode() {
	awk -v p="$(printf '%04X' "$port")" '$2 ~ ":"p"$" && $4 == "0A" { print $10 }' /proc/net/tcp
}
reloads() { grep -c "$1" "$WORK/serve.log"; }
wait_reloads() { # wait_reloads PATTERN N
	for _ in $(seq 100); do [ "$(reloads "$1")" -ge "$2" ] && return 0; sleep 0.05; done
	fail "no '$1' in the log: $(tail -3 "$WORK/serve.log")"
}
sock=$(listen_inode)
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost \
	-addext subjectAltName=DNS:localhost -keyout "$WORK/b.key" -out "$WORK/b.crt" 2>/dev/null ||
	fail "openssl"
cat >"$WORK/web.yml" <<YML
tls_server_config:
  cert_file: $WORK/b.crt
  key_file: $WORK/b.key
basic_auth_users:
  alice: $HASH
YML
kill -HUP "$SERVE_PID"
wait_reloads "configuration reloaded" 1
cb=(--cacert "$WORK/b.crt" --resolve "localhost:$port:127.0.0.1")
assert_eq "new certificate" 200 "$(curl -s -o /dev/null -w '%{http_code}' "${cb[@]}" -u 'alice:correct horse' "$lurl")"
curl -s -o /dev/null "${ca[@]}" -u 'alice:correct horse' "$lurl" && fail "old certificate still presented"
assert_eq "socket handed over" "$sock" "$(listen_inode)"
# A certificate and a key that do not match: refused before any listener
# is touched; the running certificate and password stay.
cat >"$WORK/web.yml" <<YML
tls_server_config:
  cert_file: $WORK/b.crt
  key_file: $PWD/tests/unit/data/server.key
basic_auth_users:
  bob: $HASH
YML
kill -HUP "$SERVE_PID"
wait_reloads "reload failed, keeping the running configuration\" err=\".*web.yml: cert_file .* do not load as a pair" 1
assert_eq "still the new certificate" 200 "$(curl -s -o /dev/null -w '%{http_code}' "${cb[@]}" -u 'alice:correct horse' "$lurl")"
assert_eq "bob not let in" 401 "$(curl -s -o /dev/null -w '%{http_code}' "${cb[@]}" -u 'bob:correct horse' "$lurl")"
assert_eq "socket kept" "$sock" "$(listen_inode)"
kill -TERM "$SERVE_PID"
wait "$SERVE_PID" || fail "exit status after TLS run"
assert_detached
echo "ok: SIGHUP swaps the certificate on the same socket; a bad pair changes nothing"

# expect_serve_error PATTERN ARGS...: serve refuses to start, one line, exit 2 or 1.
expect_serve_error() {
	local pattern=$1 rc=0 before
	shift
	before=$(all_prog_ids)
	# A serve that starts after all would serve until stopped: 20 s at most.
	timeout -s TERM 20 "$IOLAT" serve "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
	{ [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]; } || fail "serve $* started"
	[ "$(wc -l <"$WORK/err")" -eq 1 ] || fail "serve $*: expected one line, got: $(cat "$WORK/err")"
	grep -qE "$pattern" "$WORK/err" || fail "serve $*: '$(cat "$WORK/err")' lacks '$pattern'"
	# Programs loaded before a late failure go after an RCU grace period.
	settle orphans_since "$before" || fail "serve $*: left programs loaded: $LEFT"
	echo "ok: serve $* -> $(cat "$WORK/err")"
}
printf 'tls_server_config:\n  cert_file: /nonexistent.crt\n  key_file: /nonexistent.key\n' >"$WORK/bad1.yml"
expect_serve_error "bad1.yml:2:[0-9]+: .*nonexistent.crt" --web.config.file="$WORK/bad1.yml" --web.listen-address="127.0.0.1:$(free_port)"
printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n' "$WORK/b.key" "$WORK/b.crt" >"$WORK/swapped.yml"
expect_serve_error "swapped.yml: cert_file .* do not load as a pair \(swapped\? cert_file holds a key\) \(fix the web config file" \
	--web.config.file="$WORK/swapped.yml" --web.listen-address="127.0.0.1:$(free_port)"
printf 'basic_auth_users:\n  bob: notahash\n' >"$WORK/bad2.yml"
expect_serve_error "bad2.yml:2:[0-9]+:" --web.config.file="$WORK/bad2.yml" --web.listen-address="127.0.0.1:$(free_port)"
printf 'web:\n  listen_adresses: [":1"]\n' >"$WORK/bad3.yml"
expect_serve_error "bad3.yml:2:3: unknown key 'listen_adresses'" --config.file="$WORK/bad3.yml"
printf 'buckets:\n  latency_seconds: [0.01, 0.001]\n' >"$WORK/bad4.yml"
expect_serve_error "bad4.yml:2:[0-9]+: bounds must ascend" --config.file="$WORK/bad4.yml"
printf 'views: [\n' >"$WORK/bad5.yml"
expect_serve_error "bad5.yml:[0-9]+:[0-9]+:" --config.file="$WORK/bad5.yml"
expect_serve_error "no such file|No such file" --config.file="$WORK/missing.yml"
expect_serve_error "bad listen address 'nonsense'" --web.listen-address=nonsense
expect_serve_error "unknown option '--bogus'" --bogus
expect_serve_error "web.max-connections takes a number from 1 to 4096" --web.max-connections=0
expect_serve_error "web.max-connections-per-ip \(20\) is above --web.max-connections \(10\)" \
	--web.max-connections=10 --web.max-connections-per-ip=20
expect_serve_error "bad --web.read-header-timeout 'soon'" --web.read-header-timeout=soon
expect_serve_error "bad --web.write-timeout '2d'" --web.write-timeout=2d
# A port some process listens on: one the kernel gives this holder, not a
# free one picked first (another process may take that in between, and then
# the holder fails and iolat listens).
python3 -c "import socket,sys,time; s=socket.socket(); s.bind(('127.0.0.1',0)); s.listen()
print(s.getsockname()[1], flush=True); sys.stdout.close(); time.sleep(8)" >"$WORK/busy" &
for _ in $(seq 1 30); do
	[ -s "$WORK/busy" ] && break
	sleep 0.1
done
busy=$(cat "$WORK/busy")
[ -n "$busy" ] || fail "no port held for the busy-port case"
expect_serve_error "cannot listen on '127.0.0.1:$busy'" --web.listen-address="127.0.0.1:$busy"

# A config file sets what the flags can: path, views, buckets.
cat >"$WORK/iolat.yml" <<YML
web:
  listen_addresses: ["127.0.0.1:$(free_port)"]
  telemetry_path: /m
views:
  total_time: false
buckets:
  latency_seconds: [0.001, 0.01]
labels:
  op: false
YML
start_serve "$WORK/serve2.log" --config.file="$WORK/iolat.yml"
p2=$(sed -n 's/.*msg="listening on" address=127.0.0.1:\([0-9]*\) .*/\1/p' "$WORK/serve2.log" | head -1)
make_loop 16
"$DIO" read "$LOOP" 9 4096 || fail "dio read"
curl -sf "http://127.0.0.1:$p2/m" >"$WORK/m2" || fail "scrape of /m"
grep -q '^iolat_block_total_latency' "$WORK/m2" && fail "total_time: false still exported"
les=$(grep "^iolat_block_device_latency_seconds_bucket{device=\"${LOOP#/dev/}\"," "$WORK/m2" |
	sed 's/.*le="\([^"]*\)".*/\1/' | sort -u | tr '\n' ' ')
assert_eq "le set" "+Inf 0.001 0.01 " "$les"
grep -q '# TYPE iolat_block_device_latency_seconds histogram' "$WORK/m2" || fail "device view missing"
# labels.op false: one series per disk, no op label.
grep -q "^iolat_block_completions_total{device=\"${LOOP#/dev/}\"} 9$" "$WORK/m2" ||
	fail "labels.op: false: $(grep "^iolat_block_completions_total" "$WORK/m2")"
kill -TERM "$SERVE_PID"
wait "$SERVE_PID" || fail "exit status"
echo "ok: config file"
