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
