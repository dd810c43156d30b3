#ifndef RSPROF_UTIL_DB_WRITE_HISTORY_H
#define RSPROF_UTIL_DB_WRITE_HISTORY_H

#include <stdint.h>

#include "util/db/history.h"

/* The allocation history as the recorder writes it (the layout: util/db/history.h). */
struct db;
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
 * before, in one transaction: the caller's when one is open (a
 * checkpoint's, which then holds it all or none of it), else one of its
 * own. 0, -ENOMEM, -RSPROF_EDB.
 */
int history_writer__flush(struct history_writer *w);
void history_writer__stats(const struct history_writer *w, struct history_stats *s);

#endif
