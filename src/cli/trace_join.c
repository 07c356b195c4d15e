// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* trace_join.c - guest requests matched to the host work that served them
 * (trace_join.h): reading both traces, the candidates, the clock, the
 * chains. */
#define _GNU_SOURCE /* qsort_r */
#include "cli/trace_join.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/trace_file.h"
#include "cli/trace_join_clock.h"
#include "core/trace_syscalls.h"
#include "iolat.h"
#include "trace.h"

/* The longest host call a guest request can be part of: qemu merges
 * adjacent virtio-blk requests into one call (request-merging), up to the
 * host's limits; 64 MiB is far above them. */
#define MAX_CALL_BYTES (64ull << 20)
/* Candidate calls looked at per guest request: a trace that reads one
 * offset over and over has many, and only the ones near in time matter. */
#define MAX_CANDIDATES 4096
/* A request with at most this many candidates (its offset rarely read)
 * gives the first, coarse estimate of the clock; with it, each request's
 * candidates are only the calls that clock allows within COARSE_WINDOW_NS,
 * plus 1 ms a second away from the trace's middle (a drift of up to 1000
 * ppm, which a drift-free estimate cannot see), so a hot offset read a
 * million times costs a few pairs a request, not a million. A true pair
 * always passes, however slow its virtio spans: its call begins after the
 * guest's D and ends before its C at the true clock, which the coarse one
 * is within the window of. */
#define FEW_CANDIDATES 8
#define COARSE_WINDOW_NS 50000000ll
/* Windows the drift is measured over, and the pairs each needs. */
#define CLOCK_WINDOWS 16
#define WINDOW_MIN_PAIRS 8

/* Everything read from one file. */
struct trace_set {
	struct trace_record *rec;
	size_t nrec, caprec;
	struct trace_syscall *sys;
	size_t nsys, capsys;
};

static int grow(void **p, size_t *cap, size_t n, size_t size)
{
	void *q;

	if (n < *cap)
		return 0;
	q = realloc(*p, (*cap ? *cap * 2 : 1024) * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = *cap ? *cap * 2 : 1024;
	return 0;
}

static int set_begin(void *ctx, const struct trace_file_info *info)
{
	(void)ctx;
	(void)info;
	return 0;
}

static int set_record(void *ctx, const struct trace_record *r)
{
	struct trace_set *s = ctx;

	if (grow((void **)&s->rec, &s->caprec, s->nrec, sizeof(*r)))
		return -ENOMEM;
	s->rec[s->nrec++] = *r;
	return 0;
}

static int set_syscall(void *ctx, const struct trace_syscall *sc)
{
	struct trace_set *s = ctx;

	if (grow((void **)&s->sys, &s->capsys, s->nsys, sizeof(*sc)))
		return -ENOMEM;
	s->sys[s->nsys++] = *sc;
	return 0;
}

static int set_pc_link(void *ctx, const struct trace_pc_link *l)
{
	(void)ctx;
	(void)l;
	return 0;
}

static int set_read(const char *path, struct trace_set *s, char *err, size_t len)
{
	struct trace_file_sink sink = { set_begin, set_record, set_syscall, set_pc_link, s };
	struct trace_file_info info;

	return trace_file_read(path, &info, &sink, err, len);
}

static void set_free(struct trace_set *s)
{
	free(s->rec);
	free(s->sys);
}

/* ---- the host side: each call on a file, with the block I/O inside it */

struct host_call {
	const struct trace_syscall *s;
	uint64_t first_q, first_d, last_c; /* 0: no host bio seen */
	uint32_t bios, bottom_dev;
	bool writes, used;
};

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int by_id(const void *a, const void *b)
{
	return cmp_u64(((const struct trace_record *)a)->id, ((const struct trace_record *)b)->id);
}

static int call_by_key(const void *a, const void *b)
{
	const struct host_call *x = a, *y = b;

	return x->s->tid != y->s->tid ? cmp_u64(x->s->tid, y->s->tid)
				      : cmp_u64(x->s->enter_ns, y->s->enter_ns);
}

static int call_by_pos(const void *a, const void *b)
{
	const struct host_call *x = a, *y = b;

	return x->s->pos != y->s->pos ? (x->s->pos < y->s->pos ? -1 : 1)
				      : cmp_u64(x->s->enter_ns, y->s->enter_ns);
}

/* The record a remapped bio came from: its chain's top has the link to
 * the call it was queued in. */
static const struct trace_record *top_of(const struct trace_set *h, const struct trace_record *r)
{
	for (int depth = 0; r->parent && depth < 16; depth++) {
		struct trace_record key = { .id = r->parent };
		const struct trace_record *up = bsearch(&key, h->rec, h->nrec, sizeof(key), by_id);

		if (!up)
			break;
		r = up;
	}
	return r;
}

static void min_set(uint64_t *dst, uint64_t v)
{
	if (v && (!*dst || v < *dst))
		*dst = v;
}

/* Each host bio's times into the call it was queued in: the top bios' Q,
 * the requests' (the bottom device's) D and C. */
static void host_attach_bios(struct trace_set *h, struct host_call *calls, size_t n)
{
	qsort(h->rec, h->nrec, sizeof(*h->rec), by_id);
	qsort(calls, n, sizeof(*calls), call_by_key);
	for (size_t i = 0; i < h->nrec; i++) {
		const struct trace_record *r = &h->rec[i], *top = top_of(h, r);
		struct trace_syscall ks = { .tid = top->tid, .enter_ns = top->sys_enter_ns };
		struct host_call key = { .s = &ks }, *c;

		if (!top->sys_enter_ns)
			continue;
		c = bsearch(&key, calls, n, sizeof(key), call_by_key);
		if (!c)
			continue;
		if (r == top) {
			min_set(&c->first_q, r->ts[TRACE_Q]);
			c->bios++;
		}
		if (!(r->flags & TRACE_F_BIO_BASED) && r->ts[TRACE_D] && r->ts[TRACE_C]) {
			min_set(&c->first_d, r->ts[TRACE_D]);
			if (r->ts[TRACE_C] > c->last_c)
				c->last_c = r->ts[TRACE_C];
			c->bottom_dev = r->dev;
		}
	}
}

/* A host bio queued in no positional call of qemu (inside io_submit or
 * io_uring_enter, or by an io_uring worker), the top of its chain. */
static bool bio_without_call(const struct trace_record *r)
{
	return !r->parent && !(r->sys_enter_ns && tracer_syscall_positional(r->sys_nr));
}

/*
 * Each such bio as a call of its own (JOIN_NO_CALL): at its sector of its
 * disk, from its Q to its C, with its chain's requests (dm remaps to the
 * disk below) as its device time. bio_sys holds the made-up calls.
 */
static int host_bio_calls(const struct trace_set *h, struct host_call *calls, size_t *k,
			  struct trace_syscall *bio_sys)
{
	size_t first = *k, nb = 0;

	for (size_t i = 0; i < h->nrec; i++) {
		const struct trace_record *r = &h->rec[i];

		if (!bio_without_call(r) || !r->ts[TRACE_C] || !r->bytes ||
		    (r->op != IOLAT_OP_READ && r->op != IOLAT_OP_WRITE))
			continue;
		bio_sys[nb] = (struct trace_syscall){ .enter_ns = r->ts[TRACE_Q],
						      .exit_ns = r->ts[TRACE_C],
						      .ret = r->bytes,
						      .pid = r->pid,
						      .tid = r->tid,
						      .nr = JOIN_NO_CALL,
						      .fd = -1,
						      .pos = (int64_t)(r->sector * 512),
						      .file_ino = r->id, /* its chain, below */
						      .file_dev = r->dev,
						      .file_rdev = r->dev };
		calls[*k] = (struct host_call){ .s = &bio_sys[nb],
						.writes = r->op == IOLAT_OP_WRITE,
						.first_q = r->ts[TRACE_Q],
						.bios = 1 };
		(*k)++;
		nb++;
	}
	/* The chains' requests, each into its top's call (by id: records are
	 * sorted by id, and so are these calls). */
	for (size_t i = 0; i < h->nrec; i++) {
		const struct trace_record *r = &h->rec[i], *top = top_of(h, r);
		size_t lo = first, hi = *k;

		if (!bio_without_call(top) || (r->flags & TRACE_F_BIO_BASED) || !r->ts[TRACE_D] ||
		    !r->ts[TRACE_C])
			continue;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (calls[mid].s->file_ino < top->id)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == *k || calls[lo].s->file_ino != top->id)
			continue;
		min_set(&calls[lo].first_d, r->ts[TRACE_D]);
		if (r->ts[TRACE_C] > calls[lo].last_c)
			calls[lo].last_c = r->ts[TRACE_C];
		calls[lo].bottom_dev = r->dev;
	}
	/* Known by their disk alone, as a block-device image is. */
	for (size_t i = first; i < *k; i++)
		bio_sys[i - first].file_ino = 0;
	return 0;
}

/* The host calls that read or wrote a file at an offset, and the bios
 * queued in none, by offset. bio_sys: room for h->nrec made-up calls. */
static int host_calls(struct trace_set *h, struct host_call **out, size_t *n,
		      struct trace_syscall *bio_sys)
{
	struct host_call *calls = calloc(h->nsys + h->nrec + 1, sizeof(*calls));
	size_t k = 0;

	if (!calls)
		return -ENOMEM;
	for (size_t i = 0; i < h->nsys; i++) {
		const struct trace_syscall *s = &h->sys[i];

		if (s->pos < 0 || s->ret <= 0 || (!s->file_dev && !s->file_ino))
			continue;
		calls[k].s = s;
		calls[k].writes = tracer_syscall_writes(s->nr);
		k++;
	}
	host_attach_bios(h, calls, k);
	host_bio_calls(h, calls, &k, bio_sys);
	qsort(calls, k, sizeof(*calls), call_by_pos);
	*out = calls;
	*n = k;
	return 0;
}

/* ---- the guest side: its requests */

static int by_request(const void *a, const void *b)
{
	const struct trace_record *x = a, *y = b;

	if (x->dev != y->dev)
		return cmp_u64(x->dev, y->dev);
	if (x->ts[TRACE_C] != y->ts[TRACE_C])
		return cmp_u64(x->ts[TRACE_C], y->ts[TRACE_C]);
	if (x->ts[TRACE_D] != y->ts[TRACE_D])
		return cmp_u64(x->ts[TRACE_D], y->ts[TRACE_D]);
	return cmp_u64(x->rq_sector, y->rq_sector);
}

static bool same_request(const struct trace_record *x, const struct trace_record *y)
{
	return !by_request(x, y) && x->rq_bytes == y->rq_bytes;
}

static bool is_request(const struct trace_record *r)
{
	return !(r->flags & TRACE_F_BIO_BASED) && r->ts[TRACE_D] && r->ts[TRACE_C];
}

static int by_completion(const void *a, const void *b)
{
	return cmp_u64(((const struct join_chain *)a)->c, ((const struct join_chain *)b)->c);
}

/* One chain per request the guest issued to a disk (its bios grouped);
 * requests without data are counted, not kept. */
static int guest_requests(struct trace_set *g, struct join_result *out)
{
	struct join_chain *ch = calloc(g->nrec ? g->nrec : 1, sizeof(*ch));
	size_t n = 0;

	if (!ch)
		return -ENOMEM;
	qsort(g->rec, g->nrec, sizeof(*g->rec), by_request);
	for (size_t i = 0; i < g->nrec;) {
		const struct trace_record *r = &g->rec[i];
		struct join_chain *c = &ch[n];
		size_t j = i;

		if (!is_request(r)) {
			i++;
			continue;
		}
		*c = (struct join_chain){ .guest_dev = r->dev,
					  .op = r->op,
					  .offset = r->rq_sector * 512,
					  .bytes = r->rq_bytes,
					  .q = r->ts[TRACE_Q],
					  .d = r->ts[TRACE_D],
					  .c = r->ts[TRACE_C] };
		for (; j < g->nrec && same_request(&g->rec[j], r); j++) {
			min_set(&c->q, g->rec[j].ts[TRACE_Q]);
			c->bios++;
		}
		i = j;
		if (!c->bytes || (c->op != IOLAT_OP_READ && c->op != IOLAT_OP_WRITE))
			out->misses[JOIN_MISS_NO_DATA]++;
		else
			n++;
	}
	qsort(ch, n, sizeof(*ch), by_completion);
	out->chains = ch;
	out->n = n;
	return 0;
}

/* ---- candidate pairs and the clock */

/* A guest request and a host call that could have served it: host -
 * guest lies in [lo, hi] if it did. */
struct pair {
	size_t chain, call;
	int64_t lo, hi;
};

struct pairs {
	struct pair *p;
	size_t n, cap;
};

static int pairs_add(struct pairs *ps, const struct join_chain *c, const struct host_call *h,
		     size_t ci, size_t hi)
{
	int64_t lo = (int64_t)(h->s->exit_ns - c->c), up = (int64_t)(h->s->enter_ns - c->d);

	/* The call must fit inside the guest's D -> C. */
	if (lo > up)
		return 0;
	if (grow((void **)&ps->p, &ps->cap, ps->n, sizeof(*ps->p)))
		return -ENOMEM;
	ps->p[ps->n++] = (struct pair){ ci, hi, lo, up };
	return 0;
}

/* A coarse clock: host - guest within +-(window + |t - mid| / 1000) of
 * offset at guest time t; unset: any. */
struct coarse {
	bool set;
	int64_t offset, window;
	uint64_t mid;
};

static int64_t coarse_window(const struct coarse *k, uint64_t t)
{
	return k->window + (int64_t)(t > k->mid ? t - k->mid : k->mid - t) / 1000;
}

/* The first call in [lo, hi) whose position is past pos (after = true) or
 * at or past it; calls are by position, then by entry. */
static size_t first_call(const struct host_call *calls, size_t lo, size_t hi, uint64_t pos,
			 bool after)
{
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		uint64_t at = (uint64_t)calls[mid].s->pos;

		if (at < pos || (after && at == pos))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The first call in [lo, hi) (one position) that entered at or after ns. */
static size_t first_entered(const struct host_call *calls, size_t lo, size_t hi, uint64_t ns)
{
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (calls[mid].s->enter_ns < ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Whether call h can be the request's: its kind, its bytes, and, with a
 * coarse clock, its time. */
static bool could_serve(const struct join_chain *c, const struct host_call *h,
			const struct coarse *k)
{
	if ((uint64_t)h->s->pos + (uint64_t)h->s->ret < c->offset + c->bytes ||
	    h->writes != (c->op == IOLAT_OP_WRITE))
		return false;
	return !k->set || ((int64_t)(h->s->enter_ns - c->d) >= k->offset - coarse_window(k, c->d) &&
			   (int64_t)(h->s->exit_ns - c->c) <= k->offset + coarse_window(k, c->d));
}

/* Every call of the request's kind that covers its bytes (at a time the
 * coarse clock allows, once there is one): those at its offset, found by
 * time with a coarse clock, and those before it (a call qemu merged from
 * several requests), at most MAX_CANDIDATES looked at each. With few, only
 * the pairs of requests with at most FEW_CANDIDATES are kept. */
static int candidates(const struct join_result *r, const struct host_call *calls, size_t n,
		      const struct coarse *k, bool few, struct pairs *ps)
{
	for (size_t ci = 0; ci < r->n; ci++) {
		const struct join_chain *c = &r->chains[ci];
		size_t at = first_call(calls, 0, n, c->offset, false);
		size_t past = first_call(calls, at, n, c->offset, true), seen = 0, first = ps->n;
		size_t from = at;

		if (k->set)
			from = first_entered(calls, at, past,
					     c->d + (uint64_t)(k->offset - coarse_window(k, c->d)));
		size_t most = few ? FEW_CANDIDATES + 1 : SIZE_MAX;

		for (size_t i = from; i < past && seen < MAX_CANDIDATES && ps->n - first < most;
		     i++, seen++) {
			/* Entered after the request's C at the latest clock: so
			 * did every later one at this offset. */
			if (k->set && (int64_t)(calls[i].s->enter_ns - c->c) >
					  k->offset + coarse_window(k, c->d))
				break;
			if (could_serve(c, &calls[i], k) && pairs_add(ps, c, &calls[i], ci, i))
				return -ENOMEM;
		}
		for (size_t i = at; i-- > 0 && seen < MAX_CANDIDATES && ps->n - first < most;
		     seen++) {
			if ((uint64_t)calls[i].s->pos + MAX_CALL_BYTES < c->offset)
				break;
			if (could_serve(c, &calls[i], k) && pairs_add(ps, c, &calls[i], ci, i))
				return -ENOMEM;
		}
		if (few && ps->n - first > FEW_CANDIDATES)
			ps->n = first;
	}
	return 0;
}

/* Guest ns since the clock's origin (a request issued before the first
 * completed one is before it). */
static double since_t0(const struct join_clock *k, uint64_t guest_ns)
{
	return (double)(int64_t)(guest_ns - k->t0_ns);
}

struct edge {
	int64_t at;
	int delta; /* +1: an interval opens; -1: one closes (after opens) */
};

static int by_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	return y->delta - x->delta;
}

/*
 * The offset most of the pairs' intervals agree on (each shifted by the
 * drift at its guest time): the middle of the stretch covered by the most.
 * Pairs [from, to) only. Returns that count; 0 if there are none.
 */
static size_t most_agreed(const struct pairs *ps, size_t from, size_t to,
			  const struct join_result *r, const struct join_clock *k, int64_t *at)
{
	struct edge *e = malloc(2 * (to - from + 1) * sizeof(*e));
	size_t n = 0, best = 0, cur = 0;

	if (!e)
		return 0;
	for (size_t i = from; i < to; i++) {
		double shift = k->drift * since_t0(k, r->chains[ps->p[i].chain].d);

		e[n++] = (struct edge){ ps->p[i].lo - (int64_t)shift, +1 };
		e[n++] = (struct edge){ ps->p[i].hi - (int64_t)shift, -1 };
	}
	qsort(e, n, sizeof(*e), by_edge);
	for (size_t i = 0; i < n; i++) {
		cur += (size_t)e[i].delta;
		if (e[i].delta > 0 && cur > best && i + 1 < n) {
			best = cur;
			*at = e[i].at + (e[i + 1].at - e[i].at) / 2;
		}
	}
	free(e);
	return best;
}

/* Pairs by guest request (requests are in completion order), then by the
 * call's entry. */
static int pair_by_chain(const void *a, const void *b, void *arg)
{
	const struct pair *x = a, *y = b;
	const struct host_call *calls = arg;

	if (x->chain != y->chain)
		return x->chain < y->chain ? -1 : 1;
	return cmp_u64(calls[x->call].s->enter_ns, calls[y->call].s->enter_ns);
}

/* The agreed offset in one window of the trace, at its middle's time. */
struct window {
	double t, at;
	size_t agreed;
};

/*
 * The drift: the agreed offset in windows of the trace (by guest time)
 * gives slopes, between every two windows and a least-squares line through
 * them all; of those (and no drift), the one under which the most pairs of
 * the whole trace agree on one offset wins. A window whose agreed point is
 * wrong (a stretch of the trace that read one offset over and over) makes
 * slopes that few pairs agree with, so it cannot pull the line.
 */
static void fit_drift_on(const struct pairs *ps, const struct pairs *sample,
			 const struct join_result *r, struct join_clock *k)
{
	struct window w[CLOCK_WINDOWS + 1];
	double sw = 0, st = 0, so = 0, stt = 0, sto = 0, best_drift = 0;
	size_t nw = 0, per = ps->n / CLOCK_WINDOWS, best;
	int64_t at;

	k->drift = 0;
	best = most_agreed(sample, 0, sample->n, r, k, &at);
	if (per < WINDOW_MIN_PAIRS)
		per = WINDOW_MIN_PAIRS;
	for (size_t from = 0; from + per <= ps->n && nw <= CLOCK_WINDOWS; from += per) {
		size_t to = from + 2 * per > ps->n ? ps->n : from + per;

		w[nw].agreed = most_agreed(ps, from, to, r, k, &at);
		w[nw].at = (double)at;
		w[nw].t = since_t0(k, r->chains[ps->p[(from + to) / 2].chain].d);
		sw += (double)w[nw].agreed;
		st += (double)w[nw].agreed * w[nw].t;
		so += (double)w[nw].agreed * w[nw].at;
		stt += (double)w[nw].agreed * w[nw].t * w[nw].t;
		sto += (double)w[nw].agreed * w[nw].t * w[nw].at;
		nw++;
		if (to == ps->n)
			break;
	}
	for (size_t i = 0; i < nw; i++) {
		for (size_t j = i; j < nw; j++) {
			size_t n;

			if (j == i && i > 0)
				continue;
			if (j == i) /* the least-squares line, tried once */
				k->drift = sw * stt - st * st > 0
					       ? (sw * sto - st * so) / (sw * stt - st * st)
					       : 0;
			else if (w[j].t > w[i].t)
				k->drift = (w[j].at - w[i].at) / (w[j].t - w[i].t);
			else
				continue;
			n = most_agreed(sample, 0, sample->n, r, k, &at);
			if (n > best || (n == best && fabs(k->drift) < fabs(best_drift))) {
				best = n;
				best_drift = k->drift;
			}
		}
	}
	k->drift = best_drift;
}

/* Candidate drifts are judged on every pair up to DRIFT_SAMPLE of them, on
 * an even sample past that: which slope most pairs agree with shows as
 * well in 20 000 as in millions, at a fraction of the sorting. */
#define DRIFT_SAMPLE 20000

static void fit_drift(const struct pairs *ps, const struct join_result *r, struct join_clock *k)
{
	struct pairs sample = { 0 };
	size_t step = ps->n / DRIFT_SAMPLE + 1;

	if (step == 1) {
		fit_drift_on(ps, ps, r, k);
		return;
	}
	sample.p = malloc((ps->n / step + 1) * sizeof(*sample.p));
	if (!sample.p) {
		fit_drift_on(ps, ps, r, k);
		return;
	}
	for (size_t i = 0; i < ps->n; i += step)
		sample.p[sample.n++] = ps->p[i];
	fit_drift_on(ps, &sample, r, k);
	free(sample.p);
}

static int64_t shifted(const struct join_clock *k, const struct join_chain *c, int64_t v)
{
	return v - (int64_t)(k->drift * since_t0(k, c->d));
}

/* The clock every matched pair allows (trace_join_clock.h). */
static int fit_clock(struct join_result *r, const struct host_call *calls, const size_t *call_of,
		     const bool *sole)
{
	struct join_clock *k = &r->clock;
	struct clock_pair *p = malloc((r->n + 1) * sizeof(*p));
	struct clock_fit fit;
	int64_t base = 0;
	size_t n = 0;

	if (!p)
		return -ENOMEM;
	for (size_t i = 0; i < r->n; i++) {
		const struct join_chain *c = &r->chains[i];
		const struct trace_syscall *s;

		if (call_of[i] == SIZE_MAX || (!sole[i] && !k->from_all))
			continue;
		s = calls[call_of[i]].s;
		if (!n)
			base = (int64_t)(s->exit_ns - c->c);
		p[n++] = (struct clock_pair){ since_t0(k, c->d),
					      (double)((int64_t)(s->exit_ns - c->c) - base),
					      (double)((int64_t)(s->enter_ns - c->d) - base) };
	}
	k->pairs = n;
	if (!n && r->matched && !k->from_all) {
		/* No request had one call alone that fits: the clock from them
		 * all, its bound then not a guarantee (said in the output). */
		free(p);
		k->from_all = true;
		return fit_clock(r, calls, call_of, sole);
	}
	if (n) {
		join_clock_fit(p, n, k->drift, &fit);
		k->drift = fit.drift;
		k->offset_ns = base + (int64_t)llround(fit.theta0);
		k->bound_ns = (int64_t)ceil(fit.bound);
	}
	free(p);
	return 0;
}

/*
 * Each guest request gets the earliest call whose interval holds the agreed
 * offset and that no earlier request took whole (a call longer than the
 * request, qemu's merge of several, serves each of them). call_of[i]: the
 * call of chain i, SIZE_MAX if none; sole[i]: it was the only call whose
 * interval holds the agreed offset. Only such pairs set the clock: where
 * requests at one offset overlap in time (a hot block read again and
 * again), two of them can each fit the other's call, and a pair that is
 * not the request's own would set a bound the true clock is outside of.
 */
static void assign(struct join_result *r, struct host_call *calls, const struct pairs *ps,
		   int64_t agreed, size_t *call_of, bool *sole)
{
	const struct join_clock *k = &r->clock;

	for (size_t i = 0; i < ps->n;) {
		size_t chain = ps->p[i].chain, fits = 0;
		const struct join_chain *c = &r->chains[chain];
		const struct pair *best = NULL;

		for (; i < ps->n && ps->p[i].chain == chain; i++) {
			const struct pair *p = &ps->p[i];

			if (shifted(k, c, p->lo) > agreed || shifted(k, c, p->hi) < agreed)
				continue;
			fits++;
			if (!best && !calls[p->call].used)
				best = p;
		}
		if (!best)
			continue;
		call_of[chain] = best->call;
		sole[chain] = fits == 1;
		if ((uint64_t)calls[best->call].s->ret <= c->bytes)
			calls[best->call].used = true;
		r->matched++;
	}
}

/* ---- the chains */

static void chain_spans(struct join_chain *c, const struct host_call *h, const struct join_clock *k)
{
	const struct trace_syscall *s = h->s;
	int64_t theta = k->offset_ns + (int64_t)(k->drift * since_t0(k, c->d));
	int64_t *sp = c->span_ns;

	c->matched = true;
	c->sys_nr = s->nr;
	c->tid = s->tid;
	c->sys_offset = s->pos;
	c->sys_bytes = (uint64_t)s->ret;
	c->enter = s->enter_ns;
	c->exit = s->exit_ns;
	c->host_bios = h->bios;
	c->host_dev = h->bottom_dev;
	sp[JOIN_GUEST_QUEUE] = (int64_t)(c->d - c->q);
	sp[JOIN_VIRTIO_IN] = (int64_t)s->enter_ns - theta - (int64_t)c->d;
	sp[JOIN_VIRTIO_OUT] = (int64_t)c->c - ((int64_t)s->exit_ns - theta);
	if (h->first_q && h->first_d && h->last_c) {
		sp[JOIN_HOST_FS] = (int64_t)(h->first_q - s->enter_ns);
		sp[JOIN_HOST_BLOCK] = (int64_t)(h->first_d - h->first_q);
		sp[JOIN_HOST_DEVICE] = (int64_t)(h->last_c - h->first_d);
		sp[JOIN_HOST_RETURN] = (int64_t)(s->exit_ns - h->last_c);
	} else {
		/* No host bio seen (served from the host's page cache, or its
		 * bios were not followed): the call's time is all its own. */
		sp[JOIN_HOST_FS] = (int64_t)(s->exit_ns - s->enter_ns);
	}
}

/* A host file, and how many guest requests it has a call for. */
struct file_votes {
	uint32_t dev, rdev;
	uint64_t ino;
	size_t chains;
};

#define MAX_FILES 64

/*
 * The VM's image: of the files with a call at a time the agreed offset
 * allows, the one most guest requests have such a call on. Another disk of
 * the same VM (or any file read at the same offsets) can then not serve a
 * request in the image's place. Returns its index in files, -1 if none.
 */
static int vote_image(const struct join_result *r, const struct host_call *calls,
		      const struct pairs *ps, int64_t agreed, struct file_votes *files,
		      size_t *nfiles)
{
	int best = -1;

	*nfiles = 0;
	for (size_t i = 0; i < ps->n; i++) {
		const struct pair *p = &ps->p[i];
		const struct trace_syscall *s = calls[p->call].s;
		const struct join_chain *c = &r->chains[p->chain];
		size_t f;

		if (shifted(&r->clock, c, p->lo) > agreed || shifted(&r->clock, c, p->hi) < agreed)
			continue;
		/* A chain's pairs are together: count it once per file. */
		for (size_t k = i; k-- > 0 && ps->p[k].chain == p->chain;)
			if (calls[ps->p[k].call].s->file_ino == s->file_ino &&
			    calls[ps->p[k].call].s->file_dev == s->file_dev &&
			    shifted(&r->clock, c, ps->p[k].lo) <= agreed &&
			    shifted(&r->clock, c, ps->p[k].hi) >= agreed)
				goto next;
		for (f = 0; f < *nfiles; f++)
			if (files[f].ino == s->file_ino && files[f].dev == s->file_dev)
				break;
		if (f == *nfiles) {
			if (f == MAX_FILES)
				continue;
			files[f] = (struct file_votes){ s->file_dev, s->file_rdev, s->file_ino, 0 };
			(*nfiles)++;
		}
		files[f].chains++;
		if (best < 0 || files[f].chains > files[best].chains)
			best = (int)f;
	next:;
	}
	return best;
}

/* Keeps the pairs whose call is on the image. */
static void keep_image(struct join_result *r, const struct host_call *calls, struct pairs *ps,
		       const struct file_votes *img)
{
	size_t n = 0;

	for (size_t i = 0; i < ps->n; i++) {
		const struct trace_syscall *s = calls[ps->p[i].call].s;

		if (s->file_ino == img->ino && s->file_dev == img->dev)
			ps->p[n++] = ps->p[i];
	}
	ps->n = n;
	r->image_dev = img->dev;
	r->image_rdev = img->rdev;
	r->image_ino = img->ino;
}

/* Why each unmatched request is: no call covered it, or none at a time
 * the clock allows. */
static void count_misses(struct join_result *r, const struct pairs *ps, const size_t *call_of)
{
	for (size_t i = 0, p = 0; i < r->n; i++) {
		bool any = false;

		for (; p < ps->n && ps->p[p].chain <= i; p++)
			any |= ps->p[p].chain == i;
		if (call_of[i] == SIZE_MAX)
			r->misses[any ? JOIN_MISS_NO_CLOCK : JOIN_MISS_NO_CALL]++;
	}
}

/*
 * The candidate pairs: first those of requests with few candidates, for a
 * coarse clock (the offset most of them agree on); then every request's,
 * near that clock. Without such requests, every request's, as found.
 */
static int coarse_candidates(struct join_result *r, const struct host_call *calls, size_t n,
			     struct pairs *ps)
{
	struct coarse k = { 0 };
	struct join_clock none = { .t0_ns = r->n ? r->chains[0].d : 0 };
	int rc = candidates(r, calls, n, &k, true, ps);

	if (rc || !most_agreed(ps, 0, ps->n, r, &none, &k.offset))
		return rc ? rc : candidates(r, calls, n, &k, false, ps);
	k.set = true;
	k.window = COARSE_WINDOW_NS;
	k.mid = r->chains[0].d / 2 + r->chains[r->n - 1].c / 2;
	ps->n = 0;
	return candidates(r, calls, n, &k, false, ps);
}

static int join_sets(struct trace_set *g, struct trace_set *h, struct join_result *r)
{
	struct trace_syscall *bio_sys = calloc(h->nrec + 1, sizeof(*bio_sys));
	struct host_call *calls = NULL;
	struct pairs ps = { 0 };
	size_t ncalls = 0, *call_of = NULL;
	bool *sole = NULL;
	int64_t agreed = 0;
	int rc = bio_sys ? 0 : -ENOMEM;

	if (!rc)
		rc = guest_requests(g, r);
	if (!rc)
		rc = host_calls(h, &calls, &ncalls, bio_sys);
	if (!rc)
		rc = coarse_candidates(r, calls, ncalls, &ps);
	if (!rc && (!(call_of = malloc((r->n + 1) * sizeof(*call_of))) ||
		    !(sole = calloc(r->n + 1, sizeof(*sole)))))
		rc = -ENOMEM;
	if (rc)
		goto out;
	for (size_t i = 0; i < r->n; i++)
		call_of[i] = SIZE_MAX;
	r->host_calls = ncalls;
	r->clock.t0_ns = r->n ? r->chains[0].d : 0;
	qsort_r(ps.p, ps.n, sizeof(*ps.p), pair_by_chain, calls);
	/* The clock from every candidate, the image from it, then the clock
	 * again from the image's candidates alone. */
	fit_drift(&ps, r, &r->clock);
	if (most_agreed(&ps, 0, ps.n, r, &r->clock, &agreed)) {
		struct file_votes files[MAX_FILES];
		size_t nfiles;
		int img = vote_image(r, calls, &ps, agreed, files, &nfiles);

		if (img >= 0)
			keep_image(r, calls, &ps, &files[img]);
		fit_drift(&ps, r, &r->clock);
	}
	if (most_agreed(&ps, 0, ps.n, r, &r->clock, &agreed))
		assign(r, calls, &ps, agreed, call_of, sole);
	rc = fit_clock(r, calls, call_of, sole);
	if (rc)
		goto out;
	count_misses(r, &ps, call_of);
	for (size_t i = 0; i < r->n; i++)
		if (call_of[i] != SIZE_MAX)
			chain_spans(&r->chains[i], &calls[call_of[i]], &r->clock);
out:
	free(sole);
	free(call_of);
	free(ps.p);
	free(calls);
	free(bio_sys);
	return rc;
}

int trace_join(const char *guest_path, const char *host_path, struct join_result *out, char *err,
	       size_t len)
{
	struct trace_set g = { 0 }, h = { 0 };
	int rc;

	memset(out, 0, sizeof(*out));
	rc = set_read(guest_path, &g, err, len);
	if (!rc)
		rc = set_read(host_path, &h, err, len);
	if (!rc) {
		rc = join_sets(&g, &h, out);
		if (rc)
			snprintf(err, len, "joining %s and %s: %s", guest_path, host_path,
				 strerror(-rc));
	}
	set_free(&g);
	set_free(&h);
	if (rc)
		trace_join_free(out);
	return rc;
}

void trace_join_free(struct join_result *r)
{
	free(r->chains);
	r->chains = NULL;
	r->n = 0;
}

const char *trace_join_span_name(enum join_span s)
{
	static const char *const names[JOIN_SPANS] = {
		"guest_queue", "virtio_in",   "host_fs",    "host_block",
		"host_device", "host_return", "virtio_out",
	};

	return names[s];
}
