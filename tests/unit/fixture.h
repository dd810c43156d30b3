#ifndef RSPROF_TESTS_FIXTURE_H
#define RSPROF_TESTS_FIXTURE_H

/*
 * Fixture profiles written through db_writer__create() + db_writer__checkpoint(),
 * with hand-made symbols and known counts (no kernel needed). Used by
 * tests/unit/test-db.c and, through tests/helper/fixture (`fixture FILE
 * [KIND]`), by the shell tests of the readers and the benchmarks.
 *
 * The small fixture: 10 checkpoints at 1000, 2000, ... 10000 ms.
 *   CPU per checkpoint         cp 1-5   cp 6-10   total   share
 *   src/hot.c:10  hot_loop      60       60        600     60 %  (two addresses)
 *   src/hot.c:20  warm          15       35        250     25 %
 *   src/cold.c:5  cold          20        0        100     10 %
 *   [libc.so.6]   memcpy         5        5         50      5 %
 *   10 samples lost in checkpoint 3.
 *   Heap per checkpoint
 *   src/cache.rs:42 app::cache::insert   +1 MB (16 allocs), never freed: 10 MB live
 *   src/parse.rs:77 app::parse           cp 1-5: +3 MB -1 MB; cp 6-10: -2 MB:
 *                                        peak 10 MB at cp 5, 0 live at the end
 *   total live 10 MB at the end, peak 15 MB at cp 5.
 */
#include <stdbool.h>
#include <stdint.h>

#define FIX_MB (1024 * 1024)

enum fixture_kind {
	FIXTURE_SMALL,
	FIXTURE_BIG,		/* 3,600 checkpoints x 1,000 addresses, CPU and heap */
	FIXTURE_BIG_RETAIN,	/* the same with record --retain 10m */
	FIXTURE_DAY,		/* 86,400 checkpoints x 100 addresses, --retain 1h */
	FIXTURE_CPU_ONLY,	/* the small one without heap rows */
};

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/db/db.h"
#include "util/db/write/writer.h"
#include "util/db/wal-checkpointer.h"
#include "util/symbols/symbol.h"

struct fixture_sym {
	uint64_t addr;
	const char *file;
	int line;
	const char *function;
	const char *module;
};

static const struct fixture_sym fixture_syms[] = {
	{ 0x401000, "/home/dev/proj/src/hot.c", 10, "hot_loop", "/home/dev/proj/fixture" },
	{ 0x401008, "/home/dev/proj/src/hot.c", 10, "hot_loop", "/home/dev/proj/fixture" },
	{ 0x401100, "/home/dev/proj/src/hot.c", 20, "warm", "/home/dev/proj/fixture" },
	{ 0x401200, "/home/dev/proj/src/cold.c", 5, "cold", "/home/dev/proj/fixture" },
	{ 0x7f0000002000, NULL, 0, "memcpy", "/usr/lib/x86_64-linux-gnu/libc.so.6" },
	{ 0x401300, "/home/dev/proj/src/cache.rs", 42, "app::cache::insert",
	  "/home/dev/proj/fixture" },
	{ 0x401400, "/home/dev/proj/src/parse.rs", 77, "app::parse", "/home/dev/proj/fixture" },
};

#define FIXTURE_NSYMS ((int)(sizeof(fixture_syms) / sizeof(fixture_syms[0])))

/* A struct symbol with one frame (plus a toolchain frame for the Rust ones). */
static struct symbol *fixture_symbol(uint64_t addr, const char *file, int line,
				     const char *function, const char *module)
{
	struct symbol *s = calloc(1, sizeof(*s));
	bool rust = file && strstr(file, ".rs");

	if (!s)
		return NULL;
	s->addr = addr;
	s->module = module ? strdup(module) : NULL;
	s->n_frames = rust ? 2 : 1;
	s->frames = calloc(s->n_frames, sizeof(*s->frames));
	if (rust) {
		s->frames[0].file = strdup("/rustc/abc/library/alloc/src/raw_vec.rs");
		s->frames[0].line = 500;
		s->frames[0].function = strdup("alloc::raw_vec::RawVec<T>::grow");
	}
	s->chosen = s->n_frames - 1;
	s->frames[s->chosen].file = file ? strdup(file) : NULL;
	s->frames[s->chosen].line = line;
	s->frames[s->chosen].function = function ? strdup(function) : NULL;
	s->has_debuginfo = file != NULL;
	return s;
}

static int fixture_meta(struct db_writer *db, const char *name, unsigned int n_cp)
{
	int err = db_writer__meta_set_int(db, "pid", 4242);

	if (!err)
		err = db_writer__meta_set(db, "process_name", name);
	if (!err)
		err = db_writer__meta_set(db, "exe_path", "/home/dev/proj/fixture");
	if (!err)
		err = db_writer__meta_set(db, "start_time", "2026-11-22T05:00:00Z");
	if (!err)
		err = db_writer__meta_set_int(db, "checkpoint_interval_ms", 1000);
	if (!err)
		err = db_writer__meta_set_int(db, "cpu_freq_hz", 99);
	if (!err)
		err = db_writer__meta_set(db, "end_time", "2026-11-22T05:00:10Z");
	if (!err)
		err = db_writer__meta_set_int(db, "duration_ms", n_cp * 1000LL);
	if (!err)
		err = db_writer__meta_set(db, "stop_reason", "duration");
	return err;
}

static int fixture_small(struct db_writer *db, bool heap)
{
	struct symbol *syms[FIXTURE_NSYMS] = { NULL };
	int64_t parse_live = 0, cache_live = 0;
	int err = fixture_meta(db, "fixture", 10);

	for (int i = 0; i < FIXTURE_NSYMS && !err; i++) {
		const struct fixture_sym *f = &fixture_syms[i];

		syms[i] = fixture_symbol(f->addr, f->file, f->line, f->function, f->module);
		if (!syms[i])
			err = -1;
	}
	for (int c = 1; c <= 10 && !err; c++) {
		bool first = c <= 5;
		struct cpu_count cpu[] = {
			{ 0x401000, 30 }, { 0x401008, 30 },
			{ 0x401100, first ? 15 : 35 },
			{ 0x7f0000002000, 5 },
			{ 0x401200, 20 },	/* first half only */
		};
		struct heap_count hc[2] = {
			{ 0x401300, -1, FIX_MB, 0, 16, 0 },
			{ 0x401400, -1, first ? 3 * FIX_MB : 0, first ? FIX_MB : 2 * FIX_MB,
			  first ? 300 : 0, first ? 100 : 200 },
		};
		struct checkpoint cp = {
			.timestamp_ms = c * 1000,
			.cpu = cpu,
			.n_cpu = first ? 5 : 4,
			.heap = hc,
			.n_heap = heap ? 2 : 0,
			.lost_samples = c == 3 ? 10 : 0,
		};

		cache_live += hc[0].alloc_bytes - hc[0].free_bytes;
		parse_live += hc[1].alloc_bytes - hc[1].free_bytes;
		cp.heap_live_bytes = heap ? cache_live + parse_live : 0;
		if (c == 1) {
			/* lazy symbols: the heap ones only when heap rows refer to them */
			cp.symbols = (const struct symbol *const *)syms;
			cp.n_symbols = heap ? FIXTURE_NSYMS : FIXTURE_NSYMS - 2;
		}
		err = db_writer__checkpoint(db, &cp, NULL);
	}
	if (!err && heap) {
		err = db_writer__meta_set(db, "heap_probes", "rust");
		if (!err)
			err = db_writer__meta_set_int(db, "unknown_frees", 3);
		if (!err)
			err = db_writer__meta_set_int(db, "unknown_free_bytes", 300);
	}
	for (int i = 0; i < FIXTURE_NSYMS; i++)
		symbol__delete(syms[i]);
	return err;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of v[from..to) (sorted in place). */
static double fixture_median(double *v, int from, int to)
{
	if (to <= from)
		return 0;
	qsort(v + from, to - from, sizeof(*v), cmp_double);
	return v[from + (to - from) / 2];
}

static const int fixture_minutes[] = { 1, 10, 60 };

/* A checkpoint of minute 1, 10 or 60 (1-based ids at one a second). */
static bool fixture_paced(int c)
{
	return (c >= 1 && c <= 60) || (c > 540 && c <= 600) || (c > 3540 && c <= 3600);
}

static double fixture_ms(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1e3 + (b->tv_nsec - a->tv_nsec) / 1e6;
}

/*
 * ncp checkpoints at 1 s of naddr CPU and naddr heap addresses each, written
 * through the writer (with record --retain retain_ms when not 0). On stderr,
 * the checkpoint write time (wall and the writer's CPU) at minutes 1, 10
 * and 60: the median of that minute's checkpoints.
 */
static int fixture_series(struct db_writer *db, const char *name, int ncp, int naddr,
			  uint64_t retain_ms)
{
	struct symbol **syms = calloc(2 * naddr, sizeof(*syms));
	struct cpu_count *cpu = calloc(naddr, sizeof(*cpu));
	struct heap_count *hc = calloc(naddr, sizeof(*hc));
	double *wall = calloc(ncp + 1, sizeof(double)), *cpus = calloc(ncp + 1, sizeof(double));
	double max_ms = 0, cpu_max = 0;
	int64_t live = 0, temps = 0;
	int max_at = 0, cpu_max_at = 0;
	int pace_ms = getenv("FIXTURE_PACE_MS") ? atoi(getenv("FIXTURE_PACE_MS")) : 0;
	struct timespec pace_next = { 0 };
	struct wal_checkpointer_stats ws[3][2] = { 0 };
	int err = fixture_meta(db, name, ncp);

	if (!syms || !cpu || !hc || !wall || !cpus)
		err = -1;
	if (!err && retain_ms)
		err = db_writer__set_retain(db, retain_ms);
	/* FIXTURE_COMPACT_MS: compaction age (0: none; unset: the writer's default) */
	if (!err && getenv("FIXTURE_COMPACT_MS"))
		err = db_writer__set_compact(db, strtoull(getenv("FIXTURE_COMPACT_MS"), NULL, 10));
	for (int i = 0; i < 2 * naddr && !err; i++) {
		char file[64], fn[64];

		snprintf(file, sizeof(file), "/home/dev/big/src/mod%d.rs", i % 50);
		snprintf(fn, sizeof(fn), "big::mod%d::f%d", i % 50, i / 10);
		syms[i] = fixture_symbol(0x500000 + 16 * i, file, 10 + i, fn, "/home/dev/big/big");
		if (!syms[i])
			err = -1;
	}
	for (int c = 1; c <= ncp && !err; c++) {
		struct checkpoint cp = { .timestamp_ms = c * 1000ULL };
		struct timespec t0, t1, c0, c1;

		/*
		 * FIXTURE_PACE_MS: the checkpoints of minutes 1, 10 and 60 one every
		 * that many ms, as a recorder writes them (the WAL is folded back
		 * by its thread between them); the others as fast as they go.
		 */
		if (pace_ms && fixture_paced(c)) {
			struct timespec now;

			clock_gettime(CLOCK_MONOTONIC, &now);
			if (fixture_paced(c - 1) && (now.tv_sec < pace_next.tv_sec ||
			    (now.tv_sec == pace_next.tv_sec && now.tv_nsec < pace_next.tv_nsec)))
				clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &pace_next, NULL);
			clock_gettime(CLOCK_MONOTONIC, &pace_next);
			pace_next.tv_nsec += (long)pace_ms * 1000000L;
			while (pace_next.tv_nsec >= 1000000000L) {
				pace_next.tv_nsec -= 1000000000L;
				pace_next.tv_sec++;
			}
		}
		for (int i = 0; i < naddr; i++) {
			cpu[i].addr = 0x500000 + 16 * i;
			cpu[i].count = 1 + (i * 7 + c) % 13;
			hc[i].addr = 0x500000 + 16 * (naddr + i);
			hc[i].stack_id = -1;
			hc[i].alloc_bytes = 64 * (1 + (i + c) % 17);
			hc[i].free_bytes = (i % 3) ? hc[i].alloc_bytes : 0;
			hc[i].alloc_count = 1;
			hc[i].free_count = (i % 3) ? 1 : 0;
			/* as the in-process tracker counts them (heap_backend preload):
			 * on every row, the sites freed at once every other checkpoint */
			hc[i].temp_count = (i % 3 == 1 && c % 2) ? hc[i].free_count : 0;
			temps += hc[i].temp_count;
			live += hc[i].alloc_bytes - hc[i].free_bytes;
		}
		cp.cpu = cpu;
		cp.n_cpu = naddr;
		cp.heap = hc;
		cp.n_heap = naddr;
		cp.heap_live_bytes = live;
		if (c == 1) {
			cp.symbols = (const struct symbol *const *)syms;
			cp.n_symbols = 2 * naddr;
		}
		/* the WAL thread's work over minutes 1, 10 and 60 */
		for (int m = 0; m < 3; m++)
			if (c == fixture_minutes[m] * 60 - 59)
				db_writer__wal_stats(db, &ws[m][0]);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
		err = db_writer__checkpoint(db, &cp, NULL);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		wall[c] = fixture_ms(&t0, &t1);
		cpus[c] = fixture_ms(&c0, &c1);
		if (getenv("FIXTURE_SPIKES") && wall[c] > 30)
			fprintf(stderr, "spike: checkpoint %d %.1f ms (cpu %.1f)\n", c, wall[c], cpus[c]);
		/* after the minute's last write: its copy is the next write's wait */
		for (int m = 0; m < 3; m++)
			if (c == fixture_minutes[m] * 60)
				db_writer__wal_stats(db, &ws[m][1]);
		if (wall[c] > max_ms) {
			max_ms = wall[c];
			max_at = c;
		}
		if (cpus[c] > cpu_max) {
			cpu_max = cpus[c];
			cpu_max_at = c;
		}
	}
	if (!err) {
		double w[3], u[3];

		for (int m = 0; m < 3; m++) {
			int to = fixture_minutes[m] * 60 + 1, from = to - 60;

			w[m] = to <= ncp + 1 ? fixture_median(wall, from, to) : 0;
			u[m] = to <= ncp + 1 ? fixture_median(cpus, from, to) : 0;
		}
		double p99, cpu_p99, paced_max = 0;

		/* the medians sorted each minute in place: its maximum stays */
		for (int c = 1; c <= ncp; c++)
			if (fixture_paced(c) && wall[c] > paced_max)
				paced_max = wall[c];
		/* the 99th percentiles of the whole run (sorted from here on) */
		qsort(wall + 1, ncp, sizeof(double), cmp_double);
		p99 = wall[1 + (int)(0.99 * (ncp - 1))];
		qsort(cpus + 1, ncp, sizeof(double), cmp_double);
		cpu_p99 = cpus[1 + (int)(0.99 * (ncp - 1))];
		fprintf(stderr, "checkpoint write (median of the minute, wall / writer CPU):"
			" minute 1: %.1f / %.1f ms, minute 10: %.1f / %.1f ms, minute 60: %.1f / %.1f ms",
			w[0], u[0], w[1], u[1], w[2], u[2]);
		if (pace_ms)
			fprintf(stderr, " (these minutes one every %d ms, max %.1f ms)", pace_ms,
				paced_max);
		fprintf(stderr, "\ncheckpoint write over all %d checkpoints (wall / writer CPU):"
			" 99th percentile %.1f / %.1f ms, max %.1f ms (checkpoint %d) /"
			" %.1f ms (checkpoint %d)\n", ncp, p99, cpu_p99, max_ms, max_at, cpu_max,
			cpu_max_at);
		fprintf(stderr, "WAL copied into the file by its thread (mean of the minute,"
			" its CPU / wall, the writer's wait):");
		for (int m = 0; m < 3; m++) {
			uint64_t n = ws[m][1].copies - ws[m][0].copies;

			if (fixture_minutes[m] * 60 > ncp)
				continue;
			fprintf(stderr, "%s minute %d: %.1f / %.1f / %.1f ms (%llu copies)",
				m ? "," : "", fixture_minutes[m],
				n ? (ws[m][1].cpu_ns - ws[m][0].cpu_ns) / 1e6 / n : 0,
				n ? (ws[m][1].wall_ns - ws[m][0].wall_ns) / 1e6 / n : 0,
				(ws[m][1].wait_ns - ws[m][0].wait_ns) / 1e6 / 60, (unsigned long long)n);
		}
		fprintf(stderr, "\n");
	}
	/* the meta of a launched program's recording (the tracker) */
	if (!err)
		err = db_writer__meta_set(db, "heap_backend", "preload");
	if (!err)
		err = db_writer__meta_set(db, "heap_probes", "libc");
	if (!err)
		err = db_writer__meta_set_int(db, "heap_temporary", (long long)temps);
	for (int i = 0; syms && i < 2 * naddr; i++)
		symbol__delete(syms[i]);
	free(syms);
	free(cpu);
	free(hc);
	free(wall);
	free(cpus);
	return err;
}

/* FIXTURE_CHECKPOINTS: a shorter run for quick measurements */
static int fixture_checkpoints(int dflt)
{
	const char *env = getenv("FIXTURE_CHECKPOINTS");

	return env && atoi(env) > 0 ? atoi(env) : dflt;
}

static inline int fixture__write(const char *path, enum fixture_kind kind)
{
	struct db_writer *db;
	int err = db_writer__create(path, false, &db);

	if (err)
		return err;
	switch (kind) {
	case FIXTURE_SMALL:
		err = fixture_small(db, true);
		break;
	case FIXTURE_CPU_ONLY:
		err = fixture_small(db, false);
		break;
	case FIXTURE_BIG:
		/* an hour at 1 s: 3,600 checkpoints, 1,000 CPU and 1,000 heap addresses each */
		err = fixture_series(db, "big", fixture_checkpoints(3600), 1000, 0);
		break;
	case FIXTURE_BIG_RETAIN:
		err = fixture_series(db, "big", fixture_checkpoints(3600), 1000, 600000);
		break;
	case FIXTURE_DAY:
		/* a day at 1 s, 100 CPU and 100 heap addresses each, record --retain 1h */
		err = fixture_series(db, "day", fixture_checkpoints(86400), 100, 3600000);
		break;
	}
	if (db_writer__close(db) && !err)
		err = -1;
	return err;
}

#endif
