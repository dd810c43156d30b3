#ifndef RSPROF_UTIL_OUTPUT_TIMELINE_H
#define RSPROF_UTIL_OUTPUT_TIMELINE_H

#include <stdio.h>

/*
 * `rsprof timeline`'s views of a timeline (util/analysis/timeline.h):
 * the chart in the terminal, CSV, JSON, a standalone SVG picture, and the
 * growth summary line (how much the heap grew from the first checkpoint to
 * the last, per minute, and which site grew most). file: the profile's
 * name, for titles. 0, -ENOMEM or -EIO.
 */
struct timeline;

/* rank: how the sites were ranked ("final", "peak", "growth"), for the heading. */
int timeline_view__chart(FILE *f, const char *file, const struct timeline *tl, const char *rank);
int timeline_view__csv(FILE *f, const struct timeline *tl);
int timeline_view__json(FILE *f, const char *file, const struct timeline *tl);
void timeline_view__growth(FILE *f, const struct timeline *tl);
/* The SVG to path (util/outfile.h: replacing an older picture); errors printed, -EIO. */
int timeline_view__svg(const char *path, const char *file, const struct timeline *tl);

#endif
