# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Exact counts: N direct reads and M direct writes of known sizes on a loop
# device give exactly N and M completions, bytes and size slots - on every
# attach path (tp_btf, raw_tp) and with the request-map fallback forced.
# The I/O runs in a cgroup of its own and iolat filters on it, so reads made
# by anyone else (udev's blkid probes after a write, say) cannot be counted.
source tests/integration/lib.sh

N=300 RSIZE=4096 M=40 WSIZE=65536
make_loop 64
dev=$LOOP
name=${dev#/dev/}
make_cgroup counts
cg=$CG

check_mode() {
	local label=$1 out=$WORK/$1.json
	shift
	start_iolat "$out" hist -D -O --json -c "$cg" -d "$name"
	# One read first. Where the kernel's request times are missing (forced
	# here), it is counted but not timed, and makes iolat attach its
	# issue-side fallback; wait for that before the measured I/O.
	in_cgroup "$cg" "$DIO" read "$dev" 1 $RSIZE || fail "dio warm-up read"
	if [ "$EXPECT_UNSEEN" = 1 ]; then
		wait_for_stderr "$out" "attached the request-map fallback" ||
			fail "$label: the request-map fallback never attached"
	fi
	in_cgroup "$cg" "$DIO" read "$dev" $N $RSIZE || fail "dio read"
	in_cgroup "$cg" "$DIO" write "$dev" $M $WSIZE || fail "dio write"
	stop_iolat INT
	assert_detached
	echo "$label collector: $(jget "$out" 'd["collector"]')"
	assert_eq "$label attach" "${EXPECT_ATTACH}" "$(jget "$out" 'd["collector"]["attach"]')"
	assert_eq "$label reads" $((N + 1)) "$(jget "$out" "s('$name','read')['ios']")"
	assert_eq "$label writes" $M "$(jget "$out" "s('$name','write')['ios']")"
	assert_eq "$label read bytes" $(((N + 1) * RSIZE)) "$(jget "$out" "s('$name','read')['bytes']")"
	assert_eq "$label write bytes" $((M * WSIZE)) "$(jget "$out" "s('$name','write')['bytes']")"
	# Every request timed in both views, except the warm-up read when the
	# fallback had to be attached for it.
	for view in device total; do
		assert_eq "$label read $view timed" $((N + 1 - EXPECT_UNSEEN)) \
			"$(jget "$out" "s('$name','read')['$view']['count']")"
		assert_eq "$label read $view unseen" "$EXPECT_UNSEEN" \
			"$(jget "$out" "s('$name','read')['$view']['unseen']")"
		assert_eq "$label write $view timed" $M \
			"$(jget "$out" "s('$name','write')['$view']['count']")"
		assert_eq "$label write $view unseen" 0 \
			"$(jget "$out" "s('$name','write')['$view']['unseen']")"
	done
	assert_eq "$label fallback attached" "$([ "$EXPECT_UNSEEN" = 1 ] && echo True || echo False)" \
		"$(jget "$out" 'd["collector"]["rq_map"]')"
	# Size slots: all reads in the slot whose upper bound is 4096, writes 65536.
	assert_eq "$label read size slots" "[(4096, $((N + 1)))]" \
		"$(jget "$out" "[(x['hi'], x['count']) for x in s('$name','read')['size_slots']]")"
	assert_eq "$label write size slots" "[(65536, $M)]" \
		"$(jget "$out" "[(x['hi'], x['count']) for x in s('$name','write')['size_slots']]")"
	# Only this disk is reported.
	assert_eq "$label disks" "['$name']" \
		"$(jget "$out" "sorted(set(x['disk'] for x in d['series']))")"
	echo "ok: $label"
}

run_mode() {
	local label=$1 attach=$2
	shift 2
	EXPECT_ATTACH=$attach
	EXPECT_UNSEEN=0
	[[ "$*" == *IOLAT_FORCE_RQ_MAP=1* ]] && EXPECT_UNSEEN=1
	# shellcheck disable=SC2163 # the arguments are NAME=VALUE assignments to export
	export "$@"
	check_mode "$label"
	unset IOLAT_FORCE_ATTACH IOLAT_FORCE_RQ_MAP
}

run_mode default tp_btf IOLAT_FORCE_ATTACH=
run_mode raw_tp raw_tp IOLAT_FORCE_ATTACH=raw_tp
run_mode rq_map tp_btf IOLAT_FORCE_RQ_MAP=1
run_mode raw_tp_rq_map raw_tp IOLAT_FORCE_ATTACH=raw_tp IOLAT_FORCE_RQ_MAP=1
