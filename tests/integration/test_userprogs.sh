# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# iolat serve with user programs (docs/userprogs.md): the examples loaded by
# --config.dir/--config.names, their metrics moving with real events (exact
# for block request sizes on a loop device); several configs where one is
# broken (disabled and reported, the rest served), --config.strict,
# --config.check; and bad input: one line each, with the config's
# file:line:col, a non-zero exit, and nothing left loaded.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh

EX=$PWD/$OUT/examples
TD=$PWD/$OUT/test-data
for f in "$EX/biosize.bpf.o" "$EX/timers.yaml" "$TD/maptypes.bpf.o"; do
	[ -e "$f" ] || fail "$f missing: run make and make helpers"
done

# assert_all_unloaded BEFORE WHAT: no program loaded since BEFORE is left
# without a process holding it (others' tests load theirs meanwhile).
assert_all_unloaded() {
	settle orphans_since "$1" || fail "$2: programs left loaded: $LEFT"
}

scrape() { curl -sf "http://127.0.0.1:$port/metrics" >"$1" || fail "scrape failed"; }

# hist_delta BEFORE AFTER NAME LABELS: after - before of one sample.
delta() {
	python3 -c 'import sys; print(int(float(sys.argv[2] or 0) - float(sys.argv[1] or 0)))' \
		"$(metric "$1" "$3" "$4")" "$(metric "$2" "$3" "$4")"
}

make_loop 64
dev=$LOOP
name=${dev#/dev/}
udevadm settle 2>/dev/null || sleep 1

# 1. Three examples, served beside iolat's own metrics.
before=$(all_prog_ids)
port=$(free_port)
start_serve "$WORK/serve.log" --web.listen-address="127.0.0.1:$port" --config.dir="$EX" \
	--config.names=biosize,timers,runqlat
grep -q 'msg="user program config loaded" config=biosize$' "$WORK/serve.log" || fail "biosize not loaded"
scrape "$WORK/m0"
"$DIO" read "$dev" 100 4096 || fail "dio read"
scrape "$WORK/m1"
l="{device=\"$name\",le=\"4096\"}"
assert_eq "biosize: 4 KiB bucket" 100 "$(delta "$WORK/m0" "$WORK/m1" iolat_user_block_request_size_bytes_bucket "$l")"
assert_eq "biosize: below 4 KiB" 0 \
	"$(delta "$WORK/m0" "$WORK/m1" iolat_user_block_request_size_bytes_bucket "{device=\"$name\",le=\"2048\"}")"
assert_eq "biosize: count" 100 "$(delta "$WORK/m0" "$WORK/m1" iolat_user_block_request_size_bytes_count "{device=\"$name\"}")"
assert_eq "biosize: sum" 409600 "$(delta "$WORK/m0" "$WORK/m1" iolat_user_block_request_size_bytes_sum "{device=\"$name\"}")"
assert_eq "biosize up" 1 "$(metric "$WORK/m1" iolat_user_config_up '{config="biosize"}')"
# iolat's own families are still there, and agree.
assert_eq "iolat's own count" 100 "$(delta "$WORK/m0" "$WORK/m1" iolat_block_device_latency_seconds_count "{device=\"$name\",op=\"read\"}")"
grep -qE '^iolat_user_kernel_timer_starts_total\{function="[a-z_][a-z0-9_.]*"\} [1-9]' "$WORK/m1" ||
	fail "timers: no timer counted by a symbol name"
[ "$(metric "$WORK/m1" iolat_user_run_queue_latency_seconds_count '')" -gt 0 ] || fail "runqlat: no count"
grep -q '^iolat_user_run_queue_latency_seconds_bucket{le="1e-06"} ' "$WORK/m1" || fail "runqlat: no 1 us bucket"
# promtool finds nothing to say about users' families either: not an error,
# not a warning.
if command -v promtool >/dev/null; then
	promtool check metrics <"$WORK/m1" >"$WORK/promtool.out" 2>&1 ||
		fail "promtool: $(cat "$WORK/promtool.out")"
	[ ! -s "$WORK/promtool.out" ] || fail "promtool warnings: $(cat "$WORK/promtool.out")"
fi
curl -sf -H 'Accept: application/vnd.google.protobuf;proto=io.prometheus.client;encoding=delimited' \
	"http://127.0.0.1:$port/metrics" -o "$WORK/m.pb" || fail "protobuf scrape"
[ -s "$WORK/m.pb" ] || fail "empty protobuf scrape"
kill -TERM "$SERVE_PID"
wait "$SERVE_PID" || fail "serve exit status"
assert_all_unloaded "$before" "serve with examples"
echo "ok: examples served: 100 reads of 4 KiB in biosize's 4 KiB bucket, timers by symbol, runqlat"

# 1a. System calls by name and errno, through the syscall and errno
# decoders: 500 failing opens (a C helper, so nothing else of the process
# fails) make (openat, ENOENT) grow by at least 500 (other processes fail
# opens too).
port=$(free_port)
start_serve "$WORK/sys.log" --web.listen-address="127.0.0.1:$port" --config.dir="$EX" \
	--config.names=syscalls
scrape "$WORK/s0"
printf '#include <fcntl.h>\nint main(void)\n{\n\tfor (int i = 0; i < 500; i++)\n\t\topen("/nonexistent/iolat-test", O_RDONLY);\n\treturn 0;\n}\n' >"$WORK/opens.c"
cc -O1 -o "$WORK/opens" "$WORK/opens.c" || fail "cc opens.c"
"$WORK/opens"
scrape "$WORK/s1"
l='{syscall="openat",errno="ENOENT"}'
grew=$(delta "$WORK/s0" "$WORK/s1" iolat_user_syscalls_total "$l")
[ "$grew" -ge 500 ] || fail "syscalls: (openat, ENOENT) grew by $grew, not >= 500"
grep -qE '^iolat_user_syscalls_total\{syscall="read",errno="0"\} [1-9]' "$WORK/s1" ||
	fail "syscalls: no successful read counted"
kill -TERM "$SERVE_PID"
wait "$SERVE_PID" || fail "serve exit status"
echo "ok: syscalls by name and errno: (openat, ENOENT) grew by $grew for 500 failed opens"

# 1a'. A perf-event program: on-CPU kernel stacks sampled by cpu-clock at
# 49 Hz on every CPU, named by the kstack decoder. A second of reads from
# /dev/zero must show up as samples in read_zero under vfs_read.
port=$(free_port)
before=$(all_prog_ids)
start_serve "$WORK/oncpu.log" --web.listen-address="127.0.0.1:$port" --config.dir="$EX" \
	--config.names=oncpu
timeout 1.5 dd if=/dev/zero of=/dev/null bs=1M status=none || true
scrape "$WORK/oncpu.txt"
# A stack-trace map has no batch lookups: the walker says so and hands
# nothing out, and its callers walk the keys (uprog_read.c).
walked=$("$OUT/mapwalk" -n 1 -b 1 "pid:$SERVE_PID:kernel_stacks") || fail "mapwalk kernel_stacks"
assert_eq "batch walk of a stack-trace map" refused "$walked"
python3 - "$WORK/oncpu.txt" <<'PY' || fail "oncpu: no kernel stacks sampled"
import re, sys
total, reads = 0, 0
for line in open(sys.argv[1]):
    m = re.match(r'iolat_user_cpu_kernel_stack_samples_total\{stack="([^"]*)"\} (\S+)$', line)
    if not m:
        continue
    total += float(m.group(2))
    if re.search(r'(^|;)vfs_read;.*read_zero', m.group(1)):
        reads += float(m.group(2))
# 49 Hz on each CPU: at least a few dozen samples in 1.5 s, some in read_zero.
assert total >= 20 and reads >= 5, (total, reads)
print("oncpu: %d samples, %d in vfs_read -> read_zero" % (total, reads))
PY
kill -TERM "$SERVE_PID"
wait "$SERVE_PID" || fail "serve exit status"
assert_all_unloaded "$before" "oncpu"
echo "ok: perf_event program on cpu-clock, stacks by the kstack decoder"

# walker_as_bare MAP: iolat's batch walker (core/mapbatch.c), its buffers
# starting at one entry, sees in serve's map MAP the entries and the sum a
# bare BPF_MAP_LOOKUP_BATCH walk of the whole map sees, and grew its
# buffers at a hash bucket of two entries or more (thousands of keys in the
# buckets of a hash: some bucket holds two).
walker_as_bare() {
	local bare ours
	bare=$("$OUT/mapwalk" -n 1 "pid:$SERVE_PID:$1") || fail "mapwalk $1"
	ours=$("$OUT/mapwalk" -n 1 -b 1 "pid:$SERVE_PID:$1") || fail "mapwalk -b 1 $1"
	python3 - "$bare" "$ours" <<'PY' || fail "$1: iolat's batch walker is not the bare walk: $ours / $bare"
import sys
bare, ours = (dict(zip(l.split()[::2], l.split()[1::2])) for l in sys.argv[1:3])
assert int(bare["entries"]) > 1000 and ours["entries"] == bare["entries"], (bare, ours)
assert ours["sum"] == bare["sum"] and int(ours["chunk"]) > 1, (bare, ours)
PY
	echo "ok: $1: the batch walker from one entry a call: $ours"
}

# 1b. Wide maps, exactly: 10 000 counters and 1 000 histograms filled from
# user space (bpftool batch); every series and value as written, whichever
# way iolat reads the maps.
wide=$WORK/wide
mkdir "$wide"
cp "$TD/many.bpf.o" tests/data/many.yaml "$wide/"
python3 tests/integration/many_fill.py 10000 1000 >"$WORK/fill.batch"
for how in iter batch keys; do
	port=$(free_port)
	IOLAT_MAP_READ=$how start_serve "$WORK/wide.log" --web.listen-address="127.0.0.1:$port" \
		--config.dir="$wide"
	fill_maps "$WORK/fill.batch" || fail "bpftool batch fill"
	scrape "$WORK/wide.txt"
	python3 - "$WORK/wide.txt" <<'PY' || fail "wide maps (read: $how) not exported exactly"
import re, sys
counters, hist = {}, {}
for line in open(sys.argv[1]):
    m = re.match(r'iolat_user_many_total\{id="(\d+)"\} (\S+)$', line)
    if m:
        counters[int(m.group(1))] = float(m.group(2))
    m = re.match(r'iolat_user_many_seconds_(bucket|sum|count)\{id="(\d+)"(?:,le="([^"]+)")?\} (\S+)$', line)
    if m:
        hist.setdefault(int(m.group(2)), {})[(m.group(1), m.group(3))] = float(m.group(4))
assert len(counters) == 10000 and all(counters[i] == i for i in range(10000)), len(counters)
assert len(hist) == 1000, len(hist)
for i, h in hist.items():
    assert h[("count", None)] == 10 and abs(h[("sum", None)] - i * 1e-6) < 1e-12, (i, h)
    assert h[("bucket", "1e-06")] == 1 and h[("bucket", "0.000512")] == 10, (i, h)
    assert h[("bucket", "+Inf")] == 10, (i, h)
print("wide: 10000 counters and 1000 histograms exact")
PY
	[ "$how" = batch ] && walker_as_bare many_counts && walker_as_bare many_hists
	kill -TERM "$SERVE_PID"
	wait "$SERVE_PID" || fail "serve exit status"
done
echo "ok: wide maps exact, read through an iterator, in batches and key by key"

# 1c. metrics_prefix: iolat_user_ when a config gives none (above); another
# prefix, or "" for the names as written; a name that would be one of
# iolat's own is refused with the config's line:col.
pfx=$WORK/prefix
mkdir "$pfx"
cp "$EX/biosize.bpf.o" "$pfx/"
{ echo "metrics_prefix: ebpf_exporter_"; sed 's/^name: biosize/name: other/' "$EX/biosize.yaml"; } >"$pfx/other.yaml"
{ echo 'metrics_prefix: ""'; sed 's/^name: biosize/name: bare/' "$EX/biosize.yaml"; } >"$pfx/bare.yaml"
port=$(free_port)
start_serve "$WORK/prefix.log" --web.listen-address="127.0.0.1:$port" --config.dir="$pfx"
scrape "$WORK/p0"
"$DIO" read "$dev" 30 4096 || fail "dio read"
scrape "$WORK/p1"
assert_eq "metrics_prefix ebpf_exporter_" 30 \
	"$(delta "$WORK/p0" "$WORK/p1" ebpf_exporter_block_request_size_bytes_count "{device=\"$name\"}")"
assert_eq "metrics_prefix \"\"" 30 \
	"$(delta "$WORK/p0" "$WORK/p1" block_request_size_bytes_count "{device=\"$name\"}")"
assert_eq "no default prefix beside them" 0 "$(grep -c '^iolat_user_block_request' "$WORK/p1")"
stop_serve "prefixes"
sed 's/^metrics_prefix: ""/metrics_prefix: iolat_/' "$pfx/bare.yaml" >"$pfx/own.yaml"
out=$("$IOLAT" serve --config.dir="$pfx" --config.names=own --config.check 2>&1) && fail "own: passed"
echo "$out" | grep -q "own.yaml:[0-9]*:[0-9]*: metric iolat_block_request_size_bytes is a name of iolat's own: rename it, or choose another metrics_prefix" ||
	fail "own prefix: $out"
sed -e '/^metrics_prefix/d' -e 's/- name: block_request_size_bytes/- name: config_up/' "$pfx/bare.yaml" >"$pfx/own.yaml"
out=$("$IOLAT" serve --config.dir="$pfx" --config.names=own --config.check 2>&1) && fail "config_up: passed"
echo "$out" | grep -q "metric iolat_user_config_up is a name of iolat's own" || fail "config_up: $out"
echo "ok: metrics_prefix: iolat_user_ by default, another, none; iolat's own names refused"

# 2. Several configs, one broken: it is disabled and reported, the rest run.
cfg=$WORK/configs
mkdir "$cfg"
cp "$EX"/biosize.* "$cfg/"
sed 's/name: majorminor/name: majorminr/' "$EX/biosize.yaml" | sed 's/^name: biosize/name: broken/' >"$cfg/broken.yaml"
port=$(free_port)
start_serve "$WORK/serve2.log" --web.listen-address="127.0.0.1:$port" --config.dir="$cfg"
grep -qE 'msg="user program config disabled" config=broken file=[^ ]*broken.yaml line=[0-9]+ col=[0-9]+ err=".*majorminr' \
	"$WORK/serve2.log" || fail "broken config not reported: $(cat "$WORK/serve2.log")"
scrape "$WORK/m2"
assert_eq "broken: up" 0 "$(metric "$WORK/m2" iolat_user_config_up '{config="broken"}')"
assert_eq "biosize: up beside it" 1 "$(metric "$WORK/m2" iolat_user_config_up '{config="biosize"}')"
kill -TERM "$SERVE_PID"
wait "$SERVE_PID" || fail "serve exit status"
echo "ok: a broken config is disabled and reported; the others run"

# 3. --config.strict: the broken one stops the start, nothing left loaded.
before=$(all_prog_ids)
out=$("$IOLAT" serve --web.listen-address="127.0.0.1:$(free_port)" --config.dir="$cfg" \
	--config.strict 2>&1) && fail "strict: started"
[ "$(echo "$out" | wc -l)" = 1 ] || fail "strict: not one line: $out"
echo "$out" | grep -qE "config 'broken': .*broken.yaml:[0-9]+:[0-9]+: .*majorminr" ||
	fail "strict: message: $out"
assert_all_unloaded "$before" "strict"
echo "ok: --config.strict: $out"

# 4. --config.check: what would be exported, and the exit status.
"$IOLAT" serve --config.dir="$EX" --config.names=biosize --config.check >"$WORK/check" 2>&1 ||
	fail "check of a good config failed: $(cat "$WORK/check")"
grep -q "^config biosize .*: ok" "$WORK/check" || fail "check: $(cat "$WORK/check")"
grep -q "program .* attached at tp_btf/block_rq_issue\|program .* attached at" "$WORK/check" ||
	fail "check: no program listed"
grep -q "histogram iolat_user_block_request_size_bytes from map block_request_size_bytes, labels: device" \
	"$WORK/check" || fail "check: no metric listed"
"$IOLAT" serve --config.dir="$cfg" --config.check >"$WORK/check2" 2>&1 && fail "check: broken passed"
grep -q "^config broken .*FAILED: " "$WORK/check2" || fail "check2: $(cat "$WORK/check2")"
echo "ok: --config.check"

# 5. Bad input: each config alone, strict: one line, file:line:col, exit 1.
bad() {
	local what=$1 want=$2 out
	before=$(all_prog_ids)
	out=$("$IOLAT" serve --web.listen-address="127.0.0.1:$(free_port)" --config.dir="$cfg" \
		--config.names=bad --config.strict 2>&1) && fail "$what: started"
	[ "$(echo "$out" | wc -l)" = 1 ] || fail "$what: not one line: $out"
	echo "$out" | grep -qE -- "$want" || fail "$what: message: $out"
	assert_all_unloaded "$before" "$what"
	echo "ok: $what -> $out"
}
rm "$cfg/broken.yaml"
cp "$TD/maptypes.bpf.o" "$cfg/"
config() { # OBJECT MAP FIELD_SIZE [DECODER]
	cat >"$cfg/bad.yaml" <<EOF
object: $1
metrics:
  counters:
    - name: test_total
      help: A test counter
      map: $2
      labels:
        - name: slot
          size: $3
          decoders:
            - name: ${4:-uint}
EOF
}
config maptypes.bpf.o loop_lru 4
printf 'object: x\nmetrics: [\n' >"$cfg/bad.yaml"
bad "YAML syntax error" "bad.yaml:[0-9]+:[0-9]+: "
config maptypes.bpf.o loop_lru 4
sed -i 's/      help:/      hlep:/' "$cfg/bad.yaml"
bad "unknown field" "bad.yaml:5:[0-9]+: .*hlep"
config maptypes.bpf.o loop_lru 4 nosuchdecoder
bad "unknown decoder" "bad.yaml:11:[0-9]+: .*nosuchdecoder"
config maptypes.bpf.o loop_lru 2
bad "label sizes not the key's" "bad.yaml:4:[0-9]+: .*add up to 2 bytes, but map 'loop_lru' has 4-byte keys"
config maptypes.bpf.o loop_wide 4
bad "value not 8 bytes" "bad.yaml:4:[0-9]+: .*16-byte values"
config maptypes.bpf.o no_such_map 4
bad "map not found" "bad.yaml:4:[0-9]+: .*no_such_map.*loop_lru"
config missing.bpf.o loop_lru 4
bad "missing object" "missing.bpf.o.*No such file"
cp "$TD/bad_verifier.bpf.o" "$cfg/"
config bad_verifier.bpf.o counts 4
bad "verifier rejects" "verifier rejected program .*invalid access to map value"
echo "ok: bad input"

# Perf events: an event this kernel does not know, and a program that is
# not a perf_event program.
perf_config() { # EVENT PROGRAM
	config maptypes.bpf.o loop_lru 4
	printf 'perf_events:\n  - type: software\n    name: %s\n    sample_frequency: 49\n    program: %s\n' \
		"$1" "$2" >>"$cfg/bad.yaml"
}
perf_config cpu-cycles uprog_t_maps
bad "unknown perf event" "bad.yaml:14:11: unknown software event 'cpu-cycles'"
perf_config cpu-clock uprog_t_maps
bad "perf event on a tracepoint program" "program uprog_t_maps is not a SEC\(\"perf_event\"\) program"
echo "ok: perf event bad input"
