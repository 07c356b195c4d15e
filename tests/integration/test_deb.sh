# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The Debian package, installed, upgraded and purged on this machine: `make
# deb` (or DEB=FILE, one built already), then `dpkg -i`; iolat from PATH says
# its version and `iolat check` passes; systemd-analyze verify passes on the
# installed unit (its man pages installed too); /etc/iolat/iolat.yml is a
# conffile; the installed examples load. The service with --handover, as
# systemd would run it (systemd need not be PID 1, and is not here): the
# unit's user iolat exists (postinst's systemd-sysusers), its ExecStartPre=+
# script as root, then its ExecStart= as iolat with only CAP_BPF and
# CAP_PERFMON, which pins the collector and serves the installed config. The
# maintainer scripts restart the service after an upgrade (postinst), never
# stop it before one (preinst, prerm), and on removal stop it, then unpin.
# An upgrade (dpkg -i of the same package with a higher version, repacked:
# the maintainer scripts are what is tested) while it runs, then the restart
# postinst would make: the new /usr/bin/iolat adopts the pins. Then `dpkg
# --purge` leaves nothing: no file the package listed (dpkg -L), not the
# conffile, not the unit's enablement links, nothing in /sys/fs/bpf/iolat or
# /run/iolat, no program attached. debian/control's Build-Depends are
# scripts/deps.sh's build list. deb-systemd-invoke is held off with a
# policy-rc.d for the test. The user iolat, if the test made it, is deleted
# after (Debian's purge keeps system users); bpffs is mounted on /sys/fs/bpf
# if it is not (as systemd does at boot), and unmounted after.
source tests/integration/lib.sh

for t in dpkg-buildpackage dh dpkg-parsechangelog; do
	command -v $t >/dev/null || skip "$t is not installed (dpkg-dev, debhelper)"
done
# Never replace or purge an iolat someone installed.
if dpkg-query -W -f='${Status}' iolat 2>/dev/null | grep -q 'installed\|config-files'; then
	skip "an iolat package is installed on this machine already"
fi

# debian/control's Build-Depends: the build list of scripts/deps.sh, less
# build-essential's make and gcc, plus debhelper and cmocka (unit tests).
want=$(sed -n '/^build=(/,/)/p' scripts/deps.sh | tr -d '()' | sed 's/^build=//' | tr -s ' \t' '\n' |
	grep -vxE 'make|gcc|' | sort)
have=$(sed -n '/^Build-Depends:/,/^[A-Z]/p' debian/control | sed '$d' | sed 's/^Build-Depends://' |
	tr ',' '\n' | sed 's/[<(].*//; s/^[ \t]*//; s/[ \t]*$//' | grep -vxE 'debhelper-compat|libcmocka-dev|' | sort)
[ "$want" = "$have" ] ||
	fail "debian/control Build-Depends and scripts/deps.sh's build list differ: $(diff <(echo "$want") <(echo "$have") | grep '^[<>]' | paste -sd' ')"

if [ -z "${DEB:-}" ]; then
	make --no-print-directory deb OUT="$OUT" >"$WORK/deb.log" 2>&1 || fail "make deb: $(tail -20 "$WORK/deb.log")"
	debs=("$OUT"/deb/iolat_*.deb)
	DEB=${debs[0]}
fi
[ -f "$DEB" ] || fail "no package: $DEB"
debver=$(dpkg-deb -f "$DEB" Version)
echo "package $DEB ($debver)"

# No service starts while this runs, whatever the init system.
if [ ! -e /usr/sbin/policy-rc.d ]; then
	printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
	chmod 755 /usr/sbin/policy-rc.d
	on_exit "rm -f /usr/sbin/policy-rc.d"
fi
# Clean-ups run last first: the purge, then what was found put back.
made_user=
getent passwd iolat >/dev/null || made_user=1
[ -n "$made_user" ] && on_exit "userdel iolat; groupdel iolat"
if ! mountpoint -q /sys/fs/bpf; then
	mount -t bpf -o mode=0700 bpf /sys/fs/bpf || fail "cannot mount bpffs on /sys/fs/bpf"
	on_exit "umount /sys/fs/bpf"
fi
[ -e /sys/fs/bpf/iolat/serve ] || [ -e /run/iolat/serve ] &&
	skip "/sys/fs/bpf/iolat/serve or /run/iolat/serve exists: someone's pins"
on_exit "chmod $(stat -c %a /sys/fs/bpf) /sys/fs/bpf"
for d in /sys/fs/bpf/iolat /run/iolat; do
	[ -e $d ] && on_exit "mkdir -p $d; chown $(stat -c %u:%g $d) $d; chmod $(stat -c %a $d) $d"
done
on_exit "dpkg --purge iolat"
dpkg -i "$DEB" >"$WORK/install.log" 2>&1 || fail "dpkg -i: $(tail -20 "$WORK/install.log")"

# From PATH, the package's.
[ "$(command -v iolat)" = /usr/bin/iolat ] || fail "iolat on PATH is $(command -v iolat), not /usr/bin/iolat"
version=$(iolat --version) || fail "iolat --version"
# The package's version is the build's with each - made + (scripts/mkdeb.sh).
[[ "$version" == "iolat ${debver//+/-} "* ]] || [[ "$version" == "iolat $debver "* ]] ||
	fail "iolat --version says '$version'; the package is $debver"
echo "$version"
iolat check >"$WORK/check.log" 2>&1 || fail "iolat check: $(tail -20 "$WORK/check.log")"

# The installed unit as systemd would read it: its ExecStart exists, the man
# pages it names are installed.
unit=/lib/systemd/system/iolat.service
[ -f "$unit" ] || fail "no $unit"
# shellcheck disable=SC2016 # $ARGS as the unit has it
grep -q '^ExecStart=/usr/bin/iolat serve --handover --config.file=/etc/iolat/iolat.yml \$ARGS$' "$unit" ||
	fail "ExecStart= not made /usr's: $(grep ^ExecStart= "$unit")"
grep -qx 'EnvironmentFile=-/etc/default/iolat' "$unit" ||
	fail "the unit does not read /etc/default/iolat: $(grep ^EnvironmentFile= "$unit")"
{ out=$(systemd-analyze verify "$unit" 2>&1) && [ -z "$out" ]; } || fail "systemd-analyze verify $unit: $out"
man -w iolat-serve >/dev/null 2>&1 || ! command -v man >/dev/null || fail "man -w iolat-serve finds no page"
# The mixin's alerts link to the runbooks there (runbookURLBase): plain, not .gz.
grep -q '^## IolatDiskLatencySLOBurnFast' /usr/share/doc/iolat/runbooks.md ||
	fail "/usr/share/doc/iolat/runbooks.md, the alerts' runbook_url, is missing or compressed"
bash -c 'source /usr/share/bash-completion/completions/iolat && complete -p iolat' >/dev/null 2>&1 ||
	fail "the bash completion defines no completion for iolat"
# Enabled by the package (deb-systemd-helper's links, made without systemd).
[ -L /etc/systemd/system/multi-user.target.wants/iolat.service ] ||
	fail "the unit is not enabled (no multi-user.target.wants link)"

# The default config and /etc/default/iolat are conffiles; the latter adds
# no flag as shipped. /etc/iolat/programs/ is there, empty. The examples load.
for f in /etc/iolat/iolat.yml /etc/default/iolat; do
	dpkg-query -W -f='${Conffiles}\n' iolat | grep -q "^ $f " ||
		fail "$f is not a conffile: $(dpkg-query -W -f='${Conffiles}' iolat)"
done
# default_args: ARGS as /etc/default/iolat sets it.
# shellcheck disable=SC1091,SC2153 # the installed file sets ARGS
default_args() { (. /etc/default/iolat && echo "$ARGS"); }
[ -z "$(default_args)" ] || fail "/etc/default/iolat sets ARGS as shipped: $(grep ^ARGS /etc/default/iolat)"
{ [ -d /etc/iolat/programs ] && [ -z "$(ls -A /etc/iolat/programs)" ]; } ||
	fail "/etc/iolat/programs is not an empty directory: $(ls -la /etc/iolat/programs 2>&1)"
iolat serve --config.dir=/usr/share/iolat/examples --config.check >"$WORK/examples.log" 2>&1 ||
	fail "the installed examples: $(tail -20 "$WORK/examples.log")"

# The maintainer scripts: restart after an upgrade, stop and unpin on removal.
dpkg-deb -e "$DEB" "$WORK/ctrl"
grep -q '_dh_action=restart$' "$WORK/ctrl/postinst" || fail "postinst does not restart the service after an upgrade"
grep -q 'systemd-sysusers.* iolat.conf' "$WORK/ctrl/postinst" || fail "postinst does not run systemd-sysusers iolat.conf"
[ "$(grep -n 'systemd-sysusers' "$WORK/ctrl/postinst" | cut -d: -f1)" -lt \
	"$(grep -n '_dh_action=restart' "$WORK/ctrl/postinst" | cut -d: -f1)" ] ||
	fail "postinst starts the service before it makes its user"
for f in preinst prerm; do
	[ -e "$WORK/ctrl/$f" ] || continue
	# Only a stop guarded by remove.
	# shellcheck disable=SC2016 # "$1" as the script has it
	grep -B1 'deb-systemd-invoke stop' "$WORK/ctrl/$f" | grep -q '"$1" = remove' ||
		fail "$f stops the service other than on removal: $(grep -B1 'deb-systemd-invoke stop' "$WORK/ctrl/$f")"
done
awk '/deb-systemd-invoke stop/ { stop = NR } /iolat serve --unpin/ && stop && NR > stop { ok = 1 } END { exit !ok }' \
	"$WORK/ctrl/prerm" || fail "prerm does not run iolat serve --unpin after stopping the service"

# The service with --handover, as the installed unit runs it.
getent passwd iolat >/dev/null || fail "no user iolat after the install (sysusers.d/iolat.conf)"
on_exit "iolat serve --unpin"
before=$(all_prog_ids)
prestart=$(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$unit" | sed -n "s/^ExecStartPre=+\/bin\/sh -c '\(.*\)'$/\1/p")
[ -n "$prestart" ] || fail "no ExecStartPre=+/bin/sh -c '...' in $unit"
# ARGS from /etc/default/iolat, as an operator sets it: a user's program in
# /etc/iolat/programs/ (a copy of the biosize example, on tp_btf: nothing
# more than the unit's capabilities), which the service then serves. The
# unit's $ARGS is that value split at spaces, as systemd does.
on_exit "rm -f /etc/iolat/programs/biosize.yaml /etc/iolat/programs/biosize.bpf.o"
cp /usr/share/iolat/examples/biosize.yaml /usr/share/iolat/examples/biosize.bpf.o /etc/iolat/programs/
sed -i 's|^ARGS=.*|ARGS="--config.dir=/etc/iolat/programs --config.strict"|' /etc/default/iolat
read -r -a args <<<"$(default_args)"
read -r -a words <<<"$(sed -n 's/^ExecStart=//p' "$unit")"
cmd=()
for w in "${words[@]}"; do
	# shellcheck disable=SC2016 # the unit's word
	if [ "$w" = '$ARGS' ]; then cmd+=("${args[@]}"); else cmd+=("$w"); fi
done
caps=+bpf,+perfmon
port=$((20000 + RANDOM % 20000))
# unit_start N: ExecStartPre=, then ExecStart= as iolat, log $WORK/serve.N.log.
unit_start() {
	sh -c "$prestart" >"$WORK/prestart.log" 2>&1 || fail "the unit's ExecStartPre=: $(cat "$WORK/prestart.log")"
	setpriv --reuid=iolat --regid=iolat --clear-groups --inh-caps=-all,$caps --ambient-caps=$caps \
		--bounding-set=-all,$caps --no-new-privs "${cmd[@]}" --web.listen-address=127.0.0.1:$port \
		>"$WORK/serve.$1.log" 2>&1 &
	IOLAT_PID=$!
	for _ in $(seq 100); do
		curl -sf -o "$WORK/metrics" "http://127.0.0.1:$port/metrics" && return 0
		kill -0 $IOLAT_PID 2>/dev/null || fail "the unit's ExecStart= (${cmd[*]}): $(cat "$WORK/serve.$1.log")"
		sleep 0.2
	done
	fail "the unit's ExecStart= did not come up: $(tail -5 "$WORK/serve.$1.log")"
}
unit_stop() {
	kill -TERM $IOLAT_PID
	wait $IOLAT_PID || fail "iolat serve exited $? on SIGTERM: $(tail -3 "$WORK/serve.$1.log")"
	IOLAT_PID=
}
unit_start 1
grep -q '^iolat_build_info' "$WORK/metrics" || fail "no iolat_build_info in a scrape with the installed config"
grep -q '^iolat_user_config_up{config="biosize"} 1' "$WORK/metrics" ||
	fail "ARGS in /etc/default/iolat: the program in /etc/iolat/programs is not served: $(grep user_config "$WORK/metrics")"
grep -q 'collector pinned: a restart within the lease adopts it" dir=/sys/fs/bpf/iolat/serve ' "$WORK/serve.1.log" ||
	fail "the service pinned nothing: $(tail -3 "$WORK/serve.1.log")"
[ "$(stat -c %U /sys/fs/bpf/iolat/serve)" = iolat ] || fail "the pins are not iolat's: $(ls -ld /sys/fs/bpf/iolat/serve)"

# The upgrade, the service running through the unpack; then postinst's restart.
newver=$debver+1
dpkg-deb -R "$DEB" "$WORK/new"
sed -i "s/^Version: .*/Version: $newver/" "$WORK/new/DEBIAN/control"
dpkg-deb -b "$WORK/new" "$WORK/iolat_new.deb" >/dev/null || fail "cannot repack $DEB as $newver"
dpkg -i "$WORK/iolat_new.deb" >"$WORK/upgrade.log" 2>&1 || fail "dpkg -i (upgrade): $(tail -20 "$WORK/upgrade.log")"
[ "$(dpkg-query -W -f='${Version}' iolat)" = "$newver" ] || fail "the upgrade did not install $newver"
kill -0 $IOLAT_PID 2>/dev/null || fail "the upgrade stopped the running iolat"
unit_stop 1
[ -n "$(ls -A /sys/fs/bpf/iolat/serve)" ] || fail "no pins left after the stop"
unit_start 2
grep -q 'msg="adopted the pinned collector" dir=/sys/fs/bpf/iolat/serve' "$WORK/serve.2.log" ||
	fail "the restart after the upgrade did not adopt the pins: $(grep -iE 'pin|warn|error' "$WORK/serve.2.log" | tail -3)"
grep -q 'were not read' "$WORK/serve.2.log" && fail "the saved series were not read: $(grep 'not read' "$WORK/serve.2.log")"
unit_stop 2
echo "ok: the upgrade to $newver adopted the collector the service pinned"

# Purge: every path dpkg listed is gone, save directories other packages own.
# The operator's program first (dpkg keeps a directory with files it did not
# install, as it should).
rm /etc/iolat/programs/biosize.yaml /etc/iolat/programs/biosize.bpf.o
dpkg -L iolat >"$WORK/files"
dpkg --purge iolat >"$WORK/purge.log" 2>&1 || fail "dpkg --purge: $(tail -20 "$WORK/purge.log")"
left=
while IFS= read -r f; do
	[ -e "$f" ] || [ -L "$f" ] || continue
	# A directory stays if another package owns it or it holds others'
	# files (all of ours are checked; /lib may be merged /usr's symlink).
	if [ -d "$f" ]; then
		dpkg -S "$f" >/dev/null 2>&1 && continue
		[ -n "$(ls -A "$f/")" ] && continue
	fi
	left="$left $f"
done <"$WORK/files"
[ -z "$left" ] || fail "left after purge:$left"
settle orphans_since "$before" || fail "programs left attached after purge: $LEFT"
for f in /sys/fs/bpf/iolat/serve /run/iolat/serve /etc/iolat /etc/default/iolat /usr/share/iolat /usr/share/doc/iolat /usr/bin/iolat \
	/etc/systemd/system/multi-user.target.wants/iolat.service \
	/var/lib/systemd/deb-systemd-helper-enabled/iolat.service.dsh-also; do
	[ -e "$f" ] || [ -L "$f" ] && fail "left after purge: $f"
done
dpkg-query -W iolat >/dev/null 2>&1 && fail "dpkg still knows iolat: $(dpkg-query -W -f='${Status}' iolat)"
echo "installed, used and purged $(wc -l <"$WORK/files") paths"
