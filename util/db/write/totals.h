#ifndef RSPROF_UTIL_DB_WRITE_TOTALS_H
#define RSPROF_UTIL_DB_WRITE_TOTALS_H

#include <stdint.h>

#include "util/db/totals.h"

/* The totals as the writer adds them up (the format: util/db/totals.h). */
struct db;
struct checkpoint;

struct totals_writer;

/* For a new file (empty) or one being appended to (the open block is read back). */
int totals_writer__new(struct db *db, struct totals_writer **out);
void totals_writer__delete(struct totals_writer *tw);	/* NULL ok */

/*
 * In the transaction of checkpoint id, after its rows: add them up, and
 * write the block when id ends it. 0, -ENOMEM or -RSPROF_EDB.
 */
int totals_writer__checkpoint(struct totals_writer *tw, int64_t id, const struct checkpoint *cp);

/* The transaction failed: forget the open block; it is read back from the file next time. */
void totals_writer__reset(struct totals_writer *tw);

/* The last checkpoint the totals hold (totals_state.through). */
int64_t totals_writer__through(const struct totals_writer *tw);

#endif
