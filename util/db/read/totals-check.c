/*
 * info --check of the totals (util/db/read/totals.h): every level adds up,
 * key by key, to the event rows of the checkpoints it holds.
 */
#include "util/db/read/totals.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/db/db.h"
#include "util/db/heap-key.h"
#include "util/error.h"
#include "util/hashmap.h"
#include "util/saturate.h"

#define CHECK_VALUES	6

struct check_key {
	int64_t addr, stack_id, pid, kind;
	bool heap;
	/* event rows; one level of the totals: 4 sums, temp_count's, whether it was counted */
	int64_t raw[CHECK_VALUES], sum[CHECK_VALUES];
};

struct check {
	struct check_key *v;
	size_t n, cap;
	struct hashmap index;
};

static bool check_eq(uint64_t val, const void *key, const void *ctx)
{
	const struct check *c = ctx;
	const struct check_key *a = &c->v[val], *b = key;

	return a->addr == b->addr && a->stack_id == b->stack_id && a->pid == b->pid &&
	       a->kind == b->kind && a->heap == b->heap;
}

static struct check_key *check_key(struct check *c, int64_t addr, int64_t stack_id, int64_t pid,
				   int64_t kind, bool heap)
{
	struct check_key k = { addr, stack_id, pid, kind, heap, { 0 }, { 0 } };
	/* a CPU key and a heap key of one tuple: told apart by check_eq() */
	uint64_t h = heap_key__hash(addr, stack_id, pid, kind);
	uint64_t idx = c->n;
	bool fresh;

	if (ALLOC_GROW(c->v, c->n + 1, c->cap, 1024))
		return NULL;
	if (hashmap__intern(&c->index, h, check_eq, &k, c, &idx, &fresh))
		return NULL;
	if (fresh)
		c->v[c->n++] = k;
	return &c->v[idx];
}

/* Add up the rows of sql (addr, stack_id, pid, kind, CHECK_VALUES values) into raw or sum. */
static int check_read(struct db *db, struct check *c, const char *sql, int64_t b1, int64_t b2,
		      bool heap, bool raw)
{
	sqlite3_stmt *st;
	int rc, err = 0;

	if (sqlite3_prepare_v2(db__sqlite(db), sql, -1, &st, NULL) != SQLITE_OK)
		return db__err(db, "check the totals");
	sqlite3_bind_int64(st, 1, b1);
	sqlite3_bind_int64(st, 2, b2);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct check_key *k = check_key(c, sqlite3_column_int64(st, 0),
						sqlite3_column_int64(st, 1),
						sqlite3_column_int64(st, 2),
						sqlite3_column_int64(st, 3), heap);

		if (!k) {
			err = -ENOMEM;
			break;
		}
		for (int i = 0; i < CHECK_VALUES; i++) {
			int64_t *v = &(raw ? k->raw : k->sum)[i];

			*v = sat__add(*v, sqlite3_column_int64(st, 4 + i));
		}
	}
	if (!err && rc != SQLITE_DONE)
		err = db__err(db, "check the totals");
	sqlite3_finalize(st);
	return err;
}

int totals__check(struct db *db)
{
	struct check c = { 0 };
	struct totals *t = NULL;
	int64_t through;
	char sql[320];
	bool temp, kind;
	int err, findings = 0;

	if (!db__has(db, DB_TOTALS))
		return 0;	/* no totals */
	/* the state as it is, even when the rows say it is stale */
	{
		sqlite3_stmt *st;

		if (sqlite3_prepare_v2(db__sqlite(db), "SELECT through FROM totals_state", -1, &st,
				       NULL) != SQLITE_OK)
			return db__err(db, "read totals");
		through = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
		sqlite3_finalize(st);
	}
	if (through < 0) {
		pr_err("%s: totals_state has no row", db__path(db));
		return -RSPROF_EDB;
	}
	err = totals__open(db, &t);
	if (!err && !t) {
		pr_err("%s: the event tables have rows for checkpoints the totals hold, added"
		       " after them (the file was changed by hand); readers scan them instead",
		       db__path(db));
		findings++;
	}
	totals__delete(t);
	/* temp_count where both sides have it (not in an early v3's totals) */
	temp = db__has(db, DB_TOTALS_TEMP | DB_TEMP_COUNT);
	/* kind: the totals' where they have it, else 0 as they were written */
	kind = db__has(db, DB_TOTALS_KIND);
	if (!err)
		err = check_read(db, &c, "SELECT addr, -1, IFNULL(pid, 0), 0, count, 0, 0, 0, 0, 0"
				 " FROM cpu_samples WHERE checkpoint_id <= ?1", through, 0, false,
				 true);
	if (!err) {
		snprintf(sql, sizeof(sql), "SELECT addr, IFNULL(stack_id, -1), IFNULL(pid, 0), %s,"
			 " alloc_bytes, free_bytes, alloc_count, free_count, %s FROM heap_events"
			 " WHERE checkpoint_id <= ?1", kind ? "kind" : "0", temp ?
			 "IFNULL(temp_count, 0), temp_count IS NOT NULL" : "0, 0");
		err = check_read(db, &c, sql, through, 0, true, true);
	}
	for (int level = 0; level < TOTALS_LEVELS && !err; level++) {
		int bad = 0;

		for (size_t i = 0; i < c.n; i++)
			memset(c.v[i].sum, 0, sizeof(c.v[i].sum));
		err = check_read(db, &c, "SELECT addr, -1, pid, 0, count, 0, 0, 0, 0, 0 FROM cpu_totals"
				 " WHERE level = ?1", level, 0, false, false);
		if (!err) {
			snprintf(sql, sizeof(sql), "SELECT addr, stack_id, pid, %s, alloc_bytes,"
				 " free_bytes, alloc_count, free_count, %s FROM heap_totals"
				 " WHERE level = ?1", kind ? "kind" : "0", temp ?
				 "IFNULL(temp_count, 0), temp_count IS NOT NULL" : "0, 0");
			err = check_read(db, &c, sql, level, 0, true, false);
		}
		for (size_t i = 0; i < c.n && !err; i++) {
			const struct check_key *k = &c.v[i];

			/* counted or not: by any row (raw), by the key's total (sum) */
			if (!memcmp(k->raw, k->sum, 5 * sizeof(k->raw[0])) &&
			    (k->raw[5] > 0) == (k->sum[5] > 0))
				continue;
			if (bad++ < 3)
				pr_err("%s: totals of level %d: %s addr %#llx stack %lld pid %lld kind %lld:"
				       " %lld %lld %lld %lld temp %lld%s in the totals, %lld %lld %lld"
				       " %lld temp %lld%s in the event rows of checkpoints 1..%lld",
				       db__path(db), level,
				       k->heap ? "heap" : "cpu", (unsigned long long)k->addr,
				       (long long)k->stack_id, (long long)k->pid, (long long)k->kind,
				       (long long)k->sum[0], (long long)k->sum[1],
				       (long long)k->sum[2], (long long)k->sum[3],
				       (long long)k->sum[4], k->sum[5] ? "" : " (not counted)",
				       (long long)k->raw[0], (long long)k->raw[1],
				       (long long)k->raw[2], (long long)k->raw[3],
				       (long long)k->raw[4], k->raw[5] ? "" : " (not counted)",
				       (long long)through);
		}
		if (bad > 3)
			pr_err("%s: totals of level %d: %d keys differ in all", db__path(db), level,
			       bad);
		findings += bad;
	}
	free(c.v);
	hashmap__free(&c.index);
	if (err)
		return err;
	return findings ? -RSPROF_EDB : 0;
}
