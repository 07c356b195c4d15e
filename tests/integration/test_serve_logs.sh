# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The daemon's log is structured in substance: every line of `iolat serve`,
# in --log.format=json and =logfmt, parses strictly (logcheck.py: JSON by
# python3's json module, logfmt by a strict reader) with ts, level and msg
# first, and the facts are fields:
#   - the start line: version, kernel, attach mode, every map's size, the
#     handover state; the listening line: address, path, tls;
#   - a refused reload: file, line, col and err, while serving goes on;
#   - at --log.level=debug only: the maintenance passes (duration), a disk
#     appearing, a reload's changes;
#   - a start-up error (bad config file, bad web config, bad flag) in the
#     format chosen: one line, file/line/col where there is a position,
#     err and hint, non-zero exit; with no format chosen, the plain
#     "iolat: ..." line, as before.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh
unset JOURNAL_STREAM # no <N> prefix, were the test run under systemd

# pycheck FMT FILE CODE: CODE runs with L, FILE's lines parsed as FMT.
pycheck() {
	python3 - "$1" "$2" "$3" <<'PY' || fail "$2 ($1): $(cat "$2")"
import sys
sys.path.insert(0, "tests/integration")
from logcheck import lines
L = lines(sys.argv[1], sys.argv[2])
def line(msg):
    found = [l for l in L if l["msg"] == msg]
    assert found, f"no line with msg={msg!r}"
    return found[-1]
exec(sys.argv[3])
PY
}

kernel=$(uname -r)
version=$("$IOLAT" --version | awk '{ print $2 }')
make_loop 16
disk=${LOOP#/dev/}

for fmt in json logfmt; do
	port=$(free_port)
	level=info
	[ "$fmt" = logfmt ] && level=debug
	printf 'labels:\n  op: true\n' >"$WORK/cfg.yml"
	start_serve "$WORK/$fmt.log" --log.format=$fmt --log.level=$level \
		--config.file="$WORK/cfg.yml" --web.listen-address="127.0.0.1:$port" \
		--maintenance.interval=100ms
	dd if="$LOOP" of=/dev/null bs=4096 count=8 iflag=direct status=none
	after_pass "http://127.0.0.1:$port/metrics" # its debug line
	curl -sf "http://127.0.0.1:$port/metrics" >/dev/null || fail "$fmt: scrape"
	# A reload refused at a known place: line 3, column 3 of the file.
	printf 'labels:\n  op: true\n  nope: 1\n' >"$WORK/cfg.yml"
	kill -HUP "$SERVE_PID"
	wait_for_line "$WORK/$fmt.log" 'reload failed' 5 || fail "$fmt: no refused reload: $(cat "$WORK/$fmt.log")"
	curl -sf "http://127.0.0.1:$port/metrics" >/dev/null || fail "$fmt: not serving after a refused reload"
	# An accepted one that changes a setting.
	printf 'labels:\n  op: false\n' >"$WORK/cfg.yml"
	kill -HUP "$SERVE_PID"
	wait_for_line "$WORK/$fmt.log" 'configuration reloaded' 5 || fail "$fmt: no reload: $(cat "$WORK/$fmt.log")"
	curl -sf "http://127.0.0.1:$port/metrics" >/dev/null || fail "$fmt: scrape after the reload"
	stop_serve "$fmt"
	pycheck $fmt "$WORK/$fmt.log" "
s = line('started')
assert s['level'] == 'info' and s['version'] == '$version' and s['kernel'] == '$kernel', s
assert s['attach'] in ('tp_btf', 'raw_tp') and s['handover'] in ('fresh', 'adopted', 'took_over'), s
sizes = {k: int(v) for k, v in s.items() if k.startswith('map_')}
assert 'map_rq_starts' in sizes and all(v > 0 for v in sizes.values()), s
l = line('listening on')
assert l['address'] == '127.0.0.1:$port' and l['path'] == '/metrics', l
assert str(l['tls']).lower() == 'false', l
r = line('reload failed, keeping the running configuration')
assert r['level'] == 'error' and r['file'] == '$WORK/cfg.yml', r
assert int(r['line']) == 3 and int(r['col']) == 3 and 'nope' in r['err'], r
assert L.index(r) < L.index(line('configuration reloaded')), 'the refused reload is not first'
debug = [l for l in L if l['level'] == 'debug']
if '$level' == 'info':
    assert not debug, debug
else:
    p = line('maintenance pass')
    assert float(p['duration_seconds']) >= 0 and int(p['series']) >= 1, p
    d = [l for l in debug if l['msg'] == 'disk appeared' and l.get('disk') == '$disk']
    assert d and d[0]['dev'], debug
    c = line('reload changes')
    assert c['changed'] == 'labels.op', c
    assert line('reloading')['config_file'] == '$WORK/cfg.yml'
if '$fmt' == 'json':
    assert isinstance(r['line'], int) and isinstance(l['tls'], bool), (r, l)
"
	echo "ok: $fmt at $level: every line parses; start, listening, refused reload fields$([ $level = debug ] && echo ', debug lines')"
done

# Start-up errors in the format chosen, one line each; a path that needs
# quoting and escaping in both formats.
bad="$WORK/bad \"q\" a=b.yml"
printf 'labels:\n  op: maybe\n' >"$bad"
printf 'basic_auth_users:\n  bob: 3\n' >"$WORK/web.yml"
for fmt in json logfmt; do
	rc=0
	"$IOLAT" serve --log.format=$fmt --config.file="$bad" 2>"$WORK/err" >"$WORK/out" || rc=$?
	assert_eq "$fmt bad config: exit" 2 "$rc"
	assert_eq "$fmt bad config: lines" 1 "$(wc -l <"$WORK/err")"
	pycheck $fmt "$WORK/err" "
e = line('cannot start')
assert e['level'] == 'error' and e['file'] == '''$bad''', e
assert int(e['line']) == 2 and int(e['col']) == 7 and 'true or false' in e['err'] and e['hint'], e
"
	rc=0
	"$IOLAT" serve --web.config.file="$WORK/web.yml" --log.format=$fmt \
		--web.listen-address=127.0.0.1:"$(free_port)" 2>"$WORK/err" || rc=$?
	assert_eq "$fmt bad web config: exit" 2 "$rc"
	assert_eq "$fmt bad web config: lines" 1 "$(wc -l <"$WORK/err")"
	pycheck $fmt "$WORK/err" "
e = line('cannot start')
assert e['file'] == '$WORK/web.yml' and int(e['line']) == 2 and 'bcrypt' in e['err'], e
assert e['hint'], e
"
	rc=0
	"$IOLAT" serve --web.max-connections=many --log.format=$fmt 2>"$WORK/err" || rc=$?
	assert_eq "$fmt bad flag: exit" 2 "$rc"
	assert_eq "$fmt bad flag: lines" 1 "$(wc -l <"$WORK/err")"
	pycheck $fmt "$WORK/err" "assert 'web.max-connections' in line('cannot start')['err']"
	echo "ok: $fmt start-up errors: one line each, with file, line, col, err and hint"
done
# log_format: json in the file makes the errors after it JSON too.
printf 'log_format: json\nweb:\n  config_file: %s\n' "$WORK/web.yml" >"$WORK/jsoncfg.yml"
rc=0
"$IOLAT" serve --config.file="$WORK/jsoncfg.yml" --web.listen-address=127.0.0.1:"$(free_port)" \
	2>"$WORK/err" || rc=$?
assert_eq "file's json: exit" 2 "$rc"
pycheck json "$WORK/err" "assert line('cannot start')['file'] == '$WORK/web.yml'"
echo "ok: log_format: json in the file: the errors after it are JSON"
# No format chosen: the plain line the other commands print.
expect_error 2 "^iolat: .*bad \"q\" a=b.yml:2:7: .*\\(fix the flag or --config.file" \
	serve --config.file="$bad"
