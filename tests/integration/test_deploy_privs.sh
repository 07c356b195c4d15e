# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The privileges iolat is deployed with, read from the deployment files
# themselves and tried for real:
#  0. tests/install/check_deploy.sh: the manifests parse and agree;
#  1. the capabilities the DaemonSet adds (deploy/kubernetes/base/daemonset.yaml)
#     are the systemd unit's (contrib/iolat.service AmbientCapabilities= and
#     CapabilityBoundingSet=); both run iolat as a non-root user: the
#     DaemonSet's runAsUser/runAsGroup, the unit's user iolat (static or
#     dynamic);
#  2. as the systemd unit grants them (setpriv: that uid and gid, no
#     groups, the set ambient and bounding): `iolat hist 1 1`, `iolat
#     serve` (one scrape counting a loop device's reads exactly) and `iolat
#     trace -D 1` run; with any one of the set missing, each exits 1
#     naming it;
#  3. as a Kubernetes container runtime starts the pod (as_pod.py: bounding
#     set cut to the set, permitted and effective the set, no ambient,
#     no_new_privs, then execve) on a copy of iolat with the Containerfile's
#     file capabilities: the same runs succeed, serve's process holds
#     exactly the set with no_new_privs; with one missing from the pod's
#     set, exit 1 naming it; and iolat without the file capabilities has
#     none (what kubernetes/kubernetes#56374 is about);
#  4. --handover as the DaemonSet does it: its init container's script as
#     root with CAP_CHOWN alone, then serve as the pod, stopped and started
#     again (a rolling update's two pods): the second adopts the first's
#     pins, and I/O done while neither ran is counted.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh
command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
python3 -c 'import yaml' 2>/dev/null || skip "python3 has no yaml module (python3-yaml)"

# 0. The manifests themselves (no root needed: make check-deploy runs it too).
bash tests/install/check_deploy.sh || fail "check_deploy.sh"

# 1. The set and the user, from the files.
read -r ds_caps ds_uid ds_gid ds_mask < <(python3 - deploy/kubernetes/base/daemonset.yaml <<'PY'
import sys, yaml
ds = [o for o in yaml.safe_load_all(open(sys.argv[1])) if o and o.get("kind") == "DaemonSet"][0]
ps = ds["spec"]["template"]["spec"]
c = ps["containers"][0]
sc = dict(ps.get("securityContext") or {}, **(c.get("securityContext") or {}))
add = sorted(x.lower() for x in sc["capabilities"]["add"])
bit = {"perfmon": 38, "bpf": 39, "sys_admin": 21, "sys_resource": 24, "syslog": 34,
       "dac_read_search": 2, "net_bind_service": 10}
print(",".join(add), sc["runAsUser"], sc.get("runAsGroup", sc["runAsUser"]),
      "%016x" % sum(1 << bit[a] for a in add))
PY
)
[ -n "${ds_caps:-}" ] || fail "could not read the DaemonSet's capabilities and user"
unit_caps() {
	sed -n "s/^$1=//p" contrib/iolat.service | tr ' ' '\n' | sed -n 's/^CAP_//p' | tr '[:upper:]' '[:lower:]' | sort | paste -sd,
}
assert_eq "the unit's AmbientCapabilities= (as the DaemonSet's capabilities add)" "$ds_caps" "$(unit_caps AmbientCapabilities)"
assert_eq "the unit's CapabilityBoundingSet= (as the DaemonSet's capabilities add)" "$ds_caps" "$(unit_caps CapabilityBoundingSet)"
grep -qx 'DynamicUser=yes' contrib/iolat.service || fail "the unit does not run iolat as a dynamic user"
grep -qE '^User=(root|0)$' contrib/iolat.service && fail "the unit runs iolat as root"
{ [ "$ds_uid" -gt 0 ] && [ "$ds_gid" -gt 0 ]; } || fail "the DaemonSet runs iolat as uid $ds_uid gid $ds_gid"
echo "ok: the DaemonSet and the unit grant the same set: $ds_caps (CapEff $ds_mask); DaemonSet uid $ds_uid gid $ds_gid, the unit a dynamic user"
# A copy of iolat the user can reach, wherever the checkout is.
unpriv_iolat "$ds_uid" "$ds_gid"

# caps LIST [LEAVE]: LIST (a,b) less LEAVE, as setpriv wants it (+a,+b) or
# -all when nothing is left.
caps() {
	local c out=
	for c in ${1//,/ }; do [ "$c" = "${2:-}" ] || out+=${out:+,}+$c; done
	echo "${out:--all}"
}
# unit_wrap LIST: iolat as the unit runs it: the user, LIST ambient.
unit_wrap() {
	echo "setpriv --reuid=$ds_uid --regid=$ds_gid --clear-groups --inh-caps=-all,$1 --ambient-caps=$1 --bounding-set=-all,$1"
}
status_of() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
scrape() { curl -sf "http://127.0.0.1:$port/metrics" >"$1" || fail "scrape $1 failed"; }

make_loop 16
name=${LOOP#/dev/}

# runs WHO: hist, serve with one scrape, trace -D 1, each with WRAP.
runs() {
	local who=$1 reads=$((20 + RANDOM % 20))
	$WRAP "$IOLAT" hist 1 1 >"$WORK/hist.out" 2>&1 || fail "$who: hist 1 1: $(tail -3 "$WORK/hist.out")"
	port=$(free_port)
	start_serve "$WORK/serve.log" --web.listen-address="127.0.0.1:$port"
	assert_eq "$who: uid of serve" "$ds_uid" "$(status_of "$SERVE_PID" Uid)"
	assert_eq "$who: serve's effective capabilities" "$ds_mask" "$(status_of "$SERVE_PID" CapEff)"
	"$DIO" read "$LOOP" "$reads" 4096 || fail "dio read"
	scrape "$WORK/m"
	assert_eq "$who: completions of $name" "$reads" \
		"$(metric "$WORK/m" iolat_block_completions_total "{device=\"$name\",op=\"read\"}")"
	echo "$who: serve: CapEff $(status_of "$SERVE_PID" CapEff) CapPrm $(status_of "$SERVE_PID" CapPrm)" \
		"CapInh $(status_of "$SERVE_PID" CapInh) CapAmb $(status_of "$SERVE_PID" CapAmb)" \
		"CapBnd $(status_of "$SERVE_PID" CapBnd) NoNewPrivs $(status_of "$SERVE_PID" NoNewPrivs)"
	stop_serve "$who: serve"
	$WRAP "$IOLAT" trace -D 1 >"$WORK/trace.out" 2>"$WORK/trace.err" || fail "$who: trace -D 1: $(tail -3 "$WORK/trace.err")"
	echo "ok: $who: hist 1 1, serve (one scrape: $reads reads of $name), trace -D 1 ($(wc -l <"$WORK/trace.out") records)"
}
# missing WHO WRAPPER: with each capability of the set left out in turn
# (WRAPPER LIST gives the wrapper), hist, serve and trace exit 1 naming it.
missing() {
	local who=$1 wrapper=$2 c cmd
	for c in ${ds_caps//,/ }; do
		for cmd in "hist 1 1" "serve --web.listen-address=127.0.0.1:$(free_port)" "trace -D 1"; do
			# shellcheck disable=SC2086
			WRAP=$($wrapper "$(caps "$ds_caps" "$c")") expect_error 1 \
				"^iolat: missing CAP_${c^^}: loading BPF tracing programs .* takes CAP_BPF and CAP_PERFMON" $cmd
		done
	done
	echo "ok: $who: without any one of $ds_caps, exit 1 naming it"
}

# 2. As the systemd unit runs it.
WRAP=$(unit_wrap "$(caps "$ds_caps")") runs "as the unit"
missing "as the unit" unit_wrap

# 3. As the pod runs it: a copy of iolat with the image's file capabilities,
# somewhere they count (not a nosuid mount).
command -v setcap >/dev/null || skip "setcap (libcap2-bin) is not installed: the pod's way not tried"
fcaps=$(sed -n 's/.*setcap \([a-z_,]*=p\) .*/\1/p' Containerfile)
[ -n "$fcaps" ] || fail "no setcap ...=p in the Containerfile"
make_unpriv_dir "$ds_uid" "$ds_gid" suid
podbin=$UNPRIV_DIR
cp "$IOLAT" "$podbin/iolat-plain"
cp "$IOLAT" "$podbin/iolat"
setcap "$fcaps" "$podbin/iolat" || fail "setcap $fcaps"
echo "file capabilities (the Containerfile's): $(getcap "$podbin/iolat" 2>/dev/null || echo "$fcaps")"
# pod_wrap LIST: iolat as the pod runs it, LIST (setpriv's form) its set.
pod_wrap() {
	local l=${1//+/}
	echo "python3 $PWD/tests/integration/as_pod.py ${l/#-all/none} $ds_uid $ds_gid"
}
pod_wrap_all() { pod_wrap "$(caps "$ds_caps")"; }

IOLAT=$podbin/iolat WRAP=$(pod_wrap_all) runs "as the pod"
# shellcheck disable=SC2016 # $2 is awk's, escaped for the inner sh
assert_eq "as the pod: no_new_privs (allowPrivilegeEscalation: false)" 1 \
	"$($(pod_wrap_all) /bin/sh -c 'exec awk "/^NoNewPrivs:/ { print \$2 }" /proc/self/status')"
IOLAT=$podbin/iolat missing "as the pod" pod_wrap
# The same without the file capabilities: nothing survives the execve.
IOLAT=$podbin/iolat-plain WRAP=$(pod_wrap_all) expect_error 1 \
	"^iolat: missing CAP_BPF and CAP_PERFMON: " hist 1 1
echo "ok: as the pod, iolat without file capabilities has none: the image needs them"

# 4. --handover as the DaemonSet does it: its init container's script (from
# the manifest) as root with only its capabilities (CAP_CHOWN), then the
# container's serve (its args, the port made a free one) as the pod runs it;
# stopped (SIGTERM, as a rolling update stops the old pod) and started again
# (the new pod) after the init script ran again: the second adopts what the
# first pinned, both as uid $ds_uid. The host's /sys/fs/bpf and /run/iolat
# are the pod's at the same paths (hostPath), so running both here is what
# the pod does. bpffs is mounted on /sys/fs/bpf if it is not (a node's
# systemd does at boot), and unmounted after; the pins are removed after.
python3 - deploy/kubernetes/base/daemonset.yaml "$WORK" <<'PY' || fail "could not read the DaemonSet's init container and args"
import sys, yaml
ds = [o for o in yaml.safe_load_all(open(sys.argv[1])) if o and o.get("kind") == "DaemonSet"][0]
ps = ds["spec"]["template"]["spec"]
ic = ps["initContainers"][0]
cmd = ic["command"]
assert cmd[:2] == ["/bin/sh", "-ec"] and len(cmd) == 3, cmd
open(sys.argv[2] + "/init.sh", "w").write(cmd[2])
open(sys.argv[2] + "/init.caps", "w").write(",".join(c.lower() for c in ic["securityContext"]["capabilities"]["add"]))
open(sys.argv[2] + "/init.uid", "w").write(str(ic["securityContext"]["runAsUser"]))
# The ConfigMap and Secret volumes' mount points become PODCFG/VOLUME, where
# the test puts the kustomization's files (base/iolat.yml, base/web.yml).
mounts = {m["mountPath"]: m["name"] for m in ps["containers"][0]["volumeMounts"]}
vols = {v["name"]: v for v in ps["volumes"]}
assert vols["config"]["configMap"]["name"] == "iolat-config", vols["config"]
assert vols["web-config"]["secret"]["secretName"] == "iolat-web-config", vols["web-config"]
def local(a):
    for mp, name in mounts.items():
        if ("configMap" in vols[name] or "secret" in vols[name]) and "=" in a and \
                a.split("=", 1)[1].startswith(mp + "/"):
            return a.replace("=" + mp + "/", "=PODCFG/" + name + "/", 1)
    return a
open(sys.argv[2] + "/args", "w").write("\n".join(local(a) for a in ps["containers"][0]["args"][1:]
                                               if not a.startswith("--web.listen-address=")))
PY
grep -qx -- --handover "$WORK/args" || fail "the DaemonSet's serve runs without --handover"
if ! mountpoint -q /sys/fs/bpf; then
	mount -t bpf -o mode=0700 bpf /sys/fs/bpf || fail "cannot mount bpffs on /sys/fs/bpf"
	on_exit "umount /sys/fs/bpf"
fi
[ -e /sys/fs/bpf/iolat/serve ] || [ -e /run/iolat/serve ] &&
	skip "/sys/fs/bpf/iolat/serve or /run/iolat/serve exists: someone's pins"
on_exit "chmod $(stat -c %a /sys/fs/bpf) /sys/fs/bpf"
for d in /sys/fs/bpf/iolat /run/iolat; do
	if [ -e $d ]; then
		on_exit "mkdir -p $d; chown $(stat -c %u:%g $d) $d; chmod $(stat -c %a $d) $d"
	else
		on_exit "rmdir $d"
	fi
done
on_exit "$IOLAT serve --unpin"
# The pod's iolat.yml and web.yml (ConfigMap and Secret: root's, 0444 and
# 0440 with group fsGroup) where the pod's uid reaches them.
mkdir -p "$podbin/config" "$podbin/web-config"
install -m 0444 deploy/kubernetes/base/iolat.yml "$podbin/config/iolat.yml"
install -m 0440 -g "$ds_gid" deploy/kubernetes/base/web.yml "$podbin/web-config/web.yml"
mapfile -t pod_args < <(sed "s#=PODCFG/#=$podbin/#" "$WORK/args")
for want in "--config.file=$podbin/config/iolat.yml" "--web.config.file=$podbin/web-config/web.yml"; do
	printf '%s\n' "${pod_args[@]}" | grep -qxF -- "$want" ||
		fail "the DaemonSet's serve args ${pod_args[*]} have no ${want%%=*} from its volume"
done
# pod_start N: the init container, then the pod's serve, log $WORK/pod.N.log.
pod_start() {
	python3 tests/integration/as_pod.py "$(cat "$WORK/init.caps")" "$(cat "$WORK/init.uid")" 0 \
		/bin/sh -ec "$(cat "$WORK/init.sh")" >"$WORK/init.log" 2>&1 ||
		fail "the init container's script: $(cat "$WORK/init.log")"
	port=$(free_port)
	WRAP=$(pod_wrap_all) IOLAT=$podbin/iolat start_serve "$WORK/pod.$1.log" "${pod_args[@]}" \
		--web.listen-address="127.0.0.1:$port"
	assert_eq "pod $1: uid of serve" "$ds_uid" "$(status_of "$SERVE_PID" Uid)"
}
pod_stop() {
	local rc=0
	kill -TERM "$SERVE_PID"
	wait "$SERVE_PID" || rc=$?
	assert_eq "pod $1: exit status" 0 "$rc"
}
pod_start 1
grep -q 'collector pinned: a restart within the lease adopts it" dir=/sys/fs/bpf/iolat/serve ' "$WORK/pod.1.log" ||
	fail "the pod pinned nothing: $(tail -3 "$WORK/pod.1.log")"
reads=$((20 + RANDOM % 20))
"$DIO" read "$LOOP" "$reads" 4096 || fail "dio read"
pod_stop 1
# Between the pods: counted by the pinned collector alone.
"$DIO" read "$LOOP" "$reads" 4096 || fail "dio read"
pod_start 2
grep -q 'msg="adopted the pinned collector" dir=/sys/fs/bpf/iolat/serve' "$WORK/pod.2.log" ||
	fail "the new pod did not adopt the pins: $(grep -iE 'pin|warn|error' "$WORK/pod.2.log" | tail -3)"
scrape "$WORK/m2"
assert_eq "pod 2: completions of $name since pod 1 started (none lost between the pods)" $((2 * reads)) \
	"$(metric "$WORK/m2" iolat_block_completions_total "{device=\"$name\",op=\"read\"}")"
pod_stop 2
echo "ok: as the DaemonSet runs it, a new pod adopts what the old one pinned ($((2 * reads)) reads of $name, half while no pod ran)"
