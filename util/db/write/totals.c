/*
 * The writer's side of the totals (util/db/totals.h): the open level-0
 * block added up in memory, written with the levels above it in the
 * transaction of its last checkpoint.
 */
#include "util/db/write/totals.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/db/db.h"
#include "util/db/heap-key.h"
#include "util/db/stmt.h"
#include "util/db/rows.h"
#include "util/error.h"
#include "util/hashmap.h"

enum tw_stmt {
	TW_CPU,
	TW_HEAP,
	TW_STATE,
	TW_MAX,
};

static const struct stmt_def tw_sql[TW_MAX] = {
	[TW_CPU] = { "write cpu totals",
		"INSERT INTO cpu_totals (level, block, addr, pid, count) VALUES (?, ?, ?, ?, ?)"
		" ON CONFLICT (level, block, addr, pid) DO UPDATE SET count = count + excluded.count" },
	/* every right-hand side sees the row as it was */
	[TW_HEAP] = { "write heap totals",
		"INSERT INTO heap_totals (level, block, addr, stack_id, pid, alloc_bytes, free_bytes,"
		" alloc_count, free_count, peak, temp_count, kind)"
		" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
		" ON CONFLICT (level, block, addr, stack_id, pid, kind) DO UPDATE SET"
		" peak = max(peak, alloc_bytes - free_bytes + excluded.peak),"
		/* NULL (not counted) only while no row counted */
		" temp_count = CASE WHEN excluded.temp_count IS NULL THEN temp_count"
		" ELSE IFNULL(temp_count, 0) + excluded.temp_count END,"
		" alloc_bytes = alloc_bytes + excluded.alloc_bytes,"
		" free_bytes = free_bytes + excluded.free_bytes,"
		" alloc_count = alloc_count + excluded.alloc_count,"
		" free_count = free_count + excluded.free_count" },
	[TW_STATE] = { "write totals state",
		"UPDATE totals_state SET through = ?,"
		" cpu_rowid = (SELECT IFNULL(MAX(rowid), 0) FROM cpu_samples),"
		" heap_rowid = (SELECT IFNULL(MAX(rowid), 0) FROM heap_events)" },
};

/* One heap key of the open block. */
struct heap_ent {
	int64_t addr, stack_id, pid, kind;
	int64_t alloc_bytes, free_bytes, alloc_count, free_count;
	int64_t temp_count;	/* -1: no row counted temporaries */
	int64_t net;		/* alloc - free since the block's start */
	int64_t peak;		/* highest net at the end of a checkpoint with a row */
	int64_t touched;	/* the last checkpoint with a row */
};

struct cpu_ent {
	int64_t addr, pid, count;
};

struct totals_writer {
	struct db *db;
	struct stmt_table sts;
	int64_t span;
	int64_t through;	/* totals_state.through */
	int64_t block;		/* the open level-0 block, -1: none yet */
	bool stale;		/* the open block must be read back from the file */
	struct hashmap cpu_index;	/* (addr, pid) -> index in cpu */
	struct cpu_ent *cpu;
	size_t n_cpu, cap_cpu;
	struct hashmap heap_index;	/* (addr, stack_id, pid, kind) -> index in heap */
	struct heap_ent *heap;
	size_t n_heap, cap_heap;
	size_t *touched;	/* indexes into heap with a row in this checkpoint */
	size_t n_touched, cap_touched;
};

static void tw_clear(struct totals_writer *tw)
{
	hashmap__clear(&tw->cpu_index);
	tw->n_cpu = 0;
	hashmap__clear(&tw->heap_index);
	tw->n_heap = 0;
	tw->n_touched = 0;
}

void totals_writer__delete(struct totals_writer *tw)
{
	if (!tw)
		return;
	stmt_table__fini(&tw->sts);
	hashmap__free(&tw->cpu_index);
	free(tw->cpu);
	hashmap__free(&tw->heap_index);
	free(tw->heap);
	free(tw->touched);
	free(tw);
}

static int tw_read_state(struct totals_writer *tw)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db__sqlite(tw->db), "SELECT span, through FROM totals_state",
			       -1, &st, NULL) != SQLITE_OK)
		return db__err(tw->db, "read totals state");
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		tw->span = sqlite3_column_int64(st, 0);
		tw->through = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return db__err(tw->db, "read totals state");
	if (tw->span < 2 || tw->through < 0) {
		pr_err("%s: totals_state is damaged (span %lld, through %lld)", db__path(tw->db),
		       (long long)tw->span, (long long)tw->through);
		return -RSPROF_EDB;
	}
	return 0;
}

int totals_writer__new(struct db *db, struct totals_writer **out)
{
	struct totals_writer *tw = calloc(1, sizeof(*tw));
	int err;

	*out = NULL;
	if (!tw)
		return -ENOMEM;
	tw->db = db;
	tw->block = -1;
	tw->stale = true;	/* an appended file may have an open block */
	err = stmt_table__init(&tw->sts, db, tw_sql, TW_MAX);
	if (!err)
		err = tw_read_state(tw);
	if (err) {
		totals_writer__delete(tw);
		return err;
	}
	*out = tw;
	return 0;
}

int64_t totals_writer__through(const struct totals_writer *tw)
{
	return tw->through;
}

void totals_writer__reset(struct totals_writer *tw)
{
	if (!tw)
		return;
	tw_clear(tw);
	tw->block = -1;
	tw->stale = true;
}

static bool heap_key_eq(uint64_t val, const void *key, const void *ctx)
{
	const struct totals_writer *tw = ctx;
	const int64_t *k = key;

	return tw->heap[val].addr == k[0] && tw->heap[val].stack_id == k[1] &&
	       tw->heap[val].pid == k[2] && tw->heap[val].kind == k[3];
}

static bool cpu_key_eq(uint64_t val, const void *key, const void *ctx)
{
	const struct totals_writer *tw = ctx;
	const int64_t *k = key;

	return tw->cpu[val].addr == k[0] && tw->cpu[val].pid == k[1];
}

static int tw_add_cpu(struct totals_writer *tw, int64_t addr, int64_t pid, int64_t count)
{
	int64_t key[2] = { addr, pid };
	uint64_t idx = tw->n_cpu;
	bool fresh;

	if (ALLOC_GROW(tw->cpu, tw->n_cpu + 1, tw->cap_cpu, 256))
		return -ENOMEM;
	if (hashmap__intern(&tw->cpu_index, heap_key__hash(addr, -1, pid, 0), cpu_key_eq, key, tw, &idx,
			    &fresh))
		return -ENOMEM;
	if (fresh)
		tw->cpu[tw->n_cpu++] = (struct cpu_ent){ .addr = addr, .pid = pid };
	tw->cpu[idx].count += count;
	return 0;
}

static int tw_add_heap(struct totals_writer *tw, int64_t id, int64_t addr, int64_t stack_id,
		       int64_t pid, int64_t kind, int64_t ab, int64_t fb, int64_t ac, int64_t fc,
		       int64_t tc)
{
	int64_t key[4] = { addr, stack_id, pid, kind };
	uint64_t idx = tw->n_heap;
	struct heap_ent *e;
	bool fresh;

	if (ALLOC_GROW(tw->heap, tw->n_heap + 1, tw->cap_heap, 256))
		return -ENOMEM;
	if (hashmap__intern(&tw->heap_index, heap_key__hash(addr, stack_id, pid, kind), heap_key_eq,
			    key, tw,
			    &idx, &fresh))
		return -ENOMEM;
	if (fresh) {
		e = &tw->heap[tw->n_heap++];
		memset(e, 0, sizeof(*e));
		e->addr = addr;
		e->stack_id = stack_id;
		e->pid = pid;
		e->kind = kind;
		e->peak = INT64_MIN;
		e->touched = -1;
		e->temp_count = -1;
	}
	e = &tw->heap[idx];
	e->alloc_bytes += ab;
	e->free_bytes += fb;
	e->alloc_count += ac;
	e->free_count += fc;
	if (tc >= 0)
		e->temp_count = (e->temp_count < 0 ? 0 : e->temp_count) + tc;
	e->net += ab - fb;
	if (e->touched != id) {
		if (ALLOC_GROW(tw->touched, tw->n_touched + 1, tw->cap_touched, 256))
			return -ENOMEM;
		tw->touched[tw->n_touched++] = idx;
		e->touched = id;
	}
	return 0;
}

/* The end of a checkpoint: the peaks of the keys it had rows of. */
static void tw_settle(struct totals_writer *tw)
{
	for (size_t i = 0; i < tw->n_touched; i++) {
		struct heap_ent *e = &tw->heap[tw->touched[i]];

		if (e->net > e->peak)
			e->peak = e->net;
	}
	tw->n_touched = 0;
}

static int cmp_cpu(const void *pa, const void *pb)
{
	const struct cpu_ent *a = pa, *b = pb;

	if (a->addr != b->addr)
		return (a->addr > b->addr) - (a->addr < b->addr);
	return (a->pid > b->pid) - (a->pid < b->pid);
}

static int cmp_heap(const void *pa, const void *pb)
{
	const struct heap_ent *a = pa, *b = pb;

	if (a->addr != b->addr)
		return (a->addr > b->addr) - (a->addr < b->addr);
	if (a->stack_id != b->stack_id)
		return (a->stack_id > b->stack_id) - (a->stack_id < b->stack_id);
	if (a->pid != b->pid)
		return (a->pid > b->pid) - (a->pid < b->pid);
	return (a->kind > b->kind) - (a->kind < b->kind);
}

/* Write the open block into every level, and the state. */
static int tw_flush(struct totals_writer *tw)
{
	int64_t div = 1;
	int err = 0;

	if (tw->block < 0)
		return 0;
	/* the index maps point into the arrays: sorting is their last use */
	if (tw->n_cpu)		/* qsort(NULL, 0, ...) is undefined */
		qsort(tw->cpu, tw->n_cpu, sizeof(*tw->cpu), cmp_cpu);
	if (tw->n_heap)
		qsort(tw->heap, tw->n_heap, sizeof(*tw->heap), cmp_heap);
	for (int level = 0; level < TOTALS_LEVELS && !err; level++) {
		sqlite3_stmt *st = stmt_table__get(&tw->sts, TW_CPU);
		int64_t block = tw->block / div;

		for (size_t i = 0; i < tw->n_cpu && !err; i++) {
			if (sqlite3_bind_int(st, 1, level) || sqlite3_bind_int64(st, 2, block) ||
			    sqlite3_bind_int64(st, 3, tw->cpu[i].addr) ||
			    sqlite3_bind_int64(st, 4, tw->cpu[i].pid) ||
			    sqlite3_bind_int64(st, 5, tw->cpu[i].count))
				err = stmt_table__err(&tw->sts, TW_CPU);
			else
				err = stmt_table__step(&tw->sts, TW_CPU);
		}
		st = stmt_table__get(&tw->sts, TW_HEAP);
		for (size_t i = 0; i < tw->n_heap && !err; i++) {
			const struct heap_ent *e = &tw->heap[i];

			if (sqlite3_bind_int(st, 1, level) || sqlite3_bind_int64(st, 2, block) ||
			    sqlite3_bind_int64(st, 3, e->addr) ||
			    sqlite3_bind_int64(st, 4, e->stack_id) ||
			    sqlite3_bind_int64(st, 5, e->pid) ||
			    sqlite3_bind_int64(st, 6, e->alloc_bytes) ||
			    sqlite3_bind_int64(st, 7, e->free_bytes) ||
			    sqlite3_bind_int64(st, 8, e->alloc_count) ||
			    sqlite3_bind_int64(st, 9, e->free_count) ||
			    sqlite3_bind_int64(st, 10, e->peak) ||
			    (e->temp_count >= 0 ? sqlite3_bind_int64(st, 11, e->temp_count) :
						  sqlite3_bind_null(st, 11)) ||
			    sqlite3_bind_int64(st, 12, e->kind))
				err = stmt_table__err(&tw->sts, TW_HEAP);
			else
				err = stmt_table__step(&tw->sts, TW_HEAP);
		}
		div *= tw->span;
	}
	if (!err) {
		int64_t through = (tw->block + 1) * tw->span;

		if (sqlite3_bind_int64(stmt_table__get(&tw->sts, TW_STATE), 1, through))
			err = stmt_table__err(&tw->sts, TW_STATE);
		else
			err = stmt_table__step(&tw->sts, TW_STATE);
		if (!err)
			tw->through = through;
	}
	tw_clear(tw);
	tw->block = -1;
	return err;
}

/* Checkpoint id begins: close the open block if id is past it. */
static int tw_begin(struct totals_writer *tw, int64_t id)
{
	int64_t block = (id - 1) / tw->span;
	int err = 0;

	if (tw->block >= 0 && tw->block != block)
		err = tw_flush(tw);
	if (!err)
		tw->block = block;
	return err;
}

/* Checkpoint id is added: write the block when id is its last. */
static int tw_end(struct totals_writer *tw, int64_t id)
{
	tw_settle(tw);
	if (id % tw->span == 0)
		return tw_flush(tw);
	return 0;
}

/*
 * The open block (and any whole block a writer left out) from the event
 * tables: the checkpoints after totals_state.through, in order.
 */
static int tw_read_back(struct totals_writer *tw)
{
	sqlite3 *sq = db__sqlite(tw->db);
	sqlite3_stmt *cpu = NULL, *heap = NULL;
	int64_t cur = -1, next_cpu = -1, next_heap = -1;
	int rc_cpu = SQLITE_DONE, rc_heap = SQLITE_DONE, err;

	tw_clear(tw);
	tw->block = -1;
	err = tw_read_state(tw);
	if (err)
		return err;
	if (sqlite3_prepare_v2(sq, "SELECT checkpoint_id, addr, count, IFNULL(pid, 0)"
			       " FROM cpu_samples WHERE checkpoint_id > ? ORDER BY checkpoint_id",
			       -1, &cpu, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(sq, "SELECT checkpoint_id, addr, IFNULL(stack_id, -1), alloc_bytes,"
			       " free_bytes, alloc_count, free_count, IFNULL(pid, 0),"
			       " IFNULL(temp_count, -1), kind FROM heap_events WHERE checkpoint_id > ?"
			       " ORDER BY checkpoint_id", -1, &heap, NULL) != SQLITE_OK) {
		err = db__err(tw->db, "read back the open block");
		goto out;
	}
	sqlite3_bind_int64(cpu, 1, tw->through);
	sqlite3_bind_int64(heap, 1, tw->through);
	rc_cpu = sqlite3_step(cpu);
	rc_heap = sqlite3_step(heap);
	/* merge the two by checkpoint */
	while (!err && (rc_cpu == SQLITE_ROW || rc_heap == SQLITE_ROW)) {
		int64_t id;

		next_cpu = rc_cpu == SQLITE_ROW ? sqlite3_column_int64(cpu, 0) : INT64_MAX;
		next_heap = rc_heap == SQLITE_ROW ? sqlite3_column_int64(heap, 0) : INT64_MAX;
		id = next_cpu < next_heap ? next_cpu : next_heap;
		if (id != cur) {
			if (cur >= 0)
				err = tw_end(tw, cur);
			if (!err)
				err = tw_begin(tw, id);
			cur = id;
			if (err)
				break;
		}
		if (next_cpu == id) {
			err = tw_add_cpu(tw, sqlite3_column_int64(cpu, 1),
					 sqlite3_column_int64(cpu, 3), sqlite3_column_int64(cpu, 2));
			rc_cpu = sqlite3_step(cpu);
		} else {
			err = tw_add_heap(tw, id, sqlite3_column_int64(heap, 1),
					  sqlite3_column_int64(heap, 2),
					  sqlite3_column_int64(heap, 7),
					  sqlite3_column_int64(heap, 9),
					  sqlite3_column_int64(heap, 3),
					  sqlite3_column_int64(heap, 4),
					  sqlite3_column_int64(heap, 5),
					  sqlite3_column_int64(heap, 6),
					  sqlite3_column_int64(heap, 8));
			rc_heap = sqlite3_step(heap);
		}
	}
	if (!err && ((rc_cpu != SQLITE_DONE && rc_cpu != SQLITE_ROW) ||
		     (rc_heap != SQLITE_DONE && rc_heap != SQLITE_ROW)))
		err = db__err(tw->db, "read back the open block");
	if (!err && cur >= 0)
		err = tw_end(tw, cur);
out:
	sqlite3_finalize(cpu);
	sqlite3_finalize(heap);
	if (!err)
		tw->stale = false;
	return err;
}

int totals_writer__checkpoint(struct totals_writer *tw, int64_t id, const struct checkpoint *cp)
{
	int err = 0;

	if (tw->stale) {
		/* the rows of id are in the file already: read back with the rest */
		return tw_read_back(tw);
	}
	err = tw_begin(tw, id);
	for (size_t i = 0; i < cp->n_cpu && !err; i++)
		err = tw_add_cpu(tw, (int64_t)cp->cpu[i].addr, cp->cpu[i].pid > 0 ? cp->cpu[i].pid : 0,
				 (int64_t)cp->cpu[i].count);
	for (size_t i = 0; i < cp->n_heap && !err; i++) {
		const struct heap_count *h = &cp->heap[i];

		err = tw_add_heap(tw, id, (int64_t)h->addr, h->stack_id >= 0 ? h->stack_id : -1,
				  h->pid > 0 ? h->pid : 0, h->kind, h->alloc_bytes, h->free_bytes,
				  h->alloc_count, h->free_count, h->temp_count >= 0 ? h->temp_count : -1);
	}
	if (!err)
		err = tw_end(tw, id);
	return err;
}
