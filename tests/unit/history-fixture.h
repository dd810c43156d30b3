#ifndef RSPROF_TESTS_HISTORY_FIXTURE_H
#define RSPROF_TESTS_HISTORY_FIXTURE_H

/*
 * The small fixture profile with an allocation history, written through
 * the history writer. Used by tests/unit/test-history.c and
 * tests/helper/fixture.c (KIND history).
 */
#include <stdint.h>

#include "util/db/db.h"
#include "util/db/write/history.h"
#include "util/error.h"
#include "fixture.h"

/*
 * The small profile of fixture.h, with a history (times in ns):
 * 0x1000: A (64 B, app::parse at parse.rs:77) from 1 s to 2 s, then B (32 B,
 * app::cache::insert at cache.rs:42) from 3 s, never freed: the address
 * reused. 0x2000: C (16 B, cache.rs, stack 7) from 1.5 s to 2.5 s. A flush
 * (a slice), then D at 0x3000 (8 B, no site) from 4 s, another flush, and
 * D's free at 5 s: an UPDATE of a written row. A free of 0x9999, never
 * allocated, is counted and ignored.
 */
#define S(x) ((uint64_t)((x) * 1e9))

static int history_fixture__write(const char *path)
{
	struct history_writer *w;
	struct db *db;
	int err = fixture__write(path, FIXTURE_SMALL);

	if (!err)
		err = db__create(path, true, &db);
	if (err)
		return err;
	err = history_writer__new(db, &w);
	if (!err) {
		err = history_writer__alloc(w, S(1), 0x1000, 64, 0x401400, -1) ||
		      history_writer__alloc(w, S(1.5), 0x2000, 16, 0x401300, 7) ||
		      history_writer__free(w, S(2), 0x1000) ||
		      history_writer__free(w, S(2.5), 0x2000) ||
		      history_writer__alloc(w, S(3), 0x1000, 32, 0x401300, -1) ||
		      history_writer__flush(w) ||
		      history_writer__alloc(w, S(4), 0x3000, 8, 0, -1) ||
		      history_writer__flush(w) ||
		      history_writer__free(w, S(5), 0x3000) ||
		      history_writer__free(w, S(5.1), 0x9999);
		if (history_writer__delete(w) && !err)
			err = -RSPROF_EDB;
	}
	if (db__close(db) && !err)
		err = -RSPROF_EDB;
	return err;
}

#endif
