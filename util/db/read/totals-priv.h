#ifndef RSPROF_UTIL_DB_READ_TOTALS_PRIV_H
#define RSPROF_UTIL_DB_READ_TOTALS_PRIV_H

#include <stddef.h>
#include <stdint.h>

/* Inside the totals' reader (totals.c, totals-walk.c). Not for other files. */
struct totals;

/*
 * Where a read of the checkpoints from id on may start: the first
 * checkpoint of the widest block holding id whose start s has no
 * checkpoint in s..id-1 (record --retain's folded ones), else id itself.
 */
int totals_wide_start(struct totals *t, int64_t id, int64_t *start);
/* The rows read through t so far (statistics). */
size_t totals_rows(const struct totals *t);

#endif
