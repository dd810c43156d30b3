#ifndef RSPROF_UTIL_DB_QUERY_H
#define RSPROF_UTIL_DB_QUERY_H

#include <stdbool.h>
#include <stdint.h>

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
};

#define TIME_NONE UINT64_MAX

struct query_filter {
	uint64_t from_ms;	/* checkpoints with timestamp_ms >= from_ms; TIME_NONE: from start */
	uint64_t to_ms;		/* ... and <= to_ms; TIME_NONE: to the end */
	uint64_t at_ms;		/* heap: live bytes as of this moment; TIME_NONE: at the end */
	const char *pattern;	/* case-insensitive substring of path or function; NULL: all */
	enum group_by group;
	int limit;		/* 0: no limit */
	double threshold_pct;	/* rows below this share of the total are left out */
};

void query_filter__init(struct query_filter *f);

/* One ranked row. Strings belong to the query and live until the callback returns. */
struct prof_row {
	const char *file;	/* full path, NULL when unknown */
	int line;
	const char *function;
	const char *module;
	uint64_t samples;	/* CPU */
	double pct;		/* of the total in the filter's window */
	int64_t live_bytes;	/* heap */
	int64_t peak_bytes;	/* heap: the site's highest live bytes at a checkpoint */
	int64_t alloc_bytes, free_bytes;
	int64_t alloc_count, free_count;
};

typedef int (*prof_row_cb)(const struct prof_row *row, void *ctx);

/* CPU rows, most samples first; *total = samples in the window. */
int db_query_cpu(struct db *db, const struct query_filter *f, uint64_t *total,
		 prof_row_cb cb, void *ctx);
/* Heap rows, most live bytes first (sites with live bytes <= 0 left out
 * unless they allocated); *total_live = live bytes of all sites. */
int db_query_heap(struct db *db, const struct query_filter *f, int64_t *total_live,
		  prof_row_cb cb, void *ctx);

/*
 * Call stacks with a weight, for flame graphs and pprof (SPEC §8): CPU
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
};

struct prof_stack {
	const struct prof_frame *frames;	/* innermost first */
	int depth;
	int64_t value;		/* CPU: samples; heap: live bytes */
	int64_t count;		/* CPU: samples; heap: live allocations */
};

typedef int (*prof_stack_cb)(const struct prof_stack *s, void *ctx);

/* Everything passed to cb lives until cb returns. */
int db_query_stacks(struct db *db, const struct query_filter *f, bool heap,
		    prof_stack_cb cb, void *ctx);

/* What a profile holds, for headers, info and the live view's footer. */
struct prof_summary {
	uint64_t duration_ms;	/* last checkpoint's timestamp */
	uint64_t checkpoints;
	uint64_t samples;
	uint64_t lost_samples;
	uint64_t symbols;
	int64_t live_bytes;	/* at the end */
	int64_t peak_bytes;	/* highest checkpoint live heap */
	int64_t alloc_bytes, free_bytes, alloc_count, free_count;
	uint64_t heap_dropped;
	bool has_heap;		/* heap tracking was on */
	bool finished;		/* meta.end_time present: the recording ended */
	/* from meta, 0 when absent */
	uint64_t unknown_frees;		/* frees of memory allocated before attach */
	int64_t unknown_free_bytes;
	unsigned int heap_sample;	/* 1 in N allocations tracked; 0/1: all */
	uint64_t stacks;		/* deduplicated call stacks (-g, heap stacks) */
	uint64_t mappings;		/* rows of the `map` table */
	/* record --retain (v3): checkpoints folded into coarser ones */
	uint64_t retain_ms;		/* meta.retain_ms; 0: none */
	uint64_t folded_checkpoints;	/* checkpoints holding more than one interval */
	uint64_t folded_intervals;	/* the intervals they hold */
	uint64_t folded_until_ms;	/* the end of the last of them */
	uint64_t folded_min_ms, folded_max_ms;	/* the time one of them holds */
};

int db_query_summary(struct db *db, struct prof_summary *s);

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
