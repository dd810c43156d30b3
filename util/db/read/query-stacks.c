/*
 * Call stacks with a weight (flame graphs, pprof): CPU samples per stack
 * of a -g profile, live heap bytes per allocation stack.
 */
#include "util/db/read/query.h"
#include "util/array.h"
#include "util/db/read/query-priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "util/db/db.h"
#include "util/db/read/totals.h"
#include "util/hashmap.h"
#include "util/saturate.h"
#include "util/symbols/symbol.h"

struct stack_weight {
	int64_t id;		/* stacks.id, or the address for a one-frame stack */
	int64_t pid;		/* by process: its pid; else 0 */
	bool one_frame;
	int64_t value, count;
	int64_t alloc_value, alloc_count;	/* heap: in the window */
};

struct stacks_ctx {
	struct qctx *q;
	struct chains *c;
	struct frame *single;	/* per symbol (+ unknown): its row as a one-line chain */
	sqlite3_stmt *frames;
	uint64_t *addrs;
	struct prof_frame *pf;
	int cap;
};

static int stack_emit(struct stacks_ctx *x, const struct stack_weight *w, prof_stack_cb cb,
		      void *ctx)
{
	struct prof_stack ps = {
		.value = w->value, .count = w->count,
		.alloc_value = w->alloc_value, .alloc_count = w->alloc_count,
		.pid = (int)w->pid,
	};
	const char *pat = x->q->f->pattern;
	bool match = !pat || !*pat;
	int n = 0, rc;

	if (w->one_frame) {
		if (x->cap < 1)
			return -EINVAL;
		x->addrs[0] = (uint64_t)w->id;
		n = 1;
	} else {
		sqlite3_reset(x->frames);
		sqlite3_bind_int64(x->frames, 1, w->id);
		while ((rc = sqlite3_step(x->frames)) == SQLITE_ROW) {
			if (n >= DB_MAX_ROWS)
				return db__too_many_rows(x->q->db, "stack_frames of one stack");
			if (ALLOC_GROW2(x->addrs, x->pf, n + 1, x->cap, 64))
				return -ENOMEM;
			x->addrs[n++] = (uint64_t)sqlite3_column_int64(x->frames, 0);
		}
		if (rc != SQLITE_DONE)
			return db__err(x->q->db, "read stack frames");
		if (!n)
			return 0;
	}
	for (int i = 0; i < n; i++) {
		const struct qsym *s = qctx_find(x->q, (int64_t)x->addrs[i]);
		int si = s == &x->q->unknown ? x->q->n_syms : (int)(s - x->q->syms);
		struct prof_frame *f = &x->pf[i];

		f->addr = x->addrs[i];
		f->module = s->module;
		f->mangled = s->mangled;
		if (si < x->q->n_syms && x->c->n[si]) {
			f->lines = &x->c->v[x->c->first[si]];
			f->n_lines = x->c->n[si];
			f->outermost = true;	/* symbol_frames runs out to the real function */
		} else {
			f->lines = &x->single[si];
			f->n_lines = 1;
			/* the symbols row alone: the real function unless it was inlined */
			f->outermost = !x->c->nv;
		}
		match = match || s->match;
	}
	if (!match)
		return 0;
	ps.frames = x->pf;
	ps.depth = n;
	return cb(&ps, ctx);
}

static int add_weight(struct stack_weight **v, int *n, int *cap, const struct stack_weight *w)
{
	if (ALLOC_GROW(*v, *n + 1, *cap, 256))
		return -ENOMEM;
	(*v)[(*n)++] = *w;
	return 0;
}

static int weight_cmp(const void *pa, const void *pb)
{
	const struct stack_weight *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->value != b->value)
		return a->value < b->value ? 1 : -1;
	return (a->id > b->id) - (a->id < b->id);
}

/* Summing the totals' rows into weights: stack id (or address) -> index + 1 in v. */
struct weights_sum {
	struct stack_weight *v;
	int n, cap;
	struct hashmap stacks, addrs;
	struct hashmap keyed;	/* by process: (id, pid, one_frame) -> index + 1 in v */
	bool heap, no_memory;
	bool window;		/* heap: the rows are in the window, their allocations count */
	bool by_pid;
	int64_t pid;		/* only this process's rows; 0: all */
	int64_t default_pid;	/* a row without a pid is this process's */
};

struct weight_key {
	int64_t id, pid;
	bool one_frame;
};

static bool weight_eq(uint64_t val, const void *key, const void *ctx)
{
	const struct weights_sum *x = ctx;
	const struct weight_key *k = key;
	const struct stack_weight *w = &x->v[val - 1];

	return w->id == k->id && w->pid == k->pid && w->one_frame == k->one_frame;
}

/* The slot (index + 1) of (id, pid) in x->v, made when new; 0 when out of memory. */
static uint64_t weight_slot(struct weights_sum *x, int64_t id, int64_t pid, bool one_frame)
{
	struct weight_key k = { id, pid, one_frame };
	uint64_t h = hashmap__hash_u64((uint64_t)id ^ hashmap__hash_u64((uint64_t)pid * 2 +
									one_frame));
	struct stack_weight w = { .id = id, .pid = pid, .one_frame = one_frame };
	uint64_t slot;
	bool fresh;

	if (hashmap__lookup(&x->keyed, h, weight_eq, &k, x, &slot))
		return slot;
	if (add_weight(&x->v, &x->n, &x->cap, &w))
		return 0;
	slot = (uint64_t)x->n;
	if (hashmap__intern(&x->keyed, h, weight_eq, &k, x, &slot, &fresh))
		return 0;
	return slot;
}

static void weights_row(void *ctx, const struct totals_row *r)
{
	struct weights_sum *x = ctx;
	bool one_frame = !x->heap || r->stack_id < 0;
	int64_t id = one_frame ? r->addr : r->stack_id;
	struct hashmap *m = one_frame ? &x->addrs : &x->stacks;
	int64_t pid = r->pid ? r->pid : x->default_pid;
	uint64_t slot;

	if (x->pid && pid != x->pid)
		return;
	if (x->by_pid) {
		slot = weight_slot(x, id, pid, one_frame);
		if (!slot) {
			x->no_memory = true;
			return;
		}
	} else if (!hashmap__get(m, (uint64_t)id, &slot)) {
		struct stack_weight w = { .id = id, .one_frame = one_frame };

		if (add_weight(&x->v, &x->n, &x->cap, &w) ||
		    hashmap__set(m, (uint64_t)id, (uint64_t)x->n)) {
			x->no_memory = true;
			return;
		}
		slot = (uint64_t)x->n;
	}
	if (x->heap) {
		struct stack_weight *w = &x->v[slot - 1];

		w->value = sat__add(w->value, sat__sub(r->alloc_bytes, r->free_bytes));
		w->count = sat__add(w->count, sat__sub(r->alloc_count, r->free_count));
		if (x->window) {
			w->alloc_value = sat__add(w->alloc_value, r->alloc_bytes);
			w->alloc_count = sat__add(w->alloc_count, r->alloc_count);
		}
	} else {
		x->v[slot - 1].value = sat__add(x->v[slot - 1].value, r->count);
		x->v[slot - 1].count = sat__add(x->v[slot - 1].count, r->count);
	}
}

/*
 * The weights of checkpoints lo..hi from the writer's totals (not for
 * cpu_stacks); heap: the allocations of checkpoints win..hi.
 */
struct weights_opts {
	bool by_pid;		/* per process */
	int64_t pid;		/* this process alone; 0: all */
	int64_t default_pid;	/* whose the rows without a pid are */
};

static int weights_from_totals(struct totals *t, bool heap, const struct weights_opts *o,
			       int64_t lo, int64_t hi, int64_t win, struct stack_weight **v, int *n)
{
	struct weights_sum x = { .heap = heap, .by_pid = o->by_pid, .pid = o->pid,
				 .default_pid = o->default_pid };
	int k = 0, err;

	if (!heap) {
		err = totals__cpu_range(t, lo, hi, weights_row, &x);
	} else {
		if (lo < 1)
			lo = 1;
		err = win > lo ? totals__heap_range(t, lo, win - 1 < hi ? win - 1 : hi, weights_row,
						    &x) : 0;
		x.window = true;
		if (!err && win <= hi)
			err = totals__heap_range(t, win > lo ? win : lo, hi, weights_row, &x);
	}

	if (!err && x.no_memory)
		err = -ENOMEM;
	hashmap__free(&x.stacks);
	hashmap__free(&x.addrs);
	hashmap__free(&x.keyed);
	if (err) {
		free(x.v);
		return err;
	}
	/* a heap stack with nothing live is kept when it allocated in the window */
	for (int i = 0; i < x.n; i++)
		if (x.v[i].value > 0 || x.v[i].alloc_value > 0)
			x.v[k++] = x.v[i];
	if (k)
		qsort(x.v, k, sizeof(*x.v), weight_cmp);
	*v = x.v;
	*n = k;
	return 0;
}

/* Weights per stack (and per address for rows without one). */
static int stack_weights(struct db *db, const struct query_filter *f, bool heap,
			 const struct weights_opts *o, struct stack_weight **v, int *n)
{
	const bool v2 = db__has(db, DB_V2);
	uint64_t end = f->at_ms != TIME_NONE && (f->win.to_ms == TIME_NONE || f->at_ms < f->win.to_ms) ?
		       f->at_ms : f->win.to_ms;
	int64_t lo, hi, win = 0;
	bool all, has_cpu_stacks = false;
	const char *sql[2] = { NULL, NULL };
	/* the rows' process, where the tables have it and it matters */
	bool pids = (o->by_pid || o->pid) && db__has(db, DB_PID);
	int cap = 0, err;

	*v = NULL;
	*n = 0;
	if (heap) {
		/* live bytes from the start, allocations in the window */
		err = checkpoint_range(db, f->win.from_ms, end, &win, &hi, &all);
		if (!err)
			err = checkpoint_range(db, TIME_NONE, end, &lo, &hi, &all);
		lo = 0;
	} else {
		err = checkpoint_range(db, f->win.from_ms, f->win.to_ms, &lo, &hi, &all);
	}
	if (err || lo > hi)
		return err;
	if (!heap)
		has_cpu_stacks = db__has(db, DB_CPU_STACKS);
	if (heap || !has_cpu_stacks) {
		struct totals *t = NULL;
		bool used;

		err = totals__open(db, &t);
		used = t != NULL;
		if (!err && used)
			err = weights_from_totals(t, heap, o, lo, hi, win, v, n);
		totals__delete(t);
		if (err || used)
			return err;
	}
	if (!heap) {
		if (has_cpu_stacks)
			sql[0] = "SELECT stack_id, SUM(count), SUM(count), 0, 0, 0, 0 FROM cpu_stacks"
				 " WHERE checkpoint_id BETWEEN ?1 AND ?2 GROUP BY stack_id";
		else if (pids)
			sql[1] = "SELECT addr, SUM(count), SUM(count), 1, 0, 0, IFNULL(pid, 0)"
				 " FROM cpu_samples WHERE checkpoint_id BETWEEN ?1 AND ?2"
				 " GROUP BY addr, IFNULL(pid, 0)";
		else
			sql[1] = "SELECT addr, SUM(count), SUM(count), 1, 0, 0, 0 FROM cpu_samples"
				 " WHERE checkpoint_id BETWEEN ?1 AND ?2 GROUP BY addr";
	} else if (v2 && pids) {
		sql[0] = "SELECT stack_id, SUM(alloc_bytes - free_bytes),"
			 " SUM(alloc_count - free_count), 0,"
			 " SUM(CASE WHEN checkpoint_id >= ?3 THEN alloc_bytes ELSE 0 END),"
			 " SUM(CASE WHEN checkpoint_id >= ?3 THEN alloc_count ELSE 0 END),"
			 " IFNULL(pid, 0) FROM heap_events"
			 " WHERE checkpoint_id BETWEEN ?1 AND ?2 AND stack_id IS NOT NULL"
			 " GROUP BY stack_id, IFNULL(pid, 0)";
		sql[1] = "SELECT addr, SUM(alloc_bytes - free_bytes),"
			 " SUM(alloc_count - free_count), 1,"
			 " SUM(CASE WHEN checkpoint_id >= ?3 THEN alloc_bytes ELSE 0 END),"
			 " SUM(CASE WHEN checkpoint_id >= ?3 THEN alloc_count ELSE 0 END),"
			 " IFNULL(pid, 0) FROM heap_events"
			 " WHERE checkpoint_id BETWEEN ?1 AND ?2 AND stack_id IS NULL"
			 " GROUP BY addr, IFNULL(pid, 0)";
	} else if (v2) {
		sql[0] = "SELECT stack_id, SUM(alloc_bytes - free_bytes),"
			 " SUM(alloc_count - free_count), 0,"
			 " SUM(CASE WHEN checkpoint_id >= ?3 THEN alloc_bytes ELSE 0 END),"
			 " SUM(CASE WHEN checkpoint_id >= ?3 THEN alloc_count ELSE 0 END), 0"
			 " FROM heap_events"
			 " WHERE checkpoint_id BETWEEN ?1 AND ?2 AND stack_id IS NOT NULL"
			 " GROUP BY stack_id";
		sql[1] = "SELECT addr, SUM(alloc_bytes - free_bytes),"
			 " SUM(alloc_count - free_count), 1,"
			 " SUM(CASE WHEN checkpoint_id >= ?3 THEN alloc_bytes ELSE 0 END),"
			 " SUM(CASE WHEN checkpoint_id >= ?3 THEN alloc_count ELSE 0 END), 0"
			 " FROM heap_events"
			 " WHERE checkpoint_id BETWEEN ?1 AND ?2 AND stack_id IS NULL GROUP BY addr";
	} else {
		sql[1] = "SELECT addr, SUM(alloc_bytes - free_bytes), 0, 1,"
			 " SUM(CASE WHEN checkpoint_id >= ?3 THEN alloc_bytes ELSE 0 END), 0, 0"
			 " FROM heap_events"
			 " WHERE checkpoint_id BETWEEN ?1 AND ?2 GROUP BY addr";
	}
	for (int i = 0; i < 2 && !err; i++) {
		sqlite3_stmt *st;
		int rc;

		if (!sql[i])
			continue;
		err = db__prepare(db, "read stacks", sql[i], &st);
		if (err)
			break;
		sqlite3_bind_int64(st, 1, lo);
		sqlite3_bind_int64(st, 2, hi);
		if (heap)
			sqlite3_bind_int64(st, 3, win);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			struct stack_weight w = {
				.id = sqlite3_column_int64(st, 0),
				.value = sqlite3_column_int64(st, 1),
				.count = sqlite3_column_int64(st, 2),
				.one_frame = sqlite3_column_int(st, 3),
			};
			int64_t pid = sqlite3_column_int64(st, 6);

			if (!pid)
				pid = o->default_pid;
			if (o->pid && pid != o->pid)
				continue;
			if (o->by_pid)
				w.pid = pid;
			if (heap) {
				w.alloc_value = sqlite3_column_int64(st, 4);
				w.alloc_count = sqlite3_column_int64(st, 5);
			}
			/* a stack with nothing live is kept when it allocated in the window */
			if (w.value <= 0 && w.alloc_value <= 0)
				continue;
			err = add_weight(v, n, &cap, &w);
			if (err)
				break;
		}
		if (!err && rc != SQLITE_DONE)
			err = db__err(db, "read stacks");
		sqlite3_finalize(st);
	}
	if (!err && *n)
		qsort(*v, *n, sizeof(**v), weight_cmp);
	return err;
}

static int query_stacks(struct db *db, const struct query_filter *f, bool heap, bool by_pid,
			prof_stack_cb cb, void *ctx)
{
	struct weights_opts o = { .by_pid = by_pid, .pid = f->pid };
	struct stacks_ctx x = { 0 };
	struct stack_weight *w = NULL;
	struct chains c = { 0 };
	struct qctx q;
	int n = 0, err;

	err = qctx_load(&q, db, f);
	if (!err)
		err = chains_load(&q, &c);
	o.default_pid = q.default_pid;
	if (!err)
		err = stack_weights(db, f, heap, &o, &w, &n);
	if (err || !n)
		goto out;
	x.q = &q;
	x.c = &c;
	x.cap = 64;
	x.addrs = malloc(x.cap * sizeof(*x.addrs));
	x.pf = malloc(x.cap * sizeof(*x.pf));
	x.single = calloc(q.n_syms + 1, sizeof(*x.single));
	if (!x.addrs || !x.pf || !x.single) {
		err = -ENOMEM;
		goto out;
	}
	for (int i = 0; i <= q.n_syms; i++) {
		const struct qsym *s = i < q.n_syms ? &q.syms[i] : &q.unknown;

		/* borrowed strings: never freed through single */
		x.single[i].file = s->file;
		x.single[i].line = s->line;
		x.single[i].function = s->function;
	}
	if (db__has(db, DB_V2)) {
		err = db__prepare(db, "read stack frames", "SELECT addr FROM stack_frames"
				" WHERE stack_id = ? ORDER BY pos", &x.frames);
		if (err)
			goto out;
	}
	for (int i = 0; i < n && !err; i++) {
		if (!w[i].one_frame && !x.frames)
			continue;
		err = stack_emit(&x, &w[i], cb, ctx);
	}
out:
	sqlite3_finalize(x.frames);
	free(x.addrs);
	free(x.pf);
	free(x.single);
	free(w);
	chains_free(&c, q.n_syms);
	qctx_free(&q);
	return err;
}

const char *prof_frame__name(const struct prof_frame *f, int k, char *buf, size_t len)
{
	const char *fn = f->lines[k].function;
	const char *base = f->module ? strrchr(f->module, '/') : NULL;

	if (fn)
		return fn;
	snprintf(buf, len, "[%s]", base ? base + 1 : f->module ? f->module : "unknown");
	return buf;
}

int db_query_stacks(struct db *db, const struct query_filter *f, bool heap,
		    prof_stack_cb cb, void *ctx)
{
	return query_stacks(db, f, heap, false, cb, ctx);
}

int db_query_stacks_by_pid(struct db *db, const struct query_filter *f, bool heap,
			   prof_stack_cb cb, void *ctx)
{
	return query_stacks(db, f, heap, true, cb, ctx);
}
