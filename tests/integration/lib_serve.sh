# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# lib_serve.sh - helpers for tests of `iolat serve` (sourced after lib.sh).

# A free TCP port on loopback.
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# start_serve LOGFILE ARGS...: runs `iolat serve` until it listens; sets
# SERVE_PID, notes its programs in OUR_PROGS (for assert_detached). WRAP
# (e.g. setpriv ...), when set, runs before iolat and must exec it.
start_serve() {
	local log=$1
	shift
	${WRAP:-} "$IOLAT" serve "$@" 2>"$log" &
	SERVE_PID=$!
	on_exit "kill -TERM $SERVE_PID"
	for _ in $(seq 1 100); do
		if grep -q "listening on" "$log"; then
			# shellcheck disable=SC2034 # read by assert_detached (lib.sh)
			OUR_PROGS=$(pid_prog_ids "$SERVE_PID")
			return 0
		fi
		kill -0 "$SERVE_PID" 2>/dev/null || fail "iolat serve exited: $(cat "$log")"
		sleep 0.1
	done
	fail "iolat serve did not listen within 10 s"
}

# stop_serve WHAT: SIGTERM to the serve start_serve began; it must exit 0
# and leave none of its programs attached.
stop_serve() {
	local rc=0
	kill -TERM "$SERVE_PID"
	wait "$SERVE_PID" || rc=$?
	assert_eq "$1: exit status" 0 "$rc"
	assert_detached
}

# metric FILE NAME LABELS: the value of one sample in a text exposition.
metric() {
	set -- "$1" "$2" "${3:-}"
	awk -v want="$2$3" '$1 == want { print $2 }' "$1"
}

# start_prometheus NAME FLAGS... (the configuration on stdin, without its
# global section): a Prometheus on loopback that scrapes and evaluates
# rules every second, its data in $WORK; sets ${NAME}_url. Stopped at exit.
start_prometheus() {
	local n=$1 p
	shift
	p=$(free_port)
	{
		printf 'global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n'
		cat
	} >"$WORK/$n.yml"
	prometheus --config.file="$WORK/$n.yml" --storage.tsdb.path="$WORK/$n.tsdb" \
		--web.listen-address="127.0.0.1:$p" "$@" >"$WORK/$n.log" 2>&1 &
	on_exit "kill $!"
	printf -v "${n}_url" 'http://127.0.0.1:%s' "$p"
}
