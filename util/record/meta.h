#ifndef RSPROF_UTIL_RECORD_META_H
#define RSPROF_UTIL_RECORD_META_H

#include <stdbool.h>
#include <stdint.h>

/*
 * The meta keys of a recording: what is recorded and from where, written
 * when the file is opened; the program's name once a launched one runs;
 * how the recording ended and what it lost, written at the end (with a
 * warning when too much was lost).
 */
struct db_writer;
struct heap;
struct record_opts;
struct sampler;
struct target;

/*
 * start_time (or, --append to a profile that has one, appended_pid), the
 * target, the options, the heap backend (heap NULL: no heap) and why it is
 * not the in-process tracker for a launch (heap_why, NULL: it is). *ts_base: 0, or with --append where the new
 * checkpoints' timestamps go on (after the file's last one).
 */
int record_meta__start(struct db_writer *w, const struct record_opts *o, const struct target *t,
		       struct heap *heap, const char *heap_why, uint64_t *ts_base);

/* process_name again, once a launched program has exec'ed. */
int record_meta__process_name(struct db_writer *w, const struct target *t);

/* cpu_scope: "user+kernel" (CPU% as perf means it) or "user" (--user-only, or refused). */
int record_meta__cpu_scope(struct db_writer *w, bool user_only);

/*
 * end_time, duration_ms, stop_reason, exit_status (when known), the
 * sampler's and the heap tracker's totals (either NULL: not recorded).
 */
int record_meta__end(struct db_writer *w, struct sampler *s, struct heap *h, uint64_t duration_ms,
		     const char *stop_reason, int exit_status);

#endif
