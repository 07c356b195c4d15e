# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The VM that holds a disk open, by name: iolat_block_device_holder_info
# for fake qemus (processes started as qemu-system-x86_64 with -name, as
# libvirt and by hand name them) that hold loop devices by descriptor, and
# `iolat check`'s list of VMs; a loop device's serial, wwid and namespace in
# iolat_block_device_info ("": it has none) and no iolat_block_volume_info
# (it is no dm or md volume). The holders
# need CAP_SYS_PTRACE: serve keeps it only when it is ambient, and without
# it sees none. dm, LVM, md and NVMe names (and a partition held for its
# disk) need what this host's kernel lacks: test_stacked.sh checks them in
# its guests.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh

tag=iolatdn$$
make_loop 16
held=${LOOP#/dev/}
make_loop 16
plain=${LOOP#/dev/}

# Fake VMs: one named as libvirt names them (guest=, a comma in the name
# written ",,"); one with a plain -name, holding the
# loop device; a process that is not qemu holds the loop too and names
# nothing.
hold() { # ARGV0 DEVICE ARGS...: a process that holds DEVICE open on fd 3
	local a0=$1 dev=$2
	shift 2
	(exec -a "$a0" /usr/bin/python3 -c 'import time; time.sleep(600)' "$@" 3<"$dev") &
	HELD=$!
	on_exit "kill $HELD"
}
hold qemu-system-x86_64 "/dev/$held" -machine q35 -name "guest=$tag-vm,,7,debug-threads=on" -m 64
hold /usr/bin/qemu-system-x86_64 "/dev/$plain" -name "$tag-plain"
plain_vm=$HELD
hold python3 "/dev/$plain" -name "$tag-notqemu"
sleep 0.3

port=$(free_port)
url=http://127.0.0.1:$port/metrics
info_of() { # FILE DEVICE: DEVICE's info series, without model and rotational
	grep "^iolat_block_device_info{device=\"$2\"," "$1" | sed 's/model="[^"]*",rotational="[01]",//'
}
# As root without an ambient CAP_SYS_PTRACE, serve drops it: qemu's
# descriptors are root's, who has more capabilities than serve keeps, so
# none are read, silently.
start_serve "$WORK/log1" --web.listen-address="127.0.0.1:$port" --maintenance.interval=100ms
after_pass "$url"
curl -sf "$url" >"$WORK/m1" || fail "scrape"
assert_eq "loop info" \
	"iolat_block_device_info{device=\"$plain\",serial=\"\",wwid=\"\",nvme_nsid=\"\"} 1" \
	"$(info_of "$WORK/m1" "$plain")"
assert_eq "loop: no volume" "" "$(grep "^iolat_block_volume_info{device=\"$plain\"," "$WORK/m1")"
assert_eq "holders without CAP_SYS_PTRACE" "" "$(grep "^iolat_block_device_holder_info{.*$tag" "$WORK/m1")"
stop_serve "without CAP_SYS_PTRACE"
echo "ok: a loop device's names all empty; no holders seen without CAP_SYS_PTRACE"

WRAP="setpriv --inh-caps=+sys_ptrace --ambient-caps=+sys_ptrace" \
	start_serve "$WORK/log2" --web.listen-address="127.0.0.1:$port" --maintenance.interval=100ms
assert_eq "CAP_SYS_PTRACE kept" 1 \
	"$(python3 -c 'import sys; print((int(sys.argv[1], 16) >> 19) & 1)' \
		"$(awk '/^CapEff:/ { print $2 }' "/proc/$SERVE_PID/status")")"
after_pass "$url"
curl -sf "$url" >"$WORK/m2" || fail "scrape"
assert_eq "holders" \
	"$(printf 'iolat_block_device_holder_info{device="%s",vm="%s"} 1\n' \
		"$held" "$tag-vm,7" "$plain" "$tag-plain" | sort)" \
	"$(grep "^iolat_block_device_holder_info{.*$tag" "$WORK/m2" | sort)"
# A VM that ends leaves the series within a scan (every 10 s).
kill "$plain_vm"
for _ in $(seq 1 150); do
	curl -sf "$url" >"$WORK/m3" || fail "scrape"
	grep -q "vm=\"$tag-plain\"" "$WORK/m3" || break
	sleep 0.1
done
assert_eq "holders after the VM ended" \
	"iolat_block_device_holder_info{device=\"$held\",vm=\"$tag-vm,7\"} 1" \
	"$(grep "^iolat_block_device_holder_info{.*$tag" "$WORK/m3")"
stop_serve "with CAP_SYS_PTRACE"
echo "ok: the VMs holding disks open, and one that ended gone within a scan"

# check's list of VMs: each holder once.
"$IOLAT" check >"$WORK/check" 2>&1 || true
assert_eq "check: VMs" " $tag-vm,7 $held" \
	"$(grep -E "^  $tag" "$WORK/check" | sed -E 's/ +/ /g; s/ \(pid [0-9]+\)$//')"
echo "ok: check lists the VM holding $held"
