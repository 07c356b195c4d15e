# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# systemd_guest.sh - a Debian 12 guest with systemd as PID 1, for tests of
# the unit and the package under a real systemd (sourced after
# tests/integration/lib.sh and tests/vm/guest.sh, not run).
#
# The guest's root file system is built once with mmdebstrap from Debian's
# archive (bookworm: systemd, Debian's own 6.1 kernel with its initramfs,
# curl, bpftool and the .deb's dependencies, so that the package installs
# with no network) and cached as the guest kernels are, in
# $OUT/vm/systemd-guest/: rootfs.img (ext4), vmlinuz, initrd.img, key (the
# recipe it was made from) and installed (its dpkg list). Another recipe,
# or a .deb depending on a package the image lacks, makes it again. It is
# built in a directory beside it and moved into place last: an interrupted
# build leaves no half-made cache. tests/vm/prefetch.sh builds it while the
# host-only tests run, for the dependencies $OUT/iolat's libraries give
# (what the package's build will give), under a lock the test waits on.
#
# Each boot uses the image read-only (qemu -snapshot: the guest's writes go
# to a temporary file), so every run starts from the same system. The host
# drives the guest through an agent, a unit of the image that reads
# commands from a virtio-serial port (org.iolat.ctl) and answers on it, one
# line each way:
#   host -> guest  ID BASE64(SCRIPT)
#   guest -> host  OUT ID BASE64(OUTPUT) then END ID EXIT-STATUS
# The script runs as root under bash, stdout and stderr together, stdin
# /dev/null. The kernel's console (ttyS0) is kept in $SG_CONSOLE.

SG_DIR=$(realpath -m "${OUT:-build}")/vm/systemd-guest
SG_SUITE=bookworm
SG_MIRROR=http://deb.debian.org/debian
# What the tests use in the guest, beyond the package's own dependencies.
SG_BASE_PACKAGES=(systemd-sysv udev kmod linux-image-amd64 curl ca-certificates bpftool
	procps e2fsprogs)

# The agent, installed in the image as /usr/local/sbin/guest-agent.
# shellcheck disable=SC2016 # the guest's script, expanded there
SG_AGENT='#!/bin/bash
# Runs the commands the host sends on the virtio-serial port org.iolat.ctl.
port=
for _ in $(seq 600); do
	for p in /sys/class/virtio-ports/*; do
		[ "$(cat "$p/name" 2>/dev/null)" = org.iolat.ctl ] && port=/dev/${p##*/}
	done
	[ -n "$port" ] && [ -c "$port" ] && break
	sleep 0.1
done
[ -c "$port" ] || { echo "guest-agent: no port org.iolat.ctl" >&2; exit 1; }
exec 3<>"$port"
mkdir -p /run/agent
echo AGENT-READY >&3
while IFS=" " read -r id b64 <&3; do
	[ -n "$b64" ] || continue
	echo "$b64" | base64 -d >/run/agent/cmd
	bash /run/agent/cmd </dev/null >/run/agent/out 2>&1 3>&-
	rc=$?
	printf "OUT %s %s\nEND %s %s\n" "$id" "$(base64 -w0 </run/agent/out)" "$id" "$rc" >&3
done'

SG_AGENT_UNIT='[Unit]
Description=iolat test agent (commands from the host on virtio-serial)
[Service]
ExecStart=/usr/local/sbin/guest-agent
Restart=always
[Install]
WantedBy=multi-user.target'

# sg_first_alternatives: a Depends field on stdin, the first alternative of
# each dependency out, one a line, without versions.
sg_first_alternatives() {
	tr ',' '\n' | sed 's/|.*//; s/(.*//; s/^[ \t]*//; s/[ \t]*$//' | grep .
}

# sg_deb_depends DEB: what DEB depends on (first alternatives), one a line.
sg_deb_depends() {
	dpkg-deb -f "$1" Depends | sg_first_alternatives
}

# sg_binary_depends BIN: the libraries' packages a package of BIN would
# depend on (dpkg-shlibdeps, as the package's build runs it; in the tree's
# top directory, where it finds debian/control), one a line. The package
# adds systemd (its sysusers), which the base list has already. Lets
# tests/vm/prefetch.sh build the image before any package exists.
sg_binary_depends() {
	dpkg-shlibdeps -O -e"$1" 2>/dev/null | sed -n 's/^shlibs:Depends=//p' | sg_first_alternatives
}

# sg_packages PACKAGE...: the image's packages, one a line, sorted: the
# base list and PACKAGEs.
sg_packages() {
	printf '%s\n' "${SG_BASE_PACKAGES[@]}" "$@" | grep . | sort -u
}

# sg_key: the image's recipe: base list, build and agent. An image of
# another recipe is made again; the packages a .deb needs beyond the base
# are checked against the image's own dpkg list (sg_lacks).
sg_key() {
	{
		sg_packages
		declare -f sg_build_rootfs
		echo "$SG_AGENT$SG_AGENT_UNIT"
	} | sha256sum | cut -d' ' -f1
}

# sg_lacks PACKAGE...: those of PACKAGEs the cached image has not
# installed ($SG_DIR/installed, its dpkg list), one a line.
sg_lacks() {
	printf '%s\n' "$@" | grep . | sort -u | comm -23 - <(sort -u "$SG_DIR/installed" 2>/dev/null)
}

# sg_build_rootfs DIR PACKAGE...: the image (the base list and PACKAGEs)
# and its kernel into DIR, and DIR/installed: the image's dpkg list.
sg_build_rootfs() {
	local d=$1 root=$1/root pkgs
	pkgs=$(sg_packages "${@:2}" | paste -sd,)
	# shellcheck disable=SC2016 # mmdebstrap's hooks expand $1 (the root)
	# The initramfs needs only the root disk's drivers: a small one boots
	# faster under TCG than the default (MODULES=most), and the hook
	# makes it again with these.
	mmdebstrap --mode=root --variant=minbase --include="$pkgs" \
		--customize-hook='echo MODULES=list >"$1/etc/initramfs-tools/conf.d/iolat-guest"' \
		--customize-hook='printf "%s\n" virtio_pci virtio_blk ext4 >"$1/etc/initramfs-tools/modules"' \
		--customize-hook='chroot "$1" update-initramfs -u -k all' \
		"$SG_SUITE" "$root" \
		"deb $SG_MIRROR $SG_SUITE main" "deb $SG_MIRROR $SG_SUITE-updates main" \
		"deb ${SG_MIRROR}-security $SG_SUITE-security main" >"$d/mmdebstrap.log" 2>&1 || return 1
	printf '%s\n' '/dev/vda / ext4 rw,noatime 0 0' >"$root/etc/fstab"
	echo iolat-guest >"$root/etc/hostname"
	printf '%s\n' "$SG_AGENT" >"$root/usr/local/sbin/guest-agent"
	chmod 755 "$root/usr/local/sbin/guest-agent"
	printf '%s\n' "$SG_AGENT_UNIT" >"$root/etc/systemd/system/guest-agent.service"
	ln -s /etc/systemd/system/guest-agent.service \
		"$root/etc/systemd/system/multi-user.target.wants/guest-agent.service"
	# Nothing that would run apt or use the disks behind the test's back,
	# and no getty on a screen the guest does not have.
	local u
	for u in apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer \
		fstrim.timer e2scrub_reap.service getty@tty1.service systemd-pstore.service; do
		ln -sf /dev/null "$root/etc/systemd/system/$u"
	done
	cp "$root"/boot/vmlinuz-* "$d/vmlinuz" && cp "$root"/boot/initrd.img-* "$d/initrd.img" || return 1
	# shellcheck disable=SC2016 # dpkg-query's field, not the shell's
	chroot "$root" dpkg-query -W -f='${Package}\n' >"$d/installed" || return 1
	# The kernel and initramfs stay in the image too: the package's
	# purge check lists files, not sizes.
	mkfs.ext4 -q -F -L root -d "$root" "$d/rootfs.img" 2G >>"$d/mmdebstrap.log" 2>&1 || return 1
	rm -rf "$root"
}

# sg_prepare DEB: the cached image, made if missing, made from another
# recipe, or lacking one of DEB's dependencies. Skips (exit 77) when a
# tool is missing or the archive cannot be reached.
sg_prepare() {
	local deps
	deps=$(sg_deb_depends "$1") || fail "cannot read the Depends of $1"
	# shellcheck disable=SC2086 # one package a word
	sg_prepare_for $deps
}

# sg_lock: holds the image's lock ($SG_DIR.lock) until the shell exits: a
# test waits for the image tests/vm/prefetch.sh is building, instead of
# building a second one beside it.
sg_lock() {
	mkdir -p "${SG_DIR%/*}" || fail "cannot make ${SG_DIR%/*}"
	exec {SG_LOCK_FD}>"$SG_DIR.lock" || fail "cannot open $SG_DIR.lock"
	if ! flock -n "$SG_LOCK_FD"; then
		echo "waiting for the guest image another process builds (tests/vm/prefetch.sh)"
		flock "$SG_LOCK_FD" || fail "cannot lock $SG_DIR.lock"
	fi
}

# sg_prepare_for PACKAGE...: the cached image with PACKAGEs installed
# (sg_prepare's, and tests/vm/prefetch.sh's before the package is built).
sg_prepare_for() {
	local key tmp lacks t0=$SECONDS
	command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 (package qemu-system-x86) is not installed"
	command -v mmdebstrap >/dev/null || skip "mmdebstrap (package mmdebstrap) is not installed"
	command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 (package e2fsprogs) is not installed"
	sg_lock
	key=$(sg_key)
	if [ "$(cat "$SG_DIR/key" 2>/dev/null)" = "$key" ] && [ -s "$SG_DIR/rootfs.img" ]; then
		lacks=$(sg_lacks "$@")
		[ -z "$lacks" ] && return 0
		echo "the cached guest image lacks $(echo "$lacks" | paste -sd' '): built again"
	fi
	tmp=$(mktemp -d "$SG_DIR.build.XXXXXX") || fail "cannot make a directory beside $SG_DIR"
	# Not into a file system mmdebstrap may have left mounted there, if
	# stopped while it builds (run.sh stops tests/vm/prefetch.sh at its end).
	on_exit "rm -rf --one-file-system $tmp"
	echo "building the guest's root file system with mmdebstrap (once; cached in $SG_DIR)"
	if ! sg_build_rootfs "$tmp" "$@"; then
		tail -n 20 "$tmp/mmdebstrap.log" >&2
		if grep -qiE 'could not resolve|failed to fetch|unable to connect|temporary failure' "$tmp/mmdebstrap.log"; then
			skip "mmdebstrap cannot reach Debian's archive ($SG_MIRROR)"
		fi
		fail "building the guest's root file system failed (log above)"
	fi
	echo "$key" >"$tmp/key"
	{ rm -rf "$SG_DIR" && mv "$tmp" "$SG_DIR"; } || fail "cannot move the guest image into $SG_DIR"
	echo "guest root file system built in $((SECONDS - t0)) s"
}

# Units the tests have no use for, masked at boot (systemd.mask=): each
# costs seconds under TCG. The console is a log, not a login.
SG_MASKS="systemd.mask=getty-static.service systemd.mask=serial-getty@ttyS0.service"
SG_MASKS+=" systemd.mask=systemd-user-sessions.service"

# sg_boot NAME TIMEOUT QEMU-ARGS...: boots the guest with extra qemu
# arguments (disks) and waits for its agent; the console goes to
# $SG_CONSOLE. Killed at exit if still running. The root disk is the first
# device on the command line, so the guest probes it first: vda, as its
# fstab says (disks given as -drive if=virtio would come after every
# -device). The test's disks are found by serial (/sys/block/*/serial).
sg_boot() {
	local name=$1 timeout=$2 end
	shift 2
	SG_CTL=$WORK/sg-ctl
	SG_CONSOLE=$WORK/sg-console.log
	mkfifo "$SG_CTL.in" "$SG_CTL.out" || fail "mkfifo $SG_CTL"
	: >"$SG_CONSOLE"
	qemu-system-x86_64 -accel tcg -name "guest=$name" -m "${SG_MEM:-1024}" -smp "${SG_CPUS:-2}" \
		-nodefaults -no-user-config -display none -no-reboot -monitor none \
		-serial "file:$SG_CONSOLE" \
		-kernel "$SG_DIR/vmlinuz" -initrd "$SG_DIR/initrd.img" \
		-append "root=/dev/vda rw console=ttyS0 panic=-1 loglevel=4 systemd.show_status=auto $SG_MASKS" \
		-drive "file=$SG_DIR/rootfs.img,if=none,id=root,format=raw,snapshot=on" \
		-device virtio-blk-pci,drive=root,serial=iolat-root \
		-device virtio-serial-pci -chardev "pipe,id=ctl,path=$SG_CTL" \
		-device virtserialport,chardev=ctl,name=org.iolat.ctl \
		"$@" </dev/null >"$SG_CONSOLE.qemu" 2>&1 &
	SG_PID=$!
	on_exit "kill -KILL $SG_PID; wait $SG_PID"
	# Both ends read-write: an open never blocks, and stays open across
	# commands.
	exec {SG_IN}<>"$SG_CTL.in" {SG_OUT}<>"$SG_CTL.out"
	SG_SEQ=0
	end=$((SECONDS + timeout))
	while :; do
		kill -0 "$SG_PID" 2>/dev/null || sg_console_fail "qemu exited while booting"
		[ $SECONDS -lt $end ] || sg_console_fail "no agent within $timeout s"
		sg_read 1 || continue
		[ "$SG_LINE" = AGENT-READY ] && return 0
	done
}

# sg_console_fail WHY: fails the test, the console's tail shown and the
# whole log kept (SG_KEEP_LOG).
sg_console_fail() {
	sg_keep_console
	echo "--- guest console (tail) ---" >&2
	tail -n 40 "$SG_CONSOLE" "$SG_CONSOLE.qemu" >&2
	fail "guest: $1"
}

# sg_keep_console: copies the console log where it outlives the test
# ($OUT/systemd-guest-console.log) and says so.
sg_keep_console() {
	local keep
	keep=$(realpath -m "${OUT:-build}")/systemd-guest-console.log
	[ -f "${SG_CONSOLE:-}" ] && cp "$SG_CONSOLE" "$keep" && echo "guest console log kept in $keep" >&2
	return 0
}

# sg_read TIMEOUT: the next line from the agent, in SG_LINE (carriage
# return dropped); 1 if none came within TIMEOUT seconds. A line that comes
# in pieces (long outputs) is put together: read -t keeps what it had read
# when it times out.
SG_PARTIAL=
sg_read() {
	local part
	if IFS= read -r -t "$1" part <&"$SG_OUT"; then
		SG_LINE=$SG_PARTIAL$part
		SG_LINE=${SG_LINE%$'\r'}
		SG_PARTIAL=
		return 0
	fi
	SG_PARTIAL=$SG_PARTIAL$part
	return 1
}

# sg_run TIMEOUT SCRIPT: runs SCRIPT (after SG_PRELUDE) in the guest; prints
# its output (stdout and stderr) and returns its exit status; fails the test
# if no answer comes within TIMEOUT seconds. Not in a subshell: it keeps
# count of the commands sent.
sg_run() {
	local timeout=$1 script=$2 id end out='' rc=
	SG_SEQ=$((SG_SEQ + 1))
	id=c$SG_SEQ
	printf '%s %s\n' "$id" "$(printf '%s\n' "${SG_PRELUDE:-}$script" | base64 -w0)" >&"$SG_IN"
	end=$((SECONDS + timeout))
	while [ -z "$rc" ]; do
		kill -0 "$SG_PID" 2>/dev/null || sg_console_fail "qemu exited during a command"
		[ $SECONDS -lt $end ] || sg_console_fail "no answer within $timeout s to: $script"
		sg_read 1 || continue
		case $SG_LINE in
		"OUT $id "*) out=${SG_LINE#"OUT $id "} ;;
		"END $id "*) rc=${SG_LINE#"END $id "} ;;
		esac
	done
	[ -n "$out" ] && printf '%s' "$out" | base64 -d
	return "$rc"
}

# sg_poweroff TIMEOUT: asks the guest to power off (no answer awaited: it
# may be gone before it could give one) and waits for qemu to exit; kills
# it after TIMEOUT seconds.
sg_poweroff() {
	local id=p$SG_SEQ end=$((SECONDS + $1))
	printf '%s %s\n' "$id" "$(printf '%s\n' 'systemctl poweroff --no-block' | base64 -w0)" >&"$SG_IN"
	while kill -0 "$SG_PID" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.2; done
	kill -KILL "$SG_PID" 2>/dev/null
	wait "$SG_PID" 2>/dev/null
	return 0
}
