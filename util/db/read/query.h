#ifndef RSPROF_UTIL_DB_READ_QUERY_H
#define RSPROF_UTIL_DB_READ_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/time-window.h"

/*
 * The read queries every reader shares (report, top, diff, timeline, info).
 * All values are bound; the user's SQL only ever runs in `query`.
 */
struct db;

enum group_by {
	GROUP_LINE,		/* file, line, function */
	GROUP_FUNCTION,		/* function (and file) */
	GROUP_FILE,
	GROUP_MODULE,
	GROUP_PROCESS,		/* per process (pid) of the recording's process tree */
	GROUP_SYMBOL,		/* the ELF symbol (the real function, inlined code in it), per
				 * module: what perf shows */
};

/*
 * How heap rows are ranked (report --sort-by), largest first: live bytes
 * at the end (or at_ms), the site's peak live bytes, bytes allocated in the
 * window, allocations (count) in the window. pprof's inuse_space,
 * alloc_space and alloc_objects; heaptrack's leaked, peak, allocations.
 */
enum heap_sort {
	HEAP_SORT_LIVE,
	HEAP_SORT_PEAK,
	HEAP_SORT_ALLOCATED,
	HEAP_SORT_ALLOCS,
	HEAP_SORT_TEMPORARY,	/* temporaries: freed by the allocating thread before
				 * its next allocation or free (heaptrack's "temporary") */
};

struct query_filter {
	struct time_window win;	/* the checkpoints read (util/time-window.h) */
	uint64_t at_ms;		/* heap: live bytes as of this moment; TIME_NONE: at the end */
	const char *pattern;	/* case-insensitive substring of path or function; NULL: all */
	int pid;		/* only the rows of this process; 0: every process */
	enum group_by group;
	int limit;		/* 0: no limit */
	/* heap: allocation wrappers (globs, util/heap/alloc-fn.h) passed over in the
	 * stored stacks, beside the built-in ones and the file's meta.heap_alloc_fn;
	 * NULL-terminated, NULL: none */
	const char *const *alloc_fn;
	double threshold_pct;	/* rows below this share of the total are left out (heap: of
				 * the sort key's total) */
	enum heap_sort heap_sort;
};

void query_filter__init(struct query_filter *f);

/* One ranked row. Strings belong to the query and live until the callback returns. */
struct prof_row {
	const char *file;	/* full path, NULL when unknown */
	int line;
	const char *function;
	const char *module;
	int pid;		/* GROUP_PROCESS: the process (function: its comm, module: its
				 * executable) */
	const char *cgroup;	/* GROUP_PROCESS: its cgroup v2 path; NULL: not known */
	uint64_t samples;	/* CPU */
	double pct;		/* of the total in the filter's window */
	int64_t live_bytes;	/* heap */
	int64_t peak_bytes;	/* heap: the site's highest live bytes at a checkpoint */
	int64_t alloc_bytes, free_bytes;
	int64_t alloc_count, free_count;
	/* heap: temporary allocations in the window (freed by the allocating
	 * thread before its next allocation or free); -1: not counted (uprobes,
	 * files before v3) */
	int64_t temp_count;

	/* heap: what its memory is, 1 << heap_events.kind of the rows that allocated
	 * (HEAP_KINDS_MALLOC, HEAP_KINDS_MMAP: anonymous mappings, schema v3) */
	unsigned int kinds;
};

#define HEAP_KINDS_MALLOC	1u
#define HEAP_KINDS_MMAP		2u

typedef int (*prof_row_cb)(const struct prof_row *row, void *ctx);

/* CPU rows, most samples first; *total = samples in the window. */
int db_query_cpu(struct db *db, const struct query_filter *f, uint64_t *total,
		 prof_row_cb cb, void *ctx);
/*
 * Heap rows, ranked by f->heap_sort (sites with live bytes <= 0 left out
 * unless they allocated); *total_live = live bytes of all sites; a row's
 * pct is its share of that.
 *
 * The site of a row is heap_events.addr, as the recorder chose it, unless
 * an allocation wrapper (built in, meta.heap_alloc_fn, f->alloc_fn) is in
 * the way in the stored stack: then the site rule (util/heap/attrib.h) is
 * applied again to that stack, past the wrappers, and the row counts at
 * the line it gives (which may be a line of an inlined wrapper's caller,
 * with no address of its own). The file is not changed.
 */
int db_query_heap(struct db *db, const struct query_filter *f, int64_t *total_live,
		  prof_row_cb cb, void *ctx);

/*
 * When one site holds most of the live heap and is reached from many
 * lines, it may be an allocation wrapper that nobody named: report says
 * so. Filled by db_query_heap_hint().
 */
struct heap_hint {
	bool suspect;		/* the rest is set only when true */
	double pct;		/* the site's share of the live heap */
	int callers;		/* distinct lines that reached it (with live bytes) */
	char *file;		/* the site, malloc'd (heap_hint__free) */
	int line;
	char *function;
};

/*
 * The heap at its peak (the checkpoint with the most live bytes): its live
 * bytes and those in anonymous mappings ([mmap] rows). 0 and both 0 for a
 * file without kinds.
 */
int db_query_heap_mmap_peak(struct db *db, int64_t *mmap_bytes, int64_t *live);

/* db_query_heap(), and the hint about its top row. */
int db_query_heap_hint(struct db *db, const struct query_filter *f, int64_t *total_live,
		       prof_row_cb cb, void *ctx, struct heap_hint *hint);
void heap_hint__free(struct heap_hint *h);	/* the strings; NULL ok */

/*
 * For the readers that group heap rows themselves (timeline, diff): the
 * heap stacks whose site db_query_heap() moves past an allocation wrapper
 * (built in, meta.heap_alloc_fn, alloc_fn: NULL-terminated, NULL: none),
 * each with the line its rows count at instead of heap_events.addr.
 * cb's strings live until it returns; its error stops the walk.
 */
typedef int (*heap_moved_cb)(void *ctx, int64_t stack_id, const char *file, int line,
			     const char *function, const char *module);
int db_query_heap_moved(struct db *db, const char *const *alloc_fn, heap_moved_cb cb,
			void *ctx);

/*
 * Call stacks with a weight, for flame graphs and pprof: CPU
 * samples per stack of a `record -g` profile (table cpu_stacks), or live heap
 * bytes per allocation stack (heap_events.stack_id). Without stacks in the
 * file, each sampled address is a stack of one frame. The filter's window,
 * at_ms and pattern apply (a stack is kept when one of its frames matches).
 */
struct frame;

struct prof_frame {
	uint64_t addr;
	const char *module;		/* NULL when unknown */
	const struct frame *lines;	/* the inline chain from the reported frame out to
					 * the real function, innermost first (util/symbols/symbol.h) */
	int n_lines;			/* >= 1 */
	const char *mangled;		/* linkage name of the real function (lines[n_lines - 1]
					 * when the chain reaches it), NULL when unknown */
	bool outermost;			/* lines[n_lines - 1] is the real function */
};

struct prof_stack {
	const struct prof_frame *frames;	/* innermost first */
	int depth;
	int64_t value;		/* CPU: samples; heap: live bytes */
	int64_t count;		/* CPU: samples; heap: live allocations */
	int64_t alloc_value;	/* heap: bytes allocated in the window (0 for CPU) */
	int64_t alloc_count;	/* heap: allocations made in the window */
	int pid;		/* db_query_stacks_by_pid(): the process; else 0 */
};

typedef int (*prof_stack_cb)(const struct prof_stack *s, void *ctx);

/*
 * The name of inline frame k of f, as perf shows it: its function, else
 * "[module]" (the module's base name), else "[unknown]". Returns the
 * function, or buf.
 */
const char *prof_frame__name(const struct prof_frame *f, int k, char *buf, size_t len);

/*
 * Everything passed to cb lives until cb returns. Heap stacks with no live
 * bytes left (value <= 0) are passed too when they allocated in the window.
 */
int db_query_stacks(struct db *db, const struct query_filter *f, bool heap,
		    prof_stack_cb cb, void *ctx);
/*
 * The same per process: the stacks of each process with data in the
 * window, process by process (pid ascending), each with its pid (a row
 * without one counts for meta.pid). CPU stacks of `record -g` carry no
 * process: all of them count for meta.pid. f->pid, when set, keeps that
 * process alone (db_query_stacks() too).
 */
int db_query_stacks_by_pid(struct db *db, const struct query_filter *f, bool heap,
			   prof_stack_cb cb, void *ctx);

/* What a profile holds, for headers, info and the live view's footer. */
struct prof_summary {
	uint64_t duration_ms;	/* last checkpoint's timestamp */
	uint64_t checkpoints;
	uint64_t samples;
	uint64_t lost_samples;
	uint64_t symbols;
	int64_t live_bytes;	/* at the end */
	int64_t peak_bytes;	/* highest live heap seen (checkpoints, the tracker's own) */
	uint64_t peak_ms;	/* the checkpoint with the most live heap (by heap_events) */
	int64_t peak_cp_bytes;	/* its live heap: what report --at peak shows */
	int64_t alloc_bytes, free_bytes, alloc_count, free_count;
	uint64_t heap_dropped;
	bool has_heap;		/* heap tracking was on */
	bool finished;		/* meta.end_time present: the recording ended */
	/* from meta, 0 when absent */
	uint64_t unknown_frees;		/* frees of memory allocated before attach */
	int64_t unknown_free_bytes;	/* -1: the allocator told no sizes (not glibc's) */
	unsigned int heap_sample;	/* 1 in N allocations tracked; 0/1: all */
	uint64_t heap_sample_bytes;	/* one allocation per N bytes on average; 0: off */
	uint64_t stacks;		/* deduplicated call stacks (-g, heap stacks) */
	uint64_t mappings;		/* rows of the `map` table */
	/* the process's resident memory (schema v3; has_rss false before or when unread) */
	bool has_rss;
	int64_t rss_bytes, rss_anon_bytes;	/* at the last checkpoint that read it */
	int64_t rss_peak_bytes;			/* the kernel's VmHWM (meta.rss_peak_bytes),
						 * else the highest at a checkpoint */
	/* the in-process tracker's headers in the resident memory at the end:
	 * meta.heap_block_header_bytes for each block live (an estimate: mmap
	 * regions count as blocks, sampled counts are scaled); 0: none */
	int64_t header_bytes;
	/* record --retain (v3): checkpoints folded into coarser ones */
	uint64_t retain_ms;		/* meta.retain_ms; 0: none */
	uint64_t folded_checkpoints;	/* checkpoints holding more than one interval */
	uint64_t folded_intervals;	/* the intervals they hold */
	uint64_t folded_until_ms;	/* the end of the last of them */
	uint64_t folded_min_ms, folded_max_ms;	/* the time one of them holds */
	/* compacted checkpoints (v3, util/db/series.h): their rows packed, the
	 * seed-000 tables holding one row per key and block of them */
	uint64_t compacted_checkpoints;
	uint64_t compacted_from_ms, compacted_until_ms;	/* the time they cover */
};

int db_query_summary(struct db *db, struct prof_summary *s);

/* How many processes the recording holds (the processes table of v3; 1 before). */
int db_query_process_count(struct db *db, int *n);
/*
 * What a window [from_ms, to_ms] (TIME_NONE: open) reads when record
 * --retain folded checkpoints in it: the checkpoints from its first to its
 * last cover first_ms..last_ms, the coarsest of them holds coarsest_ms.
 * folded is false (and the rest 0) when none in it is folded and none
 * that ends after it holds its end.
 */
struct prof_resolution {
	bool folded;
	uint64_t first_ms, last_ms;
	uint64_t coarsest_ms;
	/* no folded checkpoint ends in the window, but one that ends after it
	 * holds its end: first_ms..last_ms is that one */
	bool inside;
};

int db_query_resolution(struct db *db, uint64_t from_ms, uint64_t to_ms,
			struct prof_resolution *r);

/* Every meta row, in key order. */
int db_query_meta(struct db *db, int (*cb)(const char *key, const char *value, void *ctx),
		  void *ctx);

#endif
