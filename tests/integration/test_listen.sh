# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Listen addresses as node_exporter's (docs/serve.md, "Listen addresses"),
# scraped with curl over loopback:
#   - ":P" and "[::]:P" serve [::1] and 127.0.0.1 from one dual-stack
#     socket; "0.0.0.0:P" and "127.0.0.1:P" refuse IPv6, "[::1]:P" refuses
#     IPv4; a host name serves every address it resolves to (a private
#     /etc/hosts in a mount namespace gives it ::1 and 127.0.0.1); all of
#     them in one serve, from several --web.listen-address flags;
#   - a reload adds an address and keeps the dual-stack socket;
#   - overlapping or repeated addresses, a name resolving to one given too,
#     an address in use, an unbracketed IPv6 address: one line each;
#   - in a network namespace with IPv6 off (net.ipv6.conf.all.disable_ipv6=1)
#     ":P" falls back to an IPv4 socket, says so, and serves 127.0.0.1;
#     "[::1]:P" there is refused with one line.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh

python3 -c 'import socket; s=socket.socket(socket.AF_INET6); s.bind(("::1",0))' 2>/dev/null ||
	skip "no IPv6 on loopback here"

# code URL [NETNS]: the HTTP status of a GET of URL, 000 if it did not connect.
code() {
	local run=()
	[ -n "${2:-}" ] && run=(ip netns exec "$2")
	"${run[@]}" curl -s -g -m 5 -o "$WORK/body" -w '%{http_code}' "$1" || true
}
# serves URL [NETNS]: /metrics answers 200 with iolat's metrics.
serves() {
	assert_eq "GET $1" 200 "$(code "$1/metrics" "${2:-}")"
	grep -q '^iolat_build_info' "$WORK/body" || fail "$1/metrics: no iolat metrics"
}
# refuses URL: nothing listens there (curl cannot connect).
refuses() { assert_eq "GET $1 (nothing should listen)" 000 "$(code "$1/metrics")"; }
# sockets PORT: the listening TCP sockets on PORT, as "v4" or "v6" lines.
sockets() {
	local hex
	hex=$(printf '%04X' "$1")
	awk -v p=":$hex" '$4 == "0A" && substr($2, length($2) - 4) == p { print "v4" }' /proc/net/tcp
	awk -v p=":$hex" '$4 == "0A" && substr($2, length($2) - 4) == p { print "v6" }' /proc/net/tcp6
}
listen_inode() {
	awk -v p=":$(printf '%04X' "$1")" '$4 == "0A" && substr($2, length($2) - 4) == p { print $10 }' \
		/proc/net/tcp /proc/net/tcp6
}

# One serve, every kind of address. The name resolves through a hosts file
# of its own, bind-mounted over /etc/hosts in a mount namespace of iolat's.
ports=()
for _ in 1 2 3 4 5 6 7; do ports+=("$(free_port)"); done
read -r pany pv6any pv4any pv4 pv6 pname padd <<<"${ports[*]}"
[ "$(printf '%s\n' "${ports[@]}" | sort -u | wc -l)" = 7 ] || fail "free_port gave a port twice: ${ports[*]}"
name=iolat-listen-test
printf '::1 %s\n127.0.0.1 %s\n' "$name" "$name" >"$WORK/hosts"
cat >"$WORK/wrap.sh" <<EOF
mount --bind "$WORK/hosts" /etc/hosts && exec "\$@"
EOF
printf 'web:\n  listen_addresses: [":%s", "[::]:%s", "0.0.0.0:%s", "127.0.0.1:%s", "[::1]:%s", "%s:%s"]\n' \
	"$pany" "$pv6any" "$pv4any" "$pv4" "$pv6" "$name" "$pname" >"$WORK/iolat.yml"
WRAP="unshare -m bash $WORK/wrap.sh" start_serve "$WORK/serve.log" --config.file="$WORK/iolat.yml"

serves "http://[::1]:$pany"
serves "http://127.0.0.1:$pany"
assert_eq ":$pany: one IPv6 socket" "v6" "$(sockets "$pany" | tr '\n' ' ' | xargs)"
grep -q "msg=\"listen address\" address=:$pany note=\"IPv6 and IPv4 on one dual-stack socket (\[::\]:$pany)\"" "$WORK/serve.log" ||
	fail "the log does not say :$pany is dual-stack: $(cat "$WORK/serve.log")"
echo "ok: :$pany serves [::1] and 127.0.0.1 from one dual-stack socket, and says so"
serves "http://[::1]:$pv6any"
serves "http://127.0.0.1:$pv6any"
assert_eq "[::]:$pv6any: one IPv6 socket" "v6" "$(sockets "$pv6any" | tr '\n' ' ' | xargs)"
echo "ok: [::]:$pv6any is dual-stack too, as node_exporter's"
serves "http://127.0.0.1:$pv4any"
refuses "http://[::1]:$pv4any"
serves "http://127.0.0.1:$pv4"
refuses "http://[::1]:$pv4"
serves "http://[::1]:$pv6"
refuses "http://127.0.0.1:$pv6"
echo "ok: 0.0.0.0:$pv4any and 127.0.0.1:$pv4 are IPv4 only, [::1]:$pv6 IPv6 only"
serves "http://[::1]:$pname"
serves "http://127.0.0.1:$pname"
assert_eq "$name:$pname: a socket per address" "v4 v6" "$(sockets "$pname" | sort | tr '\n' ' ' | xargs)"
grep -q "msg=\"listen address\" address=$name:$pname note=\"\[::1\]:$pname (resolved from $name)\"" "$WORK/serve.log" ||
	fail "the log does not name [::1]: $(cat "$WORK/serve.log")"
grep -q "msg=\"listen address\" address=$name:$pname note=\"127.0.0.1:$pname (resolved from $name)\"" "$WORK/serve.log" ||
	fail "the log does not name 127.0.0.1: $(cat "$WORK/serve.log")"
echo "ok: $name:$pname serves both addresses it resolves to"

# A reload adds an address; the dual-stack socket stays the same socket.
sock=$(listen_inode "$pany")
printf 'web:\n  listen_addresses: [":%s", "127.0.0.1:%s"]\n' "$pany" "$padd" >"$WORK/iolat.yml"
kill -HUP "$SERVE_PID"
wait_for_line "$WORK/serve.log" 'configuration reloaded' 5 || fail "no reload: $(tail -3 "$WORK/serve.log")"
serves "http://127.0.0.1:$padd"
serves "http://[::1]:$pany"
serves "http://127.0.0.1:$pany"
assert_eq ":$pany kept across the reload" "$sock" "$(listen_inode "$pany")"
refuses "http://[::1]:$pv6"
refuses "http://127.0.0.1:$pname"
echo "ok: a reload adds 127.0.0.1:$padd, keeps :$pany's socket and closes the rest"
# An overlapping reload fails as a whole, and says why.
printf 'web:\n  listen_addresses: [":%s", "127.0.0.1:%s", "127.0.0.1:%s"]\n' "$pany" "$padd" "$pany" >"$WORK/iolat.yml"
kill -HUP "$SERVE_PID"
wait_for_line "$WORK/serve.log" "listen addresses ':$pany' and '127.0.0.1:$pany' overlap" 5 ||
	fail "no overlap logged: $(tail -3 "$WORK/serve.log")"
serves "http://127.0.0.1:$padd"
serves "http://[::1]:$pany"
echo "ok: an overlapping reload is refused and the listeners stay"
stop_serve "serve with every kind of address"

# Mistakes: one line each.
p=$(free_port)
expect_error 2 "^iolat: listen addresses ':$p' and '127.0.0.1:$p' overlap: ':$p' already takes every IPv6 and IPv4 address on port $p; give one of them" \
	serve --web.listen-address=":$p" --web.listen-address="127.0.0.1:$p"
expect_error 2 "^iolat: listen addresses '0.0.0.0:$p' and '127.0.0.1:$p' overlap: '0.0.0.0:$p' already takes every IPv4 address" \
	serve --web.listen-address="0.0.0.0:$p" --web.listen-address="127.0.0.1:$p"
expect_error 2 "^iolat: listen address '\[::1\]:$p' is given twice: give it once" \
	serve --web.listen-address="[::1]:$p" --web.listen-address="[::1]:$p"
expect_error 2 "^iolat: bad listen address '::1:$p': write an IPv6 address in brackets, as \[::1\]:$p" \
	serve --web.listen-address="::1:$p"
expect_error 2 "^iolat: listen addresses 'localhost:$p' and '127.0.0.1:$p' are the same address \(127.0.0.1:$p\)" \
	serve --web.listen-address="localhost:$p" --web.listen-address="127.0.0.1:$p"
python3 -c 'import socket,sys,time; s=socket.socket(socket.AF_INET6); s.bind(("::1", int(sys.argv[1]))); s.listen(); time.sleep(60)' "$p" &
holder=$!
on_exit "kill $holder"
for _ in $(seq 1 30); do [ -n "$(sockets "$p")" ] && break; sleep 0.1; done
[ "$(sockets "$p")" = v6 ] || fail "the holder did not listen on [::1]:$p"
expect_error 1 "^iolat: cannot listen on ':$p': the address is in use" serve --web.listen-address=":$p"
kill "$holder"

# IPv6 off: a network namespace of our own with net.ipv6.conf.all.disable_ipv6=1.
ns=iolat-listen-$$
ip netns add "$ns" || skip "cannot make a network namespace"
on_exit "ip netns del $ns"
ip netns exec "$ns" ip link set lo up
ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
p=$(free_port)
WRAP="ip netns exec $ns" start_serve "$WORK/v4.log" --web.listen-address=":$p"
grep -q "msg=\"listen address\" address=:$p note=\"IPv4 only (0.0.0.0:$p): IPv6 is off on this host (\[::1\] cannot be bound: Cannot assign requested address" "$WORK/v4.log" ||
	fail "the fallback is not logged: $(cat "$WORK/v4.log")"
serves "http://127.0.0.1:$p" "$ns"
assert_eq "the namespace's socket on $p" "v4" "$(ip netns exec "$ns" bash -c "$(declare -f sockets); sockets $p" | xargs)"
stop_serve "serve with IPv6 off"
echo "ok: with IPv6 off :$p falls back to 0.0.0.0:$p, says so, and serves 127.0.0.1"
WRAP="ip netns exec $ns" expect_error 1 "^iolat: cannot listen on '\[::1\]:$p': not an address of this host \(or IPv6 is off here\)" \
	serve --web.listen-address="[::1]:$p"
