# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# User programs (issue 6): src/uprog/uprog.c loads each example of examples/ through
# the uprog_dump helper, the test makes the event happen, and the maps must
# show it - exact where the kernel allows (block request sizes on a loop
# device), at least N where others share the event (failed openat), or just
# present (run-queue latency, timers). Then broken objects: a missing file,
# a non-ELF, a program the verifier rejects, a program that cannot attach -
# each must fail with its reason and leave nothing loaded.
source tests/integration/lib.sh

UPROG_DUMP=$PWD/$OUT/uprog_dump
EX=$PWD/$OUT/examples
TD=$PWD/$OUT/test-data
for f in "$UPROG_DUMP" "$EX/biosize.bpf.o" "$TD/bad_verifier.bpf.o"; do
	[ -e "$f" ] || fail "$f missing: run make and make helpers"
done


# start_dump OBJECT: uprog_dump as a coprocess, once it says it attached;
# the ids of the programs it holds in DUMP_PROGS.
start_dump() {
	local line
	coproc DUMP { exec "$UPROG_DUMP" "$1" 2>"$WORK/dump.err"; }
	DUMP_PID_SAVED=$DUMP_PID
	on_exit "kill $DUMP_PID_SAVED"
	while read -t 10 -r line <&"${DUMP[0]}"; do
		[ "$line" = ready ] || continue
		DUMP_PROGS=$(pid_prog_ids "$DUMP_PID_SAVED")
		[ -n "$DUMP_PROGS" ] || fail "$1: uprog_dump attached but no program is loaded"
		return 0
	done
	fail "$1: uprog_dump did not attach: $(cat "$WORK/dump.err")"
}

# ask CMD FILE: sends CMD, writes the reply's lines up to "end" (or the one
# line of a `map` reply) to FILE.
ask() {
	local line
	: >"$2"
	echo "$1" >&"${DUMP[1]}"
	while read -t 10 -r line <&"${DUMP[0]}"; do
		[ "$line" = end ] && return 0
		echo "$line" >>"$2"
		[[ "$1" == map\ * ]] && return 0
	done
	fail "no answer to '$1': $(cat "$WORK/dump.err")"
}

snapshot() { ask dump "$1"; }

# stop_dump: quit must exit 0 and unload every program it loaded (the kernel
# frees a program after an RCU grace period: allow it 3 s).
stop_dump() {
	echo quit >&"${DUMP[1]}"
	wait "$DUMP_PID_SAVED" || fail "uprog_dump exited with $?: $(cat "$WORK/dump.err")"
	settle still_loaded "$DUMP_PROGS" ||
		fail "programs still loaded 3 s after uprog_dump exited: ids $LEFT"
}

# value FILE MAP KEYHEX: the entry's value, 0 if absent. Keys compare as strings:
# awk would read a key like 0e000000 as the number 0.
value() { awk -v m="$2" -v k="$3" '$1 == m && $2 "" == k "" { v = $3 } END { print v + 0 }' "$1"; }

# grew BEFORE AFTER MAP KEYHEX: how much the entry grew between two dumps.
grew() { echo $(($(value "$2" "$3" "$4") - $(value "$1" "$3" "$4"))); }

# le32 N: N's bytes as a little-endian u32 key field, in hex.
le32() { printf '%02x%02x%02x%02x' $(($1 & 255)) $(($1 >> 8 & 255)) $(($1 >> 16 & 255)) $(($1 >> 24 & 255)); }

# --- biosize: N direct 4 KiB reads = exactly N in the 4 KiB bucket --------
N=200
make_loop 64
majmin=$(cat "/sys/class/block/${LOOP#/dev/}/dev")
dev=$(((${majmin%:*} << 20) | ${majmin#*:}))
for mode in iter batch keys; do
	export IOLAT_MAP_READ=$mode
	start_dump "$EX/biosize.bpf.o"
	ask "map block_request_size_bytes" "$WORK/map"
	assert_eq "biosize map" "map block_request_size_bytes 1 8 8 1664 0" "$(cat "$WORK/map")"
	snapshot "$WORK/b0"
	"$DIO" read "$LOOP" $N 4096 || fail "dio read"
	snapshot "$WORK/b1"
	stop_dump
	unset IOLAT_MAP_READ
	assert_eq "biosize $mode: 4 KiB bucket (12)" $N \
		"$(grew "$WORK/b0" "$WORK/b1" block_request_size_bytes "$(le32 $dev)$(le32 12)")"
	assert_eq "biosize $mode: sum key (25)" $((N * 4096)) \
		"$(grew "$WORK/b0" "$WORK/b1" block_request_size_bytes "$(le32 $dev)$(le32 25)")"
	echo "ok: biosize ($mode): $N reads of 4 KiB on $LOOP ($majmin)"
done

# --- every map type the reader walks, all three ways: N reads = N in each ----
slot=$(le32 $((${majmin#*:} % 16)))
for mode in iter batch keys; do
	export IOLAT_MAP_READ=$mode
	start_dump "$TD/maptypes.bpf.o"
	snapshot "$WORK/m0"
	"$DIO" read "$LOOP" $N 4096 || fail "dio read"
	snapshot "$WORK/m1"
	stop_dump
	unset IOLAT_MAP_READ
	for map in loop_array loop_percpu_array loop_lru loop_lru_percpu; do
		assert_eq "$mode $map" $N "$(grew "$WORK/m0" "$WORK/m1" $map "$slot")"
	done
	# Arrays: every index, present or not.
	assert_eq "$mode array entries" 16 "$(grep -c '^loop_array ' "$WORK/m1")"
	assert_eq "$mode per-CPU array entries" 16 "$(grep -c '^loop_percpu_array ' "$WORK/m1")"
	echo "ok: map types ($mode)"
done

# --- syscalls: N failing opens = at least N (openat, ENOENT) -------------
case $(uname -m) in
x86_64) openat=257 ;;
aarch64) openat=56 ;;
*) skip "openat's number on $(uname -m) not known here" ;;
esac
N=500
start_dump "$EX/syscalls.bpf.o"
ask "map syscalls_total" "$WORK/map"
assert_eq "syscalls map is per-CPU" 1 "$(awk '{ print $7 }' "$WORK/map")"
snapshot "$WORK/s0"
python3 -c "
for _ in range($N):
    try:
        open('/nonexistent')
    except FileNotFoundError:
        pass
" || fail "python3 opens"
snapshot "$WORK/s1"
stop_dump
got=$(grew "$WORK/s0" "$WORK/s1" syscalls_total "$(le32 $openat)$(le32 2)")
[ "$got" -ge $N ] || fail "syscalls: (openat, ENOENT) grew by $got, expected >= $N"
echo "ok: syscalls: (openat, ENOENT) grew by $got after $N failed opens"

# --- runqlat: sleeps and wakeups = more counts, a positive sum -----------
start_dump "$EX/runqlat.bpf.o"
snapshot "$WORK/r0"
python3 -c "
import time
for _ in range(200):
    time.sleep(0.001)
" || fail "python3 sleeps"
snapshot "$WORK/r1"
stop_dump
count() {
	awk '$1 == "run_queue_latency" && $2 != "1b000000" { n += $3 } END { print n + 0 }' "$1"
}
c0=$(count "$WORK/r0") c1=$(count "$WORK/r1")
[ "$c1" -gt "$c0" ] || fail "runqlat: count did not grow ($c0 -> $c1)"
sum=$(value "$WORK/r1" run_queue_latency 1b000000)
[ "$sum" -gt 0 ] || fail "runqlat: the sum key (bucket 27) is $sum"
echo "ok: runqlat: count $c0 -> $c1, sum $sum us"

# --- timers: keys are kernel text addresses ------------------------------
start_dump "$EX/timers.bpf.o"
ask "map nosuch" "$WORK/map"
assert_eq "missing map" "error: map nosuch not found in $EX/timers.bpf.o (it has: timer_starts)" \
	"$(cat "$WORK/map")"
sleep 1
snapshot "$WORK/t1"
stop_dump
found=$(python3 - "$WORK/t1" <<'PY'
import sys
text = set()
for l in open("/proc/kallsyms"):
    a, t, _ = l.split()[:3]
    if t in "tT":
        text.add(int(a, 16))
keys = [int.from_bytes(bytes.fromhex(l.split()[1]), "little")
        for l in open(sys.argv[1]) if l.startswith("timer_starts ")]
print(sum(k in text for k in keys), len(keys))
PY
)
[ "${found%% *}" -ge 1 ] || fail "timers: no key is a kernel function's address ($found)"
echo "ok: timers: ${found% *} of ${found#* } keys are kernel functions"

# --- broken objects: the reason, a non-zero exit, nothing left loaded ----
# expect_fail WHAT OBJECT PATTERN...: uprog_dump must fail saying every PATTERN.
expect_fail() {
	local what=$1 obj=$2 rc=0
	shift 2
	"$UPROG_DUMP" "$obj" </dev/null >"$WORK/out" 2>"$WORK/err" || rc=$?
	[ "$rc" -ne 0 ] || fail "$what: uprog_dump exited 0"
	for p in "$@"; do
		grep -qF -- "$p" "$WORK/err" || fail "$what: no '$p' in: $(cat "$WORK/err")"
	done
	[ "$(wc -l <"$WORK/err")" = 1 ] || fail "$what: not one line: $(cat "$WORK/err")"
	echo "ok: $what: $(cat "$WORK/err")"
}

# Programs of the broken objects still loaded (they are all named uprog_t_*).
assert_none_left() {
	for _ in $(seq 1 30); do
		bpftool prog show 2>/dev/null | grep -q 'name uprog_t_' || return 0
		sleep 0.1
	done
	fail "$1: programs left loaded: $(bpftool prog show | grep 'name uprog_t_')"
}

expect_fail "missing file" "$WORK/nonexistent.bpf.o" "$WORK/nonexistent.bpf.o: No such file or directory"
echo "not an object" >"$WORK/text.bpf.o"
expect_fail "non-ELF file" "$WORK/text.bpf.o" "not a BPF object"
expect_fail "x86 ELF file" "$DIO" "not a BPF object"
expect_fail "verifier rejects" "$TD/bad_verifier.bpf.o" "verifier rejected program uprog_t_oob" \
	"invalid access to map value, value_size=8 off=16 size=8"
assert_none_left "verifier rejects"
expect_fail "cannot attach" "$TD/bad_attach.bpf.o" 'program uprog_t_sock (SEC "socket")' \
	"tp_btf/NAME"
assert_none_left "cannot attach"
echo "ok: test_uprog"
