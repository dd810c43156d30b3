#include "util/window.h"

#include <stdio.h>
#include <string.h>

#include "util/db/read/query.h"
#include "util/duration.h"
#include "util/error.h"
#include "util/time-window.h"

struct window_args window_args;

struct poptOption options_window[] = {
	{ "since", 0, POPT_ARG_STRING, &window_args.since, 0,
	  "only the last DUR of the recording", "DUR" },
	{ "until", 0, POPT_ARG_STRING, &window_args.until, 0,
	  "only the first DUR of the recording", "DUR" },
	{ "window", 0, POPT_ARG_STRING, &window_args.window, 0,
	  "only from A to B after the start (either may be left out), within the recording",
	  "A..B" },
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
	int err;

	*at_peak = false;
	if (a->window && (a->since || a->until)) {
		pr_err("--window cannot be combined with --since or --until");
		return -RSPROF_EUSAGE;
	}
	if (a->since) {
		if (duration__parse(a->since, &ms))
			return bad_duration("--since", a->since);
		err = window__since_check(a->since, ms);
		if (err)
			return err;
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
	if (a->since || a->until || a->window) {
		char what[128];

		snprintf(what, sizeof(what), "%s %s", a->window ? "--window" : a->since ?
			 "--since" : "--until", a->window ? a->window : a->since ? a->since :
			 a->until);
		err = window__check(&f->win, duration_ms, what);
		if (err)
			return err;
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

int window__since_check(const char *arg, uint64_t ms)
{
	if (ms)
		return 0;
	pr_err("--since %s: an empty window (the last 0 s of the recording)", arg);
	pr_hint("--since takes a duration, up to the recording's length");
	return -RSPROF_EUSAGE;
}

int window__check(const struct time_window *w, uint64_t duration_ms, const char *what)
{
	uint64_t from = w->from_ms == TIME_NONE ? 0 : time_window__after(w);
	char a[32], b[32], l[32];

	duration__format(duration_ms, l, sizeof(l));
	if (w->to_ms != TIME_NONE && w->to_ms <= from &&
	    (w->from_ms != TIME_NONE || w->to_ms == 0)) {
		pr_err("%s: an empty window (%s..%s)", what, duration__format(from, a, sizeof(a)),
		       duration__format(w->to_ms, b, sizeof(b)));
		pr_hint("a window A..B has B after A, within the recording's %s", l);
		return -RSPROF_EUSAGE;
	}
	if (w->from_ms != TIME_NONE && duration_ms && from >= duration_ms) {
		pr_err("%s: starts at %s, at or after the end of the recording, which is %s long",
		       what, duration__format(from, a, sizeof(a)), l);
		pr_hint("a window within 0..%s", l);
		return -RSPROF_EUSAGE;
	}
	return 0;
}
