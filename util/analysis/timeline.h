#ifndef RSPROF_UTIL_ANALYSIS_TIMELINE_H
#define RSPROF_UTIL_ANALYSIS_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/time-window.h"

/*
 * A profile as series over its checkpoints (`rsprof timeline`).
 *
 * The totals come from the per-checkpoint columns of schema v2
 * (checkpoints.cpu_total, heap_alloc_bytes, heap_free_bytes,
 * heap_live_bytes), so the default timeline reads one row per checkpoint
 * and never aggregates the event tables; a version-1 file (seed 000 as
 * written) gets them computed from cpu_samples and heap_events instead.
 *
 * Sites are source locations (file, line, function), as in report's
 * default grouping: every address of a line adds to the same site. Ranking
 * the sites takes one pass over heap_events in insertion order (no sort, no
 * temporary b-tree); the series of the chosen top sites are then read
 * through idx_heap_addr. The site that grew most (for the growth summary)
 * comes from the same pass, so it costs nothing extra.
 */
struct db;

enum timeline_rank {
	RANK_AUTO,		/* final; peak when no site has live bytes at the end */
	RANK_FINAL,		/* live bytes at the last checkpoint */
	RANK_PEAK,		/* highest live bytes at any checkpoint */
	RANK_GROWTH,		/* last minus first checkpoint's live bytes */
};

struct timeline_opts {
	int top;		/* heap sites with a series; 0: none */
	int cpu_top;		/* CPU sites with a series; 0: none */
	enum timeline_rank rank;
	const char *pattern;	/* file or function contains it (any case); NULL: all sites */
	bool need_growth;	/* find the site that grew most */
	/*
	 * The window (util/time-window.h), and with since_ms (0: none) only the
	 * last since_ms of the recording. Series, ranks and growth cover the
	 * window only; live bytes still count what was allocated before it.
	 */
	struct time_window win;
	uint64_t since_ms;
	const char *win_what;	/* the option that gave it, for errors; NULL: "the window" */
	/*
	 * Heap sites past allocation wrappers, as report: the built-in ones,
	 * meta.heap_alloc_fn and these (globs, NULL-terminated; NULL: none).
	 */
	const char *const *alloc_fn;
};

struct timeline_site {
	char *file;		/* full path; NULL when unknown */
	int line;
	char *function;		/* NULL when unknown */
	char *module;
	int64_t final, peak, growth;	/* heap; for CPU sites final = total samples */
	double *values;		/* n values: live bytes at each checkpoint, or samples */
};

struct timeline {
	size_t n;		/* checkpoints */
	uint64_t *t_ms;		/* checkpoint times, from start */
	double *live;		/* live heap at the end of each interval */
	double *alloc;		/* bytes allocated in the interval */
	double *freed;		/* bytes freed in the interval */
	double *cpu;		/* CPU samples in the interval */
	double *rss;		/* resident memory of the process (schema v3); NAN: unknown */
	bool has_heap;		/* any heap event in the file */
	bool has_rss;		/* any checkpoint with its resident memory */
	struct timeline_site *sites;	/* heap sites, in rank order */
	enum timeline_rank rank;	/* the order of sites (never RANK_AUTO) */
	size_t n_sites;
	struct timeline_site *cpu_sites;	/* CPU sites, most samples first */
	size_t n_cpu_sites;
	/* NULL when need_growth was false or no site grew; its values are NULL */
	struct timeline_site *grew_most;
};

/*
 * Loads the series; *out is freed with timeline__delete(). 0, -ENOMEM,
 * -RSPROF_EDB, or -RSPROF_EUSAGE when no checkpoint is in the window.
 */
int timeline__load(struct db *db, const struct timeline_opts *o, struct timeline **out);
void timeline__delete(struct timeline *tl);	/* NULL ok */

/* Site label for legends: "src/cache.rs:42 app::cache::insert" (display path). Returns buf. */
char *timeline__site_label(const struct timeline_site *s, char *buf, size_t len);

#endif
