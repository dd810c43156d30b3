#include "util/analysis/timeline.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/db/db.h"
#include "util/db/read/events.h"
#include "util/db/read/query.h"
#include "util/hashmap.h"
#include "util/saturate.h"
#include "util/error.h"
#include "util/db/read/site.h"
#include "util/db/read/series.h"
#include "util/db/read/totals.h"
#include "util/duration.h"
#include "util/window.h"
#include "util/symbols/srcpath.h"

/* What the ranking pass keeps per site. */
struct site_acc {
	int64_t live, peak, first;
	int64_t cpu_total;
	int64_t touched;	/* checkpoint id of the last heap row, or -1 */
	int64_t *addrs;		/* the site's addresses */
	size_t n_addrs, cap_addrs;
	bool heap;		/* had a heap row */
};

struct tl_ctx {
	struct db *db;
	const struct timeline_opts *o;
	struct sitemap *sm;
	/* heap stacks whose rows count at another site than their addr (past an
	 * allocation wrapper, as report): stack id -> site + 1 */
	struct hashmap moved;
	struct site_acc *acc;	/* one per site of sm */
	int64_t *cp_ids;	/* checkpoint ids in order, tl->n of them */
	/* compacted checkpoints (lo, hi]: a site's rows come from the series
	 * (series_fill), not from the rows folded into their blocks' last */
	int64_t series_lo, series_hi;
	/* the chosen sites whose series are being filled */
	struct chosen {
		long s;
		bool heap;
		double *values;
	} *chosen;
	size_t n_chosen, cap_chosen;
};

/* Loading the checkpoints. */
struct tl_load {
	struct tl_ctx *c;
	struct timeline *tl;
	size_t cap;
	bool have_live;
};

static bool in_series(const struct tl_ctx *c, int64_t id)
{
	return id > c->series_lo && id <= c->series_hi;
}

/* One checkpoint into the series (db_events__checkpoints()). */
static int checkpoint_row(void *ctx, const struct checkpoint_row *r)
{
	struct tl_load *l = ctx;
	struct timeline *tl = l->tl;
	struct tl_ctx *c = l->c;

	if (tl->n >= DB_MAX_ROWS)
		return db__too_many_rows(c->db, "checkpoints");
	if (tl->n == l->cap) {
		/* seven arrays of one length: each grown from the same capacity */
		size_t k[7] = { l->cap, l->cap, l->cap, l->cap, l->cap, l->cap, l->cap };

		if (ALLOC_GROW(tl->t_ms, tl->n + 1, k[0], 256) ||
		    ALLOC_GROW(tl->live, tl->n + 1, k[1], 256) ||
		    ALLOC_GROW(tl->alloc, tl->n + 1, k[2], 256) ||
		    ALLOC_GROW(tl->freed, tl->n + 1, k[3], 256) ||
		    ALLOC_GROW(tl->cpu, tl->n + 1, k[4], 256) ||
		    ALLOC_GROW(c->cp_ids, tl->n + 1, k[5], 256) ||
		    ALLOC_GROW(tl->rss, tl->n + 1, k[6], 256))
			return -ENOMEM;
		l->cap = k[0];
	}
	c->cp_ids[tl->n] = r->id;
	tl->t_ms[tl->n] = r->t_ms;
	tl->cpu[tl->n] = (double)r->cpu_total;
	tl->alloc[tl->n] = (double)r->alloc_bytes;
	tl->freed[tl->n] = (double)r->free_bytes;
	tl->live[tl->n] = (double)r->live_bytes;
	tl->rss[tl->n] = NAN;
	if (r->has_rss) {
		tl->rss[tl->n] = (double)r->rss_bytes;
		tl->has_rss = true;
	}
	if (tl->live[tl->n] != 0)
		l->have_live = true;
	if (tl->alloc[tl->n] != 0 || tl->freed[tl->n] != 0)
		tl->has_heap = true;
	tl->n++;
	return 0;
}

static int load_checkpoints(struct tl_ctx *c, struct timeline *tl)
{
	struct tl_load l = { .c = c, .tl = tl };
	double live = 0;
	int err = db_events__checkpoints(c->db, checkpoint_row, &l);

	if (err)
		return err;
	/* no recorded live heap (version 1, or a writer that left it out): sum it up */
	if (!l.have_live && tl->has_heap) {
		for (size_t i = 0; i < tl->n; i++) {
			live += tl->alloc[i] - tl->freed[i];
			tl->live[i] = live;
		}
	}
	return 0;
}

/* Index of checkpoint id, or -1. */
static long cp_index(const struct tl_ctx *c, size_t n, int64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (c->cp_ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && c->cp_ids[lo] == id ? (long)lo : -1;
}

static int add_addr(struct site_acc *a, int64_t addr)
{
	if (ALLOC_GROW(a->addrs, a->n_addrs + 1, a->cap_addrs, 4))
		return -ENOMEM;
	a->addrs[a->n_addrs++] = addr;
	return 0;
}

/* A heap stack re-attributed past a wrapper: its site, made when new. */
static int moved_cb(void *ctx, int64_t stack_id, const char *file, int line,
		    const char *function, const char *module)
{
	struct tl_ctx *c = ctx;
	long s = sitemap__intern(c->sm, SITE_BY_LINE, file, line, function, module);

	if (s < 0)
		return (int)s;
	return hashmap__set(&c->moved, (uint64_t)stack_id, (uint64_t)s + 1);
}

/* The site of a heap row: its stack's when moved, else its address's; -1: none. */
static long heap_site(const struct tl_ctx *c, int64_t addr, int64_t stack_id)
{
	uint64_t v;

	if (stack_id >= 0 && hashmap__size(&c->moved) &&
	    hashmap__get(&c->moved, (uint64_t)stack_id, &v) && v)
		return (long)v - 1;
	return sitemap__find_addr(c->sm, addr);
}

static int load_sites(struct tl_ctx *c)
{
	int err = sitemap__load(c->sm, c->db, SITE_BY_LINE);

	if (!err && db__has(c->db, DB_V2))
		err = db_query_heap_moved(c->db, c->o->alloc_fn, moved_cb, c);
	if (err)
		return err;
	c->acc = calloc(sitemap__count(c->sm) + 1, sizeof(*c->acc));
	if (!c->acc)
		return -ENOMEM;
	for (size_t i = 0; i < sitemap__count(c->sm); i++)
		c->acc[i].touched = -1;
	for (size_t i = 0; i < sitemap__n_addrs(c->sm); i++) {
		int64_t addr;
		long s = sitemap__addr_at(c->sm, i, &addr);

		if (s >= 0 && (err = add_addr(&c->acc[s], addr)))
			return err;
	}
	return 0;
}

/* The end of checkpoint `id`: the peaks of the sites it touched. */
static void close_checkpoint(struct tl_ctx *c, long *touched, size_t *n_touched)
{
	for (size_t i = 0; i < *n_touched; i++) {
		struct site_acc *a = &c->acc[touched[i]];

		if (a->live > a->peak)
			a->peak = a->live;
	}
	*n_touched = 0;
}

/*
 * The end of the window's first checkpoint: every site's live bytes then
 * are its start (growth is measured from there) and the start of its peak.
 */
static void window_start(struct tl_ctx *c)
{
	for (size_t i = 0; i < sitemap__count(c->sm); i++) {
		c->acc[i].first = c->acc[i].live;
		c->acc[i].peak = c->acc[i].live;
	}
}

/* The heap pass over the rows, and where it is. */
struct heap_walk {
	struct tl_ctx *c;
	int64_t first_id, last_id;
	bool sorted;
	long *touched;
	size_t n_touched;
	int64_t cur;
	bool started;
};

#define HEAP_UNSORTED	1	/* rows out of checkpoint order: read them sorted */
#define HEAP_DONE	2	/* past the window, sorted: the rest is not needed */

static int heap_row(void *ctx, int64_t id, int64_t addr, int64_t delta, int64_t stack)
{
	struct heap_walk *k = ctx;
	struct tl_ctx *c = k->c;
	struct site_acc *a;
	long s;

	if (id != k->cur) {
		if (id < k->cur)
			return HEAP_UNSORTED;
		close_checkpoint(c, k->touched, &k->n_touched);
		if (!k->started && id > k->first_id) {
			window_start(c);
			k->started = true;
		}
		/*
		 * Past the window: the end, once sorted; before, the rest is
		 * read for its order only (record --retain puts a folded
		 * checkpoint's rows after later ones).
		 */
		if (id > k->last_id && k->sorted)
			return HEAP_DONE;
		k->cur = id;
	}
	if (id > k->last_id)
		return 0;
	s = heap_site(c, addr, stack);
	if (s < 0)
		return 0;
	a = &c->acc[s];
	a->live = sat__add(a->live, delta);
	a->heap = true;
	if (a->touched != id) {
		a->touched = id;
		k->touched[k->n_touched++] = s;
	}
	return 0;
}

/*
 * One pass over heap_events: per site the live bytes at the end of the
 * window (checkpoint last_id), the peak at a checkpoint's end within the
 * window, and the live bytes at the end of its first checkpoint (first_id).
 * Rows come in insertion (= checkpoint) order; if they do not (anywhere,
 * past the window too), the pass is redone sorted.
 */
static int heap_pass(struct tl_ctx *c, int64_t first_id, int64_t last_id, bool sorted)
{
	struct heap_walk k = { .c = c, .first_id = first_id, .last_id = last_id,
			       .sorted = sorted, .cur = INT64_MIN };
	int err;

	k.touched = malloc((sitemap__count(c->sm) + 1) * sizeof(*k.touched));
	if (!k.touched)
		return -ENOMEM;
	err = db_events__heap(c->db, sorted, heap_row, &k);
	if (err == HEAP_DONE)
		err = 0;
	if (!err) {
		close_checkpoint(c, k.touched, &k.n_touched);
		if (!k.started)
			window_start(c);
	}
	free(k.touched);
	if (err == HEAP_UNSORTED) {
		pr_debug(1, "heap events out of checkpoint order: sorting");
		for (size_t i = 0; i < sitemap__count(c->sm); i++) {
			c->acc[i].live = c->acc[i].peak = c->acc[i].first = 0;
			c->acc[i].touched = -1;
			c->acc[i].heap = false;
		}
		return heap_pass(c, first_id, last_id, true);
	}
	return err;
}

struct cpu_walk {
	struct tl_ctx *c;
	int64_t first_id, last_id;
};

static int cpu_row(void *ctx, int64_t id, int64_t addr, int64_t n)
{
	struct cpu_walk *k = ctx;
	long s;

	if (id < k->first_id || id > k->last_id)
		return 0;
	s = sitemap__find_addr(k->c->sm, addr);
	if (s >= 0)
		k->c->acc[s].cpu_total = sat__add(k->c->acc[s].cpu_total, n);
	return 0;
}

/* Samples per site in the window's checkpoints (first_id..last_id). */
static int cpu_pass(struct tl_ctx *c, int64_t first_id, int64_t last_id)
{
	struct cpu_walk k = { c, first_id, last_id };

	return db_events__cpu(c->db, cpu_row, &k);
}

static int totals_site(void *ctx, const struct totals_row *r)
{
	const struct tl_ctx *c = ctx;

	return (int)heap_site(c, r->addr, r->stack_id);	/* as heap_pass() */
}

/* heap_pass() from the writer's totals. */
static int heap_totals(struct tl_ctx *c, struct totals *t, int64_t first_id, int64_t last_id)
{
	struct totals_heap_walk w = {
		.n_groups = (int)sitemap__count(c->sm),
		.group_of = totals_site,
		.ctx = c,
		.hi = last_id,
		.peak_from = first_id + 1,
		.win_lo = INT64_MAX,
	};
	int err = totals__heap_walk(t, &w);

	if (err)
		return err;
	for (int s = 0; s < w.n_groups; s++) {
		struct site_acc *a = &c->acc[s];

		a->live = w.live[s];
		a->peak = w.peak[s];
		a->first = w.first[s];
		a->heap = w.had_row[s];
	}
	totals_heap_walk__free(&w);
	return 0;
}

static void totals_cpu(void *ctx, const struct totals_row *r)
{
	struct tl_ctx *c = ctx;
	long s = sitemap__find_addr(c->sm, r->addr);

	if (s >= 0)
		c->acc[s].cpu_total = sat__add(c->acc[s].cpu_total, r->count);
}

static enum timeline_rank sort_rank;
static const struct site_acc *sort_acc;

static int64_t rank_key(long s, enum timeline_rank r)
{
	const struct site_acc *a = &sort_acc[s];

	switch (r) {
	case RANK_PEAK:
		return a->peak;
	case RANK_GROWTH:
		return a->live - a->first;
	default:
		return a->live;
	}
}

static int cmp_rank(const void *x, const void *y)
{
	long a = *(const long *)x, b = *(const long *)y;
	int64_t ka = rank_key(a, sort_rank), kb = rank_key(b, sort_rank);

	if (ka != kb)
		return ka > kb ? -1 : 1;
	/* ties: the higher peak, then the site order (stable output) */
	if (sort_acc[a].peak != sort_acc[b].peak)
		return sort_acc[a].peak > sort_acc[b].peak ? -1 : 1;
	return a < b ? -1 : a > b;
}

static int cmp_cpu(const void *x, const void *y)
{
	long a = *(const long *)x, b = *(const long *)y;

	if (sort_acc[a].cpu_total != sort_acc[b].cpu_total)
		return sort_acc[a].cpu_total > sort_acc[b].cpu_total ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* A site's series being read. */
struct series_read {
	struct tl_ctx *c;
	const struct timeline *tl;
	long s;
	double *out;
};

static int moved_row(void *ctx, int64_t id, int64_t addr, int64_t delta, int64_t stack)
{
	struct series_read *r = ctx;
	long k;

	if (in_series(r->c, id) || heap_site(r->c, addr, stack) != r->s)
		return 0;
	k = cp_index(r->c, r->tl->n, id);
	if (k >= 0)
		r->out[k] += (double)delta;
	return 0;
}

static int series_row(void *ctx, int64_t id, int64_t value)
{
	struct series_read *r = ctx;
	long k = in_series(r->c, id) ? -1 : cp_index(r->c, r->tl->n, id);

	if (k >= 0)
		r->out[k] += (double)value;
	return 0;
}

/*
 * The series of one site: its rows through idx_heap_addr (or idx_cpu_addr),
 * per checkpoint (heap: deltas, summed into live bytes by series_fill()
 * once the compacted checkpoints are in). When stacks were moved past a
 * wrapper, a site's rows are not all at its addresses: the rows are read
 * in full (the series of the few chosen sites only).
 */
static int site_series(struct tl_ctx *c, const struct timeline *tl, long s, bool heap,
		       double *out)
{
	const struct site_acc *a = &c->acc[s];
	struct series_read r = { c, tl, s, out };

	if (ALLOC_GROW(c->chosen, c->n_chosen + 1, c->cap_chosen, 32))
		return -ENOMEM;
	c->chosen[c->n_chosen++] = (struct chosen){ s, heap, out };
	if (heap && hashmap__size(&c->moved))
		return db_events__heap(c->db, false, moved_row, &r);
	return db_events__at(c->db, heap, a->addrs, a->n_addrs, series_row, &r);
}

struct fill {
	struct tl_ctx *c;
	const struct timeline *tl;
	bool heap;
};

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static void fill_row(void *ctx, const struct totals_row *r)
{
	struct fill *f = ctx;
	struct tl_ctx *c = f->c;
	long s = f->heap ? heap_site(c, r->addr, r->stack_id) : sitemap__find_addr(c->sm, r->addr);
	long k;

	if (s < 0)
		return;
	k = cp_index(c, f->tl->n, r->checkpoint);
	if (k < 0)
		return;
	for (size_t i = 0; i < c->n_chosen; i++)
		if (c->chosen[i].s == s && c->chosen[i].heap == f->heap)
			c->chosen[i].values[k] += f->heap ? (double)sat__sub(r->alloc_bytes,
									      r->free_bytes) :
							    (double)r->count;
}

/*
 * The chosen sites' rows of the compacted checkpoints, one pass over the
 * series for all of them (keys of other addresses skipped unread); then
 * the heap deltas summed into live bytes.
 */
static int series_fill(struct tl_ctx *c, const struct timeline *tl)
{
	int err = 0;

	for (int heap = 0; heap < 2 && !err && c->series_hi > c->series_lo; heap++) {
		struct fill f = { .c = c, .tl = tl, .heap = heap };
		bool any = false, moved = heap && hashmap__size(&c->moved);
		int64_t *want = NULL;
		size_t n_want = 0;

		for (size_t i = 0; i < c->n_chosen; i++)
			if (c->chosen[i].heap == heap)
				n_want += c->acc[c->chosen[i].s].n_addrs;
		want = malloc((n_want + 1) * sizeof(*want));
		if (!want)
			return -ENOMEM;
		n_want = 0;
		for (size_t i = 0; i < c->n_chosen; i++) {
			const struct site_acc *a = &c->acc[c->chosen[i].s];

			if (c->chosen[i].heap != heap)
				continue;
			any = true;
			for (size_t j = 0; j < a->n_addrs; j++)
				want[n_want++] = a->addrs[j];
		}
		qsort(want, n_want, sizeof(*want), cmp_i64);
		/* a moved stack's rows are at other addresses: every key is read */
		if (any)
			err = series__rows(c->db, heap, c->series_lo + 1, c->series_hi,
					   moved ? NULL : want, n_want, fill_row, &f);
		free(want);
	}
	for (size_t i = 0; i < c->n_chosen && !err; i++)
		if (c->chosen[i].heap)
			for (size_t k = 1; k < tl->n; k++)
				c->chosen[i].values[k] += c->chosen[i].values[k - 1];
	return err;
}

/* A site's numbers, and with series its values (else NULL). */
static int site_fill(struct tl_ctx *c, const struct timeline *tl, long s, bool heap,
		     bool series, struct timeline_site *out)
{
	const struct site_acc *a = &c->acc[s];
	const char *file, *function, *module;
	int line;

	sitemap__site(c->sm, s, &file, &line, &function, &module);
	out->file = file ? strdup(file) : NULL;
	out->function = function ? strdup(function) : NULL;
	out->module = module ? strdup(module) : NULL;
	out->line = line;
	out->final = heap ? a->live : a->cpu_total;
	out->peak = heap ? a->peak : 0;
	out->growth = heap ? a->live - a->first : 0;
	if ((file && !out->file) || (function && !out->function) || (module && !out->module))
		return -ENOMEM;
	if (!series)
		return 0;
	out->values = calloc(tl->n + 1, sizeof(*out->values));
	if (!out->values)
		return -ENOMEM;
	return site_series(c, tl, s, heap, out->values);
}

static bool site_matches(struct tl_ctx *c, long s, const char *pattern)
{
	const char *file, *function, *module;
	int line;

	if (!pattern || !*pattern)
		return true;
	sitemap__site(c->sm, s, &file, &line, &function, &module);
	return (file && strcasestr(file, pattern)) || (function && strcasestr(function, pattern));
}

/* The top sites by key into *out (n_out of them). */
/*
 * The order of the heap sites: the one asked for; by default the final
 * live bytes, or the peaks when no site (of the filter) has any live bytes
 * at the end (every final would be 0 and rank nothing).
 */
static enum timeline_rank heap_rank(struct tl_ctx *c, const struct timeline_opts *o)
{
	if (o->rank != RANK_AUTO)
		return o->rank;
	for (size_t s = 0; s < sitemap__count(c->sm); s++)
		if (c->acc[s].heap && c->acc[s].live > 0 && site_matches(c, (long)s, o->pattern))
			return RANK_FINAL;
	return RANK_PEAK;
}

static int choose(struct tl_ctx *c, const struct timeline *tl, const struct timeline_opts *o,
		  bool heap, int top, struct timeline_site **out, size_t *n_out)
{
	size_t ns = sitemap__count(c->sm), n = 0;
	long *idx = malloc((ns + 1) * sizeof(*idx));
	int err = 0;

	if (!idx)
		return -ENOMEM;
	sort_acc = c->acc;
	sort_rank = tl->rank;
	for (size_t s = 0; s < ns; s++) {
		if (!site_matches(c, (long)s, o->pattern))
			continue;
		/* every site with heap events takes part: a site whose key is
		 * zero or less still fills the top N after the others */
		if (heap ? !c->acc[s].heap : c->acc[s].cpu_total <= 0)
			continue;
		idx[n++] = (long)s;
	}
	qsort(idx, n, sizeof(*idx), heap ? cmp_rank : cmp_cpu);
	if (n > (size_t)top)
		n = (size_t)top;
	*out = calloc(n + 1, sizeof(**out));
	if (!*out) {
		free(idx);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n && !err; i++) {
		err = site_fill(c, tl, idx[i], heap, true, &(*out)[i]);
		*n_out = i + 1;
	}
	free(idx);
	return err;
}

static int grew_most(struct tl_ctx *c, const struct timeline *tl, const struct timeline_opts *o,
		     struct timeline_site **out)
{
	long best = -1;
	int64_t best_g = 0;

	for (size_t s = 0; s < sitemap__count(c->sm); s++) {
		int64_t g = c->acc[s].live - c->acc[s].first;

		if (c->acc[s].heap && g > best_g && site_matches(c, (long)s, o->pattern)) {
			best = (long)s;
			best_g = g;
		}
	}
	if (best < 0)
		return 0;
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	/* its numbers only: the growth line prints no series */
	return site_fill(c, tl, best, true, false, *out);
}

static void site_free(struct timeline_site *s)
{
	if (!s)
		return;
	free(s->file);
	free(s->function);
	free(s->module);
	free(s->values);
}

/*
 * The checkpoints in the window: indexes lo..hi of tl's arrays. A
 * checkpoint counts when the end of its interval falls in the window (as
 * in report). -RSPROF_EUSAGE when none does.
 */
static int window(const struct timeline *tl, const struct timeline_opts *o, size_t *lo,
		  size_t *hi)
{
	uint64_t last = tl->t_ms[tl->n - 1];
	struct time_window w = o->win;
	char a[32], b[32], c[32];

	int err;

	if (o->since_ms)
		time_window__since(&w, o->since_ms, last);
	/* the rule of every reader's window first, then this one's checkpoints */
	err = window__check(&w, last, o->win_what ? o->win_what : "the window");
	if (err)
		return err;
	for (*lo = 0; *lo < tl->n && !time_window__has(&w, tl->t_ms[*lo]); (*lo)++)
		;
	for (*hi = tl->n; *hi > *lo && !time_window__has(&w, tl->t_ms[*hi - 1]); (*hi)--)
		;
	if (*lo >= *hi) {
		pr_err("no checkpoint between %s and %s; the recording has %s",
		       duration__format(w.from_ms == TIME_NONE ? 0 : w.from_ms, a, sizeof(a)),
		       w.to_ms == TIME_NONE ? "the end" : duration__format(w.to_ms, b, sizeof(b)),
		       duration__format(last, c, sizeof(c)));
		pr_hint("choose a window within the recording");
		return -RSPROF_EUSAGE;
	}
	(*hi)--;
	return 0;
}

/* Keep checkpoints lo..hi of every series. */
static void slice(struct timeline *tl, size_t lo, size_t hi)
{
	size_t n = hi - lo + 1;

	if (lo == 0 && n == tl->n)
		return;
	memmove(tl->t_ms, tl->t_ms + lo, n * sizeof(*tl->t_ms));
	memmove(tl->live, tl->live + lo, n * sizeof(*tl->live));
	memmove(tl->alloc, tl->alloc + lo, n * sizeof(*tl->alloc));
	memmove(tl->freed, tl->freed + lo, n * sizeof(*tl->freed));
	memmove(tl->cpu, tl->cpu + lo, n * sizeof(*tl->cpu));
	memmove(tl->rss, tl->rss + lo, n * sizeof(*tl->rss));
	for (size_t i = 0; i < tl->n_sites; i++)
		memmove(tl->sites[i].values, tl->sites[i].values + lo, n * sizeof(double));
	for (size_t i = 0; i < tl->n_cpu_sites; i++)
		memmove(tl->cpu_sites[i].values, tl->cpu_sites[i].values + lo, n * sizeof(double));
	tl->n = n;
}

void timeline__delete(struct timeline *tl)
{
	if (!tl)
		return;
	for (size_t i = 0; i < tl->n_sites; i++)
		site_free(&tl->sites[i]);
	for (size_t i = 0; i < tl->n_cpu_sites; i++)
		site_free(&tl->cpu_sites[i]);
	site_free(tl->grew_most);
	free(tl->grew_most);
	free(tl->sites);
	free(tl->cpu_sites);
	free(tl->t_ms);
	free(tl->live);
	free(tl->alloc);
	free(tl->freed);
	free(tl->rss);
	free(tl->cpu);
	free(tl);
}

int timeline__load(struct db *db, const struct timeline_opts *o, struct timeline **out)
{
	struct tl_ctx c = { .db = db, .o = o };
	struct timeline *tl = calloc(1, sizeof(*tl));
	struct totals *t = NULL;
	bool need_sites = o->top > 0 || o->cpu_top > 0 || o->need_growth;
	size_t lo = 0, hi = 0;
	int err;

	*out = NULL;
	if (!tl)
		return -ENOMEM;
	db__lock(db);	/* for the whole load */
	err = load_checkpoints(&c, tl);
	if (!err && tl->n)
		err = window(tl, o, &lo, &hi);
	if (err || !need_sites || !tl->n)
		goto out;
	c.sm = sitemap__new();
	if (!c.sm) {
		err = -ENOMEM;
		goto out;
	}
	err = load_sites(&c);
	if (!err)
		err = totals__open(db, &t);
	/* the series only with the totals (a scan reads the folded rows) */
	if (!err && t)
		totals__series_range(t, &c.series_lo, &c.series_hi);
	if (!err && tl->has_heap && (o->top > 0 || o->need_growth))
		err = t ? heap_totals(&c, t, c.cp_ids[lo], c.cp_ids[hi]) :
			  heap_pass(&c, c.cp_ids[lo], c.cp_ids[hi], false);
	if (!err && o->cpu_top > 0)
		err = t ? totals__cpu_range(t, c.cp_ids[lo], c.cp_ids[hi], totals_cpu, &c) :
			  cpu_pass(&c, c.cp_ids[lo], c.cp_ids[hi]);
	if (!err && tl->has_heap && o->top > 0) {
		tl->rank = heap_rank(&c, o);
		err = choose(&c, tl, o, true, o->top, &tl->sites, &tl->n_sites);
	}
	if (!err && o->cpu_top > 0)
		err = choose(&c, tl, o, false, o->cpu_top, &tl->cpu_sites, &tl->n_cpu_sites);
	if (!err && tl->has_heap && o->need_growth)
		err = grew_most(&c, tl, o, &tl->grew_most);
	if (!err)
		err = series_fill(&c, tl);
out:
	totals__delete(t);
	if (!err && tl->n)
		slice(tl, lo, hi);
	db__unlock(db);
	if (c.acc)
		for (size_t i = 0; i < sitemap__count(c.sm); i++)
			free(c.acc[i].addrs);
	free(c.acc);
	free(c.cp_ids);
	free(c.chosen);
	sitemap__delete(c.sm);
	hashmap__free(&c.moved);
	if (err) {
		timeline__delete(tl);
		return err;
	}
	*out = tl;
	return 0;
}

char *timeline__site_label(const struct timeline_site *s, char *buf, size_t len)
{
	char path[512];

	srcpath__display(s->file, s->module, path, sizeof(path));
	if (s->file && s->line > 0)
		snprintf(buf, len, "%s:%d %s", path, s->line, s->function ? s->function : "?");
	else
		snprintf(buf, len, "%s %s", path, s->function ? s->function : "?");
	return buf;
}
