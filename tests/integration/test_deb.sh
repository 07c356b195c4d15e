# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The Debian package, installed and purged on this machine: `make deb` (or
# DEB=FILE, one built already), then `dpkg -i`; iolat from PATH says its
# version and `iolat check` passes; systemd-analyze verify passes on the
# installed unit (its man pages installed too); `iolat serve` accepts the
# installed /etc/iolat/iolat.yml and loads the installed example programs;
# /etc/iolat/iolat.yml is a conffile; then `dpkg --purge` leaves nothing:
# no file the package listed (dpkg -L), not the conffile, not the unit's
# enablement links. debian/control's Build-Depends are scripts/deps.sh's
# build list. A service is never started: deb-systemd-invoke is held off
# with a policy-rc.d for the test (and systemd need not be running).
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
grep -q '^ExecStart=/usr/bin/iolat serve --config.file=/etc/iolat/iolat.yml$' "$unit" ||
	fail "ExecStart= not made /usr's: $(grep ^ExecStart= "$unit")"
{ out=$(systemd-analyze verify "$unit" 2>&1) && [ -z "$out" ]; } || fail "systemd-analyze verify $unit: $out"
man -w iolat-serve >/dev/null 2>&1 || ! command -v man >/dev/null || fail "man -w iolat-serve finds no page"
bash -c 'source /usr/share/bash-completion/completions/iolat && complete -p iolat' >/dev/null 2>&1 ||
	fail "the bash completion defines no completion for iolat"
# Enabled by the package (deb-systemd-helper's links, made without systemd).
[ -L /etc/systemd/system/multi-user.target.wants/iolat.service ] ||
	fail "the unit is not enabled (no multi-user.target.wants link)"

# The default config is a conffile, and serve takes it; the examples load.
dpkg-query -W -f='${Conffiles}\n' iolat | grep -q '^ /etc/iolat/iolat.yml ' ||
	fail "/etc/iolat/iolat.yml is not a conffile: $(dpkg-query -W -f='${Conffiles}' iolat)"
port=$((20000 + RANDOM % 20000))
iolat serve --config.file=/etc/iolat/iolat.yml --web.listen-address=127.0.0.1:$port >"$WORK/serve.log" 2>&1 &
IOLAT_PID=$!
for _ in $(seq 100); do
	curl -sf -o "$WORK/metrics" "http://127.0.0.1:$port/metrics" && break
	kill -0 $IOLAT_PID 2>/dev/null || fail "iolat serve with /etc/iolat/iolat.yml: $(cat "$WORK/serve.log")"
	sleep 0.2
done
grep -q '^iolat_build_info' "$WORK/metrics" || fail "no iolat_build_info in a scrape with the installed config"
kill -TERM $IOLAT_PID
wait $IOLAT_PID
IOLAT_PID=
iolat serve --config.dir=/usr/share/iolat/examples --config.check >"$WORK/examples.log" 2>&1 ||
	fail "the installed examples: $(tail -20 "$WORK/examples.log")"

# Purge: every path dpkg listed is gone, save directories other packages own.
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
for f in /etc/iolat /usr/share/iolat /usr/share/doc/iolat /usr/bin/iolat \
	/etc/systemd/system/multi-user.target.wants/iolat.service \
	/var/lib/systemd/deb-systemd-helper-enabled/iolat.service.dsh-also; do
	[ -e "$f" ] || [ -L "$f" ] && fail "left after purge: $f"
done
dpkg-query -W iolat >/dev/null 2>&1 && fail "dpkg still knows iolat: $(dpkg-query -W -f='${Status}' iolat)"
echo "installed, used and purged $(wc -l <"$WORK/files") paths"
