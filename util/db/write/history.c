/*
 * The allocation history, writing side (util/db/history.h): allocations
 * kept in memory until a flush (or until a slice is full), then written as
 * one slice, its chunks and its events in one transaction; frees of blocks
 * written before become an UPDATE of their time_free in the next one.
 */
#include "util/db/write/history.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/db/db.h"
#include "util/db/stmt.h"
#include "util/error.h"
#include "util/hashmap.h"

struct pending {
	uint64_t time, addr, size, site;
	int64_t stack;
	uint64_t time_free;
	bool freed;
	int64_t chunk;		/* alloc_chunks.id, set when written */
};

struct freed_row {
	int64_t id;
	uint64_t time;
};

enum {
	ST_SLICE,
	ST_CHUNK,
	ST_EVENT,
	ST_FREE,
	ST_BEGIN,
	ST_COMMIT,
	ST_ROLLBACK,
	ST_N,
};

static const struct stmt_def stmt_sql[ST_N] = {
	[ST_SLICE] = { "allocation history: insert slice",
		"INSERT INTO alloc_slices (time_first, time_last) VALUES (?, ?)" },
	[ST_CHUNK] = { "allocation history: insert chunk",
		"INSERT INTO alloc_chunks (slice_id, addr_first, addr_last, kind) VALUES (?, ?, ?, ?)" },
	[ST_EVENT] = { "allocation history: insert allocation",
		"INSERT INTO alloc_events (chunk_id, time_alloc, addr, size, site, stack_id,"
		" time_free) VALUES (?, ?, ?, ?, ?, ?, ?)" },
	[ST_FREE] = { "allocation history: set free time",
		"UPDATE alloc_events SET time_free = ? WHERE id = ?" },
	[ST_BEGIN] = { "allocation history: begin", "BEGIN IMMEDIATE" },
	[ST_COMMIT] = { "allocation history: commit", "COMMIT" },
	[ST_ROLLBACK] = { "allocation history: rollback", "ROLLBACK" },
};

/*
 * The live blocks, addr -> where their allocation is: a pending index
 * (odd: index << 1 | 1) or a written row (even: id << 1).
 */
#define LIVE_PENDING(i) (((uint64_t)(i) << 1) | 1)
#define LIVE_ROW(id) ((uint64_t)(id) << 1)

struct history_writer {
	struct db *db;
	struct stmt_table sts;
	struct pending *v;
	size_t n, cap;
	struct freed_row *fr;
	size_t n_fr, cap_fr;
	struct hashmap live;
	uint64_t last_time;
	uint32_t *order;	/* scratch: pending indices sorted by address */
	struct history_stats stats;
	int err;		/* the first error: nothing is written after it */
};

int history_writer__new(struct db *db, struct history_writer **out)
{
	struct history_writer *w;
	int err;

	*out = NULL;
	if (!db__has(db, DB_V3)) {
		pr_err("%s: the allocation history needs a version-3 profile", db__path(db));
		return -RSPROF_EDB;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->db = db;
	err = stmt_table__init(&w->sts, db, stmt_sql, ST_N);
	if (err) {
		history_writer__delete(w);
		return err;
	}
	*out = w;
	return 0;
}

static int addr_cmp(const void *x, const void *y, void *ctx)
{
	const struct pending *v = ctx;
	const struct pending *a = &v[*(const uint32_t *)x];
	const struct pending *b = &v[*(const uint32_t *)y];

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

static uint64_t last_byte(const struct pending *p)
{
	return p->addr + (p->size ? p->size : 1) - 1;
}

static int write_chunk(struct history_writer *w, int64_t slice, uint64_t first, uint64_t last,
		       const uint32_t *members, size_t n)
{
	sqlite3_stmt *st = stmt_table__get(&w->sts, ST_CHUNK);
	int64_t id;
	int err;

	sqlite3_bind_int64(st, 1, slice);
	sqlite3_bind_int64(st, 2, (int64_t)first);
	sqlite3_bind_int64(st, 3, (int64_t)last);
	sqlite3_bind_int(st, 4, ALLOC_KIND_HEAP);
	err = stmt_table__step(&w->sts, ST_CHUNK);
	if (err)
		return err;
	id = sqlite3_last_insert_rowid(db__sqlite(w->db));
	for (size_t i = 0; i < n; i++)
		w->v[members[i]].chunk = id;
	w->stats.chunks++;
	return 0;
}

/*
 * The chunks of the slice (pending [0, n)): runs of overlapping blocks in
 * address order are never split (chunks must not overlap); a chunk takes
 * runs while it stays within HISTORY_CHUNK_MAX events, a run larger than
 * that is a chunk of its own.
 */
static int write_chunks(struct history_writer *w, int64_t slice, size_t n)
{
	size_t start = 0, i = 0;
	uint64_t first = 0, last = 0;
	int err = 0;

	for (size_t k = 0; k < n; k++)
		w->order[k] = (uint32_t)k;
	qsort_r(w->order, n, sizeof(*w->order), addr_cmp, w->v);
	while (i < n && !err) {
		/* the run of overlapping blocks from i */
		size_t j = i + 1;
		uint64_t rf = w->v[w->order[i]].addr, rl = last_byte(&w->v[w->order[i]]);

		while (j < n && w->v[w->order[j]].addr <= rl) {
			if (last_byte(&w->v[w->order[j]]) > rl)
				rl = last_byte(&w->v[w->order[j]]);
			j++;
		}
		if (i > start && (i - start) + (j - i) > HISTORY_CHUNK_MAX) {
			err = write_chunk(w, slice, first, last, w->order + start, i - start);
			start = i;
		}
		if (i == start)
			first = rf;
		last = rl;
		i = j;
		if (!err && i - start >= HISTORY_CHUNK_MAX) {
			err = write_chunk(w, slice, first, last, w->order + start, i - start);
			start = i;
		}
	}
	if (!err && start < n)
		err = write_chunk(w, slice, first, last, w->order + start, n - start);
	return err;
}

static int bind_opt(sqlite3_stmt *st, int i, bool have, int64_t v)
{
	return have ? sqlite3_bind_int64(st, i, v) : sqlite3_bind_null(st, i);
}

static int write_events(struct history_writer *w, size_t n)
{
	sqlite3_stmt *st = stmt_table__get(&w->sts, ST_EVENT);
	int err = 0;

	for (size_t i = 0; i < n && !err; i++) {
		const struct pending *p = &w->v[i];
		uint64_t where;
		int64_t id;

		sqlite3_bind_int64(st, 1, p->chunk);
		sqlite3_bind_int64(st, 2, (int64_t)p->time);
		sqlite3_bind_int64(st, 3, (int64_t)p->addr);
		sqlite3_bind_int64(st, 4, (int64_t)p->size);
		bind_opt(st, 5, p->site != 0, (int64_t)p->site);
		bind_opt(st, 6, p->stack >= 0, p->stack);
		bind_opt(st, 7, p->freed, (int64_t)p->time_free);
		err = stmt_table__step(&w->sts, ST_EVENT);
		if (err)
			break;
		id = sqlite3_last_insert_rowid(db__sqlite(w->db));
		/* still live: a later free updates the row */
		if (!p->freed && hashmap__get(&w->live, p->addr, &where) &&
		    where == LIVE_PENDING(i) && hashmap__set(&w->live, p->addr, LIVE_ROW(id)))
			err = -ENOMEM;
	}
	w->stats.events += n;
	return err;
}

static int write_frees(struct history_writer *w)
{
	sqlite3_stmt *st = stmt_table__get(&w->sts, ST_FREE);
	int err = 0;

	for (size_t i = 0; i < w->n_fr && !err; i++) {
		sqlite3_bind_int64(st, 1, (int64_t)w->fr[i].time);
		sqlite3_bind_int64(st, 2, w->fr[i].id);
		err = stmt_table__step(&w->sts, ST_FREE);
	}
	return err;
}

int history_writer__flush(struct history_writer *w)
{
	sqlite3_stmt *st = stmt_table__get(&w->sts, ST_SLICE);
	/* in a checkpoint's transaction (util/db/rows.h's also()), or one of its own */
	bool own = sqlite3_get_autocommit(db__sqlite(w->db));
	int64_t slice;
	int err = 0;

	if (w->err)
		return w->err;
	if (!w->n && !w->n_fr)
		return 0;
	if (own)
		err = stmt_table__step(&w->sts, ST_BEGIN);
	if (err)
		return w->err = err;
	if (w->n) {
		sqlite3_bind_int64(st, 1, (int64_t)w->v[0].time);
		sqlite3_bind_int64(st, 2, (int64_t)w->v[w->n - 1].time);
		err = stmt_table__step(&w->sts, ST_SLICE);
		slice = sqlite3_last_insert_rowid(db__sqlite(w->db));
		if (!err)
			err = write_chunks(w, slice, w->n);
		if (!err)
			err = write_events(w, w->n);
		if (!err)
			w->stats.slices++;
	}
	if (!err)
		err = write_frees(w);
	if (!err && own)
		err = stmt_table__step(&w->sts, ST_COMMIT);
	if (err) {
		if (own && !sqlite3_get_autocommit(db__sqlite(w->db)))
			stmt_table__step(&w->sts, ST_ROLLBACK);
		return w->err = err;
	}
	w->n = 0;
	w->n_fr = 0;
	return 0;
}

int history_writer__alloc(struct history_writer *w, uint64_t time_ns, uint64_t addr,
			  uint64_t size, uint64_t site, int64_t stack_id)
{
	struct pending *p;
	int err;

	if (w->err)
		return w->err;
	if (w->n == HISTORY_SLICE_MAX) {
		err = history_writer__flush(w);
		if (err)
			return err;
	}
	if (ALLOC_GROW2(w->v, w->order, w->n + 1, w->cap, 4096))
		return -ENOMEM;
	if (time_ns < w->last_time) {
		time_ns = w->last_time;
		w->stats.reordered++;
	}
	w->last_time = time_ns;
	/* a block allocated again without a free seen: the old one stays "not freed" */
	if (hashmap__set(&w->live, addr, LIVE_PENDING(w->n)))
		return -ENOMEM;
	p = &w->v[w->n++];
	memset(p, 0, sizeof(*p));
	p->time = time_ns;
	p->addr = addr;
	p->size = size;
	p->site = site;
	p->stack = stack_id;
	return 0;
}

int history_writer__free(struct history_writer *w, uint64_t time_ns, uint64_t addr)
{
	uint64_t where;

	if (w->err)
		return w->err;
	if (!hashmap__get(&w->live, addr, &where)) {
		w->stats.unknown_frees++;
		return 0;
	}
	hashmap__remove(&w->live, addr);
	w->stats.frees++;
	if (time_ns < w->last_time)
		time_ns = w->last_time;
	w->last_time = time_ns;
	if (where & 1) {
		w->v[where >> 1].time_free = time_ns;
		w->v[where >> 1].freed = true;
		return 0;
	}
	if (ALLOC_GROW(w->fr, w->n_fr + 1, w->cap_fr, 1024))
		return -ENOMEM;
	w->fr[w->n_fr++] = (struct freed_row){ (int64_t)(where >> 1), time_ns };
	return 0;
}

void history_writer__stats(const struct history_writer *w, struct history_stats *s)
{
	*s = w->stats;
}

int history_writer__delete(struct history_writer *w)
{
	int err;

	if (!w)
		return 0;
	err = w->err ? w->err : history_writer__flush(w);
	stmt_table__fini(&w->sts);
	hashmap__free(&w->live);
	free(w->v);
	free(w->order);
	free(w->fr);
	free(w);
	return err;
}
