#ifndef RSPROF_UTIL_TUI_FOLLOW_H
#define RSPROF_UTIL_TUI_FOLLOW_H

#include <stdbool.h>
#include <stdint.h>

#include "util/db/read/live.h"
#include "util/db/read/query.h"

/*
 * Following a profile file while it is written:
 * a read-only connection of its own (WAL: the writer is never blocked),
 * polled by the live view. A poll costs one PRAGMA when nothing was
 * committed since the last one; the rankings are queried again only when
 * the file or the question changed, and only as many rows as are shown.
 */
struct live_row {
	char *file;		/* full path, NULL when unknown */
	int line;
	char *function;		/* as stored (demangled), NULL when unknown */
	char *module;
	int pid;		/* rows by process: the process (function: its comm,
				 * module: its executable); 0 otherwise */
	uint64_t samples;
	double pct;
	int64_t live_bytes, peak_bytes;
	int64_t alloc_bytes, free_bytes, alloc_count, free_count;
	unsigned int kinds;	/* heap: HEAP_KINDS_* (util/db/read/query.h) */
};

struct live_table {
	struct live_row *rows;
	int n, cap;
	bool more;		/* rows exist past the n fetched */
	uint64_t total_samples;	/* CPU: samples in the window */
	int64_t total_live;	/* heap: live bytes of every site */
};

/* What the view asks. */
struct follow_query {
	uint64_t window_ms;	/* 0: the whole run; else only the last window_ms */
	const char *pattern;	/* case-insensitive substring of path or function; NULL: all */
	int cpu_rows;		/* rows wanted; 0: not shown; -1: all of them */
	int heap_rows;
	bool by_process;	/* a row per process of the tree, not per line */
};

#define FOLLOW_BUDGET_PCT 4

struct follow {
	struct db *db;
	struct db_live *live;
	struct prof_summary sum;
	struct live_table cpu, heap;
	char **meta_key, **meta_val;
	int n_meta;
	uint64_t polls, reloads;	/* for -v: how often the file was really read */
	/*
	 * The CPU budget: reading a large profile again can take a second.
	 * After a read that took cost_ms, new data is read no sooner than
	 * cost_ms * (100 / FOLLOW_BUDGET_PCT - 1) later, so following a file
	 * never takes more than FOLLOW_BUDGET_PCT of a core; a question of the
	 * user (filter, scrolling) is answered at once.
	 */
	uint64_t cost_ms, next_ms;
	bool stale;			/* the file changed since the last read */
	/* the last question, to tell when to ask again */
	struct follow_query q;
	char *pattern;
	bool loaded;
};

/* Opens path read-only, the newest profile here when NULL (errors printed). */
int follow__open(const char *path, struct follow **out);
void follow__delete(struct follow *f);	/* NULL ok */

/*
 * Brings f up to date for q: 1 when something was read again (redraw),
 * 0 when the file and the question are unchanged, <0 on a database error.
 */
int follow__poll(struct follow *f, const struct follow_query *q);

/* How long new data waits to be read at most (0 when it is read at once). */
uint64_t follow__delay_ms(const struct follow *f);

/* A meta value of the file, NULL when absent. */
const char *follow__meta(const struct follow *f, const char *key);
const char *follow__path(const struct follow *f);

/*
 * How long the recording has run: its duration once it finished, else the
 * time since meta start_time (UTC), at least the last checkpoint's time.
 */
uint64_t follow__elapsed_ms(const struct follow *f);

/* The row's series over the last n checkpoints (see db_live__series). */
int follow__series(struct follow *f, enum live_series kind, const struct live_row *row,
		   int64_t *vals, int n);

#endif
