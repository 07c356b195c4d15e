// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* serve_handover.c - serve --handover and --unpin as the operator sees them:
 * the start and handover log lines, the workload label sets carried across a
 * restart, and removing what a stopped serve left pinned.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "core/collector.h"
#include "core/handover.h"
#include "core/pin.h"
#include "serve/exporter.h"
#include "serve/serve_internal.h"
#include "serve/wlstate.h"
#include "util/errors.h"
#include "util/log.h"

/* --unpin: removes what --handover keeps for an instance. */
int serve_unpin(const char *name)
{
	struct pin_instance in[64];
	int n = pin_list(in, 64), found = -1, rc;
	char dir[256];

	for (int i = 0; i < n && i < 64; i++)
		if (!strcmp(in[i].name, name))
			found = i;
	pin_dir_of(name, dir, sizeof(dir));
	rc = pin_instance_remove(name);
	if (rc) {
		errorf("is /sys/fs/bpf writable? (run as root)", "cannot remove %s: %s", dir,
		       strerror(-rc));
		return 1;
	}
	if (found < 0)
		printf("nothing pinned as %s\n", name);
	else
		printf("removed %s (%d links, %d maps): its programs are detached\n", dir,
		       in[found].links, in[found].maps);
	return 0;
}

/* What became of a pinned collector at this start, for the start line. */
static const char *handover_state(const struct collector_pins *p)
{
	if (p->adopted)
		return "adopted";
	if (p->took_over)
		return "took_over";
	return p->replaced[0] ? "replaced" : "fresh";
}

/*
 * The start line, once serving (a start that fails says only why): the
 * version, the kernel, how the programs are attached, the maps' sizes
 * (map_NAME: what an operator compares with iolat_bpf_map_capacity_entries,
 * and 'iolat check' explains; maps_set: those the flags or the file set),
 * and what became of a pinned collector.
 */
void serve_log_start(const struct serve *s)
{
	struct log_field f[8 + MAPSIZE_COUNT];
	char keys[MAPSIZE_COUNT][48], set[160] = "";
	struct map_stats m[MAPSIZE_COUNT];
	struct collector_pins pins;
	struct mapsize_plan plan;
	struct utsname u;
	int n = collector_map_stats(s->c, m, MAPSIZE_COUNT), k = 0;
	size_t at = 0;

	collector_sizes(s->c, &plan);
	collector_pins(s->c, &pins);
	if (uname(&u))
		snprintf(u.release, sizeof(u.release), "unknown");
	f[k++] = (struct log_field)LOG_STR("version", IOLAT_VERSION);
	f[k++] = (struct log_field)LOG_STR("kernel", u.release);
	f[k++] = (struct log_field)LOG_STR("attach", attach_mode_name(collector_mode(s->c)));
	for (int i = 0; i < n && i < MAPSIZE_COUNT; i++) {
		snprintf(keys[i], sizeof(keys[i]), "map_%s", m[i].name);
		f[k++] = (struct log_field)LOG_UINT(keys[i], m[i].capacity);
		if (plan.set[i] && at < sizeof(set))
			at += (size_t)snprintf(set + at, sizeof(set) - at, "%s%s", at ? "," : "",
					       m[i].name);
	}
	f[k++] = (struct log_field)LOG_STR("maps_set", set[0] ? set : NULL);
	f[k++] = (struct log_field)LOG_STR("handover", handover_state(&pins));
	f[k++] = (struct log_field)LOG_STR("pinned", pins.pinned ? pins.dir : NULL);
	f[k++] = (struct log_field)LOG_END;
	log_emit(LOG_INFO_L, "started", f);
}

/* Says what the collector took over or replaced, with --handover. */
void serve_log_handover(const struct serve *s)
{
	struct collector_pins p;

	collector_pins(s->c, &p);
	if (p.replaced[0])
		log_warn("replaced the pinned collector", LOG_STR("dir", p.dir),
			 LOG_STR("reason", p.replaced), LOG_STR("effect", "counters start again"));
	if (p.took_over)
		log_info("taking over the pinned collector", LOG_STR("dir", p.dir),
			 LOG_STR("made_by", p.made_by), LOG_UINT("layout", p.took_over_layout),
			 LOG_UINT("our_layout", IOLAT_LAYOUT_VERSION),
			 LOG_UINT("grace_seconds", p.grace_s),
			 LOG_STR("effect", "its programs count the I/O that began before the "
					   "switch, ours the rest; counters continue"));
	if (p.switch_late)
		log_warn("the handover's switch time passed before both collectors had it",
			 LOG_INT("lead_ms", HANDOVER_LEAD_MS),
			 LOG_STR("effect", "I/O that began in the last lead_ms may be counted "
					   "twice"));
	if (p.adopted)
		log_info("adopted the pinned collector", LOG_STR("dir", p.dir),
			 LOG_STR("made_by", p.made_by), LOG_UINT("adoptions", p.adoptions),
			 LOG_STR("effect", "no I/O was missed and counters continue"));
	if (p.adopted && !p.restored)
		log_warn("the series the last run saved were not read",
			 LOG_STR("reason", p.not_restored),
			 LOG_STR("effect", "counters continue from the kernel's own (32-bit) "
					   "counts, and retired series are gone"));
	if (p.pinned && !p.adopted && !p.took_over && s->fl.handover)
		log_info("collector pinned: a restart within the lease adopts it",
			 LOG_STR("dir", p.dir), LOG_UINT("lease_seconds", s->fl.lease_s));
}

/*
 * With --handover off, a collector an earlier run left pinned under the
 * default name would count on, attached, with no one to read it: this run
 * takes it over instead (no I/O is lost) and removes it at stop.
 */
const char *serve_leftover_instance(const struct serve *s)
{
	char dir[256];
	struct stat st;

	if (s->fl.handover || pin_dir_of(PIN_DEFAULT_INSTANCE, dir, sizeof(dir)) ||
	    stat(dir, &st) || !S_ISDIR(st.st_mode))
		return NULL;
	log_info("found the collector an earlier run with --handover left pinned",
		 LOG_STR("dir", dir),
		 LOG_STR("effect", "taking it over, and removing it at stop (--handover is off)"));
	return PIN_DEFAULT_INSTANCE;
}

/*
 * --handover: the workload label sets of the run before go on when this
 * run adopted its collector and read its series, or took it over (the
 * label sets name those series); otherwise a saved state is stale and goes. From here on
 * they are saved beside the collector's series (exporter_workloads_files).
 */
void serve_workloads_handover(struct serve *s)
{
	struct wlabels_stats st;
	struct wlstate_owner owner;
	struct collector_pins p;
	int rc;

	collector_pins(s->c, &p);
	if (!p.pinned)
		return;
	owner.created_ns = p.created_ns;
	rc = wlstate_files_init(&s->wl_files, p.name, &owner);
	if (rc) {
		log_warn("cannot keep the workload label sets for a restart",
			 LOG_STR("dir", PIN_STATE_ROOT), LOG_STR("instance", p.name),
			 LOG_STR("err", strerror(-rc)));
		return;
	}
	rc = (p.adopted && p.restored) || p.took_over
		 ? exporter_workloads_restore(s->e, &s->wl_files, &st)
		 : -ENOENT;
	if (!rc)
		log_info("workload label sets of the last run restored", LOG_UINT("sets", st.sets),
			 LOG_UINT("cgroups", st.cgroups));
	else if (rc != -ENOENT && rc != -EOPNOTSUPP)
		log_warn("the workload label sets the last run saved were not read",
			 LOG_STR("reason", rc == -ESTALE ? "they belong to other maps"
					   : rc == -EPROTO
					       ? "the file is damaged or of another format"
					       : strerror(-rc)),
			 LOG_STR("effect", "workloads are named afresh"));
	if (rc)
		unlink(s->wl_files.path);
	exporter_workloads_files(s->e, &s->wl_files);
	s->wl_saving = true;
}
