#include "util/time-window.h"

#include <errno.h>

#include "util/duration.h"

int time_window__parse(const char *s, struct time_window *w)
{
	uint64_t a, b;

	if (duration__parse_range(s, &a, &b))
		return -EINVAL;
	/* after A (exclusive) up to B (inclusive) */
	w->from_ms = a == UINT64_MAX ? TIME_NONE : a + 1;
	w->to_ms = b == UINT64_MAX ? TIME_NONE : b;
	return 0;
}

uint64_t time_window__after(const struct time_window *w)
{
	return w->from_ms == TIME_NONE ? TIME_NONE : w->from_ms - 1;
}

void time_window__since(struct time_window *w, uint64_t ms, uint64_t end_ms)
{
	if (ms < end_ms && (w->from_ms == TIME_NONE || end_ms - ms + 1 > w->from_ms))
		w->from_ms = end_ms - ms + 1;
}

bool time_window__has(const struct time_window *w, uint64_t t_ms)
{
	return (w->from_ms == TIME_NONE || t_ms >= w->from_ms) &&
	       (w->to_ms == TIME_NONE || t_ms <= w->to_ms);
}
