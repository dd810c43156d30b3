/*
 * Compacted checkpoints as readers read them (util/db/read/series.h): the
 * series_state range, a block's rows decoded from its parts (the blob:
 * util/db/series.h), and info --check's comparison with the totals.
 */
#include "util/db/read/series.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/db/db.h"
#include "util/db/heap-key.h"
#include "util/db/read/totals.h"
#include "util/error.h"
#include "util/hashmap.h"

int series__range(struct db *db, int64_t *lo, int64_t *hi)
{
	sqlite3_stmt *st;
	int rc;

	*lo = *hi = 0;
	if (!db__has(db, DB_SERIES))
		return 0;	/* no series */
	if (sqlite3_prepare_v2(db__sqlite(db), "SELECT max((SELECT folded0 FROM totals_state), since),"
			       " through FROM series_state", -1, &st, NULL) != SQLITE_OK)
		return db__err(db, "read series state");
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*lo = sqlite3_column_int64(st, 0);
		*hi = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db__err(db, "read series state");
	/* nothing past the folded blocks, or a state rsprof cannot have written */
	if (*hi <= *lo || *lo < 0 || *hi > TOTALS_MAX_ID || *hi % TOTALS_SPAN || *lo % TOTALS_SPAN)
		*lo = *hi = 0;
	return 0;
}

struct rd {
	const unsigned char *p, *end;
	bool bad;
};

static uint64_t get_u(struct rd *r)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		unsigned char c;

		if (r->p >= r->end)
			break;
		c = *r->p++;
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
	}
	r->bad = true;
	return 0;
}

static int64_t get_z(struct rd *r)
{
	return series__unzz(get_u(r));
}

/* the decoded rows of a block, bucketed by checkpoint */
struct rows {
	struct totals_row *v;
	size_t *order;		/* indexes of v in checkpoint order */
	size_t n, cap;
};

static int rows_push(struct rows *rs, const struct totals_row *r)
{
	if (rs->n >= DB_MAX_ROWS)
		return -E2BIG;
	if (ALLOC_GROW2(rs->v, rs->order, rs->n + 1, rs->cap, 4096))
		return -ENOMEM;
	rs->v[rs->n++] = *r;
	return 0;
}

/* Is one of the n sorted addresses in [lo, hi]? */
static bool wanted(const int64_t *want, size_t n, int64_t lo, int64_t hi)
{
	size_t a = 0, b = n;

	while (a < b) {		/* the first >= lo */
		size_t m = a + (b - a) / 2;

		if (want[m] < lo)
			a = m + 1;
		else
			b = m;
	}
	return a < n && want[a] <= hi;
}

/* One part's rows of checkpoints first..last into rs; false: the blob is damaged. */
static int decode(struct rd *r, bool heap, int64_t base, int64_t first, int64_t last,
		  const int64_t *want, size_t n_want, struct rows *rs)
{
	uint64_t nkeys = get_u(r);
	int64_t addr = 0;
	int err = 0;

	for (uint64_t k = 0; k < nkeys && !r->bad && !err; k++) {
		struct totals_row t = { .stack_id = -1, .temp_count = -1 };
		uint64_t nrows, nbytes;
		int64_t cp = base;
		struct rd rows;

		addr = (int64_t)((uint64_t)addr + (uint64_t)get_z(r));
		t.addr = addr;
		if (heap)
			t.stack_id = get_z(r);
		t.pid = get_z(r);
		if (heap)
			t.kind = get_z(r);
		nrows = get_u(r);
		nbytes = get_u(r);
		if (r->bad || nbytes > (uint64_t)(r->end - r->p) || nrows > nbytes) {
			r->bad = true;
			break;
		}
		rows = (struct rd){ r->p, r->p + nbytes, false };
		r->p += nbytes;
		if (want && !wanted(want, n_want, addr, addr))
			continue;
		for (uint64_t i = 0; i < nrows && !rows.bad && !err; i++) {
			uint64_t d = get_u(&rows);

			if (d > TOTALS_SPAN) {
				rows.bad = true;
				break;
			}
			cp += (int64_t)d;
			if (cp > base + TOTALS_SPAN) {
				rows.bad = true;
				break;
			}
			/*
			 * The key's rows go on in checkpoint order: past last,
			 * none is wanted (its size skipped them; what they hold
			 * is not read, nor checked).
			 */
			if (cp > last) {
				rows.p = rows.end;
				break;
			}
			if (!heap) {
				t.count = get_z(&rows);
			} else {
				uint64_t tc;

				t.alloc_bytes = get_z(&rows);
				t.free_bytes = series__wrap_sub(t.alloc_bytes, get_z(&rows));
				t.alloc_count = get_z(&rows);
				t.free_count = series__wrap_sub(t.alloc_count, get_z(&rows));
				tc = get_u(&rows);
				t.temp_count = tc ? series__unzz(tc - 1) : -1;
				t.peak = series__wrap_sub(t.alloc_bytes, t.free_bytes);
			}
			t.checkpoint = cp;
			if (cp >= first && cp <= last)
				err = rows_push(rs, &t);
		}
		if (rows.bad || rows.p != rows.end)
			r->bad = true;
	}
	return err;
}

/*
 * The parts of a block to read: all, or (want) those whose addresses, from
 * their first to the next part's first, hold a wanted one. 0 or -ENOMEM.
 */
struct part {
	int64_t id, addr;
};

static int parts_of(sqlite3_stmt *ids, const int64_t *want, size_t n_want, struct part **v,
		    size_t *n, size_t *cap, int *rc)
{
	*n = 0;
	while ((*rc = sqlite3_step(ids)) == SQLITE_ROW) {
		if (ALLOC_GROW(*v, *n + 1, *cap, 256))
			return -ENOMEM;
		(*v)[(*n)++] = (struct part){ sqlite3_column_int64(ids, 0),
					      sqlite3_column_int64(ids, 1) };
	}
	if (*rc != SQLITE_DONE || !want)
		return 0;
	{
		size_t o = 0;

		for (size_t i = 0; i < *n; i++)
			if (wanted(want, n_want, (*v)[i].addr,
				   i + 1 < *n ? (*v)[i + 1].addr : INT64_MAX))
				(*v)[o++] = (*v)[i];
		*n = o;
	}
	return 0;
}

int series__rows(struct db *db, bool heap, int64_t first, int64_t last, const int64_t *want,
		 size_t n_want, series_row_fn fn, void *ctx)
{
	sqlite3 *sq = db__sqlite(db);
	sqlite3_stmt *st = NULL, *ids = NULL;
	struct rows rs = { 0 };
	struct part *parts = NULL;
	size_t n_parts = 0, cap_parts = 0;
	int rc = SQLITE_DONE, err = 0;

	if (first < 1)
		first = 1;
	if (last < first)
		return 0;
	if (sqlite3_prepare_v2(sq, heap ? "SELECT id, addr FROM heap_series WHERE id BETWEEN ?1"
			       " AND ?2 ORDER BY id" : "SELECT id, addr FROM cpu_series WHERE id"
			       " BETWEEN ?1 AND ?2 ORDER BY id", -1, &ids, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(sq, heap ? "SELECT data FROM heap_series WHERE id = ?1" :
			       "SELECT data FROM cpu_series WHERE id = ?1", -1, &st, NULL) !=
	    SQLITE_OK) {
		sqlite3_finalize(ids);
		return db__err(db, "read series");
	}
	for (int64_t b = (first - 1) / TOTALS_SPAN; b <= (last - 1) / TOTALS_SPAN && !err; b++) {
		rs.n = 0;
		sqlite3_reset(ids);
		if (sqlite3_bind_int64(ids, 1, b * BLOCK_PARTS) ||
		    sqlite3_bind_int64(ids, 2, b * BLOCK_PARTS + BLOCK_PARTS - 1)) {
			rc = SQLITE_ERROR;
			break;
		}
		err = parts_of(ids, want, n_want, &parts, &n_parts, &cap_parts, &rc);
		if (err || rc != SQLITE_DONE)
			break;
		for (size_t i = 0; i < n_parts && !err; i++) {
			const unsigned char *p;
			struct rd r;
			int n;

			sqlite3_reset(st);
			if (sqlite3_bind_int64(st, 1, parts[i].id) ||
			    (rc = sqlite3_step(st)) != SQLITE_ROW) {
				rc = SQLITE_ERROR;
				break;
			}
			p = sqlite3_column_blob(st, 0);
			n = sqlite3_column_bytes(st, 0);
			r = (struct rd){ p, p + (p ? n : 0), false };
			err = decode(&r, heap, b * TOTALS_SPAN, first, last, want, n_want, &rs);
			/* a part's keys start at its first address */
			if (!err && (r.bad || r.p != r.end)) {
				pr_err("%s: %s is damaged (part %lld)", db__path(db),
				       heap ? "heap_series" : "cpu_series", (long long)parts[i].id);
				err = -RSPROF_EDB;
			}
			rc = SQLITE_DONE;
		}
		if (err || rc != SQLITE_DONE)
			break;
		/* in checkpoint order (keys came in key order): a stable counting
		 * sort on the checkpoint's place in the block */
		{
			size_t at[TOTALS_SPAN + 2] = { 0 };
			int64_t base = b * TOTALS_SPAN;

			/* at[k]: the rows before place k (decode() keeps 0..TOTALS_SPAN) */
			for (size_t i = 0; i < rs.n; i++)
				at[rs.v[i].checkpoint - base + 1]++;
			for (int k = 1; k <= TOTALS_SPAN + 1; k++)
				at[k] += at[k - 1];
			for (size_t i = 0; i < rs.n; i++)
				rs.order[at[rs.v[i].checkpoint - base]++] = i;
			for (size_t i = 0; i < rs.n; i++)
				fn(ctx, &rs.v[rs.order[i]]);
		}
	}
	if (!err && rc != SQLITE_DONE)
		err = db__err(db, "read series");
	if (err == -E2BIG)
		err = db__too_many_rows(db, heap ? "heap_series" : "cpu_series");
	sqlite3_finalize(st);
	sqlite3_finalize(ids);
	free(parts);
	free(rs.v);
	free(rs.order);
	return err;
}

/* ---- the check ---------------------------------------------------------- */

/* A key's sums: cpu count, heap alloc/free bytes and counts, temp_count; 1 if counted. */
struct ksum {
	int64_t addr, stack_id, pid, kind;
	int64_t v[7];
};

struct ksums {
	struct ksum *v;
	size_t n, cap;
	int err;
};

static void ks_push(struct ksums *k, const struct ksum *s)
{
	if (k->err)
		return;
	if (ALLOC_GROW(k->v, k->n + 1, k->cap, 4096)) {
		k->err = -ENOMEM;
		return;
	}
	k->v[k->n++] = *s;
}

static void ks_row(void *ctx, const struct totals_row *r)
{
	struct ksum s = { r->addr, r->stack_id, r->pid, r->kind,
			  { r->count, r->alloc_bytes, r->free_bytes, r->alloc_count, r->free_count,
			    r->temp_count >= 0 ? r->temp_count : 0, r->temp_count >= 0 } };

	ks_push(ctx, &s);
}

static int cmp_ks(const void *pa, const void *pb)
{
	const struct ksum *a = pa, *b = pb;

	return HEAP_KEY_CMP(a, b);
}

/* Sort by key and add up the rows of one key. */
static void ks_merge(struct ksums *k)
{
	size_t o = 0;

	if (k->n)
		qsort(k->v, k->n, sizeof(*k->v), cmp_ks);
	for (size_t i = 0; i < k->n; i++) {
		if (o && !cmp_ks(&k->v[o - 1], &k->v[i])) {
			for (int j = 0; j < 6; j++)
				k->v[o - 1].v[j] = (int64_t)((uint64_t)k->v[o - 1].v[j] +
							     (uint64_t)k->v[i].v[j]);
			k->v[o - 1].v[6] |= k->v[i].v[6];
			continue;
		}
		k->v[o++] = k->v[i];
	}
	k->n = o;
}

/* The totals of level-0 block b into k. */
static int ks_totals(struct db *db, bool heap, int64_t b, struct ksums *k)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db__sqlite(db), heap ?
			       "SELECT addr, stack_id, pid, kind, 0, alloc_bytes, free_bytes,"
			       " alloc_count, free_count, temp_count FROM heap_totals"
			       " WHERE level = 0 AND block = ?1" :
			       "SELECT addr, -1, pid, 0, count, 0, 0, 0, 0, NULL FROM cpu_totals"
			       " WHERE level = 0 AND block = ?1", -1, &st, NULL) != SQLITE_OK)
		return -RSPROF_EDB;
	sqlite3_bind_int64(st, 1, b);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct ksum s = { 0 };

		s.addr = sqlite3_column_int64(st, 0);
		s.stack_id = sqlite3_column_int64(st, 1);
		s.pid = sqlite3_column_int64(st, 2);
		s.kind = sqlite3_column_int64(st, 3);
		for (int j = 0; j < 5; j++)
			s.v[j] = sqlite3_column_int64(st, 4 + j);
		if (sqlite3_column_type(st, 9) != SQLITE_NULL) {
			s.v[5] = sqlite3_column_int64(st, 9);
			s.v[6] = 1;
		}
		ks_push(k, &s);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? k->err : -RSPROF_EDB;
}

int series__check(struct db *db)
{
	struct ksums a = { 0 }, t = { 0 };
	int64_t lo, hi;
	int err = series__range(db, &lo, &hi), bad = 0;

	for (int64_t b = lo / TOTALS_SPAN; !err && b < hi / TOTALS_SPAN; b++) {
		for (int heap = 0; heap < 2 && !err; heap++) {
			a.n = t.n = 0;
			err = series__rows(db, heap, b * TOTALS_SPAN + 1, (b + 1) * TOTALS_SPAN, NULL,
					   0, ks_row, &a);
			if (!err)
				err = a.err;
			if (!err)
				err = ks_totals(db, heap, b, &t);
			if (err == -RSPROF_EDB)
				db__err(db, "check the series");
			if (err)
				break;
			ks_merge(&a);
			ks_merge(&t);
			if (a.n == t.n && (!a.n || !memcmp(a.v, t.v, a.n * sizeof(*a.v))))
				continue;
			if (bad++ < 3)
				pr_err("%s: the %s series of checkpoints %lld..%lld do not add up to"
				       " their totals (%zu keys packed, %zu in the totals)",
				       db__path(db), heap ? "heap" : "cpu",
				       (long long)(b * TOTALS_SPAN + 1),
				       (long long)((b + 1) * TOTALS_SPAN), a.n, t.n);
		}
	}
	free(a.v);
	free(t.v);
	if (!err && bad)
		err = -RSPROF_EDB;
	return err;
}
