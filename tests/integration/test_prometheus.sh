# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A real Prometheus scrapes iolat while reads hit a disk that takes 5 ms per
# read (FUSE-backed loop). histogram_quantile over the classic buckets lands
# in the bucket holding 5 ms; a second Prometheus with native histograms on
# (so it scrapes protobuf) gets the median within one native bucket (~4 %).
source tests/integration/lib.sh
source tests/integration/lib_serve.sh
command -v prometheus >/dev/null || skip "prometheus (Debian package) is not installed"

DELAY_US=5000
make_slow_loop $DELAY_US
dev=$LOOP
name=${dev#/dev/}

port=$(free_port)
start_serve "$WORK/serve.log" --web.listen-address="127.0.0.1:$port"

scrape_iolat() {
	cat <<YML
scrape_configs:
  - job_name: iolat
    static_configs:
      - targets: ['127.0.0.1:$port']
YML
}
start_prometheus classic < <(scrape_iolat)
start_prometheus native --enable-feature=native-histograms < <(scrape_iolat)

# Reads for ~25 s, in the background, while the Prometheus instances scrape.
"$DIO" read "$dev" 5000 4096 &
reader=$!
on_exit "kill $reader"

# query URL PROMQL: the first result's value, or "" while there is none.
query() {
	curl -s --get --data-urlencode "query=$2" "$1/api/v1/query" |
		python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")'
}

sel="device=\"$name\",op=\"read\""
classic="" native=""
# shellcheck disable=SC2154 # classic_url, native_url: set by start_prometheus
for _ in $(seq 1 60); do
	sleep 1
	classic=$(query "$classic_url" "histogram_quantile(0.5, rate(iolat_block_device_latency_seconds_bucket{$sel}[1m]))")
	native=$(query "$native_url" "histogram_quantile(0.5, rate(iolat_block_device_latency_seconds{$sel}[1m]))")
	[ -n "$classic" ] && [ "$classic" != NaN ] && [ -n "$native" ] && [ "$native" != NaN ] && break
done
echo "classic p50 $classic s, native p50 $native s, injected $DELAY_US us"
{ [ -n "$classic" ] && [ -n "$native" ]; } || fail "no quantile from Prometheus (logs: $(tail -3 "$WORK/native.log"))"
python3 - "$classic" "$native" <<'PY' || fail "quantiles not at the injected delay"
import sys
classic, native = float(sys.argv[1]), float(sys.argv[2])
assert 0.005 < classic <= 0.01, classic        # the classic bucket (0.005, 0.01]
assert 0.005 <= native <= 0.0058, native       # one native bucket (4.4 %) above 5 ms + FUSE cost
PY
# Both scrapes healthy: classic Prometheus negotiates OpenMetrics, native protobuf.
for u in "$classic_url" "$native_url"; do
	assert_eq "up" 1 "$(query "$u" 'up{job="iolat"}')"
done
echo "ok: Prometheus classic and native quantiles at the injected delay"
