/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * collector_internal.h - what the collector's files share (collector.h is
 * its interface): its state, and the calls between them. collector.c opens
 * and closes it, collector_attach.c attaches and waits, collector_series.c
 * folds and moves keys, collector_pins.c keeps it across restarts,
 * collector_stats.c reports on it.
 */
#ifndef IOLAT_COLLECTOR_INTERNAL_H
#define IOLAT_COLLECTOR_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "core/collector.h"
#include "core/collector_rows.h"
#include "core/handover.h"
#include "core/mapbatch.h"
#include "iolat.skel.h"

struct collector {
	struct iolat_bpf *skel;
	enum attach_mode mode;
	bool force_rq_map;
	bool plug_clock;  /* probe_result.plug_clock */
	bool restamp;	  /* the programs restamp (plug clock, both tracepoints) */
	bool fallback_on; /* the request map is filled: its programs attached */
	bool key_cgroup;  /* keys carry a cgroup or a process: shared values */
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
	struct mapbatch fold;	   /* the fold's batch buffers (collector_series.c) */
	struct rows rows;	   /* the dense rows (collector_rows.c); cap 0: none */
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

/* Whether o's keys are disk and op only, so the programs use dense rows. */
bool collector_rows_wanted(const struct collector_opts *o);

/* Sizes the rows maps of skel as the plan says (size_maps). */
void collector_rows_size(struct iolat_bpf *skel, const struct mapsize_plan *p);

/* After load: reads the rows given out (adopted pins) or none (new). 0 or
 * -ENOMEM. */
int collector_rows_start(struct collector *c);

/* A program asked for a row (struct iolat_wake): gives the disk and op its
 * row, or a free one, if any is left. 0 or -errno. */
int collector_rows_assign(struct collector *c, const struct iolat_wake *w);

/* Points back any index entry a racing request left without its row. */
void collector_rows_repoint(struct collector *c);

/* Key k leaves the map: its index entry is cleared (completions go to the
 * hash), and its row, or -1, returned, for collector_rows_retire once its
 * value is folded. */
int collector_rows_detach(struct collector *c, const struct iolat_key *k);

/* Row `row` (-1: none) is out of use for good: its key's series took what
 * it counted. */
void collector_rows_retire(struct collector *c, int row);

/* Attaches tp's program, or takes its link from the pins if an earlier run
 * attached it; a new link is pinned (when pinning) for the next run. */
int collector_attach_tp(struct collector *c, enum probe_tp tp);

/* Detaches every program it attached (links it took from pins included). */
void collector_detach_all(struct collector *c);

/*
 * Attaches what the I/O in flight needs. Only the completion program runs
 * per I/O by default: the fallback programs join once a completion shows a
 * request the kernel did not stamp (IOLAT_FORCE_RQ_MAP makes every request
 * look unstamped, so tests take this same path), the bio-layer programs
 * once a bio-based disk has a size. Until then they cost nothing.
 */
int collector_attach_needed(struct collector *c);

/* The counters handed over to this collector: by earlier ones, and by the
 * one still handing over. */
void collector_handed_stats(struct collector *c, uint64_t out[IOLAT_STAT_COUNT]);

/* Saves the series for the run that adopts the pins next. */
int collector_save_series(struct collector *c);

/* What collector_wait sleeps on: the kernel's wake-up ring buffer and
 * device events, in one epoll; and its undoing. 0 or -errno. */
int collector_setup_wait(struct collector *c);
void collector_teardown_wait(struct collector *c);

/*
 * Pinned with a lease (collector_opts.lease_ns): moves its end to now +
 * lease. The programs read it at every I/O: one aligned 64-bit store.
 */
void collector_renew_lease(struct collector *c);

/* The grace is over: the collector taken over goes, its counts stay. */
int collector_end_handover(struct collector *c);

/* CLOCK_REALTIME now, in ns: when maps are made (collector_pins.created_ns). */
uint64_t collector_realtime_ns(void);

/*
 * Before load, with pinning: adopts the maps an earlier run of the same
 * collector pinned; takes over one of another build or other settings
 * whose maps it can read (take_over); or, if it cannot (a newer layout, a
 * collector from before handovers), removes it and says so in
 * pins.replaced: its programs stop counting here, and counters start again.
 */
int collector_pins_before_load(struct collector *c, enum attach_mode mode, char *err, size_t len);

/* After load, with pinning: pins the new maps and says who made them, or
 * marks the adopted ones as taken by this run. */
int collector_pins_after_load(struct collector *c);

/*
 * Our window after load (struct iolat_window): taking over, it counts
 * nothing until the switch; adopting, whatever a handover left in it is
 * over (the run that held the collector taken over is gone, and with it
 * that one's programs), so it counts everything.
 */
void collector_window_after_load(struct collector *c);

/*
 * Taking over, with our programs attached and counting nothing: attaches
 * ours where the other had programs (so ours see the I/O that begins
 * before theirs go), sets the switch time in both windows, folds in what
 * the other counted so far, and saves the series as this collector's.
 */
int collector_switch_over(struct collector *c);

/* What the collector would load, as one number: its BPF object, the
 * constants set in it, every map's size and the attach mode. Maps pinned by
 * a collector with the same identity hold what this one's would, laid out
 * as this one reads them. */
uint64_t collector_identity_of(struct collector *c, enum attach_mode mode);

#endif
