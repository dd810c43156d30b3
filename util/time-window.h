#ifndef RSPROF_UTIL_TIME_WINDOW_H
#define RSPROF_UTIL_TIME_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

/*
 * A window of a recording, as report --window/--since/--until, diff's
 * FILE@A..B and timeline's options give it: a checkpoint is in the window
 * when the end of its interval (checkpoints.timestamp_ms, ms from the
 * start) falls in it. "A..B" is the time after A up to B: the checkpoints
 * from A + 1 to B, both inclusive here. TIME_NONE at either end: open (from
 * the start, to the end).
 */
#define TIME_NONE UINT64_MAX

struct time_window {
	uint64_t from_ms;	/* the first time in the window; TIME_NONE: the start */
	uint64_t to_ms;		/* the last; TIME_NONE: the end */
};

#define TIME_WINDOW_ALL ((struct time_window){ TIME_NONE, TIME_NONE })

/* "A..B" (either side may be left out): 0, or -EINVAL when it is not a range of durations. */
int time_window__parse(const char *s, struct time_window *w);
/* The A of "A..B" (the time the window starts after), TIME_NONE when open. */
uint64_t time_window__after(const struct time_window *w);
/* Only the last ms of a recording whose last checkpoint is at end_ms (all of it when longer). */
void time_window__since(struct time_window *w, uint64_t ms, uint64_t end_ms);
/* Is a checkpoint at t_ms in the window? */
bool time_window__has(const struct time_window *w, uint64_t t_ms);

#endif
