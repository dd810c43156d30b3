/*
 * What a profile holds (db_query_summary) and its meta table.
 */
#include "util/db/read/query.h"
#include "util/db/read/query-priv.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "util/db/db.h"
#include "util/db/read/series.h"
#include "util/saturate.h"

/* An integer meta value; 0 when absent or not a number. */
static int meta_int(struct db *db, const char *key, int64_t *v)
{
	char *val = NULL;
	int err = db__meta_get(db, key, &val);

	*v = val ? strtoll(val, NULL, 10) : 0;
	free(val);
	return err;
}

/* The interval of one checkpoint, from meta (1 s when absent). */
static uint64_t interval_ms(struct db *db)
{
	int64_t v = 0;

	if (meta_int(db, "checkpoint_interval_ms", &v) || v <= 0)
		return 1000;
	return (uint64_t)v;
}

/* What was compacted (util/db/series.h; nothing in older files). */
static int summary_compacted(struct db *db, struct prof_summary *s)
{
	int64_t lo, hi;
	sqlite3_stmt *st;
	int rc, err = series__range(db, &lo, &hi);

	if (err || hi <= lo)
		return err;
	if (sqlite3_prepare_v2(db__sqlite(db), "SELECT COUNT(*), IFNULL((SELECT timestamp_ms FROM"
			       " checkpoints WHERE id <= ?1 ORDER BY id DESC LIMIT 1), 0),"
			       " MAX(timestamp_ms) FROM checkpoints WHERE id > ?1 AND id <= ?2", -1,
			       &st, NULL) != SQLITE_OK)
		return db__err(db, "read checkpoints");
	sqlite3_bind_int64(st, 1, lo);
	sqlite3_bind_int64(st, 2, hi);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		s->compacted_checkpoints = (uint64_t)sqlite3_column_int64(st, 0);
		s->compacted_from_ms = (uint64_t)sqlite3_column_int64(st, 1);
		s->compacted_until_ms = (uint64_t)sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : db__err(db, "read checkpoints");
}

/* record --retain: what was folded (v3; nothing in older files). */
static int summary_folded(struct db *db, struct prof_summary *s)
{
	uint64_t iv;
	int64_t v = 0;
	sqlite3_stmt *st;
	int rc, err;

	if (!db__has(db, DB_V3))
		return 0;
	err = meta_int(db, "retain_ms", &v);
	if (err)
		return err;
	s->retain_ms = v > 0 ? (uint64_t)v : 0;
	iv = interval_ms(db);
	if (!db__has(db, DB_MERGED))
		return 0;	/* a version-3 file of before --retain */
	if (sqlite3_prepare_v2(db__sqlite(db), "SELECT COUNT(*), TOTAL(merged), MAX(timestamp_ms),"
			       " MIN(merged), MAX(merged) FROM checkpoints WHERE merged > 1", -1,
			       &st, NULL) != SQLITE_OK)
		return db__err(db, "read checkpoints");
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0) {
		s->folded_checkpoints = (uint64_t)sqlite3_column_int64(st, 0);
		s->folded_intervals = (uint64_t)sqlite3_column_double(st, 1);
		s->folded_until_ms = (uint64_t)sqlite3_column_int64(st, 2);
		s->folded_min_ms = (uint64_t)sqlite3_column_int64(st, 3) * iv;
		s->folded_max_ms = (uint64_t)sqlite3_column_int64(st, 4) * iv;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return db__err(db, "read checkpoints");
	return summary_compacted(db, s);
}

/*
 * The highest running sum of heap_alloc_bytes - heap_free_bytes over the
 * checkpoints in id order, and the earliest time it is reached (0, 0: none),
 * in one pass (two SQL window functions sorted the checkpoints twice, the
 * most costly query of report's header on an hour). Sums saturate.
 */
static int running_peak(struct db *db, int64_t v[2])
{
	sqlite3_stmt *st;
	int64_t live = 0;
	bool seen = false, any = false;
	int rc, err;

	v[0] = v[1] = 0;
	err = db__prepare(db, "read heap peak", "SELECT timestamp_ms, heap_alloc_bytes -"
			" heap_free_bytes FROM checkpoints ORDER BY id", &st);
	if (err)
		return err;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t t = sqlite3_column_int64(st, 0);

		if (sqlite3_column_type(st, 1) != SQLITE_NULL) {
			live = sat__add(live, sqlite3_column_int64(st, 1));
			seen = true;
		}
		if (!seen)
			continue;	/* no sum yet (NULL): not a candidate */
		if (!any || live > v[0] || (live == v[0] && t < v[1])) {
			v[0] = live;
			v[1] = t;
			any = true;
		}
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db__err(db, "read heap peak");
}

int db_query_summary(struct db *db, struct prof_summary *s)
{
	int64_t v[8] = { 0 };
	char *val = NULL;
	int err;

	memset(s, 0, sizeof(*s));
	err = int_query(db, "read checkpoints",
			"SELECT COALESCE(MAX(timestamp_ms), 0), COUNT(*) FROM checkpoints", v, 2);
	if (err)
		return err;
	s->duration_ms = v[0];
	s->checkpoints = v[1];
	if (db__has(db, DB_V2)) {
		err = int_query(db, "read checkpoint totals",
				"SELECT TOTAL(cpu_total), TOTAL(lost_samples), TOTAL(heap_alloc_bytes),"
				" TOTAL(heap_free_bytes), TOTAL(heap_alloc_count),"
				" TOTAL(heap_free_count), TOTAL(heap_dropped),"
				" COALESCE(MAX(heap_live_bytes), 0) FROM checkpoints", v, 8);
		if (err)
			return err;
		s->samples = v[0];
		s->lost_samples = v[1];
		s->alloc_bytes = v[2];
		s->free_bytes = v[3];
		s->alloc_count = v[4];
		s->free_count = v[5];
		s->heap_dropped = v[6];
		s->peak_bytes = v[7];
		/* the peak of the running sum too, whatever heap_live_bytes holds */
		err = running_peak(db, v);
		if (err)
			return err;
		s->peak_cp_bytes = v[0];
		s->peak_ms = (uint64_t)v[1];
		if (v[0] > s->peak_bytes)
			s->peak_bytes = v[0];
	} else {
		err = int_query(db, "read cpu samples",
				"SELECT TOTAL(count) FROM cpu_samples", v, 1);
		if (!err)
			err = int_query(db, "read heap events",
					"SELECT TOTAL(alloc_bytes), TOTAL(free_bytes) FROM heap_events",
					v + 1, 2);
		if (err)
			return err;
		s->samples = v[0];
		s->alloc_bytes = v[1];
		s->free_bytes = v[2];
		err = int_query(db, "read heap peak",
				"SELECT COALESCE(MAX(l), 0), COALESCE((SELECT timestamp_ms FROM"
				" checkpoints WHERE id = (SELECT c FROM (SELECT checkpoint_id AS c,"
				" SUM(d) OVER (ORDER BY checkpoint_id ROWS UNBOUNDED PRECEDING) AS l2"
				" FROM (SELECT checkpoint_id, SUM(alloc_bytes - free_bytes) AS d FROM"
				" heap_events GROUP BY checkpoint_id)) ORDER BY l2 DESC, c LIMIT 1)), 0)"
				" FROM (SELECT SUM(d) OVER (ORDER BY"
				" checkpoint_id ROWS UNBOUNDED PRECEDING) AS l FROM (SELECT"
				" checkpoint_id, SUM(alloc_bytes - free_bytes) AS d FROM heap_events"
				" GROUP BY checkpoint_id))", v, 2);
		if (err)
			return err;
		s->peak_bytes = v[0];
		s->peak_cp_bytes = v[0];
		s->peak_ms = (uint64_t)v[1];
	}
	s->live_bytes = sat__sub(s->alloc_bytes, s->free_bytes);
	err = int_query(db, "read symbols", "SELECT COUNT(*), EXISTS (SELECT 1 FROM heap_events)"
			" FROM symbols", v, 2);
	if (err)
		return err;
	s->symbols = v[0];
	s->has_heap = v[1];
	if (db__has(db, DB_V2)) {
		err = int_query(db, "read stacks", "SELECT (SELECT COUNT(*) FROM stacks),"
				" (SELECT COUNT(*) FROM map)", v, 2);
		if (err)
			return err;
		s->stacks = v[0];
		s->mappings = v[1];
	}
	if (db__has(db, DB_V3)) {
		err = int_query(db, "read resident memory",
				"SELECT COUNT(rss_bytes), COALESCE(MAX(rss_bytes), 0),"
				" COALESCE((SELECT rss_bytes FROM checkpoints WHERE rss_bytes IS NOT NULL"
				" ORDER BY id DESC LIMIT 1), 0),"
				" COALESCE((SELECT rss_anon_bytes FROM checkpoints WHERE rss_bytes"
				" IS NOT NULL ORDER BY id DESC LIMIT 1), 0) FROM checkpoints", v, 4);
		if (err)
			return err;
		s->has_rss = v[0] > 0;
		s->rss_peak_bytes = v[1];
		s->rss_bytes = v[2];
		s->rss_anon_bytes = v[3];
		/* the kernel's high-water mark (VmHWM) when the recorder wrote it:
		 * a peak between two checkpoints too */
		err = db__meta_get(db, "rss_peak_bytes", &val);
		if (err)
			return err;
		if (val && *val) {
			char *end;
			long long p;

			errno = 0;
			p = strtoll(val, &end, 10);
			if (!*end && !errno && p > s->rss_peak_bytes)
				s->rss_peak_bytes = p;
		}
		free(val);
		val = NULL;
	}
	err = db__meta_get(db, "heap_probes", &val);
	if (err)
		return err;
	if (val && *val && strcmp(val, "none") && strcmp(val, "off"))
		s->has_heap = true;
	free(val);
	/* set when the recording starts: a live file has heap before its first row */
	err = db__meta_get(db, "heap", &val);
	if (err)
		return err;
	if (val && !strcmp(val, "on"))
		s->has_heap = true;
	free(val);
	/* the tracker's own peak sees between checkpoints */
	err = meta_int(db, "heap_peak_bytes", &v[0]);
	if (!err && v[0] > s->peak_bytes)
		s->peak_bytes = v[0];
	if (!err)
		err = meta_int(db, "unknown_frees", &v[0]);
	if (!err)
		s->unknown_frees = v[0] > 0 ? v[0] : 0;
	if (!err && (err = db__meta_get(db, "unknown_free_bytes", &val)) == 0) {
		/* written with unknown_frees at the end, unless the sizes are unknown (-1) */
		s->unknown_free_bytes = val ? strtoll(val, NULL, 10) : s->unknown_frees ? -1 : 0;
		free(val);
		val = NULL;
	}
	if (!err)
		err = meta_int(db, "heap_sample", &v[0]);
	if (err)
		return err;
	s->heap_sample = v[0] > 1 && v[0] < UINT32_MAX ? (unsigned int)v[0] : 0;
	err = meta_int(db, "heap_sample_bytes", &v[0]);
	if (err)
		return err;
	s->heap_sample_bytes = v[0] > 0 ? (uint64_t)v[0] : 0;
	err = meta_int(db, "heap_block_header_bytes", &v[0]);
	if (err)
		return err;
	if (v[0] > 0 && v[0] <= 4096 && s->alloc_count > s->free_count)
		s->header_bytes = sat__mul(v[0], s->alloc_count - s->free_count);
	err = db__meta_get(db, "end_time", &val);
	if (err)
		return err;
	s->finished = val != NULL;
	free(val);
	return summary_folded(db, s);
}

int db_query_resolution(struct db *db, uint64_t from_ms, uint64_t to_ms,
			struct prof_resolution *r)
{
	uint64_t iv = interval_ms(db);
	sqlite3_stmt *st;
	int rc, err;

	memset(r, 0, sizeof(*r));
	/* a version-3 file of a writer without --retain support has no `merged` */
	if (!db__has(db, DB_MERGED))
		return 0;
	if (sqlite3_prepare_v2(db__sqlite(db), "SELECT MAX(merged), MIN(timestamp_ms - (merged - 1) * ?3),"
			       " MAX(timestamp_ms) FROM checkpoints WHERE timestamp_ms >= ?1"
			       " AND timestamp_ms <= ?2", -1, &st, NULL) != SQLITE_OK)
		return db__err(db, "read checkpoints");
	sqlite3_bind_int64(st, 1, from_ms == TIME_NONE ? 0 : (int64_t)from_ms);
	sqlite3_bind_int64(st, 2, to_ms >= INT64_MAX ? INT64_MAX : (int64_t)to_ms);
	sqlite3_bind_int64(st, 3, (int64_t)iv);
	rc = sqlite3_step(st);
	err = rc == SQLITE_ROW ? 0 : db__err(db, "read checkpoints");
	if (!err && sqlite3_column_int64(st, 0) > 1) {
		int64_t first = sat__sub(sqlite3_column_int64(st, 1), (int64_t)iv);

		r->folded = true;
		r->coarsest_ms = (uint64_t)sqlite3_column_int64(st, 0) * iv;
		r->first_ms = first > 0 ? (uint64_t)first : 0;
		r->last_ms = (uint64_t)sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	if (err || r->folded || to_ms >= INT64_MAX)
		return err;
	/* the window's end inside a folded checkpoint that ends after it */
	if (sqlite3_prepare_v2(db__sqlite(db), "SELECT timestamp_ms, merged FROM checkpoints"
			       " WHERE timestamp_ms > ?1 AND merged > 1 AND"
			       " timestamp_ms - merged * ?2 < ?1 ORDER BY id LIMIT 1", -1, &st,
			       NULL) != SQLITE_OK)
		return db__err(db, "read checkpoints");
	sqlite3_bind_int64(st, 1, (int64_t)to_ms);
	sqlite3_bind_int64(st, 2, (int64_t)iv);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		int64_t end = sqlite3_column_int64(st, 0), span = sqlite3_column_int64(st, 1) * iv;

		r->folded = r->inside = true;
		r->coarsest_ms = (uint64_t)span;
		r->first_ms = end > span ? (uint64_t)(end - span) : 0;
		r->last_ms = (uint64_t)end;
	} else if (rc != SQLITE_DONE) {
		err = db__err(db, "read checkpoints");
	}
	sqlite3_finalize(st);
	return err;
}

int db_query_meta(struct db *db, int (*cb)(const char *key, const char *value, void *ctx),
		  void *ctx)
{
	sqlite3_stmt *st;
	int rc, err = db__prepare(db, "read meta", "SELECT key, value FROM meta ORDER BY key", &st);

	if (err)
		return err;
	for (long n = 0; (rc = sqlite3_step(st)) == SQLITE_ROW; n++) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		const char *v = (const char *)sqlite3_column_text(st, 1);

		if (n >= DB_MAX_ROWS) {
			err = db__too_many_rows(db, "meta");
			break;
		}
		err = cb(k ? k : "", v ? v : "", ctx);
		if (err)
			break;
	}
	if (!err && rc != SQLITE_DONE)
		err = db__err(db, "read meta");
	sqlite3_finalize(st);
	return err;
}

int db_query_process_count(struct db *db, int *n)
{
	int64_t v = 1;
	int err = 0;

	if (db__has(db, DB_PROCESSES))
		err = int_query(db, "count processes",
				"SELECT MAX(1, COUNT(DISTINCT pid)) FROM processes", &v, 1);
	*n = (int)v;
	return err;
}
