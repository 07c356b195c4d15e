# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The unit and the package under a real systemd (issue 26): a Debian 12
# guest booted under qemu (TCG) with systemd as PID 1 and Debian's own 6.1
# kernel (tests/vm/systemd_guest.sh: its image is built once with mmdebstrap
# and cached in $OUT/vm/systemd-guest), driven through an agent on a
# virtio-serial port. Two packages: `make deb`'s (test_deb.sh's if it made
# one of this commit), and the same tree built again as a newer version (a
# copy of the tree, committed and tagged in a repository of its own, so
# scripts/version.sh names it with the next patch release); both kept in
# $OUT/vm/systemd-guest-debs for a rerun on the same tree. DEB=FILE and
# DEB_NEXT=FILE: packages built already. In the guest:
#   1. apt-get install of the package: the service runs (Type=notify: it
#      became active only once iolat said READY=1), a scrape answers and
#      names the package's version;
#   2. direct reads of a known count on a disk of its own (vdb): iolat's
#      completions for it rose by as much as the disk's own counters, at
#      least that count;
#   3. systemctl restart while reads run: no gap (the counters rose by as
#      much as the disk's), none went backwards;
#   4. the newer package installed under the running unit (dpkg -i: the
#      maintainer scripts apt would run), reads running: no gap, and the new
#      binary serving (iolat_build_info's version and iolat --version);
#   5. systemctl stop: within 5 s of its return (ExecStopPost= unpins before it returns) no iolat program, link or pin is left
#      in the kernel;
#   6. start, then kill -9 of the main process, reads running: Restart=
#      brings it back and no I/O went uncounted;
#   7. systemctl disable --now: nothing attached, the unit disabled; then
#      apt-get purge: no file of the package, no pins, no /run/iolat, no
#      program, no process or file of the user iolat (the account itself
#      stays: Debian's policy, see contrib/iolat.service);
#   8. systemd-analyze security: the unit's exposure at most 2.0.
# A failed check is reported and the steps after it still run (each says
# what it expected and what it saw); the test fails at the end. The guest's
# console log is kept on failure ($OUT/systemd-guest-console.log). Needs
# root (mmdebstrap --mode=root, once) and network to Debian's archive for
# the first build; skips (77) if mmdebstrap, qemu or the archive are not
# there.
# The guest's scripts are single-quoted: they expand there.
# shellcheck disable=SC2016
source tests/integration/lib.sh
source tests/integration/lib_serve.sh
source tests/vm/systemd_guest.sh

[ "$(id -u)" -eq 0 ] || skip "needs root (mmdebstrap --mode=root)"
for t in dpkg-buildpackage dh dpkg-deb git; do
	command -v $t >/dev/null || skip "$t is not installed (dpkg-dev, debhelper, git)"
done

FAILED=()
# soft WHAT: a failed check; the test goes on and fails at the end.
soft() {
	echo "FAIL: $*" >&2
	FAILED+=("$*")
}
# check_eq STEP WHAT EXPECTED SEEN
check_eq() {
	if [ "$3" = "$4" ]; then
		echo "ok: $1: $2: ${4:-nothing}"
	else
		soft "$1: $2: expected ${3:-nothing}, saw ${4:-nothing}"
	fi
}
T_START=$SECONDS T_PHASE=$SECONDS
TIMES=()
phase_done() {
	TIMES+=("$1: $((SECONDS - T_PHASE)) s")
	echo "== $1 took $((SECONDS - T_PHASE)) s"
	T_PHASE=$SECONDS
}
# val NAME: NAME=VALUE from the last guest command's output ($G).
val() { sed -n "s/^$1=//p" <<<"$G" | tail -n1; }
# g TIMEOUT SCRIPT: runs SCRIPT in the guest; output in $G (and the log),
# exit status in $GRC.
g() {
	GRC=0
	sg_run "$@" >"$WORK/g.out" || GRC=$?
	G=$(cat "$WORK/g.out")
	printf '%s\n' "$G" | sed 's/^/  guest| /'
}

# --- The packages -----------------------------------------------------------
# Both are kept in $OUT/vm/systemd-guest-debs for the same tree (HEAD, its
# changes and new files: tree_key), so a rerun builds neither.
DEBS=$(realpath -m "$OUT")/vm/systemd-guest-debs
tree_key() {
	git rev-parse -q --verify HEAD >/dev/null 2>&1 || return 0
	{
		git rev-parse HEAD
		git diff HEAD
		git ls-files -z --others --exclude-standard | xargs -0r sha256sum
	} 2>/dev/null | sha256sum | cut -d' ' -f1
}
# The newer one: this tree (as make deb takes it: tracked and new files)
# in a repository of its own, tagged with the next patch release, so that
# scripts/version.sh names it that.
build_next() {
	local base x y z
	base=$(grep -oE '^[0-9]+\.[0-9]+\.[0-9]+' <<<"$ver_a") || fail "no X.Y.Z at the start of version $ver_a"
	IFS=. read -r x y z <<<"$base"
	ver_b=$x.$y.$((z + 1))
	mkdir "$WORK/next"
	git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
		tar --null -T - -cf - | tar -C "$WORK/next" -xf - || fail "cannot copy the tree"
	(cd "$WORK/next" && git init -q && git add -A &&
		git -c user.name=iolat-test -c user.email=test@iolat.invalid commit -qm "the next release" &&
		git tag "v$ver_b") >"$WORK/next.log" 2>&1 || fail "cannot commit the copy: $(cat "$WORK/next.log")"
	LINTIAN=0 DEB_BUILD_OPTIONS=nocheck make --no-print-directory -C "$WORK/next" deb OUT="$WORK/deb-b" \
		>"$WORK/deb-b.log" 2>&1 || fail "make deb of the newer version: $(tail -20 "$WORK/deb-b.log")"
	DEB_B=$WORK/deb-b/deb/iolat_${ver_b}_amd64.deb
	[ -f "$DEB_B" ] || fail "the newer package is not $DEB_B: $(ls "$WORK/deb-b/deb")"
}
key=$(tree_key)
if [ -n "${DEB:-}" ]; then
	# DEB=FILE (and DEB_NEXT=FILE, a newer one): built already.
	DEB_A=$DEB
	DEB_B=${DEB_NEXT:-}
elif [ -n "$key" ] && [ "$(cat "$DEBS/key" 2>/dev/null)" = "$key" ]; then
	DEB_A=$DEBS/iolat_a.deb DEB_B=$DEBS/iolat_b.deb
	echo "packages of this tree from $DEBS"
else
	version=$(sh scripts/version.sh)
	debver=${version//-/+}
	if [[ "$version" != *dirty* ]] && [ -f "$OUT/deb/iolat_${debver}_amd64.deb" ]; then
		# test_deb.sh's, of this same commit.
		DEB_A=$OUT/deb/iolat_${debver}_amd64.deb
	else
		# Lintian and the unit tests are test_deb.sh's and make unit's.
		LINTIAN=0 DEB_BUILD_OPTIONS=nocheck make --no-print-directory deb OUT="$WORK/deb-a" \
			>"$WORK/deb-a.log" 2>&1 || fail "make deb: $(tail -20 "$WORK/deb-a.log")"
		DEB_A=$(ls "$WORK"/deb-a/deb/iolat_*_amd64.deb)
	fi
fi
[ -f "$DEB_A" ] || fail "no package: $DEB_A"
ver_a=$(dpkg-deb -f "$DEB_A" Version)
if [ -z "${DEB_B:-}" ]; then
	build_next
	if [ -z "${DEB:-}" ] && [ -n "$key" ]; then
		# Into place last: no half-made cache.
		{ rm -rf "$DEBS" "$DEBS.tmp" && mkdir -p "$DEBS.tmp" && cp "$DEB_A" "$DEBS.tmp/iolat_a.deb" &&
			cp "$DEB_B" "$DEBS.tmp/iolat_b.deb" && echo "$key" >"$DEBS.tmp/key" &&
			mv "$DEBS.tmp" "$DEBS"; } || fail "cannot keep the packages in $DEBS"
	fi
fi
[ -f "$DEB_B" ] || fail "no newer package: $DEB_B"
ver_b=$(dpkg-deb -f "$DEB_B" Version)
dpkg --compare-versions "$ver_b" gt "$ver_a" || fail "the newer package's $ver_b does not sort after $ver_a"
echo "packages: $ver_a ($DEB_A), then $ver_b"
phase_done "packages"

# --- The guest ---------------------------------------------------------------
sg_prepare "$DEB_A"
phase_done "guest image (cached in $SG_DIR)"

# vdb: the disk the reads go to; vdc: the packages, as a tar archive.
truncate -s 64M "$WORK/test.img"
mkdir "$WORK/payload"
{ cp "$DEB_A" "$WORK/payload/iolat_a.deb" && cp "$DEB_B" "$WORK/payload/iolat_b.deb"; } || fail "cannot copy the packages"
tar -C "$WORK/payload" -cf "$WORK/payload.tar" . || fail "cannot make the payload"
sg_boot "iolat-sdguest-$$" 300 \
	-drive "file=$WORK/test.img,if=none,id=t,format=raw,cache=unsafe" \
	-device virtio-blk-pci,drive=t,serial=iolat-test \
	-drive "file=$WORK/payload.tar,if=none,id=p,format=raw,readonly=on" \
	-device virtio-blk-pci,drive=p,serial=iolat-payload
phase_done "boot to the agent"

# What every guest script can call.
SG_PRELUDE='
serial_disk() { for b in /sys/block/vd*; do [ "$(cat "$b/serial" 2>/dev/null)" = "$1" ] && echo "${b##*/}"; done; }
D=$(serial_disk iolat-test)
# Reads and writes the disk completed, from the kernel.
stat_ios() { awk "{ print \$1 + \$5 }" /sys/block/$D/stat; }
scrape() { curl -sf --max-time 20 http://127.0.0.1:19617/metrics; }
# The disk'"'"'s completions in a scrape (saved in $1), over every label.
scraped_ios() {
	scrape >"$1" || { echo 0; return 1; }
	awk -v d="device=\"$D\"" '"'"'$1 ~ /^iolat_block_completions_total\{/ && index($1, d) { n += $2 } END { print n + 0 }'"'"' "$1"
}
build_version() { sed -n '"'"'s/^iolat_build_info{.*version="\([^"]*\)".*/\1/p'"'"' "$1"; }
iolat_progs() {
	bpftool prog show 2>/dev/null | grep -cE "name (rq_complete|rq_issue|io_start|rq_insert|bio_queue|bio_complete|trace_[a-z]+)_(btf|raw) "
}
trace_links() { bpftool link show 2>/dev/null | grep -cE "^[0-9]+: (tracing|raw_tracepoint) "; }
mkdir -p /run/t
# io_start: 20 direct 4 KiB reads at a time, round after round, each round
# in the next 80 KiB of the disk, until io_stop; its rounds in /run/t/rounds.
io_start() {
	rm -f /run/t/stop; echo 0 >/run/t/rounds
	( i=0; while [ ! -e /run/t/stop ]; do
		dd if=/dev/$D of=/dev/null bs=4096 count=20 skip=$(( (i % 800) * 20 )) iflag=direct 2>/dev/null || exit 1
		i=$((i + 1)); echo $i >/run/t/rounds
	done ) >/dev/null 2>&1 &
	echo $! >/run/t/io.pid
}
rounds() { cat /run/t/rounds; }
# io_wait N: until N rounds are done.
io_wait() { for _ in $(seq 600); do [ "$(rounds)" -ge "$1" ] && return 0; sleep 0.1; done; return 1; }
# io_stop: the reads made, once the loop has ended (READS=...).
io_stop() { touch /run/t/stop; wait_pid "$(cat /run/t/io.pid)"; echo "READS=$(( $(rounds) * 20 ))"; }
wait_pid() { while kill -0 "$1" 2>/dev/null; do sleep 0.1; done; }
unit() { systemctl show -p "$1" --value iolat; }
# upgrade_b: the newer package over the running unit, as apt would put it
# there (dpkg -i: the same maintainer scripts, less apt'"'"'s own half minute
# under TCG).
upgrade_b() {
	dpkg -i /root/payload/iolat_b.deb >/run/t/dpkg-b.log 2>&1 && return 0
	tail -n 20 /run/t/dpkg-b.log; return 1
}
'

g 300 'systemctl is-system-running --wait; systemctl --failed --no-legend --plain
echo "BPFFS=$(findmnt -no FSTYPE /sys/fs/bpf)"; echo "DISK=$D"; uname -r
bpftool prog show | sed -nE "s/^([0-9]+): .*/\1/p" >/run/t/progs.before
pd=$(serial_disk iolat-payload); mkdir -p /root/payload && tar -xf /dev/$pd -C /root/payload && ls /root/payload'
[ "$GRC" = 0 ] || soft "boot: the system is not 'running' (failed units above)"
check_eq boot "file system on /sys/fs/bpf (systemd's)" bpf "$(val BPFFS)"
DISK=$(val DISK)
[ -n "$DISK" ] || fail "the guest has no disk with serial iolat-test"
phase_done "system running"

# --- 1. install and start ----------------------------------------------------
g 300 'cd /root/payload && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ./iolat_a.deb >/run/t/apt.log 2>&1 || { tail -20 /run/t/apt.log; exit 1; }
echo "ACTIVE_AFTER_INSTALL=$(systemctl is-active iolat)"
systemctl is-active -q iolat || systemctl start iolat
echo "ACTIVE=$(systemctl is-active iolat)"; echo "SUB=$(unit SubState)"; echo "TYPE=$(unit Type)"
echo "ENABLED=$(systemctl is-enabled iolat)"
echo "PID=$(unit MainPID)"
# Type=notify: the start job ends at READY=1, so active means it was sent.
echo "READY_LOGGED=$(journalctl -b -u iolat -o cat --no-pager | grep -c "listening")"
scrape >/run/t/m1 && echo "SCRAPE=ok"
echo "BUILD=$(build_version /run/t/m1)"; echo "BINARY=$(iolat --version)"
systemctl status iolat --no-pager | head -n 12'
[ "$GRC" = 0 ] || fail "step 1: apt-get install ./iolat_a.deb failed (output above)"
echo "step 1: active right after the install (postinst's start): $(val ACTIVE_AFTER_INSTALL)"
check_eq "step 1" "systemctl is-active" active "$(val ACTIVE)"
check_eq "step 1" "SubState" running "$(val SUB)"
check_eq "step 1" "Type" notify "$(val TYPE)"
check_eq "step 1" "is-enabled after the install" enabled "$(val ENABLED)"
check_eq "step 1" "scrape of http://127.0.0.1:19617/metrics" ok "$(val SCRAPE)"
check_eq "step 1" "iolat_build_info version" "${ver_a//+/-}" "$(val BUILD | tr + -)"
phase_done "1. install, start, scrape"

# --- 8. systemd-analyze security (while the unit is installed) --------------
g 120 'systemd-analyze security iolat.service --no-pager >/run/t/sec 2>&1; tail -n 3 /run/t/sec
echo "EXPOSURE=$(sed -n "s/.*Overall exposure level for iolat.service: \([0-9.]*\).*/\1/p" /run/t/sec)"'
exposure=$(val EXPOSURE)
if [ -z "$exposure" ]; then
	soft "step 8: no 'Overall exposure level' in systemd-analyze security's output"
elif awk -v e="$exposure" 'BEGIN { exit !(e <= 2.0) }'; then
	echo "ok: step 8: exposure $exposure <= 2.0"
else
	soft "step 8: exposure expected <= 2.0, saw $exposure"
fi
phase_done "8. systemd-analyze security"

# --- 2. direct reads of a known count -----------------------------------------
N=300
g 120 "s0=\$(stat_ios); m0=\$(scraped_ios /run/t/m2a)
dd if=/dev/\$D of=/dev/null bs=4096 count=$N iflag=direct 2>&1 | tail -n1
s1=\$(stat_ios); m1=\$(scraped_ios /run/t/m2b)
echo DISK_DELTA=\$((s1 - s0)); echo IOLAT_DELTA=\$((m1 - m0))"
disk_delta=$(val DISK_DELTA) iolat_delta=$(val IOLAT_DELTA)
if [ "${disk_delta:-0}" -lt "$N" ]; then soft "step 2: the disk completed $disk_delta I/Os, fewer than the $N reads made"; fi
check_eq "step 2" "iolat's completions on $DISK (the disk's own count; $N direct reads made)" "$disk_delta" "$iolat_delta"
phase_done "2. direct reads counted"

# io_across STEP ACTION: reads running from before ACTION until a new
# iolat serves (two rounds each side); the completions iolat counted over it must be
# the disk's, no fewer than the reads made; no counter may go backwards.
# Also prints the main PID before and after (PID0, PID1).
io_across() {
	local step=$1 action=$2 reads
	g 600 "pid0=\$(unit MainPID); echo PID0=\$pid0; echo NRESTARTS0=\$(unit NRestarts)
s0=\$(stat_ios); m0=\$(scraped_ios /run/t/before)
io_start; io_wait 2 || echo NO_IO_BEFORE=1
$action
echo ACTION_RC=\$?
for _ in \$(seq 300); do systemctl is-active -q iolat && [ \"\$(unit MainPID)\" != \$pid0 ] && break; sleep 0.2; done
at=\$(rounds); io_wait \$((at + 2)) || echo NO_IO_AFTER=1
io_stop
echo ACTIVE=\$(systemctl is-active iolat); echo PID1=\$(unit MainPID); echo NRESTARTS1=\$(unit NRestarts)
s1=\$(stat_ios); m1=\$(scraped_ios /run/t/after)
echo DISK_DELTA=\$((s1 - s0)); echo IOLAT_DELTA=\$((m1 - m0))
echo BUILD=\$(build_version /run/t/after); echo BINARY=\$(iolat --version)
journalctl -b -u iolat -o cat --no-pager | grep -iE 'adopt|pinned|taking over|error' | tail -n 4"
	[ -z "$(val NO_IO_BEFORE)$(val NO_IO_AFTER)" ] || soft "$step: the reads did not run on both sides of it"
	check_eq "$step" "exit status of: $action" 0 "$(val ACTION_RC)"
	check_eq "$step" "systemctl is-active after" active "$(val ACTIVE)"
	[ "$(val PID0)" != "$(val PID1)" ] || soft "$step: the main PID is still $(val PID0): no new iolat"
	reads=$(val READS)
	[ "${reads:-0}" -gt 0 ] || soft "$step: no reads were made"
	if [ "$(val DISK_DELTA)" -lt "${reads:-0}" ]; then
		soft "$step: the disk completed $(val DISK_DELTA) I/Os, fewer than the $reads reads made"
	fi
	check_eq "$step" "iolat's completions on the disk over it ($reads reads made; the disk's own count)" \
		"$(val DISK_DELTA)" "$(val IOLAT_DELTA)"
	sg_run 60 'cat /run/t/before' >"$WORK/$step.before"
	sg_run 60 'cat /run/t/after' >"$WORK/$step.after"
	if (check_monotonic "$WORK/$step.before" "$WORK/$step.after"); then
		echo "ok: $step: no counter went backwards"
	else
		soft "$step: a counter went backwards (above)"
	fi
}

# --- 3. restart under I/O -------------------------------------------------------
io_across "step 3" "systemctl restart iolat"
phase_done "3. restart under I/O"

# --- 4. the newer package under the running unit ------------------------------
io_across "step 4" "upgrade_b"
check_eq "step 4" "iolat_build_info version after the upgrade" "$ver_b" "$(val BUILD)"
check_eq "step 4" "iolat --version after the upgrade" "iolat $ver_b" "$(val BINARY | awk '{ print $1, $2 }')"
phase_done "4. upgrade under I/O"

# nothing_attached STEP: within 5 s, no iolat program, tracing link or pin.
nothing_attached() {
	# systemctl returns once ExecStopPost= has unpinned: only the kernel's
	# freeing of the programs (an RCU grace period) may lag, so 5 s at most.
	g 120 'for i in $(seq 5); do
	[ "$(iolat_progs)" = 0 ] && [ "$(trace_links)" = 0 ] && [ -z "$(ls -A /sys/fs/bpf/iolat 2>/dev/null)" ] && break
	sleep 1
done
echo "WAITED=$i"; echo "PROGS=$(iolat_progs)"; echo "LINKS=$(trace_links)"
echo "PINS=$(ls -A /sys/fs/bpf/iolat 2>/dev/null | paste -sd" ")"
command -v iolat >/dev/null && iolat check --no-load >/run/t/check 2>&1 && grep -A2 "^Pinned collectors" /run/t/check
echo "CHECK_PINNED=$(command -v iolat >/dev/null && grep -A1 "^Pinned collectors" /run/t/check | paste -sd" " | tr -s " " | sed "s/ *$//")"
bpftool prog show | grep -E "^[0-9]+: " | head -n 20'
	check_eq "$1" "iolat programs loaded within 5 s" 0 "$(val PROGS)"
	check_eq "$1" "tracing links within 5 s" 0 "$(val LINKS)"
	check_eq "$1" "pins in /sys/fs/bpf/iolat within 5 s" "" "$(val PINS)"
	[ -z "$(val CHECK_PINNED)" ] ||
		check_eq "$1" "iolat check --no-load" "Pinned collectors (serve --handover): none" "$(val CHECK_PINNED)"
}

# --- 5. stop ----------------------------------------------------------------------
g 120 'systemctl stop iolat; echo STOP_RC=$?; echo ACTIVE=$(systemctl is-active iolat)'
check_eq "step 5" "systemctl stop's exit status" 0 "$(val STOP_RC)"
check_eq "step 5" "systemctl is-active after stop" inactive "$(val ACTIVE)"
nothing_attached "step 5 (stop)"
phase_done "5. stop"

# --- 6. start, kill -9, Restart= ---------------------------------------------
g 120 'systemctl start iolat; echo START_RC=$?; echo ACTIVE=$(systemctl is-active iolat); echo RESTART=$(unit Restart)'
check_eq "step 6" "systemctl start's exit status" 0 "$(val START_RC)"
check_eq "step 6" "Restart=" on-failure "$(val RESTART)"
io_across "step 6" 'kill -9 $pid0'
check_eq "step 6" "NRestarts after kill -9" "$(($(val NRESTARTS0) + 1))" "$(val NRESTARTS1)"
phase_done "6. kill -9 and Restart="

# --- 7. disable --now, purge ----------------------------------------------------
g 120 'systemctl disable --now iolat >/dev/null 2>&1; echo RC=$?; echo ACTIVE=$(systemctl is-active iolat)
echo ENABLED=$(systemctl is-enabled iolat 2>/dev/null)'
check_eq "step 7" "disable --now's exit status" 0 "$(val RC)"
check_eq "step 7" "systemctl is-active after disable --now" inactive "$(val ACTIVE)"
check_eq "step 7" "is-enabled after disable --now" disabled "$(val ENABLED)"
nothing_attached "step 7 (disable --now)"
g 300 'dpkg -L iolat >/run/t/files
DEBIAN_FRONTEND=noninteractive apt-get purge -y iolat >/run/t/purge.log 2>&1 || { tail -n 20 /run/t/purge.log; echo PURGE_RC=1; }
left=
while IFS= read -r f; do
	[ -e "$f" ] || [ -L "$f" ] || continue
	if [ -d "$f" ]; then dpkg -S "$f" >/dev/null 2>&1 && continue; [ -n "$(ls -A "$f/")" ] && continue; fi
	left="$left $f"
done </run/t/files
for f in /sys/fs/bpf/iolat /run/iolat /etc/iolat /etc/systemd/system/multi-user.target.wants/iolat.service \
	/var/lib/systemd/deb-systemd-helper-enabled/iolat.service.dsh-also /var/lib/systemd/deb-systemd-helper-enabled/multi-user.target.wants/iolat.service; do
	{ [ -e "$f" ] || [ -L "$f" ]; } && left="$left $f"
done
echo "FILES=$(wc -l </run/t/files)"; echo "LEFT=${left# }"
echo "KNOWN=$(dpkg-query -W -f="\${Status}" iolat 2>/dev/null)"
echo "PROGS=$(iolat_progs)"; echo "LINKS=$(trace_links)"
echo "PROCS=$(pgrep -u iolat 2>/dev/null | paste -sd" ")"
echo "OWNED=$(find /etc /var /run /tmp /sys/fs/bpf /root /srv /opt /home -xdev -user iolat 2>/dev/null | head -n 5 | paste -sd" ")"
echo "USER=$(getent passwd iolat)"'
[ -z "$(val PURGE_RC)" ] || soft "step 7: apt-get purge iolat failed (above)"
echo "step 7: dpkg -L listed $(val FILES) paths"
check_eq "step 7" "paths of the package (and pins, /run/iolat, links) left after purge" "" "$(val LEFT)"
check_eq "step 7" "dpkg's knowledge of iolat after purge" "" "$(val KNOWN)"
check_eq "step 7" "iolat programs after purge" 0 "$(val PROGS)"
check_eq "step 7" "tracing links after purge" 0 "$(val LINKS)"
check_eq "step 7" "processes of user iolat after purge" "" "$(val PROCS)"
check_eq "step 7" "files owned by user iolat after purge" "" "$(val OWNED)"
echo "step 7: the account after purge (kept, Debian's policy): $(val USER)"
phase_done "7. disable --now, purge"

sg_poweroff 60

echo "times: ${TIMES[*]}; whole test $((SECONDS - T_START)) s"
if [ ${#FAILED[@]} -gt 0 ]; then
	sg_keep_console
	printf 'FAILED: %s\n' "${FAILED[@]}" >&2
	fail "${#FAILED[@]} check(s) failed"
fi
echo "ok: the unit and the package under systemd $(grep -m1 -o 'systemd [0-9]*' "$SG_CONSOLE" || true)"
