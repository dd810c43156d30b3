#ifndef RSPROF_UTIL_WINDOW_H
#define RSPROF_UTIL_WINDOW_H

#include <popt.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * The time window options of the readers (report, annotate): --since DUR
 * (the last DUR of the recording), --until DUR (the first DUR), --window
 * A..B, and --at DUR|peak (heap: live bytes as of that moment), as typed.
 * A checkpoint counts when the end of its interval falls in the window.
 */
struct query_filter;
struct time_window;

struct window_args {
	const char *since, *until, *window, *at;
};

/* The options, into window_args (POPT_ARG_INCLUDE_TABLE "Time window:"). */
extern struct window_args window_args;
extern struct poptOption options_window[];

/* Was any of them given? */
bool window__given(const struct window_args *a);

/*
 * Into f (from_ms, to_ms, at_ms); duration_ms and peak_ms are the
 * profile's (db_query_summary()). *at_peak: --at peak. Errors printed with
 * the option's name: -RSPROF_EUSAGE.
 */
int window__apply(const struct window_args *a, uint64_t duration_ms, uint64_t peak_ms,
		  struct query_filter *f, bool *at_peak);

/*
 * The one rule for every window of a recording (report's and annotate's
 * options, diff's FILE@A..B, timeline's): it must hold time of the
 * recording, which is duration_ms long. Empty (B not after A) or starting
 * at or after the end: an error naming what (the option or the argument)
 * and the recording's length, -RSPROF_EUSAGE. An end past the recording's
 * is the rest of it, as --since longer than the recording is all of it.
 */
int window__check(const struct time_window *w, uint64_t duration_ms, const char *what);
/* --since ARG of ms: 0 is an empty window, an error as window__check()'s. */
int window__since_check(const char *arg, uint64_t ms);

#endif
