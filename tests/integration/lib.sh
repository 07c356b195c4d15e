# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# lib.sh - shared helpers for iolat's integration tests (sourced, not run).
# Tests run as root against the real kernel: they make loop devices, cgroups
# and FUSE mounts, and must leave none of them behind.
set -u

OUT=${OUT:-build}
IOLAT=${IOLAT:-$PWD/$OUT/iolat}
# shellcheck disable=SC2034 # used by the tests that source this file
DIO=$PWD/$OUT/dio
SLOWFS=$PWD/$OUT/slowfs
WORK=$(mktemp -d /dev/shm/iolat-test.XXXXXX)
CLEANUPS=()
IOLAT_PID=

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

skip() {
	echo "SKIP: $*" >&2
	exit 77
}

# Runs registered clean-ups in reverse order, whatever state the test is in.
cleanup() {
	[ -n "$IOLAT_PID" ] && kill -INT "$IOLAT_PID" 2>/dev/null && wait "$IOLAT_PID" 2>/dev/null
	for ((i = ${#CLEANUPS[@]} - 1; i >= 0; i--)); do eval "${CLEANUPS[i]}" >/dev/null 2>&1; done
	rm -rf "$WORK"
}
trap cleanup EXIT
[ -n "${KEEP:-}" ] && trap - EXIT

on_exit() { CLEANUPS+=("$1"); }

# make_unpriv_dir UID GID [suid]: UNPRIV_DIR, a new directory (mode 0755,
# removed at exit) that uid UID with group GID can enter and read, for the
# files a test runs iolat with as that user: the checkout may sit where only
# root can go (/root, a 0700 temporary directory), so nothing of it is
# handed to that user by its path. With suid, one on a mount without nosuid
# (file capabilities count there; none: the test is skipped). The first of
# /dev/shm, /tmp, /var/tmp and the build directory that serves.
make_unpriv_dir() {
	local parent d
	for parent in /dev/shm /tmp /var/tmp "$PWD/$OUT"; do
		d=$(mktemp -d "$parent/iolat-unpriv.XXXXXX" 2>/dev/null) || continue
		chmod 755 "$d"
		if setpriv --reuid="$1" --regid="$2" --clear-groups test -r "$d" -a -x "$d" &&
			{ [ "${3:-}" != suid ] ||
				python3 -c 'import os, sys; sys.exit(os.statvfs(sys.argv[1]).f_flag & os.ST_NOSUID)' "$d"; }; then
			UNPRIV_DIR=$d
			on_exit "rm -rf $d"
			return 0
		fi
		rmdir "$d"
	done
	[ "${3:-}" = suid ] && skip "no directory uid $1 can read on a mount without nosuid (file capabilities would not count) in /dev/shm, /tmp, /var/tmp or $PWD/$OUT"
	fail "no directory uid $1 can read in /dev/shm, /tmp, /var/tmp or $PWD/$OUT"
}

# unpriv_iolat UID GID: copies iolat and the example programs (built
# examples/, if made) into a make_unpriv_dir directory and points IOLAT
# (and EX, the examples) at the copies.
unpriv_iolat() {
	make_unpriv_dir "$1" "$2"
	{ cp "$IOLAT" "$UNPRIV_DIR/iolat" && chmod 755 "$UNPRIV_DIR/iolat"; } || fail "cannot copy $IOLAT to $UNPRIV_DIR"
	if [ -d "$PWD/$OUT/examples" ]; then
		cp -r "$PWD/$OUT/examples" "$UNPRIV_DIR/examples" || fail "cannot copy $PWD/$OUT/examples"
		chmod -R a+rX "$UNPRIV_DIR/examples"
	fi
	IOLAT=$UNPRIV_DIR/iolat
	# shellcheck disable=SC2034 # used by the tests that source this file
	EX=$UNPRIV_DIR/examples
}

# Waits for udev to finish with new devices (its blkid probes read them).
udev_settle() { command -v udevadm >/dev/null && udevadm settle 2>/dev/null; true; }

# make_loop SIZE_MIB [BACKING_FILE [LOSETUP_OPT...]]: a direct-I/O loop device,
# in $LOOP. (Not printed: a $(...) subshell would lose the clean-up.)
make_loop() {
	local file=${2:-$WORK/disk.$RANDOM.img}
	[ -e "$file" ] || truncate -s "${1}M" "$file" || fail "cannot create $file"
	LOOP=$(losetup --direct-io=on "${@:3}" -f --show "$file") || fail "losetup failed"
	on_exit "losetup -d $LOOP"
	# A loop device keeps its queue settings across uses: start from defaults.
	echo 1 >"/sys/block/${LOOP#/dev/}/queue/iostats"
	udev_settle
}

# make_slow_loop DELAY_US: a loop device (in $LOOP) over a file on slowfs,
# a FUSE filesystem whose every read sleeps DELAY_US: a known device latency.
make_slow_loop() {
	mkdir "$WORK/mnt"
	"$SLOWFS" "$WORK/mnt" --size-mib=16 --delay-us="$1" || fail "cannot mount slowfs"
	on_exit "fusermount3 -u $WORK/mnt || umount -l $WORK/mnt"
	make_loop 16 "$WORK/mnt/disk"
}

# The io-controller's hierarchy: v1 blkio where it is bound, else cgroup v2.
cgroup_root() {
	if mountpoint -q /sys/fs/cgroup/blkio 2>/dev/null; then
		echo /sys/fs/cgroup/blkio
	elif [ -f /sys/fs/cgroup/cgroup.controllers ]; then
		echo /sys/fs/cgroup
	else
		echo /sys/fs/cgroup/unified
	fi
}

# workload_base NAME: a fresh directory for a test's workload cgroups
# under the io hierarchy, in $BASE; it and every cgroup made in it are
# removed at exit.
workload_base() {
	BASE=$(cgroup_root)/iolat-test-$1-$$
	mkdir "$BASE" || fail "cannot make $BASE"
	on_exit "find $BASE -depth -type d -exec rmdir {} +"
}

# make_cgroup NAME: a fresh cgroup under the io hierarchy, in $CG.
make_cgroup() {
	CG=$(cgroup_root)/iolat-test-$1-$$
	mkdir "$CG" || fail "cannot make cgroup $CG"
	on_exit "rmdir $CG"
}

# throttle_reads CG DEV IOPS: blk-throttle (v1 blkio, or io.max on v2) holds
# cgroup CG to IOPS reads per second on DEV; skips the test without it.
throttle_reads() {
	local majmin
	majmin=$(cat "/sys/class/block/${2#/dev/}/dev")
	if [ -f "$1/blkio.throttle.read_iops_device" ]; then
		echo "$majmin $3" >"$1/blkio.throttle.read_iops_device"
	elif [ -f "$1/io.max" ]; then
		echo "$majmin riops=$3" >"$1/io.max"
	else
		skip "no blk-throttle interface on $1"
	fi
}

# in_cgroup CG CMD...: runs CMD inside cgroup CG.
in_cgroup() {
	local cg=$1
	shift
	sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg" "$@"
}

# Ids of loaded programs that carry iolat's program names.
iolat_prog_ids() {
	bpftool prog show 2>/dev/null |
		sed -nE 's/^([0-9]+): .*name (rq_complete|rq_issue|io_start|rq_insert|bio_queue|bio_complete|trace_[a-z]+)_(btf|raw) .*/\1/p' |
		sort
}

# pid_prog_ids PID: the BPF programs process PID holds (descriptors of
# programs or of links to them), sorted. Other people's iolat runs on the
# machine load programs with the same names at the same time: what a
# process holds is the only sure way to tell ours.
pid_prog_ids() { grep -rhs '^prog_id:' "/proc/$1/fdinfo/" | awk '{ print $2 }' | sort -u; }
# pid_map_entries PID NAME: entries in the BPF map NAME that process PID
# holds (0 if it holds none by that name).
pid_map_entries() {
	local id ids n=0
	mapfile -t ids < <(grep -rhs '^map_id:' "/proc/$1/fdinfo/" | awk '{ print $2 }' | sort -u)
	for id in "${ids[@]}"; do
		bpftool map show id "$id" 2>/dev/null | grep -q " name $2 " || continue
		n=$(bpftool map dump id "$id" -j 2>/dev/null |
			python3 -c 'import json, sys; print(len(json.load(sys.stdin)))')
	done
	echo "$n"
}
# held_prog_ids: the programs some live process holds, sorted.
held_prog_ids() { grep -rhs '^prog_id:' /proc/[0-9]*/fdinfo/ | awk '{ print $2 }' | sort -u; }

# start_iolat OUTFILE ARGS...: runs iolat in the background until it is attached,
# and notes which programs it loaded (OUR_PROGS) for assert_detached.
start_iolat() {
	local out=$1
	shift
	# Emptied here, before the background start: the child does its own
	# `>` redirections only once it runs, so a wait that follows could
	# otherwise find an earlier run's "Tracing ..." line in a reused file
	# and start the workload before this iolat is attached.
	: >"$out"
	: >"$out.err"
	"$IOLAT" "$@" >"$out" 2>"$out.err" &
	IOLAT_PID=$!
	for _ in $(seq 1 100); do
		if grep -q "Tracing block device I/O" "$out" "$out.err" 2>/dev/null; then
			OUR_PROGS=$(pid_prog_ids "$IOLAT_PID")
			[ -n "$OUR_PROGS" ] || fail "iolat says it is tracing but loaded no programs"
			return 0
		fi
		kill -0 "$IOLAT_PID" 2>/dev/null || fail "iolat exited: $(cat "$out.err")"
		sleep 0.1
	done
	fail "iolat did not attach within 10 s"
}

# stop_iolat [SIGNAL]: stops it; it prints the last interval and must exit 0.
stop_iolat() {
	local rc=0
	kill -"${1:-INT}" "$IOLAT_PID"
	wait "$IOLAT_PID" || rc=$?
	IOLAT_PID=
	[ "$rc" -eq 0 ] || fail "iolat exited with $rc"
}

# wait_for_line FILE PATTERN [SECONDS]: waits up to SECONDS (default 3)
# for PATTERN (a grep regexp) in FILE.
wait_for_line() {
	for _ in $(seq 1 $((${3:-3} * 10))); do
		grep -q -- "$2" "$1" && return 0
		sleep 0.1
	done
	return 1
}

# wait_for_stderr OUTFILE PATTERN: waits up to 3 s for iolat (started with
# start_iolat OUTFILE) to say PATTERN on stderr.
wait_for_stderr() { wait_for_line "$1.err" "$2"; }

# fill_maps BATCHFILE: bpftool batch (map updates by map name, idempotent).
# bpftool finds a map by name by opening every map id; one that a process
# which just exited is still freeing fails that, so it is retried.
fill_maps() {
	for _ in 1 2 3 4 5; do
		bpftool batch file "$1" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	bpftool batch file "$1" >/dev/null
}

# Every loaded BPF program's id, sorted.
all_prog_ids() { bpftool prog show 2>/dev/null | sed -nE 's/^([0-9]+): .*/\1/p' | sort; }
# still_loaded IDS: those of IDS still loaded. loaded_since BEFORE: the ones
# loaded now that BEFORE (a list of ids) did not have.
still_loaded() { comm -12 <(echo "$1") <(all_prog_ids); }
loaded_since() { comm -13 <(echo "$1") <(all_prog_ids); }
# orphans_since BEFORE: programs loaded since BEFORE that no live process
# holds, i.e. left behind by one that exited (a process that is still
# running, someone else's iolat say, holds its own).
orphans_since() { comm -23 <(loaded_since "$1") <(held_prog_ids); }

# settle CMD...: reruns CMD until it prints no program id, for up to 3 s:
# the kernel frees a program after an RCU grace period. 1, with the ids in
# LEFT, if some stay.
settle() {
	for _ in $(seq 1 30); do
		LEFT=$("$@" | tr '\n' ' ')
		[ -z "${LEFT// /}" ] && return 0
		sleep 0.1
	done
	return 1
}

# The programs the last start_iolat loaded must all be gone once it exited.
assert_detached() {
	settle still_loaded "$OUR_PROGS" || fail "iolat programs still loaded 3 s after exit: ids $LEFT"
}

# jq-like queries over iolat's JSON with python3: jget FILE EXPR (EXPR in Python,
# with `d` the last JSON object of the file and `s(disk, op)` one series).
jget() {
	python3 - "$1" "$2" <<'PY'
import json, sys
lines = [l for l in open(sys.argv[1]) if l.strip()]
d = json.loads(lines[-1])
def s(disk=None, op=None):
    for x in d["series"]:
        if (disk is None or x.get("disk") == disk) and (op is None or x.get("op") == op):
            return x
    return {"ios": 0, "bytes": 0, "errors": 0, "device": {"count": 0, "unseen": 0, "p50_ns": 0},
            "total": {"count": 0, "unseen": 0, "p50_ns": 0}, "size_slots": []}
print(eval(sys.argv[2]))
PY
}

# assert_eq WHAT EXPECTED ACTUAL
assert_eq() {
	[ "$2" = "$3" ] || fail "$1: expected $2, got $3"
}

# assert_counted WHAT EXPECTED ACTUAL: exact, except that a shortfall of at
# most 3 (or 1 in 1 000 of EXPECTED, if more) passes with a WARNING: on our test machines BPF programs on
# block_rq_complete now and then miss a completion the kernel records
# (README, "Known error bounds and misses"). An excess always fails.
assert_counted() {
	[[ "$2" =~ ^[0-9]+$ && "$3" =~ ^[0-9]+$ ]] || fail "$1: expected $2, got '$3'"
	local missed=$(($2 - $3))
	[ "$missed" -ge 0 ] || fail "$1: counted $3, more than the $2 done"
	[ "$missed" -le 3 ] || [ "$missed" -le $(($2 / 1000)) ] || fail "$1: expected $2, got $3"
	[ "$missed" = 0 ] || echo "WARNING: $1: $missed of $2 completions not seen by BPF"
}

# expect_error EXIT PATTERN ARGS...: iolat ARGS must exit EXIT with one
# stderr line matching PATTERN, print nothing on stdout, and leave no programs.
# WRAP (e.g. valgrind) runs before iolat when set.
expect_error() {
	local want=$1 pattern=$2 rc=0 before
	shift 2
	before=$(all_prog_ids)
	${WRAP:-} "$IOLAT" "$@" >"$WORK/out" 2>"$WORK/err" </dev/null || rc=$?
	[ "$rc" -eq "$want" ] || fail "iolat $*: exit $rc, expected $want ($(cat "$WORK/err"))"
	[ "$(wc -l <"$WORK/err")" -eq 1 ] || fail "iolat $*: expected one error line, got: $(cat "$WORK/err")"
	grep -qE "$pattern" "$WORK/err" || fail "iolat $*: '$(cat "$WORK/err")' does not match '$pattern'"
	[ ! -s "$WORK/out" ] || fail "iolat $*: printed on stdout: $(cat "$WORK/out")"
	settle orphans_since "$before" || fail "iolat $*: left programs loaded: $LEFT"
	echo "ok: iolat $* -> $(cat "$WORK/err")"
}
