# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# SIGHUP under load: four scrapers (text, OpenMetrics, protobuf, gzip) while
# SIGHUP alternates between two valid configs and an invalid one, each
# SIGHUP as soon as the last one took effect: RELOADS of them (default 240,
# ~20 s plain) or RELOAD_SECONDS (default 30, where TSan does ~190) if that
# comes first. Every scrape must answer 200 with a
# body that parses (promtool for text), the daemon must live, a rejected
# reload must leave the running settings exactly as they were, and a
# listener whose address did not change keeps its socket (a scrape in
# flight completes). Run plain, under ASan (make sanitize) and TSan (make tsan).
source tests/integration/lib.sh
source tests/integration/lib_serve.sh
command -v promtool >/dev/null || skip "promtool (Debian package prometheus) is not installed"

make_loop 16
port=$(free_port)
# The listen address comes from the file (a flag would win over it), so a
# reload can move it below.
cat >"$WORK/good1.yml" <<YAML
web:
  listen_addresses: ["127.0.0.1:$port"]
buckets:
  latency_seconds: [0.0001, 0.001, 0.01]
workloads:
  max: 100
YAML
cat >"$WORK/good2.yml" <<YAML
web:
  listen_addresses: ["127.0.0.1:$port"]
buckets:
  latency_seconds: [0.0005, 0.005, 0.05, 0.5]
labels:
  op: false
workloads:
  rules:
    - match: '^/tenants/([^/]+)'
      kind: tenant
      name: '\1'
YAML
# Wrong in a way only a full load finds: the bounds do not ascend.
cat >"$WORK/bad.yml" <<YAML
buckets:
  latency_seconds: [0.5, 0.1]
YAML
cp "$WORK/good1.yml" "$WORK/iolat.yml"
start_serve "$WORK/serve.log" --config.file="$WORK/iolat.yml"
listen_inode() { # the listening socket's inode: the same socket across reloads
	awk -v p="$(printf '%04X' "$port")" '$2 ~ ":"p"$" && $4 == "0A" { print $10 }' /proc/net/tcp
}
"$DIO" read "$LOOP" 50 4096 || fail "dio read"
sock=$(listen_inode)
[ -n "$sock" ] || fail "no listening socket on $port"

python3 tests/integration/reload_race.py "$port" "$SERVE_PID" "$WORK/iolat.yml" \
	"$WORK/good1.yml" "$WORK/good2.yml" "$WORK/bad.yml" "${RELOADS:-240}" "${RELOAD_SECONDS:-30}" "$WORK" \
	>"$WORK/race.out" 2>&1 || fail "$(cat "$WORK/race.out"; tail -5 "$WORK/serve.log")"
cat "$WORK/race.out"
kill -0 "$SERVE_PID" 2>/dev/null || fail "iolat serve died: $(tail -5 "$WORK/serve.log")"
scrapes=("$WORK"/scrape.*.txt)
for f in "${scrapes[@]}"; do
	promtool check metrics <"$f" >"$WORK/lint" 2>&1 || fail "promtool on $f: $(cat "$WORK/lint")"
	[ ! -s "$WORK/lint" ] || fail "promtool warnings on $f: $(cat "$WORK/lint")"
done
echo "ok: ${#scrapes[@]} kept text scrapes pass promtool"
assert_eq "listening socket kept across reloads" "$sock" "$(listen_inode)"

# Rejections are logged once each, one logfmt line saying what.
fails=$(grep -c 'level=error msg="reload failed, keeping the running configuration" .*err=".*bounds must ascend' "$WORK/serve.log")
rejected=$(sed -nE 's/.*\(([0-9]+) rejected\).*/\1/p' "$WORK/race.out")
assert_eq "a log line per rejected reload" "$rejected" "$fails"
unexpected=$(grep -E 'level=(error|warn)' "$WORK/serve.log" | grep -vc 'bounds must ascend')
assert_eq "other errors in the log" 0 "$unexpected"

# A changed listen address moves the listener: the old address stops
# answering, the new one answers, and the counters are those of before.
port2=$(free_port)
completions() { # all ops of our disk, whichever labels the config gives
	awk -v d="device=\"${LOOP#/dev/}\"" '/^iolat_block_completions_total\{/ && index($1, d) { n += $2 } END { print n + 0 }' "$1"
}
curl -sf "http://127.0.0.1:$port/metrics" >"$WORK/m1" || fail "scrape before the move"
printf 'web:\n  listen_addresses: ["127.0.0.1:%s"]\n' "$port2" >"$WORK/iolat.yml"
kill -HUP "$SERVE_PID"
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port2/-/ready" >/dev/null 2>&1 && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$port2/metrics" >"$WORK/m2" || fail "new address does not answer"
curl -sf -m 2 "http://127.0.0.1:$port/metrics" >/dev/null 2>&1 && fail "old address still answers"
assert_eq "completions before the move" 50 "$(completions "$WORK/m1")"
assert_eq "completions kept across the move" 50 "$(completions "$WORK/m2")"
echo "ok: a changed listen address moves the listener, counters kept"

# A reload whose address is taken fails as a whole: the old listener stays.
port3=$(free_port)
python3 -c 'import socket,time,sys; s=socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(); time.sleep(30)' "$port3" &
squat=$!
on_exit "kill $squat"
for _ in $(seq 50); do grep -q ":$(printf '%04X' "$port3") .* 0A " /proc/net/tcp && break; sleep 0.1; done
printf 'web:\n  listen_addresses: ["127.0.0.1:%s", "127.0.0.1:%s"]\n' "$port2" "$port3" >"$WORK/iolat.yml"
kill -HUP "$SERVE_PID"
wait_for_log() { for _ in $(seq 100); do grep -q "$1" "$WORK/serve.log" && return 0; sleep 0.05; done; return 1; }
wait_for_log "cannot listen on '127.0.0.1:$port3'" || fail "no failure logged: $(tail -3 "$WORK/serve.log")"
curl -sf "http://127.0.0.1:$port2/metrics" >/dev/null || fail "old listener gone after a failed reload"
echo "ok: a reload that cannot bind changes nothing"
