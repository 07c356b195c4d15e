// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* collector_pins.c - the collector kept in bpffs across restarts: pinning,
 * adopting or taking over what an earlier run left, the lease, and the
 * series saved beside the pins (collector.h, pin.h, handover.h,
 * seriesfile.h).
 */

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/collector_internal.h"
#include "core/handover.h"
#include "core/pin.h"
#include "core/seriesfile.h"
#include "util/monotonic.h"

/* The file the series are saved in, pinned. */
static int series_path(const struct collector *c, bool make, char *out, size_t len)
{
	char dir[256];
	int rc = pin_state_dir(c->pins.name, make, dir, sizeof(dir));

	if (!rc && (size_t)snprintf(out, len, "%s/series", dir) >= len)
		rc = -ENAMETOOLONG;
	return rc;
}

static struct seriesfile_owner series_owner(const struct collector *c)
{
	struct seriesfile_owner o = { .identity = c->identity, .created_ns = c->pins.created_ns };

	return o;
}

/* The counters handed over to this collector: by earlier ones, and by the
 * one still handing over. */
void collector_handed_stats(struct collector *c, uint64_t out[IOLAT_STAT_COUNT])
{
	memcpy(out, c->stats_base, sizeof(c->stats_base));
	if (c->prev)
		handover_add_stats(c->prev, out);
}

/* Saves the series for the run that adopts the pins next. */
int collector_save_series(struct collector *c)
{
	struct seriesfile_owner o = series_owner(c);
	uint64_t handed[IOLAT_STAT_COUNT];
	char path[512];
	int rc = series_path(c, true, path, sizeof(path));

	collector_handed_stats(c, handed);
	if (!rc)
		rc = seriesfile_write(path, &o, &c->series, handed);
	c->saved_ns = monotonic_ns();
	return rc;
}

/* Adopted: the series the last run saved, to go on from. */
static void restore_series(struct collector *c)
{
	struct seriesfile_owner o = series_owner(c);
	char path[512];
	int rc = series_path(c, false, path, sizeof(path));

	if (!rc)
		rc = seriesfile_read(path, &o, &c->series, c->stats_base);
	c->pins.restored = !rc;
	if (rc)
		snprintf(c->pins.not_restored, sizeof(c->pins.not_restored), "%s",
			 rc == -ESTALE	 ? "the saved series belong to other maps"
			 : rc == -EPROTO ? "the saved series are of another format"
					 : strerror(-rc));
}

uint64_t collector_realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* Has the object use the maps pinned in the collector's directory. */
static int reuse_pinned_maps(struct collector *c)
{
	struct bpf_map *m;
	char path[256];

	bpf_object__for_each_map(m, c->skel->obj)
	{
		int fd, rc;

		pin_path(c->pins.dir, bpf_map__name(m), path, sizeof(path));
		fd = bpf_obj_get(path);
		if (fd < 0)
			return -errno;
		rc = bpf_map__reuse_fd(m, fd);
		close(fd);
		if (rc)
			return rc;
	}
	return 0;
}

/* Our maps that the collector taken over shares (handover_share): those
 * that hold what the issue-side programs saw of the I/O in flight. */
static int share_maps(struct collector *c)
{
	struct bpf_map *m[] = { c->skel->maps.rq_starts, c->skel->maps.bio_starts,
				c->skel->maps.comms };
	int rc = 0;

	for (size_t i = 0; !rc && i < sizeof(m) / sizeof(m[0]); i++)
		rc = handover_share(c->prev, m[i]);
	return rc;
}

/*
 * Another build's or other settings' collector is pinned: takes it over
 * (handover.h), so that its programs count on until the switch. Its pins
 * are removed after; what it saved is read. 0, or -errno with the reason
 * it cannot in why.
 */
static int take_over(struct collector *c, const struct pin_control *ctl, char *why, size_t len)
{
	char path[512];
	int rc = series_path(c, false, path, sizeof(path));

	if (!rc)
		rc = handover_open(&c->prev, c->pins.dir, ctl, path, c->ncpus, why, len);
	if (rc)
		return rc;
	rc = share_maps(c);
	if (rc)
		snprintf(why, len, "its maps cannot be shared (%s)", strerror(-rc));
	/* Its slots may be laid at other bounds (buckets.h): unread, they are
	 * taken for ours, as every collector's were alike before. */
	else if (handover_map_slots(c->prev, &c->lat, &c->size) == -ENOMEM) {
		snprintf(why, len, "out of memory");
		rc = -ENOMEM;
	}
	if (rc) {
		handover_free(c->prev);
		c->prev = NULL;
		return rc;
	}
	c->pins.took_over = true;
	c->pins.took_over_layout = ctl->layout;
	c->pins.created_ns = ctl->created_ns; /* the counts go on */
	c->pins.adoptions = ctl->adoptions + 1;
	snprintf(c->pins.made_by, sizeof(c->pins.made_by), "%s", ctl->version);
	return 0;
}

/*
 * Whether the collector pinned in dir is past its lease: then the run that
 * held it is gone and its programs have counted nothing since the end, so
 * taking it over would hide a gap; a fresh start says there was one. The
 * reason in why.
 */
static bool lease_ended(const char *dir, char *why, size_t len)
{
	uint64_t until, now = monotonic_ns();

	if (pin_lease_read(dir, &until) || !until || until > now)
		return false;
	snprintf(why, len,
		 "was left without a successor: its lease ended %.0f s ago, and it has counted "
		 "nothing since",
		 (double)(now - until) / 1e9);
	return true;
}

/*
 * Before load, with pinning: adopts the maps an earlier run of the same
 * collector pinned; takes over one of another build or other settings
 * whose maps it can read (take_over); or, if it cannot (a newer layout, a
 * collector from before handovers), removes it and says so in
 * pins.replaced: its programs stop counting here, and counters start again.
 */
int collector_pins_before_load(struct collector *c, enum attach_mode mode, char *err, size_t len)
{
	struct pin_control ctl;
	uint64_t id = c->identity = collector_identity_of(c, mode);
	char why[160];
	int rc = pin_dir_make(c->pins.dir, err, len);

	if (rc)
		return rc;
	/* Taken over already, by an attempt at another mode that failed. */
	if (c->prev)
		return share_maps(c);
	rc = pin_control_read(c->pins.dir, &ctl);
	if (!rc && lease_ended(c->pins.dir, why, sizeof(why))) {
		snprintf(c->pins.replaced, sizeof(c->pins.replaced), "iolat %s's collector %s",
			 ctl.version, why);
	} else if (!rc && ctl.layout == IOLAT_LAYOUT_VERSION && ctl.identity == id) {
		rc = reuse_pinned_maps(c);
		if (!rc) {
			c->pins.adopted = true;
			c->pins.created_ns = ctl.created_ns;
			c->pins.adoptions = ctl.adoptions + 1;
			snprintf(c->pins.made_by, sizeof(c->pins.made_by), "%s", ctl.version);
			return 0;
		}
		snprintf(c->pins.replaced, sizeof(c->pins.replaced),
			 "a pinned map could not be reused (%s)", strerror(-rc));
	} else if (!rc && ctl.layout > IOLAT_LAYOUT_VERSION) {
		snprintf(c->pins.replaced, sizeof(c->pins.replaced),
			 "iolat %s's collector has map layout %u, which this iolat cannot read "
			 "(it reads layouts 1 to %u)",
			 ctl.version, ctl.layout, (unsigned int)IOLAT_LAYOUT_VERSION);
	} else if (!rc && !take_over(c, &ctl, why, sizeof(why))) {
		rc = pin_remove(c->pins.dir);
		if (!rc)
			return pin_dir_make(c->pins.dir, err, len);
		snprintf(err, len, "cannot remove the pins in %s: %s", c->pins.dir, strerror(-rc));
		return rc;
	} else if (!rc) {
		snprintf(c->pins.replaced, sizeof(c->pins.replaced),
			 "iolat %s's collector (map layout %u) cannot hand over: %s", ctl.version,
			 ctl.layout, why);
	} else if (rc != -ENOENT) {
		snprintf(c->pins.replaced, sizeof(c->pins.replaced), "unreadable pins (%s)",
			 strerror(-rc));
	}
	rc = pin_remove(c->pins.dir);
	if (!rc)
		rc = pin_dir_make(c->pins.dir, err, len);
	else
		snprintf(err, len, "cannot remove the pins in %s: %s", c->pins.dir, strerror(-rc));
	return rc;
}

/* After load, with pinning: pins the new maps and says who made them, or
 * marks the adopted ones as taken by this run. */
int collector_pins_after_load(struct collector *c)
{
	struct pin_control ctl = { 0 };
	struct bpf_map *m;
	char path[256];
	int rc;

	if (c->pins.adopted) {
		rc = pin_control_read(c->pins.dir, &ctl);
		if (rc)
			return rc;
	} else {
		bpf_object__for_each_map(m, c->skel->obj)
		{
			pin_path(c->pins.dir, bpf_map__name(m), path, sizeof(path));
			if (bpf_map__pin(m, path))
				return -errno;
			c->pins_made = true;
		}
		ctl.magic = PIN_MAGIC;
		ctl.layout = IOLAT_LAYOUT_VERSION;
		ctl.identity = c->identity;
		ctl.created_ns = c->pins.created_ns;
		snprintf(ctl.version, sizeof(ctl.version), "%s", IOLAT_VERSION);
		snprintf(c->pins.made_by, sizeof(c->pins.made_by), "%s", IOLAT_VERSION);
	}
	ctl.adopted_ns = collector_realtime_ns();
	ctl.owner = (uint32_t)getpid();
	ctl.adoptions = c->pins.adoptions;
	c->pins.pinned = true;
	if (c->pins.adopted)
		restore_series(c);
	else if (!c->pins.took_over)
		pin_state_remove(c->pins.name); /* another's series */
	return pin_control_write(c->pins.dir, &ctl);
}

/*
 * Our window after load (struct iolat_window): taking over, it counts
 * nothing until the switch; adopting, whatever a handover left in it is
 * over (the run that held the collector taken over is gone, and with it
 * that one's programs), so it counts everything.
 */
void collector_window_after_load(struct collector *c)
{
	struct iolat_window *w = &c->skel->data_window->window;

	if (c->prev) {
		w->from_ns = UINT64_MAX;
		w->until_ns = 0;
	} else if (c->pins.adopted && (w->from_ns || w->until_ns)) {
		w->from_ns = w->until_ns = 0;
	}
}

/*
 * Taking over, with our programs attached and counting nothing: attaches
 * ours where the other had programs (so ours see the I/O that begins
 * before theirs go), sets the switch time in both windows, folds in what
 * the other counted so far, and saves the series as this collector's.
 */
int collector_switch_over(struct collector *c)
{
	char name[64];
	int rc = 0;

	for (int tp = 0; !rc && tp < TP_COUNT; tp++) {
		snprintf(name, sizeof(name), "link_%s", probe_tp_name((enum probe_tp)tp));
		if (handover_had_link(c->prev, name))
			rc = collector_attach_tp(c, (enum probe_tp)tp);
	}
	if (rc)
		return rc;
	rc = handover_switch(c->prev, &c->skel->data_window->window, c->pins.grace_s);
	c->pins.switch_late = rc == -ETIME;
	if (rc && rc != -ETIME)
		return rc;
	return collector_fold(c); /* and saved: the saved series are ours from here */
}

void collector_pins(const struct collector *c, struct collector_pins *out)
{
	*out = c->pins;
}

uint64_t collector_started_ns(const struct collector *c)
{
	return c->pins.created_ns;
}
