#ifndef RSPROF_TESTS_RANDOM_PROFILE_H
#define RSPROF_TESTS_RANDOM_PROFILE_H

/*
 * Random profiles written through the writer (db_writer__create() and
 * db_writer__checkpoint()): sites that share lines, functions and files
 * (groups of several keys that peak at different moments), CPU samples of
 * three processes, two stacks past allocation wrappers, temporaries,
 * anonymous mappings. A seed makes the same profile again. Used by
 * tests/unit/test-totals.c and tests/helper/random-profile.c.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/db/db.h"
#include "util/db/write/writer.h"
#include "util/symbols/symbol.h"
#include "fixture.h"

/* ---- random profiles ----------------------------------------------------- */

#define N_HEAP_ADDR	40
#define N_CPU_ADDR	30

static uint64_t rng;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

static uint64_t heap_addr(int i)
{
	return 0x600000 + 16 * i;
}

static uint64_t cpu_addr(int i)
{
	return 0x700000 + 16 * i;
}

/* Sites share lines (several addresses a line), functions and files. */
static struct symbol *random_symbol(uint64_t addr, int i)
{
	static const char *const files[] = { "/src/a.c", "/src/b.c", "/src/c.rs", NULL };
	char fn[32];
	const char *file = files[i % 4];

	snprintf(fn, sizeof(fn), "f%d", (i / 3) % 5);
	/* two allocation wrappers of the built-in list, at the top of stacks 1 and 2 */
	if (addr == heap_addr(0))
		snprintf(fn, sizeof(fn), "xmalloc");
	else if (addr == heap_addr(1))
		snprintf(fn, sizeof(fn), "g_malloc0");
	return fixture_symbol(addr, file, file ? 10 + (i / 2) % 6 : 0, fn,
			      i % 7 ? "/bin/app" : "/lib/libx.so");
}

struct gen {
	int64_t key_live[N_HEAP_ADDR][3];
	bool symbols_written;
};

/* Checkpoint c (1-based) of a random profile into db. */
static int gen_checkpoint(struct db_writer *db, struct gen *g, int c)
{
	struct symbol *syms[N_HEAP_ADDR + N_CPU_ADDR];
	struct cpu_count cpu[N_CPU_ADDR];
	struct heap_count hc[N_HEAP_ADDR * 3];
	struct checkpoint cp = { .timestamp_ms = (uint64_t)c * 1000 };
	/* heap rows of stack 1 and 2 move past the wrapper to their caller */
	static const uint64_t frames1[] = { 0x600000, 0x600000 + 16 * 5 };
	static const uint64_t frames2[] = { 0x600000 + 16, 0x600000 + 16 * 7 };
	static const struct stack_rec stacks[] = {
		{ .id = 1, .hash = 11, .addrs = frames1, .depth = 2 },
		{ .id = 2, .hash = 22, .addrs = frames2, .depth = 2 },
	};
	static const int pids[] = { 0, 101, 102 };
	size_t n_cpu = 0, n_heap = 0, n_syms = 0;
	int err;

	if (!g->symbols_written) {
		cp.stacks = stacks;
		cp.n_stacks = 2;
		/* the last few addresses have no symbol: the [unknown] group */
		for (int i = 0; i < N_HEAP_ADDR - 3; i++)
			syms[n_syms++] = random_symbol(heap_addr(i), i);
		for (int i = 0; i < N_CPU_ADDR; i++)
			syms[n_syms++] = random_symbol(cpu_addr(i), i + 1);
		cp.symbols = (const struct symbol *const *)syms;
		cp.n_symbols = n_syms;
		g->symbols_written = true;
	}
	for (int i = 0; i < N_CPU_ADDR; i++)
		if (rnd() % 3 == 0)
			cpu[n_cpu++] = (struct cpu_count){ .addr = cpu_addr(i),
							   .count = 1 + rnd() % 20,
							   .pid = pids[rnd() % 3] };
	for (int i = 0; i < N_HEAP_ADDR; i++) {
		for (int s = 0; s < 3; s++) {
			int64_t *live = &g->key_live[i][s];
			struct heap_count *h;

			if (rnd() % 4)
				continue;
			h = &hc[n_heap++];
			memset(h, 0, sizeof(*h));
			h->addr = heap_addr(i);
			h->stack_id = s == 0 ? -1 : s;
			h->pid = pids[i % 3];
			h->alloc_bytes = 64 * (rnd() % 50);
			/* now and then a spike, freed a while later */
			if (rnd() % 40 == 0)
				h->alloc_bytes += 1 << (16 + rnd() % 6);
			h->free_bytes = rnd() % 3 ?
					(int64_t)(rnd() % (uint32_t)((*live > 0 ? *live : 0) + h->alloc_bytes + 1)) :
					0;
			if (rnd() % 50 == 0)
				h->free_bytes += 640;	/* memory allocated before attach */
			h->alloc_count = h->alloc_bytes / 64;
			h->free_count = h->free_bytes / 64;
			/* temporaries as the in-process tracker counts them, except at
			 * every fifth address (not counted: NULL, as the uprobe
			 * backend's rows), so that a line has both */
			h->temp_count = i % 5 == 4 ? -1 :
					(int64_t)(rnd() % (uint32_t)(h->free_count + 1));
			/* anonymous mappings (kind 1) at some addresses, and for stack 2
			 * of others: one line holds both kinds */
			h->kind = i % 7 == 3 || (s == 2 && i % 2) ? 1 : 0;
			*live += h->alloc_bytes - h->free_bytes;
		}
	}
	cp.cpu = cpu;
	cp.n_cpu = n_cpu;
	cp.heap = hc;
	cp.n_heap = n_heap;
	err = db_writer__checkpoint(db, &cp, NULL);
	for (size_t i = 0; i < n_syms; i++)
		symbol__delete(syms[i]);
	return err;
}

/* the compaction age of the files written (0: none, the scans' baseline) */
static uint64_t compact_ms;

static int gen_file_retain(const char *path, uint64_t seed, int from, int to, bool append,
			   struct gen *g, uint64_t retain_ms)
{
	struct db_writer *db;
	int err = db_writer__create(path, append, &db);

	if (err)
		return err;
	if (retain_ms)
		err = db_writer__set_retain(db, retain_ms);
	if (!err)
		err = db_writer__set_compact(db, compact_ms);
	rng = seed;
	for (int c = from; c <= to && !err; c++)
		err = gen_checkpoint(db, g, c);
	if (getenv("FIXTURE_KILL"))
		_exit(err ? 1 : 0);	/* every checkpoint committed, nothing finished */
	if (!err)
		err = db_writer__meta_set(db, "end_time", "2026-11-22T05:00:10Z");
	if (db_writer__close(db) && !err)
		err = -1;
	return err;
}

static inline int gen_file(const char *path, uint64_t seed, int from, int to, bool append,
		    struct gen *g)
{
	return gen_file_retain(path, seed, from, to, append, g, 0);
}

#endif
