/*
 * The writer's totals (util/db/totals.h): every read query gives the same
 * rows from the totals as from a scan of the event tables, on random
 * profiles whose sites share lines, functions and files (groups of several
 * keys that peak at different moments), through every level of blocks, a
 * block left open, a recording appended to, one killed mid-write, and a
 * file changed by hand.
 *
 * The random profiles: tests/unit/random-profile.h (tests/helper/random-profile
 * writes one for the shell tests).
 */
#include "util/db/read/totals.h"
#include "util/db/series.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/db/db.h"
#include "util/db/write/writer.h"
#include "util/db/read/live.h"
#include "util/db/read/query.h"
#include "util/error.h"
#include "util/symbols/symbol.h"
#include "fixture.h"
#include "random-profile.h"
#include "tap.h"

static char dir[] = "/tmp/rsprof-test-totals.XXXXXX";

static const char *tmp(const char *name)
{
	static char buf[4][512];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

/* A copy of src with no totals (its readers scan). */
static int copy_scan(const char *src, const char *dst)
{
	sqlite3 *a = NULL, *b = NULL;
	sqlite3_backup *bk;
	int rc;

	unlink(dst);
	if (sqlite3_open(src, &a) != SQLITE_OK || sqlite3_open(dst, &b) != SQLITE_OK) {
		sqlite3_close(a);
		sqlite3_close(b);
		return -1;
	}
	bk = sqlite3_backup_init(b, "main", a, "main");
	rc = bk ? sqlite3_backup_step(bk, -1) : SQLITE_ERROR;
	sqlite3_backup_finish(bk);
	if (rc == SQLITE_DONE)
		rc = sqlite3_exec(b, "DROP TABLE totals_state", NULL, NULL, NULL);
	sqlite3_close(a);
	sqlite3_close(b);
	return rc == SQLITE_OK ? 0 : -1;
}

/* ---- comparing ---------------------------------------------------------- */

struct text {
	char *s;
	size_t n, cap;
};

static void text_add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void text_add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	char line[512];
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (t->n + n + 1 > t->cap) {
		size_t cap = (t->cap + n + 1) * 2;
		char *s = realloc(t->s, cap);

		if (!s)
			return;
		t->s = s;
		t->cap = cap;
	}
	memcpy(t->s + t->n, line, n + 1);
	t->n += n;
}

static int row_text(const struct prof_row *r, void *ctx)
{
	text_add(ctx, "%s:%d %s [%s] cpu %llu %.6f live %lld peak %lld a %lld/%lld f %lld/%lld"
		 " temp %lld kinds %u\n",
		 r->file ? r->file : "-", r->line, r->function ? r->function : "-",
		 r->module ? r->module : "-", (unsigned long long)r->samples, r->pct,
		 (long long)r->live_bytes, (long long)r->peak_bytes, (long long)r->alloc_bytes,
		 (long long)r->alloc_count, (long long)r->free_bytes, (long long)r->free_count,
		 (long long)r->temp_count, r->kinds);
	return 0;
}

/* Everything the queries say about path under f, as text. */
static char *query_text(const char *path, const struct query_filter *f)
{
	struct text t = { 0 };
	struct db *db;
	uint64_t total = 0;
	int64_t live = 0;
	int e1, e2;

	if (db__open(path, &db))
		return NULL;
	e1 = db_query_cpu(db, f, &total, row_text, &t);
	text_add(&t, "cpu total %llu (%d)\n", (unsigned long long)total, e1);
	{
		struct heap_hint h;

		e2 = db_query_heap_hint(db, f, &live, row_text, &t, &h);
		text_add(&t, "heap total %lld (%d) hint %d %.3f %d %s:%d\n", (long long)live, e2,
			 h.suspect, h.pct, h.callers, h.file ? h.file : "-", h.line);
		heap_hint__free(&h);
	}
	db__close(db);
	return t.s;
}

/* The first line where a and b differ, for the TAP log. */
static void show_diff(const char *a, const char *b)
{
	size_t i = 0, l;

	while (a[i] && a[i] == b[i])
		i++;
	for (l = i; l > 0 && a[l - 1] != '\n'; l--)
		;
	printf("#   totals: %.*s\n#   scan:   %.*s\n", (int)strcspn(a + l, "\n"), a + l,
	       (int)strcspn(b + l, "\n"), b + l);
}

static int n_compared;

/* Same rows from the totals (path) and from a scan (scan) under many filters. */
static bool compare_all(const char *path, const char *scan, int64_t n_cp, const char *what)
{
	static const char *const pats[] = { NULL, "b.c", "F2", "libx" };
	static const char *const wrappers[] = { "f2", NULL };
	uint64_t last = (uint64_t)n_cp * 1000;
	uint64_t times[][3] = {
		/* from, to, at */
		{ TIME_NONE, TIME_NONE, TIME_NONE },
		{ last / 2 + 1, TIME_NONE, TIME_NONE },
		{ TIME_NONE, last / 3, TIME_NONE },
		{ 61000, last - 7000, TIME_NONE },
		{ 3001, 119000, TIME_NONE },
		{ TIME_NONE, TIME_NONE, last / 2 },
		{ 59001, TIME_NONE, 60000 },
		{ TIME_NONE, TIME_NONE, 121000 },
		{ last - 13000, TIME_NONE, last - 5000 },
	};
	bool same = true;

	for (int gi = GROUP_LINE; gi <= GROUP_PROCESS + 2 && same; gi++) {
		for (size_t pi = 0; pi < sizeof(pats) / sizeof(pats[0]) && same; pi++) {
			for (size_t ti = 0; ti < sizeof(times) / sizeof(times[0]) && same; ti++) {
				struct query_filter f;
				char *a, *b;

				query_filter__init(&f);
				/* past the groups: by line for one process, and with
				 * the reader's own wrapper (report --alloc-fn) */
				f.group = gi <= GROUP_PROCESS ? gi : GROUP_LINE;
				if (gi == GROUP_PROCESS + 1)
					f.pid = 101;
				if (gi == GROUP_PROCESS + 2)
					f.alloc_fn = wrappers;
				f.pattern = pats[pi];
				f.win.from_ms = times[ti][0];
				f.win.to_ms = times[ti][1];
				f.at_ms = times[ti][2];
				/* ranked by temporaries now and then (report --sort-by temporary) */
				if ((ti + pi) % 3 == 1)
					f.heap_sort = HEAP_SORT_TEMPORARY;
				a = query_text(path, &f);
				b = query_text(scan, &f);
				same = a && b && !strcmp(a, b);
				if (!same) {
					printf("# %s: group %d pattern %s window %d\n", what, gi,
					       pats[pi] ? pats[pi] : "-", (int)ti);
					if (a && b)
						show_diff(a, b);
				}
				n_compared++;
				free(a);
				free(b);
			}
		}
	}
	return same;
}

static bool totals_used(const char *path)
{
	struct db *db;
	struct totals *t = NULL;
	bool used;

	if (db__open(path, &db))
		return false;
	db__snapshot_begin(db);
	totals__open(db, &t);
	used = t != NULL;
	totals__delete(t);
	db__snapshot_end(db);
	db__close(db);
	return used;
}

static long long sql_int(const char *path, const char *sql)
{
	sqlite3 *sq;
	sqlite3_stmt *st;
	long long v = -1;

	if (sqlite3_open(path, &sq) != SQLITE_OK)
		return -1;
	if (sqlite3_prepare_v2(sq, sql, -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			v = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	sqlite3_close(sq);
	return v;
}

static void test_random(int n_cp, uint64_t seed)
{
	char name[64], scan[64];
	const char *p, *s;
	struct gen g = { 0 };

	snprintf(name, sizeof(name), "r%d.db", n_cp);
	snprintf(scan, sizeof(scan), "r%d-scan.db", n_cp);
	p = tmp(name);
	if (gen_file(p, seed, 1, n_cp, false, &g) || copy_scan(p, s = tmp(scan))) {
		ok(0, "random profile of %d checkpoints", n_cp);
		return;
	}
	is_int(sql_int(p, "SELECT through FROM totals_state"), n_cp / TOTALS_SPAN * TOTALS_SPAN,
	       "%d checkpoints: the totals hold the whole blocks", n_cp);
	ok(totals_used(p), "%d checkpoints: the totals are used", n_cp);
	ok(!totals_used(s), "the copy without totals_state is scanned");
	ok(compare_all(p, s, n_cp, name), "%d checkpoints: every query the same from the totals",
	   n_cp);
}

/* Blocks written in two sessions: the open block is read back at the append. */
static void test_append(void)
{
	const char *p = tmp("app.db"), *s;
	const char *one = tmp("one.db");
	struct gen g = { 0 }, g1 = { 0 };
	int err;

	err = gen_file(p, 7, 1, 95, false, &g);
	if (!err)
		err = gen_file(p, 8, 96, 250, true, &g);
	if (err || copy_scan(p, s = tmp("app-scan.db"))) {
		ok(0, "appended profile");
		return;
	}
	ok(compare_all(p, s, 250, "append"), "appended: the same from the totals");
	/* the same rows in one session give the same totals */
	err = gen_file(one, 7, 1, 95, false, &g1);
	is_int(err, 0, "one session");
	{
		sqlite3 *sq;
		char sql[1024];
		long long diff = -1;

		snprintf(sql, sizeof(sql), "ATTACH '%s' AS o", one);
		if (sqlite3_open(p, &sq) == SQLITE_OK &&
		    sqlite3_exec(sq, sql, NULL, NULL, NULL) == SQLITE_OK) {
			sqlite3_stmt *st;

			if (sqlite3_prepare_v2(sq, "SELECT COUNT(*) FROM (SELECT * FROM main.heap_totals"
					       " WHERE level = 0 AND block = 0 EXCEPT SELECT * FROM"
					       " o.heap_totals WHERE level = 0 AND block = 0)", -1,
					       &st, NULL) == SQLITE_OK) {
				if (sqlite3_step(st) == SQLITE_ROW)
					diff = sqlite3_column_int64(st, 0);
				sqlite3_finalize(st);
			}
		}
		sqlite3_close(sq);
		is_int(diff, 0, "the first block's totals as written in one session");
	}
}

/*
 * An early v3 file (heap_totals without temp_count and kind, before the
 * totals carried them; written here from one with both kinds, so its
 * peaks are not those of such a file, which no reader takes with temp_count
 * rows): its heap is scanned, and an append adds no totals (its totals
 * stay as they were, the new checkpoints are read raw).
 */
static void test_early(void)
{
	const char *p = tmp("early.db"), *s = tmp("early-scan.db");
	struct gen g = { 0 };
	sqlite3 *sq;
	int err;

	err = gen_file(p, 13, 1, 130, false, &g);
	if (!err && sqlite3_open(p, &sq) == SQLITE_OK) {
		if (sqlite3_exec(sq, "CREATE TABLE ht (level INTEGER NOT NULL, block INTEGER NOT NULL,"
			 " addr INTEGER NOT NULL, stack_id INTEGER NOT NULL, pid INTEGER NOT NULL,"
			 " alloc_bytes INTEGER NOT NULL, free_bytes INTEGER NOT NULL,"
			 " alloc_count INTEGER NOT NULL, free_count INTEGER NOT NULL,"
			 " peak INTEGER NOT NULL, PRIMARY KEY (level, block, addr, stack_id, pid))"
			 " WITHOUT ROWID; INSERT INTO ht SELECT level, block, addr, stack_id, pid,"
			 " SUM(alloc_bytes), SUM(free_bytes), SUM(alloc_count), SUM(free_count),"
			 " MAX(peak) FROM heap_totals GROUP BY 1, 2, 3, 4, 5; DROP TABLE heap_totals;"
			 " ALTER TABLE ht RENAME TO heap_totals", NULL, NULL, NULL) != SQLITE_OK)
			err = -1;
		sqlite3_close(sq);
	}
	if (!err)
		err = gen_file(p, 14, 131, 250, true, &g);
	if (err || copy_scan(p, s)) {
		ok(0, "early v3 profile appended to");
		return;
	}
	is_int(sql_int(p, "SELECT through FROM totals_state"), 120,
	       "early v3: the append adds no totals");
	ok(compare_all(p, s, 250, "early"), "early v3: the same as a scan");
}

/*
 * What a killed file's readers say, against a scan of the same checkpoints
 * 1..n_cp (rng seed) written whole, without compaction: a scan of the killed
 * file itself is no baseline once its oldest block is compacted (its event
 * rows are folded to the block's end, which a scan reads at 1 min).
 */
static void compare_killed(const char *p, int64_t n_cp, uint64_t seed, const char *what)
{
	char whole[64], scan[64];
	struct gen g = { 0 };
	uint64_t age = compact_ms;
	int err;

	snprintf(whole, sizeof(whole), "%s-whole.db", what);
	snprintf(scan, sizeof(scan), "%s-scan.db", what);
	compact_ms = 0;
	err = gen_file(tmp(whole), seed, 1, (int)n_cp, false, &g) || copy_scan(tmp(whole), tmp(scan));
	compact_ms = age;
	if (err) {
		ok(0, "%s: the same checkpoints written whole", what);
		return;
	}
	ok(totals_used(p), "%s: the killed file's totals are used", what);
	ok(compare_all(p, tmp(scan), n_cp, what), "%s: the same as the checkpoints written whole",
	   what);
}

/* A writer killed at any moment leaves totals that agree with the event rows. */
static void test_killed(void)
{
	const char *p = tmp("killed.db");
	long long n_cp;
	pid_t pid;
	int status, i;

	pid = fork();
	if (pid == 0) {
		struct gen g = { 0 };
		struct db_writer *db;

		/* compacted at the default age, as record does */
		if (db_writer__create(p, false, &db))
			_exit(1);
		rng = 99;
		for (int c = 1; c <= 100000; c++)
			if (gen_checkpoint(db, &g, c))
				_exit(1);
		_exit(0);
	}
	/* long enough for a few blocks (up to a minute: the sanitizer build at
	 * load 7 made no checkpoint in the 4 s this waited before); not opened
	 * before the writer made its -wal and -shm (it refuses companions
	 * someone else made) */
	for (i = 0; i < 3000; i++) {
		char wal[4096], shm[4096];

		usleep(20000);
		snprintf(wal, sizeof(wal), "%s-wal", p);
		snprintf(shm, sizeof(shm), "%s-shm", p);
		if (access(wal, F_OK) || access(shm, F_OK))
			continue;
		if (sql_int(p, "SELECT through FROM totals_state") >= 3 * TOTALS_SPAN)
			break;
	}
	printf("# the writer killed after %d ms of polls\n", i * 20);
	usleep(rnd() % 50000);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	ok(WIFSIGNALED(status), "the writer was killed");
	n_cp = sql_int(p, "SELECT MAX(id) FROM checkpoints");
	ok(n_cp > 0, "killed after %lld checkpoints, totals through %lld", n_cp,
	   sql_int(p, "SELECT through FROM totals_state"));
	compare_killed(p, n_cp, 99, "killed");
}

/*
 * Killed right after checkpoint n_cp's commit, at the default compaction
 * age, 1 s a checkpoint: from 361 block 1 (1..60) is compacted (its series
 * were packed as it ended) and its event rows folded slice by slice until
 * ~400; from 421 block 2's. The file left in the middle of the first fold,
 * and of the second with the first done, gives the numbers of its
 * checkpoints written whole.
 */
static void test_killed_at(int n_cp, const char *phase)
{
	char name[32];
	const char *p;
	pid_t pid;
	int status;

	snprintf(name, sizeof(name), "killed-%d", n_cp);
	p = tmp(name);
	pid = fork();
	if (pid == 0) {
		struct gen g = { 0 };

		setenv("FIXTURE_KILL", "1", 1);
		compact_ms = SERIES_AGE_MS;
		gen_file(p, 99, 1, n_cp, false, &g);
		_exit(1);
	}
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "written through %d, not closed", n_cp);
	ok(sql_int(p, phase) == 1, "killed at %d: %s", n_cp, phase);
	compare_killed(p, n_cp, 99, name);
}

/* The rows of sql, one line each. */
static char *sql_text(const char *path, const char *sql)
{
	struct text t = { 0 };
	sqlite3 *sq;
	sqlite3_stmt *st;

	if (sqlite3_open(path, &sq) != SQLITE_OK)
		return NULL;
	if (sqlite3_prepare_v2(sq, sql, -1, &st, NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW) {
			for (int i = 0; i < sqlite3_column_count(st); i++)
				text_add(&t, "%s|", sqlite3_column_text(st, i) ?
					 (const char *)sqlite3_column_text(st, i) : "NULL");
			text_add(&t, "\n");
		}
		sqlite3_finalize(st);
	}
	sqlite3_close(sq);
	if (!t.s)
		t.s = strdup("");
	return t.s;
}

static bool same_sql(const char *a, const char *b, const char *sql)
{
	char *x = sql_text(a, sql), *y = sql_text(b, sql);
	bool same = x && y && !strcmp(x, y);

	if (!same && x && y)
		show_diff(x, y);
	free(x);
	free(y);
	return same;
}

/*
 * record --retain: the checkpoints older than retain_ms are folded (60 into
 * one, and 3,600 into one past 60 x retain_ms); sums stay, the last
 * retain_ms stays as it was, and the totals still give what a scan gives.
 */
static void test_retain(int n_cp, uint64_t retain_ms, uint64_t seed)
{
	char name[64], full_name[64];
	const char *p, *full, *s;
	struct gen g = { 0 }, g2 = { 0 };
	long long n_left, merged, cut = (long long)n_cp * 1000 - (long long)retain_ms;
	char sql[512];

	snprintf(name, sizeof(name), "ret%d.db", n_cp);
	snprintf(full_name, sizeof(full_name), "full%d.db", n_cp);
	p = tmp(name);
	full = tmp(full_name);
	if (gen_file_retain(p, seed, 1, n_cp, false, &g, retain_ms) ||
	    gen_file(full, seed, 1, n_cp, false, &g2) || copy_scan(p, s = tmp("ret-scan.db"))) {
		ok(0, "retained profile of %d checkpoints", n_cp);
		return;
	}
	n_left = sql_int(p, "SELECT COUNT(*) FROM checkpoints");
	merged = sql_int(p, "SELECT SUM(merged) FROM checkpoints");
	ok(n_left < n_cp, "--retain %llus, %d checkpoints: %lld left", (unsigned long long)retain_ms / 1000,
	   n_cp, n_left);
	is_int(merged, n_cp, "they hold all %d intervals", n_cp);
	ok(same_sql(p, full, "SELECT addr, SUM(count) FROM cpu_samples GROUP BY addr"),
	   "cpu samples per address as without --retain");
	ok(same_sql(p, full, "SELECT addr, IFNULL(stack_id, -1), SUM(alloc_bytes), SUM(free_bytes),"
		    " SUM(alloc_count), SUM(free_count) FROM heap_events GROUP BY 1, 2"),
	   "heap sums per key as without --retain");
	ok(same_sql(p, full, "SELECT SUM(cpu_total), SUM(lost_samples), SUM(heap_alloc_bytes),"
		    " SUM(heap_free_bytes), SUM(heap_alloc_count), SUM(heap_free_count),"
		    " SUM(heap_dropped) FROM checkpoints"), "checkpoint totals as without --retain");
	snprintf(sql, sizeof(sql), "SELECT c.checkpoint_id, c.addr, c.count FROM cpu_samples c"
		 " JOIN checkpoints cp ON cp.id = c.checkpoint_id WHERE cp.timestamp_ms > %lld"
		 " ORDER BY 1, 2", cut);
	ok(same_sql(p, full, sql), "the last %llus as recorded", (unsigned long long)retain_ms / 1000);
	snprintf(sql, sizeof(sql), "SELECT id, timestamp_ms, heap_live_bytes, merged FROM checkpoints"
		 " WHERE timestamp_ms > %lld ORDER BY id", cut);
	ok(same_sql(p, full, sql), "and their checkpoints");
	ok(sql_int(p, "SELECT COUNT(*) FROM checkpoints WHERE merged > 1 AND timestamp_ms % 60000 != 0")
	   == 0, "folded checkpoints end a minute");
	if ((long long)n_cp * 1000 - 3600000 >= 60 * (long long)retain_ms)
		is_int(sql_int(p, "SELECT MAX(merged) FROM checkpoints"), 3600,
		       "the first hour, older than 60 x %llus, is one checkpoint",
		       (unsigned long long)retain_ms / 1000);
	else
		is_int(sql_int(p, "SELECT MAX(merged) FROM checkpoints"), 60,
		       "a folded checkpoint holds a minute");
	ok(totals_used(p), "the retained file's totals are used");
	ok(compare_all(p, s, n_cp, name), "retained: the same from the totals");
}

/* top's charts (db_live__series): the last n checkpoints of every location alike. */
static bool same_live(const char *a, const char *b, int n)
{
	struct db *da = NULL, *dbb = NULL;
	struct db_live *la = NULL, *lb = NULL;
	sqlite3_stmt *st = NULL;
	int64_t *va = calloc(n, sizeof(*va)), *vb = calloc(n, sizeof(*vb));
	bool same = va && vb && !db__open(a, &da) && !db__open(b, &dbb) &&
		    (la = db_live__new(da)) && (lb = db_live__new(dbb)) &&
		    sqlite3_prepare_v2(db__sqlite(da), "SELECT DISTINCT file, IFNULL(line, 0),"
				       " function FROM symbols", -1, &st, NULL) == SQLITE_OK;

	while (same && sqlite3_step(st) == SQLITE_ROW) {
		const char *file = (const char *)sqlite3_column_text(st, 0);
		const char *fn = (const char *)sqlite3_column_text(st, 2);
		int line = sqlite3_column_int(st, 1);

		for (int k = SERIES_CPU; k <= SERIES_HEAP && same; k++) {
			same = !db_live__series(la, k, file, line, fn, va, n) &&
			       !db_live__series(lb, k, file, line, fn, vb, n) &&
			       !memcmp(va, vb, n * sizeof(*va));
			if (!same)
				printf("# top's %s chart of %s:%d %s differs\n", k == SERIES_CPU ?
				       "cpu" : "heap", file ? file : "-", line, fn ? fn : "-");
		}
	}
	sqlite3_finalize(st);
	db_live__delete(la);
	db_live__delete(lb);
	db__close(da);
	db__close(dbb);
	free(va);
	free(vb);
	return same;
}

/*
 * Compaction (util/db/series.h): blocks older than age_ms packed, their
 * seed-000 rows folded into one per key; every reader query gives what it
 * gives on the same profile written whole, and so do the seed-000 sums.
 */
static void test_compact(int n_cp, uint64_t age_ms, uint64_t retain_ms, uint64_t seed)
{
	char name[64], full_name[64];
	const char *p, *full;
	struct gen g = { 0 }, g2 = { 0 };
	long long cut = (long long)n_cp * 1000 - (long long)age_ms;
	char sql[512];
	int err;

	snprintf(name, sizeof(name), "cmp%d-%llu.db", n_cp, (unsigned long long)retain_ms);
	snprintf(full_name, sizeof(full_name), "cmpfull%d-%llu.db", n_cp,
		 (unsigned long long)retain_ms);
	p = tmp(name);
	full = tmp(full_name);
	compact_ms = age_ms;
	err = gen_file_retain(p, seed, 1, n_cp, false, &g, retain_ms);
	compact_ms = 0;
	if (err || gen_file_retain(full, seed, 1, n_cp, false, &g2, retain_ms)) {
		ok(0, "compacted profile of %d checkpoints", n_cp);
		return;
	}
	ok(sql_int(p, "SELECT through FROM series_state") >= 60 &&
	   sql_int(p, "SELECT COUNT(*) FROM cpu_series") > 0 &&
	   sql_int(p, "SELECT COUNT(*) FROM heap_series") > 0,
	   "%d checkpoints, compacted after %llus: blocks packed", n_cp,
	   (unsigned long long)age_ms / 1000);
	ok(sql_int(p, "SELECT COUNT(*) FROM cpu_samples") < sql_int(full, "SELECT COUNT(*) FROM"
								    " cpu_samples"),
	   "fewer rows in cpu_samples");
	ok(same_sql(p, full, "SELECT addr, IFNULL(pid, 0), SUM(count) FROM cpu_samples GROUP BY 1, 2"),
	   "cpu samples per address as written whole");
	ok(same_sql(p, full, "SELECT addr, IFNULL(stack_id, -1), kind, SUM(alloc_bytes),"
		    " SUM(free_bytes), SUM(alloc_count), SUM(free_count), SUM(temp_count),"
		    " COUNT(temp_count) > 0 FROM heap_events GROUP BY 1, 2, 3"),
	   "heap sums per key as written whole");
	ok(same_sql(p, full, "SELECT * FROM checkpoints ORDER BY id"), "the checkpoints untouched");
	snprintf(sql, sizeof(sql), "SELECT c.checkpoint_id, c.addr, c.count FROM cpu_samples c"
		 " JOIN checkpoints cp ON cp.id = c.checkpoint_id WHERE cp.timestamp_ms > %lld"
		 " ORDER BY 1, 2, 3", cut);
	ok(same_sql(p, full, sql), "the last %llus as recorded", (unsigned long long)age_ms / 1000);
	ok(totals_used(p), "the compacted file's totals are used");
	ok(compare_all(p, full, n_cp, name), "compacted: every query the same as written whole");
	ok(same_live(p, full, 250) && same_live(p, full, n_cp + 5),
	   "compacted: top's charts the same as written whole");
}

/* Rows added by hand to a checkpoint the totals hold: readers scan. */
static void test_changed(void)
{
	const char *p = tmp("r137.db");
	sqlite3 *sq;

	if (sqlite3_open(p, &sq) != SQLITE_OK ||
	    sqlite3_exec(sq, "INSERT INTO heap_events (checkpoint_id, addr, alloc_bytes)"
			 " VALUES (5, 6291456, 1000000)", NULL, NULL, NULL) != SQLITE_OK) {
		sqlite3_close(sq);
		ok(0, "change by hand");
		return;
	}
	sqlite3_close(sq);
	ok(!totals_used(p), "a row added to a summed checkpoint: the totals are not used");
	if (sqlite3_open(p, &sq) == SQLITE_OK) {
		sqlite3_exec(sq, "INSERT INTO checkpoints (id, timestamp_ms) VALUES (138, 138000);"
			     "DELETE FROM heap_events WHERE checkpoint_id = 5 AND alloc_bytes = 1000000;"
			     "INSERT INTO cpu_samples VALUES (138, 7340032, 5)", NULL, NULL, NULL);
		sqlite3_close(sq);
	}
	ok(totals_used(p), "rows of a new checkpoint added by hand: the totals are used");
	if (!copy_scan(p, tmp("r138-scan.db")))
		ok(compare_all(p, tmp("r138-scan.db"), 138, "r138"),
		   "and they read the new checkpoint from the event table");
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_random(10, 1);
	test_random(59, 2);
	test_random(60, 3);
	test_random(137, 4);
	test_random(400, 5);
	test_random(3725, 6);
	test_retain(400, 100000, 11);
	test_retain(4400, 10000, 12);
	test_compact(400, 60000, 0, 13);
	test_compact(737, 90000, 0, 14);
	/* compacted, then folded by --retain: as folded alone */
	test_compact(900, 60000, 300000, 15);
	test_compact(4400, 30000, 120000, 16);
	/* --retain folds blocks while their compaction is under way (spread over
	 * the next ~70 checkpoints): in the middle of packing each (the block
	 * that has aged at the end is compacted when the file is closed), of
	 * folding their event rows */
	test_compact(890, 30000, 60000, 17);
	test_compact(900, 20000, 85000, 18);
	test_append();
	test_early();
	test_killed();
	test_killed_at(370, "SELECT through = 60 AND dropped = 0 AND drop_addr > 0 FROM series_state");
	test_killed_at(430, "SELECT through = 120 AND dropped = 60 AND drop_addr > 0 FROM series_state");
	test_changed();
	ok(n_compared > 1000, "%d comparisons", n_compared);
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			fprintf(stderr, "could not remove %s\n", dir);
	}
	return done_testing();
}
