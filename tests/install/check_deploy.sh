#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# check_deploy.sh - the Kubernetes manifests (deploy/kubernetes) as
# kubectl renders them, against the Kubernetes schemas, each other, the
# systemd unit, the Containerfile and the mixin. No root, no cluster; `make
# check-deploy` runs it. Needs python3 with PyYAML (exit 77 without), and
# kubectl, node and npm (scripts/deps.sh installs them); the first run
# installs tests/install/kube-validate's npm packages (npm ci, from its
# package-lock.json) into a cache outside the checkout.
#   - every kustomization (the base, deploy/kubernetes itself, and each
#     optional part) renders with `kubectl kustomize`: with each kubectl in
#     $KUBECTL (default: the one on PATH), and with Debian 12's kubectl 1.20
#     (kustomize v2.0.3, the oldest the manifests are written for) too,
#     fetched once with `apt-get download kubernetes-client` into the cache
#     when the kubectl on PATH is another (where that fails it says so and
#     goes on); each kustomization uses only what kustomize v2.0.3 knows, and
#     every file in its directory is one it reads or names in a comment;
#   - every rendered object validates against the Kubernetes OpenAPI schemas
#     (kube-validate/validate.js: the npm packages kubernetes-models and, for
#     PodMonitor and PrometheusRule, @kubernetes-models/prometheus-operator;
#     unknown fields fail too), and copies of the manifests broken on purpose
#     (a misspelt container field, a bad enum value, a misspelt PodMonitor
#     and NetworkPolicy field) fail it, each naming what is wrong;
#   - no CRD kind outside monitoring*/, and nothing else in them; objects of
#     known kinds, apiVersions and names, in namespace iolat;
#   - each DaemonSet (base, tls, mtls, kernel-5.10): its selector matches its
#     pods' labels; Linux nodes only (nodeSelector), a system priority
#     class and a ResourceQuota scoped to it, maxUnavailable a percentage
#     and maxSurge 0; non-root
#     (runAsNonRoot, fixed non-zero runAsUser and runAsGroup, fsGroup the
#     group), no privilege escalation, read-only root, seccomp
#     RuntimeDefault, capabilities drop ALL and add the unit's
#     (contrib/iolat.service AmbientCapabilities= and
#     CapabilityBoundingSet=), plus SYS_RESOURCE in kernel-5.10 alone, not
#     privileged, no host network, PID or IPC namespace; hostPath volumes
#     read-only, but for --handover's: `serve --handover`, the host's
#     /sys/fs/bpf (HostToContainer) and /run/iolat writable at the same
#     paths, one init container (the container's image, drop ALL, add CHOWN
#     alone) that makes them over to runAsUser:runAsGroup; `serve`
#     listening on the port it declares; --config.file and --web.config.file
#     are files of the ConfigMap and Secret mounted read-only (the Secret not
#     world-readable); the ConfigMap's iolat.yml is contrib/iolat.yml and
#     each Secret's web.yml the one beside its kustomization; every file
#     web.yml names is on a Secret mounted read-only; the probes fit
#     web.yml: /-/healthy and /-/ready over HTTP, over HTTPS with
#     tls_server_config, TCP connects when client certificates are
#     required; resource requests at most the limits;
#   - the Service, NetworkPolicy, PodMonitor and ServiceMonitor select the
#     pods and name that port; the Service's prometheus.io annotations say
#     the same port and scheme; the NetworkPolicy admits only sources it
#     names (a namespace and pods) and no egress; each monitoring part
#     scrapes as its variant serves (monitoring: HTTP; monitoring-tls:
#     HTTPS, CA, basic auth; monitoring-mtls: HTTPS, CA, client
#     certificate); deploy/kubernetes renders as base/ does;
#   - the Containerfile's USER is runAsUser:runAsGroup, it EXPOSEs the port,
#     and its setcap grants exactly what the DaemonSets add, all of them;
#   - prometheusrule.yaml's groups are the mixin's rendered rules and alerts
#     (scripts/gen_prometheusrule.sh), and promtool, when there, accepts them.
# Prints the container's capabilities and user.
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.." || exit 1
command -v python3 >/dev/null || { echo "check_deploy: SKIP: no python3" >&2; exit 77; }
python3 -c 'import yaml' 2>/dev/null ||
	{ echo "check_deploy: SKIP: python3 has no yaml module (apt-get install python3-yaml)" >&2; exit 77; }
for t in kubectl node npm; do
	command -v $t >/dev/null ||
		{ echo "check_deploy: FAIL: no $t: scripts/deps.sh installs it (kubernetes-client, nodejs, npm)" >&2; exit 1; }
done
work=$(mktemp -d /tmp/iolat-check-deploy.XXXXXX)
trap 'rm -rf "$work"' EXIT
cache=${IOLAT_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-$PWD/build}/.cache}/iolat}
mkdir -p "$cache" || { echo "check_deploy: FAIL: cannot make $cache (set IOLAT_CACHE_DIR)" >&2; exit 1; }

# kubectl_version K: its client's gitVersion (v1.20.2, v1.32.4-...).
kubectl_version() {
	"$1" version --client -o json 2>/dev/null |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["clientVersion"]["gitVersion"])' 2>/dev/null
}
read -ra kubectls <<<"${KUBECTL:-kubectl}"
# Debian 12's kubectl 1.20 as well, unless one of those is it.
old=no
for k in "${kubectls[@]}"; do
	case $(kubectl_version "$k") in v1.20.*) old=yes ;; esac
done
if [ $old = no ]; then
	deb_kubectl=$cache/kubernetes-client-1.20/usr/bin/kubectl
	if [ ! -x "$deb_kubectl" ]; then
		tmp=$(mktemp -d "$cache/kubernetes-client.XXXXXX")
		if (cd "$tmp" && apt-get download -q kubernetes-client >"$tmp/log" 2>&1 &&
			dpkg -x kubernetes-client_1.20.*.deb x && rm -f ./*.deb) 2>>"$tmp/log" &&
			[ -x "$tmp/x/usr/bin/kubectl" ]; then
			mv -T "$tmp/x" "$cache/kubernetes-client-1.20" 2>/dev/null
		else
			echo "check_deploy: note: Debian's kubectl 1.20 (apt-get download kubernetes-client) not had:" \
				"$(tail -1 "$tmp/log")"
		fi
		rm -rf "$tmp"
	fi
	[ -x "$deb_kubectl" ] && kubectls+=("$deb_kubectl")
fi

# 1. Render every kustomization with every kubectl: render/N/PART.yaml.
mapfile -t parts < <(find deploy/kubernetes -name kustomization.yaml -printf '%h\n' | sort)
rc=0
: >"$work/renders"
for i in "${!kubectls[@]}"; do
	k=${kubectls[$i]}
	v=$(kubectl_version "$k")
	mkdir -p "$work/render/$i"
	for d in "${parts[@]}"; do
		p=${d#deploy/kubernetes}
		p=${p#/}
		out=$work/render/$i/${p:-.}.yaml
		if "$k" kustomize "$d" >"$out" 2>"$work/err"; then
			echo "$v ${p:-.} $out" >>"$work/renders"
		else
			echo "check_deploy: FAIL: kubectl $v kustomize $d: $(grep -v '^# Warning' "$work/err" | head -3)" >&2
			rc=1
		fi
	done
	echo "check_deploy: kubectl $v ($k) rendered ${#parts[@]} kustomizations"
done

# 2. The rendered objects and the files, checked against each other; each
# rendering also as JSON (render/N/PART.json) for the schema validation.
python3 - deploy/kubernetes contrib/iolat.service Containerfile "$work" <<'PY' || rc=1
import base64, glob, json, os, re, sys
import yaml

d, unit_path, containerfile, work = sys.argv[1:5]
errors = []
def err(msg):
    errors.append(msg)
    print("check_deploy: FAIL: " + msg, file=sys.stderr)

KINDS = {  # kind: (apiVersion, namespaced)
    "Namespace": ("v1", False), "ServiceAccount": ("v1", True), "Service": ("v1", True),
    "ConfigMap": ("v1", True), "Secret": ("v1", True), "ResourceQuota": ("v1", True),
    "DaemonSet": ("apps/v1", True), "NetworkPolicy": ("networking.k8s.io/v1", True),
    "PodMonitor": ("monitoring.coreos.com/v1", True),
    "ServiceMonitor": ("monitoring.coreos.com/v1", True),
    "PrometheusRule": ("monitoring.coreos.com/v1", True),
}
CRD_GROUP = "monitoring.coreos.com/"

# The kustomizations themselves: only what kustomize v2.0.3 (kubectl 1.20)
# knows; files it reads are in its directory; every file there is read by it
# or named in one of its comments.
V2_KEYS = {"apiVersion", "kind", "resources", "bases", "namespace", "namePrefix", "nameSuffix",
           "commonLabels", "commonAnnotations", "patchesStrategicMerge", "patchesJson6902",
           "configMapGenerator", "secretGenerator", "generatorOptions", "images", "vars", "crds"}
for kf in sorted(glob.glob(os.path.join(d, "**", "kustomization.yaml"), recursive=True)):
    kd = os.path.dirname(kf)
    kz = yaml.safe_load(open(kf)) or {}
    if kz.get("apiVersion") != "kustomize.config.k8s.io/v1beta1" or kz.get("kind") != "Kustomization":
        err("%s: not a kustomize.config.k8s.io/v1beta1 Kustomization" % kf)
    for key in sorted(set(kz) - V2_KEYS):
        err("%s: %s: kustomize v2.0.3 (kubectl 1.20) does not know it" % (kf, key))
    read = list(kz.get("resources") or []) + list(kz.get("patchesStrategicMerge") or [])
    read += [p.get("path") for p in kz.get("patchesJson6902") or []]
    for g in (kz.get("configMapGenerator") or []) + (kz.get("secretGenerator") or []):
        read += [f.split("=", 1)[-1] for f in g.get("files") or []]
    for f in read:
        if not f or "/" in f or not os.path.isfile(os.path.join(kd, f)):
            err("%s reads %r: not a file in its directory (kustomize v2.0.3 reads no other)" % (kf, f))
    for b in kz.get("bases") or []:
        bd = os.path.normpath(os.path.join(kd, b))
        if not os.path.isfile(os.path.join(bd, "kustomization.yaml")):
            err("%s: base %s has no kustomization.yaml" % (kf, b))
        elif os.path.abspath(kd).startswith(os.path.abspath(bd) + os.sep):
            err("%s: base %s holds it (kustomize refuses that as a cycle)" % (kf, b))
    comments = " ".join(l for l in open(kf) if l.lstrip().startswith("#"))
    for f in sorted(os.listdir(kd)):
        if os.path.isfile(os.path.join(kd, f)) and f != "kustomization.yaml" and f not in read \
                and f not in comments:
            err("%s is neither read by %s nor named in its comments" % (os.path.join(kd, f), kf))
    for im in kz.get("images") or []:
        if im.get("name") != "iolat":
            err("%s: image %r is not the DaemonSet's (iolat)" % (kf, im.get("name")))

# Every rendering: {(kubectl version, part): [objects]}.
renders = {}
for line in open(os.path.join(work, "renders")):
    ver, part, path = line.split()
    try:
        objs = [o for o in yaml.safe_load_all(open(path)) if o is not None]
    except yaml.YAMLError as e:
        err("%s %s: the rendering does not parse: %s" % (ver, part, e))
        continue
    renders[(ver, part)] = objs
    json.dump({"source": "%s (kubectl %s)" % (part, ver), "objects": objs},
              open(path[:-len(".yaml")] + ".json", "w"))
versions = sorted({v for v, _ in renders})

def of(objs, kind):
    return [o for o in objs if o.get("kind") == kind]
def one(objs, kind, where):
    lst = of(objs, kind)
    if len(lst) != 1:
        err("%s: expected one %s, found %d" % (where, kind, len(lst)))
        return None
    return lst[0]

def caps_of_unit(key):
    vals = []
    for l in open(unit_path):
        if l.startswith(key + "="):
            vals += l.strip().split("=", 1)[1].split()
    return {v.upper().removeprefix("CAP_") for v in vals}
unit_caps = caps_of_unit("AmbientCapabilities")
if unit_caps != caps_of_unit("CapabilityBoundingSet"):
    err("the unit's AmbientCapabilities= %s and CapabilityBoundingSet= %s differ"
        % (sorted(unit_caps), sorted(caps_of_unit("CapabilityBoundingSet"))))

units = {"": 1, "m": 1e-3, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "k": 1e3, "M": 1e6, "G": 1e9}
def qty(v):
    m = re.fullmatch(r"([0-9.]+)([A-Za-z]*)", str(v))
    return float(m.group(1)) * units[m.group(2)] if m and m.group(2) in units else None

def data_of(o, key):
    """A ConfigMap's or Secret's file, as text."""
    if o.get("kind") == "Secret":
        v = (o.get("data") or {}).get(key)
        return None if v is None else base64.b64decode("".join(v.split())).decode()
    return (o.get("data") or {}).get(key)

def web_source(kd):
    """The web.yml kustomization directory kd puts in the Secret: its own
    secretGenerator's, else its base's."""
    for _ in range(10):
        kz = yaml.safe_load(open(os.path.join(kd, "kustomization.yaml"))) or {}
        for g in kz.get("secretGenerator") or []:
            for f in g.get("files") or []:
                if f.split("=", 1)[0] == "web.yml":
                    return os.path.join(kd, f.split("=", 1)[-1])
        if not kz.get("bases"):
            return None
        kd = os.path.normpath(os.path.join(kd, kz["bases"][0]))
    return None

added = {}         # part -> the container's added capabilities
webs = {}          # part -> its web.yml, parsed
seen_pods = {}     # part -> the pods' labels
HANDOVER = {"/sys/fs/bpf": "Directory", "/run/iolat": "DirectoryOrCreate"}

def check_workload(where, part, objs):
    ds = one(objs, "DaemonSet", where)
    if not ds:
        return
    spec = ds["spec"]
    tmpl = spec["template"]
    pod_labels = tmpl["metadata"].get("labels") or {}
    seen_pods[part] = pod_labels
    sel = spec["selector"].get("matchLabels") or {}
    if not sel or any(pod_labels.get(k) != v for k, v in sel.items()):
        err("%s: DaemonSet selector %s does not match its pods' labels %s" % (where, sel, pod_labels))
    ps = tmpl["spec"]
    psc = ps.get("securityContext") or {}
    for k in ("hostNetwork", "hostPID", "hostIPC"):
        if ps.get(k):
            err("%s: DaemonSet: %s is true" % (where, k))
    if ps.get("automountServiceAccountToken") is not False:
        err("%s: DaemonSet: automountServiceAccountToken is not false (iolat uses no API)" % where)
    if (ps.get("nodeSelector") or {}).get("kubernetes.io/os") != "linux":
        err("%s: DaemonSet: no nodeSelector kubernetes.io/os: linux (it tolerates every taint)" % where)
    if ps.get("priorityClassName") not in ("system-cluster-critical", "system-node-critical"):
        err("%s: DaemonSet: priorityClassName %r is not a system class" % (where, ps.get("priorityClassName")))
    cs = ps.get("containers") or []
    if len(cs) != 1:
        err("%s: DaemonSet: %d containers, expected 1" % (where, len(cs)))
    c = cs[0] if cs else {}
    sc = dict(psc, **(c.get("securityContext") or {}))  # the container's win
    uid, gid = sc.get("runAsUser"), sc.get("runAsGroup")
    if sc.get("runAsNonRoot") is not True:
        err("%s: DaemonSet: runAsNonRoot is not true" % where)
    if not isinstance(uid, int) or uid <= 0 or not isinstance(gid, int) or gid <= 0:
        err("%s: DaemonSet: runAsUser %r / runAsGroup %r: expected fixed non-zero ids" % (where, uid, gid))
    if psc.get("fsGroup") != gid:
        err("%s: DaemonSet: fsGroup %r is not runAsGroup %r (the web config is 0440)" % (where, psc.get("fsGroup"), gid))
    if sc.get("allowPrivilegeEscalation") is not False:
        err("%s: DaemonSet: allowPrivilegeEscalation is not false" % where)
    if sc.get("readOnlyRootFilesystem") is not True:
        err("%s: DaemonSet: readOnlyRootFilesystem is not true" % where)
    if sc.get("privileged"):
        err("%s: DaemonSet: privileged" % where)
    if (sc.get("seccompProfile") or {}).get("type") != "RuntimeDefault":
        err("%s: DaemonSet: seccompProfile is not RuntimeDefault" % where)
    capsc = sc.get("capabilities") or {}
    add = set(capsc.get("add") or [])
    added[part] = add
    if capsc.get("drop") != ["ALL"]:
        err("%s: DaemonSet: capabilities drop %r, not [ALL]" % (where, capsc.get("drop")))
    want = unit_caps | ({"SYS_RESOURCE"} if part.startswith("kernel-") else set())
    if add != want:
        err("%s: DaemonSet adds %s, expected %s (the unit's AmbientCapabilities=%s%s)"
            % (where, sorted(add), sorted(want), sorted(unit_caps),
               ", and SYS_RESOURCE for this kernel" if part.startswith("kernel-") else ""))
    args = c.get("args") or []
    listen = [a.split("=", 1)[1] for a in args if a.startswith("--web.listen-address=")]
    if not args or args[0] != "serve":
        err("%s: DaemonSet: args %r do not start with serve" % (where, args))
    cports = {p.get("name"): p.get("containerPort") for p in c.get("ports") or []}
    port = cports.get("metrics")
    if port is None:
        err("%s: DaemonSet: no container port named metrics" % where)
    if len(listen) != 1 or not re.fullmatch(r"(.*):%s" % port, listen[0]):
        err("%s: DaemonSet: --web.listen-address %r is not on the metrics port %r" % (where, listen, port))
    res = c.get("resources") or {}
    for r in ("cpu", "memory"):
        req, lim = (res.get("requests") or {}).get(r), (res.get("limits") or {}).get(r)
        if req is None or lim is None or qty(req) is None or qty(lim) is None:
            err("%s: DaemonSet: resources %s: request %r, limit %r" % (where, r, req, lim))
        elif qty(req) > qty(lim):
            err("%s: DaemonSet: %s request %s is above its limit %s" % (where, r, req, lim))
    vols = {v["name"]: v for v in ps.get("volumes") or []}
    def host_mounts(ctr, who):
        found = {}
        for m in ctr.get("volumeMounts") or []:
            if m["name"] not in vols:
                err("%s: DaemonSet: %s mounts an undeclared volume %s" % (where, who, m["name"]))
                continue
            hp = vols[m["name"]].get("hostPath")
            if not hp:
                if m.get("readOnly") is not True:
                    err("%s: DaemonSet: %s mounts volume %s writable" % (where, who, m["name"]))
                continue
            found[hp["path"]] = m
            if hp["path"] in HANDOVER:
                if m["mountPath"] != hp["path"] or m.get("readOnly"):
                    err("%s: DaemonSet: %s mounts %s at %s%s, not writable at the same path"
                        % (where, who, hp["path"], m["mountPath"], " read-only" if m.get("readOnly") else ""))
                if hp.get("type") != HANDOVER[hp["path"]]:
                    err("%s: DaemonSet: hostPath %s has type %r, not %s" % (where, hp["path"], hp.get("type"), HANDOVER[hp["path"]]))
                if m.get("mountPropagation") not in (None, "None", "HostToContainer"):
                    err("%s: DaemonSet: %s: %s has mountPropagation %s (Bidirectional needs a privileged pod)"
                        % (where, who, hp["path"], m["mountPropagation"]))
            elif m.get("readOnly") is not True:
                err("%s: DaemonSet: hostPath %s is not mounted read-only" % (where, hp["path"]))
        return found
    seen = host_mounts(c, "container %s" % c.get("name"))
    if "--handover" not in args:
        err("%s: DaemonSet: serve runs without --handover: a rolling update would reset every counter" % where)
    for path in HANDOVER:
        if path not in seen:
            err("%s: DaemonSet: --handover needs the host's %s mounted" % (where, path))
    # Pods' names (iolat's --kubernetes.*-logs-dir defaults): read-only at
    # the host's paths.
    for path in ("/var/log/pods", "/var/log/containers"):
        if seen.get(path, {}).get("mountPath") != path:
            err("%s: DaemonSet: the host's %s is not mounted at %s: pods would be named by UID"
                % (where, path, path))
    if seen.get("/run/udev/data", {}).get("mountPath") != "/run/udev/data":
        err("%s: DaemonSet: the host's /run/udev/data is not mounted there: virtio disks would have no serial" % where)
    if seen.get("/sys/fs/bpf", {}).get("mountPropagation") != "HostToContainer":
        err("%s: DaemonSet: /sys/fs/bpf is not mounted with mountPropagation HostToContainer" % where)
    us = spec.get("updateStrategy") or {}
    ru = us.get("rollingUpdate") or {}
    if us.get("type") != "RollingUpdate" or ru.get("maxSurge") != 0:
        err("%s: DaemonSet: updateStrategy %r: expected RollingUpdate with maxSurge 0 (never two iolats on a node)" % (where, us))
    mu = ru.get("maxUnavailable")
    if not (isinstance(mu, str) and re.fullmatch(r"[1-9][0-9]?%", mu)):
        err("%s: DaemonSet: maxUnavailable %r is not a percentage of the nodes (1%%-99%%)" % (where, mu))
    if not isinstance(ps.get("terminationGracePeriodSeconds"), int):
        err("%s: DaemonSet: no terminationGracePeriodSeconds" % where)
    ics = ps.get("initContainers") or []
    ic = ics[0] if len(ics) == 1 else None
    if ic is None:
        err("%s: DaemonSet: %d init containers, expected 1 (handover-dirs)" % (where, len(ics)))
    else:
        isc = ic.get("securityContext") or {}
        icaps = isc.get("capabilities") or {}
        if ic.get("image") != c.get("image"):
            err("%s: DaemonSet: init container image %r is not the container's %r" % (where, ic.get("image"), c.get("image")))
        if icaps.get("drop") != ["ALL"] or icaps.get("add") != ["CHOWN"]:
            err("%s: DaemonSet: init container capabilities %r: expected drop ALL, add CHOWN" % (where, icaps))
        if isc.get("privileged") or isc.get("allowPrivilegeEscalation") is not False or \
                isc.get("readOnlyRootFilesystem") is not True:
            err("%s: DaemonSet: init container: privileged, privilege escalation or a writable root" % where)
        script = " ".join(ic.get("command") or []) + " " + " ".join(ic.get("args") or [])
        for w in ("chmod o+x /sys/fs/bpf", "mkdir -p -m 0700 /sys/fs/bpf/iolat /run/iolat",
                  "chown %s:%s /sys/fs/bpf/iolat /run/iolat" % (uid, gid)):
            if w not in script:
                err("%s: DaemonSet: init container does not run '%s'" % (where, w))
        iseen = host_mounts(ic, "init container %s" % ic.get("name"))
        if sorted(iseen) != sorted(HANDOVER):
            err("%s: DaemonSet: init container mounts %s, not %s" % (where, sorted(iseen), sorted(HANDOVER)))

    # --config.file and --web.config.file: a key of the ConfigMap / Secret
    # mounted at that directory.
    mounted = {m["mountPath"]: vols.get(m["name"], {}) for m in c.get("volumeMounts") or []}
    def file_of(flag, kind):
        vals = [a.split("=", 1)[1] for a in args if a.startswith(flag + "=")]
        if len(vals) != 1:
            err("%s: DaemonSet: serve has %d %s, expected 1" % (where, len(vals), flag))
            return None
        dirname, key = os.path.split(vals[0])
        v = mounted.get(dirname, {})
        ref = (v.get("configMap") or {}).get("name") if kind == "ConfigMap" else (v.get("secret") or {}).get("secretName")
        objs_k = [o for o in of(objs, kind) if o["metadata"]["name"] == ref]
        if not ref or not objs_k:
            err("%s: DaemonSet: %s %s is not on a %s of this kustomization mounted at %s" % (where, flag, vals[0], kind, dirname))
            return None
        if kind == "Secret" and (v["secret"].get("defaultMode", 0o644) & 0o007):
            err("%s: DaemonSet: Secret volume %s has mode %o: readable by every user" % (where, ref, v["secret"].get("defaultMode", 0o644)))
        text = data_of(objs_k[0], key)
        if text is None:
            err("%s: %s %s has no %s (%s)" % (where, kind, ref, key, flag))
        return text
    conf = file_of("--config.file", "ConfigMap")
    if conf is not None and conf != open("contrib/iolat.yml").read():
        err("%s: the ConfigMap's iolat.yml is not contrib/iolat.yml (deploy/kubernetes/base/iolat.yml is a copy)" % where)
    web = file_of("--web.config.file", "Secret")
    if web is not None:
        src = web_source(os.path.normpath(os.path.join(d, part)))
        if src is None or web != open(src).read():
            err("%s: the Secret's web.yml is not %s" % (where, src or "the file its kustomization names"))
        w = yaml.safe_load(web) or {}
        webs[part] = w
        tsc = w.get("tls_server_config") or {}
        for k in ("cert_file", "key_file", "client_ca_file"):
            f = tsc.get(k)
            if f and not any(f.startswith(mp + "/") and "secret" in v for mp, v in mounted.items()):
                err("%s: web.yml's %s %s is on no Secret volume of the container" % (where, k, f))
        client_certs = tsc.get("client_auth_type") in ("RequireAnyClientCert", "RequireAndVerifyClientCert")
        scheme = "HTTPS" if tsc else "HTTP"
        for probe, path in (("startupProbe", "/-/ready"), ("readinessProbe", "/-/ready"), ("livenessProbe", "/-/healthy")):
            p = c.get(probe) or {}
            if client_certs:
                if (p.get("tcpSocket") or {}).get("port") not in ("metrics", port) or "httpGet" in p:
                    err("%s: DaemonSet: %s is %r: client certificates are required (web.yml), so a TCP connect to the metrics port" % (where, probe, p))
                continue
            h = p.get("httpGet") or {}
            if h.get("path") != path or h.get("port") not in ("metrics", port) or h.get("scheme", "HTTP") != scheme:
                err("%s: DaemonSet: %s is not GET %s over %s on the metrics port: %r" % (where, probe, path, scheme, h))

    svc = one(objs, "Service", where)
    if svc:
        sp = svc["spec"]
        if any(pod_labels.get(k) != v for k, v in (sp.get("selector") or {}).items()) or not sp.get("selector"):
            err("%s: Service selector %r does not select the pods" % (where, sp.get("selector")))
        if not any(p.get("targetPort") in ("metrics", port) and p.get("port") == port for p in sp.get("ports") or []):
            err("%s: Service: no port %s to the pods' metrics port" % (where, port))
        ann = svc["metadata"].get("annotations") or {}
        want = {"prometheus.io/scrape": "true", "prometheus.io/port": str(port), "prometheus.io/path": "/metrics"}
        if webs.get(part, {}).get("tls_server_config"):
            want["prometheus.io/scheme"] = "https"
        for k, v in want.items():
            if ann.get(k) != v:
                err("%s: Service: annotation %s is %r, not %r" % (where, k, ann.get(k), v))
    np = one(objs, "NetworkPolicy", where)
    if np:
        s = np["spec"]
        if any(pod_labels.get(k) != v for k, v in ((s.get("podSelector") or {}).get("matchLabels") or {}).items()) \
                or not (s.get("podSelector") or {}).get("matchLabels"):
            err("%s: NetworkPolicy does not select the pods" % where)
        if sorted(s.get("policyTypes") or []) != ["Egress", "Ingress"]:
            err("%s: NetworkPolicy: policyTypes %r, expected Ingress and Egress" % (where, s.get("policyTypes")))
        if s.get("egress"):
            err("%s: NetworkPolicy allows egress (iolat talks to no one)" % where)
        rules = s.get("ingress") or []
        if not rules:
            err("%s: NetworkPolicy admits no one: Prometheus could not scrape" % where)
        for r in rules:
            if not r.get("from") or any(not f.get("namespaceSelector") or not f.get("podSelector") for f in r["from"]):
                err("%s: NetworkPolicy: an ingress rule from anywhere or from a namespace's every pod: %r" % (where, r.get("from")))
            if not r.get("ports") or any(p.get("port") not in ("metrics", port) for p in r["ports"]):
                err("%s: NetworkPolicy: an ingress rule on ports %r, not only the metrics port" % (where, r.get("ports")))
    # Where the API server admits the system classes only under a quota
    # naming them (GKE), the namespace has one.
    pc = ps.get("priorityClassName")
    if not any(pc in (e.get("values") or []) and e.get("scopeName") == "PriorityClass" and e.get("operator") == "In"
               for q in of(objs, "ResourceQuota")
               for e in ((q["spec"].get("scopeSelector") or {}).get("matchExpressions") or [])):
        err("%s: no ResourceQuota scoped to PriorityClass %s (GKE refuses its pods without one)" % (where, pc))
    print("check_deploy: %s: container %s: runAsUser %s runAsGroup %s, capabilities drop %s add %s, probes %s"
          % (where, c.get("name"), uid, gid, capsc.get("drop"), sorted(add),
             "/".join(sorted({k for p in ("startupProbe", "readinessProbe", "livenessProbe") for k in (c.get(p) or {})
                              if k in ("httpGet", "tcpSocket")}))))
    return uid, gid, port, add

def check_monitor(where, o, pod_labels, web):
    kind = o["kind"]
    s = o["spec"]
    ml = (s.get("selector") or {}).get("matchLabels") or {}
    if not ml or any(pod_labels.get(k) != v for k, v in ml.items()):
        err("%s: %s: selector does not select the pods (or the Service)" % (where, kind))
    eps = s.get("podMetricsEndpoints" if kind == "PodMonitor" else "endpoints") or []
    if not eps or any(e.get("port") != "metrics" for e in eps):
        err("%s: %s: endpoints are not on the port named metrics" % (where, kind))
    if s.get("jobLabel") and pod_labels.get(s["jobLabel"]) != "iolat":
        err("%s: %s: jobLabel %s does not make job=\"iolat\" (the mixin's selector)" % (where, kind, s["jobLabel"]))
    if web is None:
        return
    tsc = web.get("tls_server_config") or {}
    certs = tsc.get("client_auth_type") in ("RequireAnyClientCert", "RequireAndVerifyClientCert")
    for e in eps:
        tc = e.get("tlsConfig") or {}
        if (e.get("scheme") == "https") != bool(tsc):
            err("%s: %s scrapes with scheme %r; its variant's web.yml %s TLS" % (where, kind, e.get("scheme"), "has" if tsc else "has no"))
        if tsc and not tc.get("ca"):
            err("%s: %s: HTTPS without a CA to check the certificate" % (where, kind))
        if bool(e.get("basicAuth")) != bool(web.get("basic_auth_users")):
            err("%s: %s: basicAuth %s, while its variant's web.yml %s basic_auth_users" % (where, kind, "set" if e.get("basicAuth") else "unset", "has" if web.get("basic_auth_users") else "has no"))
        if bool(tc.get("cert") and tc.get("keySecret")) != certs:
            err("%s: %s: a client certificate %s, while its variant's web.yml %s one" % (where, kind, "shown" if tc.get("cert") else "not shown", "requires" if certs else "does not require"))

# Every rendering of every kubectl.
facts = {}
for (ver, part), objs in sorted(renders.items()):
    where = "%s (kubectl %s)" % (part, ver)
    for o in objs:
        kind, api = o.get("kind"), o.get("apiVersion")
        meta = o.get("metadata") or {}
        if kind not in KINDS:
            err("%s: unknown kind %r" % (where, kind))
            continue
        if api != KINDS[kind][0]:
            err("%s: %s has apiVersion %r, not %s" % (where, kind, api, KINDS[kind][0]))
        if not meta.get("name"):
            err("%s: %s has no name" % (where, kind))
        if KINDS[kind][1] and meta.get("namespace") != "iolat":
            err("%s: %s/%s is not in namespace iolat" % (where, kind, meta.get("name")))
        if api.startswith(CRD_GROUP) != part.startswith("monitoring"):
            err("%s: %s/%s: %s" % (where, kind, meta.get("name"),
                "a CRD's kind outside monitoring*/: kubectl apply fails without prometheus-operator"
                if api.startswith(CRD_GROUP) else "monitoring*/ holds what is not a monitoring CRD's"))
    print("check_deploy: %s: %s" % (where, ", ".join("%s/%s" % (o.get("kind"), (o.get("metadata") or {}).get("name", "-")) for o in objs)))
    if not part.startswith("monitoring"):
        facts[(ver, part)] = check_workload(where, part, objs)
for ver in versions:
    base, top = renders.get((ver, "base")), renders.get((ver, "."))
    if base is None or top != base:
        err("deploy/kubernetes (kubectl %s) does not render as its base/ does" % ver)
    for wpart, mpart in (("base", "monitoring"), ("tls", "monitoring-tls"), ("mtls", "monitoring-mtls")):
        objs = renders.get((ver, mpart))
        if objs is None:
            err("no %s (kubectl %s)" % (mpart, ver))
            continue
        for o in of(objs, "PodMonitor"):
            check_monitor("%s (kubectl %s)" % (mpart, ver), o, seen_pods.get(wpart, {}), webs.get(wpart))
        if len(of(objs, "PodMonitor")) != 1 or len(of(objs, "PrometheusRule")) != 1:
            err("%s (kubectl %s): expected one PodMonitor and one PrometheusRule" % (mpart, ver))
# servicemonitor.yaml, which no kustomization lists (monitoring/ names it).
for o in yaml.safe_load_all(open(os.path.join(d, "monitoring", "servicemonitor.yaml"))):
    if o:
        check_monitor("monitoring/servicemonitor.yaml", o, seen_pods.get("base", {}), webs.get("base"))

# The Containerfile: the same user and port; its file capabilities are what
# any DaemonSet adds (the kernel grants only those in the pod's bounding set).
some = next((f for f in facts.values() if f), None)
if some:
    uid, gid, port, _ = some
    cf = open(containerfile).read()
    users = re.findall(r"^USER\s+(\S+)", cf, re.M)
    if users[-1:] != ["%s:%s" % (uid, gid)]:
        err("Containerfile USER %r is not runAsUser:runAsGroup %s:%s" % (users[-1:], uid, gid))
    if str(port) not in re.findall(r"^EXPOSE\s+(\d+)", cf, re.M):
        err("Containerfile does not EXPOSE %s" % port)
    fcaps = re.findall(r"setcap\s+(\S+)=p\s", cf)
    fset = {x.upper().removeprefix("CAP_") for x in fcaps[0].split(",")} if fcaps else set()
    every = set().union(*added.values())
    if fset != every:
        err("Containerfile setcap %r grants %s, the DaemonSets add %s" % (fcaps, sorted(fset), sorted(every)))

# The PrometheusRule is the mixin's, as rendered.
want = []
for m in ("mixin/prometheus_rules.yaml", "mixin/prometheus_alerts.yaml"):
    want += yaml.safe_load(open(m))["groups"]
for (ver, part), objs in renders.items():
    for o in of(objs, "PrometheusRule"):
        if (o.get("spec") or {}).get("groups") != want:
            err("%s (kubectl %s): the PrometheusRule is not the mixin's rules and alerts: run scripts/gen_prometheusrule.sh" % (part, ver))
        with open(os.path.join(work, "rules.yaml"), "w") as out:
            yaml.safe_dump({"groups": o["spec"]["groups"]}, out)

sys.exit(1 if errors else 0)
PY
if [ -s "$work/rules.yaml" ] && command -v promtool >/dev/null; then
	if out=$(promtool check rules "$work/rules.yaml" 2>&1); then
		echo "check_deploy: promtool check rules: $(echo "$out" | grep -o 'SUCCESS.*' | head -1)"
	else
		echo "check_deploy: FAIL: promtool check rules on the PrometheusRule's groups: $out" >&2
		rc=1
	fi
fi

# 3. The schemas: kube-validate's packages, installed once per
# package-lock.json into the cache, then every rendering.
lock=tests/install/kube-validate/package-lock.json
modules=$cache/kube-validate-$(sha256sum "$lock" | cut -c1-16)
if [ ! -d "$modules/node_modules" ]; then
	tmp=$(mktemp -d "$cache/kube-validate.XXXXXX")
	cp tests/install/kube-validate/package.json "$lock" "$tmp/"
	if (cd "$tmp" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error) >"$tmp/npm.log" 2>&1; then
		mv -T "$tmp" "$modules" 2>/dev/null || rm -rf "$tmp" # another run's is as good
	else
		echo "check_deploy: FAIL: npm ci of tests/install/kube-validate: $(tail -5 "$tmp/npm.log")" >&2
		rm -rf "$tmp"
		exit 1
	fi
fi
# 4. The validation must fail on what is wrong: copies of the manifests,
# each broken in one place, rendered by the first kubectl; every break
# must be reported, by its object and the field.
# break NAME FILE SED FIELD: FILE (under deploy/kubernetes) edited by SED.
breaks=()
break_copy() {
	local name=$1 file=$2 expr=$3 field=$4 dir=$work/broken/$1 part
	mkdir -p "$dir"
	cp -r deploy/kubernetes/. "$dir/"
	sed -i "$expr" "$dir/$file"
	if cmp -s "deploy/kubernetes/$file" "$dir/$file"; then
		echo "check_deploy: FAIL: broken copy $name: '$expr' changed nothing in $file" >&2
		rc=1
		return
	fi
	part=${file%%/*}
	"${kubectls[0]}" kustomize "$dir/$part" 2>/dev/null |
		python3 -c 'import json, sys, yaml; json.dump({"source": sys.argv[1], "objects": [o for o in yaml.safe_load_all(sys.stdin) if o]}, open(sys.argv[2], "w"))' \
			"broken-$name" "$work/broken/$name.json" ||
		{ echo "check_deploy: FAIL: broken copy $name does not render" >&2; rc=1; return; }
	breaks+=("$name:$field")
}
break_copy container-field base/daemonset.yaml '0,/imagePullPolicy:/s//imagePullPolcy:/' imagePullPolcy
break_copy enum-value base/daemonset.yaml 's/protocol: TCP/protocol: TPC/' '"TPC"'
break_copy podmonitor-field monitoring/podmonitor.yaml 's/scrapeTimeout:/scrapeTimout:/' scrapeTimout
break_copy networkpolicy-field base/networkpolicy.yaml 's/policyTypes:/policyType:/' policyType

# One run of validate.js over both (the compiler's start is most of its
# time): the renderings must pass, each broken copy must not.
mkdir -p "$work/ts"
mapfile -t jsons < <(find "$work/render" "$work/broken" -name '*.json' | sort)
node tests/install/kube-validate/validate.js "$modules" "$work/ts" "${jsons[@]}" >"$work/validate.log" 2>&1
vrc=$?
grep 'FAIL' "$work/validate.log" | grep -v 'FAIL: broken-' >"$work/validate.fail"
if [ $vrc -ne 1 ] || [ -s "$work/validate.fail" ] || ! grep -q 'FAIL: broken-' "$work/validate.log"; then
	sed 's/^/check_deploy: /' "$work/validate.fail" >&2
	echo "check_deploy: FAIL: schema validation of the renderings (exit $vrc): $(tail -1 "$work/validate.log")" >&2
	rc=1
else
	echo "check_deploy: schemas: $(grep -c ' schema ok$' "$work/validate.log") objects validated," \
		"no problem outside the broken copies"
fi
for b in "${breaks[@]}"; do
	name=${b%%:*} field=${b#*:}
	if line=$(grep -F "FAIL: broken-$name: " "$work/validate.log" | grep -F -- "$field" | head -1) && [ -n "$line" ]; then
		echo "check_deploy: broken on purpose, refused: ${line#validate: FAIL: }"
	else
		echo "check_deploy: FAIL: broken copy $name ($field) was not reported: $(grep "broken-$name" "$work/broken.log" | grep FAIL | head -2)" >&2
		rc=1
	fi
done

[ $rc -eq 0 ] && echo "check_deploy: PASS"
exit $rc
