#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# check_exit_status.sh OUT - every page's EXIT STATUS is what iolat does
# (issue 26). `make check-docs` runs it after check_docs.sh.
#
# Each man page's EXIT STATUS section (man/*.1.scd) is cut at its *N*
# markers into one text per status. Every case below has a pattern; where a
# status's text matches it, the case runs for the page's command (for
# iolat(1), which speaks for all of them, for every command the case has),
# and its exit status must be that N. So the status comes from the page: a
# page and a program that disagree fail, and so does a status whose text
# names nothing this file knows how to run (teach it a case).
#
# Most cases fail before anything is loaded (bad flags and files, no
# privileges). Those that load BPF (a normal end by a signal, a listener
# in use, a failed user program) need root and a kernel with BTF, and are
# skipped, and said so, without them. serve runs with its own --handover
# name (never the default instance, which a plain serve would take over)
# and unpins it after.
# shellcheck disable=SC2317 # case functions are called through the table
set -u
export LC_ALL=C
OUT=${1:?usage: check_exit_status.sh OUT (the build directory holding iolat)}
OUT=$(cd "$OUT" && pwd) || exit 1
cd "$(dirname "$0")/../.." || exit 1
[ -x "$OUT/iolat" ] || { echo "check_exit_status: no $OUT/iolat: run make first" >&2; exit 1; }

errors=0 ran=0 skipped=0
WORK=$(mktemp -d /tmp/iolat-exit.XXXXXX) || exit 1
PIN=docs-exit-$$
HELD_PID=
cleanup() {
	[ -z "$HELD_PID" ] || kill "$HELD_PID" 2>/dev/null
	! $is_root || "$IOLAT" serve --unpin="$PIN" >/dev/null 2>&1
	rm -rf "$WORK"
}
trap cleanup EXIT
# A copy every user can run: the unprivileged cases must not depend on
# where the checkout lives (a 0700 home, say).
chmod 755 "$WORK"
cp "$OUT/iolat" "$WORK/iolat" && chmod 755 "$WORK/iolat" || exit 1
IOLAT=$WORK/iolat
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)

is_root=false can_load=false
[ "$(id -u)" != 0 ] || is_root=true
if $is_root && [ -e /sys/kernel/btf/vmlinux ]; then
	can_load=true
fi

fail() {
	echo "check_exit_status: FAIL: $*" >&2
	errors=$((errors + 1))
}

# Context of the case being run, for messages: the page and its words.
PAGE='' WORDS=''
# Each run's exit status and first error line, by its command line: a case
# two pages name runs once, and both pages are held to its status.
declare -A RC ERR

# judge N WHAT KEY DESCRIPTION: the cached run KEY exited N?
judge() {
	if [ "${RC[$3]}" -ne "$1" ]; then
		fail "$PAGE says exit $1 for '$WORDS'; $2: $4 exited ${RC[$3]}: ${ERR[$3]}"
	else
		echo "check_exit_status: $PAGE: $1 for '$WORDS': $2 ok"
	fi
}

# expect N WHAT ARGS...: iolat ARGS (or "${NOBODY[@]}" ... with a leading
# --nobody) exits N; WHAT says which case in a message.
expect() {
	local want=$1 what=$2 rc=0 key
	shift 2
	local cmd=("$IOLAT" "$@")
	key="$*"
	if [ "$1" = --nobody ]; then
		command -v setpriv >/dev/null || { skip "$what" "no setpriv"; return; }
		cmd=("${NOBODY[@]}" "$IOLAT" "${@:2}")
	fi
	if [ -z "${RC[$key]+set}" ]; then
		# A case that should fail but starts serving would run until stopped.
		timeout -s TERM 20 "${cmd[@]}" </dev/null >"$WORK/out" 2>"$WORK/err" || rc=$?
		ran=$((ran + 1))
		RC[$key]=$rc
		ERR[$key]=$(head -c 300 "$WORK/err")
	fi
	judge "$want" "$what" "$key" "'iolat $key'"
}

skip() {
	skipped=$((skipped + 1))
	echo "check_exit_status: $PAGE: '$WORDS': $1 skipped ($2)"
}

# root_only WHAT: false (and WHAT skipped) unless root. For the cases that
# get past the privilege check before they fail, and setpriv's switch.
root_only() {
	$is_root || skip "$1" "needs root"
	$is_root
}

# expect_signal N SIG WHAT ARGS...: iolat ARGS started (its first output
# line), then SIG; it exits N.
expect_signal() {
	local want=$1 sig=$2 what=$3 rc=0 pid key
	shift 3
	key="$* SIG$sig"
	$can_load || { skip "$what" "loads BPF: needs root and kernel BTF"; return; }
	[ -z "${RC[$key]+set}" ] || { judge "$want" "$what" "$key" "'iolat $*' then SIG$sig"; return; }
	: >"$WORK/out"
	: >"$WORK/err"
	"$IOLAT" "$@" </dev/null >"$WORK/out" 2>"$WORK/err" &
	pid=$!
	for _ in $(seq 150); do
		{ [ -s "$WORK/out" ] || [ -s "$WORK/err" ]; } && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	# serve logs its map sizes before it listens: wait for that line.
	if [ "$1" = serve ]; then
		for _ in $(seq 150); do
			grep -q listening "$WORK/err" && break
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
	fi
	kill -"$sig" "$pid" 2>/dev/null
	wait "$pid" || rc=$?
	ran=$((ran + 1))
	RC[$key]=$rc
	ERR[$key]=$(head -c 300 "$WORK/err")
	judge "$want" "$what" "$key" "'iolat $*' then SIG$sig"
}

# The files the cases read.
printf 'no_such_key: 1\n' >"$WORK/unknown-key.yml"
printf 'views: [\n' >"$WORK/syntax.yml"
printf 'buckets:\n  latency_seconds: [0.01, 0.001]\n' >"$WORK/descending.yml"
printf 'no_such_key: 1\n' >"$WORK/web-unknown-key.yml"
printf 'basic_auth_users:\n  bob: notahash\n' >"$WORK/web-bad-hash.yml"
mkdir -p "$WORK/progs-bad" "$WORK/progs-none"
printf 'object: [\n' >"$WORK/progs-bad/broken.yaml"
touch "$WORK/exists.trace"
have_pair=false
if openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost \
	-keyout "$WORK/server.key" -out "$WORK/server.crt" >/dev/null 2>&1; then
	have_pair=true
	printf 'tls_server_config:\n  cert_file: server.key\n  key_file: server.crt\n' \
		>"$WORK/web-swapped.yml"
fi
# A port that was free: serve cases that get past their flags listen there,
# one after the other.
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') ||
	exit 1

# The cases: each a function of (status the page names, command).
case_unknown_command() {
	expect "$1" "an unknown command" no-such-command
}
case_unknown_option() {
	expect "$1" "an unknown option" "$2" --no-such-flag
	[ "$2" != check ] || expect "$1" "an unexpected argument" check extra
}
case_bad_value() {
	case $2 in
	hist) expect "$1" "a bad interval" hist 0 ;;
	top) expect "$1" "an unknown sort column" top -s no_such_column ;;
	trace) expect "$1" "a bad sample rate" trace -s 0 ;;
	serve) expect "$1" "a bad --web.max-connections" serve --web.max-connections=0 ;;
	esac
}
case_conflict() {
	case $2 in
	hist) expect "$1" "--json with -T" hist --json -T ;;
	top)
		expect "$1" "--json with --csv" top --json --csv
		expect "$1" "--once with a COUNT" top --once 1 5
		;;
	trace) expect "$1" "-s with -m" trace -s 2 -m 1 ;;
	serve) expect "$1" "--web.systemd-socket with --web.listen-address" \
		serve --web.systemd-socket --web.listen-address=127.0.0.1:1 ;;
	esac
}
case_overlap() {
	expect "$1" "':P' with '127.0.0.1:P'" serve --web.listen-address=":$PORT" \
		--web.listen-address="127.0.0.1:$PORT"
}
case_no_disk() {
	expect "$1" "a disk that does not exist" "$2" -d no-such-disk
}
case_no_cgroup() {
	expect "$1" "a cgroup that does not exist" "$2" --cgroup=/sys/fs/cgroup/no-such-cgroup
}
case_write_exists() {
	root_only "--write to a file that exists" || return
	expect "$1" "--write to a file that exists" trace --write="$WORK/exists.trace"
}
case_read_missing() {
	expect "$1" "--read of a file that does not exist" trace --read="$WORK/no-such.trace"
}
case_config_file() {
	expect "$1" "a --config.file that does not exist" serve --config.file="$WORK/no-such.yml"
	expect "$1" "a --config.file with an unknown key" serve --config.file="$WORK/unknown-key.yml"
	expect "$1" "a --config.file with a YAML syntax error" serve --config.file="$WORK/syntax.yml"
	expect "$1" "a --config.file with a bad value" serve --config.file="$WORK/descending.yml"
}
case_web_config_file() {
	root_only "a bad --web.config.file" || return
	local l=--web.listen-address=127.0.0.1:$PORT
	expect "$1" "a --web.config.file that does not exist" serve "$l" \
		--handover="$PIN" --web.config.file="$WORK/no-such-web.yml"
	expect "$1" "a --web.config.file with an unknown key" serve "$l" \
		--handover="$PIN" --web.config.file="$WORK/web-unknown-key.yml"
	expect "$1" "a --web.config.file with a bad bcrypt hash" serve "$l" \
		--handover="$PIN" --web.config.file="$WORK/web-bad-hash.yml"
	if $have_pair; then
		expect "$1" "a --web.config.file with cert_file and key_file swapped" serve "$l" \
			--handover="$PIN" --web.config.file="$WORK/web-swapped.yml"
	else
		skip "swapped cert_file and key_file" "no openssl"
	fi
}
case_privileges() {
	root_only "run without privileges" || return
	expect "$1" "run without privileges" --nobody "$2"
}
case_listener() {
	$can_load || { skip "a listen address in use" "loads BPF: needs root and kernel BTF"; return; }
	# A port some process listens on: the one the kernel gives this holder,
	# held until the end (cleanup), so both pages' runs are one.
	if [ -z "$HELD_PID" ]; then
		python3 -c "import socket,sys,time; s=socket.socket(); s.bind(('127.0.0.1',0)); s.listen()
print(s.getsockname()[1], flush=True); sys.stdout.close(); time.sleep(600)" >"$WORK/busy" &
		HELD_PID=$!
		for _ in $(seq 50); do
			[ -s "$WORK/busy" ] && break
			sleep 0.1
		done
	fi
	expect "$1" "a listen address in use" serve --handover="$PIN" \
		--web.listen-address="127.0.0.1:$(cat "$WORK/busy")"
	"$IOLAT" serve --unpin="$PIN" >/dev/null 2>&1
}
case_signal() { # status command signal
	local args=("$2")
	case $2 in
	top) args+=(-C 0.2) ;;
	serve) args+=(--handover="$PIN" --web.listen-address="127.0.0.1:$PORT") ;;
	esac
	expect_signal "$1" "$3" "the end by SIG$3" "${args[@]}"
	[ "$2" != serve ] || "$IOLAT" serve --unpin="$PIN" >/dev/null 2>&1
}
case_sigint() { case_signal "$1" "$2" INT; }
case_sigterm() { case_signal "$1" "$2" TERM; }
case_duration() {
	$can_load || { skip "--duration" "loads BPF: needs root and kernel BTF"; return; }
	expect "$1" "the end by --duration" trace --duration=1 -s 1000
}
case_help() {
	expect "$1" "--help" "$2" --help
}
case_version() {
	if [ "$2" = iolat ]; then
		expect "$1" "--version" --version
	else
		expect "$1" "--version" "$2" --version
	fi
}
case_config_check_ok() {
	root_only "--config.check" || return
	local dir=$WORK/progs-none names=()
	if [ -f "$OUT/examples/biosize.bpf.o" ] && $can_load; then
		dir=$OUT/examples names=(--config.names=biosize)
	fi
	expect "$1" "--config.check of $(basename "$dir")" serve --config.check \
		--config.dir="$dir" "${names[@]}"
}
case_user_config_failed() {
	root_only "a failed user config" || return
	expect "$1" "--config.check with a broken config" serve --config.check \
		--config.dir="$WORK/progs-bad"
	expect "$1" "--config.strict with a broken config" serve --config.strict \
		--config.dir="$WORK/progs-bad" --handover="$PIN" \
		--web.listen-address="127.0.0.1:$PORT"
	"$IOLAT" serve --unpin="$PIN" >/dev/null 2>&1
}
case_unpin() {
	root_only "--unpin" || return
	expect "$1" "--unpin of a name nothing is pinned as" serve --unpin="$PIN-none"
}
case_check_runs() {
	$can_load || { skip "check" "needs root and kernel BTF"; return; }
	expect "$1" "check --no-load on this kernel" check --no-load
	expect "$1" "check's load test on this kernel" check
}

# PATTERN (extended regex, on the status's text in lower case without
# scdoc's * and _) | the commands the case runs for | the case. @all is
# every command of the command table (as `iolat --help` lists them): the
# option parser's cases hold for each alike.
RULES=(
	'unknown command|iolat|case_unknown_command'
	'bad usage|unknown (command or )?option|bad flag|@all|case_unknown_option'
	'bad value|hist top trace serve|case_bad_value'
	'conflicting options|hist top trace serve|case_conflict'
	'unknown disk|disk (or cgroup )?that does not exist|hist top trace|case_no_disk'
	'(unknown|disk or) cgroup|cgroup that does not exist|hist top trace|case_no_cgroup'
	'--write file|trace|case_write_exists'
	'--read file|trace|case_read_missing'
	'\(--config\.file\)|configuration file \(--config|serve|case_config_file'
	'web configuration file|--web\.config\.file|serve|case_web_config_file'
	'privileges|hist top trace check serve|case_privileges'
	'listener|serve|case_listener'
	'overlap|serve|case_overlap'
	'ctrl-c|sigint|hist top trace serve|case_sigint'
	'sigterm|hist top trace serve|case_sigterm'
	'--duration|trace|case_duration'
	'--help|@all|case_help'
	'--version|iolat @all|case_version'
	'every user config loaded|serve|case_config_check_ok'
	'failed user config|serve|case_user_config_failed'
	'--unpin|serve|case_unpin'
	'can run here|check|case_check_runs'
)

# The EXIT STATUS section of an scdoc page as "N<TAB>text" lines, one per
# status: the section joined into one line and cut before each *N*.
statuses_of() {
	awk '
	/^# / { in_s = ($0 == "# EXIT STATUS"); next }
	in_s { text = text " " $0 }
	END {
		gsub(/[ \t]+/, " ", text)
		while (match(text, /\*[0-9]+\*/)) {
			if (n != "") print n "\t" substr(text, 1, RSTART - 1)
			n = substr(text, RSTART + 1, RLENGTH - 2)
			text = substr(text, RSTART + RLENGTH)
		}
		if (n != "") print n "\t" text
	}' "$1" | tr -d '*_' | tr '[:upper:]' '[:lower:]'
}

ALL=$("$IOLAT" --help | awk '/^Commands:/{c=1; next} c && /^$/{exit} c{printf "%s ", $1}')
[ -n "$ALL" ] || fail "'iolat --help' lists no commands (its format changed?)"

pages=0
for src in man/*.1.scd; do
	name=$(basename "$src" .1.scd)
	PAGE=$name.1
	statuses=$(statuses_of "$src")
	[ -n "$statuses" ] || { fail "$src has no EXIT STATUS section with *N* statuses"; continue; }
	pages=$((pages + 1))
	while IFS=$'\t' read -r status text; do
		matched=0
		for rule in "${RULES[@]}"; do
			fn=${rule##*|}
			rest=${rule%|*}
			cmds=${rest##*|}
			cmds=${cmds//@all/$ALL}
			pattern=${rest%|*}
			words=$(grep -oE -- "$pattern" <<<"$text" | head -1)
			[ -n "$words" ] || continue
			WORDS=$words
			for cmd in $cmds; do
				# iolat(1) speaks for every command; iolat-CMD(1) for CMD.
				[ "$name" = iolat ] || [ "$name" = "iolat-$cmd" ] || continue
				matched=$((matched + 1))
				"$fn" "$status" "$cmd"
			done
		done
		[ "$matched" -gt 0 ] ||
			fail "$src: status $status ('$text') names no case this test knows: add one"
	done <<<"$statuses"
done

[ "$pages" -gt 0 ] || fail "no man/*.1.scd page read"
echo "check_exit_status: $ran cases run on $pages pages, $skipped skipped"
if [ "$errors" -gt 0 ]; then
	echo "check_exit_status: $errors check(s) failed" >&2
	exit 1
fi
echo "check_exit_status: ok"
