# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Intervals and signals: INTERVAL COUNT prints exactly COUNT objects and
# exits; SIGTERM and SIGINT print the interval so far and exit 0 with
# nothing attached; -F splits by request flags as the kernel set them.
source tests/integration/lib.sh

make_loop 16
dev=$LOOP
name=${dev#/dev/}

"$IOLAT" hist --json -d "$name" 0.2 3 >"$WORK/three" 2>/dev/null || fail "iolat hist 0.2 3"
assert_eq "objects for COUNT=3" 3 "$(grep -c '^{' "$WORK/three")"
python3 -c "
import json,sys
for l in open('$WORK/three'):
    d = json.loads(l)
    assert 0.15 < d['interval_s'] < 1.0, d['interval_s']
" || fail "interval lengths"

for sig in TERM INT; do
	start_iolat "$WORK/$sig" hist -F -O --json -d "$name"
	"$DIO" read "$dev" 10 4096 || fail "dio read"
	"$DIO" write "$dev" 7 8192 || fail "dio write"
	stop_iolat $sig
	assert_detached
	assert_eq "$sig: one object" 1 "$(grep -c '^{' "$WORK/$sig")"
	# Direct reads carry REQ_SYNC; direct writes REQ_SYNC|REQ_IDLE (block/fops.c).
	assert_eq "$sig: read flags" "[('sync', 10)]" \
		"$(jget "$WORK/$sig" "[(x['flags'], x['ios']) for x in d['series'] if x['op'] == 'read']")"
	assert_eq "$sig: write flags" "[('sync|idle', 7)]" \
		"$(jget "$WORK/$sig" "[(x['flags'], x['ios']) for x in d['series'] if x['op'] == 'write']")"
	echo "ok: SIG$sig"
done

# Text mode: the last interval is printed on Ctrl-C, with percentiles.
start_iolat "$WORK/text" hist -D -d "$name"
"$DIO" read "$dev" 25 4096 || fail "dio read"
stop_iolat INT
assert_detached
grep -q "^disk = $name\$" "$WORK/text" || fail "no disk header: $(cat "$WORK/text")"
grep -qE "^  count 25  avg [0-9.]+  p50 [0-9.]+  p90 [0-9.]+  p99 [0-9.]+  p99.9 [0-9.]+  max <?=?[0-9.]+ usecs" \
	"$WORK/text" || fail "no summary line: $(cat "$WORK/text")"
grep -qE "^ +[0-9]+ -> [0-9]+ +: [0-9]+ +\|\**" "$WORK/text" || fail "no histogram rows"
rows=$(awk -F: '/ -> / {gsub(/ /, "", $2); n += $2} END {print n}' "$WORK/text")
assert_eq "text rows sum" 25 "$rows"
echo "ok: text"
