# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The exposition by the conventions scrapers check: promtool finds nothing in
# the text format (users' programs' families included), a whole OpenMetrics
# scrape reads back through a real parser (prometheus_client's, Debian's
# python3-prometheus-client) with # UNIT lines, classic buckets and # EOF,
# exact # UNIT lines for a few families, users' metrics under their prefix,
# and a landing page that names its settings and the bounds the scrape has.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh
command -v promtool >/dev/null || skip "promtool (Debian package prometheus) is not installed"
# Debian's python3, which python3-prometheus-client installs into (a python3
# of another origin earlier on PATH would not have it).
PY=/usr/bin/python3
"$PY" -c 'import prometheus_client.openmetrics.parser' 2>/dev/null ||
	skip "prometheus_client (Debian package python3-prometheus-client) is not installed"
EX=$PWD/$OUT/examples
[ -e "$EX/biosize.bpf.o" ] || fail "$EX/biosize.bpf.o missing: run make"

make_loop 32
dev=$LOOP
name=${dev#/dev/}
port=$(free_port)
url=http://127.0.0.1:$port
cat >"$WORK/iolat.yml" <<EOF
web:
  listen_addresses: ["127.0.0.1:$port"]
EOF
# Every example, so each kind of users' family is linted and parsed.
start_serve "$WORK/serve.log" --config.file="$WORK/iolat.yml" --config.dir="$EX" --config.strict
"$DIO" read "$dev" 41 4096 || fail "dio read"

# Text 0.0.4: promtool says nothing at all, about iolat's families or the
# users'; and no # UNIT, which that format does not have.
curl -sf "$url/metrics" >"$WORK/text" || fail "text scrape"
for fam in block_request_size_bytes kernel_timer_starts_total run_queue_latency_seconds \
	syscalls_total cpu_kernel_stack_samples_total; do
	grep -q "^# TYPE iolat_user_$fam " "$WORK/text" || fail "no iolat_user_$fam in the text scrape"
done
promtool check metrics <"$WORK/text" >"$WORK/lint" 2>&1 || fail "promtool: $(cat "$WORK/lint")"
[ ! -s "$WORK/lint" ] || fail "promtool warnings: $(cat "$WORK/lint")"
assert_eq "# UNIT in text 0.0.4" 0 "$(grep -c '^# UNIT' "$WORK/text")"
echo "ok: promtool check metrics clean, users' families included"

# OpenMetrics: the exact # UNIT lines of a few families, right after their
# TYPE; none for a family whose name ends in no unit.
curl -sf -H 'Accept: application/openmetrics-text; version=1.0.0' "$url/metrics" >"$WORK/om" ||
	fail "OpenMetrics scrape"
for want in "iolat_block_device_latency_seconds histogram seconds" \
	"iolat_block_bytes counter bytes" "iolat_block_request_size_bytes histogram bytes" \
	"process_cpu_seconds counter seconds" "iolat_user_block_request_size_bytes histogram bytes" \
	"iolat_user_run_queue_latency_seconds histogram seconds"; do
	read -r fam type unit <<<"$want"
	grep -qzF "# TYPE $fam $type
# UNIT $fam $unit
" "$WORK/om" || fail "no '# UNIT $fam $unit' after its TYPE"
done
assert_eq "# UNIT of a family without a unit" 0 \
	"$(grep -cE '^# UNIT (iolat_block_completions|iolat_build_info|iolat_user_config_up) ' "$WORK/om")"
echo "ok: # UNIT lines exact"

# The whole scrape through prometheus_client's OpenMetrics parser, which
# fails on anything the format does not allow (a unit that is not the
# name's suffix, a sample after # EOF or no # EOF, buckets out of order, a
# histogram without +Inf); then what it read against the I/O made.
"$PY" - "$WORK/om" "$name" <<'PY' || fail "the OpenMetrics parser refused or misread the scrape"
import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families

text, disk = open(sys.argv[1]).read(), sys.argv[2]
assert text.endswith("\n# EOF\n"), text[-40:]
fams = {f.name: f for f in text_string_to_metric_families(text)}
for f in fams.values():
    assert not f.unit or f.name.endswith("_" + f.unit), (f.name, f.unit)

def sample(fam, name, **labels):
    got = [s.value for s in fams[fam].samples if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())]
    assert len(got) == 1, (fam, name, labels, got)
    return got[0]

b = fams["iolat_block_bytes"]
assert (b.type, b.unit) == ("counter", "bytes"), (b.type, b.unit)
assert sample("iolat_block_bytes", "iolat_block_bytes_total", device=disk, op="read") == 41 * 4096
h = fams["iolat_block_device_latency_seconds"]
assert (h.type, h.unit) == ("histogram", "seconds"), (h.type, h.unit)
# The classic buckets every scraper can read (native ones go by protobuf).
les = [s.labels["le"] for s in h.samples if s.name.endswith("_bucket") and s.labels.get("device") == disk and s.labels["op"] == "read"]
assert les[-1] == "+Inf" and len(les) > 2, les
assert sample("iolat_block_device_latency_seconds", "iolat_block_device_latency_seconds_bucket", device=disk, op="read", le="+Inf") == 41
assert sample("iolat_block_device_latency_seconds", "iolat_block_device_latency_seconds_count", device=disk, op="read") == 41
u = fams["iolat_user_block_request_size_bytes"]
assert (u.type, u.unit) == ("histogram", "bytes"), (u.type, u.unit)
assert sample("iolat_user_block_request_size_bytes", "iolat_user_block_request_size_bytes_count", device=disk) >= 41
print("parsed: %d families, %d samples, %d with a unit" % (len(fams), sum(len(f.samples) for f in fams.values()), sum(1 for f in fams.values() if f.unit)))
PY
echo "ok: OpenMetrics read back by prometheus_client's parser"

# Users' metrics carry the default prefix, and only under it.
assert_eq "user metric without prefix" 0 "$(grep -cE '^(block_request_size_bytes|run_queue_latency_seconds)' "$WORK/text")"
echo "ok: users' metrics as iolat_user_*"

# The landing page: settings by name, and the latency bounds it lists are
# the scrape's own `le` values, in order.
curl -sf "$url/" >"$WORK/landing" || fail "landing page"
grep -qx 'log level: info' "$WORK/landing" || fail "landing: log level: $(grep 'log level' "$WORK/landing")"
grep -qx 'log format: logfmt' "$WORK/landing" || fail "landing: log format"
grep -qE '^attach: (tp_btf|raw_tp)$' "$WORK/landing" || fail "landing: attach"
les() { # SCRAPE: one family's le values for the test's disk and reads, space-separated
	grep "^iolat_block_device_latency_seconds_bucket{device=\"$name\",op=\"read\"," "$1" |
		sed -E 's/.*le="([^"]+)".*/\1/' | paste -sd' '
}
want=$(les "$WORK/text")
n=$(($(wc -w <<<"$want") - 1))
assert_eq "landing: latency bounds" "latency buckets: $n (default), le in seconds: $want" \
	"$(grep '^latency buckets: ' "$WORK/landing")"
grep -qE '^size buckets: [0-9]+ \(default\), le in bytes: 512 .* \+Inf$' "$WORK/landing" ||
	fail "landing: size bounds: $(grep 'size buckets' "$WORK/landing")"
echo "ok: landing page: $(grep '^latency buckets' "$WORK/landing")"

# After a reload to other settings, the page says the new ones.
cat >>"$WORK/iolat.yml" <<EOF
buckets:
  latency_seconds: [0.001, 0.01]
log_level: debug
log_format: json
EOF
kill -HUP "$SERVE_PID"
for _ in $(seq 1 50); do
	curl -sf "$url/" >"$WORK/landing2" || fail "landing page after reload"
	grep -qx 'log level: debug' "$WORK/landing2" && break
	sleep 0.1
done
grep -qx 'log level: debug' "$WORK/landing2" || fail "landing after reload: $(cat "$WORK/landing2")"
grep -qx 'log format: json' "$WORK/landing2" || fail "landing after reload: log format"
assert_eq "landing: configured bounds" "latency buckets: 2 (configured), le in seconds: 0.001 0.01 +Inf" \
	"$(grep '^latency buckets: ' "$WORK/landing2")"
curl -sf "$url/metrics" >"$WORK/text2" || fail "scrape after reload"
assert_eq "the scrape's bounds after reload" "0.001 0.01 +Inf" "$(les "$WORK/text2")"
echo "ok: landing page after a reload: log level debug, 2 configured bounds as scraped"
stop_serve "serve"
