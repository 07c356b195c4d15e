// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* collector.c - load, attach and read the kernel collector (collector.h). */
#include "core/collector.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/handover.h"
#include "core/histo.h"
#include "core/percpu.h"
#include "core/pin.h"
#include "core/seriesfile.h"
#include "iolat.skel.h"
#include "sys/disks.h"
#include "util/buf.h"
#include "util/monotonic.h"
#include "util/parse.h"
#include "util/verifier_log.h"

struct collector {
	struct iolat_bpf *skel;
	enum attach_mode mode;
	bool force_rq_map;
	bool key_cgroup; /* keys carry a cgroup or a process: shared values */
	bool key_process;
	struct bpf_program *prog[TP_COUNT]; /* loaded programs of the chosen mode */
	struct bpf_link *link[TP_COUNT];    /* attached ones */
	struct ring_buffer *wakeups;	    /* the kernel's "attach the fallback" nudge */
	int uevents;			    /* kernel device events (netlink), or -1 */
	int epoll;			    /* waits on both, for collector_wait */
	uint64_t bio_checked_ns;	    /* last look for active bio-based disks */
	unsigned int rescan_s;		    /* and how often to look without events */
	int ncpus;
	struct bpf_map *hists;	   /* the histogram map in use (hists or hists_shared) */
	int nvals;		   /* values per key in it: ncpus, or 1 if shared */
	bool shared;		   /* one value per key, counted with atomics */
	struct mapsize_plan plan;  /* every sized map's entries and why (configure) */
	struct iolat_kval *percpu; /* ncpus kernel values: scratch for reads */
	/*
	 * Every series, in one array that collector_series hands out as it is.
	 * Live: what each key in the kernel map has counted since load, folded
	 * from its 32-bit counters (histo_fold); keys leave as they leave the
	 * map. Kept: values taken out of the map, under user-space cgroup ids
	 * (collector_retire) or, a gone disk's, under their own keys
	 * (collector_retire_disk); the two never share a key.
	 */
	struct snapshot_store series;
	uint64_t folded_ns; /* when the map was last folded in whole */
	bool folded_all;    /* once: the live series are the map's keys */
	struct bucket_table lat, size;
	uint64_t lat_store[IOLAT_LAT_SLOTS];
	uint64_t size_store[IOLAT_SIZE_SLOTS];
	struct collector_pins pins; /* pins.dir[0]: pinning */
	bool pins_made;		    /* this run pinned maps (removed if it fails) */
	uint64_t identity;	    /* of what this run loaded (identity_of) */
	uint64_t saved_ns;	    /* when the series were last saved, pinned */
	/* The pinned collector this one took over (another build or other
	 * settings), while its programs still count; NULL otherwise. */
	struct handover *prev;
	/* Collector-wide counters earlier collectors handed over: added to
	 * the stats map's, and saved with the series. */
	uint64_t stats_base[IOLAT_STAT_COUNT];
	bool unpin_at_close; /* collector_opts.unpin_at_close */
	uint64_t lease_ns;   /* collector_opts.lease_ns */
};

/* Pinned, the series are saved (seriesfile.h) after a fold at most this
 * often, and at close: what a crash can cost a restart is the kept series'
 * changes of the last few seconds, never a counter's. */
#define COLLECTOR_SAVE_S 5

/* A tracepoint's program in both forms (attach.h). */
struct prog_pair {
	enum probe_tp tp;
	struct bpf_program *prog[ATTACH_FORMS];
};

static int pairs_of(struct iolat_bpf *s, struct prog_pair *p)
{
	struct prog_pair all[] = {
		{ TP_RQ_COMPLETE, { s->progs.rq_complete_btf, s->progs.rq_complete_raw } },
		{ TP_RQ_ISSUE, { s->progs.rq_issue_btf, s->progs.rq_issue_raw } },
		{ TP_IO_START, { s->progs.io_start_btf, s->progs.io_start_raw } },
		{ TP_RQ_INSERT, { s->progs.rq_insert_btf, s->progs.rq_insert_raw } },
		{ TP_BIO_QUEUE, { s->progs.bio_queue_btf, s->progs.bio_queue_raw } },
		{ TP_BIO_COMPLETE, { s->progs.bio_complete_btf, s->progs.bio_complete_raw } },
	};

	memcpy(p, all, sizeof(all));
	return (int)(sizeof(all) / sizeof(all[0]));
}

/* Which tracepoints to attach: the request path, its fallbacks, the bio path. */
static void choose_tps(const struct probe_result *pr, bool want[TP_COUNT])
{
	want[TP_RQ_COMPLETE] = true;
	want[TP_RQ_ISSUE] = pr->tp_exists[TP_RQ_ISSUE];
	/* Request creation: block_io_start (6.5+), else block_rq_insert. */
	want[TP_IO_START] = pr->tp_exists[TP_IO_START];
	want[TP_RQ_INSERT] = !want[TP_IO_START] && pr->tp_exists[TP_RQ_INSERT];
	want[TP_BIO_QUEUE] = pr->tp_exists[TP_BIO_QUEUE] && pr->tp_exists[TP_BIO_COMPLETE];
	want[TP_BIO_COMPLETE] = want[TP_BIO_QUEUE];
}

/*
 * Sizes every map of skel for host h as o asks (mapsize.h: the histogram
 * map from its memory budget, and, keyed by workload, from the cap; the
 * start-time and name maps from the disks' queues and the CPUs; all within
 * a share of MemTotal; the operator's sizes over those). The histogram map
 * not in use shrinks to one entry. The plan, with its reasons, into *p.
 */
static void size_maps(struct iolat_bpf *skel, const struct collector_opts *o,
		      const struct mapsize_host *h, struct mapsize_plan *p)
{
	struct bpf_map *maps[MAPSIZE_COUNT] = {
		[MAPSIZE_HISTS] = skel->maps.hists_shared,
		[MAPSIZE_RQ_STARTS] = skel->maps.rq_starts,
		[MAPSIZE_BIO_STARTS] = skel->maps.bio_starts,
		[MAPSIZE_COMMS] = skel->maps.comms,
	};
	struct mapsize_want w = { .hist_budget =
				      o->map_budget ? o->map_budget : COLLECTOR_MAP_BUDGET,
				  .key_workload = o->key_cgroup || o->key_process,
				  .key_process = o->key_process,
				  .key_size_class = o->key_size_class,
				  .workloads = o->workloads };

	memcpy(w.set, o->map_size, sizeof(w.set));
	for (int m = 0; m < MAPSIZE_COUNT; m++) {
		w.key_size[m] = bpf_map__key_size(maps[m]);
		w.value_size[m] = bpf_map__value_size(maps[m]);
	}
	mapsize_plan(h, &w, p);
	maps[MAPSIZE_HISTS] = p->shared ? skel->maps.hists_shared : skel->maps.hists;
	bpf_map__set_max_entries(p->shared ? skel->maps.hists : skel->maps.hists_shared, 1);
	for (int m = 0; m < MAPSIZE_COUNT; m++)
		bpf_map__set_max_entries(maps[m], p->entries[m]);
}

/* The host to size the maps for: the one described in o, or this one. */
static void host_of(const struct collector_opts *o, int ncpus, struct mapsize_host *h)
{
	if (o->host)
		*h = *o->host;
	else
		mapsize_host_read(h, (uint32_t)ncpus);
}

static void configure(struct collector *c, const struct collector_opts *o,
		      const struct probe_result *pr)
{
	struct iolat_bpf__rodata *ro = c->skel->rodata;
	struct mapsize_host host;

	memcpy((void *)ro->lat_bounds, c->lat.bound, sizeof(ro->lat_bounds));
	memcpy((void *)ro->size_bounds, c->size.bound, sizeof(ro->size_bounds));
	buckets_cells(&c->lat, (uint32_t *)ro->lat_cells);
	buckets_cells(&c->size, (uint32_t *)ro->size_cells);
	ro->filter_dev = o->filter_dev;
	ro->filter_cgroup = o->filter_cgroup;
	ro->filter_cgroup_level = o->filter_cgroup_level;
	ro->key_flags = o->key_flags;
	ro->key_cgroup = o->key_cgroup;
	ro->key_process = o->key_process;
	c->key_cgroup = o->key_cgroup || o->key_process;
	c->key_process = o->key_process;
	ro->key_size_class = o->key_size_class;
	ro->force_rq_map = c->force_rq_map;
	PROBE_SET_BLOCK_RODATA(ro, pr);
	ro->queue_stats_bit =
	    pr->queue_stats_bit >= 0 ? (__u32)pr->queue_stats_bit : IOLAT_QUEUE_STATS_BIT_UNKNOWN;
	host_of(o, c->ncpus, &host);
	size_maps(c->skel, o, &host, &c->plan);
	c->shared = c->plan.shared;
	ro->shared_values = c->shared;
	c->hists = c->shared ? c->skel->maps.hists_shared : c->skel->maps.hists;
	c->nvals = c->shared ? 1 : c->ncpus;
}

/* Where tracepoint tp's link is pinned. */
static void link_path(const struct collector *c, enum probe_tp tp, char *out, size_t len)
{
	char name[64];

	snprintf(name, sizeof(name), "link_%s", probe_tp_name(tp));
	pin_path(c->pins.dir, name, out, len);
}

/* Attaches tp's program, or takes its link from the pins if an earlier run
 * attached it; a new link is pinned (when pinning) for the next run. */
static int attach_tp(struct collector *c, enum probe_tp tp)
{
	char path[256];
	struct bpf_link *l;

	if (!c->prog[tp] || c->link[tp])
		return 0;
	if (c->pins.dir[0])
		link_path(c, tp, path, sizeof(path));
	if (c->pins.adopted) {
		l = bpf_link__open(path);
		if (l) {
			c->link[tp] = l;
			return 0;
		}
		if (errno != ENOENT)
			return -errno;
	}
	l = bpf_program__attach(c->prog[tp]);
	if (!l)
		return -errno;
	if (c->pins.dir[0] && bpf_link__pin(l, path)) {
		int rc = -errno;

		bpf_link__destroy(l);
		return rc;
	}
	c->link[tp] = l;
	return 0;
}

static void detach_all(struct collector *c)
{
	for (int i = 0; i < TP_COUNT; i++) {
		bpf_link__destroy(c->link[i]);
		c->link[i] = NULL;
	}
}

/* The request-map fallback: issue and creation times for unstamped requests. */
static int attach_fallback(struct collector *c)
{
	int rc = attach_tp(c, TP_RQ_ISSUE);

	if (!rc)
		rc = attach_tp(c, TP_IO_START);
	if (!rc)
		rc = attach_tp(c, TP_RQ_INSERT);
	return rc;
}

/* Whether a bio-based disk that can do I/O (non-zero size) exists now. */
static bool bio_disk_active(void)
{
	struct disk_info *d;
	int n = disks_list_new(&d);
	bool any = false;

	for (int i = 0; i < n && !any; i++)
		any = d[i].bio_based && d[i].sectors;
	free(d);
	return any;
}

static int attach_bio(struct collector *c)
{
	int rc = attach_tp(c, TP_BIO_QUEUE);

	return rc ? rc : attach_tp(c, TP_BIO_COMPLETE);
}

/*
 * Attaches what the I/O in flight needs. Only the completion program runs
 * per I/O by default: the fallback programs join once a completion shows a
 * request the kernel did not stamp (IOLAT_FORCE_RQ_MAP makes every request
 * look unstamped, so tests take this same path), the bio-layer programs
 * once a bio-based disk has a size. Until then they cost nothing.
 */
static int attach_needed(struct collector *c)
{
	int rc = attach_tp(c, TP_RQ_COMPLETE);

	/* Keyed by process, request creation names the submitter: always on. */
	if (!rc && c->key_process)
		rc = attach_tp(c, c->prog[TP_IO_START] ? TP_IO_START : TP_RQ_INSERT);

	if (!rc && c->skel->bss->saw_unstamped)
		rc = attach_fallback(c);
	if (!rc && !c->link[TP_BIO_QUEUE] && bio_disk_active())
		rc = attach_bio(c);
	c->bio_checked_ns = monotonic_ns();
	return rc;
}

static int on_wakeup(void *ctx, void *data, size_t len)
{
	(void)ctx, (void)data, (void)len;
	return 0; /* waking collector_wait is all it is for */
}

/*
 * Kernel device events (a disk added, or resized as zram is when it gets
 * its size) tell when to look for bio-based disks again, so nothing polls
 * sysfs. Returns a non-blocking socket, or -1 (then a timer stands in).
 */
static int open_uevents(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = 1 };
	int fd =
	    socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);

	if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Drains pending device events; true if any concerned a block device. */
static bool block_uevents(int fd)
{
	char msg[4096];
	bool block = false;
	ssize_t n;

	while (fd >= 0 && (n = recv(fd, msg, sizeof(msg) - 1, 0)) > 0) {
		msg[n] = '\0';
		/* "ACTION@DEVPATH" then NUL-separated KEY=VALUE fields. */
		for (char *p = msg; p < msg + n; p += strlen(p) + 1)
			if (!strcmp(p, "SUBSYSTEM=block"))
				block = true;
	}
	return block;
}

/* When collector_maintain next looks for bio-based disks without an event. */
static uint64_t rescan_due_ns(const struct collector *c)
{
	return c->bio_checked_ns + c->rescan_s * NSEC_PER_SEC;
}

/* Whether a bio-based disk would still need the bio-layer programs attached. */
static bool bio_pending(const struct collector *c)
{
	return c->prog[TP_BIO_QUEUE] && !c->link[TP_BIO_QUEUE];
}

/* Folds the kernel values just read into c->percpu for key k into its live
 * series in st: the series, or NULL on allocation failure. */
static struct series *fold_key(struct collector *c, struct snapshot_store *st,
			       const struct iolat_key *k)
{
	struct series *s = snapshot_store_live(st, k);

	if (s)
		histo_fold_spans(&s->val, c->percpu, c->nvals, s->span);
	return s;
}

/* Removes key k's live series, adding what it counted to `into` (if
 * given). Through the index: thousands of keys retired in one pass cost a
 * lookup each, not a scan and an index rebuild each. */
static void unfold_key(struct collector *c, const struct iolat_key *k, struct iolat_val *into)
{
	snapshot_store_unlive(&c->series, k, into);
}

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
static void handed_stats(struct collector *c, uint64_t out[IOLAT_STAT_COUNT])
{
	memcpy(out, c->stats_base, sizeof(c->stats_base));
	if (c->prev)
		handover_add_stats(c->prev, out);
}

/* Saves the series for the run that adopts the pins next. */
static int save_series(struct collector *c)
{
	struct seriesfile_owner o = series_owner(c);
	uint64_t handed[IOLAT_STAT_COUNT];
	char path[512];
	int rc = series_path(c, true, path, sizeof(path));

	handed_stats(c, handed);
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

/*
 * Folds every key of the kernel map into st's live series: the collector's
 * own, or a copy of them that a peek folds into.
 */
static int fold_map(struct collector *c, struct snapshot_store *st)
{
	int fd = bpf_map__fd(c->hists);
	struct iolat_key key, next;
	void *prev = NULL;

	/*
	 * Per-key lookups rather than batches: each value is 5 KiB per CPU,
	 * so a batch buys little here and the key count is small.
	 */
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, c->percpu))
			continue; /* deleted under us */
		if (!fold_key(c, st, &key))
			return -ENOMEM;
	}
	return 0;
}

/* Folds the kernel map into the collector's series; pinned, saves them when
 * that is due. */
static int fold_all(struct collector *c)
{
	int rc = fold_map(c, &c->series);

	if (!rc && c->prev)
		rc = handover_fold(c->prev, &c->series);
	if (rc)
		return rc;
	c->folded_ns = monotonic_ns();
	c->folded_all = true;
	if (c->pins.pinned && monotonic_ns() >= c->saved_ns + COLLECTOR_SAVE_S * NSEC_PER_SEC)
		return save_series(c);
	return 0;
}

/* When the kernel map must be folded in next, so no 32-bit counter of it
 * can wrap twice between two folds (iolat.h). */
static uint64_t fold_due_ns(const struct collector *c)
{
	return c->folded_ns + COLLECTOR_FOLD_S * NSEC_PER_SEC;
}

/* timeout_ms (-1: none), shortened to end when the timed rescan or the
 * fold is due. */
static int until_due_ms(const struct collector *c, int timeout_ms)
{
	uint64_t now = monotonic_ns(), due = fold_due_ns(c), ms;

	if (bio_pending(c) && rescan_due_ns(c) < due)
		due = rescan_due_ns(c);
	if (c->prev && handover_due_ns(c->prev) < due)
		due = handover_due_ns(c->prev);
	/* Rounded up: a wake just before it is due would find nothing to do. */
	ms = due > now ? (due - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC : 0;
	if (timeout_ms >= 0 && (uint64_t)timeout_ms < ms)
		return timeout_ms;
	return ms < INT_MAX ? (int)ms : INT_MAX;
}

int collector_wait(struct collector *c, int timeout_ms, const sigset_t *sigmask)
{
	struct epoll_event ev[4];
	int n = epoll_pwait(c->epoll, ev, 4, until_due_ms(c, timeout_ms), sigmask);

	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	if (n > 0)
		ring_buffer__consume(c->wakeups);
	return 0;
}

int collector_wait_also(struct collector *c, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(c->epoll, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

static int setup_wait(struct collector *c)
{
	struct epoll_event ev = { .events = EPOLLIN };

	c->wakeups = ring_buffer__new(bpf_map__fd(c->skel->maps.wakeups), on_wakeup, c, NULL);
	if (!c->wakeups)
		return -errno;
	c->epoll = epoll_create1(EPOLL_CLOEXEC);
	if (c->epoll < 0)
		return -errno;
	if (epoll_ctl(c->epoll, EPOLL_CTL_ADD, ring_buffer__epoll_fd(c->wakeups), &ev))
		return -errno;
	c->uevents = open_uevents();
	if (c->uevents >= 0 && epoll_ctl(c->epoll, EPOLL_CTL_ADD, c->uevents, &ev))
		return -errno;
	return 0;
}

static void teardown_wait(struct collector *c)
{
	ring_buffer__free(c->wakeups);
	c->wakeups = NULL;
	if (c->epoll >= 0)
		close(c->epoll);
	if (c->uevents >= 0)
		close(c->uevents);
	c->epoll = c->uevents = -1;
}

const char *collector_now_reason(int bit)
{
	switch (bit) {
	case COLLECTOR_NOW_FALLBACK:
		return "a request without kernel timestamps completed; attached the "
		       "request-map fallback";
	case COLLECTOR_NOW_BIO:
		return "a bio-based disk appeared; attached the bio-layer programs";
	default:
		return "handover done: the programs of the collector taken over are detached, "
		       "and all they counted is in the series";
	}
}

/*
 * Pinned with a lease (collector_opts.lease_ns): moves its end to now +
 * lease. The programs read it at every I/O: one aligned 64-bit store.
 */
static void renew_lease(struct collector *c)
{
	uint64_t until;

	if (!c->lease_ns || !c->pins.pinned)
		return;
	until = monotonic_ns() + c->lease_ns;
	__atomic_store_n(&c->skel->data_window->window.until_ns, until, __ATOMIC_RELAXED);
}

/* The grace is over: the collector taken over goes, its counts stay. */
static int end_handover(struct collector *c)
{
	int rc = handover_finish(c->prev, &c->series, c->stats_base, &c->skel->data_window->window);

	c->prev = NULL;
	if (!rc && c->pins.pinned && !c->unpin_at_close)
		rc = save_series(c);
	return rc;
}

int collector_maintain(struct collector *c)
{
	int rc, done = 0;
	bool disks_changed = block_uevents(c->uevents);

	renew_lease(c);
	if (monotonic_ns() >= fold_due_ns(c)) {
		rc = fold_all(c);
		if (rc)
			return rc;
	}
	if (c->prev && monotonic_ns() >= handover_due_ns(c->prev)) {
		rc = end_handover(c);
		if (rc)
			return rc;
		done |= COLLECTOR_NOW_HANDED_OVER;
	}

	if (c->prog[TP_RQ_ISSUE] && !c->link[TP_RQ_ISSUE] && c->skel->bss->saw_unstamped) {
		rc = attach_fallback(c);
		if (rc)
			return rc;
		done |= COLLECTOR_NOW_FALLBACK;
	}
	/*
	 * Device events miss one case: a disk whose capacity goes from zero to
	 * non-zero sends none (set_capacity_and_notify() stays silent then),
	 * and that is how zram gets its size. A timer covers it.
	 */
	if (monotonic_ns() >= rescan_due_ns(c))
		disks_changed = true;
	if (bio_pending(c) && disks_changed) {
		c->bio_checked_ns = monotonic_ns();
		if (bio_disk_active()) {
			rc = attach_bio(c);
			if (rc)
				return rc;
			done |= COLLECTOR_NOW_BIO;
		}
	}
	return done;
}

int collector_test_knobs(struct collector_opts *o, char *(*env)(const char *name), char *err,
			 size_t len)
{
	const char *m = env("IOLAT_FORCE_RQ_MAP"), *d = env("IOLAT_TEST_DISK");
	const char *sizes = env("IOLAT_TEST_MAX_ENTRIES"),
		   *grace = env("IOLAT_TEST_HANDOVER_GRACE_S");
	char why[160];
	uint64_t s;

	if (m && !strcmp(m, "1"))
		o->force_rq_map = true;
	if (d && disks_resolve(d, &o->filter_dev, NULL, 0)) {
		snprintf(err, len, "IOLAT_TEST_DISK: no such disk '%s'", d);
		return -ENOENT;
	}
	if (sizes && mapsize_parse(sizes, o->test_max_entries, why, sizeof(why))) {
		snprintf(err, len, "IOLAT_TEST_MAX_ENTRIES: %s", why);
		return -EINVAL;
	}
	if (grace && parse_uint(grace, 1, 60, &s)) {
		snprintf(err, len, "IOLAT_TEST_HANDOVER_GRACE_S: want 1 to 60 seconds, got '%s'",
			 grace);
		return -EINVAL;
	}
	if (grace)
		o->handover_grace_s = (unsigned int)s;
	return 0;
}

/* The tests' map capacities (collector_test_knobs), between open and load:
 * over the plan, which does not show them. */
static void test_map_sizes(struct collector *c, const uint32_t set[MAPSIZE_COUNT])
{
	for (int i = 0; i < MAPSIZE_COUNT; i++) {
		struct bpf_map *m = i == MAPSIZE_HISTS
					? c->hists
					: bpf_object__find_map_by_name(
					      c->skel->obj, mapsize_name((enum mapsize_map)i));

		if (set[i] && m)
			bpf_map__set_max_entries(m, set[i]);
	}
}

/* What an attempt at a mode needs (attach_try_fn's ctx). */
/*
 * What the collector would load, as one number: its BPF object, the
 * constants set in it, every map's size and the attach mode. Maps pinned by
 * a collector with the same identity hold what this one's would, laid out
 * as this one reads them.
 */
static uint64_t identity_of(struct collector *c, enum attach_mode mode)
{
	uint32_t layout = IOLAT_LAYOUT_VERSION;
	struct bpf_map *m;
	size_t sz;
	const void *elf = iolat_bpf__elf_bytes(&sz);
	uint64_t h = pin_hash(0, elf, sz);

	h = pin_hash(h, &layout, sizeof(layout));
	h = pin_hash(h, &mode, sizeof(mode));
	bpf_object__for_each_map(m, c->skel->obj)
	{
		uint32_t n = bpf_map__max_entries(m);
		const void *init = bpf_map__initial_value(m, &sz);

		h = pin_hash(h, &n, sizeof(n));
		if (init)
			h = pin_hash(h, init, sz);
	}
	return h;
}

static uint64_t realtime_ns(void)
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
	if (rc) {
		snprintf(why, len, "its maps cannot be shared (%s)", strerror(-rc));
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
static int pins_before_load(struct collector *c, enum attach_mode mode, char *err, size_t len)
{
	struct pin_control ctl;
	uint64_t id = c->identity = identity_of(c, mode);
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
static int pins_after_load(struct collector *c)
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
	ctl.adopted_ns = realtime_ns();
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
static void window_after_load(struct collector *c)
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
static int switch_over(struct collector *c)
{
	char name[64];
	int rc = 0;

	for (int tp = 0; !rc && tp < TP_COUNT; tp++) {
		snprintf(name, sizeof(name), "link_%s", probe_tp_name((enum probe_tp)tp));
		if (handover_had_link(c->prev, name))
			rc = attach_tp(c, (enum probe_tp)tp);
	}
	if (rc)
		return rc;
	rc = handover_switch(c->prev, &c->skel->data_window->window, c->pins.grace_s);
	c->pins.switch_late = rc == -ETIME;
	if (rc && rc != -ETIME)
		return rc;
	return fold_all(c); /* and saved: the saved series are ours from here */
}

struct open_attempt {
	struct collector *c;
	const struct collector_opts *o;
	const struct probe_result *pr;
};

/* One attempt at one mode: open, configure, load, attach. */
static int try_mode(void *ctx, enum attach_mode mode, char *err, size_t len)
{
	struct open_attempt *at = ctx;
	struct collector *c = at->c;
	const struct probe_result *pr = at->pr;
	struct prog_pair pairs[TP_COUNT];
	bool want[TP_COUNT] = {};
	int n, rc;

	c->skel = iolat_bpf__open();
	if (!c->skel) {
		snprintf(err, len, "cannot open the BPF object: %s", strerror(errno));
		return -errno;
	}
	configure(c, at->o, pr);
	test_map_sizes(c, at->o->test_max_entries);
	choose_tps(pr, want);
	n = pairs_of(c->skel, pairs);
	for (int i = 0; i < n; i++)
		c->prog[pairs[i].tp] = attach_pick(pairs[i].prog, mode, want[pairs[i].tp]);
	c->mode = mode;
	if (c->pins.dir[0]) {
		rc = pins_before_load(c, mode, err, len);
		if (rc)
			goto fail;
	}
	rc = iolat_bpf__load(c->skel);
	if (rc) {
		char why[400];

		snprintf(err, len, "loading the %s programs failed: %s%s", attach_mode_name(mode),
			 strerror(-rc), verifier_log_reason(why, sizeof(why)));
		goto fail;
	}
	if (!c->pins.adopted && !c->pins.took_over)
		c->pins.created_ns = realtime_ns();
	window_after_load(c);
	if (c->pins.dir[0]) {
		rc = pins_after_load(c);
		if (rc) {
			snprintf(err, len, "cannot pin the collector in %s: %s", c->pins.dir,
				 strerror(-rc));
			goto fail;
		}
	}
	rc = setup_wait(c);
	if (!rc)
		rc = attach_needed(c);
	if (!rc && c->prev)
		rc = switch_over(c);
	if (rc) {
		snprintf(err, len, "attaching the %s programs failed: %s", attach_mode_name(mode),
			 strerror(-rc));
		goto fail;
	}
	return 0;
fail:
	teardown_wait(c);
	/* Pins this attempt made go with it; adopted ones stay for the next,
	 * and so does a collector taken over (c->prev). */
	if (c->pins_made)
		pin_remove(c->pins.dir);
	snapshot_store_free(&c->series); /* restored from the adopted pins */
	memset(c->stats_base, 0, sizeof(c->stats_base));
	c->pins_made = c->pins.adopted = c->pins.pinned = false;
	detach_all(c);
	iolat_bpf__destroy(c->skel);
	c->skel = NULL;
	return rc;
}

static int build_tables(struct collector *c, const struct collector_opts *o, char *err, size_t len)
{
	int rc =
	    buckets_build_latency(&c->lat, c->lat_store, o->extra_lat_bounds, o->nextra_lat_bounds);

	if (rc) {
		snprintf(err, len, "too many latency bucket bounds (at most %u in all)",
			 IOLAT_LAT_SLOTS - 1);
		return rc;
	}
	return buckets_build_size(&c->size, c->size_store);
}

int collector_open(struct collector **out, const struct collector_opts *opts,
		   const struct probe_result *pr, char *err, size_t len)
{
	struct collector_opts o = *opts;
	struct open_attempt at = { .o = &o, .pr = pr };
	struct collector *c;
	int rc;

	if (!pr->tp_exists[TP_RQ_COMPLETE]) {
		snprintf(err, len, "this kernel has no block_rq_complete tracepoint");
		return -ENOTSUP;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->force_rq_map = o.force_rq_map;
	c->unpin_at_close = o.unpin_at_close;
	c->lease_ns = o.unpin_at_close ? 0 : o.lease_ns;
	c->pins.grace_s = o.handover_grace_s ? o.handover_grace_s : HANDOVER_GRACE_S;
	if (o.pin_instance)
		snprintf(c->pins.name, sizeof(c->pins.name), "%s", o.pin_instance);
	if (o.pin_instance && pin_dir_of(o.pin_instance, c->pins.dir, sizeof(c->pins.dir))) {
		snprintf(
		    err, len,
		    "'%s' is not an instance name: use letters, digits, '-' and '_' (at most 63)",
		    o.pin_instance);
		free(c);
		return -EINVAL;
	}
	c->epoll = c->uevents = -1;
	c->rescan_s = o.disk_rescan_s ? o.disk_rescan_s : 1;
	c->folded_ns = monotonic_ns(); /* nothing counted yet */
	c->ncpus = libbpf_num_possible_cpus();
	c->percpu = c->ncpus > 0 ? calloc((size_t)c->ncpus, sizeof(*c->percpu)) : NULL;
	if (!c->percpu) {
		free(c);
		return -ENOMEM;
	}
	rc = build_tables(c, &o, err, len);
	if (rc)
		goto fail;
	at.c = c;
	rc = attach_with_fallback(o.attach, pr, try_mode, &at, err, len);
	if (rc)
		goto fail;
	renew_lease(c);
	*out = c;
	return 0;
fail:
	handover_free(c->prev); /* its programs stop: nothing can count on */
	free(c->percpu);
	free(c);
	return rc;
}

void collector_pins(const struct collector *c, struct collector_pins *out)
{
	*out = c->pins;
}

uint64_t collector_started_ns(const struct collector *c)
{
	return c->pins.created_ns;
}

void collector_close(struct collector *c)
{
	if (!c)
		return;
	/* The next run goes on from here (what fails here, it cannot tell
	 * anyone: the series saved last stand). A handover under way ends
	 * early: what began before its switch and is still in flight is lost. */
	if (c->prev)
		end_handover(c);
	if (c->pins.pinned && c->unpin_at_close)
		pin_instance_remove(c->pins.name); /* the links below detach */
	else if (c->pins.pinned && !fold_all(c))
		save_series(c);
	renew_lease(c); /* a whole lease for a successor */
	teardown_wait(c);
	detach_all(c);
	iolat_bpf__destroy(c->skel);
	snapshot_store_free(&c->series);
	free(c->percpu);
	free(c);
}

enum attach_mode collector_mode(const struct collector *c)
{
	return c->mode;
}
bool collector_rq_map_forced(const struct collector *c)
{
	return c->force_rq_map;
}
bool collector_keyed_by_cgroup(const struct collector *c)
{
	return c->key_cgroup && !c->key_process;
}

bool collector_keyed_by_process(const struct collector *c)
{
	return c->key_process;
}

int collector_comm(struct collector *c, uint32_t tgid, char *out, size_t len)
{
	char comm[IOLAT_COMM_LEN];

	if (bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.comms), &tgid, comm))
		return -ENOENT;
	snprintf(out, len, "%.*s", (int)sizeof(comm), comm);
	return 0;
}
bool collector_bio_attached(const struct collector *c)
{
	return c->link[TP_BIO_QUEUE];
}

void collector_hist_map(const struct collector *c, struct hist_map_info *out)
{
	out->name = bpf_map__name(c->hists);
	out->keys = bpf_map__max_entries(c->hists);
	out->values_per_key = c->nvals;
	out->value_bytes = sizeof(struct iolat_kval);
}
bool collector_fallback_attached(const struct collector *c)
{
	return c->link[TP_RQ_ISSUE];
}
const struct bucket_table *collector_lat_table(const struct collector *c)
{
	return &c->lat;
}
const struct bucket_table *collector_size_table(const struct collector *c)
{
	return &c->size;
}

int collector_read(struct collector *c, struct snapshot *snap)
{
	int rc = fold_all(c);
	struct snapshot live = c->series.all, kept = snapshot_store_kept(&c->series);

	live.n = c->series.nlive;
	snap->n = 0;
	if (!rc)
		rc = snapshot_append(snap, &live);
	/* A disk that came back counts on from what it had when it went;
	 * retired keys carry user-space cgroup ids, never equal to live ones. */
	return rc ? rc : snapshot_merge(snap, &kept);
}

int collector_fold(struct collector *c)
{
	return fold_all(c);
}

int collector_peek(struct collector *c, struct snapshot_store *out)
{
	int rc = snapshot_store_copy(out, &c->series);

	return rc ? rc : fold_map(c, out);
}

const struct snapshot *collector_series(const struct collector *c)
{
	return &c->series.all;
}

/*
 * Takes key k out of the kernel map, and its series out of c->folded into
 * *out (zeroed first): 1, 0 if the map had no such key, or -errno. Atomic
 * on 5.14+ (lookup-and-delete); before that a completion between the lookup
 * and the delete is lost.
 */
static int take_key(struct collector *c, const struct iolat_key *k, struct iolat_val *out)
{
	int fd = bpf_map__fd(c->hists), rc = 1;

	memset(out, 0, sizeof(*out));
	if (bpf_map_lookup_and_delete_elem(fd, k, c->percpu)) {
		if (bpf_map_lookup_elem(fd, k, c->percpu))
			rc = errno == ENOENT ? 0 : -errno;
		else
			bpf_map_delete_elem(fd, k);
	}
	if (rc > 0 && !fold_key(c, &c->series, k))
		rc = -ENOMEM;
	unfold_key(c, k, rc > 0 ? out : NULL);
	return rc;
}

int collector_retire(struct collector *c, const struct iolat_key *k, uint64_t into)
{
	struct iolat_key moved = *k;
	struct iolat_val *sum = calloc(1, sizeof(*sum));
	bool gone;
	int rc;

	if (!sum)
		return -ENOMEM;
	rc = take_key(c, k, sum);
	/* What the key had on a disk that went and came back moves with it. */
	gone = rc >= 0 && snapshot_store_unkeep(&c->series, k, sum);
	if (rc > 0 || gone) {
		moved.cgroup = into;
		rc = snapshot_store_keep(&c->series, &moved, sum);
	}
	free(sum);
	return rc < 0 ? rc : 0;
}

int collector_forget(struct collector *c, const struct iolat_key *k)
{
	if (bpf_map_delete_elem(bpf_map__fd(c->hists), k) && errno != ENOENT)
		return -errno;
	unfold_key(c, k, NULL);
	return 0;
}

/* The kernel map's keys of disk dev, in *out (malloc'd; *n of them). */
static int disk_keys(struct collector *c, uint32_t dev, struct iolat_key **out, size_t *n)
{
	int fd = bpf_map__fd(c->hists);
	struct iolat_key key, next, *keys = NULL;
	size_t cap = 0;
	void *prev = NULL;

	*n = 0;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (key.dev != dev)
			continue;
		if (array_make_room((void **)&keys, &cap, *n, sizeof(*keys), 16)) {
			free(keys);
			return -ENOMEM;
		}
		keys[(*n)++] = key;
	}
	*out = keys;
	return 0;
}

int collector_retire_disk(struct collector *c, uint32_t dev)
{
	struct iolat_val *sum = calloc(1, sizeof(*sum));
	struct iolat_key *keys = NULL;
	size_t n = 0;
	int rc = sum ? disk_keys(c, dev, &keys, &n) : -ENOMEM, moved = 0;

	for (size_t i = 0; !rc && i < n; i++) {
		rc = take_key(c, &keys[i], sum);
		if (rc <= 0)
			continue; /* gone meanwhile: nothing to keep */
		rc = snapshot_store_keep(&c->series, &keys[i], sum);
		moved++;
	}
	free(keys);
	free(sum);
	return rc < 0 ? rc : moved;
}

int collector_drop_disk(struct collector *c, uint32_t dev)
{
	int fd = bpf_map__fd(c->hists);
	struct iolat_key *keys = NULL;
	size_t n = 0;
	int rc = disk_keys(c, dev, &keys, &n);

	for (size_t i = 0; !rc && i < n; i++) {
		if (bpf_map_delete_elem(fd, &keys[i]) && errno != ENOENT)
			rc = -errno;
		unfold_key(c, &keys[i], NULL);
	}
	free(keys);
	if (!rc) {
		struct snapshot kept = snapshot_store_kept(&c->series);

		snapshot_drop_dev(&kept, dev);
		snapshot_store_kept_done(&c->series, &kept);
	}
	return rc;
}

int collector_refold(struct collector *c, uint64_t from, uint64_t into)
{
	struct snapshot kept = snapshot_store_kept(&c->series);
	int rc = snapshot_refold(&kept, from, into);

	snapshot_store_kept_done(&c->series, &kept);
	return rc;
}

bool collector_stat_map(const struct collector *c, enum iolat_stat s, struct map_stats *out,
			const char **lost)
{
	const struct bpf_map *m;

	switch (s) {
	case IOLAT_STAT_HIST_FULL:
		m = c->hists;
		*lost = "I/O of a disk, operation or workload not in it yet is not counted";
		break;
	case IOLAT_STAT_RQMAP_FULL:
		m = c->skel->maps.rq_starts;
		*lost = "requests whose times it lost are counted but not timed";
		break;
	case IOLAT_STAT_BIOMAP_FULL:
		m = c->skel->maps.bio_starts;
		*lost = "bios it could not hold are not counted";
		break;
	default:
		return false;
	}
	snprintf(out->name, sizeof(out->name), "%s", bpf_map__name(m));
	out->capacity = bpf_map__max_entries(m);
	out->entries = 0;
	return true;
}

int collector_stats(struct collector *c, uint64_t out[IOLAT_STAT_COUNT])
{
	uint64_t handed[IOLAT_STAT_COUNT];
	int rc =
	    percpu_array_sums(bpf_map__fd(c->skel->maps.stats), c->ncpus, out, IOLAT_STAT_COUNT);

	handed_stats(c, handed);
	for (int i = 0; !rc && i < IOLAT_STAT_COUNT; i++)
		out[i] += handed[i];
	return rc;
}

/* The program link l runs (an adopted link runs the program of the run
 * that attached it, not this run's copy): its info, 0 or -errno. */
static int linked_prog_info(struct bpf_link *l, struct bpf_prog_info *info)
{
	struct bpf_link_info li = {};
	__u32 len = sizeof(li), plen = sizeof(*info);
	int fd, rc = 0;

	if (bpf_obj_get_info_by_fd(bpf_link__fd(l), &li, &len))
		return -errno;
	fd = bpf_prog_get_fd_by_id(li.prog_id);
	if (fd < 0)
		return -errno;
	if (bpf_obj_get_info_by_fd(fd, info, &plen))
		rc = -errno;
	close(fd);
	return rc;
}

int collector_prog_stats(struct collector *c, struct prog_stats *out, int max)
{
	int n = 0;

	/* Loaded but not (yet) attached programs cost nothing: only the
	 * attached ones. */
	for (int i = 0; i < TP_COUNT && n < max; i++) {
		struct bpf_prog_info info = {};

		if (!c->prog[i] || !c->link[i] || linked_prog_info(c->link[i], &info))
			continue;
		snprintf(out[n].name, sizeof(out[n].name), "%s", bpf_program__name(c->prog[i]));
		out[n].run_cnt = info.run_cnt;
		out[n].run_time_ns = info.run_time_ns;
		out[n].recursion_misses = info.recursion_misses;
		n++;
	}
	return n;
}

static uint64_t count_keys(int fd, size_t key_size)
{
	char key[64], next[64];
	void *prev = NULL;
	uint64_t n = 0;

	if (key_size > sizeof(key))
		return 0;
	while (bpf_map_get_next_key(fd, prev, next) == 0) {
		memcpy(key, next, key_size);
		prev = key;
		n++;
	}
	return n;
}

int collector_map_stats(struct collector *c, struct map_stats *out, int max)
{
	struct bpf_map *maps[] = { c->hists, c->skel->maps.rq_starts, c->skel->maps.bio_starts,
				   c->skel->maps.comms };
	int n = 0;

	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]) && n < max; i++, n++) {
		snprintf(out[n].name, sizeof(out[n].name), "%s", bpf_map__name(maps[i]));
		out[n].capacity = bpf_map__max_entries(maps[i]);
		/* The histogram map's keys are the live series once a fold has
		 * walked them all: no second walk of thousands of keys. */
		if (maps[i] == c->hists && c->folded_all)
			out[n].entries = c->series.nlive;
		else
			out[n].entries =
			    count_keys(bpf_map__fd(maps[i]), bpf_map__key_size(maps[i]));
	}
	return n;
}

int collector_plan(const struct collector_opts *o, const struct mapsize_host *h,
		   struct map_def *out, int max, int *hist, struct mapsize_plan *plan)
{
	struct iolat_bpf *skel = iolat_bpf__open();
	struct bpf_map *m, *in_use;
	int n = 0;

	if (!skel)
		return -errno;
	size_maps(skel, o, h, plan);
	in_use = plan->shared ? skel->maps.hists_shared : skel->maps.hists;
	*hist = 0;
	bpf_object__for_each_map(m, skel->obj)
	{
		if (n == max)
			break;
		if (m == in_use)
			*hist = n;
		snprintf(out[n].name, sizeof(out[n].name), "%s", bpf_map__name(m));
		out[n].type = bpf_map__type(m);
		out[n].key_size = bpf_map__key_size(m);
		out[n].value_size = bpf_map__value_size(m);
		out[n].max_entries = bpf_map__max_entries(m);
		out[n].mmapable = bpf_map__map_flags(m) & BPF_F_MMAPABLE;
		n++;
	}
	iolat_bpf__destroy(skel);
	return n;
}

void collector_sizes(const struct collector *c, struct mapsize_plan *out)
{
	*out = c->plan;
}
