# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A node_exporter-style web.yml (exporter-toolkit's format) used unchanged by
# `iolat serve`: client certificates verified against a CA and their SANs,
# cipher suites, curves and TLS versions, response headers, bcrypt basic
# auth, health checks without credentials, and a real Prometheus scraping
# with its own tls_config and basic_auth. Then each client_auth_type, swapped
# in by SIGHUP, against clients with no certificate, one the CA signed and a
# self-signed one; a bad reload keeps the running policy; the rate limit.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh

command -v openssl >/dev/null || skip "no openssl"
command -v prometheus >/dev/null || skip "no prometheus"

# --- Certificates: a CA, the server, two clients it signed, one it did not.
cd "$WORK" || fail "no work directory"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=iolat-test-ca \
	-addext basicConstraints=critical,CA:true -addext keyUsage=critical,keyCertSign,cRLSign \
	-keyout ca.key -out ca.crt 2>/dev/null || fail "openssl: CA"
# signed NAME SAN EKU: NAME.crt and NAME.key, signed by the CA.
signed() {
	openssl req -newkey rsa:2048 -nodes -subj "/CN=$1" -keyout "$1.key" -out "$1.csr" 2>/dev/null ||
		fail "openssl: $1's request"
	printf 'subjectAltName=%s\nextendedKeyUsage=%s\n' "$2" "$3" >"$1.ext"
	openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
		-extfile "$1.ext" -out "$1.crt" 2>/dev/null || fail "openssl: $1"
}
signed server "DNS:localhost,IP:127.0.0.1" serverAuth
signed scraper "DNS:prometheus.example,IP:10.0.0.1" clientAuth
signed mallory "DNS:mallory.example" clientAuth
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=stranger \
	-addext subjectAltName=DNS:prometheus.example -addext extendedKeyUsage=clientAuth \
	-keyout stranger.key -out stranger.crt 2>/dev/null || fail "openssl: stranger"
cd - >/dev/null || fail "cd back"

# htpasswd -nbBC 10 alice 'correct horse' (see tests/unit/test_webconfig.c)
# shellcheck disable=SC2016 # literal: the $ fields of a bcrypt hash
HASH='$2y$10$YtvBZQ2h28nXNhDnGpfKQulVtrxLLl1ItppINR/l.EirmXD31MV6q'
# The file an operator deploys for node_exporter, paths relative to it.
cat >"$WORK/web.yml" <<YML
tls_server_config:
  cert_file: server.crt
  key_file: server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: ca.crt
  client_allowed_sans:
    - prometheus.example
  min_version: TLS12
  cipher_suites:
    - TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384
    - TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384
    - TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
    - TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256
  curve_preferences:
    - X25519
    - CurveP256
  prefer_server_cipher_suites: true
http_server_config:
  http2: true
  headers:
    X-Frame-Options: deny
    X-Content-Type-Options: nosniff
    Strict-Transport-Security: max-age=31536000; includeSubDomains
    Content-Security-Policy: "default-src 'none'"
basic_auth_users:
  alice: $HASH
YML
port=$(free_port)
start_serve "$WORK/serve.log" --web.listen-address="127.0.0.1:$port" --web.config.file="$WORK/web.yml"
grep -q "HTTP/2 is not offered" "$WORK/serve.log" || fail "no log line about HTTP/2: $(cat "$WORK/serve.log")"

url=https://127.0.0.1:$port
as_scraper=(--cacert "$WORK/ca.crt" --cert "$WORK/scraper.crt" --key "$WORK/scraper.key")
# code ARGS...: the HTTP status curl got, or its exit status as "curl N".
code() {
	local out rc=0
	out=$(curl -s -m 10 -o /dev/null -w '%{http_code}' "$@") || rc=$?
	[ "$rc" -eq 0 ] && echo "$out" || echo "curl $rc"
}
# refused WHAT ARGS...: curl gets no HTTP answer at all (the handshake fails).
refused() {
	local what=$1 got
	shift
	got=$(code "$@")
	[[ "$got" == curl* ]] || fail "$what: expected a failed handshake, got HTTP $got"
}

assert_eq "client cert and password" 200 "$(code "${as_scraper[@]}" -u 'alice:correct horse' "$url/metrics")"
curl -s "${as_scraper[@]}" -u 'alice:correct horse' "$url/metrics" | grep -q '^iolat_build_info' ||
	fail "no metrics over mutual TLS"
assert_eq "client cert, no password" 401 "$(code "${as_scraper[@]}" "$url/metrics")"
assert_eq "client cert, wrong password" 401 "$(code "${as_scraper[@]}" -u 'alice:wrong' "$url/metrics")"
refused "no client certificate" --cacert "$WORK/ca.crt" -u 'alice:correct horse' "$url/metrics"
refused "SAN not allowed" --cacert "$WORK/ca.crt" --cert "$WORK/mallory.crt" \
	--key "$WORK/mallory.key" -u 'alice:correct horse' "$url/metrics"
refused "certificate of another CA" --cacert "$WORK/ca.crt" --cert "$WORK/stranger.crt" \
	--key "$WORK/stranger.key" -u 'alice:correct horse' "$url/metrics"
kill -0 "$SERVE_PID" || fail "daemon died after refused handshakes"
echo "ok: client certificates: verified, SANs checked, none or a stranger's refused"

# Health without credentials (the probe still needs its certificate here).
assert_eq "/-/healthy without a password" 200 "$(code "${as_scraper[@]}" "$url/-/healthy")"
assert_eq "/-/ready without a password" 200 "$(code "${as_scraper[@]}" "$url/-/ready")"
assert_eq "/ still needs one" 401 "$(code "${as_scraper[@]}" "$url/")"
refused "/-/healthy without a certificate" --cacert "$WORK/ca.crt" "$url/-/healthy"
echo "ok: /-/healthy and /-/ready answer without credentials"

# Configured headers on every answer: 200, 401, health, 404.
for what in "metrics:-u alice:correct horse" "metrics:" "-/healthy:" "nowhere:"; do
	path=${what%%:*} creds=${what#*:}
	args=("${as_scraper[@]}")
	[ -n "$creds" ] && args+=(-u "${creds#-u }")
	curl -s -o /dev/null -D "$WORK/h" "${args[@]}" "$url/$path" || fail "headers: curl /$path"
	grep -qi '^X-Frame-Options: deny' "$WORK/h" || fail "/$path: no X-Frame-Options: $(cat "$WORK/h")"
	grep -qi '^X-Content-Type-Options: nosniff' "$WORK/h" || fail "/$path: no X-Content-Type-Options"
	grep -qi '^Strict-Transport-Security: max-age=31536000; includeSubDomains' "$WORK/h" ||
		fail "/$path: no Strict-Transport-Security"
	grep -qi "^Content-Security-Policy: default-src 'none'" "$WORK/h" ||
		fail "/$path: no Content-Security-Policy"
done
assert_eq "HTTP/2 asked for, HTTP/1.1 spoken" 1.1 \
	"$(curl -s --http2 -o /dev/null -w '%{http_version}' "${as_scraper[@]}" "$url/-/healthy")"
echo "ok: the configured headers on 200, 401 and 404 answers; HTTP/1.1 only"

# --- openssl s_client: versions, suites, curves, client certificates.
# probe ARGS...: the status line of GET /-/healthy through s_client, or "".
probe() {
	printf 'GET /-/healthy HTTP/1.0\r\nHost: localhost\r\n\r\n' |
		timeout 10 openssl s_client -quiet -connect "127.0.0.1:$port" -servername localhost \
			-CAfile "$WORK/ca.crt" "$@" 2>/dev/null | head -1 | tr -d '\r'
}
as_scraper_s=(-cert "$WORK/scraper.crt" -key "$WORK/scraper.key")
assert_eq "s_client with a certificate" "HTTP/1.1 200 OK" "$(probe "${as_scraper_s[@]}")"
assert_eq "s_client without one" "" "$(probe)"
assert_eq "s_client, SAN not allowed" "" "$(probe -cert "$WORK/mallory.crt" -key "$WORK/mallory.key")"
assert_eq "TLS 1.3" "HTTP/1.1 200 OK" "$(probe "${as_scraper_s[@]}" -tls1_3)"
assert_eq "TLS 1.2" "HTTP/1.1 200 OK" "$(probe "${as_scraper_s[@]}" -tls1_2)"
# SECLEVEL=0 so that it is the server, not OpenSSL's own policy, that says no.
assert_eq "TLS 1.1 (below min_version)" "" \
	"$(probe "${as_scraper_s[@]}" -tls1_1 -cipher 'DEFAULT:@SECLEVEL=0')"
assert_eq "a TLS 1.2 suite not listed" "" \
	"$(probe "${as_scraper_s[@]}" -tls1_2 -cipher ECDHE-RSA-AES128-SHA256:ECDHE-RSA-AES256-SHA)"
assert_eq "a TLS 1.2 suite listed" "HTTP/1.1 200 OK" \
	"$(probe "${as_scraper_s[@]}" -tls1_2 -cipher ECDHE-RSA-CHACHA20-POLY1305)"
# The server's order wins: AES-256 is listed before AES-128.
chosen=$(timeout 10 openssl s_client -connect "127.0.0.1:$port" -CAfile "$WORK/ca.crt" \
	"${as_scraper_s[@]}" -tls1_2 -cipher 'ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384' \
	</dev/null 2>/dev/null | sed -n 's/.*Cipher is \(.*\)/\1/p' | head -1)
assert_eq "prefer_server_cipher_suites" ECDHE-RSA-AES256-GCM-SHA384 "$chosen"
assert_eq "a curve not listed" "" "$(probe "${as_scraper_s[@]}" -groups P-384)"
assert_eq "a curve listed" "HTTP/1.1 200 OK" "$(probe "${as_scraper_s[@]}" -groups P-256)"
echo "ok: s_client: versions, cipher suites (and the server's order), curves, client certificates"

# --- Prometheus with its own tls_config and basic_auth.
start_prometheus prom <<YML
scrape_configs:
  - job_name: iolat
    scheme: https
    tls_config:
      ca_file: $WORK/ca.crt
      cert_file: $WORK/scraper.crt
      key_file: $WORK/scraper.key
      server_name: localhost
    basic_auth:
      username: alice
      password: correct horse
    static_configs:
      - targets: ["127.0.0.1:$port"]
YML
prom_pid=$! # its on_exit kill stays for a failure before it is stopped below
up=""
for _ in $(seq 1 60); do
	# shellcheck disable=SC2154 # prom_url: set by start_prometheus
	up=$(curl -s --get --data-urlencode 'query=up{job="iolat"}' "$prom_url/api/v1/query" |
		python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")' 2>/dev/null)
	[ "$up" = 1 ] && break
	sleep 0.5
done
assert_eq "Prometheus up" 1 "$up"
n=$(curl -s --get --data-urlencode 'query=count(iolat_build_info{job="iolat"})' "$prom_url/api/v1/query" |
	python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)')
assert_eq "Prometheus has iolat's series" 1 "$n"
echo "ok: Prometheus scrapes through mutual TLS and basic auth: up=1"
# Stopped: its scrapes would take tokens from the rate limit below.
kill "$prom_pid"
wait "$prom_pid" 2>/dev/null

# --- Each client_auth_type, by SIGHUP; health needs no password, so only TLS decides.
reloads() { grep -c "$1" "$WORK/serve.log"; }
wait_reloads() { # wait_reloads PATTERN N
	for _ in $(seq 100); do [ "$(reloads "$1")" -ge "$2" ] && return 0; sleep 0.05; done
	fail "no '$1' in the log: $(tail -3 "$WORK/serve.log")"
}
ok=0
# reload: SIGHUP, and wait until the new web config is taken.
reload() {
	kill -HUP "$SERVE_PID"
	ok=$((ok + 1))
	wait_reloads "configuration reloaded" "$ok"
}
# policy TYPE CA?: the web config with that client_auth_type (and the CA or not).
policy() {
	{
		printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n'
		printf '  client_auth_type: %s\n' "$1"
		[ "$2" = ca ] && printf '  client_ca_file: ca.crt\n'
	} >"$WORK/web.yml"
	reload
}
# expect TYPE NONE SIGNED STRANGER: what each client gets (200 or -).
expect() {
	local a b c
	a=$(probe | cut -d' ' -f2)
	b=$(probe "${as_scraper_s[@]}" | cut -d' ' -f2)
	c=$(probe -cert "$WORK/stranger.crt" -key "$WORK/stranger.key" | cut -d' ' -f2)
	assert_eq "$1: no cert, CA-signed, self-signed" "$2 $3 $4" "${a:--} ${b:--} ${c:--}"
}
policy NoClientCert none
expect NoClientCert 200 200 200
policy RequestClientCert ca
expect RequestClientCert 200 200 200
policy RequireAnyClientCert ca
expect RequireAnyClientCert - 200 200
policy VerifyClientCertIfGiven ca
expect VerifyClientCertIfGiven 200 200 -
policy RequireAndVerifyClientCert ca
expect RequireAndVerifyClientCert - 200 -
echo "ok: the five client_auth_type policies"

# client_allowed_sans matches IP SANs as text too (the scraper's is 10.0.0.1).
for sans in "10.0.0.1:200" "10.0.0.2:" "mallory.example:"; do
	cat >"$WORK/web.yml" <<YML
tls_server_config:
  cert_file: server.crt
  key_file: server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: ca.crt
  client_allowed_sans: ["${sans%%:*}"]
YML
	reload
	assert_eq "scraper with client_allowed_sans ${sans%%:*}" "${sans#*:}" "$(probe "${as_scraper_s[@]}" | cut -d' ' -f2)"
done
assert_eq "mallory with client_allowed_sans mallory.example" 200 \
	"$(probe -cert "$WORK/mallory.crt" -key "$WORK/mallory.key" | cut -d' ' -f2)"
echo "ok: client_allowed_sans by IP and by DNS name"

# A reload the config refuses keeps the running policy, whole.
cat >"$WORK/web.yml" <<YML
tls_server_config:
  cert_file: server.crt
  key_file: server.key
  cipher_suites: [TLS_RSA_WITH_RC4_128_SHA]
YML
kill -HUP "$SERVE_PID"
wait_reloads "reload failed, keeping the running configuration\" file=[^ ]*web.yml line=4 col=19 err=\"cipher suite .*TLS_RSA_WITH_RC4_128_SHA.* is one Go lists as insecure" 1
expect "after a refused reload (mallory.example only)" - - -
assert_eq "mallory still let in" 200 "$(probe -cert "$WORK/mallory.crt" -key "$WORK/mallory.key" | cut -d' ' -f2)"
echo "ok: a refused reload keeps the running TLS policy"

# Versions both ways: TLS 1.1 taken when min_version allows it (so the refusal
# above was the server's), TLS 1.3 refused above max_version.
cat >"$WORK/web.yml" <<YML
tls_server_config:
  cert_file: server.crt
  key_file: server.key
  min_version: TLS10
  max_version: TLS12
YML
reload
assert_eq "TLS 1.1 with min_version TLS10" "HTTP/1.1 200 OK" "$(probe -tls1_1 -cipher 'DEFAULT:@SECLEVEL=0')"
assert_eq "TLS 1.2 at max_version" "HTTP/1.1 200 OK" "$(probe -tls1_2)"
assert_eq "TLS 1.3 above max_version" "" "$(probe -tls1_3)"
echo "ok: min_version and max_version"

# GnuTLS enables the parts of the suites listed, so their product holds
# ECDHE-RSA with AES-256-GCM, which is not listed: a client offering only
# that is refused. And the client's order, when the server's is off.
cat >"$WORK/web.yml" <<YML
tls_server_config:
  cert_file: server.crt
  key_file: server.key
  max_version: TLS12
  cipher_suites:
    - TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384
    - TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
    - TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256
  prefer_server_cipher_suites: false
YML
reload
assert_eq "a suite only the product holds" "" "$(probe -cipher ECDHE-RSA-AES256-GCM-SHA384)"
assert_eq "a listed one" "HTTP/1.1 200 OK" "$(probe -cipher ECDHE-RSA-AES128-GCM-SHA256)"
chosen=$(timeout 10 openssl s_client -connect "127.0.0.1:$port" -CAfile "$WORK/ca.crt" \
	-cipher 'ECDHE-RSA-CHACHA20-POLY1305:ECDHE-RSA-AES128-GCM-SHA256' </dev/null 2>/dev/null |
	sed -n 's/.*Cipher is \(.*\)/\1/p' | head -1)
assert_eq "prefer_server_cipher_suites: false" ECDHE-RSA-CHACHA20-POLY1305 "$chosen"
echo "ok: cipher_suites exactly, and the client's order"

# The rate limit: a burst of 3, then 429; health is not limited.
cat >"$WORK/web.yml" <<YML
tls_server_config:
  cert_file: server.crt
  key_file: server.key
rate_limit:
  interval: 1h
  burst: 3
YML
reload
got=""
for _ in 1 2 3 4; do got+="$(code --cacert "$WORK/ca.crt" "$url/metrics") "; done
assert_eq "burst of 3" "200 200 200 429 " "$got"
assert_eq "health outside the limit" 200 "$(code --cacert "$WORK/ca.crt" "$url/-/healthy")"
echo "ok: rate_limit"
stop_serve "web config run"

# expect_refusal PATTERN: the web.yml on stdin is refused at start, one line.
expect_refusal() {
	local rc=0
	cat >"$WORK/bad.yml"
	timeout -s TERM 20 "$IOLAT" serve --web.listen-address="127.0.0.1:$(free_port)" \
		--web.config.file="$WORK/bad.yml" >/dev/null 2>"$WORK/err" || rc=$?
	{ [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]; } || fail "bad web config accepted: $(cat "$WORK/bad.yml")"
	[ "$(wc -l <"$WORK/err")" -eq 1 ] || fail "expected one line, got: $(cat "$WORK/err")"
	grep -qE "$1" "$WORK/err" || fail "'$(cat "$WORK/err")' lacks '$1'"
	echo "ok: refused: $(cat "$WORK/err")"
}
printf 'tls_server_config:\n  cert_file: %s/server.crt\n  key_file: %s/server.key\n  cipher_suite: []\n' "$WORK" "$WORK" |
	expect_refusal 'bad.yml:4:3: unknown key "cipher_suite" in tls_server_config \(known: .*cipher_suites'
printf 'http_server_config:\n  headers:\n    Server: iolat\n' |
	expect_refusal 'bad.yml:3:5: HTTP header "Server" cannot be configured'
printf 'http_server_config:\n  headers:\n    X-Frame-Options: allow\n' |
	expect_refusal 'bad.yml:3:22: invalid value "allow" for X-Frame-Options \(expected deny or sameorigin\)'
printf 'tls_server_config:\n  cert_file: %s/server.crt\n  key_file: %s/server.key\n  curve_preferences: [P256]\n' "$WORK" "$WORK" |
	expect_refusal 'bad.yml:4:23: unknown curve "P256"'
# A certificate and key swapped: the hint is about them, not the address.
printf 'tls_server_config:\n  cert_file: %s/server.key\n  key_file: %s/server.crt\n' "$WORK" "$WORK" |
	expect_refusal 'do not load .*\(check cert_file and key_file \(or cert and key\) in the web config'

# Every key the program knows (it names them when refusing an unknown one)
# is described in iolat.yml(5) and docs/serve.md.
for where in "" "tls_server_config:" "http_server_config:" "rate_limit:"; do
	if [ -n "$where" ]; then
		printf '%s\n  no_such_key: 1\n' "$where" >"$WORK/bad.yml"
	else
		printf 'no_such_key: 1\n' >"$WORK/bad.yml"
	fi
	"$IOLAT" serve --web.listen-address="127.0.0.1:$(free_port)" --web.config.file="$WORK/bad.yml" \
		2>"$WORK/err" >/dev/null && fail "no_such_key accepted"
	keys=$(sed -n 's/.*(known: \([^)]*\)).*/\1/p' "$WORK/err" | tr -d ',')
	[ -n "$keys" ] || fail "no known keys in: $(cat "$WORK/err")"
	for k in $keys; do
		grep -qE "(\*$k\*|^## $k$)" man/iolat.yml.5.scd || fail "iolat.yml(5) does not describe $k"
		grep -qE "(\`|\.)$k(\`|,|\.)" docs/serve.md || fail "docs/serve.md does not describe $k"
	done
done
echo "ok: every web config key is in iolat.yml(5) and docs/serve.md"
