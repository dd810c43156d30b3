/*
 * The heap walk of the totals (util/db/read/totals.h): per group of keys,
 * the live bytes at a checkpoint, the exact peak and the allocations of a
 * window, from the fewest pieces of the totals, reading the blocks below
 * one only where two keys of a group meet in it and leave the peak open.
 */
#include "util/db/read/totals.h"
#include "util/array.h"
#include "util/db/read/totals-priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/saturate.h"

/* A raw row, kept until its piece is read, then put in checkpoint order. */
struct raw_row {
	int64_t checkpoint;
	int64_t seq;		/* read order, for a stable sort */
	int group;
	int64_t net;
	int64_t alloc_bytes, free_bytes, alloc_count, free_count;
	int64_t temp_count;	/* -1: not counted */
};

/* A block whose rows leave a group's peak open: read the blocks below it. */
struct refine {
	struct totals_piece p;
	int group;
	int64_t start;		/* the group's live bytes at the piece's start */
	int64_t ub;		/* what its peak in the piece can be at most, less start */
};

struct walk {
	struct totals *t;
	struct totals_heap_walk *w;
	/* per group, for the piece being read */
	int64_t *start, *ub, *single, *seen;
	int *nmem;
	int *list;
	int n_list;
	int64_t serial;
	/* the piece being read */
	bool track, window;
	int64_t *live;		/* w->live, or the refinement's own live bytes */
	int *slot;		/* refinement: group -> its slot, -1: not refined */
	/* raw rows */
	struct raw_row *raw;
	size_t n_raw, cap_raw;
	bool no_memory;
	/* blocks to read again */
	struct refine *q;
	size_t nq, capq;
};

static bool in_set(const struct walk *k, int g)
{
	return !k->slot || k->slot[g] >= 0;
}

/* A group's temporaries: -1 until a row counted them, as the scan's temp_known. */
static void add_temp(struct totals_heap_walk *w, int g, int64_t tc)
{
	if (tc >= 0)
		w->temp_count[g] = sat__add(w->temp_count[g] < 0 ? 0 : w->temp_count[g], tc);
}

static void block_row(void *ctx, const struct totals_row *r)
{
	struct walk *k = ctx;
	struct totals_heap_walk *w = k->w;
	int64_t net = sat__sub(r->alloc_bytes, r->free_bytes);
	int g;

	g = w->group_of(w->ctx, r);
	if (!k->slot && g >= -1)
		w->total_live = sat__add(w->total_live, net);
	if (g < 0 || g >= w->n_groups || !in_set(k, g))
		return;
	if (!k->slot && w->counted)
		w->counted(w->ctx, r, g);
	if (k->seen[g] != k->serial) {
		k->seen[g] = k->serial;
		k->start[g] = k->live[g];
		k->ub[g] = 0;
		k->nmem[g] = 0;
		k->list[k->n_list++] = g;
	}
	k->live[g] = sat__add(k->live[g], net);
	k->nmem[g]++;
	k->single[g] = r->peak;
	if (r->peak > 0)
		k->ub[g] = sat__add(k->ub[g], r->peak);
	if (!k->slot) {
		w->had_row[g] = true;
		if (k->window) {
			w->alloc_bytes[g] = sat__add(w->alloc_bytes[g], r->alloc_bytes);
			w->free_bytes[g] = sat__add(w->free_bytes[g], r->free_bytes);
			w->alloc_count[g] = sat__add(w->alloc_count[g], r->alloc_count);
			w->free_count[g] = sat__add(w->free_count[g], r->free_count);
			add_temp(w, g, r->temp_count);
		}
	}
}

static void raw_row(void *ctx, const struct totals_row *r)
{
	struct walk *k = ctx;
	struct totals_heap_walk *w = k->w;
	struct raw_row *x;
	int g;

	g = w->group_of(w->ctx, r);
	if (!k->slot && g >= -1)
		w->total_live = sat__add(w->total_live, sat__sub(r->alloc_bytes, r->free_bytes));
	if (g < 0 || g >= w->n_groups || !in_set(k, g))
		return;
	if (!k->slot && w->counted)
		w->counted(w->ctx, r, g);
	if (ALLOC_GROW(k->raw, k->n_raw + 1, k->cap_raw, 4096)) {
		k->no_memory = true;
		return;
	}
	x = &k->raw[k->n_raw];
	x->checkpoint = r->checkpoint;
	x->seq = (int64_t)k->n_raw++;
	x->group = g;
	x->net = sat__sub(r->alloc_bytes, r->free_bytes);
	x->alloc_bytes = r->alloc_bytes;
	x->free_bytes = r->free_bytes;
	x->alloc_count = r->alloc_count;
	x->free_count = r->free_count;
	x->temp_count = r->temp_count;
}

static int cmp_raw(const void *pa, const void *pb)
{
	const struct raw_row *a = pa, *b = pb;

	if (a->checkpoint != b->checkpoint)
		return (a->checkpoint > b->checkpoint) - (a->checkpoint < b->checkpoint);
	return (a->seq > b->seq) - (a->seq < b->seq);
}

static void raw_settle(struct walk *k)
{
	for (int i = 0; i < k->n_list; i++) {
		int g = k->list[i];

		if (k->live[g] > k->w->peak[g])
			k->w->peak[g] = k->live[g];
	}
	k->n_list = 0;
}

/* Raw checkpoints: every checkpoint's end is a candidate for the peaks of its groups. */
static int walk_raw(struct walk *k, const struct totals_piece *p)
{
	struct totals_heap_walk *w = k->w;
	bool ordered = true;
	int64_t cur = INT64_MIN;
	int err;

	k->n_raw = 0;
	err = totals__heap_rows(k->t, p, raw_row, k);
	if (!err && k->no_memory)
		err = -ENOMEM;
	if (err)
		return err;
	w->rows_read += k->n_raw;
	for (size_t i = 1; i < k->n_raw && ordered; i++)
		ordered = k->raw[i].checkpoint >= k->raw[i - 1].checkpoint;
	if (!ordered)
		qsort(k->raw, k->n_raw, sizeof(*k->raw), cmp_raw);
	k->n_list = 0;
	for (size_t i = 0; i < k->n_raw; i++) {
		const struct raw_row *x = &k->raw[i];
		int g = x->group;

		if (x->checkpoint != cur) {
			if (k->track)
				raw_settle(k);
			cur = x->checkpoint;
			k->serial++;
		}
		k->live[g] = sat__add(k->live[g], x->net);
		if (!k->slot) {
			w->had_row[g] = true;
			if (k->window) {
				w->alloc_bytes[g] = sat__add(w->alloc_bytes[g], x->alloc_bytes);
				w->free_bytes[g] = sat__add(w->free_bytes[g], x->free_bytes);
				w->alloc_count[g] = sat__add(w->alloc_count[g], x->alloc_count);
				w->free_count[g] = sat__add(w->free_count[g], x->free_count);
				add_temp(w, g, x->temp_count);
			}
		}
		if (k->track && k->seen[g] != k->serial) {
			k->seen[g] = k->serial;
			k->list[k->n_list++] = g;
		}
	}
	if (k->track)
		raw_settle(k);
	k->n_list = 0;
	return 0;
}

static int queue(struct walk *k, const struct totals_piece *p, int g, int64_t start,
		 int64_t ub)
{
	if (ALLOC_GROW(k->q, k->nq + 1, k->capq, 64))
		return -ENOMEM;
	k->q[k->nq++] = (struct refine){ *p, g, start, ub };
	return 0;
}

/* A block: a group with one key in it gets its exact peak; others may need the blocks below. */
static int walk_block(struct walk *k, const struct totals_piece *p)
{
	struct totals_heap_walk *w = k->w;
	size_t before = totals_rows(k->t);
	int err;

	k->serial++;
	k->n_list = 0;
	err = totals__heap_rows(k->t, p, block_row, k);
	w->rows_read += totals_rows(k->t) - before;
	if (err || !k->track)
		return err;
	for (int i = 0; i < k->n_list && !err; i++) {
		int g = k->list[i];

		if (k->nmem[g] == 1) {
			int64_t cand = sat__add(k->start[g], k->single[g]);

			if (cand > w->peak[g])
				w->peak[g] = cand;
			continue;
		}
		if (k->live[g] > w->peak[g])
			w->peak[g] = k->live[g];
		if (sat__add(k->start[g], k->ub[g]) > w->peak[g])
			err = queue(k, p, g, k->start[g], k->ub[g]);
	}
	return err;
}

static int walk_piece(struct walk *k, const struct totals_piece *p)
{
	return p->level < 0 ? walk_raw(k, p) : walk_block(k, p);
}

static bool same_piece(const struct totals_piece *a, const struct totals_piece *b)
{
	return a->level == b->level && a->block == b->block && a->first == b->first &&
	       a->last == b->last;
}

/*
 * Read again, one level down, the blocks that left a group's peak open,
 * for those groups only (their own live bytes from the block's start);
 * what is still open goes one level further, down to the checkpoints.
 */
static int refine_all(struct walk *k)
{
	struct totals_heap_walk *w = k->w;
	int64_t *rlive = calloc(w->n_groups, sizeof(*rlive));
	int *slot = malloc(w->n_groups * sizeof(*slot));
	int err = 0;

	if (!rlive || !slot) {
		free(rlive);
		free(slot);
		return -ENOMEM;
	}
	for (int g = 0; g < w->n_groups; g++)
		slot[g] = -1;
	while (k->nq && !err) {
		struct refine *q = k->q;
		size_t nq = k->nq, i = 0;

		k->q = NULL;
		k->nq = k->capq = 0;
		while (i < nq && !err) {
			struct totals_piece *ch = NULL;
			size_t n_ch = 0, j = i;

			bool any = false;

			/* the entries of one block are next to each other; a peak
			 * found since may have closed some */
			for (; j < nq && same_piece(&q[j].p, &q[i].p); j++) {
				if (sat__add(q[j].start, q[j].ub) <= w->peak[q[j].group])
					continue;
				slot[q[j].group] = 0;
				rlive[q[j].group] = q[j].start;
				any = true;
			}
			if (any)
				err = totals__children(k->t, &q[i].p, &ch, &n_ch);
			k->slot = slot;
			k->live = rlive;
			k->track = true;
			k->window = false;
			for (size_t c = 0; c < n_ch && !err; c++)
				err = walk_piece(k, &ch[c]);
			k->slot = NULL;
			k->live = w->live;
			for (size_t x = i; x < j; x++)
				slot[q[x].group] = -1;
			free(ch);
			if (any)
				w->refined++;
			i = j;
		}
		free(q);
	}
	free(rlive);
	free(slot);
	return err;
}

void totals_heap_walk__free(struct totals_heap_walk *w)
{
	free(w->live);
	free(w->peak);
	free(w->first);
	free(w->alloc_bytes);
	free(w->free_bytes);
	free(w->alloc_count);
	free(w->free_count);
	free(w->temp_count);
	free(w->had_row);
	w->live = w->peak = w->first = NULL;
	w->alloc_bytes = w->free_bytes = w->alloc_count = w->free_count = NULL;
	w->temp_count = NULL;
	w->had_row = NULL;
}

/*
 * The start of the peak window: every group's peak starts at its live bytes
 * (before, the live bytes at the end of the checkpoint the walk starts at).
 */
static void peak_reset(struct totals_heap_walk *w, const int64_t *before)
{
	for (int g = 0; g < w->n_groups; g++)
		w->first[g] = w->peak[g] = before ? before[g] : w->live[g];
}

struct sum_ctx {
	struct totals_heap_walk *w;
	int64_t *live;
};

static void sum_row(void *ctx, const struct totals_row *r)
{
	struct sum_ctx *c = ctx;
	int g = c->w->group_of(c->w->ctx, r);

	if (g >= 0 && g < c->w->n_groups)
		c->live[g] = sat__add(c->live[g], sat__sub(r->alloc_bytes, r->free_bytes));
}

/*
 * Where the peaks are tracked from. A peak from peak_from on starts at the
 * live bytes at the end of checkpoint at = peak_from - 1, which are no
 * higher than that start: tracking from any checkpoint id after the
 * checkpoint before `at` (no checkpoint ends in between but `at`) gives the
 * same peaks, once they start at the live bytes of `at`. When that range
 * holds the start of a block, the widest such, the walk is cut there and
 * reads blocks instead of the checkpoints of one (timeline's window, from
 * its first checkpoint on: a compacted block's series read twice, or a
 * folded hour's 60 level-0 blocks instead of its level-1 block); the live
 * bytes of `at` are added up first into *before (NULL: no such cut), which
 * the peaks start at. Returns the checkpoint the peaks are tracked from.
 */
static int64_t track_from(struct totals *t, struct totals_heap_walk *w, int64_t **before,
			  int *err)
{
	int64_t at = w->peak_from - 1, from;
	struct sum_ctx c = { w, NULL };

	*before = NULL;
	if (at < 1 || at > w->hi || at > totals__through(t))
		return w->peak_from;
	*err = totals_wide_start(t, at, &from);
	if (*err || (from == at && (at - 1) % TOTALS_SPAN))
		return w->peak_from;
	c.live = calloc(w->n_groups > 0 ? (size_t)w->n_groups : 1, sizeof(int64_t));
	if (!c.live) {
		*err = -ENOMEM;
		return w->peak_from;
	}
	*err = totals__heap_range(t, 1, at, sum_row, &c);
	*before = c.live;
	return from;
}

/* The window's sums of a row read apart from the walk. */
static void window_row(void *ctx, const struct totals_row *r)
{
	struct totals_heap_walk *w = ctx;
	int g = w->group_of(w->ctx, r);

	if (g < 0 || g >= w->n_groups)
		return;
	w->alloc_bytes[g] = sat__add(w->alloc_bytes[g], r->alloc_bytes);
	w->free_bytes[g] = sat__add(w->free_bytes[g], r->free_bytes);
	w->alloc_count[g] = sat__add(w->alloc_count[g], r->alloc_count);
	w->free_count[g] = sat__add(w->free_count[g], r->free_count);
	add_temp(w, g, r->temp_count);
}

/* 1..hi cut at the cuts (in order) into *segs; returns how many. */
static int cut_segments(const int64_t *cut, int n_cut, int64_t hi, int64_t segs[][2])
{
	int64_t at = 1;
	int n = 0;

	for (int i = 0; i < n_cut; i++) {
		if (cut[i] > at && cut[i] <= hi) {
			segs[n][0] = at;
			segs[n++][1] = cut[i] - 1;
			at = cut[i];
		}
	}
	if (at <= hi) {
		segs[n][0] = at;
		segs[n++][1] = hi;
	}
	return n;
}

/*
 * What reading checkpoints a..b costs, in reads of a checkpoint's rows: a
 * block's rows (one per key) are about those of one checkpoint.
 */
static int pieces_cost(const struct totals *t, int64_t a, int64_t b, int64_t *cost)
{
	struct totals_piece *v;
	size_t n;
	int err = totals__pieces(t, a, b, &v, &n);

	for (size_t i = 0; i < n && !err; i++)
		*cost += v[i].level >= 0 ? 1 : v[i].last - v[i].first + 1;
	free(v);
	return err;
}

static int segments_cost(const struct totals *t, int64_t segs[][2], int n, int64_t *cost)
{
	int err = 0;

	for (int i = 0; i < n && !err; i++)
		err = pieces_cost(t, segs[i][0], segs[i][1], cost);
	return err;
}

/*
 * The walk's segments: 1..hi cut where the peaks are tracked from, and
 * where the window's allocations start, unless reading those apart costs
 * less (*apart): the walk then reads 1..hi in wider blocks (report --since
 * 10m of an hour: its level-1 block and the window's 10 level-0 blocks,
 * not 60 level-0 blocks).
 */
static int walk_segments(const struct totals *t, const struct totals_heap_walk *w,
			 int64_t from, int64_t win_lo, int64_t segs[][2], int *n, bool *apart)
{
	int64_t cut[2] = { from < win_lo ? from : win_lo, from < win_lo ? win_lo : from };
	int64_t other[4][2], with = 0, without = 0;
	int n_other, err;

	*apart = false;
	*n = cut_segments(cut, 2, w->hi, segs);
	if (win_lo <= 1 || win_lo > w->hi || win_lo == from)
		return 0;
	n_other = cut_segments(&from, 1, w->hi, other);
	err = segments_cost(t, segs, *n, &with);
	if (!err)
		err = segments_cost(t, other, n_other, &without);
	if (!err)
		err = pieces_cost(t, win_lo, w->hi, &without);
	if (err || without >= with)
		return err;
	memcpy(segs, other, sizeof(other));
	*n = n_other;
	*apart = true;
	return 0;
}

int totals__heap_walk(struct totals *t, struct totals_heap_walk *w)
{
	struct walk k = { .t = t, .w = w };
	int64_t segs[4][2], from, win_lo = w->win_lo, *before = NULL;
	int n_segs = 0, err = 0;
	size_t ng = w->n_groups > 0 ? (size_t)w->n_groups : 1;
	bool reset = false, apart = false;

	w->total_live = 0;
	w->rows_read = w->refined = 0;
	w->live = calloc(ng, sizeof(int64_t));
	w->peak = calloc(ng, sizeof(int64_t));
	w->first = calloc(ng, sizeof(int64_t));
	w->alloc_bytes = calloc(ng, sizeof(int64_t));
	w->free_bytes = calloc(ng, sizeof(int64_t));
	w->alloc_count = calloc(ng, sizeof(int64_t));
	w->free_count = calloc(ng, sizeof(int64_t));
	w->temp_count = malloc(ng * sizeof(int64_t));
	w->had_row = calloc(ng, sizeof(bool));
	k.start = calloc(ng, sizeof(int64_t));
	k.ub = calloc(ng, sizeof(int64_t));
	k.single = calloc(ng, sizeof(int64_t));
	k.seen = calloc(ng, sizeof(int64_t));
	k.nmem = calloc(ng, sizeof(int));
	k.list = calloc(ng, sizeof(int));
	if (!w->live || !w->peak || !w->first || !w->alloc_bytes || !w->free_bytes ||
	    !w->alloc_count || !w->free_count || !w->temp_count || !w->had_row || !k.start || !k.ub || !k.single ||
	    !k.seen || !k.nmem || !k.list) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t g = 0; g < ng; g++)
		w->temp_count[g] = -1;
	k.live = w->live;
	from = track_from(t, w, &before, &err);
	/* the allocations of the window: from its widest block (no rows before it) */
	if (!err && w->win_lo <= w->hi)
		err = totals_wide_start(t, w->win_lo, &win_lo);
	if (err)
		goto out;
	err = walk_segments(t, w, from, win_lo, segs, &n_segs, &apart);
	if (!err && apart) {
		size_t before_rows = totals_rows(t);

		err = totals__heap_range(t, win_lo, w->hi, window_row, w);
		w->rows_read += totals_rows(t) - before_rows;
	}
	for (int s = 0; s < n_segs && !err; s++) {
		struct totals_piece *v;
		size_t n;

		if (!reset && segs[s][0] >= from) {
			peak_reset(w, before);
			reset = true;
		}
		k.track = reset;
		k.window = !apart && segs[s][0] >= win_lo;
		err = totals__pieces(t, segs[s][0], segs[s][1], &v, &n);
		for (size_t i = 0; i < n && !err; i++)
			err = walk_piece(&k, &v[i]);
		free(v);
	}
	if (!err && !reset)
		peak_reset(w, NULL);
	if (!err)
		err = refine_all(&k);
out:
	free(before);
	free(k.start);
	free(k.ub);
	free(k.single);
	free(k.seen);
	free(k.nmem);
	free(k.list);
	free(k.raw);
	free(k.q);
	if (err)
		totals_heap_walk__free(w);
	return err;
}

