#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# check_deploy.sh - the Kubernetes manifests (deploy/kubernetes) against
# each other, the systemd unit, the Containerfile and the mixin. No root, no
# cluster, a second or two; `make check-deploy` runs it. Needs python3 with
# PyYAML (Debian: python3-yaml); exit 77 without it.
#   - every *.yaml there parses (all its documents), each object of a known
#     kind with its apiVersion, a name, and namespace iolat if namespaced;
#   - kustomization.yaml lists files that exist, and every other YAML file
#     there is listed or named in one of its comments (the optional ones);
#   - the DaemonSet: its selector matches its pods' labels; non-root
#     (runAsNonRoot, a fixed non-zero runAsUser and runAsGroup), no
#     privilege escalation, read-only root, seccomp RuntimeDefault,
#     capabilities drop ALL and add exactly the unit's
#     (contrib/iolat.service AmbientCapabilities= and
#     CapabilityBoundingSet=), not privileged, no host network, PID or IPC
#     namespace; hostPath volumes mounted read-only, but for --handover's:
#     `serve --handover`, the host's /sys/fs/bpf (HostToContainer) and
#     /run/iolat mounted writable at the same paths, one init container (the
#     container's image, drop ALL, add CHOWN alone) that makes them over to
#     runAsUser:runAsGroup, and a RollingUpdate with maxSurge 0; `serve`
#     listening on the port it declares; probes on /-/healthy and /-/ready
#     there; resource requests at most the limits;
#   - the Service, PodMonitor and ServiceMonitor select the pods and name
#     that port; the Service's prometheus.io annotations say the same port;
#   - the Containerfile's USER is runAsUser:runAsGroup, it EXPOSEs the port,
#     and its setcap grants exactly the added capabilities;
#   - prometheusrule.yaml's groups are the mixin's rendered rules and alerts
#     (scripts/gen_prometheusrule.sh), and promtool, when there, accepts them.
# Prints the container's capabilities and user.
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.." || exit 1
command -v python3 >/dev/null || { echo "check_deploy: SKIP: no python3" >&2; exit 77; }
python3 -c 'import yaml' 2>/dev/null ||
	{ echo "check_deploy: SKIP: python3 has no yaml module (apt-get install python3-yaml)" >&2; exit 77; }
work=$(mktemp -d /tmp/iolat-check-deploy.XXXXXX)
trap 'rm -rf "$work"' EXIT

python3 - deploy/kubernetes contrib/iolat.service Containerfile "$work" <<'PY'
import glob, os, re, sys
import yaml

d, unit_path, containerfile, work = sys.argv[1:5]
errors = []
def err(msg):
    errors.append(msg)
    print("check_deploy: FAIL: " + msg, file=sys.stderr)

KINDS = {  # kind: (apiVersion, namespaced)
    "Namespace": ("v1", False), "ServiceAccount": ("v1", True), "Service": ("v1", True),
    "DaemonSet": ("apps/v1", True), "PodMonitor": ("monitoring.coreos.com/v1", True),
    "ServiceMonitor": ("monitoring.coreos.com/v1", True),
    "PrometheusRule": ("monitoring.coreos.com/v1", True),
    "Kustomization": ("kustomize.config.k8s.io/v1beta1", False),
}
objs = {}  # kind -> list of (file, obj)
files = sorted(glob.glob(os.path.join(d, "*.yaml")) + glob.glob(os.path.join(d, "*.yml")))
if not files:
    err("no YAML in " + d)
for f in files:
    try:
        docs = [x for x in yaml.safe_load_all(open(f)) if x is not None]
    except yaml.YAMLError as e:
        err("%s does not parse: %s" % (f, e))
        continue
    if not docs:
        err("%s holds no object" % f)
    for o in docs:
        kind, api = o.get("kind"), o.get("apiVersion")
        if kind not in KINDS:
            err("%s: unknown kind %r" % (f, kind))
            continue
        if api != KINDS[kind][0]:
            err("%s: %s has apiVersion %r, not %s" % (f, kind, api, KINDS[kind][0]))
        meta = o.get("metadata") or {}
        if kind != "Kustomization" and not meta.get("name"):
            err("%s: %s has no name" % (f, kind))
        if KINDS[kind][1] and meta.get("namespace") != "iolat":
            err("%s: %s/%s is not in namespace iolat" % (f, kind, meta.get("name")))
        objs.setdefault(kind, []).append((f, o))
    print("check_deploy: %s: %s" % (os.path.basename(f),
          ", ".join("%s/%s" % (o.get("kind"), (o.get("metadata") or {}).get("name", "-")) for o in docs)))

def one(kind):
    lst = objs.get(kind, [])
    if len(lst) != 1:
        err("expected one %s, found %d" % (kind, len(lst)))
        return None
    return lst[0][1]

# kustomization.yaml: what it lists exists; what it does not list, it names.
kz = one("Kustomization")
if kz:
    listed = kz.get("resources") or []
    for r in listed:
        if not os.path.isfile(os.path.join(d, r)):
            err("kustomization.yaml lists %s, which does not exist" % r)
    comments = " ".join(l for l in open(os.path.join(d, "kustomization.yaml")) if l.lstrip().startswith("#"))
    for f in files:
        b = os.path.basename(f)
        if b != "kustomization.yaml" and b not in listed and b not in comments:
            err("%s is neither listed in kustomization.yaml nor named in its comments" % b)
    for im in kz.get("images") or []:
        if im.get("name") != "iolat":
            err("kustomization.yaml: image %r is not the DaemonSet's (iolat)" % im.get("name"))

def caps_of_unit(key):
    vals = []
    for l in open(unit_path):
        if l.startswith(key + "="):
            vals += l.strip().split("=", 1)[1].split()
    return {v.upper().removeprefix("CAP_") for v in vals}

ds = one("DaemonSet")
port = None
pod_labels = {}
if ds:
    spec = ds["spec"]
    tmpl = spec["template"]
    pod_labels = tmpl["metadata"].get("labels") or {}
    sel = spec["selector"].get("matchLabels") or {}
    if not sel or any(pod_labels.get(k) != v for k, v in sel.items()):
        err("DaemonSet selector %s does not match its pods' labels %s" % (sel, pod_labels))
    ps = tmpl["spec"]
    psc = ps.get("securityContext") or {}
    for k in ("hostNetwork", "hostPID", "hostIPC"):
        if ps.get(k):
            err("DaemonSet: %s is true" % k)
    if ps.get("automountServiceAccountToken") is not False:
        err("DaemonSet: automountServiceAccountToken is not false (iolat uses no API)")
    cs = ps.get("containers") or []
    if len(cs) != 1:
        err("DaemonSet: %d containers, expected 1" % len(cs))
    c = cs[0] if cs else {}
    sc = dict(psc, **(c.get("securityContext") or {}))  # the container's win
    uid, gid = sc.get("runAsUser"), sc.get("runAsGroup")
    if sc.get("runAsNonRoot") is not True:
        err("DaemonSet: runAsNonRoot is not true")
    if not isinstance(uid, int) or uid <= 0 or not isinstance(gid, int) or gid <= 0:
        err("DaemonSet: runAsUser %r / runAsGroup %r: expected fixed non-zero ids" % (uid, gid))
    if sc.get("allowPrivilegeEscalation") is not False:
        err("DaemonSet: allowPrivilegeEscalation is not false")
    if sc.get("readOnlyRootFilesystem") is not True:
        err("DaemonSet: readOnlyRootFilesystem is not true")
    if sc.get("privileged"):
        err("DaemonSet: privileged")
    if (sc.get("seccompProfile") or {}).get("type") != "RuntimeDefault":
        err("DaemonSet: seccompProfile is not RuntimeDefault")
    capsc = sc.get("capabilities") or {}
    add = set(capsc.get("add") or [])
    if capsc.get("drop") != ["ALL"]:
        err("DaemonSet: capabilities drop %r, not [ALL]" % capsc.get("drop"))
    amb, bnd = caps_of_unit("AmbientCapabilities"), caps_of_unit("CapabilityBoundingSet")
    if add != amb or add != bnd:
        err("DaemonSet adds %s; the unit has AmbientCapabilities=%s, CapabilityBoundingSet=%s"
            % (sorted(add), sorted(amb), sorted(bnd)))
    args = c.get("args") or []
    listen = [a.split("=", 1)[1] for a in args if a.startswith("--web.listen-address=")]
    if not args or args[0] != "serve":
        err("DaemonSet: args %r do not start with serve" % args)
    cports = {p.get("name"): p.get("containerPort") for p in c.get("ports") or []}
    port = cports.get("metrics")
    if port is None:
        err("DaemonSet: no container port named metrics")
    if len(listen) != 1 or not re.fullmatch(r"(.*):%s" % port, listen[0]):
        err("DaemonSet: --web.listen-address %r is not on the metrics port %r" % (listen, port))
    for probe, path in (("livenessProbe", "/-/healthy"), ("readinessProbe", "/-/ready")):
        h = (c.get(probe) or {}).get("httpGet") or {}
        if h.get("path") != path or h.get("port") not in ("metrics", port):
            err("DaemonSet: %s is not GET %s on the metrics port: %r" % (probe, path, h))
    res = c.get("resources") or {}
    units = {"": 1, "m": 1e-3, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "k": 1e3, "M": 1e6, "G": 1e9}
    def qty(v):
        m = re.fullmatch(r"([0-9.]+)([A-Za-z]*)", str(v))
        return float(m.group(1)) * units[m.group(2)] if m and m.group(2) in units else None
    for r in ("cpu", "memory"):
        req, lim = (res.get("requests") or {}).get(r), (res.get("limits") or {}).get(r)
        if req is None or lim is None or qty(req) is None or qty(lim) is None:
            err("DaemonSet: resources %s: request %r, limit %r" % (r, req, lim))
        elif qty(req) > qty(lim):
            err("DaemonSet: %s request %s is above its limit %s" % (r, req, lim))
    vols = {v["name"]: v for v in ps.get("volumes") or []}
    # --handover's two host directories, writable, at the same paths; every
    # other hostPath read-only.
    HANDOVER = {"/sys/fs/bpf": "Directory", "/run/iolat": "DirectoryOrCreate"}
    def host_mounts(ctr, who):
        seen = {}
        for m in ctr.get("volumeMounts") or []:
            if m["name"] not in vols:
                err("DaemonSet: %s mounts an undeclared volume %s" % (who, m["name"]))
                continue
            hp = vols[m["name"]].get("hostPath")
            if not hp:
                continue
            seen[hp["path"]] = m
            if hp["path"] in HANDOVER:
                if m["mountPath"] != hp["path"] or m.get("readOnly"):
                    err("DaemonSet: %s mounts %s at %s%s, not writable at the same path"
                        % (who, hp["path"], m["mountPath"], " read-only" if m.get("readOnly") else ""))
                if hp.get("type") != HANDOVER[hp["path"]]:
                    err("DaemonSet: hostPath %s has type %r, not %s" % (hp["path"], hp.get("type"), HANDOVER[hp["path"]]))
                if m.get("mountPropagation") not in (None, "None", "HostToContainer"):
                    err("DaemonSet: %s: %s has mountPropagation %s (Bidirectional needs a privileged pod)"
                        % (who, hp["path"], m["mountPropagation"]))
            elif m.get("readOnly") is not True:
                err("DaemonSet: hostPath %s is not mounted read-only" % hp["path"])
        return seen
    seen = host_mounts(c, "container %s" % c.get("name"))
    if "--handover" not in args:
        err("DaemonSet: serve runs without --handover: a rolling update would reset every counter")
    for path in HANDOVER:
        if path not in seen:
            err("DaemonSet: --handover needs the host's %s mounted" % path)
    if seen.get("/sys/fs/bpf", {}).get("mountPropagation") != "HostToContainer":
        err("DaemonSet: /sys/fs/bpf is not mounted with mountPropagation HostToContainer")
    # The rolling update: the old pod goes before the new one starts.
    us = spec.get("updateStrategy") or {}
    ru = us.get("rollingUpdate") or {}
    if us.get("type") != "RollingUpdate" or ru.get("maxSurge") != 0:
        err("DaemonSet: updateStrategy %r: expected RollingUpdate with maxSurge 0 (never two iolats on a node)" % us)
    if not isinstance(ps.get("terminationGracePeriodSeconds"), int):
        err("DaemonSet: no terminationGracePeriodSeconds")
    # The init container: the two directories made over to the pod's user,
    # as root with CAP_CHOWN alone.
    ics = ps.get("initContainers") or []
    ic = ics[0] if len(ics) == 1 else None
    if ic is None:
        err("DaemonSet: %d init containers, expected 1 (handover-dirs)" % len(ics))
    else:
        isc = ic.get("securityContext") or {}
        icaps = isc.get("capabilities") or {}
        if ic.get("image") != c.get("image"):
            err("DaemonSet: init container image %r is not the container's %r" % (ic.get("image"), c.get("image")))
        if icaps.get("drop") != ["ALL"] or icaps.get("add") != ["CHOWN"]:
            err("DaemonSet: init container capabilities %r: expected drop ALL, add CHOWN" % icaps)
        if isc.get("privileged") or isc.get("allowPrivilegeEscalation") is not False or \
                isc.get("readOnlyRootFilesystem") is not True:
            err("DaemonSet: init container: privileged, privilege escalation or a writable root")
        script = " ".join(ic.get("command") or []) + " " + " ".join(ic.get("args") or [])
        for want in ("chmod o+x /sys/fs/bpf", "mkdir -p -m 0700 /sys/fs/bpf/iolat /run/iolat",
                     "chown %s:%s /sys/fs/bpf/iolat /run/iolat" % (uid, gid)):
            if want not in script:
                err("DaemonSet: init container does not run '%s'" % want)
        iseen = host_mounts(ic, "init container %s" % ic.get("name"))
        if sorted(iseen) != sorted(HANDOVER):
            err("DaemonSet: init container mounts %s, not %s" % (sorted(iseen), sorted(HANDOVER)))
    print("check_deploy: container %s: runAsUser %s runAsGroup %s, capabilities drop %s add %s"
          % (c.get("name"), uid, gid, capsc.get("drop"), sorted(add)))
    print("check_deploy: hostPath mounts: %s" % ", ".join(
          "%s at %s (%s)" % (vols[m["name"]]["hostPath"]["path"], m["mountPath"],
                             "read-only" if m.get("readOnly") else "writable")
          for m in c.get("volumeMounts") or [] if "hostPath" in vols.get(m["name"], {})))

    # The Containerfile: the same user, port and capabilities.
    cf = open(containerfile).read()
    users = re.findall(r"^USER\s+(\S+)", cf, re.M)
    if users[-1:] != ["%s:%s" % (uid, gid)]:
        err("Containerfile USER %r is not runAsUser:runAsGroup %s:%s" % (users[-1:], uid, gid))
    if str(port) not in re.findall(r"^EXPOSE\s+(\d+)", cf, re.M):
        err("Containerfile does not EXPOSE %s" % port)
    fcaps = re.findall(r"setcap\s+(\S+)=p\s", cf)
    fset = {x.upper().removeprefix("CAP_") for x in fcaps[0].split(",")} if fcaps else set()
    if fset != add:
        err("Containerfile setcap %r grants %s, the DaemonSet adds %s" % (fcaps, sorted(fset), sorted(add)))

def selects(sel):
    ml = (sel or {}).get("matchLabels") or {}
    return ml and all(pod_labels.get(k) == v for k, v in ml.items())

svc = one("Service")
if svc and ds:
    sp = svc["spec"]
    if not selects({"matchLabels": sp.get("selector")}):
        err("Service selector %r does not select the pods" % sp.get("selector"))
    sports = sp.get("ports") or []
    if not any(p.get("targetPort") in ("metrics", port) and p.get("port") == port for p in sports):
        err("Service: no port %s to the pods' metrics port" % port)
    ann = svc["metadata"].get("annotations") or {}
    want = {"prometheus.io/scrape": "true", "prometheus.io/port": str(port), "prometheus.io/path": "/metrics"}
    for k, v in want.items():
        if ann.get(k) != v:
            err("Service: annotation %s is %r, not %r" % (k, ann.get(k), v))
for kind, key in (("PodMonitor", "podMetricsEndpoints"), ("ServiceMonitor", "endpoints")):
    for f, o in objs.get(kind, []):
        s = o["spec"]
        if kind == "PodMonitor" and not selects(s.get("selector")):
            err("%s: selector does not select the pods" % kind)
        if kind == "ServiceMonitor" and svc and any(
                (svc["metadata"].get("labels") or {}).get(k) != v
                for k, v in ((s.get("selector") or {}).get("matchLabels") or {}).items()):
            err("ServiceMonitor: selector does not select the Service")
        eps = s.get(key) or []
        if not eps or any(e.get("port") != "metrics" for e in eps):
            err("%s: endpoints are not on the port named metrics" % kind)
        if s.get("jobLabel") and pod_labels.get(s["jobLabel"]) != "iolat":
            err("%s: jobLabel %s does not make job=\"iolat\" (the mixin's selector)" % (kind, s["jobLabel"]))

# The PrometheusRule is the mixin's, as rendered.
for f, o in objs.get("PrometheusRule", []):
    want = []
    for m in ("mixin/prometheus_rules.yaml", "mixin/prometheus_alerts.yaml"):
        want += yaml.safe_load(open(m))["groups"]
    if (o.get("spec") or {}).get("groups") != want:
        err("%s is not the mixin's rules and alerts: run scripts/gen_prometheusrule.sh" % f)
    with open(os.path.join(work, "rules.yaml"), "w") as out:
        yaml.safe_dump({"groups": o["spec"]["groups"]}, out)

sys.exit(1 if errors else 0)
PY
rc=$?
if [ -s "$work/rules.yaml" ] && command -v promtool >/dev/null; then
	if out=$(promtool check rules "$work/rules.yaml" 2>&1); then
		echo "check_deploy: promtool check rules: $(echo "$out" | grep -o 'SUCCESS.*' | head -1)"
	else
		echo "check_deploy: FAIL: promtool check rules on the PrometheusRule's groups: $out" >&2
		rc=1
	fi
fi
[ $rc -eq 0 ] && echo "check_deploy: PASS"
exit $rc
