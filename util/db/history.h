#ifndef RSPROF_UTIL_DB_HISTORY_H
#define RSPROF_UTIL_DB_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The allocation history (SPEC §8, seed 001): every allocation of a
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
struct db;

#define HISTORY_SLICE_MAX 262144
#define HISTORY_CHUNK_MAX 256

/* kind: seed 001's operation; chunks of different kinds may overlap. */
enum alloc_kind {
	ALLOC_KIND_HEAP = 0,	/* malloc & co., __rust_alloc & co. */
};

/* ---- writing (the recorder, with the tracker's event stream) --------------- */

struct history_writer;

struct history_stats {
	uint64_t events;	/* allocations written */
	uint64_t frees;		/* frees matched to an allocation */
	uint64_t unknown_frees;	/* frees of blocks not in the history (allocated before) */
	uint64_t slices, chunks;
	uint64_t reordered;	/* events whose time was raised to keep the order */
};

/* Prepares the statements (the file must be version 3). Errors printed; -RSPROF_EDB, -ENOMEM. */
int history_writer__new(struct db *db, struct history_writer **out);
/* Writes what is pending (history_writer__flush) unless an error came before. NULL ok. */
int history_writer__delete(struct history_writer *w);

/*
 * An allocation of size bytes at addr, time_ns from the start; site is its
 * symbols.addr (0: unknown), stack_id a stacks.id (-1: none). Kept in
 * memory (64 bytes each) until the slice is full, then written.
 * 0, -ENOMEM or -RSPROF_EDB.
 */
int history_writer__alloc(struct history_writer *w, uint64_t time_ns, uint64_t addr,
			  uint64_t size, uint64_t site, int64_t stack_id);
/* The free of the block at addr (its last allocation there). 0 or -ENOMEM. */
int history_writer__free(struct history_writer *w, uint64_t time_ns, uint64_t addr);
/*
 * Writes the pending allocations as a slice (however few: at the end of a
 * recording) with its chunks, and the free times of allocations written
 * before, in one transaction. 0, -ENOMEM, -RSPROF_EDB.
 */
int history_writer__flush(struct history_writer *w);
void history_writer__stats(const struct history_writer *w, struct history_stats *s);

/* ---- reading ------------------------------------------------------------------ */

struct alloc_record {
	int64_t id;		/* alloc_events.id: the order of appearance */
	uint64_t addr, size;
	uint64_t time_alloc;	/* ns from the start */
	uint64_t time_free;	/* valid when freed */
	bool freed;
	uint64_t site;		/* symbols.addr, 0 unknown */
	int64_t stack_id;	/* -1 none */
};

struct history_query {
	uint64_t addr_first, addr_last;	/* [A, B], inclusive */
	uint64_t time_ns;		/* T */
	bool backward;			/* at or before T, newest first; else at or after, oldest first */
	int limit;			/* N > 0 */
	/*
	 * Resume after a record returned before: 0, or its id. The next page
	 * of a forward query is the allocations after that one (by rowid,
	 * seed 001's "resume by rowid"), of a backward query those before it.
	 */
	int64_t after_id;
	enum alloc_kind kind;
};

/* Does the file hold an allocation history (version 3 and some events)? */
int db_history_present(struct db *db, bool *present, uint64_t *events);

/*
 * The half-axis query (seed 001): up to q->limit records into out (room
 * for q->limit), in time order (backward: newest first), *n of them.
 * 0, -ENOMEM or -RSPROF_EDB.
 */
int db_history_query(struct db *db, const struct history_query *q, struct alloc_record *out,
		     int *n);

/*
 * Who owned the byte at addr at time_ns: the newest allocation at or
 * before time_ns that holds it (*found), live then when !freed or
 * time_free > time_ns (*live). 0 or -RSPROF_EDB.
 */
int db_history_owner(struct db *db, uint64_t addr, uint64_t time_ns, struct alloc_record *owner,
		     bool *found, bool *live);

#endif
