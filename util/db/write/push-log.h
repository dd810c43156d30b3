#ifndef RSPROF_UTIL_DB_WRITE_PUSH_LOG_H
#define RSPROF_UTIL_DB_WRITE_PUSH_LOG_H

#include <stddef.h>
#include <stdint.h>

/*
 * What a profile's intervals became at the stores they were pushed to, in
 * the profile itself (the local file stays the truth): the table
 *
 *   pushes (store, from_ms, to_ms, part, state, http_status, bytes,
 *           interval_ms, time_ms, message)
 *
 * created on the first row; one row per request: the interval's
 * checkpoints (from_ms <= timestamp_ms <= to_ms), which of its requests
 * (part: "cpu/PID", "heap/PID"), and what became of it (state: "pushed",
 * "rejected" by the store, "dropped" from a full spool; a later row for
 * the same request replaces it). The seed-000 tables are untouched.
 *
 * Written through the recorder's own connection while it records
 * (push_log__write_db()), or, for a profile no rsprof is writing, through a
 * connection of push_log__open(), which holds the file's writer lock.
 */
struct db;
struct push_log;

struct push_log_row {
	const char *store;
	uint64_t from_ms, to_ms;
	const char *part;
	const char *state;
	long http_status;	/* 0: none */
	uint64_t bytes;
	uint64_t interval_ms;	/* the push interval; 0: a window pushed as one */
	int64_t time_ms;	/* Unix time */
	const char *message;	/* NULL: none */
};

/*
 * Rows through the writer connection of a recording (its thread), in one
 * transaction. 0 or -RSPROF_EDB (printed).
 */
int push_log__write_db(struct db *writer, const struct push_log_row *rows, size_t n);

/*
 * A profile no recorder is writing, opened read-write for its ledger only
 * (the connection hardened as a reader's is: the file may come from
 * anywhere). -EBUSY (printed) while a recorder holds it, -RSPROF_EDB.
 */
int push_log__open(const char *path, struct push_log **out);
int push_log__write(struct push_log *pl, const struct push_log_row *rows, size_t n);
/*
 * The rows of store (NULL: all), in (from_ms, to_ms, part) order; cb's
 * error stops the walk. A profile without the table has none.
 */
int push_log__read(struct push_log *pl, const char *store,
		   int (*cb)(void *ctx, const struct push_log_row *r), void *ctx);
/* 0 or -RSPROF_EDB (the result of sqlite3_close()). NULL ok. */
int push_log__close(struct push_log *pl);

#endif
