// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* serve_flags.c - `iolat serve`'s command line (serve_flags.h). */
#include "serve/serve_flags.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "core/names.h"
#include "core/pin.h"
#include "serve/http.h"
#include "serve/listen_addr.h"
#include "uprog/builtins.h"
#include "util/errors.h"
#include "util/parse.h"

/* The end of serve's usage: user programs' flags, then the examples. */
static void usage_userprogs_examples(FILE *f)
{
	fputs(
	    "User programs (iolat-userprog(5)): compiled BPF objects whose maps a YAML\n"
	    "config turns into metrics.\n"
	    "      --config.dir=DIR           where the user program configs are\n"
	    "      --config.names=A,B         load DIR/A.yaml and DIR/B.yaml (default:\n"
	    "                                 every *.yaml in DIR)\n"
	    "      --config.strict            a config that fails stops iolat (default:\n"
	    "                                 it is disabled, logged and shown as\n"
	    "                                 iolat_user_config_up 0)\n"
	    "      --config.check             load and attach the configs, print what\n"
	    "                                 they export, and exit (1 if one failed)\n"
	    "  -h, --help                     this help\n"
	    "  -V, --version                  print the version\n"
	    "\n"
	    "Examples (with CAP_BPF and CAP_PERFMON, as the systemd unit runs it, unless\n"
	    "one says it needs more):\n"
	    "  iolat serve\n"
	    "  iolat serve --web.listen-address=127.0.0.1:19617\n"
	    "  iolat serve --config.file=/etc/iolat/iolat.yml "
	    "--web.config.file=/etc/iolat/web.yml\n"
	    "  iolat serve --config.dir=/usr/share/iolat/examples --config.names=biosize,runqlat\n"
	    "  iolat serve --bpf.stats                 needs CAP_SYS_ADMIN as well\n"
	    "  iolat serve --config.dir=/usr/share/iolat/examples --config.names=timers\n"
	    "                                          needs CAP_DAC_READ_SEARCH as well\n"
	    "                                          (a tracepoint/ program: tracefs)\n"
	    "\n"
	    "See iolat-serve(1) (metrics, privileges, signals), iolat.yml(5) and\n"
	    "iolat-userprog(5).\n",
	    f);
}

void serve_flags_usage(FILE *f)
{
	fprintf(
	    f,
	    "Usage: iolat serve [OPTIONS]\n"
	    "\n"
	    "Prometheus/OpenMetrics exporter: serves block-I/O latency histograms\n"
	    "(device time, total time), request sizes, counters and iolat's own cost.\n"
	    "Defaults, then --config.file, then flags. SIGHUP reloads the files;\n"
	    "counters never reset. SIGTERM/SIGINT stop it, detaching the programs\n"
	    "(with --handover the collector stays for the next run).\n"
	    "\n"
	    "Options:\n"
	    "      --web.listen-address=ADDR  host:port, :port or [v6]:port; repeat for\n"
	    "                                 several (default :19617). :port and [::]:port\n"
	    "                                 are IPv6 and IPv4 on one dual-stack socket\n"
	    "                                 (IPv4 alone where IPv6 is off); 0.0.0.0:port\n"
	    "                                 IPv4 only; an address, only it; a name, every\n"
	    "                                 address it resolves to\n"
	    "      --web.telemetry-path=PATH  metrics path (default /metrics)\n"
	    "      --web.systemd-socket       serve on the sockets systemd passes (socket\n"
	    "                                 activation, LISTEN_FDS), not on listen\n"
	    "                                 addresses of its own\n"
	    "      --web.config.file=FILE     TLS, client certificates, basic auth, headers:\n"
	    "                                 exporter-toolkit's web.yml (node_exporter's),\n"
	    "                                 every key; see iolat.yml(5)\n"
	    "      --web.max-connections=N    open connections at most (default 64); past\n"
	    "                                 it a new one replaces the longest-waiting\n"
	    "                                 connection that has no request under way\n"
	    "      --web.max-connections-per-ip=N  from one client address (default 16)\n"
	    "      --web.read-header-timeout=DUR  time a connection has to send a request's\n"
	    "                                 headers, from connect or its last response (10s)\n"
	    "      --web.write-timeout=DUR    time to answer a request, from its headers to\n"
	    "                                 the last byte sent (30s)\n"
	    "      --config.file=FILE         YAML settings (its keys: iolat.yml(5))\n"
	    "      --[no-]collector.device-time   device-time histograms (default on)\n"
	    "      --[no-]collector.total-time    total-time histograms (default on)\n"
	    "      --[no-]collector.request-size  request-size histograms (default on)\n"
	    "      --[no-]collector.workloads  iolat_workload_* series per VM, pod,\n"
	    "                                 container, service or cgroup (default on)\n"
	    "      --workloads.by=cgroup|process  a workload is the cgroup each bio was\n"
	    "                                 charged to (default), or the submitting\n"
	    "                                 process, COMM[PID] (hosts without cgroups)\n"
	    "      --workloads.max=N          at most N workload label sets; past it I/O\n"
	    "                                 counts under workload=\"other\" (default 500)\n"
	    "      --workloads.expire=DUR     a removed workload's series stay DUR (5m)\n"
	    "      --workloads.labels=LIST    device,op: a workload's series by disk, by\n"
	    "                                 operation (default \"\": summed per host)\n"
	    "      --workloads.metrics=LIST   its families: device_time, total_time,\n"
	    "                                 request_size, completions, bytes, errors\n"
	    "                                 or all of those (default device_time,bytes);\n"
	    "                                 syscall_time, syscall_bytes, syscall_errors:\n"
	    "                                 the host's time for its pread/pwrite/preadv/\n"
	    "                                 pwritev calls (a VM's disk as qemu serves\n"
	    "                                 it), attaching programs to them\n"
	    "      --disks.expire=DUR         a gone disk's series stay DUR (5m)\n"
	    "      --kubernetes.pod-logs-dir=DIR  the kubelet's pod log directories,\n"
	    "                                 which name pods' cgroups NAMESPACE/POD\n"
	    "                                 (default /var/log/pods; \"\": not read)\n"
	    "      --kubernetes.container-logs-dir=DIR  the CRI log links, which name\n"
	    "                                 containers (default /var/log/containers)\n"
	    "      --[no-]label.op            an op label (read, write, ...) on block\n"
	    "                                 metrics; without it ops sum per disk (default on)\n"
	    "      --[no-]label.size-class    a size label (%s, %s, %s,\n"
	    "                                 %s, %s) on block metrics: latency\n"
	    "                                 by request size class (default off)\n"
	    "      --bpf.stats                keep kernel BPF run-time stats on while\n"
	    "                                 serving, for iolat_bpf_program_* metrics\n"
	    "      --bpf.map-size=MAP=ENTRIES[,MAP=ENTRIES...]  entries of a collector map\n"
	    "                                 (hists, rq_starts, bio_starts, comms);\n"
	    "                                 default: chosen from the host's CPUs, disks,\n"
	    "                                 workloads.max and memory ('iolat check' says)\n"
	    "      --log.level=LEVEL          debug, info, warn or error (default info)\n"
	    "      --log.format=FORMAT        logfmt (default) or json (one JSON\n"
	    "                                 object per line, for log collectors)\n"
	    "      --attach=MODE              auto (default), tp_btf or raw_tp\n"
	    "      --handover[=NAME]          keep the collector's programs and maps in\n"
	    "                                 bpffs (/sys/fs/bpf/iolat/NAME, default serve)\n"
	    "                                 across a stop, and adopt them at start: a\n"
	    "                                 restart of the same build and settings loses\n"
	    "                                 no I/O and resets no counter\n"
	    "      --handover.lease=DURATION  how long a collector left pinned counts on\n"
	    "                                 for a successor after its run stops or dies\n"
	    "                                 (default 30s); then it counts nothing, and\n"
	    "                                 the next run starts afresh and removes it\n"
	    "      --no-handover              detach and drop the maps at stop (default)\n"
	    "      --maintenance.interval=DURATION  how often the daemon folds the\n"
	    "                                 kernel's counters, names and retires cgroups,\n"
	    "                                 expires disks and saves its state (default\n"
	    "                                 10s, 100ms to 1m); scrapes never run it\n"
	    "      --unpin[=NAME]             remove what --handover[=NAME] keeps (pins,\n"
	    "                                 saved series) of a stopped serve, detaching\n"
	    "                                 its programs, and exit; serves nothing\n"
	    "\n",
	    names_size_class(IOLAT_SIZE_4K), names_size_class(IOLAT_SIZE_16K),
	    names_size_class(IOLAT_SIZE_64K), names_size_class(IOLAT_SIZE_1M),
	    names_size_class(IOLAT_SIZE_LARGER));
	usage_userprogs_examples(f);
}

enum {
	OPT_LISTEN = 256,
	OPT_PATH,
	OPT_WEBCFG,
	OPT_CONFIG,
	OPT_DEV,
	OPT_NODEV,
	OPT_TOT,
	OPT_NOTOT,
	OPT_SIZE,
	OPT_NOSIZE,
	OPT_STATS,
	OPT_LEVEL,
	OPT_ATTACH,
	OPT_SYNTH,
	OPT_OPL,
	OPT_NOOPL,
	OPT_WL,
	OPT_NOWL,
	OPT_WLMAX,
	OPT_WLEXP,
	OPT_WLBY,
	OPT_SZL,
	OPT_NOSZL,
	OPT_UDIR,
	OPT_UNAMES,
	OPT_USTRICT,
	OPT_UCHECK,
	OPT_DKEXP,
	OPT_MAXCONN,
	OPT_MAXIP,
	OPT_HDRTO,
	OPT_WRTO,
	OPT_LOGFMT,
	OPT_SDSOCK,
	OPT_HANDOVER,
	OPT_NOHANDOVER,
	OPT_UNPIN,
	OPT_MAPSIZE,
	OPT_LEASE,
	OPT_MAINTAIN,
	OPT_KPODS,
	OPT_KCTRS,
	OPT_WLLABELS,
	OPT_WLMETRICS,
};

/* --FLAG[=NAME]'s instance name (default serve) into *out, if it is one. */
static int instance_arg(const char *flag, const char *arg, const char **out)
{
	char dir[256];

	arg = arg ? arg : PIN_DEFAULT_INSTANCE;
	if (pin_dir_of(arg, dir, sizeof(dir))) {
		errorf("use letters, digits, '-' and '_' (at most 63)",
		       "bad --%s instance name '%s'", flag, arg);
		return -EINVAL;
	}
	*out = arg;
	return 0;
}

/* --web.listen-address, --web.telemetry-path, --web.config.file and the
 * connection limits and timeouts. */
static int web_flag(struct serve_flags *f, int c, const char *arg)
{
	struct serve_config *s = &f->set;
	uint64_t n;

	switch (c) {
	case OPT_LISTEN:
		if (s->nlisten == CONFIG_MAX_LISTEN) {
			errorf(NULL, "at most %d --web.listen-address flags", CONFIG_MAX_LISTEN);
			return -EINVAL;
		}
		snprintf(s->listen[s->nlisten++], sizeof(s->listen[0]), "%s", arg);
		f->has_listen = true;
		return 0;
	case OPT_PATH:
		if (arg[0] != '/') {
			errorf("e.g. /metrics", "--web.telemetry-path must start with /");
			return -EINVAL;
		}
		snprintf(s->telemetry_path, sizeof(s->telemetry_path), "%s", arg);
		f->has_path = true;
		return 0;
	case OPT_WEBCFG:
		snprintf(s->web_config_file, sizeof(s->web_config_file), "%s", arg);
		f->has_web = true;
		return 0;
	case OPT_MAXCONN:
	case OPT_MAXIP:
		if (parse_uint(arg, 1, HTTP_MAX_CONNECTIONS, &n)) {
			errorf(NULL, "--web.max-connections%s takes a number from 1 to %d",
			       c == OPT_MAXIP ? "-per-ip" : "", HTTP_MAX_CONNECTIONS);
			return -EINVAL;
		}
		*(c == OPT_MAXIP ? &f->limits.max_per_ip : &f->limits.max_connections) =
		    (unsigned int)n;
		return 0;
	case OPT_HDRTO:
	case OPT_WRTO: {
		unsigned int secs;

		if (parse_duration(arg, &secs) || !secs || secs > 3600) {
			errorf("e.g. 5s, 30s or 2m (1 s to 1 h)", "bad --web.%s-timeout '%s'",
			       c == OPT_HDRTO ? "read-header" : "write", arg);
			return -EINVAL;
		}
		*(c == OPT_HDRTO ? &f->limits.read_header_timeout_s : &f->limits.write_timeout_s) =
		    secs;
		return 0;
	}
	}
	return -EINVAL;
}

/* A --[no-]X flag into its field of f (-1 until given). Whether c is one. */
static bool toggle_flag(struct serve_flags *f, int c)
{
	static const struct {
		int key;
		size_t field; /* of struct serve_flags, an int */
		int value;
	} toggles[] = {
		{ OPT_DEV, offsetof(struct serve_flags, device), 1 },
		{ OPT_NODEV, offsetof(struct serve_flags, device), 0 },
		{ OPT_TOT, offsetof(struct serve_flags, total), 1 },
		{ OPT_NOTOT, offsetof(struct serve_flags, total), 0 },
		{ OPT_SIZE, offsetof(struct serve_flags, size), 1 },
		{ OPT_NOSIZE, offsetof(struct serve_flags, size), 0 },
		{ OPT_OPL, offsetof(struct serve_flags, op_label), 1 },
		{ OPT_SZL, offsetof(struct serve_flags, size_label), 1 },
		{ OPT_NOSZL, offsetof(struct serve_flags, size_label), 0 },
		{ OPT_NOOPL, offsetof(struct serve_flags, op_label), 0 },
		{ OPT_WL, offsetof(struct serve_flags, workloads), 1 },
		{ OPT_NOWL, offsetof(struct serve_flags, workloads), 0 },
	};

	for (size_t i = 0; i < sizeof(toggles) / sizeof(toggles[0]); i++)
		if (toggles[i].key == c) {
			*(int *)((char *)f + toggles[i].field) = toggles[i].value;
			return true;
		}
	return false;
}

/* --handover[=NAME], --no-handover, --handover.lease, --unpin[=NAME] and
 * --maintenance.interval (which a lease bounds). */
static int handover_flag(struct serve_flags *f, int c, const char *arg)
{
	switch (c) {
	case OPT_HANDOVER:
		return instance_arg("handover", arg, &f->handover);
	case OPT_NOHANDOVER:
		f->handover = NULL;
		return 0;
	case OPT_UNPIN:
		return instance_arg("unpin", arg, &f->unpin);
	case OPT_LEASE:
		if (parse_duration(arg, &f->lease_s) || f->lease_s < 1 ||
		    f->lease_s > HANDOVER_LEASE_MAX_S) {
			errorf("give 1s to 1h, e.g. --handover.lease=30s",
			       "bad --handover.lease '%s'", arg);
			return -EINVAL;
		}
		return 0;
	case OPT_MAINTAIN:
		if (parse_duration_ms(arg, &f->maintain_ms) || f->maintain_ms < MAINTAIN_MIN_MS ||
		    f->maintain_ms > MAINTAIN_MAX_MS) {
			errorf("give 100ms to 1m, e.g. --maintenance.interval=10s",
			       "bad --maintenance.interval '%s'", arg);
			return -EINVAL;
		}
		return 0;
	}
	return -EINVAL;
}

/* --config.dir, --config.names, --config.strict and --config.check. */
static int userprogs_flag(struct serve_flags *f, int c, const char *arg)
{
	switch (c) {
	case OPT_UDIR:
		f->user.dir = arg;
		return 0;
	case OPT_UNAMES:
		f->user.names = arg;
		return 0;
	case OPT_USTRICT:
		f->user.strict = true;
		return 0;
	case OPT_UCHECK:
		f->check = true;
		return 0;
	}
	return -EINVAL;
}

/* --workloads.by, --workloads.max, --workloads.expire, --disks.expire and
 * the Kubernetes directories. */
static int series_flag(struct serve_flags *f, int c, const char *arg)
{
	struct serve_config *s = &f->set;
	uint64_t n;

	switch (c) {
	case OPT_WLBY:
		if (strcmp(arg, "cgroup") && strcmp(arg, "process")) {
			errorf("use cgroup or process", "unknown --workloads.by '%s'", arg);
			return -EINVAL;
		}
		f->by_process = !strcmp(arg, "process");
		return 0;
	case OPT_WLMAX:
		if (parse_uint(arg, 1, MAPSIZE_MAX_WORKLOADS, &n)) {
			errorf(NULL, "--workloads.max takes a number from 1 to %d",
			       MAPSIZE_MAX_WORKLOADS);
			return -EINVAL;
		}
		s->workloads_max = (size_t)n;
		return 0;
	case OPT_WLEXP:
		if (parse_duration(arg, &s->workloads_expire_s)) {
			errorf("e.g. 300, 90s, 5m or 1h", "bad --workloads.expire '%s'", arg);
			return -EINVAL;
		}
		f->has_expire = true;
		return 0;
	case OPT_DKEXP:
		if (parse_duration(arg, &s->disks_expire_s) || !s->disks_expire_s) {
			errorf("at least 1s, e.g. 300, 90s, 5m or 1h", "bad --disks.expire '%s'",
			       arg);
			return -EINVAL;
		}
		return 0;
	case OPT_WLLABELS:
	case OPT_WLMETRICS: {
		char err[256];
		int rc = c == OPT_WLLABELS
			     ? builtins_wl_labels_parse(arg, &f->wl_labels, err, sizeof(err))
			     : builtins_wl_metrics_parse(arg, &f->wl_metrics, err, sizeof(err));

		if (rc)
			errorf(NULL, "--%s", err);
		*(c == OPT_WLLABELS ? &f->has_wl_labels : &f->has_wl_metrics) = !rc;
		return rc;
	}
	case OPT_KPODS:
	case OPT_KCTRS: {
		char *dir = c == OPT_KPODS ? s->kube_pods_dir : s->kube_containers_dir;

		if (strlen(arg) >= sizeof(s->kube_pods_dir)) {
			errorf(NULL, "--kubernetes.%s-logs-dir is longer than %zu bytes",
			       c == OPT_KPODS ? "pod" : "container", sizeof(s->kube_pods_dir) - 1);
			return -EINVAL;
		}
		snprintf(dir, sizeof(s->kube_pods_dir), "%s", arg);
		*(c == OPT_KPODS ? &f->has_kube_pods : &f->has_kube_ctrs) = true;
		return 0;
	}
	}
	return -EINVAL;
}

/* One flag of serve_flags_opts into f; -EINVAL (printed) on a bad value. */
/* --test.synthetic-disks at most: more than any real host, few enough to
 * render in a test. */
#define SYNTHETIC_DISKS_MAX 100000

static int attach_arg(const char *arg, enum attach_mode *out)
{
	char err[128];
	int rc = attach_mode_parse(arg, out, err, sizeof(err));

	if (rc)
		errorf(ATTACH_MODE_HINT, "%s", err);
	return rc;
}

static int parse_flag(struct serve_flags *f, int c, const char *arg)
{
	struct serve_config *s = &f->set;
	uint64_t n;

	if (toggle_flag(f, c))
		return 0;
	switch (c) {
	case OPT_WLBY:
	case OPT_WLMAX:
	case OPT_WLEXP:
	case OPT_WLLABELS:
	case OPT_WLMETRICS:
	case OPT_DKEXP:
	case OPT_KPODS:
	case OPT_KCTRS:
		return series_flag(f, c, arg);
	case OPT_LISTEN:
	case OPT_PATH:
	case OPT_WEBCFG:
	case OPT_MAXCONN:
	case OPT_MAXIP:
	case OPT_HDRTO:
	case OPT_WRTO:
		return web_flag(f, c, arg);
	case OPT_CONFIG:
		f->config_file = arg;
		return 0;
	case OPT_STATS:
		s->bpf_stats = f->has_stats = true;
		return 0;
	case OPT_MAPSIZE: {
		char why[160];

		if (mapsize_parse(arg, s->map_sizes, why, sizeof(why))) {
			errorf("e.g. --bpf.map-size=rq_starts=65536,hists=4096",
			       "bad --bpf.map-size: %s", why);
			return -EINVAL;
		}
		f->has_map_sizes = true;
		return 0;
	}
	case OPT_LEVEL:
		if (log_level_from_name(arg) < 0) {
			errorf("use debug, info, warn or error", "unknown --log.level '%s'", arg);
			return -EINVAL;
		}
		s->log_level = (enum log_level)log_level_from_name(arg);
		f->has_level = true;
		return 0;
	case OPT_LOGFMT:
		if (log_format_from_name(arg) < 0) {
			errorf("use logfmt or json", "unknown --log.format '%s'", arg);
			return -EINVAL;
		}
		s->log_format = (enum log_format)log_format_from_name(arg);
		f->has_format = true;
		return 0;
	case OPT_SDSOCK:
		f->systemd_socket = true;
		return 0;
	case OPT_ATTACH:
		return attach_arg(arg, &f->attach);
	case OPT_SYNTH:
		if (parse_uint(arg, 0, SYNTHETIC_DISKS_MAX, &n)) {
			errorf(NULL, "--test.synthetic-disks takes a number up to %d",
			       SYNTHETIC_DISKS_MAX);
			return -EINVAL;
		}
		f->synthetic = (unsigned int)n;
		return 0;
	case OPT_HANDOVER:
	case OPT_NOHANDOVER:
	case OPT_UNPIN:
	case OPT_LEASE:
	case OPT_MAINTAIN:
		return handover_flag(f, c, arg);
	case OPT_UDIR:
	case OPT_UNAMES:
	case OPT_USTRICT:
	case OPT_UCHECK:
		return userprogs_flag(f, c, arg);
	}
	return -EINVAL;
}

/* The value of --NAME=V or --NAME V at argv[i], or NULL. */
static const char *early_value(int argc, char **argv, int i, const char *name)
{
	size_t n = strlen(name);

	if (strncmp(argv[i], "--", 2) || strncmp(argv[i] + 2, name, n))
		return NULL;
	if (argv[i][2 + n] == '=')
		return argv[i] + 3 + n;
	return !argv[i][2 + n] && i + 1 < argc ? argv[i + 1] : NULL;
}

bool serve_flags_early_log(int argc, char **argv)
{
	bool chosen = false;

	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *level = early_value(argc, argv, i, "log.level");
		const char *format = early_value(argc, argv, i, "log.format");

		if (level && log_level_from_name(level) >= 0)
			log_set_level((enum log_level)log_level_from_name(level));
		if (format && log_format_from_name(format) >= 0) {
			log_set_format((enum log_format)log_format_from_name(format));
			chosen = true;
		}
	}
	return chosen;
}

const struct opt serve_flags_opts[] = {
	{ "web.listen-address", 0, OPT_VALUE, OPT_LISTEN },
	{ "web.telemetry-path", 0, OPT_VALUE, OPT_PATH },
	{ "web.systemd-socket", 0, OPT_NO_VALUE, OPT_SDSOCK },
	{ "web.config.file", 0, OPT_VALUE, OPT_WEBCFG },
	{ "web.max-connections", 0, OPT_VALUE, OPT_MAXCONN },
	{ "web.max-connections-per-ip", 0, OPT_VALUE, OPT_MAXIP },
	{ "web.read-header-timeout", 0, OPT_VALUE, OPT_HDRTO },
	{ "web.write-timeout", 0, OPT_VALUE, OPT_WRTO },
	{ "config.file", 0, OPT_VALUE, OPT_CONFIG },
	{ "collector.device-time", 0, OPT_NO_VALUE, OPT_DEV },
	{ "no-collector.device-time", 0, OPT_NO_VALUE, OPT_NODEV },
	{ "collector.total-time", 0, OPT_NO_VALUE, OPT_TOT },
	{ "no-collector.total-time", 0, OPT_NO_VALUE, OPT_NOTOT },
	{ "collector.request-size", 0, OPT_NO_VALUE, OPT_SIZE },
	{ "no-collector.request-size", 0, OPT_NO_VALUE, OPT_NOSIZE },
	{ "collector.workloads", 0, OPT_NO_VALUE, OPT_WL },
	{ "no-collector.workloads", 0, OPT_NO_VALUE, OPT_NOWL },
	{ "workloads.by", 0, OPT_VALUE, OPT_WLBY },
	{ "workloads.max", 0, OPT_VALUE, OPT_WLMAX },
	{ "workloads.labels", 0, OPT_VALUE, OPT_WLLABELS },
	{ "workloads.metrics", 0, OPT_VALUE, OPT_WLMETRICS },
	{ "workloads.expire", 0, OPT_VALUE, OPT_WLEXP },
	{ "disks.expire", 0, OPT_VALUE, OPT_DKEXP },
	{ "kubernetes.pod-logs-dir", 0, OPT_VALUE, OPT_KPODS },
	{ "kubernetes.container-logs-dir", 0, OPT_VALUE, OPT_KCTRS },
	{ "label.op", 0, OPT_NO_VALUE, OPT_OPL },
	{ "no-label.op", 0, OPT_NO_VALUE, OPT_NOOPL },
	{ "label.size-class", 0, OPT_NO_VALUE, OPT_SZL },
	{ "no-label.size-class", 0, OPT_NO_VALUE, OPT_NOSZL },
	{ "bpf.stats", 0, OPT_NO_VALUE, OPT_STATS },
	{ "bpf.map-size", 0, OPT_VALUE, OPT_MAPSIZE },
	{ "log.level", 0, OPT_VALUE, OPT_LEVEL },
	{ "log.format", 0, OPT_VALUE, OPT_LOGFMT },
	{ "attach", 0, OPT_VALUE, OPT_ATTACH },
	{ "handover", 0, OPT_OPTIONAL_VALUE, OPT_HANDOVER },
	{ "handover.lease", 0, OPT_VALUE, OPT_LEASE },
	{ "maintenance.interval", 0, OPT_VALUE, OPT_MAINTAIN },
	{ "no-handover", 0, OPT_NO_VALUE, OPT_NOHANDOVER },
	{ "unpin", 0, OPT_OPTIONAL_VALUE, OPT_UNPIN },
	{ "config.dir", 0, OPT_VALUE, OPT_UDIR },
	{ "config.names", 0, OPT_VALUE, OPT_UNAMES },
	{ "config.strict", 0, OPT_NO_VALUE, OPT_USTRICT },
	{ "config.check", 0, OPT_NO_VALUE, OPT_UCHECK },
	{ "test.synthetic-disks", 0, OPT_VALUE, OPT_SYNTH, .hidden = true },
	{},
};

int serve_flags_parse(int argc, char **argv, struct serve_flags *f)
{
	bool per_ip_given = false;
	struct opts o;
	int c;

	memset(f, 0, sizeof(*f));
	http_limits_default(&f->limits);
	f->device = f->total = f->size = f->op_label = f->workloads = f->by_process = -1;
	f->size_label = -1;
	f->lease_s = HANDOVER_LEASE_DEFAULT_S;
	f->maintain_ms = MAINTAIN_DEFAULT_MS;
	opts_begin(&o, serve_flags_opts, serve_flags_usage, argc, argv);
	while ((c = opts_next(&o)) > 0) {
		if (parse_flag(f, c, o.value))
			return -EINVAL;
		per_ip_given |= c == OPT_MAXIP;
	}
	if (c < 0)
		return c;
	if (opts_no_operand(&o, o.next))
		return -EINVAL;
	if (!per_ip_given && f->limits.max_per_ip > f->limits.max_connections)
		f->limits.max_per_ip = f->limits.max_connections; /* a default yields */
	if (f->limits.max_per_ip > f->limits.max_connections) {
		errorf("lower --web.max-connections-per-ip or raise --web.max-connections",
		       "--web.max-connections-per-ip (%u) is above --web.max-connections (%u)",
		       f->limits.max_per_ip, f->limits.max_connections);
		return -EINVAL;
	}
	if (f->systemd_socket && f->has_listen) {
		errorf("give one of them", "--web.systemd-socket and --web.listen-address "
					   "both say where to listen");
		return -EINVAL;
	}
	if (!f->user.dir && (f->user.names || f->user.strict || f->check)) {
		errorf("give the directory of the configs, e.g. --config.dir=/etc/iolat/programs",
		       "--config.names, --config.strict and --config.check need --config.dir");
		return -EINVAL;
	}
	/* The tests' knobs, read here so that the library takes them as
	 * options: a forced attach mode, a forced way to read user maps. */
	f->attach = attach_forced(f->attach, getenv("IOLAT_FORCE_ATTACH"));
	f->user.map_read =
	    uprog_map_read_parse(getenv("IOLAT_MAP_READ"), getenv("IOLAT_FORCE_NO_BATCH"));
	return 0;
}

int serve_flags_config(const struct serve_flags *f, struct serve_config *out, char *err, size_t len)
{
	int rc;

	config_defaults(out);
	if (f->config_file) {
		rc = config_load(f->config_file, out, err, len);
		if (rc)
			return rc;
	}
	if (f->has_listen) {
		memcpy(out->listen, f->set.listen, sizeof(out->listen));
		out->nlisten = f->set.nlisten;
	}
	if (f->systemd_socket) {
		/* The sockets replace every listen address, the file's too. */
		for (int i = 0; i < f->systemd_fds; i++)
			snprintf(out->listen[i], sizeof(out->listen[i]), "%s%d", LISTEN_FD_PREFIX,
				 SD_LISTEN_FDS_START + i);
		out->nlisten = (size_t)f->systemd_fds;
	}
	if (f->has_path)
		memcpy(out->telemetry_path, f->set.telemetry_path, sizeof(out->telemetry_path));
	if (f->has_web)
		memcpy(out->web_config_file, f->set.web_config_file, sizeof(out->web_config_file));
	if (f->has_stats)
		out->bpf_stats = true;
	if (f->has_level)
		out->log_level = f->set.log_level;
	if (f->has_format)
		out->log_format = f->set.log_format;
	if (f->device >= 0)
		out->device_view = f->device;
	if (f->total >= 0)
		out->total_view = f->total;
	if (f->size >= 0)
		out->size_view = f->size;
	if (f->op_label >= 0)
		out->op_label = f->op_label;
	if (f->size_label >= 0)
		out->size_label = f->size_label;
	if (f->workloads >= 0)
		out->workloads = f->workloads;
	if (f->by_process >= 0)
		out->workloads_by_process = f->by_process;
	if (f->set.workloads_max)
		out->workloads_max = f->set.workloads_max;
	if (f->has_expire)
		out->workloads_expire_s = f->set.workloads_expire_s;
	if (f->has_wl_labels)
		out->wl_labels = f->wl_labels;
	if (f->has_wl_metrics)
		out->wl_metrics = f->wl_metrics;
	if (f->set.disks_expire_s)
		out->disks_expire_s = f->set.disks_expire_s;
	if (f->has_kube_pods)
		memcpy(out->kube_pods_dir, f->set.kube_pods_dir, sizeof(out->kube_pods_dir));
	if (f->has_kube_ctrs)
		memcpy(out->kube_containers_dir, f->set.kube_containers_dir,
		       sizeof(out->kube_containers_dir));
	for (int m = 0; f->has_map_sizes && m < MAPSIZE_COUNT; m++)
		if (f->set.map_sizes[m])
			out->map_sizes[m] = f->set.map_sizes[m];
	if (!f->systemd_socket) {
		const char *specs[CONFIG_MAX_LISTEN];

		for (size_t i = 0; i < out->nlisten; i++)
			specs[i] = out->listen[i];
		/* Names are resolved, and compared, when the sockets are made. */
		return listen_addr_check(specs, out->nlisten, err, len);
	}
	return 0;
}
