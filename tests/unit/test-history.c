/*
 * The allocation history (util/db/history.h): the layout's invariants and
 * the half-axis query on fixture data, against a brute-force search.
 *
 *   test-history                               the TAP tests
 *   test-history --bench FILE [EVENTS [QUERIES]]
 *   test-history --query FILE [QUERIES]   the queries alone, on a recorded file
 *                                         (record --alloc-history), at addresses
 *                                         and moments of its own allocations
 *                                              write EVENTS (10,000,000) allocations
 *                                              through the writer, then time queries
 */
#include "util/db/write/history.h"
#include "util/db/read/history.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/db/db.h"
#include "util/error.h"
#include "fixture.h"
#include "history-fixture.h"
#include "tap.h"

static char dir[] = "/tmp/rsprof-test-history.XXXXXX";
static char path_buf[512];

static const char *tmp(const char *name)
{
	snprintf(path_buf, sizeof(path_buf), "%s/%s", dir, name);
	return path_buf;
}

static long long int_of(struct db *db, const char *sql)
{
	sqlite3_stmt *st;
	long long v = -1;

	if (sqlite3_prepare_v2(db__sqlite(db), sql, -1, &st, NULL) != SQLITE_OK)
		return -2;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* ---- the small fixture: one address, owned, freed, reused ---------------------- */

static void test_fixture(void)
{
	const char *p = tmp("small.db");
	struct alloc_record r[8];
	struct history_query q = { .addr_first = 0x1000, .addr_last = 0x1000, .limit = 8 };
	struct db *db = NULL;
	bool found, live, present;
	uint64_t events;
	int n;

	is_int(history_fixture__write(p), 0, "fixture written through the writer");
	is_int(db__open(p, &db), 0, "and opens");
	if (!db)
		return;
	is_int(db_history_present(db, &present, &events), 0, "history present query");
	ok(present && events == 4, "4 events");
	is_int(int_of(db, "SELECT COUNT(*) FROM alloc_slices"), 2, "two flushes: two slices");
	is_int(int_of(db, "SELECT time_free FROM alloc_events WHERE addr = 12288"), S(5),
	       "a free after the flush updated the written row");

	is_int(db_history_query(db, &q, r, &n), 0, "forward from 0 at 0x1000");
	is_int(n, 2, "A and B");
	ok(n == 2 && r[0].size == 64 && r[0].freed && r[0].time_free == S(2) &&
	   r[0].site == 0x401400 && r[0].stack_id == -1, "A: 64 B, freed at 2 s, its site");
	ok(n == 2 && r[1].size == 32 && !r[1].freed && r[1].time_alloc == S(3), "B: live");

	q.backward = true;
	q.time_ns = S(3) - 1;
	is_int(db_history_query(db, &q, r, &n), 0, "backward from just before 3 s");
	ok(n == 1 && r[0].size == 64, "only A");

	is_int(db_history_owner(db, 0x1010, S(1.5), r, &found, &live), 0, "owner at 1.5 s");
	ok(found && live && r[0].size == 64, "A owned 0x1010 at 1.5 s");
	db_history_owner(db, 0x1010, S(2.5), r, &found, &live);
	ok(found && !live && r[0].size == 64, "at 2.5 s it was free (A freed at 2 s)");
	db_history_owner(db, 0x1010, S(3), r, &found, &live);
	ok(found && live && r[0].size == 32, "at 3 s B owns it: the reuse");
	db_history_owner(db, 0x1030, S(3.5), r, &found, &live);
	ok(found && !live && r[0].size == 64, "0x1030 is past B's 32 bytes: free since A");
	db_history_owner(db, 0x1000, S(1) - 1, r, &found, &live);
	ok(!found, "before any allocation: no owner");
	db_history_owner(db, 0x2008, S(2), r, &found, &live);
	ok(found && live && r[0].size == 16 && r[0].stack_id == 7, "C at 0x2008, its stack");

	/* a range: everything from 0x1000 to 0x2fff, forward, pages of one */
	q = (struct history_query){ .addr_first = 0x1000, .addr_last = 0x2fff, .limit = 1 };
	db_history_query(db, &q, r, &n);
	ok(n == 1 && r[0].time_alloc == S(1), "page 1: A");
	q.after_id = r[0].id;
	db_history_query(db, &q, r, &n);
	ok(n == 1 && r[0].time_alloc == S(1.5), "page 2: C (resumed by row id)");
	q.after_id = r[0].id;
	db_history_query(db, &q, r, &n);
	ok(n == 1 && r[0].time_alloc == S(3), "page 3: B, in the next slice");
	q.after_id = r[0].id;
	db_history_query(db, &q, r, &n);
	ok(n == 0, "page 4: none");
	db__close(db);
}

/* ---- random histories against a brute-force search ------------------------------ */

struct ref {
	int64_t id;
	uint64_t t, addr, size, tf;
	bool freed;
};

static uint64_t rng = 88172645463325252ull;

static uint64_t xr(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/*
 * A small allocator: slots of 64 bytes and a LIFO free list (as malloc's
 * caches: the block freed last is handed out next, so addresses are reused
 * again and again). Calls the writer and fills ref (1 + index per slot).
 */
struct sim {
	uint64_t *slot_live;	/* per slot: 1 + ref index, or 0 */
	uint32_t *free_list;
	uint32_t *live_list, *live_pos;	/* live slots, and each one's place in the list */
	int n_free, n_live, n_slots;
	uint64_t t;
};

static void sim_init(struct sim *s, int slots)
{
	memset(s, 0, sizeof(*s));
	s->n_slots = slots;
	s->slot_live = calloc(slots, sizeof(*s->slot_live));
	s->free_list = calloc(slots, sizeof(*s->free_list));
	s->live_list = calloc(slots, sizeof(*s->live_list));
	s->live_pos = calloc(slots, sizeof(*s->live_pos));
	for (int i = slots - 1; i >= 0; i--)
		s->free_list[s->n_free++] = (uint32_t)i;
}

static void sim_exit(struct sim *s)
{
	free(s->slot_live);
	free(s->free_list);
	free(s->live_list);
	free(s->live_pos);
}

static int sim_step(struct sim *s, struct history_writer *w, struct ref *ref, int *n_ref)
{
	uint64_t base = 0x10000;

	s->t += 1 + xr() % 50;
	if (s->n_free > 0 && (s->n_live < s->n_slots / 4 || xr() % 100 < 50)) {
		uint32_t slot = s->free_list[--s->n_free];
		uint64_t size = 1 + xr() % 64;
		struct ref *r = &ref[*n_ref];

		*r = (struct ref){ .id = *n_ref + 1, .t = s->t, .addr = base + slot * 64ull,
				   .size = size };
		s->slot_live[slot] = (uint64_t)++*n_ref;
		s->live_pos[slot] = (uint32_t)s->n_live;
		s->live_list[s->n_live++] = slot;
		return history_writer__alloc(w, s->t, r->addr, size, 0x400000 + slot, -1);
	}
	if (s->n_live > 0) {
		uint32_t at = (uint32_t)(xr() % s->n_live), slot = s->live_list[at];

		ref[s->slot_live[slot] - 1].freed = true;
		ref[s->slot_live[slot] - 1].tf = s->t;
		s->slot_live[slot] = 0;
		s->live_list[at] = s->live_list[--s->n_live];
		s->live_pos[s->live_list[at]] = at;
		s->free_list[s->n_free++] = slot;
		return history_writer__free(w, s->t, base + slot * 64ull);
	}
	return 0;
}

static int brute(const struct ref *ref, int n_ref, const struct history_query *q,
		 struct ref *out)
{
	int n = 0;

	if (!q->backward) {
		for (int i = 0; i < n_ref && n < q->limit; i++)
			if (ref[i].t >= q->time_ns && ref[i].addr <= q->addr_last &&
			    ref[i].addr + ref[i].size > q->addr_first)
				out[n++] = ref[i];
	} else {
		for (int i = n_ref - 1; i >= 0 && n < q->limit; i--)
			if (ref[i].t <= q->time_ns && ref[i].addr <= q->addr_last &&
			    ref[i].addr + ref[i].size > q->addr_first)
				out[n++] = ref[i];
	}
	return n;
}

static void test_random(void)
{
	const char *p = tmp("random.db");
	const int events = 300000, slots = 4096;
	struct sim s = { 0 };
	struct ref *ref = calloc(events, sizeof(*ref)), want[32];
	struct alloc_record got[32];
	struct history_writer *w = NULL;
	struct db *db = NULL;
	int n_ref = 0, err, bad = 0;

	sim_init(&s, slots);
	err = db__create(p, false, &db);
	if (!err)
		err = history_writer__new(db, &w);
	while (!err && n_ref < events) {
		err = sim_step(&s, w, ref, &n_ref);
		/* flushes at odd moments: short slices too */
		if (!err && xr() % 20000 == 0)
			err = history_writer__flush(w);
	}
	if (history_writer__delete(w) && !err)
		err = -1;
	is_int(err, 0, "%d random allocations written", events);
	db__close(db);
	db = NULL;
	is_int(db__open(p, &db), 0, "reopened read-only");
	if (!db)
		goto out;
	ok(int_of(db, "SELECT COUNT(*) FROM alloc_slices") >= events / HISTORY_SLICE_MAX + 1,
	   "several slices (%lld)", int_of(db, "SELECT COUNT(*) FROM alloc_slices"));
	is_int(int_of(db, "SELECT COUNT(*) FROM alloc_slices a JOIN alloc_slices b ON b.id = a.id + 1"
		      " WHERE b.time_first < a.time_last OR a.time_first > a.time_last"), 0,
	       "slices in time order, never overlapping");
	is_int(int_of(db, "SELECT COUNT(*) FROM alloc_chunks a JOIN alloc_chunks b"
		      " ON a.slice_id = b.slice_id AND a.kind = b.kind AND a.id < b.id"
		      " WHERE a.addr_first <= b.addr_last AND b.addr_first <= a.addr_last"), 0,
	       "chunks of a slice never overlap");
	is_int(int_of(db, "SELECT COUNT(*) FROM alloc_events e JOIN alloc_chunks c"
		      " ON c.id = e.chunk_id JOIN alloc_slices s ON s.id = c.slice_id"
		      " WHERE e.addr < c.addr_first OR e.addr + MAX(e.size, 1) - 1 > c.addr_last"
		      " OR e.time_alloc < s.time_first OR e.time_alloc > s.time_last"), 0,
	       "every event inside its chunk and its slice");
	is_int(int_of(db, "SELECT COUNT(*) FROM alloc_events a JOIN alloc_events b ON b.id = a.id + 1"
		      " WHERE b.time_alloc < a.time_alloc"), 0, "rowid order is time order");
	is_int(int_of(db, "SELECT COUNT(*) FROM alloc_events"), events, "one row per allocation");
	for (int k = 0; k < 3000; k++) {
		struct history_query q = { .limit = 1 + (int)(xr() % 20), .backward = xr() % 2 };
		uint64_t a = 0x10000 + xr() % (slots * 64ull + 256) - 128;
		int nw, ng;

		q.addr_first = a;
		q.addr_last = a + (xr() % 4 ? 0 : xr() % 512);
		q.time_ns = xr() % (s.t + 1000);
		nw = brute(ref, n_ref, &q, want);
		if (db_history_query(db, &q, got, &ng)) {
			bad++;
			break;
		}
		for (int i = 0; i < nw && ng == nw; i++) {
			if (got[i].id != want[i].id || got[i].time_alloc != want[i].t ||
			    got[i].freed != want[i].freed || (want[i].freed &&
			    got[i].time_free != want[i].tf))
				ng = -1;
		}
		if (ng != nw) {
			if (!bad++)
				printf("# query %d: [%#llx, %#llx] at %llu %s n=%d: got %d, want %d\n",
				       k, (unsigned long long)q.addr_first,
				       (unsigned long long)q.addr_last,
				       (unsigned long long)q.time_ns, q.backward ? "back" : "fwd",
				       q.limit, ng, nw);
		}
	}
	is_int(bad, 0, "3,000 random half-axis queries agree with a brute-force search");
	/* owners at random moments, as `history --at` asks */
	bad = 0;
	for (int k = 0; k < 2000; k++) {
		uint64_t a = 0x10000 + xr() % (slots * 64ull), t = xr() % (s.t + 1);
		struct history_query q = { .addr_first = a, .addr_last = a, .time_ns = t,
					   .backward = true, .limit = 1 };
		struct alloc_record o;
		bool found, live;
		int nw = brute(ref, n_ref, &q, want);

		db_history_owner(db, a, t, &o, &found, &live);
		if (found != (nw == 1) || (found && (o.id != want[0].id ||
		    live != (!want[0].freed || want[0].tf > t))))
			bad++;
	}
	is_int(bad, 0, "2,000 owners at random moments");
out:
	db__close(db);
	free(ref);
	sim_exit(&s);
}

static void test_version(void)
{
	struct db *db = NULL;
	struct history_writer *w = NULL;
	const char *p = tmp("v2.db");
	sqlite3 *sq;
	bool present;
	uint64_t n;

	if (db__create(p, false, &db))
		return;
	db__close(db);
	if (sqlite3_open(p, &sq) == SQLITE_OK) {
		sqlite3_exec(sq, "DROP TABLE alloc_events; DROP TABLE alloc_chunks;"
			     " DROP TABLE alloc_slices; UPDATE meta SET value = '2'"
			     " WHERE key = 'version'", NULL, NULL, NULL);
		sqlite3_close(sq);
	}
	is_int(db__open(p, &db), 0, "a version-2 file opens");
	is_int(db_history_present(db, &present, &n), 0, "history of a version-2 file");
	ok(!present, "none");
	db__close(db);
	(void)w;
}

/* ---- the benchmark -------------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int dbl_cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Wall time per query (what a user waits) and CPU time (what the query
 * costs: on a loaded machine the wall time also holds the time the thread
 * waited for a core).
 */
static void bench_queries(struct db *db, const char *what, int nq, uint64_t span, int slots,
			  int mode)
{
	double *ms = calloc(nq, sizeof(*ms)), *cpu = calloc(nq, sizeof(*cpu));
	struct alloc_record r[16];

	for (int k = 0; k < nq; k++) {
		uint64_t a = 0x10000 + xr() % (slots * 64ull), t = xr() % span;
		struct history_query q = { .addr_first = a, .addr_last = a, .time_ns = t,
					   .limit = mode == 1 ? 10 : 1, .backward = mode != 1 };
		double t0, c0;
		bool f, l;
		int n;

		if (mode == 2)
			q.addr_first = q.addr_last = 0x10;	/* never allocated: every slice */
		t0 = now_s();
		c0 = cpu_s();
		if (mode == 0)
			db_history_owner(db, a, t, r, &f, &l);
		else
			db_history_query(db, &q, r, &n);
		cpu[k] = (cpu_s() - c0) * 1e3;
		ms[k] = (now_s() - t0) * 1e3;
	}
	qsort(ms, nq, sizeof(*ms), dbl_cmp);
	qsort(cpu, nq, sizeof(*cpu), dbl_cmp);
	printf("%s (%d queries)\n  wall: median %.3f ms  p99 %.3f ms  max %.3f ms\n"
	       "  cpu:  median %.3f ms  p99 %.3f ms  max %.3f ms\n", what, nq, ms[nq / 2],
	       ms[nq * 99 / 100], ms[nq - 1], cpu[nq / 2], cpu[nq * 99 / 100], cpu[nq - 1]);
	free(ms);
	free(cpu);
}

static int bench(const char *path, long events, int nq)
{
	const int slots = 200000;
	struct sim s = { 0 };
	struct ref *ref = calloc(1, sizeof(*ref));
	struct history_writer *w = NULL;
	struct history_stats hs;
	struct db *db = NULL;
	struct stat st;
	double t0, t1;
	int n_ref = 0, err;

	sim_init(&s, slots);
	unlink(path);
	err = db__create(path, false, &db);
	if (!err)
		err = history_writer__new(db, &w);
	t0 = now_s();
	for (long i = 0; !err && i < events;) {
		/* ref keeps one entry: the benchmark needs no brute force */
		n_ref = 0;
		err = sim_step(&s, w, ref, &n_ref);
		i += n_ref;
	}
	if (!err)
		err = history_writer__flush(w);
	t1 = now_s();
	history_writer__stats(w, &hs);
	if (history_writer__delete(w) && !err)
		err = -1;
	if (db__close(db) && !err)
		err = -1;
	if (err) {
		fprintf(stderr, "bench: writing failed\n");
		return 1;
	}
	stat(path, &st);
	printf("wrote %ld allocations (%llu frees) in %.1f s: %.0f per second,"
	       " %llu slices, %llu chunks\n", events, (unsigned long long)hs.frees, t1 - t0,
	       events / (t1 - t0), (unsigned long long)hs.slices, (unsigned long long)hs.chunks);
	printf("file: %.1f MiB, %.1f bytes per allocation, %.1f MiB per million allocations\n",
	       st.st_size / 1048576.0, (double)st.st_size / events,
	       st.st_size / 1048576.0 / (events / 1e6));
	if (db__open(path, &db))
		return 1;
	/* a first pass reads the file into the page cache, as any first look does */
	bench_queries(db, "owner of an address at a moment, cold (n=1, backward)", nq, s.t,
		      slots, 0);
	bench_queries(db, "owner of an address at a moment (n=1, backward)", nq, s.t, slots, 0);
	bench_queries(db, "the next 10 allocations at an address (forward)", nq, s.t, slots, 1);
	bench_queries(db, "an address never allocated (walks every slice)", nq / 10 + 1, s.t,
		      slots, 2);
	db__close(db);
	free(ref);
	sim_exit(&s);
	return 0;
}

/* Queries on a recorded history: owners at the addresses and moments of random events. */
static int bench_file(const char *path, int nq)
{
	struct db *db = NULL;
	sqlite3_stmt *st;
	uint64_t *a = calloc(nq, sizeof(*a)), *t = calloc(nq, sizeof(*t));
	double *ms = calloc(nq, sizeof(*ms)), *cpu = calloc(nq, sizeof(*cpu));
	int n = 0;

	if (!a || !t || !ms || !cpu || db__open(path, &db))
		return 1;
	if (sqlite3_prepare_v2(db__sqlite(db), "SELECT addr + size / 2, time_alloc + 1000 FROM"
			       " alloc_events WHERE id IN (SELECT abs(random()) % (SELECT MAX(id)"
			       " FROM alloc_events) + 1 FROM alloc_events LIMIT ?)", -1, &st,
			       NULL) != SQLITE_OK)
		return 1;
	sqlite3_bind_int(st, 1, nq);
	while (n < nq && sqlite3_step(st) == SQLITE_ROW) {
		a[n] = (uint64_t)sqlite3_column_int64(st, 0);
		t[n] = (uint64_t)sqlite3_column_int64(st, 1);
		n++;
	}
	sqlite3_finalize(st);
	for (int pass = 0; pass < 2; pass++) {
		int found = 0;

		for (int k = 0; k < n; k++) {
			struct alloc_record r;
			double t0 = now_s(), c0 = cpu_s();
			bool f, l;

			db_history_owner(db, a[k], t[k], &r, &f, &l);
			cpu[k] = (cpu_s() - c0) * 1e3;
			ms[k] = (now_s() - t0) * 1e3;
			found += f && l;
		}
		qsort(ms, n, sizeof(*ms), dbl_cmp);
		qsort(cpu, n, sizeof(*cpu), dbl_cmp);
		printf("owner of an allocation's address just after it was made, %s (%d queries,"
		       " %d owners live then)\n  wall: median %.3f ms  p99 %.3f ms  max %.3f ms\n"
		       "  cpu:  median %.3f ms  p99 %.3f ms  max %.3f ms\n", pass ? "warm" : "cold",
		       n, found, ms[n / 2], ms[n * 99 / 100], ms[n - 1], cpu[n / 2],
		       cpu[n * 99 / 100], cpu[n - 1]);
	}
	db__close(db);
	free(a);
	free(t);
	free(ms);
	free(cpu);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "--query"))
		return bench_file(argv[2], argc > 3 ? atoi(argv[3]) : 1000);
	if (argc >= 3 && !strcmp(argv[1], "--bench"))
		return bench(argv[2], argc > 3 ? atol(argv[3]) : 10000000,
			     argc > 4 ? atoi(argv[4]) : 1000);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_fixture();
	test_random();
	test_version();
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			printf("# could not remove %s\n", dir);
	}
	return done_testing();
}
