// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* collector_attach.c - attaching the collector's programs, at load and when
 * they come to be needed (the request-map fallback, the bio layer), and the
 * wait that wakes for them: kernel nudges, device events, timers
 * (collector.h).
 */

#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/collector_internal.h"
#include "core/handover.h"
#include "core/pin.h"
#include "sys/disks.h"
#include "util/monotonic.h"

/* Where tracepoint tp's link is pinned. */
static void link_path(const struct collector *c, enum probe_tp tp, char *out, size_t len)
{
	char name[64];

	snprintf(name, sizeof(name), "link_%s", probe_tp_name(tp));
	pin_path(c->pins.dir, name, out, len);
}

/* Attaches tp's program, or takes its link from the pins if an earlier run
 * attached it; a new link is pinned (when pinning) for the next run. */
int collector_attach_tp(struct collector *c, enum probe_tp tp)
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

void collector_detach_all(struct collector *c)
{
	for (int i = 0; i < TP_COUNT; i++) {
		bpf_link__destroy(c->link[i]);
		c->link[i] = NULL;
	}
}

/* The request-map fallback: issue and creation times for unstamped requests.
 * Restamping attached its programs already; they fill the map from the
 * first completion that lacked a stamp on (bpf/iolat.bpf.c, rq_map_wanted). */
static int attach_fallback(struct collector *c)
{
	int rc = collector_attach_tp(c, TP_RQ_ISSUE);

	if (!rc)
		rc = collector_attach_tp(c, TP_IO_START);
	if (!rc)
		rc = collector_attach_tp(c, TP_RQ_INSERT);
	if (!rc)
		c->fallback_on = true;
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
	int rc = collector_attach_tp(c, TP_BIO_QUEUE);

	return rc ? rc : collector_attach_tp(c, TP_BIO_COMPLETE);
}

/*
 * Attaches what the I/O in flight needs. Only the completion program runs
 * per I/O by default: the fallback programs join once a completion shows a
 * request the kernel did not stamp (IOLAT_FORCE_RQ_MAP makes every request
 * look unstamped, so tests take this same path), the bio-layer programs
 * once a bio-based disk has a size. Until then they cost nothing. On a
 * kernel that caches its clock in the plug (6.9+) the issue and creation
 * programs run from the start, to restamp (bpf/iolat.bpf.c, "Restamping").
 */
int collector_attach_needed(struct collector *c)
{
	int rc = collector_attach_tp(c, TP_RQ_COMPLETE);

	/* Keyed by process, request creation names the submitter: always on. */
	if (!rc && c->key_process)
		rc = collector_attach_tp(c, c->prog[TP_IO_START] ? TP_IO_START : TP_RQ_INSERT);

	if (!rc && c->restamp) {
		rc = collector_attach_tp(c, TP_RQ_ISSUE);
		if (!rc)
			rc = collector_attach_tp(c, TP_IO_START);
	}
	if (!rc && c->skel->bss->saw_unstamped)
		rc = attach_fallback(c);
	if (!rc && !c->link[TP_BIO_QUEUE] && bio_disk_active())
		rc = attach_bio(c);
	c->bio_checked_ns = monotonic_ns();
	return rc;
}

/* A row request gets its row; the rest only wake collector_wait. A row
 * that cannot be given is no error: its key counts in the hash. */
static int on_wakeup(void *ctx, void *data, size_t len)
{
	const struct iolat_wake *w = data;

	if (len >= sizeof(*w) && w->why == IOLAT_WAKE_ROW)
		collector_rows_assign(ctx, w);
	return 0;
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

int collector_setup_wait(struct collector *c)
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

void collector_teardown_wait(struct collector *c)
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
void collector_renew_lease(struct collector *c)
{
	uint64_t until;

	if (!c->lease_ns || !c->pins.pinned)
		return;
	until = monotonic_ns() + c->lease_ns;
	__atomic_store_n(&c->skel->data_window->window.until_ns, until, __ATOMIC_RELAXED);
}

/* The grace is over: the collector taken over goes, its counts stay. */
int collector_end_handover(struct collector *c)
{
	int rc = handover_finish(c->prev, &c->series, c->stats_base, &c->skel->data_window->window);

	c->prev = NULL;
	if (!rc && c->pins.pinned && !c->unpin_at_close)
		rc = collector_save_series(c);
	return rc;
}

int collector_maintain(struct collector *c)
{
	int rc, done = 0;
	bool disks_changed = block_uevents(c->uevents);

	collector_renew_lease(c);
	if (monotonic_ns() >= fold_due_ns(c)) {
		rc = collector_fold(c);
		if (rc)
			return rc;
	}
	if (c->prev && monotonic_ns() >= handover_due_ns(c->prev)) {
		rc = collector_end_handover(c);
		if (rc)
			return rc;
		done |= COLLECTOR_NOW_HANDED_OVER;
	}

	if (c->prog[TP_RQ_ISSUE] && !c->fallback_on && c->skel->bss->saw_unstamped) {
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
