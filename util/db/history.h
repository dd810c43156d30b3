#ifndef RSPROF_UTIL_DB_HISTORY_H
#define RSPROF_UTIL_DB_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The allocation history: every allocation of a
 * recording made with --alloc-history, with its address, size, site,
 * stack, the time it was made and the time it was freed, laid out for the
 * "half-axis" query: the first N allocations at or after (or before) time
 * T that overlap the address range [A, B] — "who owned this address then?".
 *
 * Layout (schema version 3, util/db/schema.c), seed 001's with accesses
 * being allocations and transitions being times:
 *   alloc_slices  time ranges that never overlap, ids consecutive in time
 *                 order; a slice is HISTORY_SLICE_MAX events (the last one
 *                 of a recording fewer), written when it is full.
 *   alloc_chunks  per slice, address ranges [addr_first, addr_last] that
 *                 never overlap for one kind; every event of the slice is
 *                 in exactly one, and each holds at most HISTORY_CHUNK_MAX
 *                 events unless one run of overlapping blocks (an address
 *                 reused again and again) is larger: that run is a chunk of
 *                 its own. Unlike seed 001's memory accesses, heap blocks
 *                 are sparse: a chunk's range may have addresses no event
 *                 of it holds, so a query may read a chunk (at most
 *                 HISTORY_CHUNK_MAX rows) for nothing; slices are large
 *                 (HISTORY_SLICE_MAX events) so that few are walked.
 *   alloc_events  the allocations in order of appearance (rowid), with
 *                 chunk_id; time_free NULL while (or if never seen) freed.
 *
 * Times are ns from the recording's start_time, made non-decreasing in the
 * order the events arrive (an event older than the one before it takes its
 * time: merged per-thread buffers may disagree by their batching delay), so
 * slices never overlap and rowid order is time order.
 */
#define HISTORY_SLICE_MAX 262144
#define HISTORY_CHUNK_MAX 256

/* kind: seed 001's operation; chunks of different kinds may overlap. */
enum alloc_kind {
	ALLOC_KIND_HEAP = 0,	/* malloc & co., __rust_alloc & co. */
};

#endif
