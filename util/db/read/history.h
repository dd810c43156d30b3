#ifndef RSPROF_UTIL_DB_READ_HISTORY_H
#define RSPROF_UTIL_DB_READ_HISTORY_H

#include <stdbool.h>
#include <stdint.h>

#include "util/db/history.h"

/* The allocation history as readers query it (the layout: util/db/history.h). */
struct db;

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
