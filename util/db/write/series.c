/*
 * Compacted checkpoints (util/db/write/series.h): a block's event rows packed
 * into cpu_series/heap_series (the blob: util/db/series.h), its seed-000 rows
 * folded into one per key.
 */
#include "util/db/write/series.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/db/db.h"
#include "util/db/heap-key.h"
#include "util/db/stmt.h"
#include "util/db/rows.h"
#include "util/db/totals.h"
#include "util/error.h"
#include "util/hashmap.h"

/*
 * a part: at most this many keys, or this many bytes of blob; small, so
 * that a reader of a few addresses (timeline's chosen sites, top's chart)
 * fetches the few parts holding them (by the parts' first addresses)
 */
#define PART_KEYS	16
#define PART_BYTES	(1 << 20)

enum sw_stmt {
	SW_STATE,
	SW_FOLDED,
	SW_LAST,
	SW_ADDRS,
	SW_CPU_SPAN,
	SW_HEAP_SPAN,
	SW_CPU_READ,
	SW_HEAP_READ,
	SW_CPU_NEXT,
	SW_HEAP_NEXT,
	SW_CPU_PUT,
	SW_HEAP_PUT,
	SW_CPU_DEL,
	SW_HEAP_DEL,
	SW_CPU_FOLD,
	SW_HEAP_FOLD,
	SW_SAVE,
	SW_ROWIDS,
	SW_CPU_CUT,
	SW_HEAP_CUT,
	SW_MAX,
};

/*
 * The rowids of a block's rows: the first and the last of each checkpoint
 * in the checkpoint index (60 seeks, not a scan of the block's entries).
 * A block's rows are read and deleted one address at a time through the
 * seed's addr indexes, within the rowids of the block's rows (the index
 * holds the rowid: the rows of older blocks at the address are skipped
 * without reading the table); +checkpoint_id keeps SQLite on that index.
 */
static const struct stmt_def sw_sql[SW_MAX] = {
	[SW_STATE] = { "read series state",
		"SELECT through, pack_addr, IFNULL(dropped, through), drop_addr FROM series_state" },
	[SW_FOLDED] = { "read fold state", "SELECT folded0 FROM totals_state" },
	[SW_LAST] = { "read checkpoints to compact",
		"SELECT id, timestamp_ms FROM checkpoints WHERE id BETWEEN ?1 AND ?2"
		" ORDER BY id DESC LIMIT 1" },
	[SW_ADDRS] = { "read the keys to compact",
		"SELECT addr FROM cpu_totals WHERE level = 0 AND block = ?1 UNION"
		" SELECT addr FROM heap_totals WHERE level = 0 AND block = ?1 ORDER BY 1" },
	[SW_CPU_SPAN] = { "read cpu samples to compact",
		"WITH RECURSIVE c(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM c WHERE i < ?2)"
		" SELECT IFNULL(MIN((SELECT rowid FROM cpu_samples WHERE checkpoint_id = i"
		" ORDER BY rowid LIMIT 1)), 0), IFNULL(MAX((SELECT rowid FROM cpu_samples"
		" WHERE checkpoint_id = i ORDER BY rowid DESC LIMIT 1)), -1) FROM c" },
	[SW_HEAP_SPAN] = { "read heap events to compact",
		"WITH RECURSIVE c(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM c WHERE i < ?2)"
		" SELECT IFNULL(MIN((SELECT rowid FROM heap_events WHERE checkpoint_id = i"
		" ORDER BY rowid LIMIT 1)), 0), IFNULL(MAX((SELECT rowid FROM heap_events"
		" WHERE checkpoint_id = i ORDER BY rowid DESC LIMIT 1)), -1) FROM c" },
	[SW_CPU_READ] = { "read cpu samples to compact",
		"SELECT addr, IFNULL(pid, 0), count, checkpoint_id FROM cpu_samples"
		" WHERE addr = ?1 AND rowid BETWEEN ?2 AND ?3 AND +checkpoint_id BETWEEN ?4 AND ?5" },
	[SW_HEAP_READ] = { "read heap events to compact",
		"SELECT addr, IFNULL(stack_id, -1), IFNULL(pid, 0), kind, alloc_bytes, free_bytes,"
		" alloc_count, free_count, temp_count, checkpoint_id FROM heap_events"
		" WHERE addr = ?1 AND rowid BETWEEN ?2 AND ?3 AND +checkpoint_id BETWEEN ?4 AND ?5" },
	[SW_CPU_NEXT] = { "read cpu series",
		"SELECT IFNULL(MAX(id) + 1, ?1) FROM cpu_series WHERE id BETWEEN ?1 AND ?2" },
	[SW_HEAP_NEXT] = { "read heap series",
		"SELECT IFNULL(MAX(id) + 1, ?1) FROM heap_series WHERE id BETWEEN ?1 AND ?2" },
	[SW_CPU_PUT] = { "write cpu series",
		"INSERT INTO cpu_series (id, addr, data) VALUES (?1, ?2, ?3)" },
	[SW_HEAP_PUT] = { "write heap series",
		"INSERT INTO heap_series (id, addr, data) VALUES (?1, ?2, ?3)" },
	[SW_CPU_DEL] = { "compact cpu samples",
		"DELETE FROM cpu_samples"
		" WHERE addr = ?1 AND rowid BETWEEN ?2 AND ?3 AND +checkpoint_id BETWEEN ?4 AND ?5" },
	[SW_HEAP_DEL] = { "compact heap events",
		"DELETE FROM heap_events"
		" WHERE addr = ?1 AND rowid BETWEEN ?2 AND ?3 AND +checkpoint_id BETWEEN ?4 AND ?5" },
	/* OR FAIL: no statement journal of the pages a multi-row insert changes
	 * (the transaction is rolled back whole on an error) */
	[SW_CPU_FOLD] = { "compact cpu samples",
		"INSERT OR FAIL INTO cpu_samples (checkpoint_id, addr, count, pid)"
		" SELECT ?2, addr, count, NULLIF(pid, 0) FROM cpu_totals"
		" WHERE level = 0 AND block = ?1"
		" AND addr BETWEEN ?3 AND ?4" },
	[SW_HEAP_FOLD] = { "compact heap events",
		"INSERT OR FAIL INTO heap_events (checkpoint_id, addr, alloc_bytes, free_bytes,"
		" alloc_count, free_count, stack_id, pid, temp_count, kind)"
		" SELECT ?2, addr, alloc_bytes, free_bytes,"
		" alloc_count, free_count, NULLIF(stack_id, -1), NULLIF(pid, 0), temp_count, kind"
		" FROM heap_totals WHERE level = 0 AND block = ?1 AND addr BETWEEN ?3 AND ?4" },
	[SW_SAVE] = { "write series state",
		"UPDATE series_state SET through = ?1, pack_addr = ?2, dropped = ?3, drop_addr = ?4" },
	/* the folded rows are the writer's own: readers still trust the totals */
	[SW_ROWIDS] = { "write totals state",
		"UPDATE totals_state SET cpu_rowid = (SELECT IFNULL(MAX(rowid), 0) FROM cpu_samples),"
		" heap_rowid = (SELECT IFNULL(MAX(rowid), 0) FROM heap_events)" },
	/* parts of blocks that are not compacted: packed ahead (see struct stage) */
	[SW_CPU_CUT] = { "drop cpu series packed ahead",
		"DELETE FROM cpu_series WHERE id BETWEEN ?1 AND ?2" },
	[SW_HEAP_CUT] = { "drop heap series packed ahead",
		"DELETE FROM heap_series WHERE id BETWEEN ?1 AND ?2" },
};

/* One event row of a block being compacted (cpu: count in a[0]). */
struct ev {
	int64_t addr, stack_id, pid, kind;
	int64_t off;		/* checkpoint - the block's first + 1 (1..60) */
	int64_t a[5];		/* alloc_bytes, free_bytes, alloc_count, free_count, temp_count */
	bool temp_null;
	size_t seq;		/* order read (equal keys and checkpoints keep it) */
};

struct buf {
	unsigned char *p;
	size_t n, cap;
};

/*
 * A block being packed (SW_PACK) or having its event rows folded (SW_DROP),
 * a slice of its addresses per checkpoint written: what the file says of
 * it, read once.
 */
enum { SW_PACK, SW_DROP };

struct sw_job {
	int64_t block;		/* -1: nothing read */
	int64_t last;		/* its last checkpoint (0: it has none) */
	int64_t *addrs;		/* the addresses of its totals, cpu and heap, sorted */
	size_t n, cap;
	int64_t rows[2][2];	/* cpu, heap: the lowest and highest rowid of its rows */
};

/* a block's addresses in at least this many slices: each write pays a 50th of a block */
#define SLICES	50

/*
 * Packing ahead: the rows of the block being written, packed by key as the
 * writer hands them over (series_writer__stage()), and written into the
 * block's parts in the transaction of its last checkpoint, long before the
 * block has aged; readers do not read them until series_state.through
 * covers the block. When it has aged, the block is compacted in one write
 * without reading its rows back (reading them through the addr indexes
 * and the table was nearly all of the packing's cost, 1.5-2.8 ms a write
 * at 2,000 keys; packing them as they come costs 0.2-1 ms, measured side
 * by side: 0.3-0.7 ms a write less in all). Only the blocks this
 * writer packed ahead, from their first checkpoint on, are trusted: any
 * other block (a file appended to, a failed transaction) is packed from
 * its rows as before, after its parts from elsewhere are dropped.
 */
struct stage_key {
	int64_t addr, stack_id, pid, kind;
	int64_t prev;		/* the place in the block of the key's last row */
	size_t nrows;
	struct buf rows;
};

struct stage {
	struct hashmap index;	/* key -> index in keys */
	struct stage_key *keys;
	size_t n, cap;
	size_t *order;		/* keys in key order, to pack */
	size_t cap_order;
};

struct series_writer {
	struct db *db;
	sqlite3 *sq;
	struct stmt_table sts;
	uint64_t age_ms;
	/* series_state */
	int64_t through;	/* the blocks up to it are compacted (readers read the series) */
	bool pack_set;		/* block through / 60 is packed up to pack_addr (its parts written) */
	int64_t pack_addr;
	int64_t dropped;	/* the compacted blocks up to it have their event rows folded */
	bool drop_set;		/* block dropped / 60 is folded up to drop_addr */
	int64_t drop_addr;
	/* the last checkpoint written: what finish() compacts by */
	int64_t totals_through;
	uint64_t now_ms;
	struct sw_job job[2];
	struct ev *ev;
	size_t n_ev, cap_ev;
	struct buf out;
	/* packing ahead: cpu, heap */
	struct stage stage[2];
	int64_t stage_block;	/* the block staged; -1: none */
	bool stage_ok;		/* staged from its first checkpoint on */
	int64_t ahead_lo, ahead_hi;	/* blocks [lo, hi) packed ahead by this writer */
};

static void stage_clear(struct stage *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->keys[i].rows.p);
	g->n = 0;
	hashmap__clear(&g->index);
}

void series_writer__delete(struct series_writer *sw)
{
	if (!sw)
		return;
	for (int j = 0; j < 2; j++) {
		stage_clear(&sw->stage[j]);
		hashmap__free(&sw->stage[j].index);
		free(sw->stage[j].keys);
		free(sw->stage[j].order);
	}
	stmt_table__fini(&sw->sts);
	for (int j = 0; j < 2; j++)
		free(sw->job[j].addrs);
	free(sw->ev);
	free(sw->out.p);
	free(sw);
}

/* series_state as the file has it. */
static int sw_load(struct series_writer *sw)
{
	sqlite3_stmt *st = stmt_table__get(&sw->sts, SW_STATE);
	int rc;

	for (int j = 0; j < 2; j++)
		sw->job[j].block = -1;
	sqlite3_reset(st);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		sw->through = sqlite3_column_int64(st, 0);
		sw->pack_set = sqlite3_column_type(st, 1) != SQLITE_NULL;
		sw->pack_addr = sqlite3_column_int64(st, 1);
		sw->dropped = sqlite3_column_int64(st, 2);
		sw->drop_set = sqlite3_column_type(st, 3) != SQLITE_NULL;
		sw->drop_addr = sqlite3_column_int64(st, 3);
	}
	sqlite3_reset(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return stmt_table__err(&sw->sts, SW_STATE);
	if (rc != SQLITE_ROW || sw->through < 0 || sw->through % TOTALS_SPAN ||
	    sw->dropped < 0 || sw->dropped % TOTALS_SPAN || sw->dropped > sw->through ||
	    (sw->drop_set && sw->dropped == sw->through)) {
		pr_err("%s: series_state is damaged", db__path(sw->db));
		return -RSPROF_EDB;
	}
	return 0;
}

int series_writer__new(struct db *db, uint64_t age_ms, struct series_writer **out)
{
	struct series_writer *sw = calloc(1, sizeof(*sw));
	int err = 0;

	*out = NULL;
	if (!sw)
		return -ENOMEM;
	sw->db = db;
	sw->sq = db__sqlite(db);
	sw->age_ms = age_ms;
	sw->stage_block = -1;
	err = stmt_table__init(&sw->sts, db, sw_sql, SW_MAX);
	if (!err)
		err = sw_load(sw);
	if (err) {
		series_writer__delete(sw);
		return err;
	}
	*out = sw;
	return 0;
}

/* ---- packing ------------------------------------------------------------ */

/* Room for n more bytes in b. */
static int reserve(struct buf *b, size_t n)
{
	return ALLOC_GROW(b->p, b->n + n, b->cap, 65536);
}

static int put_bytes(struct buf *b, const struct buf *from)
{
	int err = reserve(b, from->n);

	if (!err) {
		memcpy(b->p + b->n, from->p, from->n);
		b->n += from->n;
	}
	return err;
}

static int put_u(struct buf *b, uint64_t v)
{
	if (reserve(b, 10))
		return -ENOMEM;
	while (v >= 0x80) {
		b->p[b->n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	b->p[b->n++] = (unsigned char)v;
	return 0;
}

static int put_z(struct buf *b, int64_t v)
{
	return put_u(b, series__zz(v));
}

static int cmp_ev(const void *pa, const void *pb)
{
	const struct ev *a = pa, *b = pb;
	int c = HEAP_KEY_CMP(a, b);

	if (c)
		return c;
	if (a->off != b->off)
		return a->off < b->off ? -1 : 1;
	return (a->seq > b->seq) - (a->seq < b->seq);
}

static bool same_key(const struct ev *a, const struct ev *b)
{
	return !HEAP_KEY_CMP(a, b);
}

/* The rows of one key (ev[i..j)) into b. */
static int pack_rows(struct buf *b, const struct ev *ev, size_t i, size_t j, bool heap)
{
	int64_t prev = 0;
	int err = 0;

	for (size_t r = i; r < j && !err; r++) {
		const struct ev *e = &ev[r];

		err = put_u(b, (uint64_t)(e->off - prev));
		prev = e->off;
		if (!err && !heap) {
			err = put_z(b, e->a[0]);
			continue;
		}
		if (!err)
			err = put_z(b, e->a[0]);
		if (!err)
			err = put_z(b, series__wrap_sub(e->a[0], e->a[1]));
		if (!err)
			err = put_z(b, e->a[2]);
		if (!err)
			err = put_z(b, series__wrap_sub(e->a[2], e->a[3]));
		if (!err)
			err = put_u(b, e->temp_null ? 0 : series__zz(e->a[4]) + 1);
	}
	return err;
}

static int sw_put(struct series_writer *sw, bool heap, int64_t id, int64_t addr,
		  const struct buf *b)
{
	sqlite3_stmt *st = stmt_table__get(&sw->sts, heap ? SW_HEAP_PUT : SW_CPU_PUT);

	sqlite3_reset(st);
	if (sqlite3_bind_int64(st, 1, id) || sqlite3_bind_int64(st, 2, addr) ||
	    sqlite3_bind_blob(st, 3, b->p, (int)b->n, SQLITE_STATIC) ||
	    sqlite3_step(st) != SQLITE_DONE)
		return stmt_table__err(&sw->sts, heap ? SW_HEAP_PUT : SW_CPU_PUT);
	sqlite3_reset(st);
	return 0;
}

/*
 * The parts of block b being written, key by key in address order, after
 * those written before: PART_KEYS keys, or PART_BYTES of them, a part.
 */
struct parts_out {
	struct buf keys;
	int64_t b, part, addr;	/* addr: the part's first key's */
	size_t nkeys;
	int64_t prev_addr;
	bool heap;
};

static int parts_begin(struct series_writer *sw, bool heap, int64_t b, struct parts_out *po)
{
	*po = (struct parts_out){ .b = b, .heap = heap };
	return stmt_table__run(&sw->sts, heap ? SW_HEAP_NEXT : SW_CPU_NEXT, 2,
			       (int64_t[]){ b * BLOCK_PARTS, b * BLOCK_PARTS + BLOCK_PARTS - 1 },
			       &po->part, 1, NULL);
}

/* The keys gathered into a part of their own, the key count first. */
static int parts_flush(struct series_writer *sw, struct parts_out *po)
{
	int64_t part = po->part - po->b * BLOCK_PARTS;
	int err;

	if (!po->nkeys)
		return 0;
	if (part < 0 || part >= BLOCK_PARTS) {
		pr_err("%s: block %lld has too many keys to compact", db__path(sw->db),
		       (long long)po->b);
		return -RSPROF_EDB;
	}
	sw->out.n = 0;
	err = put_u(&sw->out, po->nkeys);
	if (!err)
		err = put_bytes(&sw->out, &po->keys);
	if (!err)
		err = sw_put(sw, po->heap, po->part++, po->addr, &sw->out);
	po->keys.n = 0;
	po->nkeys = 0;
	po->prev_addr = 0;
	return err;
}

/* One key and its nrows packed rows, into the part under way or a new one. */
static int parts_key(struct series_writer *sw, struct parts_out *po, int64_t addr,
		     int64_t stack_id, int64_t pid, int64_t kind, size_t nrows,
		     const struct buf *rows)
{
	int err = 0;

	if (po->nkeys >= PART_KEYS || po->keys.n >= PART_BYTES)
		err = parts_flush(sw, po);
	if (err)
		return err;
	if (!po->nkeys)
		po->addr = addr;
	err = put_z(&po->keys, series__wrap_sub(addr, po->prev_addr));
	if (!err && po->heap)
		err = put_z(&po->keys, stack_id);
	if (!err)
		err = put_z(&po->keys, pid);
	if (!err && po->heap)
		err = put_z(&po->keys, kind);
	if (!err)
		err = put_u(&po->keys, nrows);
	if (!err)
		err = put_u(&po->keys, rows->n);
	if (!err)
		err = put_bytes(&po->keys, rows);
	po->prev_addr = addr;
	po->nkeys++;
	return err;
}

/* The last part written; what was gathered freed (also after an error). */
static int parts_end(struct series_writer *sw, struct parts_out *po, int err)
{
	if (!err)
		err = parts_flush(sw, po);
	free(po->keys.p);
	return err;
}

/* Pack sw->ev (sorted) into parts of block b, after those written before, and write them. */
static int sw_pack(struct series_writer *sw, bool heap, int64_t b)
{
	struct parts_out po;
	struct buf rows = { 0 };
	size_t i = 0;
	int err = 0;

	if (!sw->n_ev)
		return 0;
	err = parts_begin(sw, heap, b, &po);
	while (i < sw->n_ev && !err) {
		size_t j = i + 1;

		while (j < sw->n_ev && same_key(&sw->ev[i], &sw->ev[j]))
			j++;
		rows.n = 0;
		err = pack_rows(&rows, sw->ev, i, j, heap);
		if (!err)
			err = parts_key(sw, &po, sw->ev[i].addr, sw->ev[i].stack_id, sw->ev[i].pid,
					sw->ev[i].kind, j - i, &rows);
		i = j;
	}
	free(rows.p);
	return parts_end(sw, &po, err);
}

static int sw_push(struct series_writer *sw, struct ev **e)
{
	if (ALLOC_GROW(sw->ev, sw->n_ev + 1, sw->cap_ev, 4096))
		return -ENOMEM;
	*e = &sw->ev[sw->n_ev];
	memset(*e, 0, sizeof(**e));
	(*e)->seq = sw->n_ev++;
	return 0;
}

/* The block's rows at address addr of one table, added to sw->ev. */
static int sw_read(struct series_writer *sw, bool heap, const struct sw_job *j, int64_t addr)
{
	enum sw_stmt i = heap ? SW_HEAP_READ : SW_CPU_READ;
	sqlite3_stmt *st = stmt_table__get(&sw->sts, i);
	int64_t first = j->block * TOTALS_SPAN + 1;
	int rc, err = 0;

	sqlite3_reset(st);
	if (sqlite3_bind_int64(st, 1, addr) || sqlite3_bind_int64(st, 2, j->rows[heap][0]) ||
	    sqlite3_bind_int64(st, 3, j->rows[heap][1]) || sqlite3_bind_int64(st, 4, first) ||
	    sqlite3_bind_int64(st, 5, first + TOTALS_SPAN - 1))
		return stmt_table__err(&sw->sts, i);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct ev *e;

		err = sw_push(sw, &e);
		if (err)
			break;
		e->addr = sqlite3_column_int64(st, 0);
		if (!heap) {
			e->stack_id = -1;
			e->pid = sqlite3_column_int64(st, 1);
			e->a[0] = sqlite3_column_int64(st, 2);
			e->off = sqlite3_column_int64(st, 3) - (first - 1);
			continue;
		}
		e->stack_id = sqlite3_column_int64(st, 1);
		e->pid = sqlite3_column_int64(st, 2);
		e->kind = sqlite3_column_int64(st, 3);
		for (int c = 0; c < 5; c++)
			e->a[c] = sqlite3_column_int64(st, 4 + c);
		e->temp_null = sqlite3_column_type(st, 8) == SQLITE_NULL;
		e->off = sqlite3_column_int64(st, 9) - (first - 1);
	}
	sqlite3_reset(st);
	if (err)
		return err;
	return rc == SQLITE_DONE ? 0 : stmt_table__err(&sw->sts, i);
}

/* What the file says of block b (once for each block a job takes). */
static int sw_job_load(struct series_writer *sw, struct sw_job *j, int64_t b)
{
	sqlite3_stmt *st = stmt_table__get(&sw->sts, SW_ADDRS);
	int64_t first = b * TOTALS_SPAN + 1, last = first + TOTALS_SPAN - 1, v[2] = { 0 };
	bool row;
	int rc, err;

	if (j->block == b)
		return 0;
	j->block = -1;
	j->n = 0;
	j->last = 0;
	err = stmt_table__run(&sw->sts, SW_LAST, 2, (int64_t[]){ first, last }, v, 2, &row);
	if (err || !row)
		goto out;	/* no checkpoint in it */
	j->last = v[0];
	for (int heap = 0; heap < 2 && !err; heap++)
		err = stmt_table__run(&sw->sts, heap ? SW_HEAP_SPAN : SW_CPU_SPAN, 2,
				      (int64_t[]){ first, last }, j->rows[heap], 2, NULL);
	if (err)
		return err;
	sqlite3_reset(st);
	if (sqlite3_bind_int64(st, 1, b))
		return stmt_table__err(&sw->sts, SW_ADDRS);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (ALLOC_GROW(j->addrs, j->n + 1, j->cap, 1024)) {
			sqlite3_reset(st);
			return -ENOMEM;
		}
		j->addrs[j->n++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return stmt_table__err(&sw->sts, SW_ADDRS);
out:
	if (!err)
		j->block = b;
	return err;
}

/* The addresses of job j's next slice: [*i0, *i1), after `after` when set. */
static void sw_slice(const struct sw_job *j, bool set, int64_t after, bool all, size_t *i0,
		     size_t *i1)
{
	size_t a = 0, b = j->n, k;

	while (set && a < b) {		/* the first address past `after` */
		size_t m = a + (b - a) / 2;

		if (j->addrs[m] <= after)
			a = m + 1;
		else
			b = m;
	}
	k = (j->n + SLICES - 1) / SLICES;
	/* whole parts: a slice's last part is as full as the others */
	if (k > PART_KEYS)
		k = (k + PART_KEYS - 1) / PART_KEYS * PART_KEYS;
	*i0 = a;
	*i1 = all || j->n - a <= k ? j->n : a + k;
}

/*
 * Job j's slice up to i1 done: the next starts past its last address (*set,
 * *after), or the block is (*blocks, the blocks done, one further).
 */
static void sw_slice_done(const struct sw_job *j, size_t i1, bool *set, int64_t *after,
			  int64_t *blocks)
{
	if (i1 < j->n) {
		*set = true;
		*after = j->addrs[i1 - 1];
	} else {
		*blocks += TOTALS_SPAN;
		*set = false;
	}
}

/*
 * Pack the next slice of block through / 60 into its series; the block is
 * compacted (readers read its series) once every slice is.
 */
static int sw_pack_slice(struct series_writer *sw, bool all)
{
	struct sw_job *j = &sw->job[SW_PACK];
	int64_t b = sw->through / TOTALS_SPAN;
	size_t i0, i1;
	int err = 0;

	sw_slice(j, sw->pack_set, sw->pack_addr, all, &i0, &i1);
	for (int heap = 0; heap < 2 && !err; heap++) {
		sw->n_ev = 0;
		for (size_t i = i0; i < i1 && !err; i++)
			err = sw_read(sw, heap, j, j->addrs[i]);
		if (!err && sw->n_ev)	/* qsort(NULL, 0, ...) is undefined */
			qsort(sw->ev, sw->n_ev, sizeof(*sw->ev), cmp_ev);
		if (!err)
			err = sw_pack(sw, heap, b);
	}
	if (!err)
		sw_slice_done(j, i1, &sw->pack_set, &sw->pack_addr, &sw->through);
	return err;
}

/*
 * Fold the next slice of block dropped / 60 (compacted) in the event
 * tables: its rows at those addresses replaced by one per key at its last
 * checkpoint, so that every address adds up as before at every commit.
 */
static int sw_drop_slice(struct series_writer *sw, bool all)
{
	struct sw_job *j = &sw->job[SW_DROP];
	int64_t b = sw->dropped / TOTALS_SPAN, first = b * TOTALS_SPAN + 1;
	size_t i0, i1;
	int err = 0;

	sw_slice(j, sw->drop_set, sw->drop_addr, all, &i0, &i1);
	for (size_t i = i0; i < i1 && !err; i++)
		for (int heap = 0; heap < 2 && !err; heap++)
			err = stmt_table__run(&sw->sts, heap ? SW_HEAP_DEL : SW_CPU_DEL, 5,
					      (int64_t[]){ j->addrs[i], j->rows[heap][0],
							   j->rows[heap][1], first,
							   first + TOTALS_SPAN - 1 }, NULL, 0, NULL);
	for (int heap = 0; heap < 2 && !err && i1 > i0; heap++)
		err = stmt_table__run(&sw->sts, heap ? SW_HEAP_FOLD : SW_CPU_FOLD, 4,
				      (int64_t[]){ b, j->last, j->addrs[i0], j->addrs[i1 - 1] },
				      NULL, 0, NULL);
	if (!err && i1 > i0)
		err = stmt_table__run(&sw->sts, SW_ROWIDS, 0, NULL, NULL, 0, NULL);
	if (!err)
		sw_slice_done(j, i1, &sw->drop_set, &sw->drop_addr, &sw->dropped);
	return err;
}

static int sw_save(struct series_writer *sw)
{
	sqlite3_stmt *st = stmt_table__get(&sw->sts, SW_SAVE);

	sqlite3_reset(st);
	if (sqlite3_bind_int64(st, 1, sw->through) ||
	    (sw->pack_set ? sqlite3_bind_int64(st, 2, sw->pack_addr) : sqlite3_bind_null(st, 2)) ||
	    sqlite3_bind_int64(st, 3, sw->dropped) ||
	    (sw->drop_set ? sqlite3_bind_int64(st, 4, sw->drop_addr) : sqlite3_bind_null(st, 4)) ||
	    sqlite3_step(st) != SQLITE_DONE)
		return stmt_table__err(&sw->sts, SW_SAVE);
	sqlite3_reset(st);
	return 0;
}

/* ---- packing ahead ----------------------------------------------------- */

static bool stage_key_eq(uint64_t val, const void *key, const void *ctx)
{
	const struct stage *g = ctx;
	const int64_t *k = key;
	const struct stage_key *e = &g->keys[val];

	return e->addr == k[0] && e->stack_id == k[1] && e->pid == k[2] && e->kind == k[3];
}

/* The key's entry in g (made when new), or NULL (-ENOMEM). */
static struct stage_key *stage_key(struct stage *g, int64_t addr, int64_t stack_id, int64_t pid,
				   int64_t kind)
{
	int64_t k[4] = { addr, stack_id, pid, kind };
	uint64_t h = heap_key__hash(addr, stack_id, pid, kind);
	uint64_t idx = g->n;
	bool fresh;

	if (ALLOC_GROW(g->keys, g->n + 1, g->cap, 1024))
		return NULL;
	if (hashmap__intern(&g->index, h, stage_key_eq, k, g, &idx, &fresh))
		return NULL;
	if (fresh)
		g->keys[g->n++] = (struct stage_key){ .addr = addr, .stack_id = stack_id,
						      .pid = pid, .kind = kind };
	return &g->keys[idx];
}

/* A row at place e->off (1..60) of the block, packed as pack_rows() packs it. */
static int stage_row(struct stage *g, const struct ev *e, bool heap)
{
	struct stage_key *k = stage_key(g, e->addr, e->stack_id, e->pid, e->kind);
	struct ev d = *e;
	int err;

	if (!k)
		return -ENOMEM;
	/* a key's rows are a few hundred bytes: not reserve()'s first 64 KiB */
	if (!k->rows.cap) {
		k->rows.p = malloc(256);
		if (!k->rows.p)
			return -ENOMEM;
		k->rows.cap = 256;
	}
	d.off = e->off - k->prev;	/* pack_rows() writes the first place less 0 */
	err = pack_rows(&k->rows, &d, 0, 1, heap);
	if (err)
		return err;
	k->prev = e->off;
	k->nrows++;
	return 0;
}

static int cmp_stage_key(const struct stage_key *a, const struct stage_key *b)
{
#define CMP(f) if (a->f != b->f) return a->f < b->f ? -1 : 1
	CMP(addr);
	CMP(stack_id);
	CMP(pid);
	CMP(kind);
#undef CMP
	return 0;
}

/* qsort() has no context: the stage being sorted (the writer's thread only) */
static const struct stage *sort_stage;

static int cmp_order(const void *pa, const void *pb)
{
	return cmp_stage_key(&sort_stage->keys[*(const size_t *)pa],
			     &sort_stage->keys[*(const size_t *)pb]);
}

/* The staged keys of block b into its parts, as sw_pack() writes them. */
static int stage_write(struct series_writer *sw, bool heap, int64_t b)
{
	struct stage *g = &sw->stage[heap];
	struct parts_out po;
	int err;

	if (!g->n)
		return 0;
	if (g->n > g->cap_order) {
		size_t *o = realloc(g->order, g->n * sizeof(*o));

		if (!o)
			return -ENOMEM;
		g->order = o;
		g->cap_order = g->n;
	}
	for (size_t k = 0; k < g->n; k++)
		g->order[k] = k;
	sort_stage = g;
	qsort(g->order, g->n, sizeof(*g->order), cmp_order);
	err = parts_begin(sw, heap, b, &po);
	for (size_t i = 0; i < g->n && !err; i++) {
		const struct stage_key *k = &g->keys[g->order[i]];

		err = parts_key(sw, &po, k->addr, k->stack_id, k->pid, k->kind, k->nrows, &k->rows);
	}
	return parts_end(sw, &po, err);
}

int series_writer__stage(struct series_writer *sw, int64_t id, const struct checkpoint *cp)
{
	int64_t b = (id - 1) / TOTALS_SPAN, off = id - b * TOTALS_SPAN;
	int err = 0;

	if (b != sw->stage_block) {
		for (int j = 0; j < 2; j++)
			stage_clear(&sw->stage[j]);
		sw->stage_block = b;
		sw->stage_ok = off == 1;
	}
	if (!sw->stage_ok)
		return 0;
	for (size_t i = 0; i < cp->n_cpu && !err; i++) {
		const struct cpu_count *c = &cp->cpu[i];
		struct ev e = { .addr = (int64_t)c->addr, .stack_id = -1,
				.pid = c->pid > 0 ? c->pid : 0, .off = off,
				.a = { (int64_t)c->count } };

		err = stage_row(&sw->stage[0], &e, false);
	}
	for (size_t i = 0; i < cp->n_heap && !err; i++) {
		const struct heap_count *h = &cp->heap[i];
		struct ev e = { .addr = (int64_t)h->addr,
				.stack_id = h->stack_id >= 0 ? h->stack_id : -1,
				.pid = h->pid > 0 ? h->pid : 0, .kind = h->kind, .off = off,
				.a = { h->alloc_bytes, h->free_bytes, h->alloc_count, h->free_count,
				       h->temp_count },
				.temp_null = h->temp_count < 0 };

		err = stage_row(&sw->stage[1], &e, true);
	}
	/* the block's last checkpoint: its parts, ahead of its compaction */
	if (!err && off == TOTALS_SPAN) {
		for (int heap = 0; heap < 2 && !err; heap++)
			err = stage_write(sw, heap, b);
		if (!err) {
			if (sw->ahead_hi != b)
				sw->ahead_lo = b;
			sw->ahead_hi = b + 1;
		}
		for (int j = 0; j < 2; j++)
			stage_clear(&sw->stage[j]);
		sw->stage_block = -1;
	}
	if (err)
		sw->stage_ok = false;
	return err;
}

/* Drop the parts of blocks b..last (packed ahead, or by another writer). */
static int sw_cut(struct series_writer *sw, int64_t b, int64_t last)
{
	int err = 0;

	for (int heap = 0; heap < 2 && !err; heap++)
		err = stmt_table__run(&sw->sts, heap ? SW_HEAP_CUT : SW_CPU_CUT, 2,
				      (int64_t[]){ b * BLOCK_PARTS,
						   last * BLOCK_PARTS + BLOCK_PARTS - 1 }, NULL, 0, NULL);
	return err;
}

/*
 * One slice of each job (all: every block that has aged, whole). The fold
 * of the block compacted last first, then the packing of the next block
 * that has aged.
 */
static int sw_step(struct series_writer *sw, bool all)
{
	int64_t folded0 = 0;
	bool row, changed = false;
	int err;

	/* nothing compacted to fold, no block past the compacted ones in the totals */
	if (sw->dropped >= sw->through && sw->through + TOTALS_SPAN > sw->totals_through)
		return 0;
	err = stmt_table__run(&sw->sts, SW_FOLDED, 0, NULL, &folded0, 1, &row);
	if (err)
		return err;
	/* record --retain folded them first (and dropped their series) */
	if (sw->through < folded0) {
		sw->through = folded0;
		sw->pack_set = false;
		changed = true;
	}
	if (sw->dropped < folded0) {
		sw->dropped = folded0;
		sw->drop_set = false;
		changed = true;
	}
	for (bool more = true; more && !err;) {
		more = false;
		if (sw->dropped < sw->through) {
			err = sw_job_load(sw, &sw->job[SW_DROP], sw->dropped / TOTALS_SPAN);
			if (!err)
				err = sw_drop_slice(sw, all);
			changed = more = true;
		}
		if (!err && sw->through + TOTALS_SPAN <= sw->totals_through) {
			int64_t v[2] = { 0 };

			/* older than the age: not at the checkpoint that makes it so,
			 * which (at an age of whole minutes) also writes a block of
			 * the totals */
			err = stmt_table__run(&sw->sts, SW_LAST, 2,
					      (int64_t[]){ sw->through + 1,
							   sw->through + TOTALS_SPAN }, v, 2, &row);
			if (!err && (!row || ((uint64_t)v[1] <= sw->now_ms &&
					       sw->now_ms - (uint64_t)v[1] > sw->age_ms))) {
				int64_t b = sw->through / TOTALS_SPAN;

				if (!sw->pack_set && b >= sw->ahead_lo && b < sw->ahead_hi) {
					/* packed when it ended: compacted at once */
					sw->through += TOTALS_SPAN;
				} else {
					/* parts not packed by this writer, from the start */
					if (!sw->pack_set)
						err = sw_cut(sw, b, b);
					if (!err)
						err = sw_job_load(sw, &sw->job[SW_PACK], b);
					if (!err)
						err = sw_pack_slice(sw, all);
				}
				changed = more = true;
			}
		}
		more = more && all;
	}
	if (!err && changed)
		err = sw_save(sw);
	return err;
}

int series_writer__compact(struct series_writer *sw, int64_t through, uint64_t now_ms)
{
	sw->totals_through = through;
	sw->now_ms = now_ms;
	return sw_step(sw, false);
}

int series_writer__finish(struct series_writer *sw)
{
	int err = sw_step(sw, true);

	/* what was packed ahead of blocks that did not age goes (readers never see it) */
	if (!err)
		err = sw_cut(sw, sw->through / TOTALS_SPAN, INT64_MAX / BLOCK_PARTS - 1);
	return err;
}

void series_writer__reset(struct series_writer *sw)
{
	if (!sw)
		return;
	/* the transaction failed: what the file says again, and nothing packed ahead trusted */
	sw->stage_ok = false;
	sw->ahead_lo = sw->ahead_hi = 0;
	if (sw_load(sw))
		pr_debug(1, "%s: series state unreadable", db__path(sw->db));
}

int series__drop_block(struct db *db, int64_t block)
{
	sqlite3 *sq = db__sqlite(db);
	sqlite3_stmt *st;
	int err = 0;

	/* a file of before the series (appended to) has none */
	if (!db__has(db, DB_SERIES))
		return 0;
	for (int heap = 0; heap < 2 && !err; heap++) {
		if (sqlite3_prepare_v2(sq, heap ? "DELETE FROM heap_series WHERE id BETWEEN ?1 AND ?2" :
				       "DELETE FROM cpu_series WHERE id BETWEEN ?1 AND ?2", -1, &st,
				       NULL) != SQLITE_OK)
			return db__err(db, "fold series");
		if (sqlite3_bind_int64(st, 1, block * BLOCK_PARTS) ||
		    sqlite3_bind_int64(st, 2, block * BLOCK_PARTS + BLOCK_PARTS - 1) ||
		    sqlite3_step(st) != SQLITE_DONE)
			err = db__err(db, "fold series");
		sqlite3_finalize(st);
	}
	return err;
}
