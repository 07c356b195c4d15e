#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# check_unit.sh OUT [UNIT] - contrib/iolat.service (or UNIT) and
# contrib/iolat.socket against the binary in OUT. `make check-unit` runs it; tests/integration/test_unit.sh
# runs it as root in `make test`.
#   - systemd-analyze verify passes, with ExecStart= pointed at OUT/iolat and
#     the config at contrib/iolat.yml, and the man pages its Documentation=
#     names found in OUT/man (rendered by `make man`; without them, not
#     checked);
#   - systemd-analyze security rates its exposure at most MAX_EXPOSURE (2.0);
#   - it reads /etc/default/iolat and appends its ARGS to ExecStart=;
#     contrib/iolat.default sets none, and every flag its comments offer is
#     in `iolat serve --help`;
#   - contrib/iolat.sysusers, applied to an empty root, makes the unit's
#     User= and Group= (a system user without a login shell);
#   - as root, with strace: `iolat serve` run as the unit runs it (a user
#     with only the unit's capabilities in its ambient and bounding sets,
#     no_new_privs), users' example programs loaded, scraped in every format
#     and reloaded, makes no system call outside the unit's SystemCallFilter=
#     (read in order as systemd does: the first list, then each ~list taken
#     away and each list added) and opens no socket of an address family
#     outside RestrictAddressFamilies=, maps no memory writable and
#     executable (MemoryDenyWriteExecute=) and makes no namespace
#     (RestrictNamespaces=);
#   - the same for --handover's two paths, which ExecStart= must take: the
#     first start pins the collector, a stop leaves it, and a restart, as
#     another uid, adopts it with the saved series, each run after the
#     unit's ExecStartPre=+ script (run as root, with its user made the
#     run's uid) has made /sys/fs/bpf/iolat and /run/iolat over to that uid.
#     bpffs is mounted on /sys/fs/bpf for it if it is not (systemd does at
#     boot), and unmounted after; the pins are removed (serve --unpin).
#     Exit 77 when nothing could be run, or if /sys/fs/bpf/iolat/serve or
#     /run/iolat/serve exists (an installed iolat's: left alone).
# systemd need not be running: systemd-analyze reads files (systemd 252 here).
set -u
export LC_ALL=C
OUT=${1:?usage: check_unit.sh OUT [UNIT]}
OUT=$(cd "$OUT" && pwd) || exit 1
cd "$(dirname "$0")/../.." || exit 1
UNIT=${2:-contrib/iolat.service}
MAX_EXPOSURE=${MAX_EXPOSURE:-2.0}
IOLAT=$OUT/iolat
errors=0
err() {
	echo "check_unit: FAIL: $*" >&2
	errors=$((errors + 1))
}
command -v systemd-analyze >/dev/null || { echo "check_unit: SKIP: no systemd-analyze" >&2; exit 77; }
[ -x "$IOLAT" ] || { echo "check_unit: no $IOLAT: run make first" >&2; exit 1; }
work=$(mktemp -d /tmp/iolat-check-unit.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill -TERM $pid 2>/dev/null; rm -rf "$work"' EXIT
chmod 755 "$work"

# The unit as installed would be, on this tree's files.
sed -e "s|/usr/local/bin/iolat|$IOLAT|" -e "s|/usr/local/etc/iolat/iolat.yml|$PWD/contrib/iolat.yml|" \
	"$UNIT" >"$work/iolat.service"
man_opt=--man=no
if ls "$OUT"/man/*.[1-8] >/dev/null 2>&1; then
	for p in "$OUT"/man/*.[1-8]; do
		mkdir -p "$work/man/man${p##*.}" && ln -s "$p" "$work/man/man${p##*.}/"
	done
	man_opt=--man=yes
fi
if ! out=$(MANPATH=$work/man systemd-analyze verify $man_opt "$work/iolat.service" 2>&1) || [ -n "$out" ]; then
	err "systemd-analyze verify $man_opt: $out"
fi
# The optional socket unit, with the service it starts beside it.
cp contrib/iolat.socket "$work/"
if ! out=$(MANPATH=$work/man systemd-analyze verify $man_opt "$work/iolat.socket" 2>&1) || [ -n "$out" ]; then
	err "systemd-analyze verify $man_opt iolat.socket: $out"
fi
grep -qx 'Service=iolat.service' "$work/iolat.socket" || err "iolat.socket does not start iolat.service"
grep -qx '#     ARGS="--web.systemd-socket"' "$work/iolat.socket" ||
	err "iolat.socket does not say to put --web.systemd-socket in /etc/default/iolat's ARGS"
[ $man_opt = --man=no ] && echo "check_unit: man pages not checked (none in $OUT/man: make man)"
# /etc/default/iolat (contrib/iolat.default): read by the unit, its ARGS
# appended to ExecStart=; as shipped it adds nothing, and every flag its
# comments offer is one `iolat serve --help` lists.
grep -qx 'EnvironmentFile=-/usr/local/etc/default/iolat' "$UNIT" ||
	err "the unit does not read /etc/default/iolat (EnvironmentFile=-/usr/local/etc/default/iolat, made PREFIX's)"
# shellcheck disable=SC2016 # $ARGS as the unit has it
grep -q '^ExecStart=.* \$ARGS$' "$UNIT" || err "ExecStart= does not end in \$ARGS"
# shellcheck disable=SC1091 # the file, as the unit reads it (KEY="value" lines)
args=$(ARGS=none && . contrib/iolat.default && echo "$ARGS")
[ -z "$args" ] || err "contrib/iolat.default sets ARGS=\"$args\": as shipped it should add nothing"
help_flags=$("$IOLAT" serve --help | grep -oE -- '--(\[no-\])?[a-z][a-z.-]*' | sed 's/\[no-\]//' | sort -u)
offered=$(grep '^#' contrib/iolat.default | grep -oE -- '--[a-z][a-z.-]+' | sort -u)
[ -n "$offered" ] || err "contrib/iolat.default offers no flag"
unknown=
for f in $offered; do
	grep -qx -- "$f" <<<"$help_flags" || unknown="$unknown $f"
done
if [ -n "$unknown" ]; then
	err "contrib/iolat.default offers flags iolat serve --help does not list:$unknown"
else
	echo "check_unit: contrib/iolat.default offers $(wc -w <<<"$offered") flags, all iolat serve's"
fi
# The unit's User= and Group= are what contrib/iolat.sysusers makes, applied
# to an empty root.
user=$(sed -n 's/^User=//p' "$UNIT") group=$(sed -n 's/^Group=//p' "$UNIT")
if command -v systemd-sysusers >/dev/null; then
	mkdir -p "$work/root/etc"
	if ! out=$(systemd-sysusers --root="$work/root" - <contrib/iolat.sysusers 2>&1); then
		err "systemd-sysusers contrib/iolat.sysusers: $out"
	elif ! grep -q "^$user:x:[0-9]*:[0-9]*:.*:/usr/sbin/nologin$" "$work/root/etc/passwd" ||
		! grep -q "^$group:x:" "$work/root/etc/group"; then
		err "contrib/iolat.sysusers does not make the unit's user $user and group $group: $out"
	else
		echo "check_unit: contrib/iolat.sysusers makes the unit's user $user and group $group"
	fi
fi
score=$(systemd-analyze security --offline=yes "$work/iolat.service" 2>&1 |
	sed -n 's/.*Overall exposure level for iolat.service: \([0-9.]*\).*/\1/p')
if [ -z "$score" ]; then
	err "systemd-analyze security gave no score"
elif awk -v s="$score" -v m="$MAX_EXPOSURE" 'BEGIN { exit !(s > m) }'; then
	err "exposure $score is above $MAX_EXPOSURE: $(systemd-analyze security --offline=yes "$work/iolat.service" 2>&1 | grep '✗')"
else
	echo "check_unit: exposure $score (at most $MAX_EXPOSURE)"
fi

# Every system call a group stands for, groups expanded.
expand() {
	systemd-analyze syscall-filter "$1" | sed -n '2,$p' | awk '!/^ *#/ && NF { print $1 }' |
		while read -r s; do
			case $s in
			@*) expand "$s" ;;
			*) echo "$s" ;;
			esac
		done
}
# The unit's allowed calls, SystemCallFilter= lines in order.
allowed() {
	local line neg words w set=$work/allowed
	: >"$set"
	grep '^SystemCallFilter=' "$UNIT" | while IFS= read -r line; do
		words=${line#SystemCallFilter=}
		neg=
		case $words in "~"*) neg=1 words=${words#\~} ;; esac
		for w in $words; do
			case $w in @*) expand "$w" ;; *) echo "$w" ;; esac
		done | sort -u >"$work/words"
		if [ -n "$neg" ]; then
			comm -23 "$set" "$work/words" >"$set.new"
		else
			sort -u "$set" "$work/words" >"$set.new"
		fi
		mv "$set.new" "$set"
	done
	cat "$set"
}

if [ "$(id -u)" -ne 0 ] || ! command -v strace >/dev/null || ! command -v setpriv >/dev/null ||
	! command -v curl >/dev/null; then
	echo "check_unit: system calls not checked (needs root, strace, setpriv and curl)"
	[ $errors -eq 0 ] && exit 0
	exit 1
fi
allowed >"$work/allowed.txt"
[ -s "$work/allowed.txt" ] || err "no SystemCallFilter= in $UNIT"
caps=$(sed -n 's/^AmbientCapabilities=//p' "$UNIT" | tr ' ' '\n' | sed 's/^CAP_//' | tr '[:upper:]' '[:lower:]' |
	sed 's/^/+/' | paste -sd,)
[ "$caps" = "+bpf,+perfmon" ] || err "AmbientCapabilities= is '$caps', not CAP_BPF CAP_PERFMON"
grep -q '^ExecStart=[^ ]*iolat serve --handover ' "$UNIT" || err "ExecStart= does not run iolat serve --handover"
grep -qx 'ReadWritePaths=-/sys/fs/bpf/iolat -/run/iolat' "$UNIT" ||
	err "ReadWritePaths= is not the pins' and saved series' directories (-/sys/fs/bpf/iolat -/run/iolat)"

# --handover as the unit runs it: its ExecStartPre=+ script (continued lines
# joined) run as root, with its user iolat made UID, then serve as UID.
# BPF file system as systemd mounts it at boot (the script wants it there).
prestart() {
	local script
	script=$(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$UNIT" |
		sed -n "s/^ExecStartPre=+\/bin\/sh -c '\(.*\)'$/\1/p")
	[ -n "$script" ] || { err "no ExecStartPre=+/bin/sh -c '...' in $UNIT"; return 1; }
	script=${script//iolat:iolat/$1:$1}
	sh -c "$script" >"$work/prestart.log" 2>&1 || { err "ExecStartPre= as uid $1: $(cat "$work/prestart.log")"; return 1; }
	for d in /sys/fs/bpf/iolat /run/iolat; do
		[ "$(stat -c %u:%a "$d")" = "$1:700" ] || err "ExecStartPre= left $d $(stat -c %u:%a "$d"), not $1:700"
	done
}
if ! mountpoint -q /sys/fs/bpf; then
	mount -t bpf -o mode=0700 bpf /sys/fs/bpf || { err "cannot mount bpffs on /sys/fs/bpf"; exit 1; }
	bpffs_mounted=1
fi
bpf_mode=$(stat -c %a /sys/fs/bpf)
# Each directory as found: made here (removed after) or its owner and mode
# (put back after).
made_dirs='' restore=''
for d in /sys/fs/bpf/iolat /run/iolat; do
	if [ -e $d ]; then restore="$restore $d:$(stat -c %u:%g:%a $d)"; else made_dirs="$made_dirs $d"; fi
done
if [ -e /sys/fs/bpf/iolat/serve ] || [ -e /run/iolat/serve ]; then
	# Someone's pins (an installed iolat's): never replace or remove them.
	echo "check_unit: SKIP: /sys/fs/bpf/iolat/serve or /run/iolat/serve exists (another iolat's)" >&2
	exit 77
fi
# shellcheck disable=SC2317 # called from the EXIT trap
cleanup_pins() {
	"$IOLAT" serve --unpin >/dev/null 2>&1
	# shellcheck disable=SC2086 # a list of paths without spaces
	[ -n "$made_dirs" ] && rmdir $made_dirs 2>/dev/null
	for r in $restore; do
		IFS=: read -r d u g m <<<"$r"
		chown "$u:$g" "$d" && chmod "$m" "$d"
	done
	chmod "$bpf_mode" /sys/fs/bpf
	[ -n "${bpffs_mounted:-}" ] && umount /sys/fs/bpf
}
trap '[ -n "$pid" ] && kill -TERM $pid 2>/dev/null; cleanup_pins; rm -rf "$work"' EXIT

# What the unit's user runs and reads, copied where any user can reach it
# ($work, 0755 in /tmp): the checkout may be in a directory only root can
# enter (/root, a 0700 temporary directory).
run=$work/run
{ mkdir "$run" && cp "$IOLAT" "$run/iolat" && cp contrib/iolat.yml "$run/" &&
	cp -r "$OUT/examples" "$run/examples" && chmod -R a+rX "$run"; } || { err "cannot copy iolat, its config and examples to $run"; exit 1; }
port=$((20000 + RANDOM % 20000))
url=http://127.0.0.1:$port
# serve_traced UID N: iolat serve --handover as UID, traced into
# $work/trace.N, its log $work/serve.N.log; up and scraped, or an error.
serve_traced() {
	local uid=$1 n=$2
	strace -f -qq -o "$work/trace.$n" \
		setpriv --reuid="$uid" --regid="$uid" --clear-groups --inh-caps=-all,"$caps" \
		--ambient-caps="$caps" --bounding-set=-all,"$caps" --no-new-privs \
		"$run/iolat" serve --handover --config.file="$run/iolat.yml" --web.listen-address=127.0.0.1:$port \
		--config.dir="$run/examples" >"$work/serve.$n.log" 2>&1 &
	pid=$!
	for _ in $(seq 100); do
		curl -sf -o /dev/null "$url/metrics" && return 0
		kill -0 $pid 2>/dev/null || break
		sleep 0.2
	done
	err "iolat serve (run $n, uid $uid) did not come up: $(tail -5 "$work/serve.$n.log")"
	return 1
}
# stop_traced N: SIGTERM, as systemctl stop sends.
stop_traced() {
	# strace's child: setpriv, which became iolat.
	kill -TERM "$(pgrep -P $pid -x iolat)"
	wait $pid || err "iolat serve (run $1) exited $?: $(tail -3 "$work/serve.$1.log")"
	pid=
}

# The first start: pins made. Then the restart: adopted, by another uid (a
# dynamic user's may change between runs; the script hands the pins over).
prestart 65534
if serve_traced 65534 1; then
	curl -sf -o /dev/null "$url/" || err "landing page"
	curl -sf -o /dev/null -H 'Accept: application/openmetrics-text' "$url/metrics" || err "OpenMetrics scrape"
	curl -sf -o /dev/null --compressed -H 'Accept: application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited' \
		"$url/metrics" || err "protobuf scrape"
	kill -HUP "$(pgrep -P $pid -x iolat)"
	for _ in $(seq 50); do grep -q 'configuration reloaded' "$work/serve.1.log" && break; sleep 0.1; done
	grep -q 'configuration reloaded' "$work/serve.1.log" || err "no reload: $(tail -3 "$work/serve.1.log")"
	curl -sf -o /dev/null "$url/metrics" || err "scrape after the reload"
	grep -q 'collector pinned: a restart within the lease adopts it" dir=/sys/fs/bpf/iolat/serve ' "$work/serve.1.log" ||
		err "the first run pinned nothing: $(grep -i pin "$work/serve.1.log" | tail -3)"
	stop_traced 1
	[ -n "$(ls -A /sys/fs/bpf/iolat/serve/ 2>/dev/null)" ] || err "no pins left after the first run's stop"
	[ -e /run/iolat/serve/series ] || err "no /run/iolat/serve/series after the first run's stop"
fi
prestart 65533
if serve_traced 65533 2; then
	grep -q 'msg="adopted the pinned collector" dir=/sys/fs/bpf/iolat/serve' "$work/serve.2.log" ||
		err "the restart did not adopt the pins: $(grep -iE 'pin|adopt|warn|error' "$work/serve.2.log" | tail -3)"
	grep -q 'the series the last run saved were not read' "$work/serve.2.log" &&
		err "the restart did not read the saved series: $(grep 'not read' "$work/serve.2.log")"
	stop_traced 2
fi
cat "$work"/trace.* >"$work/trace"
# Calls by name (strace writes "PID name(args) = ..."); the exit is no call.
# setpriv's own (setresuid, setgroups, capset) come before its exec.
awk '
	FNR == 1 { started = 0 }
	index($0, "execve(\"'"$run/iolat"'\"") { started = 1; next }
	started {
		l = $0; sub(/^[0-9]+ +/, "", l)
		if (match(l, /^[a-z_0-9]+\(/)) print substr(l, 1, RLENGTH - 1)
	}' "$work"/trace.* | sort -u >"$work/called.txt"
[ -s "$work/called.txt" ] || err "strace recorded no call of iolat"
outside=$(comm -23 "$work/called.txt" "$work/allowed.txt" | paste -sd' ')
[ -z "$outside" ] || err "iolat serve called what SystemCallFilter= refuses: $outside"
[ -z "$outside" ] && echo "check_unit: iolat serve made $(wc -l <"$work/called.txt") distinct system calls," \
	"all in SystemCallFilter= ($(wc -l <"$work/allowed.txt") allowed)"
# MemoryDenyWriteExecute=: no mapping both writable and executable;
# RestrictNamespaces=: no new namespace (threads are clone3 without CLONE_NEW*).
grep -qE '(mmap|mprotect|pkey_mprotect)\(.*(PROT_WRITE\|PROT_EXEC|PROT_EXEC\|PROT_WRITE)' "$work/trace" &&
	err "iolat serve mapped memory writable and executable (MemoryDenyWriteExecute= refuses it)"
grep -qE '(clone3?|unshare|setns)\(.*CLONE_NEW' "$work/trace" &&
	err "iolat serve made a namespace (RestrictNamespaces= refuses it)"
families=$(grep -o 'socket(AF_[A-Z0-9]*' "$work/trace" | sed 's/socket(//' | sort -u)
allowed_af=" $(sed -n 's/^RestrictAddressFamilies=//p' "$UNIT") "
for f in $families; do
	[[ "$allowed_af" == *" $f "* ]] || err "iolat serve opened an $f socket, outside RestrictAddressFamilies="
done
echo "check_unit: socket families opened: ${families//$'\n'/ }"
[ $errors -eq 0 ] && echo "check_unit: PASS" && exit 0
echo "check_unit: $errors failure(s)" >&2
exit 1
