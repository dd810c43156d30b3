#ifndef RSPROF_UTIL_ANALYSIS_DIFF_H
#define RSPROF_UTIL_ANALYSIS_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/db/read/query.h"
#include "util/db/read/site.h"

/*
 * What changed between two profiles (`rsprof diff A B`), typically two
 * builds of one program: addresses differ between builds, so sites are
 * matched by their source location at the chosen level (file, line and
 * function; function; or file). Two checkouts of one project in different
 * directories still match: the directories the two runs' source files
 * hang from are found by their common suffixes (~/a/proj/src/x.c and
 * ~/b/work/src/x.c: ~/a/proj and ~/b/work, the pair most files agree on),
 * and files under them are compared by the path below ("src/x.c"); other
 * files by their display form (srcpath__display()).
 *
 * At the line level, lines of one file and function move together (an edit
 * above them): the shift that lines up most of the function's A numbers
 * with its B numbers pairs every A line with the B line that shift away,
 * whether or not that line number has numbers of its own in A; with no
 * such shift, a line only in A and a line only in B are one line that
 * moved when the function has as many such lines in A as in B (paired in
 * line order). A pair is one row, DIFF_MOVED, with both line numbers; a
 * site whose A numbers moved away and whose B numbers came from elsewhere
 * gives a gone row and a new row.
 *
 * CPU compares shares: a site's samples as a percentage of all samples of
 * its run, so runs of different lengths compare fairly; the delta is in
 * percentage points. Heap compares live bytes at the end of each run (and
 * shows the allocation counts). Rows are sorted by the size of the change,
 * largest first.
 */
struct db;

enum diff_status {
	DIFF_SAME,		/* in both, no change */
	DIFF_CHANGED,		/* in both */
	DIFF_NEW,		/* only in B */
	DIFF_GONE,		/* only in A */
	DIFF_MOVED,		/* in both, on another line in B (line_a in A) */
};

struct diff_row {
	const char *file;	/* display path (owned by the diff); NULL when unknown */
	int line;		/* 0 when the level drops lines; B's line when moved */
	int line_a;		/* A's line: differs from line when moved */
	const char *function;
	const char *module;
	enum diff_status status;
	/* CPU */
	uint64_t samples_a, samples_b;
	double pct_a, pct_b, delta_pct;
	/* heap */
	int64_t live_a, live_b, delta_bytes;
	int64_t allocs_a, allocs_b;
};

struct diff_opts {
	/*
	 * The window of each run (`diff FILE@A..B`, util/time-window.h; all
	 * of it: TIME_WINDOW_ALL): CPU compares the window's samples, heap the
	 * live bytes at its end and the allocations inside it.
	 */
	struct time_window win[2];	/* A, B */
	enum site_by by;
	const char *pattern;	/* case-insensitive substring of path or function; NULL: all */
	double threshold;	/* leave out |delta| below: CPU percentage points; heap percent
				 * of the larger total live heap of the two runs */
	int limit;		/* rows per table; 0: all */
	/* also the rows that show nothing: CPU 0.0 % in both runs (below 0.05);
	 * heap nothing live in either run and as many allocations */
	bool all;
	/* heap sites past allocation wrappers, as report: the built-in ones,
	 * each file's meta.heap_alloc_fn and these (globs, NULL-terminated) */
	const char *const *alloc_fn;
};

struct diff {
	struct prof_summary a, b;
	bool heap_a, heap_b;	/* the run has heap data */
	struct diff_row *cpu;	/* by |delta_pct|, largest first */
	size_t n_cpu;
	struct diff_row *heap;	/* by |delta_bytes|, largest first */
	size_t n_heap;
	size_t n_cpu_all, n_heap_all;	/* matched sites before threshold and limit */
	size_t n_cpu_noise, n_heap_noise;	/* rows left out as showing nothing (!all) */
	bool identical;		/* no site changed at all (before the filters) */
	uint64_t win_samples[2];	/* CPU samples in each side's window */
	int64_t win_live[2];		/* live heap bytes at the end of each side's window */
	struct sitemap *sites;	/* private: owns the rows' strings */
};

/* Compares a and b; *out is freed with diff__delete(). 0, -ENOMEM or -RSPROF_EDB. */
int diff__compute(struct db *a, struct db *b, const struct diff_opts *o, struct diff **out);
void diff__delete(struct diff *d);	/* NULL ok */

#endif
