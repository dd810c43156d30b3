#include "util/window.h"

#include <string.h>

#include "util/db/read/query.h"
#include "util/duration.h"
#include "util/error.h"

struct window_args window_args;

struct poptOption options_window[] = {
	{ "since", 0, POPT_ARG_STRING, &window_args.since, 0,
	  "only the last DUR of the recording", "DUR" },
	{ "until", 0, POPT_ARG_STRING, &window_args.until, 0,
	  "only the first DUR of the recording", "DUR" },
	{ "window", 0, POPT_ARG_STRING, &window_args.window, 0,
	  "only from A to B after the start (either may be left out)", "A..B" },
	{ "at", 0, POPT_ARG_STRING, &window_args.at, 0,
	  "heap: live bytes as they were DUR after the start, or at the peak", "DUR|peak" },
	POPT_TABLEEND
};

bool window__given(const struct window_args *a)
{
	return a->since || a->until || a->window || a->at;
}

static int bad_duration(const char *opt, const char *s)
{
	pr_err("%s: '%s' is not a duration", opt, s);
	pr_hint("durations look like 30s, 5m, 1h30m, 250ms");
	return -RSPROF_EUSAGE;
}

int window__apply(const struct window_args *a, uint64_t duration_ms, uint64_t peak_ms,
		  struct query_filter *f, bool *at_peak)
{
	uint64_t ms;

	*at_peak = false;
	if (a->window && (a->since || a->until)) {
		pr_err("--window cannot be combined with --since or --until");
		return -RSPROF_EUSAGE;
	}
	if (a->since) {
		if (duration__parse(a->since, &ms))
			return bad_duration("--since", a->since);
		time_window__since(&f->win, ms, duration_ms);
	}
	if (a->until) {
		if (duration__parse(a->until, &ms))
			return bad_duration("--until", a->until);
		f->win.to_ms = ms;
	}
	if (a->window && time_window__parse(a->window, &f->win)) {
		pr_err("--window: '%s' is not a range A..B of durations", a->window);
		pr_hint("for example --window 10s..1m, --window ..30s or --window 5m..");
		return -RSPROF_EUSAGE;
	}
	if (a->at && !strcmp(a->at, "peak")) {
		/* the checkpoint whose live heap was the highest */
		f->at_ms = peak_ms;
		*at_peak = true;
	} else if (a->at) {
		if (duration__parse(a->at, &ms)) {
			pr_err("--at: '%s' is not a duration or 'peak'", a->at);
			pr_hint("durations look like 30s, 5m, 1h30m, 250ms");
			return -RSPROF_EUSAGE;
		}
		f->at_ms = ms;
	}
	return 0;
}
