#ifndef RSPROF_UTIL_OUTPUT_EXPORT_H
#define RSPROF_UTIL_OUTPUT_EXPORT_H

#include <stdbool.h>
#include <stdint.h>

/*
 * `report --format folded|pprof`: the stacks of a profile (CPU samples, or
 * live heap with heap) in the filter's window, as folded stacks
 * (util/output/folded.h) or a gzipped pprof profile (util/output/pprof.h),
 * written whole or not at all: to path through util/outfile.h (replacing an
 * older export), or to stdout when path is NULL.
 */
struct db;
struct query_filter;

enum export_format {
	EXPORT_FOLDED,
	EXPORT_PPROF,
};

/* duration_ms: the recording's (pprof's duration). 0, or an error printed. */
int export__stacks(struct db *db, const struct query_filter *f, bool heap,
		   enum export_format format, uint64_t duration_ms, const char *path);

#endif
