# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# guest.sh - small qemu/TCG guests for iolat's integration tests (sourced
# after tests/integration/lib.sh, not run).
#
# A guest is a Debian 6.1 kernel (downloaded, never installed) and a busybox
# initramfs that loads virtio-blk, runs a test's shell commands against
# /dev/vda, prints the guest's own /sys/block/vda/stat and powers off. Its
# disk is a host block device opened with O_DIRECT and Linux AIO, so every
# guest request becomes direct I/O from qemu's threads, in qemu's cgroup:
# what iolat sees as the VM's I/O.
#
# In the guest's commands, `mark NAME` prints the disk's counters and waits
# for the host (vm_wait_mark, then vm_resume), so a test can scrape iolat at
# exactly that point. The guest's own counters between two marks are then
# what the host must have seen between the two scrapes.
#
# The kernel and its virtio modules are cached in $OUT/vm/ (downloaded once);
# the initramfs there is rebuilt when this file or the dio helper changes.
# TCG only: qemu 7.2 with KVM fails on the machines we run on (MACHINE.md).

VM_SRC=$(realpath "${BASH_SOURCE[0]}")
# vm_series SERIES: the Debian kernel the guests started after this boot:
# 5.10 (bullseye), 6.1 (bookworm) or 6.12 (bookworm-backports, trixie),
# each cached in its own directory. Call vm_prepare after it.
vm_series() {
	VM_SERIES=$1
	VM_DIR=$(realpath -m "${OUT:-build}")/vm/$VM_SERIES
	VM_KERNEL=$VM_DIR/vmlinuz
	VM_INITRD=$VM_DIR/initramfs.gz
}
vm_series "${VM_SERIES:-6.1}"
VM_APT_DIR=$(realpath -m "${OUT:-build}")/vm/apt
# Modules the guests get (with what each needs): the virtio disks they
# boot from, the drivers and layers the stacked-device tests build, and
# virtio_net for a guest given a NIC (vm_add_net).
# A guest loads the first two at boot and the rest with `load NAME [ARGS]`.
VM_MODULES=(virtio_pci virtio_blk virtio_scsi sd_mod nvme dm-mod dm-crypt md-mod raid1
	scsi_debug null_blk xts ecb aes_generic virtio_net)
declare -gA VM_PIDS=() VM_CTLS=()
# Extra files for the guests started after this: host path, guest path, ...
# (vm_add_file, vm_add_program).
VM_FILES=()
# Extra qemu arguments, for the disks beyond vda (vm_add_disk) and NICs
# (vm_add_net).
VM_DEVICES=()
VM_NDISKS=0 VM_NNICS=0
# How many guests a test of several runs at once (GUEST_JOBS; the host's
# CPUs by default, 1 for one after another): a TCG guest keeps one host CPU
# busy (one vCPU) and little else, so on 2 CPUs two guests take the time of
# one. A test of several kernels starts each one after vm_slot.
VM_JOBS=${GUEST_JOBS:-$(nproc)}

# vm_apt COMMAND ARGS...: apt-get or apt-cache (COMMAND) over Debian's
# archive for every series, through a source list and package index of our
# own in $OUT/vm/apt: the machine's apt configuration is left as it is.
vm_apt() {
	local d=$VM_APT_DIR
	if ! [ -s "$d/extra.sources" ]; then
		mkdir -p "$d/lists/partial" || return 1
		cat >"$d/extra.sources" <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bullseye bookworm bookworm-updates bookworm-backports trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bullseye-security bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	fi
	"$1" -o Dir::Etc::sourcelist="$d/extra.sources" -o Dir::Etc::sourceparts=- \
		-o Dir::State::Lists="$d/lists" "${@:2}"
}

# The package name pattern of VM_SERIES's generic amd64 kernel.
vm_package_pattern() {
	case $VM_SERIES in
	5.10) echo '^linux-image-5\.10\.0-[0-9]+-amd64-unsigned$' ;;
	6.1) echo '^linux-image-6\.1\.0-[0-9]+-amd64-unsigned$' ;;
	6.12) echo '^linux-image-6\.12\.[0-9]+\+deb1[23]-amd64-unsigned$' ;;
	*) return 1 ;;
	esac
}

# The newest kernel package of VM_SERIES that apt can download, or nothing.
vm_kernel_package() {
	local pattern
	pattern=$(vm_package_pattern) || return 1
	vm_apt apt-cache search --names-only "$pattern" 2>/dev/null | awk '{ print $1 }' |
		sort -V | while read -r p; do
			vm_apt apt-cache policy "$p" | grep -q 'Candidate: [0-9]' && echo "$p"
		done | tail -n1
}

# vm_module_file PKGDIR NAME: the module's file in the package (names mix
# - and _), or nothing.
vm_module_file() {
	local alt=${2//-/_}
	[ "$alt" = "$2" ] && alt=${2//_/-}
	# /usr/lib/modules since trixie's merged /usr.
	find "$1/lib/modules" "$1/usr/lib/modules" \( -name "$2.ko*" -o -name "$alt.ko*" \) \
		2>/dev/null | head -n1
}

# vm_unpack_module FILE OUT: a module, decompressed (busybox insmod takes
# plain .ko only; Debian 6.1 ships them plain, later ones not).
vm_unpack_module() {
	case $1 in
	*.xz) xz -dc "$1" >"$2" ;;
	*.zst) zstd -qdc "$1" >"$2" ;;
	*.gz) gzip -dc "$1" >"$2" ;;
	*) cp "$1" "$2" ;;
	esac
}

# vm_copy_module PKGDIR DEST NAME: NAME and the modules it depends on (its
# .modinfo "depends=") into DEST, and DEST/NAME.deps: those, in an order
# insmod can follow. Built-in modules have no file and need nothing.
vm_copy_module() {
	local f dep deps=() more=() all=()
	[ -e "$2/$3.deps" ] && return 0
	f=$(vm_module_file "$1" "$3")
	if [ -z "$f" ]; then
		cat "$1"/lib/modules/*/modules.builtin "$1"/usr/lib/modules/*/modules.builtin 2>/dev/null |
			grep -Eq "/${3//[-_]/[-_]}\.ko" || return 1
		: >"$2/$3.deps"
		return 0
	fi
	vm_unpack_module "$f" "$2/$3.ko" || return 1
	IFS=, read -ra deps < <(objcopy -O binary --only-section=.modinfo "$2/$3.ko" /dev/stdout |
		tr '\0' '\n' | sed -n 's/^depends=//p')
	for dep in "${deps[@]}"; do
		vm_copy_module "$1" "$2" "$dep" || return 1
		read -ra more <"$2/$dep.deps"
		all+=("${more[@]}" "$dep")
	done
	# Each once, first mention first.
	printf '%s\n' "${all[@]}" | awk 'NF && !seen[$0]++' | tr '\n' ' ' >"$2/$3.deps"
}

# vm_copy_modules PKGDIR DEST: every module of VM_MODULES, with its needs.
vm_copy_modules() {
	local m
	mkdir -p "$2" || return 1
	for m in "${VM_MODULES[@]}"; do
		vm_copy_module "$1" "$2" "$m" || { echo "no module $m in the kernel package" >&2; return 1; }
	done
}

# vm_fetch_kernel: the newest kernel package's vmlinuz and modules into
# $VM_DIR; 1 if apt cannot get it (no package index, no archive).
vm_fetch_kernel() {
	local pkg tmp
	pkg=$(vm_kernel_package)
	# A fresh machine has not fetched our package index yet.
	if [ -z "$pkg" ] && [ "$(id -u)" -eq 0 ]; then
		vm_apt apt-get update -qq >/dev/null 2>&1
		pkg=$(vm_kernel_package)
	fi
	[ -n "$pkg" ] || return 1
	tmp=$(mktemp -d "$VM_DIR/fetch.XXXXXX")
	# Everything is built in $tmp and moved into place last, so that an
	# interrupted run leaves no half-made cache behind.
	if (cd "$tmp" && vm_apt apt-get download -qq "$pkg" >/dev/null 2>&1) &&
		dpkg -x "$tmp"/"$pkg"_*.deb "$tmp/pkg" &&
		vm_copy_modules "$tmp/pkg" "$tmp/modules" &&
		cp "$tmp"/pkg/boot/vmlinuz-* "$tmp/vmlinuz"; then
		rm -rf "$VM_DIR/modules" && mv "$tmp/modules" "$VM_DIR/modules" &&
			echo "$pkg" >"$VM_DIR/package" && mv "$tmp/vmlinuz" "$VM_KERNEL"
	fi
	rm -rf "$tmp"
	[ -s "$VM_KERNEL" ]
}

# The guest's /init. The kernel's console is the first serial port: its
# output, markers included, lands in the test's log file. The second serial
# port carries the host's go-aheads to `mark`; it is opened once, before any
# marker is printed, because opening it later would reset the UART and
# could drop a go-ahead already sent.
vm_write_init() {
	cat >"$1" <<EOF
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
load virtio_pci && load virtio_blk || echo "IOLAT-ERROR: cannot load the virtio modules"
i=0
while [ ! -b /dev/vda ] && [ \$i -lt 100 ]; do sleep 0.1; i=\$((i + 1)); done
stty -F /dev/ttyS1 -echo
exec 3</dev/ttyS1
# What the kernel read while probing the disk, before the test's commands.
echo "IOLAT-BOOT-STAT: \$(cat /sys/block/vda/stat)"
sh -e /guest.sh
echo "IOLAT-RC: \$?"
echo "IOLAT-STAT: \$(cat /sys/block/vda/stat)"
echo IOLAT-DONE
poweroff -f
EOF
	chmod 755 "$1"
}

# The guest's `mark NAME`: says NAME was reached, with the disk's counters
# at that point, then waits for the host's go-ahead on fd 3 (ttyS1).
vm_write_mark() {
	cat >"$1" <<'EOF'
#!/bin/sh
echo "IOLAT-MARK: $1 $(cat /sys/block/vda/stat)"
read -r _ <&3
EOF
	chmod 755 "$1"
}

# The guest's `load NAME [ARGS...]`: insmods what NAME needs (not loaded
# yet), then NAME with ARGS (module parameters); nothing for a built-in.
vm_write_load() {
	cat >"$1" <<'EOF'
#!/bin/sh
name=$1
shift
[ -e "/lib/modules/$name.deps" ] || { echo "load: no module $name" >&2; exit 1; }
loaded() { [ -d "/sys/module/$(echo "$1" | tr - _)" ]; }
for dep in $(cat "/lib/modules/$name.deps"); do
	[ -e "/lib/modules/$dep.ko" ] && ! loaded "$dep" && { insmod "/lib/modules/$dep.ko" || exit 1; }
done
[ -e "/lib/modules/$name.ko" ] || exit 0
loaded "$name" || insmod "/lib/modules/$name.ko" "$@"
EOF
	chmod 755 "$1"
}

# The guest's `hammer N COUNT`: N readers of /dev/vda at once, COUNT direct
# 4 KiB reads each, in their own 2 MiB of the disk, so that no two readers'
# requests are ever adjacent (the host would merge them: blk-throttle counts
# bios, iolat requests). It waits for every reader and fails if one did.
vm_write_hammer() {
	cat >"$1" <<'EOF'
#!/bin/sh
pids=
i=0
while [ $i -lt $1 ]; do
	dd if=/dev/vda of=/dev/null bs=4096 count=$2 skip=$((i * 512)) iflag=direct 2>/dev/null &
	pids="$pids $!"
	i=$((i + 1))
done
rc=0
for p in $pids; do wait $p || rc=1; done
exit $rc
EOF
	chmod 755 "$1"
}

# vm_build_initramfs OUTFILE: busybox, a static dio helper, the modules,
# /init and mark, as a gzipped newc cpio.
vm_build_initramfs() {
	local root a rc=0
	root=$(mktemp -d "$VM_DIR/root.XXXXXX")
	{ mkdir -p "$root"/{bin,dev,proc,sys,lib} && cp /bin/busybox "$root/bin/busybox" &&
		cp -r "$VM_DIR/modules" "$root/lib/modules" &&
		gcc -O2 -static tests/helpers/dio.c -o "$root/bin/dio"; } || { rm -rf "$root"; return 1; }
	for a in sh mount insmod sleep cat echo poweroff dd stty tr; do ln -s busybox "$root/bin/$a"; done
	vm_write_init "$root/init"
	vm_write_mark "$root/bin/mark"
	vm_write_load "$root/bin/load"
	vm_write_hammer "$root/bin/hammer"
	(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$1.tmp" && mv "$1.tmp" "$1" || rc=1
	rm -rf "$root"
	return $rc
}

# vm_cache_lock: holds $OUT/vm/'s lock until the shell exits or
# vm_cache_unlock. The cache is filled by one process at a time: a test
# and tests/vm/prefetch.sh (run.sh starts it beside the first tests) would
# otherwise fetch the same kernel twice, replace a module tree another is
# reading, or run apt-get update on the same index at once (apt's own lock
# makes the second fail, and the test skip).
vm_cache_lock() {
	mkdir -p "${VM_APT_DIR%/apt}" || fail "cannot make ${VM_APT_DIR%/apt}"
	exec {VM_LOCK_FD}>"${VM_APT_DIR%/apt}/cache.lock" || fail "cannot open the guest cache's lock"
	flock "$VM_LOCK_FD" || fail "cannot lock the guest cache"
}
vm_cache_unlock() {
	exec {VM_LOCK_FD}>&-
}

# vm_prepare: VM_KERNEL and VM_INITRD, made once into $OUT/vm/. Skips the
# test (exit 77) when a part cannot be had here: qemu, busybox, the kernel.
vm_prepare() {
	command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 (package qemu-system-x86) is not installed"
	/bin/busybox --list 2>/dev/null | grep -qx insmod ||
		skip "a static busybox (package busybox-static) is not installed"
	command -v cpio >/dev/null || skip "cpio is not installed"
	vm_cache_lock
	mkdir -p "$VM_DIR" || fail "cannot make $VM_DIR"
	# A cache made before a module joined VM_MODULES is made again.
	for m in "${VM_MODULES[@]}"; do
		[ -e "$VM_DIR/modules/$m.deps" ] || rm -f "$VM_KERNEL"
	done
	if ! [ -s "$VM_KERNEL" ]; then
		vm_fetch_kernel || skip "apt cannot download a Debian $VM_SERIES kernel ($(vm_package_pattern))"
		echo "guest kernel: $(cat "$VM_DIR/package") (cached in $VM_DIR)"
	fi
	if ! [ "$VM_INITRD" -nt "$VM_SRC" ] || ! [ "$VM_INITRD" -nt tests/helpers/dio.c ]; then
		vm_build_initramfs "$VM_INITRD" || fail "cannot build the guest initramfs"
	fi
	vm_cache_unlock
}

# vm_rmdir DIR: removes a cgroup, retrying for up to 5 s: a parent stays
# busy until the kernel has finished taking its removed child offline,
# which it does asynchronously.
vm_rmdir() {
	for _ in $(seq 1 50); do
		rmdir "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "cannot remove cgroup $1" >&2
}

# vm_cgroup N NAME: makes the cgroup libvirt and systemd give VM number N
# called NAME, machine.slice/machine-qemu\x2dN\x2dNAME.scope, in VM_CG;
# removed at exit, as is machine.slice unless the host had one.
vm_cgroup() {
	local slice
	slice=$(cgroup_root)/machine.slice
	if mkdir "$slice" 2>/dev/null; then
		on_exit "vm_rmdir $slice"
	else
		[ -d "$slice" ] || fail "cannot make $slice"
	fi
	VM_CG="$slice/machine-qemu\\x2d$1\\x2d$2.scope"
	mkdir "$VM_CG" || fail "cannot make cgroup $VM_CG"
	on_exit "vm_rmdir $(printf %q "$VM_CG")"
}

# vm_add_file SRC DEST: host file SRC is at DEST (an absolute path) in the
# guests started after this.
vm_add_file() {
	[ -f "$1" ] || fail "no file $1 for the guest"
	case $2 in /*) ;; *) fail "guest path $2 is not absolute" ;; esac
	VM_FILES+=("$1" "$2")
}

# vm_add_program BIN DEST: executable BIN at DEST in the guests started after
# this and, if it is dynamically linked, the loader and shared libraries it
# needs here (ldd), at the same paths, so that a host build runs on the
# guest's busybox as it is.
vm_add_program() {
	local lib
	vm_add_file "$1" "$2"
	for lib in $(ldd "$1" 2>/dev/null | grep -o '/[^ ]*' | sort -u); do
		vm_add_file "$(realpath "$lib")" "$lib"
	done
}

# vm_add_disk KIND HOSTDEV: one more disk, over host block device HOSTDEV
# (direct I/O from qemu, as for vda), for the guests started after this:
# KIND virtio (the guest's vdb, vdc, ...), nvme (nvme0n1, nvme1n1, ...) or
# scsi (sda, sdb, ... behind one virtio-scsi controller).
vm_add_disk() {
	local id=d$VM_NDISKS
	VM_NDISKS=$((VM_NDISKS + 1))
	VM_DEVICES+=(-drive "file=$2,if=none,id=$id,format=raw,cache=none,aio=${VM_AIO:-native}")
	case $1 in
	virtio) VM_DEVICES+=(-device "virtio-blk-pci,drive=$id") ;;
	nvme) VM_DEVICES+=(-device "nvme,drive=$id,serial=iolat$VM_NDISKS") ;;
	scsi)
		[[ " ${VM_DEVICES[*]} " == *" virtio-scsi-pci,id=scsi0 "* ]] ||
			VM_DEVICES+=(-device "virtio-scsi-pci,id=scsi0")
		VM_DEVICES+=(-device "scsi-hd,drive=$id,bus=scsi0.0")
		;;
	*) fail "vm_add_disk: unknown kind $1" ;;
	esac
}

# vm_add_net HOSTPORT GUESTPORT: one more NIC (virtio-net, the guest's eth0,
# eth1, ...) on qemu's user-mode network, for the guests started after this:
# the guest is 10.0.2.15/24 on it (the guest's commands set that up: `load
# virtio_net`, `ip addr add ...`) and host 127.0.0.1:HOSTPORT reaches its
# GUESTPORT (TCP). Each guest needs its own HOSTPORT: a test with several
# guests sets VM_DEVICES=() and calls this again before starting each.
vm_add_net() {
	local id=n$VM_NNICS
	VM_NNICS=$((VM_NNICS + 1))
	VM_DEVICES+=(-netdev "user,id=$id,restrict=on,hostfwd=tcp:127.0.0.1:$1-:$2"
		-device "virtio-net-pci,netdev=$id,romfile=")
}

# vm_add_tools: dmsetup and mdadm (Debian 12's, with the libraries they
# need) in the guests started after this, at /sbin. Downloaded once into
# $OUT/vm/tools; skips the test if apt cannot get them.
vm_add_tools() {
	local d=${VM_APT_DIR%/apt}/tools b lib
	vm_cache_lock
	if ! [ -x "$d/root/sbin/mdadm" ]; then
		{ rm -rf "$d" && mkdir -p "$d/debs"; } || fail "cannot make $d"
		(cd "$d/debs" && vm_apt apt-get download -qq dmsetup/bookworm \
			libdevmapper1.02.1/bookworm mdadm/bookworm >/dev/null 2>&1) ||
			{ vm_apt apt-get update -qq >/dev/null 2>&1; (cd "$d/debs" &&
				vm_apt apt-get download -qq dmsetup/bookworm \
				libdevmapper1.02.1/bookworm mdadm/bookworm >/dev/null 2>&1); } ||
			skip "apt cannot download dmsetup and mdadm"
		for b in "$d"/debs/*.deb; do dpkg -x "$b" "$d/root" || fail "cannot unpack $b"; done
	fi
	vm_cache_unlock
	for b in dmsetup mdadm; do
		vm_add_file "$d/root/sbin/$b" "/sbin/$b"
		for lib in $(LD_LIBRARY_PATH=$d/root/lib/x86_64-linux-gnu ldd "$d/root/sbin/$b" |
			grep -o '/[^ ]*' | sort -u); do
			vm_add_file "$(realpath "$lib")" "${lib#"$d/root"}"
		done
	done
}

# vm_initrd_with SCRIPT OUT: the base initramfs followed by a second archive
# holding SCRIPT as /guest.sh and the VM_FILES (the kernel unpacks
# concatenated archives in turn, a later file replacing an earlier one), so
# any script of any length reaches the guest unchanged.
vm_initrd_with() {
	local d i
	d=$(mktemp -d "$WORK/guest.XXXXXX")
	cp "$1" "$d/guest.sh" || fail "no guest script $1"
	for ((i = 0; i < ${#VM_FILES[@]}; i += 2)); do
		{ mkdir -p "$d$(dirname "${VM_FILES[i + 1]}")" &&
			cp "${VM_FILES[i]}" "$d${VM_FILES[i + 1]}"; } || fail "cannot copy ${VM_FILES[i]} for the guest"
	done
	# find lists each directory before its contents, as the kernel needs.
	{ cat "$VM_INITRD" && (cd "$d" && find . -mindepth 1 | cpio -o -H newc --quiet | gzip -1); } >"$2"
	rm -rf "$d"
}

# vm_start NAME CGROUP_DIR DISK GUEST_SCRIPT LOGFILE: boots a guest whose
# qemu runs in CGROUP_DIR from its first instruction (it joins the cgroup,
# then execs qemu), so all its I/O on DISK is charged there. Sets VM_PID and
# VM_PIDS[NAME]; the guest is killed at exit if still running. VM_AIO:
# qemu's aio for vda, native (Linux AIO: io_submit) unless set (threads:
# qemu's default, a preadv or pwritev per request from its worker threads).
vm_start() {
	local name=$1 cg=$2 disk=$3 initrd=$WORK/initrd-$1.gz ctl=$WORK/ctl-$1
	vm_initrd_with "$4" "$initrd"
	# qemu's pipe backend: host -> guest in $ctl.in, guest -> host in $ctl.out.
	mkfifo "$ctl.in" "$ctl.out" || fail "mkfifo $ctl"
	VM_CTLS[$name]=$ctl
	: >"$5"
	# -nodefaults: no NIC, VGA or their option ROMs; a shorter TCG boot.
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" \
		qemu-system-x86_64 -accel tcg -name "guest=$name" -m "${VM_MEM:-512}" -smp 1 \
		-nodefaults -no-user-config -display none -no-reboot -monitor none \
		-serial "file:$5" -serial "pipe:$ctl" \
		-kernel "$VM_KERNEL" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 quiet" \
		-drive "file=$disk,if=virtio,format=raw,cache=none,aio=${VM_AIO:-native}" \
		"${VM_DEVICES[@]}" </dev/null >"$5.qemu" 2>&1 &
	VM_PID=$!
	VM_PIDS[$name]=$VM_PID
	on_exit "kill -KILL $VM_PID; wait $VM_PID"
}

# vm_slot: returns once fewer than VM_JOBS of this test's guests run.
vm_slot() {
	local n pid
	while :; do
		n=0
		for pid in "${VM_PIDS[@]}"; do
			kill -0 "$pid" 2>/dev/null && n=$((n + 1))
		done
		[ $n -lt "$VM_JOBS" ] && return 0
		sleep 0.2
	done
}

# vm_console_fail NAME LOGFILE WHY: fails the test with the console's tail.
vm_console_fail() {
	echo "--- $1 console (tail) ---" >&2
	tail -n 30 "$2" "$2.qemu" >&2
	fail "guest $1: $3"
}

# vm_wait_mark NAME LOGFILE MARK TIMEOUT: waits until the guest is held at
# `mark MARK`; fails if it is not within TIMEOUT seconds or qemu exited.
vm_wait_mark() {
	local end=$((SECONDS + $4))
	until grep -q "^IOLAT-MARK: $3 " "$2"; do
		kill -0 "${VM_PIDS[$1]}" 2>/dev/null || vm_console_fail "$1" "$2" "exited before mark $3"
		[ $SECONDS -lt $end ] || vm_console_fail "$1" "$2" "no mark $3 within $4 s"
		sleep 0.1
	done
}

# vm_resume NAME: lets a guest held at a mark go on. The fifo is opened
# read-write, which never blocks, even if qemu is gone.
vm_resume() {
	echo go 1<>"${VM_CTLS[$1]}.in"
}

# vm_wait NAME LOGFILE TIMEOUT: waits until the guest said IOLAT-DONE and
# its qemu exited; fails with the console's tail if it does not within
# TIMEOUT seconds, or if the guest's commands failed.
vm_wait() {
	local pid=${VM_PIDS[$1]} end=$((SECONDS + $3))
	while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.1; done
	if kill -0 "$pid" 2>/dev/null || ! grep -q '^IOLAT-DONE' "$2"; then
		vm_console_fail "$1" "$2" "did not finish within $3 s"
	fi
	wait "$pid" 2>/dev/null
	grep -q '^IOLAT-RC: 0' "$2" || vm_console_fail "$1" "$2" "its commands failed"
}

# vm_stat LOGFILE WHICH FIELD: one field (1-based, as in the kernel's
# Documentation/block/stat.rst) of the guest's /sys/block/vda/stat at mark
# WHICH, or at the end (WHICH = END) or after boot (WHICH = BOOT).
vm_stat() {
	local line
	case $2 in
	END) line=$(sed -n 's/^IOLAT-STAT: //p' "$1") ;;
	BOOT) line=$(sed -n 's/^IOLAT-BOOT-STAT: //p' "$1") ;;
	*) line=$(sed -n "s/^IOLAT-MARK: $2 //p" "$1") ;;
	esac
	echo "$line" | tr -d '\r' | awk -v f="$3" '{ print $f }'
}

# The helpers below act on all of a test's guests, described by its arrays:
# VMS (names), VMCG (each one's cgroup), DEV (its host disk) and LOG (its
# console log), with each guest's script in $WORK/NAME.sh.

# vms_at_mark MARK TIMEOUT: waits until every guest is held at MARK.
vms_at_mark() {
	local vm
	for vm in "${VMS[@]}"; do vm_wait_mark "$vm" "${LOG[$vm]}" "$1" "$2"; done
}

# vms_resume: lets every guest go on to its next mark.
vms_resume() {
	local vm
	for vm in "${VMS[@]}"; do vm_resume "$vm"; done
}

# vms_boot TIMEOUT: boots every guest and waits until all are held at their
# first mark, "start".
vms_boot() {
	local vm t0=$SECONDS
	for vm in "${VMS[@]}"; do
		# shellcheck disable=SC2153 # VMCG is the test's (see above), not VM_CG
		vm_start "$vm" "${VMCG[$vm]}" "/dev/${DEV[$vm]}" "$WORK/$vm.sh" "${LOG[$vm]}"
	done
	vms_at_mark start "$1"
	echo "guests booted in $((SECONDS - t0)) s"
}
