/*
 * record --retain (util/db/write/retain.h): folding the checkpoints of a block of
 * the totals into one, in the writer's transaction.
 */
#include "util/db/write/retain.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/db/db.h"
#include "util/db/heap-key.h"
#include "util/db/stmt.h"
#include "util/db/write/series.h"
#include "util/db/write/stacks.h"
#include "util/db/totals.h"
#include "util/error.h"
#include "util/hashmap.h"

enum rt_stmt {
	RT_STATE,
	RT_LAST,
	RT_CP_SUM,
	RT_CP_DEL,
	RT_MAX_ROWIDS,
	RT_CPU_INS,
	RT_CPU_DEL,
	RT_HEAP_INS,
	RT_HEAP_DEL,
	RT_PEAK_NET,
	RT_CPU0_DEL,
	RT_HEAP0_DEL,
	RT_CPU0_INS,
	RT_HEAP0_INS,
	RT_CHILDREN,
	RT_PEAK_SET,
	RT_UNSETTLED,
	RT_COMPACTED,
	RT_SAVE,
	RT_MAX,
};

static const struct stmt_def rt_sql[RT_MAX] = {
	[RT_STATE] = { "read fold state", "SELECT span, folded0, folded1 FROM totals_state" },
	[RT_LAST] = { "read checkpoints to fold",
		"SELECT id, timestamp_ms, (SELECT COUNT(*) FROM checkpoints WHERE id BETWEEN ?1 AND ?2)"
		" FROM checkpoints WHERE id BETWEEN ?1 AND ?2 ORDER BY id DESC LIMIT 1" },
	[RT_CP_SUM] = { "fold checkpoints",
		"UPDATE checkpoints SET (cpu_total, lost_samples, heap_dropped, heap_alloc_bytes,"
		" heap_free_bytes, heap_alloc_count, heap_free_count, merged) = (SELECT"
		" SUM(cpu_total), SUM(lost_samples), SUM(heap_dropped), SUM(heap_alloc_bytes),"
		" SUM(heap_free_bytes), SUM(heap_alloc_count), SUM(heap_free_count), SUM(merged)"
		" FROM checkpoints WHERE id BETWEEN ?1 AND ?2) WHERE id = ?2" },
	[RT_CP_DEL] = { "fold checkpoints", "DELETE FROM checkpoints WHERE id >= ?1 AND id < ?2" },
	[RT_MAX_ROWIDS] = { "fold event rows",
		"SELECT (SELECT IFNULL(MAX(rowid), 0) FROM cpu_samples),"
		" (SELECT IFNULL(MAX(rowid), 0) FROM heap_events)" },
	/* OR FAIL: no statement journal of the pages a multi-row insert changes
	 * (the transaction is rolled back whole on an error) */
	[RT_CPU_INS] = { "fold cpu samples",
		"INSERT OR FAIL INTO cpu_samples (checkpoint_id, addr, count, pid)"
		" SELECT ?3, addr, count, NULLIF(pid, 0) FROM cpu_totals"
		" WHERE level = ?1 AND block = ?2" },
	[RT_CPU_DEL] = { "fold cpu samples",
		"DELETE FROM cpu_samples WHERE checkpoint_id BETWEEN ?1 AND ?2 AND rowid <= ?3" },
	[RT_HEAP_INS] = { "fold heap events",
		"INSERT OR FAIL INTO heap_events (checkpoint_id, addr, alloc_bytes, free_bytes,"
		" alloc_count, free_count, stack_id, pid, temp_count, kind)"
		" SELECT ?3, addr, alloc_bytes, free_bytes,"
		" alloc_count, free_count, NULLIF(stack_id, -1), NULLIF(pid, 0), temp_count, kind"
		" FROM heap_totals"
		" WHERE level = ?1 AND block = ?2" },
	[RT_HEAP_DEL] = { "fold heap events",
		"DELETE FROM heap_events WHERE checkpoint_id BETWEEN ?1 AND ?2 AND rowid <= ?3" },
	[RT_PEAK_NET] = { "fold heap totals",
		"UPDATE heap_totals SET peak = alloc_bytes - free_bytes WHERE level = ?1 AND block = ?2" },
	[RT_CPU0_DEL] = { "fold cpu totals",
		"DELETE FROM cpu_totals WHERE level = 0 AND block BETWEEN ?1 AND ?2" },
	[RT_HEAP0_DEL] = { "fold heap totals",
		"DELETE FROM heap_totals WHERE level = 0 AND block BETWEEN ?1 AND ?2" },
	[RT_CPU0_INS] = { "fold cpu totals",
		"INSERT OR FAIL INTO cpu_totals (level, block, addr, pid, count)"
		" SELECT 0, ?2, addr, pid, count FROM cpu_totals WHERE level = 1 AND block = ?1" },
	[RT_HEAP0_INS] = { "fold heap totals",
		"INSERT OR FAIL INTO heap_totals (level, block, addr, stack_id, pid, alloc_bytes,"
		" free_bytes,"
		" alloc_count, free_count, peak, temp_count, kind) SELECT 0, ?2, addr, stack_id, pid,"
		" alloc_bytes, free_bytes, alloc_count, free_count, alloc_bytes - free_bytes,"
		" temp_count, kind FROM heap_totals"
		" WHERE level = 1 AND block = ?1" },
	[RT_CHILDREN] = { "read heap totals",
		"SELECT addr, stack_id, pid, alloc_bytes - free_bytes, peak, kind FROM heap_totals"
		" WHERE level = ?1 AND block BETWEEN ?2 AND ?3 ORDER BY block" },
	/* only when it changes: sqlite3_changes() tells the keys to go up with */
	[RT_PEAK_SET] = { "fold heap totals",
		"UPDATE heap_totals SET peak = ?6 WHERE level = ?1 AND block = ?2 AND addr = ?3"
		" AND stack_id = ?4 AND pid = ?5 AND kind = ?7 AND peak != ?6" },
	[RT_UNSETTLED] = { "read heap totals",
		"SELECT addr, stack_id, pid, kind FROM heap_totals WHERE level = ?1 AND block = ?2"
		" AND peak != alloc_bytes - free_bytes" },
	/* the compaction (util/db/series.h) folded the event rows of these blocks */
	[RT_COMPACTED] = { "read series state",
		"SELECT since, IFNULL(dropped, through) FROM series_state" },
	[RT_SAVE] = { "write fold state",
		"UPDATE totals_state SET folded0 = ?1, folded1 = ?2,"
		" cpu_rowid = (SELECT IFNULL(MAX(rowid), 0) FROM cpu_samples),"
		" heap_rowid = (SELECT IFNULL(MAX(rowid), 0) FROM heap_events)" },
};

struct retain {
	struct db *db;
	sqlite3 *sq;
	struct stmt_table sts;
	uint64_t retain_ms;
	int64_t n[TOTALS_LEVELS];	/* checkpoints per block of each level */
	int64_t folded[2];		/* totals_state.folded0, folded1 */
	/* a key's running net and peak while a block's peaks are recomputed */
	struct key_peak {
		int64_t addr, stack_id, pid, kind, net, peak;
		bool set;
	} *keys;
	size_t n_keys, cap_keys;
	struct hashmap key_index;
};

void retain__delete(struct retain *r)
{
	if (!r)
		return;
	stmt_table__fini(&r->sts);
	free(r->keys);
	hashmap__free(&r->key_index);
	free(r);
}

int retain__new(struct db *db, uint64_t retain_ms, struct retain **out)
{
	struct retain *r = calloc(1, sizeof(*r));
	int64_t v[3] = { 0 };
	bool row;
	int err = 0;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	r->db = db;
	r->sq = db__sqlite(db);
	r->retain_ms = retain_ms;
	err = stmt_table__init(&r->sts, db, rt_sql, RT_MAX);
	if (!err)
		err = stmt_table__run(&r->sts, RT_STATE, 0, NULL, v, 3, &row);
	if (!err && (!row || v[0] < 2)) {
		pr_err("%s: totals_state is damaged", db__path(db));
		err = -RSPROF_EDB;
	}
	if (err) {
		retain__delete(r);
		return err;
	}
	r->n[0] = v[0];
	for (int k = 1; k < TOTALS_LEVELS; k++)
		r->n[k] = r->n[k - 1] * v[0];
	r->folded[0] = v[1];
	r->folded[1] = v[2];
	*out = r;
	return 0;
}

static bool key_eq(uint64_t val, const void *key, const void *ctx)
{
	const struct retain *r = ctx;
	const int64_t *k = key;

	return r->keys[val].addr == k[0] && r->keys[val].stack_id == k[1] &&
	       r->keys[val].pid == k[2] && r->keys[val].kind == k[3];
}

static struct key_peak *key_of(struct retain *r, int64_t addr, int64_t stack_id, int64_t pid,
			       int64_t kind)
{
	int64_t k[4] = { addr, stack_id, pid, kind };
	uint64_t h = heap_key__hash(addr, stack_id, pid, kind);
	uint64_t idx = r->n_keys;
	bool fresh;

	if (ALLOC_GROW(r->keys, r->n_keys + 1, r->cap_keys, 1024))
		return NULL;
	if (hashmap__intern(&r->key_index, h, key_eq, k, r, &idx, &fresh))
		return NULL;
	if (fresh)
		r->keys[r->n_keys++] = (struct key_peak){ .addr = addr, .stack_id = stack_id,
							  .pid = pid, .kind = kind };
	return &r->keys[idx];
}

/* The key already in r->keys, or NULL. */
static struct key_peak *key_find(struct retain *r, int64_t addr, int64_t stack_id, int64_t pid,
				 int64_t kind)
{
	int64_t k[4] = { addr, stack_id, pid, kind };
	uint64_t h = heap_key__hash(addr, stack_id, pid, kind);
	uint64_t idx;

	if (!hashmap__lookup(&r->key_index, h, key_eq, k, r, &idx))
		return NULL;
	return &r->keys[idx];
}

/*
 * The keys of block b of level k whose peak is not their net, into r->keys:
 * the only ones whose peaks above it change when b is folded (a folded
 * block's peak is its net; a block above takes, over its blocks in order,
 * the highest of what came before plus that block's peak, so a key whose
 * peak in b already is its net keeps its peaks everywhere).
 */
static int unsettled_keys(struct retain *r, int k, int64_t b)
{
	sqlite3_stmt *st = stmt_table__get(&r->sts, RT_UNSETTLED);
	int rc, err = 0;

	hashmap__clear(&r->key_index);
	r->n_keys = 0;
	sqlite3_reset(st);
	if (sqlite3_bind_int(st, 1, k) || sqlite3_bind_int64(st, 2, b))
		return stmt_table__err(&r->sts, RT_UNSETTLED);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (!key_of(r, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
			    sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3))) {
			err = -ENOMEM;
			break;
		}
	}
	sqlite3_reset(st);
	if (!err && rc != SQLITE_DONE)
		return stmt_table__err(&r->sts, RT_UNSETTLED);
	return err;
}

/*
 * The peaks in block b of level k of the keys in r->keys, from the blocks
 * below it: a key's peak in the block is, over the blocks below in order,
 * the highest of what came before in the block plus that block's peak.
 * r->keys keeps the keys whose peak changed (they may change the level
 * above).
 */
static int recompute_peaks(struct retain *r, int k, int64_t b)
{
	sqlite3_stmt *st = stmt_table__get(&r->sts, RT_CHILDREN);
	int64_t lo = b * r->n[0], hi = lo + r->n[0] - 1;
	size_t kept = 0;
	int rc, err = 0;

	for (size_t i = 0; i < r->n_keys; i++) {
		r->keys[i].set = false;
		r->keys[i].net = r->keys[i].peak = 0;
	}
	sqlite3_reset(st);
	if (sqlite3_bind_int(st, 1, k - 1) || sqlite3_bind_int64(st, 2, lo) ||
	    sqlite3_bind_int64(st, 3, hi))
		return stmt_table__err(&r->sts, RT_CHILDREN);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct key_peak *p = key_find(r, sqlite3_column_int64(st, 0),
					      sqlite3_column_int64(st, 1),
					      sqlite3_column_int64(st, 2),
					      sqlite3_column_int64(st, 5));
		int64_t net = sqlite3_column_int64(st, 3), peak = sqlite3_column_int64(st, 4);

		if (!p)
			continue;
		if (!p->set || p->net + peak > p->peak)
			p->peak = p->net + peak;
		p->set = true;
		p->net += net;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return stmt_table__err(&r->sts, RT_CHILDREN);
	for (size_t i = 0; i < r->n_keys && !err; i++) {
		int64_t a[7] = { k, b, r->keys[i].addr, r->keys[i].stack_id, r->keys[i].pid,
				 r->keys[i].peak, r->keys[i].kind };

		if (!r->keys[i].set)
			continue;
		err = stmt_table__run(&r->sts, RT_PEAK_SET, 7, a, NULL, 0, NULL);
		if (!err && sqlite3_changes(r->sq))
			r->keys[kept++] = r->keys[i];
	}
	/* the index is rebuilt for the keys kept */
	hashmap__clear(&r->key_index);
	r->n_keys = 0;
	for (size_t i = 0; i < kept && !err; i++) {
		struct key_peak c = r->keys[i];

		if (!key_of(r, c.addr, c.stack_id, c.pid, c.kind))
			err = -ENOMEM;
	}
	return err;
}

/*
 * Has the compaction folded the event rows of level-0 block b already
 * (util/db/series.h)? Then they are one row per key at its last checkpoint,
 * from its level-0 totals: what folding writes.
 */
static int compacted(struct retain *r, int64_t b, bool *yes)
{
	int64_t v[2] = { 0 };
	bool row;
	int err = stmt_table__run(&r->sts, RT_COMPACTED, 0, NULL, v, 2, &row);

	*yes = !err && row && b * r->n[0] >= v[0] && (b + 1) * r->n[0] <= v[1];
	return err;
}

/* Fold the checkpoints of block b of level k into its last one. */
static int fold_block(struct retain *r, int k, int64_t b)
{
	int64_t n = r->n[k], first = b * n + 1, last = (b + 1) * n;
	int64_t v[3] = { 0 }, rows[2] = { 0 };
	bool row, done = false;
	int err;

	err = stmt_table__run(&r->sts, RT_LAST, 2, (int64_t[]){ first, last }, v, 3, &row);
	if (err || !row || v[2] <= 1)
		return err;	/* empty, or one checkpoint already */
	last = v[0];
	err = stmt_table__run(&r->sts, RT_CP_SUM, 2, (int64_t[]){ first, last }, NULL, 0, NULL);
	if (!err)
		err = stmt_table__run(&r->sts, RT_CP_DEL, 2, (int64_t[]){ first, last }, NULL, 0,
				      NULL);
	/*
	 * The event rows: a block the compaction folded already has them as
	 * folding writes them (24 ms of the writer's 30 for the rows of a
	 * minute at 2,000 keys, rewritten as they were)
	 */
	if (!err && k == 0)
		err = compacted(r, b, &done);
	/* the rows past these rowids are the folded ones */
	if (!err && !done)
		err = stmt_table__run(&r->sts, RT_MAX_ROWIDS, 0, NULL, rows, 2, NULL);
	if (!err && !done)
		err = stmt_table__run(&r->sts, RT_CPU_INS, 3, (int64_t[]){ k, b, last }, NULL, 0,
				      NULL);
	if (!err && !done)
		err = stmt_table__run(&r->sts, RT_CPU_DEL, 3, (int64_t[]){ first, last, rows[0] },
				      NULL, 0, NULL);
	if (!err && !done)
		err = stmt_table__run(&r->sts, RT_HEAP_INS, 3, (int64_t[]){ k, b, last }, NULL, 0,
				      NULL);
	if (!err && !done)
		err = stmt_table__run(&r->sts, RT_HEAP_DEL, 3, (int64_t[]){ first, last, rows[1] },
				      NULL, 0, NULL);
	if (!err)
		err = db_stacks__fold(r->db, first, last);
	/* a compacted block's checkpoints go with it */
	if (!err && k == 0)
		err = series__drop_block(r->db, b);
	/* the totals: the block's peak is its net now, the blocks below it are one */
	if (!err)
		err = unsettled_keys(r, k, b);
	if (!err)
		err = stmt_table__run(&r->sts, RT_PEAK_NET, 2, (int64_t[]){ k, b }, NULL, 0, NULL);
	if (!err && k == 1) {
		int64_t b0 = b * r->n[0], b1 = b0 + r->n[0] - 1, into = (last - 1) / r->n[0];

		err = stmt_table__run(&r->sts, RT_CPU0_DEL, 2, (int64_t[]){ b0, b1 }, NULL, 0,
				      NULL);
		if (!err)
			err = stmt_table__run(&r->sts, RT_HEAP0_DEL, 2, (int64_t[]){ b0, b1 }, NULL,
					      0, NULL);
		if (!err)
			err = stmt_table__run(&r->sts, RT_CPU0_INS, 2, (int64_t[]){ b, into }, NULL,
					      0, NULL);
		if (!err)
			err = stmt_table__run(&r->sts, RT_HEAP0_INS, 2, (int64_t[]){ b, into },
					      NULL, 0, NULL);
	}
	/* the blocks above: only the keys whose peak changed below */
	for (int up = k + 1; up < TOTALS_LEVELS && !err && r->n_keys; up++)
		err = recompute_peaks(r, up, (last - 1) / r->n[up]);
	return err;
}

/* The block of level k after the folded ones, if it has aged (older than age_ms) and may fold. */
static int fold_level(struct retain *r, int k, int64_t through, uint64_t now_ms, uint64_t age_ms,
		      bool *folded)
{
	int64_t n = r->n[k], b = r->folded[k] / n, last = (b + 1) * n;
	int64_t v[3] = { 0 };
	bool row;
	int err;

	*folded = false;
	/* whole blocks in the totals; level 1 once its level-0 blocks are folded */
	if (last > through || (k == 1 && last > r->folded[0]))
		return 0;
	err = stmt_table__run(&r->sts, RT_LAST, 2, (int64_t[]){ b * n + 1, last }, v, 3, &row);
	if (err)
		return err;
	if (row && ((uint64_t)v[1] > now_ms || now_ms - (uint64_t)v[1] < age_ms))
		return 0;	/* not old enough yet */
	err = fold_block(r, k, b);
	if (!err) {
		r->folded[k] = last;
		*folded = true;
	}
	return err;
}

int retain__fold(struct retain *r, int64_t through, uint64_t now_ms)
{
	bool any = false, folded = true;
	int err = 0;

	/* normally one block has aged since the last block was written; a few
	 * more at a time after an append to an old file */
	for (int i = 0; i < 4 && folded && !err; i++) {
		err = fold_level(r, 0, through, now_ms, r->retain_ms, &folded);
		any |= folded;
	}
	if (!err) {
		err = fold_level(r, 1, through, now_ms, r->retain_ms * (uint64_t)r->n[0], &folded);
		any |= folded;
	}
	if (!err && any)
		err = stmt_table__run(&r->sts, RT_SAVE, 2,
				      (int64_t[]){ r->folded[0], r->folded[1] }, NULL, 0, NULL);
	return err;
}
