#ifndef RSPROF_UTIL_RECORD_STATUS_H
#define RSPROF_UTIL_RECORD_STATUS_H

#include <stdbool.h>
#include <stdio.h>

#include "util/record/recorder.h"

/*
 * What `record` tells the user while and after recording: a one-line status
 * rewritten in place on a terminal, and a summary at the end.
 */

/* True when f is a terminal the status line may be drawn on (TERM not "dumb"). */
bool status__is_live(FILE *f);

/* Redraw the one-line status: elapsed, samples, lost, live heap, checkpoints. */
void status__line(FILE *f, const struct recorder_stats *st);

/* Erase the status line (before other messages or the summary). */
void status__clear(FILE *f);

/*
 * The summary: what was recorded, why it stopped, the target's exit status,
 * and, when the file was written to the end (written), the command that
 * reads it. After an error, never a "written" line: the error said what
 * was lost.
 */
void status__summary(FILE *f, const struct recorder_stats *st, const char *path,
		     const char *stop_reason, bool written);


#endif
