# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Bad input: each gets one line on stderr saying what is wrong, a non-zero
# exit, and leaves nothing attached. Help and version succeed.
source tests/integration/lib.sh

expect_error 2 "unknown command 'frobnicate'" frobnicate
expect_error 2 "no such disk or partition 'nosuchdisk0'.*lsblk" hist -d nosuchdisk0
expect_error 2 "no such cgroup '/no/such/cgroup'" hist -c /no/such/cgroup
expect_error 2 "conflicting options: -m with --json" hist -m --json
expect_error 2 "bad interval 'abc'" hist abc
expect_error 2 "bad interval '0'" hist 0
expect_error 2 "bad count '1x'" hist 1 1x
expect_error 2 "bad count '0'" hist 1 0
expect_error 2 "unexpected argument '3'" hist 1 2 3
# Every command says the same of a bad option or argument (util/opts.c):
# COMMAND, an option of it that takes a value, operands one too many.
for c in "hist --disk 1 2 extra" "top --sort 1 2 extra" "trace --op extra" \
	"check --cpus extra" "serve --log.level extra"; do
	read -r cmd valued rest <<<"$c"
	read -r -a extra <<<"$rest"
	hint="\\(run 'iolat $cmd --help' for the usage\\)"
	expect_error 2 "^iolat: unknown option '--bogus' $hint$" "$cmd" --bogus
	expect_error 2 "^iolat: unknown option '-x' $hint$" "$cmd" -x
	expect_error 2 "^iolat: option '$valued' needs a value $hint$" "$cmd" "$valued"
	expect_error 2 "^iolat: option '--help' takes no value $hint$" "$cmd" --help=1
	expect_error 2 "^iolat: unexpected argument 'extra' $hint$" "$cmd" "${extra[@]}"
	[ "$("$IOLAT" "$cmd" --version)" = "$("$IOLAT" --version)" ] || fail "iolat $cmd --version"
	[ "$("$IOLAT" "$cmd" -V)" = "$("$IOLAT" --version)" ] || fail "iolat $cmd -V"
done
expect_error 2 "option '-d' needs a value" hist -d
expect_error 2 "unknown --attach mode 'kprobe'" hist --attach=kprobe
WRAP="env IOLAT_BTF=/nonexistent" expect_error 1 "this kernel has no BTF" hist
# A cgroup v2 directory on a hybrid host carries no I/O: say so.
if mountpoint -q /sys/fs/cgroup/blkio 2>/dev/null && [ -d /sys/fs/cgroup/unified ]; then
	expect_error 2 "hierarchy without the io \(blkio\) controller" hist -c /sys/fs/cgroup/unified
fi
# Not root: no capabilities to load BPF.
if command -v setpriv >/dev/null; then
	# A copy of iolat that uid 65534 can reach, wherever the checkout is.
	make_unpriv_dir 65534 65534
	{ cp "$IOLAT" "$UNPRIV_DIR/iolat" && chmod 755 "$UNPRIV_DIR/iolat"; } || fail "cannot copy $IOLAT"
	IOLAT=$UNPRIV_DIR/iolat WRAP="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all" \
		expect_error 1 "missing CAP_BPF and CAP_PERFMON: loading BPF tracing programs" hist
fi

"$IOLAT" --help | grep -q "Usage: iolat COMMAND" || fail "iolat --help"
"$IOLAT" hist --help | grep -q "Usage: iolat hist" || fail "iolat hist --help"
"$IOLAT" check --help | grep -q "Usage: iolat check" || fail "iolat check --help"
"$IOLAT" --version | grep -qE "^iolat [0-9]+\.[0-9]+\.[0-9]+" || fail "iolat --version"
# Every option the help lists works for one short interval.
for opt in -D -O -F -Q -m -T -s -v --attach=auto --attach=tp_btf --attach=raw_tp; do
	"$IOLAT" hist $opt 0.1 1 >/dev/null 2>"$WORK/err" || fail "iolat hist $opt: $(cat "$WORK/err")"
done
"$IOLAT" check >"$WORK/check" || fail "iolat check failed: $(cat "$WORK/check")"
grep -q "Load test: loaded and attached with tp_btf" "$WORK/check" || fail "check: $(cat "$WORK/check")"
io_root=$(cgroup_root)
grep -q "^Cgroups: io controller on .* ($io_root)" "$WORK/check" || fail "check names no io hierarchy ($io_root)"
"$IOLAT" check --no-load >/dev/null || fail "iolat check --no-load"
env IOLAT_BTF=/nonexistent "$IOLAT" check >/dev/null 2>&1 && fail "check passed without BTF"
echo "ok: help, version, options, check"

# Terminal manners (issue 28). `iolat help CMD` is `iolat CMD --help`.
mapfile -t cmds < <("$IOLAT" --help | awk '/^Commands:/{c=1; next} c && /^$/{exit} c{print $1}')
[ "${#cmds[@]}" -ge 5 ] || fail "cannot read the commands from iolat --help"
for cmd in "${cmds[@]}"; do
	"$IOLAT" help "$cmd" >"$WORK/help" || fail "iolat help $cmd: exit $?"
	"$IOLAT" "$cmd" --help >"$WORK/dashhelp" || fail "iolat $cmd --help"
	cmp -s "$WORK/help" "$WORK/dashhelp" || fail "iolat help $cmd differs from iolat $cmd --help"
	grep -q "^Usage: iolat $cmd" "$WORK/help" || fail "iolat help $cmd: $(head -1 "$WORK/help")"
	# Help points at the installed man page, not at a file of the repository.
	grep -q "iolat-$cmd(1)" "$WORK/help" || fail "iolat $cmd --help names no iolat-$cmd(1)"
	! grep -E "docs/|\.md\b" "$WORK/help" || fail "iolat $cmd --help points into the repository"
done
cmp -s <("$IOLAT" help) <("$IOLAT" --help) || fail "iolat help differs from iolat --help"
expect_error 2 "unknown command 'nosuch'" help nosuch
expect_error 2 "unexpected argument 'extra'" help hist extra
echo "ok: iolat help CMD = iolat CMD --help for ${cmds[*]}"

# No escape code goes into a pipe, from any command, on stdout or stderr.
no_escapes() { # WHAT CMD...: runs iolat CMD... into a pipe
	local what=$1
	shift
	{ "$IOLAT" "$@" 2>&1 || echo "exit $?"; } | cat >"$WORK/piped"
	! grep -q "^exit " "$WORK/piped" || fail "$what: $(cat "$WORK/piped")"
	! LC_ALL=C grep -q $'\033' "$WORK/piped" || fail "$what: an escape code into a pipe: $(cat -v "$WORK/piped")"
}
export TERM=xterm # a terminal type that has escape codes: only the pipe holds them back
no_escapes "--help" --help
no_escapes "--version" --version
for cmd in "${cmds[@]}"; do
	no_escapes "$cmd --help" "$cmd" --help
	no_escapes "$cmd --version" "$cmd" --version
done
no_escapes "hist" hist 0.2 2
no_escapes "hist -j" hist -j 0.2 1
no_escapes "top" top 0.2 2
no_escapes "top --once" top --once 0.2
no_escapes "top --json" top --json --once 0.2
no_escapes "top --csv" top --csv --once 0.2
no_escapes "trace" trace -D 0.3
no_escapes "trace -j" trace -j -D 0.3
no_escapes "check" check --no-load
no_escapes "check --memory" check --memory
echo "ok: no escape code in a pipe"

# At a terminal top clears the screen before each interval; not with
# TERM=dumb, without TERM, with -C, or for JSON; hist never does.
clears() { # ENV... -- CMD...: screen clears CMD wrote at a 200-column terminal
	local -a envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	env "${envs[@]}" python3 tests/integration/pty_run.py 200 "$IOLAT" "$@" >"$WORK/pty" 2>"$WORK/pty.err" ||
		fail "at a terminal: $*: $(cat "$WORK/pty.err")"
	LC_ALL=C grep -o $'\033\\[H\033\\[2J' "$WORK/pty" | wc -l
}
assert_eq "top 0.2 3 at a terminal: clears" 3 "$(clears TERM=xterm -- top 0.2 3)"
assert_eq "top at a terminal, TERM=dumb: clears" 0 "$(clears TERM=dumb -- top 0.2 2)"
assert_eq "top at a terminal, no TERM: clears" 0 "$(clears -u TERM -- top 0.2 2)"
assert_eq "top -C at a terminal: clears" 0 "$(clears TERM=xterm -- top -C 0.2 2)"
assert_eq "top --json at a terminal: clears" 0 "$(clears TERM=xterm -- top --json 0.2 2)"
clears TERM=xterm -- hist 0.2 1 >/dev/null
! LC_ALL=C grep -q $'\033' "$WORK/pty" || fail "hist wrote an escape code: $(cat -v "$WORK/pty")"
echo "ok: escape codes at a terminal only, and not with TERM=dumb"

# "Hit Ctrl-C to end." only when the run is open-ended, always on stderr.
bounded() { # CMD...: a bounded run says "Tracing", without the Ctrl-C hint
	"$IOLAT" "$@" >"$WORK/b.out" 2>"$WORK/b.err" || fail "$*: $(cat "$WORK/b.err")"
	grep -q "^Tracing block device I/O" "$WORK/b.err" || fail "$*: no start line: $(cat "$WORK/b.err")"
	! grep -q "Ctrl-C" "$WORK/b.err" "$WORK/b.out" || fail "$*: a Ctrl-C hint in a bounded run"
	! grep -q "^Tracing" "$WORK/b.out" || fail "$*: the start line on stdout"
}
open_ended() { # CMD...: an open-ended run tells how to end it, on stderr
	start_iolat "$WORK/o" "$@"
	stop_iolat INT
	grep -q "^Tracing block device I/O.*\.\.\. Hit Ctrl-C to end\.$" "$WORK/o.err" ||
		fail "$*: no Ctrl-C hint: $(cat "$WORK/o.err")"
	! grep -q "Tracing\|Ctrl-C" "$WORK/o" || fail "$*: the start line on stdout"
}
bounded hist 0.2 2
bounded hist -j 0.2 1
bounded top --once 0.2
bounded top 0.2 2
bounded top --json 0.2 1
bounded trace -D 0.3
open_ended hist
open_ended hist 0.2
open_ended hist -j 0.2
open_ended top 0.2
open_ended trace
open_ended trace -s 10
echo "ok: the Ctrl-C hint only in open-ended runs, on stderr"

# COUNT is honoured: exactly COUNT intervals; --once is COUNT 1, and not
# given with a COUNT (two answers to one question).
"$IOLAT" top 0.2 3 >"$WORK/top.txt" 2>/dev/null || fail "top 0.2 3"
assert_eq "top 0.2 3: intervals" 3 "$(grep -c ' workloads  device time' "$WORK/top.txt")"
"$IOLAT" top --json 0.2 4 >"$WORK/top.json" 2>/dev/null || fail "top --json 0.2 4"
assert_eq "top --json 0.2 4: intervals" 4 "$(wc -l <"$WORK/top.json")"
"$IOLAT" top --once --json 0.2 >"$WORK/top.json" 2>/dev/null || fail "top --once --json"
assert_eq "top --once: intervals" 1 "$(wc -l <"$WORK/top.json")"
"$IOLAT" hist --json 0.2 3 >"$WORK/hist.json" 2>/dev/null || fail "hist --json 0.2 3"
assert_eq "hist --json 0.2 3: intervals" 3 "$(wc -l <"$WORK/hist.json")"
expect_error 2 "conflicting options: --once with COUNT 5" top --once 0.2 5
echo "ok: COUNT honoured by top and hist"

# The flags of every command that traces, with one meaning: -d, -c,
# --attach, -v. (Their effect on top's numbers: test_top.sh.)
for cmd in hist top trace; do
	"$IOLAT" "$cmd" --help >"$WORK/help"
	for flag in "-d, --disk=DISK" "-c, --cgroup=PATH" "--attach=MODE" "-v, --verbose"; do
		grep -qF -- "$flag" "$WORK/help" || fail "iolat $cmd --help lacks $flag"
	done
	expect_error 2 "no such disk or partition 'nosuchdisk0'" "$cmd" -d nosuchdisk0
	expect_error 2 "no such cgroup '/no/such/cgroup'" "$cmd" -c /no/such/cgroup
	expect_error 2 "unknown --attach mode 'kprobe'" "$cmd" --attach=kprobe
done
"$IOLAT" top -v --attach=raw_tp --once 0.2 >/dev/null 2>"$WORK/err" || fail "top -v --attach=raw_tp: $(cat "$WORK/err")"
grep -q "libbpf:" "$WORK/err" || fail "top -v showed no libbpf message: $(head -3 "$WORK/err")"
echo "ok: -d, -c, --attach and -v on hist, top and trace"
