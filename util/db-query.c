#include "util/db-query.h"

#include <errno.h>
#include <string.h>

/* STUB: owned by the storage work; replace. */
void query_filter__init(struct query_filter *f)
{
	memset(f, 0, sizeof(*f));
	f->from_ms = f->to_ms = f->at_ms = TIME_NONE;
}
int db_query_cpu(struct db *db, const struct query_filter *f, uint64_t *total, prof_row_cb cb, void *ctx) { return -ENOSYS; }
int db_query_heap(struct db *db, const struct query_filter *f, int64_t *total_live, prof_row_cb cb, void *ctx) { return -ENOSYS; }
int db_query_summary(struct db *db, struct prof_summary *s) { return -ENOSYS; }
int db_query_meta(struct db *db, int (*cb)(const char *, const char *, void *), void *ctx) { return -ENOSYS; }
