/*
 * The profile file: writer, reader refusals, and the shared read queries on
 * fixture profiles (tests/unit/fixture.h).
 * tests/helper/fixture writes them for the shell tests.
 */
#include "util/db/db.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/db/read/query.h"
#include "util/db/schema.h"
#include "util/db/read/user.h"
#include "util/db/write/stacks.h"
#include "util/db/write/writer.h"
#include "util/error.h"
#include "fixture.h"
#include "tap.h"

static char dir[] = "/tmp/rsprof-test-db.XXXXXX";
static char path_buf[512];

static const char *tmp(const char *name)
{
	snprintf(path_buf, sizeof(path_buf), "%s/%s", dir, name);
	return path_buf;
}

static char *str_of(struct db *db, const char *sql)
{
	sqlite3_stmt *st;
	char *v = NULL;

	if (sqlite3_prepare_v2(db__sqlite(db), sql, -1, &st, NULL) != SQLITE_OK)
		return NULL;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		v = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return v;
}

static long long int_of(struct db *db, const char *sql)
{
	char *v = str_of(db, sql);
	long long n = v ? atoll(v) : -1;

	free(v);
	return n;
}

static void test_create(void)
{
	const char *p = tmp("a.db");
	struct db_writer *w = NULL;
	struct stat st;
	char wal[600];
	char *v;

	is_int(db_writer__create(p, false, &w), 0, "db_writer__create makes a new file");
	memset(&st, 0, sizeof(st));
	stat(p, &st);
	ok((st.st_mode & 0777) == 0600, "created mode 0600 (%o)", st.st_mode & 0777);
	v = str_of(db_writer__db(w), "PRAGMA journal_mode");
	is_str(v, "wal", "journal_mode is WAL");
	free(v);
	is_int(int_of(db_writer__db(w), "PRAGMA synchronous"), 1, "synchronous is NORMAL");
	v = NULL;
	is_int(db__meta_get(db_writer__db(w), "version", &v), 0, "meta.version read back");
	is_int(v ? atoi(v) : -1, RSPROF_SCHEMA_VERSION, "meta.version is the schema version");
	free(v);
	is_int(db_writer__meta_set(w, "pid", "42"), 0, "meta set");
	is_int(db_writer__meta_set(w, "pid", "43"), 0, "meta set again replaces");
	is_int(db__meta_get(db_writer__db(w), "pid", &v), 0, "meta get");
	is_str(v, "43", "meta value");
	free(v);
	is_int(db__meta_get(db_writer__db(w), "absent", &v), 0, "absent meta key is not an error");
	ok(v == NULL, "absent meta key gives NULL");
	snprintf(wal, sizeof(wal), "%s-wal", p);
	ok(!stat(wal, &st) && (st.st_mode & 0777) == 0600, "-wal is mode 0600 too");
	is_int(db_writer__close(w), 0, "close");

	is_int(db_writer__create(p, false, &w), -EEXIST, "create over an existing file: -EEXIST");
	ok(w == NULL, "and no handle");
	is_int(db_writer__create(tmp("nodir/x.db"), false, &w), -ENOENT, "create in a missing dir");
}

static void test_checkpoint(void)
{
	const char *p = tmp("b.db");
	struct db_writer *w;
	struct symbol *s = fixture_symbol(0x1000, "/src/a.c", 3, "main", "/bin/a");
	const struct symbol *syms[] = { s };
	struct cpu_count cpu[] = { { 0x1000, 7 }, { 0x1000, 5 } };
	struct heap_count heap[] = { { 0x1000, 9, 100, 40, 2, 1 } };
	uint64_t addrs[] = { 0x1000, 0x2000 };
	struct stack_rec stk = { 9, 0xabcdef, addrs, 2 };
	struct checkpoint cp = {
		.timestamp_ms = 1000, .cpu = cpu, .n_cpu = 2, .heap = heap, .n_heap = 1,
		.symbols = syms, .n_symbols = 1, .stacks = &stk, .n_stacks = 1,
		.lost_samples = 3, .heap_dropped = 4, .heap_live_bytes = 60,
	};
	int64_t id = 0;

	if (db_writer__create(p, false, &w)) {
		ok(0, "create for checkpoints");
		return;
	}
	is_int(db_writer__checkpoint(w, &cp, &id), 0, "write a checkpoint");
	is_int(id, 1, "first checkpoint id is 1");
	cp.timestamp_ms = 2000;
	cp.n_stacks = 0;	/* a stack is handed over once, with its first checkpoint */
	is_int(db_writer__checkpoint(w, &cp, &id), 0, "same symbols again: ignored");
	is_int(id, 2, "second checkpoint id");
	is_int(int_of(db_writer__db(w), "SELECT COUNT(*) FROM symbols"), 1, "one symbol row");
	is_int(int_of(db_writer__db(w), "SELECT COUNT(*) FROM symbol_frames WHERE addr = 4096"), 1,
	       "its frames");
	is_int(int_of(db_writer__db(w), "SELECT cpu_total FROM checkpoints WHERE id = 2"), 12, "cpu_total");
	is_int(int_of(db_writer__db(w), "SELECT heap_alloc_bytes + heap_free_bytes * 1000 + heap_alloc_count"
		      " * 1000000 FROM checkpoints WHERE id = 1"), 2040100, "heap sums");
	is_int(int_of(db_writer__db(w), "SELECT lost_samples * 10 + heap_dropped FROM checkpoints"
		      " WHERE id = 1"), 34, "lost and dropped");
	is_int(int_of(db_writer__db(w), "SELECT heap_live_bytes FROM checkpoints WHERE id = 2"), 60, "live");
	is_int(int_of(db_writer__db(w), "SELECT COUNT(*) FROM stack_frames WHERE stack_id = 9"), 2,
	       "stack frames once");
	is_int(int_of(db_writer__db(w), "SELECT stack_id FROM heap_events LIMIT 1"), 9, "heap row's stack");
	cp.timestamp_ms = 2500;
	cp.n_stacks = 1;
	ok(db_writer__checkpoint(w, &cp, &id) < 0, "a stack id written twice fails, never merges");
	is_int(int_of(db_writer__db(w), "SELECT COUNT(*) FROM checkpoints"), 2,
	       "and its checkpoint is rolled back");
	cp.n_stacks = 0;

	/* an error inside the transaction rolls the whole checkpoint back */
	cp.timestamp_ms = 3000;
	sqlite3_exec(db__sqlite(db_writer__db(w)), "DROP TABLE heap_events", NULL, NULL, NULL);
	ok(db_writer__checkpoint(w, &cp, &id) == -RSPROF_EDB, "failing checkpoint: -RSPROF_EDB");
	is_int(int_of(db_writer__db(w), "SELECT COUNT(*) FROM checkpoints"), 2, "rolled back");
	ok(sqlite3_get_autocommit(db__sqlite(db_writer__db(w))), "no transaction left open");
	is_int(db_writer__close(w), 0, "close");
	symbol__delete(s);
}

static void test_append(void)
{
	const char *p = tmp("c.db");
	struct db_writer *w;
	struct checkpoint cp = { .timestamp_ms = 1000 };
	int64_t id;

	if (db_writer__create(p, false, &w) || db_writer__checkpoint(w, &cp, &id) || db_writer__close(w)) {
		ok(0, "create for append");
		return;
	}
	is_int(db_writer__create(p, true, &w), 0, "append opens an existing profile");
	cp.timestamp_ms = 2000;
	is_int(db_writer__checkpoint(w, &cp, &id), 0, "and writes");
	is_int(id, 2, "continuing the checkpoints");
	db_writer__close(w);
	is_int(db_writer__create(tmp("none.db"), true, &w), -RSPROF_EDB, "append to a missing file");
}

/*
 * Stack ids count up from the file's highest below 2^40, over an append
 * too: the CPU stacks of a second recording never take the ids of the
 * first's. A file from an older rsprof (hashed heap ids anywhere, CPU ids
 * from 2^40) is stepped over the same way.
 */
static void test_stack_ids(void)
{
	const char *p = tmp("ids.db");
	uint64_t addrs[] = { 0x1000 };
	struct stack_rec stk = { 0, 0x77, addrs, 1 };
	struct checkpoint cp = { .timestamp_ms = 1000, .stacks = &stk, .n_stacks = 1 };
	struct db_writer *w;
	int64_t a = 0, b = 0;

	if (db_writer__create(p, false, &w)) {
		ok(0, "create for stack ids");
		return;
	}
	is_int(db_writer__stack_id(w, &a), 0, "a stack id");
	is_int(a, 1, "the first is 1");
	is_int(db_writer__stack_id(w, &b), 0, "another");
	is_int(b, 2, "then 2");
	stk.id = b;
	is_int(db_writer__checkpoint(w, &cp, NULL), 0, "stack 2 written");
	db_writer__close(w);
	if (db_writer__create(p, true, &w)) {
		ok(0, "append for stack ids");
		return;
	}
	is_int(db_writer__stack_id(w, &a), 0, "appended: a stack id");
	is_int(a, 3, "after the file's highest");
	sqlite3_exec(db__sqlite(db_writer__db(w)), "INSERT INTO stacks VALUES (1099511627776, 1, 1),"
		     " (5000000000000000000, 2, 1), (40, 3, 1)", NULL, NULL, NULL);
	db_writer__close(w);
	if (db_writer__create(p, true, &w)) {
		ok(0, "append to an older file");
		return;
	}
	is_int(db_writer__stack_id(w, &a), 0, "older file: a stack id");
	is_int(a, 41, "above its highest below 2^40, below its CPU and hashed ids");
	db_writer__close(w);
}

/* Bytes of a file, for "the reader never changes it". */
static char *slurp(const char *p, size_t *n)
{
	FILE *f = fopen(p, "rb");
	char *buf = NULL;
	long len;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = malloc(len + 1);
	if (buf && fread(buf, 1, len, f) != (size_t)len) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*n = len;
	return buf;
}

static void refused(const char *p, const char *what)
{
	struct db *db = (struct db *)1;
	size_t n0 = 0, n1 = 0;
	char *before = slurp(p, &n0), *after;
	int err = db__open(p, &db);

	after = slurp(p, &n1);
	ok(err == -RSPROF_EDB && db == NULL, "db__open refuses %s (%d)", what, err);
	ok((!before && !after) || (before && after && n0 == n1 && !memcmp(before, after, n0)),
	   "%s: file unchanged", what);
	free(before);
	free(after);
}

static void write_file(const char *p, const char *data, size_t n)
{
	FILE *f = fopen(p, "wb");

	if (f) {
		fwrite(data, 1, n, f);
		fclose(f);
	}
}

static void test_open_errors(void)
{
	sqlite3 *sq;
	const char *p;
	struct db *db;

	refused(tmp("missing.db"), "a missing file");
	p = tmp("text.db");
	write_file(p, "hello, this is not a database at all\n", 37);
	refused(p, "a text file");
	p = tmp("empty.db");
	write_file(p, "", 0);
	refused(p, "an empty file");

	p = tmp("other.db");
	if (sqlite3_open(p, &sq) == SQLITE_OK) {
		sqlite3_exec(sq, "CREATE TABLE t (x); INSERT INTO t VALUES (1)", NULL, NULL, NULL);
		sqlite3_close(sq);
	}
	refused(p, "an SQLite file that is not a profile");
	p = tmp("nover.db");
	if (sqlite3_open(p, &sq) == SQLITE_OK) {
		sqlite3_exec(sq, "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
			     NULL, NULL, NULL);
		sqlite3_close(sq);
	}
	refused(p, "a meta table without version");

	p = tmp("newer.db");
	if (!fixture__write(p, FIXTURE_SMALL) && sqlite3_open(p, &sq) == SQLITE_OK) {
		char sql[128];

		snprintf(sql, sizeof(sql), "UPDATE meta SET value = '%d' WHERE key = 'version'; "
			 "PRAGMA journal_mode = DELETE", RSPROF_SCHEMA_VERSION + 1);
		sqlite3_exec(sq, sql, NULL, NULL, NULL);
		sqlite3_close(sq);
	}
	refused(p, "a newer version");

	p = tmp("trunc.db");
	if (!fixture__write(p, FIXTURE_SMALL)) {
		struct stat st;

		/* fold the WAL into the file, then cut it */
		if (sqlite3_open(p, &sq) == SQLITE_OK) {
			sqlite3_exec(sq, "PRAGMA journal_mode = DELETE", NULL, NULL, NULL);
			sqlite3_close(sq);
		}
		if (!stat(p, &st) && truncate(p, st.st_size / 2) == 0)
			refused(p, "a truncated file");
		else
			ok(0, "truncate");
	}

	p = tmp("good.db");
	if (!fixture__write(p, FIXTURE_SMALL)) {
		is_int(db__open(p, &db), 0, "a good profile opens");
		is_int(db__version(db), RSPROF_SCHEMA_VERSION, "its version");
		ok(sqlite3_exec(db__sqlite(db), "INSERT INTO meta VALUES ('x', 'y')", NULL, NULL,
				NULL) != SQLITE_OK, "the reader cannot write");
		is_int(db__check(db), 0, "integrity check ok");
		db__close(db);
	}
}

/* Rows collected from a query. */
struct rows {
	int n;
	char loc[16][128];
	struct prof_row r[16];
};

static int collect(const struct prof_row *r, void *ctx)
{
	struct rows *rs = ctx;

	if (rs->n < 16) {
		snprintf(rs->loc[rs->n], sizeof(rs->loc[0]), "%s:%d %s",
			 r->file ? strrchr(r->file, '/') + 1 : r->module ? r->module : "?",
			 r->line, r->function ? r->function : "-");
		rs->r[rs->n] = *r;
		rs->r[rs->n].file = rs->r[rs->n].function = rs->r[rs->n].module = NULL;
	}
	rs->n++;
	return 0;
}

static void test_queries(void)
{
	const char *p = tmp("q.db");
	struct query_filter f;
	struct prof_summary sum;
	struct rows rs;
	struct db *db;
	uint64_t total;
	int64_t live;
	double pct = 0;

	if (fixture__write(p, FIXTURE_SMALL) || db__open(p, &db)) {
		ok(0, "fixture for queries");
		return;
	}
	query_filter__init(&f);
	memset(&rs, 0, sizeof(rs));
	is_int(db_query_cpu(db, &f, &total, collect, &rs), 0, "cpu query");
	is_int(total, 1000, "total samples");
	is_int(rs.n, 4, "four lines");
	is_str(rs.loc[0], "hot.c:10 hot_loop", "first: hot.c:10 (two addresses)");
	is_int(rs.r[0].samples, 600, "600 samples");
	is_str(rs.loc[1], "hot.c:20 warm", "second");
	is_str(rs.loc[2], "cold.c:5 cold", "third");
	is_str(rs.loc[3], "/usr/lib/x86_64-linux-gnu/libc.so.6:0 memcpy", "libc without a file");
	for (int i = 0; i < rs.n && i < 16; i++)
		pct += rs.r[i].pct;
	ok(pct > 99.99 && pct < 100.01, "percentages add up to 100 (%.3f)", pct);

	memset(&rs, 0, sizeof(rs));
	f.group = GROUP_FILE;
	db_query_cpu(db, &f, &total, collect, &rs);
	is_int(rs.n, 3, "by file: three");
	is_str(rs.loc[0], "hot.c:0 -", "hot.c first");
	is_int(rs.r[0].samples, 850, "hot.c 850");

	memset(&rs, 0, sizeof(rs));
	f.group = GROUP_MODULE;
	db_query_cpu(db, &f, &total, collect, &rs);
	is_int(rs.n, 2, "by module: two");
	is_int(rs.r[0].samples, 950, "the executable 950");

	query_filter__init(&f);
	f.win.from_ms = 6000;
	memset(&rs, 0, sizeof(rs));
	db_query_cpu(db, &f, &total, collect, &rs);
	is_int(total, 500, "from 6 s: 500 samples");
	is_int(rs.n, 3, "cold is gone");
	is_int(rs.r[1].samples, 175, "warm: 175");

	query_filter__init(&f);
	f.win.to_ms = 5000;
	f.pattern = "COLD";
	memset(&rs, 0, sizeof(rs));
	db_query_cpu(db, &f, &total, collect, &rs);
	is_int(total, 500, "until 5 s: 500 samples");
	is_int(rs.n, 1, "pattern, case-insensitive");
	ok(rs.r[0].pct > 19.99 && rs.r[0].pct < 20.01, "share of the whole window");

	query_filter__init(&f);
	f.threshold_pct = 10;
	f.limit = 2;
	memset(&rs, 0, sizeof(rs));
	db_query_cpu(db, &f, &total, collect, &rs);
	is_int(rs.n, 2, "limit");
	f.limit = 0;
	f.threshold_pct = 20;
	memset(&rs, 0, sizeof(rs));
	db_query_cpu(db, &f, &total, collect, &rs);
	is_int(rs.n, 2, "threshold 20%%: two rows");

	query_filter__init(&f);
	memset(&rs, 0, sizeof(rs));
	is_int(db_query_heap(db, &f, &live, collect, &rs), 0, "heap query");
	is_int(live, 10 * FIX_MB, "total live 10 MB");
	is_int(rs.n, 2, "two sites");
	is_str(rs.loc[0], "cache.rs:42 app::cache::insert", "cache first");
	is_int(rs.r[0].live_bytes, 10 * FIX_MB, "cache live");
	is_int(rs.r[0].peak_bytes, 10 * FIX_MB, "cache peak");
	is_int(rs.r[0].alloc_count, 160, "cache allocations");
	is_int(rs.r[1].live_bytes, 0, "parse: nothing live");
	is_int(rs.r[1].peak_bytes, 10 * FIX_MB, "parse: peak 10 MB");
	is_int(rs.r[1].alloc_bytes, 15 * FIX_MB, "parse: allocated 15 MB");
	is_int(rs.r[1].free_count, 1500, "parse: frees");

	query_filter__init(&f);
	f.at_ms = 5000;
	memset(&rs, 0, sizeof(rs));
	db_query_heap(db, &f, &live, collect, &rs);
	is_int(live, 15 * FIX_MB, "at 5 s: 15 MB live");
	is_str(rs.loc[0], "parse.rs:77 app::parse", "parse first at 5 s");
	is_int(rs.r[0].live_bytes, 10 * FIX_MB, "with 10 MB");

	is_int(db_query_summary(db, &sum), 0, "summary");
	is_int(sum.duration_ms, 10000, "duration");
	is_int(sum.checkpoints, 10, "checkpoints");
	is_int(sum.samples, 1000, "samples");
	is_int(sum.lost_samples, 10, "lost");
	is_int(sum.symbols, 7, "symbols");
	is_int(sum.live_bytes, 10 * FIX_MB, "live");
	is_int(sum.peak_bytes, 15 * FIX_MB, "peak");
	ok(sum.has_heap && sum.finished, "heap and finished");
	is_int(sum.unknown_frees, 3, "unknown frees from meta");
	is_int(sum.heap_sample, 0, "not sampled");
	db__close(db);

	p = tmp("q2.db");
	if (!fixture__write(p, FIXTURE_CPU_ONLY) && !db__open(p, &db)) {
		is_int(db_query_summary(db, &sum), 0, "cpu-only summary");
		ok(!sum.has_heap, "no heap");
		db__close(db);
	}
}

/* A reader follows a file that a writer is still writing (WAL, SPEC §7). */
static void test_live_reader(void)
{
	const char *p = tmp("live.db");
	struct cpu_count cpu[] = { { 0x10, 3 } };
	struct checkpoint cp = { .timestamp_ms = 1000, .cpu = cpu, .n_cpu = 1 };
	struct prof_summary s;
	struct db_writer *w;
	struct db *r;

	if (db_writer__create(p, false, &w) || db_writer__checkpoint(w, &cp, NULL)) {
		ok(0, "writer");
		return;
	}
	is_int(db__open(p, &r), 0, "a reader opens a file being written");
	is_int(db_query_summary(r, &s), 0, "and reads it");
	is_int(s.checkpoints, 1, "one checkpoint so far");
	ok(!s.finished, "not finished");
	cp.timestamp_ms = 2000;
	is_int(db_writer__checkpoint(w, &cp, NULL), 0, "the writer goes on");
	db_query_summary(r, &s);
	is_int(s.checkpoints, 2, "the reader sees the new checkpoint");
	is_int(s.samples, 6, "and its samples");
	is_int(db__snapshot_begin(r), 0, "snapshot");
	cp.timestamp_ms = 3000;
	is_int(db_writer__checkpoint(w, &cp, NULL), 0, "the writer is not blocked by it");
	db_query_summary(r, &s);
	is_int(s.checkpoints, 2, "inside the snapshot: still two");
	is_int(db__snapshot_end(r), 0, "end of snapshot");
	db_query_summary(r, &s);
	is_int(s.checkpoints, 3, "after it: three");
	db__close(r);
	db_writer__close(w);
}

struct stacks_seen {
	int n;
	char line[4][256];
	int64_t value[4], count[4];
};

static int stack_cb(const struct prof_stack *ps, void *ctx)
{
	struct stacks_seen *ss = ctx;
	size_t o = 0;

	if (ss->n >= 4)
		return 0;
	/* innermost first: "fn:line<fn:line|..." ('<' inline caller, '|' next frame) */
	for (int i = 0; i < ps->depth; i++)
		for (int k = 0; k < ps->frames[i].n_lines; k++)
			o += snprintf(ss->line[ss->n] + o, sizeof(ss->line[0]) - o, "%s%s:%d",
				      i || k ? (k ? "<" : "|") : "",
				      ps->frames[i].lines[k].function ?
				      ps->frames[i].lines[k].function : "?",
				      ps->frames[i].lines[k].line);
	ss->value[ss->n] = ps->value;
	ss->count[ss->n] = ps->count;
	ss->n++;
	return 0;
}

/* Heap stacks with inline chains; CPU stacks of a -g profile (cpu_stacks). */
static void test_stacks(void)
{
	const char *p = tmp("stacks.db");
	struct symbol *leaf = fixture_symbol(0x1000, "/src/cache.rs", 42, "app::insert", "/bin/app");
	struct symbol *caller = fixture_symbol(0x2000, "/src/main.rs", 7, "app::main", "/bin/app");
	const struct symbol *syms[] = { leaf, caller };
	uint64_t addrs[] = { 0x1000, 0x2000 };
	struct stack_rec stk = { 5, 0x55, addrs, 2 };
	struct heap_count hc[] = { { 0x1000, 5, 4096, 1024, 4, 1 } };
	struct cpu_count cpu[] = { { 0x1000, 7 } };
	struct checkpoint cp = {
		.timestamp_ms = 1000, .cpu = cpu, .n_cpu = 1, .heap = hc, .n_heap = 1,
		.symbols = syms, .n_symbols = 2, .stacks = &stk, .n_stacks = 1,
	};
	struct query_filter f;
	struct stacks_seen ss;
	struct db_writer *w;
	struct db *db;

	/* leaf: inlined app::helper (frame 1) into app::insert (frame 2) */
	free(leaf->frames[1].function);
	leaf->frames = realloc(leaf->frames, 3 * sizeof(*leaf->frames));
	leaf->frames[1].function = strdup("app::helper");
	leaf->frames[2].file = strdup("/src/cache.rs");
	leaf->frames[2].line = 40;
	leaf->frames[2].function = strdup("app::insert");
	leaf->n_frames = 3;
	if (db_writer__create(p, false, &w) || db_writer__checkpoint(w, &cp, NULL)) {
		ok(0, "stacks fixture");
		return;
	}
	sqlite3_exec(db__sqlite(db_writer__db(w)), "CREATE TABLE cpu_stacks (checkpoint_id,"
		     " stack_id, count); INSERT INTO cpu_stacks VALUES (1, 5, 7)", NULL, NULL, NULL);
	db_writer__close(w);
	if (db__open(p, &db)) {
		ok(0, "open stacks fixture");
		return;
	}
	query_filter__init(&f);
	memset(&ss, 0, sizeof(ss));
	is_int(db_query_stacks(db, &f, true, stack_cb, &ss), 0, "heap stacks");
	is_int(ss.n, 1, "one heap stack");
	is_str(ss.line[0], "app::helper:42<app::insert:40|app::main:7",
	       "frames innermost first, inline chain from the reported frame out");
	is_int(ss.value[0], 3072, "live bytes");
	is_int(ss.count[0], 3, "live allocations");
	memset(&ss, 0, sizeof(ss));
	is_int(db_query_stacks(db, &f, false, stack_cb, &ss), 0, "cpu stacks");
	is_int(ss.n, 1, "one cpu stack");
	is_int(ss.value[0], 7, "its samples");
	f.pattern = "nothing-like-this";
	memset(&ss, 0, sizeof(ss));
	db_query_stacks(db, &f, false, stack_cb, &ss);
	is_int(ss.n, 0, "the pattern filters stacks");
	db__close(db);
	symbol__delete(leaf);
	symbol__delete(caller);
}

/*
 * One checkpoint, one transaction, whatever it carries: a writer killed at
 * any row it writes leaves each checkpoint with all of it (its samples per
 * stack, the map rows its also() hook writes) or leaves the checkpoint out.
 */
#define KILLED_CPS	12

static long kill_at;	/* the writer's: row changes left before it is killed */

static void kill_on_row(void *ctx, int op, const char *db, const char *table, sqlite3_int64 row)
{
	if (--kill_at == 0)
		kill(getpid(), SIGKILL);
}

/* The checkpoint's also(): a map row of "process" id. */
static int killed_also(void *ctx, int64_t id)
{
	struct map_row r = { .start = 0x1000, .end = 0x2000, .perms = "r-xp", .path = "/bin/a" };
	struct map_set set = { .pid = (int)id, .v = &r, .n = 1 };

	return db_writer__write_maps(ctx, &set);
}

/* Write KILLED_CPS checkpoints into p, killed at the at-th row change (0: never). */
static int killed_writer(const char *p, long at)
{
	struct symbol *s = fixture_symbol(0x1000, "/src/a.c", 3, "main", "/bin/a");
	const struct symbol *syms[] = { s };
	uint64_t addrs[] = { 0x1000 };
	struct stack_rec stk[] = { { 1, 0x11, addrs, 1 }, { 2, 0x22, addrs, 1 } };
	struct db_writer *w;
	int status = -1;
	pid_t pid = fork();

	if (pid == 0) {
		if (db_writer__create(p, false, &w) || db_stacks__create(db_writer__db(w)))
			_exit(1);
		kill_at = at;
		sqlite3_update_hook(db__sqlite(db_writer__db(w)), kill_on_row, NULL);
		for (int c = 1; c <= KILLED_CPS; c++) {
			struct cpu_count cpu[] = { { 0x1000, 3 * c } };
			struct stack_count sc[] = { { 1, c }, { 2, 2 * c } };
			struct checkpoint cp = {
				.timestamp_ms = 1000 * c, .cpu = cpu, .n_cpu = 1,
				.symbols = syms, .n_symbols = c == 1, .stacks = stk,
				.n_stacks = c == 1 ? 2 : 0, .stack_counts = sc, .n_stack_counts = 2,
				.also = killed_also, .also_ctx = w,
			};

			if (db_writer__checkpoint(w, &cp, NULL))
				_exit(1);
		}
		_exit(db_writer__close(w) ? 1 : 0);
	}
	symbol__delete(s);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

static void test_killed_writer(void)
{
	const char *p = tmp("killed.db");
	char side[600];
	long at, whole = 0, partial = 0, unread = 0;
	struct db *db;

	/* killed at the first row change, the second, ... until the writer ends */
	for (at = 1; at < 10000; at++) {
		int status;

		unlink(p);
		snprintf(side, sizeof(side), "%s-wal", p);
		unlink(side);
		snprintf(side, sizeof(side), "%s-shm", p);
		unlink(side);
		status = killed_writer(p, at);
		if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
			break;
		if (db__open(p, &db)) {
			unread++;
			continue;
		}
		if (int_of(db, "SELECT COUNT(*) FROM checkpoints c WHERE cpu_total !="
			   " (SELECT IFNULL(SUM(count), 0) FROM cpu_stacks s WHERE s.checkpoint_id ="
			   " c.id) OR NOT EXISTS (SELECT 1 FROM map m WHERE m.pid = c.id)") ||
		    int_of(db, "SELECT COUNT(*) FROM cpu_stacks s WHERE NOT EXISTS (SELECT 1 FROM"
			   " checkpoints c WHERE c.id = s.checkpoint_id)"))
			partial++;
		else
			whole++;
		db__close(db);
	}
	ok(at - 1 >= 5 * KILLED_CPS && at < 10000, "the writer ends after %ld row changes", at - 1);
	is_int(unread, 0, "killed at each of them: the file opens");
	is_int(partial, 0, "no checkpoint without its stack counts or its hook's rows (%ld whole)",
	       whole);
}

static void cleanup(void)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
}

/* CPU time of this process, ms */
static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void burn_ms(double ms)
{
	volatile unsigned long x = 0;
	double end = cpu_ms() + ms;

	while (cpu_ms() < end)
		x += x * 3 + 1;
}

/*
 * The reader's time budget (RSPROF_TIME_LIMIT): each statement outside a
 * snapshot has its own, so a reader that lives long (top following a file)
 * is not cut off once the process has used the budget; an endless
 * statement is stopped.
 */
static void test_budget(void)
{
	static const char count[] = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL"
		" SELECT x + 1 FROM c LIMIT 3000) SELECT COUNT(*) FROM c";
	static const char endless[] = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL"
		" SELECT x + 1 FROM c) SELECT COUNT(*) FROM c";
	const char *p = tmp("budget.db");
	struct user_cbs cbs = { 0 };
	struct db *db;

	if (!ok(!fixture__write(p, FIXTURE_SMALL), "budget: fixture"))
		return;
	setenv("RSPROF_TIME_LIMIT", "50ms", 1);
	is_int(db__open(p, &db), 0, "budget: open with 50 ms");
	if (!db) {
		unsetenv("RSPROF_TIME_LIMIT");
		return;
	}
	burn_ms(120);
	is_int(db_user__run(db, count, 0, &cbs, NULL), 0,
	       "a statement after 120 ms of CPU: its own budget");
	burn_ms(120);
	is_int(db_user__run(db, count, 0, &cbs, NULL), 0, "and the next one");
	is_int(db_user__run(db, endless, 0, &cbs, NULL), -RSPROF_EDB,
	       "an endless statement is stopped (-RSPROF_EDB)");
	db__close(db);
	unsetenv("RSPROF_TIME_LIMIT");
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_create();
	test_checkpoint();
	test_append();
	test_stack_ids();
	test_open_errors();
	test_queries();
	test_live_reader();
	test_stacks();
	test_killed_writer();
	test_budget();
	cleanup();
	return done_testing();
}
