# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The DaemonSet's TLS variants as kubectl renders them
# (deploy/kubernetes/tls and mtls), run for real: iolat serve with the
# rendered container's arguments and the rendered Secret's web.yml (its
# /etc/iolat/tls files made here by openssl as cert-manager lays them out:
# tls.crt, tls.key, ca.crt; tls/'s bcrypt hash swapped for one of a password
# of the test's), then
#  - each of the container's three probes done as the kubelet does it:
#    httpGet over the rendered scheme, without credentials or a client
#    certificate and without checking the certificate, must answer 2xx;
#    tcpSocket must connect;
#  - a scrape as the rendered PodMonitor of monitoring-tls and
#    monitoring-mtls makes it (its serverName checked against ca.crt, its
#    basic auth or client certificate) must get the metrics, and one
#    without the credentials must not.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh
for t in kubectl openssl curl; do
	command -v $t >/dev/null || skip "$t is not installed (scripts/deps.sh)"
done
python3 -c 'import yaml' 2>/dev/null || skip "python3 has no yaml module (python3-yaml)"

tls=$WORK/tls
mkdir -p "$tls"
# A CA, the pods' certificate for iolat.iolat.svc (monitoring-*'s
# serverName), and Prometheus' client certificate, all from that CA.
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=iolat-test-ca \
	-keyout "$tls/ca.key" -out "$tls/ca.crt" 2>/dev/null || fail "openssl: the CA"
# leaf NAME SAN: NAME.crt and NAME.key signed by the CA.
leaf() {
	printf 'subjectAltName=%s\n' "$2" >"$tls/$1.ext"
	if ! openssl req -newkey rsa:2048 -nodes -subj "/CN=$1" -keyout "$tls/$1.key" -out "$tls/$1.csr" 2>/dev/null ||
		! openssl x509 -req -in "$tls/$1.csr" -CA "$tls/ca.crt" -CAkey "$tls/ca.key" -CAcreateserial \
			-days 2 -extfile "$tls/$1.ext" -out "$tls/$1.crt" 2>/dev/null; then
		fail "openssl: $1's certificate"
	fi
}
leaf server DNS:iolat.iolat.svc
leaf client DNS:prometheus
cp "$tls/server.crt" "$tls/tls.crt"
cp "$tls/server.key" "$tls/tls.key"
password=test-$RANDOM-$RANDOM
hash=$(python3 -W ignore -c 'import crypt, sys; print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << 4)))' "$password")

# extract VARIANT MONITORING: from the renderings, $WORK/VARIANT.{args,web.yml,probes,scrape}.
extract() {
	kubectl kustomize "deploy/kubernetes/$1" >"$WORK/$1.yaml" 2>/dev/null || fail "kubectl kustomize deploy/kubernetes/$1"
	kubectl kustomize "deploy/kubernetes/$2" >"$WORK/$2.yaml" 2>/dev/null || fail "kubectl kustomize deploy/kubernetes/$2"
	python3 - "$WORK/$1.yaml" "$WORK/$2.yaml" "$WORK/$1" "$tls" "$hash" <<'PY' || fail "could not read the $1 rendering"
import base64, sys, yaml
objs = [o for o in yaml.safe_load_all(open(sys.argv[1])) if o]
mon = [o for o in yaml.safe_load_all(open(sys.argv[2])) if o]
out, tls, hash_ = sys.argv[3:6]
ds = [o for o in objs if o["kind"] == "DaemonSet"][0]
c = ds["spec"]["template"]["spec"]["containers"][0]
vols = {v["name"]: v for v in ds["spec"]["template"]["spec"]["volumes"]}
mounts = {m["mountPath"]: vols[m["name"]] for m in c["volumeMounts"]}
# The certificate's Secret: mounted where web.yml looks, named iolat-tls.
tls_dir = [p for p, v in mounts.items() if (v.get("secret") or {}).get("secretName") == "iolat-tls"][0]
web_arg = [a for a in c["args"] if a.startswith("--web.config.file=")][0].split("=", 1)[1]
web_dir, web_key = web_arg.rsplit("/", 1)
secret = [o for o in objs if o["kind"] == "Secret" and
          o["metadata"]["name"] == mounts[web_dir]["secret"]["secretName"]][0]
web = base64.b64decode("".join(secret["data"][web_key].split())).decode()
web = web.replace(tls_dir + "/", tls + "/")
w = yaml.safe_load(web)
for user in list((w or {}).get("basic_auth_users") or {}):
    web = web.replace(w["basic_auth_users"][user], hash_)
open(out + ".web.yml", "w").write(web)
open(out + ".users", "w").write("\n".join((w or {}).get("basic_auth_users") or {}))
args = [a for a in c["args"][1:] if not a.startswith(("--web.listen-address=", "--web.config.file=",
                                                      "--config.file=", "--handover"))]
open(out + ".args", "w").write("\n".join(args))
with open(out + ".probes", "w") as f:
    for p in ("startupProbe", "readinessProbe", "livenessProbe"):
        pr = c[p]
        if "httpGet" in pr:
            f.write("%s http %s %s\n" % (p, pr["httpGet"].get("scheme", "HTTP").lower(), pr["httpGet"]["path"]))
        else:
            f.write("%s tcp - -\n" % p)
ep = [o for o in mon if o["kind"] == "PodMonitor"][0]["spec"]["podMetricsEndpoints"][0]
tc = ep.get("tlsConfig") or {}
open(out + ".scrape", "w").write("%s %s %s %s %s\n" % (
    ep.get("scheme", "http"), ep.get("path", "/metrics"), tc.get("serverName", "-"),
    "basic" if ep.get("basicAuth") else "-", "cert" if tc.get("cert") else "-"))
PY
}

# variant VARIANT MONITORING: serve as the variant, probe and scrape it.
variant() {
	local v=$1 port pname kind scheme path code scrape_scheme spath sname auth cert out
	extract "$v" "$2"
	port=$(free_port)
	mapfile -t args <"$WORK/$v.args"
	start_serve "$WORK/$v.log" "${args[@]}" --config.file=deploy/kubernetes/base/iolat.yml \
		--web.config.file="$WORK/$v.web.yml" --web.listen-address="127.0.0.1:$port"
	while read -r pname kind scheme path; do
		if [ "$kind" = tcp ]; then
			timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" ||
				fail "$v: $pname: no TCP connection to the metrics port"
			echo "ok: $v: $pname: TCP connect"
			continue
		fi
		# The kubelet: no credentials, no client certificate, the
		# certificate not checked; 200-399 passes.
		code=$(curl -sk -o /dev/null -w '%{http_code}' "$scheme://127.0.0.1:$port$path") || code=000
		if [ "$code" -lt 200 ] || [ "$code" -ge 400 ]; then
			fail "$v: $pname: GET $scheme $path as the kubelet answered $code"
		fi
		echo "ok: $v: $pname: GET $scheme://…$path without credentials: $code"
	done <"$WORK/$v.probes"

	read -r scrape_scheme spath sname auth cert <"$WORK/$v.scrape"
	[ "$scrape_scheme" = https ] || fail "$v: $2 scrapes with $scrape_scheme"
	# As Prometheus with the PodMonitor's tlsConfig: the certificate checked
	# for serverName against ca.crt.
	local base=(-s --cacert "$tls/ca.crt" --resolve "$sname:$port:127.0.0.1")
	local creds=()
	[ "$auth" = basic ] && creds+=(-u "$(head -1 "$WORK/$v.users"):$password")
	[ "$cert" = cert ] && creds+=(--cert "$tls/client.crt" --key "$tls/client.key")
	[ ${#creds[@]} -gt 0 ] || fail "$v: $2 scrapes without credentials"
	out=$WORK/$v.metrics
	code=$(curl "${base[@]}" "${creds[@]}" -o "$out" -w '%{http_code}' "https://$sname:$port$spath") || code=000
	if [ "$code" != 200 ] || ! grep -q '^iolat_' "$out"; then
		fail "$v: a scrape as $2 answered $code"
	fi
	echo "ok: $v: a scrape as $2 ($auth $cert): 200, $(grep -c '^iolat_' "$out") iolat_ samples"
	code=$(curl "${base[@]}" -o /dev/null -w '%{http_code}' "https://$sname:$port$spath") || code=000
	case $code in 200) fail "$v: a scrape without credentials got the metrics" ;; esac
	echo "ok: $v: a scrape without credentials: refused (${code/000/no TLS session})"
	stop_serve "$v"
}

variant tls monitoring-tls
variant mtls monitoring-mtls
