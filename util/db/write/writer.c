/*
 * The profile's writer (util/db/write/writer.h): its statements, one
 * transaction per checkpoint, and what the totals, --retain and the
 * compaction add to it.
 */
#include "util/db/write/writer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "util/db/db.h"
#include "util/db/stmt.h"
#include "util/db/wal-checkpointer.h"
#include "util/db/write/retain.h"
#include "util/db/write/rows-vtab.h"
#include "util/db/write/series.h"
#include "util/db/write/totals.h"
#include "util/error.h"
#include "util/symbols/symbol.h"

/* The writer's statements, prepared once (SQLITE_PREPARE_PERSISTENT): util/db/stmt.h. */
enum db_stmt {
	ST_CHECKPOINT,
	ST_CPU,
	ST_HEAP,
	ST_SYMBOL,
	ST_FRAME,
	ST_STACK,
	ST_STACK_FRAME,
	ST_META_SET,
	ST_MAP_DELETE,
	ST_MAP_INSERT,
	ST_PROCESS,
	ST_STACK_COUNT,
	ST_BEGIN,
	ST_COMMIT,
	ST_ROLLBACK,
	ST_MAX,
};
static const struct stmt_def db_stmts[ST_MAX] = {
	[ST_CHECKPOINT] = { "insert checkpoint",
		"INSERT INTO checkpoints (timestamp_ms, lost_samples, heap_dropped, cpu_total,"
		" heap_alloc_bytes, heap_free_bytes, heap_alloc_count, heap_free_count,"
		" heap_live_bytes, rss_bytes, rss_anon_bytes)"
		" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)" },
	/* a checkpoint's rows in one run each (util/db/write/rows-vtab.h) */
	[ST_CPU] = { "insert cpu samples",
		"INSERT OR FAIL INTO cpu_samples (checkpoint_id, addr, count, pid)"
		" SELECT ?1, c0, c1, c2 FROM rsprof_rows(?2)" },
	[ST_HEAP] = { "insert heap events",
		"INSERT OR FAIL INTO heap_events (checkpoint_id, addr, alloc_bytes, free_bytes,"
		" alloc_count, free_count, stack_id, pid, temp_count, kind)"
		" SELECT ?1, c0, c1, c2, c3, c4, c5, c6, c7, c8 FROM rsprof_rows(?2)" },
	[ST_SYMBOL] = { "insert symbol",
		"INSERT OR IGNORE INTO symbols (addr, file, line, function, module, mangled)"
		" VALUES (?, ?, ?, ?, ?, ?)" },
	[ST_FRAME] = { "insert symbol frame",
		"INSERT OR IGNORE INTO symbol_frames (addr, depth, file, line, function)"
		" VALUES (?, ?, ?, ?, ?)" },
	[ST_STACK] = { "insert stack",
		"INSERT OR FAIL INTO stacks (id, hash, depth) SELECT c0, c1, c2 FROM rsprof_rows(?1)" },
	[ST_STACK_FRAME] = { "insert stack frame",
		"INSERT OR FAIL INTO stack_frames (stack_id, pos, addr)"
		" SELECT c0, c1, c2 FROM rsprof_rows(?1)" },
	[ST_META_SET] = { "set meta",
		"INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)" },
	[ST_MAP_DELETE] = { "delete maps", "DELETE FROM map WHERE pid = ?" },
	[ST_MAP_INSERT] = { "insert map",
		"INSERT INTO map (pid, addr_begin, addr_end, perm, offset, path, build_id)"
		" VALUES (?, ?, ?, ?, ?, ?, ?)" },
	[ST_PROCESS] = { "insert process",
		"INSERT OR REPLACE INTO processes (pid, ppid, comm, exe, start_ms, end_ms, samples,"
		" cgroup) VALUES (?, ?, ?, ?, ?, ?, ?, ?)" },
	/* prepared when first used: a file has cpu_stacks from record -g on */
	[ST_STACK_COUNT] = { "insert cpu stack",
		"INSERT INTO cpu_stacks (checkpoint_id, stack_id, count) VALUES (?, ?, ?)", true },
	[ST_BEGIN] = { "begin", "BEGIN IMMEDIATE" },
	[ST_COMMIT] = { "commit", "COMMIT" },
	[ST_ROLLBACK] = { "rollback", "ROLLBACK" },
};

struct row_order;

struct db_writer {
	struct db *db;
	sqlite3 *sq;
	bool appending;		/* --append: the file was there before */
	struct stmt_table sts;
	struct totals_writer *totals;	/* NULL: a file without totals (appended to) */
	struct retain *retain;		/* record --retain; NULL: keep everything */
	struct series_writer *series;	/* compaction; NULL: every checkpoint kept whole */
	struct wal_checkpointer *walck;	/* NULL: the writer checkpoints the WAL itself */
	int64_t retain_through;		/* the totals' through when it last folded */
	struct row_order *order;	/* a checkpoint's rows in address order */
	size_t cap_order;
	struct rows_vtab_row *rows;	/* the same, as ST_CPU/ST_HEAP read them */
	size_t cap_rows;
	int64_t stack_next;	/* the next stack id: none from it on is in the file */
};

static int db_begin(struct db_writer *w)
{
	return stmt_table__step(&w->sts, ST_BEGIN);
}

static int db_commit(struct db_writer *w)
{
	return stmt_table__step(&w->sts, ST_COMMIT);
}

static void db_rollback(struct db_writer *w)
{
	if (!sqlite3_get_autocommit(w->sq))
		stmt_table__step(&w->sts, ST_ROLLBACK);
}

/*
 * The end of a recording: the compaction spread over the checkpoints
 * (util/db/series.h) finished, what has aged compacted whole, in a
 * transaction of its own; the file stays as it is when it fails.
 */
static void db_finish(struct db_writer *w)
{
	int err;

	if (!w->series || db__gone(w->db) || !w->sq)
		return;
	err = db_begin(w);
	if (!err)
		err = series_writer__finish(w->series);
	if (!err)
		err = db_commit(w);
	if (err) {
		db_rollback(w);
		pr_debug(1, "%s: the compaction was left as it was", db__path(w->db));
	}
}

/* Every statement finalized, the parts stopped: the connection alone is left. */
static void writer_stop(struct db_writer *w)
{
	stmt_table__fini(&w->sts);
	retain__delete(w->retain);
	series_writer__delete(w->series);
	totals_writer__delete(w->totals);
	w->retain = NULL;
	w->series = NULL;
	w->totals = NULL;
	wal_checkpointer__stop(w->walck);	/* before the writer's close checkpoints */
	w->walck = NULL;
	free(w->order);
	free(w->rows);
	w->order = NULL;
	w->rows = NULL;
}

int db_writer__close(struct db_writer *w)
{
	int err;

	if (!w)
		return 0;
	db_finish(w);
	writer_stop(w);
	err = db__close(w->db);
	free(w);
	return err;
}

int db_writer__discard(struct db_writer *w)
{
	int err;

	if (!w)
		return 0;
	if (w->appending)
		return db_writer__close(w);
	writer_stop(w);
	err = db__discard(w->db);
	free(w);
	return err;
}

struct db *db_writer__db(struct db_writer *w)
{
	return w->db;
}

/*
 * Stack ids are handed out in order, so that stacks and stack_frames grow
 * at their end: random ids (hashes) split the pages of both everywhere,
 * and wrote rustc's 72,519 heap stacks (1.55 M frames) in 11-13 s. They
 * count up from the file's highest below STACK_ID_DENSE: a file from an
 * older rsprof, appended to, has hashed ids anywhere in 1..2^63 and CPU
 * stack ids from 2^40 up, none of them in the way of 2^40 - 1 more stacks.
 */
#define STACK_ID_DENSE	(1LL << 40)

static int stack_ids_init(struct db_writer *w)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(w->sq, "SELECT IFNULL(MAX(id), 0) + 1 FROM stacks WHERE id < ?1",
			       -1, &st, NULL) != SQLITE_OK)
		return db__err(w->db, "read stack ids");
	sqlite3_bind_int64(st, 1, STACK_ID_DENSE);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		w->stack_next = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : db__err(w->db, "read stack ids");
}

int db_writer__stack_id(struct db_writer *w, int64_t *id)
{
	if (w->stack_next >= STACK_ID_DENSE)
		return -ERANGE;
	*id = w->stack_next++;
	return 0;
}

int db_writer__create(const char *path, bool append, struct db_writer **out)
{
	struct db_writer *w;
	struct db *db;
	int err = 0;

	*out = NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	err = db__create(path, append, &w->db);
	if (err) {
		free(w);
		return err;
	}
	db = w->db;
	w->sq = db__sqlite(db);
	w->appending = append;
	if (rows_vtab__register(w->sq) != SQLITE_OK)
		err = db__err(db, "register rsprof_rows");
	if (!err)
		err = stmt_table__init(&w->sts, db, db_stmts, ST_MAX);
	if (err)
		goto fail;
	/* the WAL copied into the file by a thread of its own (else by the writer) */
	if (wal_checkpointer__start(w->sq, path, 65536, &w->walck))
		pr_debug(1, "%s: the writer copies the WAL into the file itself", path);
	err = stack_ids_init(w);
	if (err)
		goto fail;
	/* the totals and the compaction (a file appended to may have none) */
	if (db__has(db, DB_WRITE_TOTALS)) {
		err = totals_writer__new(db, &w->totals);
		if (!err)
			err = series_writer__new(db, SERIES_AGE_MS, &w->series);
		if (err)
			goto fail;
	}
	*out = w;
	return 0;
fail:
	writer_stop(w);
	db__discard(w->db);
	free(w);
	return err;
}

int db_writer__meta_set(struct db_writer *w, const char *key, const char *value)
{
	sqlite3_stmt *st = stmt_table__get(&w->sts, ST_META_SET);

	if (sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_text(st, 2, value ? value : "", -1, SQLITE_STATIC) != SQLITE_OK)
		return stmt_table__err(&w->sts, ST_META_SET);
	return stmt_table__step(&w->sts, ST_META_SET);
}

int db_writer__meta_set_int(struct db_writer *w, const char *key, long long value)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", value);
	return db_writer__meta_set(w, key, buf);
}

/* Bind a text that may be NULL. */
static int bind_text(sqlite3_stmt *st, int i, const char *s)
{
	return s ? sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC) : sqlite3_bind_null(st, i);
}

static int db_write_symbol(struct db_writer *w, const struct symbol *s)
{
	static const struct frame none;
	const struct frame *f = &none;
	sqlite3_stmt *st = stmt_table__get(&w->sts, ST_SYMBOL);
	int err;

	/* symbol.h promises n_frames >= 1; a broken one is stored as unresolved */
	if (s->frames && s->n_frames > 0 && s->chosen >= 0 && s->chosen < s->n_frames)
		f = symbol__frame(s);

	if (sqlite3_bind_int64(st, 1, (int64_t)s->addr) || bind_text(st, 2, f->file) ||
	    (f->line > 0 ? sqlite3_bind_int(st, 3, f->line) : sqlite3_bind_null(st, 3)) ||
	    bind_text(st, 4, f->function) || bind_text(st, 5, s->module) ||
	    bind_text(st, 6, s->mangled))
		return stmt_table__err(&w->sts, ST_SYMBOL);
	err = stmt_table__step(&w->sts, ST_SYMBOL);
	if (err)
		return err;
	st = stmt_table__get(&w->sts, ST_FRAME);
	for (int d = 0; s->frames && d < s->n_frames; d++) {
		f = &s->frames[d];
		if (sqlite3_bind_int64(st, 1, (int64_t)s->addr) || sqlite3_bind_int(st, 2, d) ||
		    bind_text(st, 3, f->file) ||
		    (f->line > 0 ? sqlite3_bind_int(st, 4, f->line) : sqlite3_bind_null(st, 4)) ||
		    bind_text(st, 5, f->function))
			return stmt_table__err(&w->sts, ST_FRAME);
		err = stmt_table__step(&w->sts, ST_FRAME);
		if (err)
			return err;
	}
	return 0;
}

static int cmp_symbol_addr(const void *pa, const void *pb)
{
	const struct symbol *a = *(const struct symbol *const *)pa;
	const struct symbol *b = *(const struct symbol *const *)pb;

	return (a->addr > b->addr) - (a->addr < b->addr);
}

/*
 * The checkpoint's new symbols in address order: each insert then lands at
 * the end of symbols and symbol_frames, not all over their b-trees
 * (rustc's 21,000 symbols: 101 ms as they came, 68 sorted).
 */
static int db_write_symbols(struct db_writer *w, const struct checkpoint *cp)
{
	const struct symbol **v = NULL;
	size_t n = 0;
	int err = 0;

	if (cp->n_symbols > 1)
		v = malloc(cp->n_symbols * sizeof(*v));
	if (!v) {	/* one, or no memory for the order: as they came */
		for (size_t i = 0; i < cp->n_symbols && !err; i++)
			if (cp->symbols[i])
				err = db_write_symbol(w, cp->symbols[i]);
		return err;
	}
	for (size_t i = 0; i < cp->n_symbols; i++)
		if (cp->symbols[i])
			v[n++] = cp->symbols[i];
	qsort(v, n, sizeof(*v), cmp_symbol_addr);
	for (size_t i = 0; i < n && !err; i++)
		err = db_write_symbol(w, v[i]);
	free(v);
	return err;
}

struct row_order {
	int64_t addr;
	size_t i;
};

static int cmp_row_order(const void *pa, const void *pb)
{
	const struct row_order *a = pa, *b = pb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return (a->i > b->i) - (a->i < b->i);
}

/*
 * The n rows of a checkpoint in address order (as the seed's addr indexes
 * hold them), into w->order: the rows of neighbouring addresses are then
 * neighbours in the table and its checkpoint index too, so that the
 * compaction's slices of addresses (util/db/series.h) dirty a few pages of
 * each checkpoint instead of every page of the block. heap: cp->heap, else
 * cp->cpu.
 */
static int db_order_rows(struct db_writer *w, const struct checkpoint *cp, bool heap)
{
	size_t n = heap ? cp->n_heap : cp->n_cpu;

	if (n > w->cap_order) {
		struct row_order *o = realloc(w->order, n * sizeof(*o));

		if (!o)
			return -ENOMEM;
		w->order = o;
		w->cap_order = n;
	}
	for (size_t i = 0; i < n; i++)
		w->order[i] = (struct row_order){
			(int64_t)(heap ? cp->heap[i].addr : cp->cpu[i].addr), i };
	if (n)			/* qsort(NULL, 0, ...) is undefined */
		qsort(w->order, n, sizeof(*w->order), cmp_row_order);
	return 0;
}

/* Run ST_CPU or ST_HEAP over the n rows in w->rows. */
static int db_insert_rows(struct db_writer *w, enum db_stmt i, int64_t id, size_t n)
{
	struct rows_vtab rows = { w->rows, n };
	sqlite3_stmt *st = stmt_table__get(&w->sts, i);

	if (!n)
		return 0;
	if (sqlite3_bind_int64(st, 1, id) || rows_vtab__bind(st, 2, &rows))
		return stmt_table__err(&w->sts, i);
	return stmt_table__step(&w->sts, i);
}

/* Room for n rows in w->rows. */
static int db_rows_reserve(struct db_writer *w, size_t n)
{
	struct rows_vtab_row *r;

	if (n <= w->cap_rows)
		return 0;
	r = realloc(w->rows, n * sizeof(*r));
	if (!r)
		return -ENOMEM;
	w->rows = r;
	w->cap_rows = n;
	return 0;
}

/* Rows at a time through rsprof_rows: a checkpoint can bring 10^6 frames. */
#define STACK_ROWS_BATCH	8192

static int db_flush_stack_rows(struct db_writer *w, enum db_stmt i, size_t n)
{
	struct rows_vtab rows = { w->rows, n };
	sqlite3_stmt *st = stmt_table__get(&w->sts, i);

	if (!n)
		return 0;
	if (rows_vtab__bind(st, 1, &rows))
		return stmt_table__err(&w->sts, i);
	return stmt_table__step(&w->sts, i);
}

/* The checkpoint's new stacks, then their frames, each in one statement a batch. */
static int db_write_stacks(struct db_writer *w, const struct checkpoint *cp)
{
	size_t n = 0;
	int err = db_rows_reserve(w, STACK_ROWS_BATCH);

	for (size_t i = 0; i < cp->n_stacks && !err; i++) {
		const struct stack_rec *s = &cp->stacks[i];

		w->rows[n++] = (struct rows_vtab_row){ .v = { s->id, (int64_t)s->hash, s->depth } };
		if (n == STACK_ROWS_BATCH) {
			err = db_flush_stack_rows(w, ST_STACK, n);
			n = 0;
		}
	}
	if (!err)
		err = db_flush_stack_rows(w, ST_STACK, n);
	n = 0;
	for (size_t i = 0; i < cp->n_stacks && !err; i++) {
		const struct stack_rec *s = &cp->stacks[i];

		for (int d = 0; d < s->depth && !err; d++) {
			w->rows[n++] = (struct rows_vtab_row){
				.v = { s->id, d, (int64_t)s->addrs[d] } };
			if (n == STACK_ROWS_BATCH) {
				err = db_flush_stack_rows(w, ST_STACK_FRAME, n);
				n = 0;
			}
		}
	}
	if (!err)
		err = db_flush_stack_rows(w, ST_STACK_FRAME, n);
	return err;
}

static int db_write_rows(struct db_writer *w, const struct checkpoint *cp, int64_t id)
{
	sqlite3_stmt *st;
	int err;

	err = db_order_rows(w, cp, false);
	if (!err)
		err = db_rows_reserve(w, cp->n_cpu > cp->n_heap ? cp->n_cpu : cp->n_heap);
	if (err)
		return err;
	for (size_t k = 0; k < cp->n_cpu; k++) {
		const struct cpu_count *c = &cp->cpu[w->order[k].i];

		w->rows[k] = (struct rows_vtab_row){
			.v = { (int64_t)c->addr, (int64_t)c->count, c->pid },
			.null = c->pid > 0 ? 0 : 1u << 2,
		};
	}
	err = db_insert_rows(w, ST_CPU, id, cp->n_cpu);
	if (!err)
		err = db_order_rows(w, cp, true);
	if (err)
		return err;
	for (size_t k = 0; k < cp->n_heap; k++) {
		const struct heap_count *h = &cp->heap[w->order[k].i];

		w->rows[k] = (struct rows_vtab_row){
			.v = { (int64_t)h->addr, h->alloc_bytes, h->free_bytes, h->alloc_count,
			       h->free_count, h->stack_id, h->pid, h->temp_count, h->kind },
			.null = (h->stack_id >= 0 ? 0 : 1u << 5) | (h->pid > 0 ? 0 : 1u << 6) |
				(h->temp_count >= 0 ? 0 : 1u << 7),
		};
	}
	err = db_insert_rows(w, ST_HEAP, id, cp->n_heap);
	if (err)
		return err;
	st = stmt_table__get(&w->sts, ST_PROCESS);
	for (size_t i = 0; i < cp->n_processes; i++) {
		const struct process_row *p = &cp->processes[i];

		if (sqlite3_bind_int(st, 1, p->pid) ||
		    (p->ppid > 0 ? sqlite3_bind_int(st, 2, p->ppid) : sqlite3_bind_null(st, 2)) ||
		    bind_text(st, 3, p->comm) || bind_text(st, 4, p->exe) ||
		    sqlite3_bind_int64(st, 5, (int64_t)p->start_ms) ||
		    (p->end_ms >= 0 ? sqlite3_bind_int64(st, 6, p->end_ms) :
				      sqlite3_bind_null(st, 6)) ||
		    sqlite3_bind_int64(st, 7, (int64_t)p->samples) || bind_text(st, 8, p->cgroup))
			return stmt_table__err(&w->sts, ST_PROCESS);
		err = stmt_table__step(&w->sts, ST_PROCESS);
		if (err)
			return err;
	}
	return 0;
}

/* record -g: the checkpoint's samples per stack, into cpu_stacks. */
static int db_write_stack_counts(struct db_writer *w, const struct checkpoint *cp, int64_t id)
{
	sqlite3_stmt *st;
	int err;

	if (!cp->n_stack_counts)
		return 0;
	st = stmt_table__get(&w->sts, ST_STACK_COUNT);
	if (!st)
		return -RSPROF_EDB;
	for (size_t i = 0; i < cp->n_stack_counts; i++) {
		const struct stack_count *c = &cp->stack_counts[i];

		if (sqlite3_bind_int64(st, 1, id) || sqlite3_bind_int64(st, 2, c->stack_id) ||
		    sqlite3_bind_int64(st, 3, (int64_t)c->count))
			return stmt_table__err(&w->sts, ST_STACK_COUNT);
		err = stmt_table__step(&w->sts, ST_STACK_COUNT);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Copy what the WAL holds into the file itself (a passive checkpoint: it
 * waits for no reader), so that the .db alone, copied or left by a
 * SIGKILL, an OOM kill or a crash, holds every finished checkpoint. A
 * reader's older snapshot can hold some pages back until the next one.
 * Only where the WAL thread (util/db/wal-checkpointer.h) could not start:
 * it does the same off the writer's path.
 */
static int db_wal_to_file(struct db_writer *w)
{
	int rc = sqlite3_wal_checkpoint_v2(w->sq, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);

	if (rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
		return 0;
	return db__err(w->db, "copy the write-ahead log into the file");
}

int db_writer__checkpoint(struct db_writer *w, const struct checkpoint *cp, int64_t *id)
{
	sqlite3_stmt *st = stmt_table__get(&w->sts, ST_CHECKPOINT);
	int64_t cpu_total = 0, ab = 0, fb = 0, ac = 0, fc = 0;
	int64_t cid;
	int err;

	for (size_t i = 0; i < cp->n_cpu; i++)
		cpu_total += (int64_t)cp->cpu[i].count;
	for (size_t i = 0; i < cp->n_heap; i++) {
		ab += cp->heap[i].alloc_bytes;
		fb += cp->heap[i].free_bytes;
		ac += cp->heap[i].alloc_count;
		fc += cp->heap[i].free_count;
	}

	/* the last checkpoint in the .db first: it never lags by more than one */
	wal_checkpointer__wait(w->walck);
	err = db_begin(w);
	if (err)
		return err;
	err = db_write_symbols(w, cp);
	if (err)
		goto fail;
	err = db_write_stacks(w, cp);
	if (err)
		goto fail;
	if (sqlite3_bind_int64(st, 1, (int64_t)cp->timestamp_ms) ||
	    sqlite3_bind_int64(st, 2, (int64_t)cp->lost_samples) ||
	    sqlite3_bind_int64(st, 3, (int64_t)cp->heap_dropped) ||
	    sqlite3_bind_int64(st, 4, cpu_total) || sqlite3_bind_int64(st, 5, ab) ||
	    sqlite3_bind_int64(st, 6, fb) || sqlite3_bind_int64(st, 7, ac) ||
	    sqlite3_bind_int64(st, 8, fc) || sqlite3_bind_int64(st, 9, cp->heap_live_bytes) ||
	    (cp->has_rss ? sqlite3_bind_int64(st, 10, cp->rss_bytes) :
			   sqlite3_bind_null(st, 10)) ||
	    (cp->has_rss ? sqlite3_bind_int64(st, 11, cp->rss_anon_bytes) :
			   sqlite3_bind_null(st, 11))) {
		err = stmt_table__err(&w->sts, ST_CHECKPOINT);
		goto fail;
	}
	err = stmt_table__step(&w->sts, ST_CHECKPOINT);
	if (err)
		goto fail;
	cid = sqlite3_last_insert_rowid(w->sq);
	err = db_write_rows(w, cp, cid);
	if (!err && w->series)
		err = series_writer__stage(w->series, cid, cp);
	if (!err && w->totals)
		err = totals_writer__checkpoint(w->totals, cid, cp);
	/* a block was written: another may have aged past --retain */
	if (!err && w->retain && totals_writer__through(w->totals) > w->retain_through) {
		err = retain__fold(w->retain, totals_writer__through(w->totals), cp->timestamp_ms);
		if (!err)
			w->retain_through = totals_writer__through(w->totals);
	}
	/* and older blocks compacted (after the fold: a folded block is not) */
	if (!err && w->series)
		err = series_writer__compact(w->series, totals_writer__through(w->totals),
					     cp->timestamp_ms);
	/* what else it carries, in the same transaction: all of it or none */
	if (!err)
		err = db_write_stack_counts(w, cp, cid);
	if (!err && cp->also)
		err = cp->also(cp->also_ctx, cid);
	if (err)
		goto fail;
	err = db_commit(w);
	if (err)
		goto fail;
	if (id)
		*id = cid;
	/* the thread copies the WAL into the file now (the commit signalled it) */
	err = w->walck ? 0 : db_wal_to_file(w);
	return err ? err : db__verify(w->db);
fail:
	db_rollback(w);
	totals_writer__reset(w->totals);
	series_writer__reset(w->series);
	return err;
}

int db_writer__set_compact(struct db_writer *w, uint64_t age_ms)
{
	if (!w->totals) {
		if (!age_ms)
			return 0;
		pr_err("%s: compaction: the profile has no totals (it was written by an older"
		       " rsprof)", db__path(w->db));
		return -RSPROF_EDB;
	}
	series_writer__delete(w->series);
	w->series = NULL;
	return age_ms ? series_writer__new(w->db, age_ms, &w->series) : 0;
}

void db_writer__wal_stats(struct db_writer *w, struct wal_checkpointer_stats *out)
{
	wal_checkpointer__stats(w ? w->walck : NULL, out);
}

int db_writer__set_retain(struct db_writer *w, uint64_t retain_ms)
{
	int err;

	if (!w->totals) {
		pr_err("%s: --retain: the profile has no totals to fold by (it was written by an"
		       " older rsprof)", db__path(w->db));
		pr_hint("record into a new file");
		return -RSPROF_EDB;
	}
	retain__delete(w->retain);
	w->retain = NULL;
	err = retain__new(w->db, retain_ms, &w->retain);
	if (!err)
		err = db_writer__meta_set_int(w, "retain_ms", (long long)retain_ms);
	return err;
}

int db_writer__write_maps(struct db_writer *w, const struct map_set *m)
{
	sqlite3_stmt *st;
	int err;

	if (sqlite3_get_autocommit(w->sq)) {
		pr_err("%s: write maps: not in a checkpoint's transaction", db__path(w->db));
		return -RSPROF_EDB;
	}
	st = stmt_table__get(&w->sts, ST_MAP_DELETE);
	if (sqlite3_bind_int64(st, 1, m->pid))
		return stmt_table__err(&w->sts, ST_MAP_DELETE);
	err = stmt_table__step(&w->sts, ST_MAP_DELETE);
	if (err)
		return err;
	st = stmt_table__get(&w->sts, ST_MAP_INSERT);
	for (size_t i = 0; i < m->n; i++) {
		const struct map_row *e = &m->v[i];

		if (sqlite3_bind_int64(st, 1, m->pid) ||
		    sqlite3_bind_int64(st, 2, (int64_t)e->start) ||
		    sqlite3_bind_int64(st, 3, (int64_t)e->end) || bind_text(st, 4, e->perms) ||
		    sqlite3_bind_int64(st, 5, (int64_t)e->pgoff) || bind_text(st, 6, e->path) ||
		    bind_text(st, 7, e->build_id))
			return stmt_table__err(&w->sts, ST_MAP_INSERT);
		err = stmt_table__step(&w->sts, ST_MAP_INSERT);
		if (err)
			return err;
	}
	return 0;
}
