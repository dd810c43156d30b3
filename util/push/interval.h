#ifndef RSPROF_UTIL_PUSH_INTERVAL_H
#define RSPROF_UTIL_PUSH_INTERVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/push/dest.h"

/*
 * A profile's intervals as requests to a store. An interval (from_ms,
 * to_ms] holds the checkpoints stamped after from_ms and no later than
 * to_ms (ms from the start of the recording); with a push interval P the
 * intervals are (kP, (k+1)P]. Each becomes one request per process and
 * profile type that has data in it (its part: "cpu/PID", "heap/PID"):
 *
 *   CPU   a pprof of samples/count and cpu/nanoseconds, the interval's
 *         samples per call stack (one frame without -g);
 *   heap  a pprof of alloc_objects, alloc_space (what the interval
 *         allocated) and inuse_objects, inuse_space (what was live at its
 *         end), Go's sample types, which the stores know.
 *
 * Locations carry their inline chains (pprof Line[]), mappings their
 * ranges and build-ids. Labels: service_name (the executable's name unless
 * given), hostname (where it was recorded), pid, and the user's. For OTLP
 * the same stacks go into an OTLP profiles export instead of a pprof.
 */
struct push_source;
struct push_item;

struct push_label {
	char *name, *value;
};

/* What is pushed where: the store, the push interval and the user's labels. */
struct push_spec {
	struct push_dest dest;
	uint64_t interval_ms;
	struct push_label *labels;	/* --label, as given (service_name, hostname, pid
					 * among them replace rsprof's own) */
	size_t n_labels;
};

/* The profile read through a connection of its own (db__open()). Errors printed. */
int push_source__open(const char *path, struct push_source **out);
void push_source__close(struct push_source *s);	/* NULL ok */
/* The absolute path of the profile. */
const char *push_source__path(const struct push_source *s);

/*
 * What the file holds now: its last checkpoint's timestamp (0: none) and
 * whether the recording has ended (meta.end_time). 0 or -RSPROF_EDB.
 */
int push_source__refresh(struct push_source *s, uint64_t *last_ms, bool *finished);

/*
 * The requests of interval (from_ms, to_ms], interval_ms the push interval
 * it is one of (0: a window pushed whole): for each one whose part
 * skip(ctx, part) does not refuse, emit(ctx, it) (it is the callee's to
 * free with push_item__free()). 0, or the first error.
 */
int push_source__build(struct push_source *s, const struct push_spec *spec, uint64_t from_ms,
		       uint64_t to_ms, uint64_t interval_ms, bool (*skip)(void *ctx, const char *part),
		       int (*emit)(void *ctx, struct push_item *it), void *ctx);

#endif
