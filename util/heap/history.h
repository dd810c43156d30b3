#ifndef RSPROF_UTIL_HEAP_HISTORY_H
#define RSPROF_UTIL_HEAP_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The allocation history's consumer side (record --alloc-history, issue
 * 14): a thread of rsprof drains the in-process tracker's event rings
 * (preload/history.c, preload/heap-region.h) every few milliseconds into
 * a bounded queue, in time order; the recorder takes the queue at each
 * checkpoint and writes it in seed 001's layout (util/db/history.h).
 *
 * Order: a drain first reads the clock (the cut), then takes from each
 * ring only the events stamped at or before the cut. An event that one
 * depends on (the allocation of the block a free releases, the free that
 * let malloc hand the address out again) is stamped and published before
 * the call that depends on it returns, so an event taken is never ahead of
 * one it depends on, whatever the order the rings are read in; the batch
 * is then sorted by time.
 *
 * Back-pressure, never a loss: when the queue is full (the writer is
 * behind) the drain leaves the rings alone, they fill, and a thread of
 * the program that finds its ring full waits until a drain has taken
 * from it (preload/history.c): the program runs at the pace the events
 * are written. Each drain writes the time into the region (a sign of
 * life: a thread stops waiting for an rsprof that gives none for
 * HEAP_HIST_PATIENCE_MS) and wakes the threads waiting on the rings it
 * took from. A region removed is drained of everything first; when the
 * history stops, the regions are closed (no thread waits any more).
 */
struct heap_region;
struct heap_history;

/* The geometry of the rings (preload/heap-region.h): 64 threads at once,
 * 65,536 events (2 MiB) each; a drain every 2 ms. */
#define HEAP_HISTORY_RINGS	64
#define HEAP_HISTORY_RING_CAP	(1u << 16)
/* Events kept between the drain and the writer (32 bytes each). */
#define HEAP_HISTORY_QUEUE	(1u << 20)

struct heap_hist_event {
	uint64_t time_ns;	/* CLOCK_MONOTONIC */
	uint64_t ptr, size;
	uint64_t key;		/* an allocation: its stack key (util/heap/heap.c's); 0: a free */
};

struct heap_history_stats {
	uint64_t events;	/* taken from the rings */
	uint64_t dropped;	/* lost: the tracker gave up waiting, its thread found
				 * no ring free, or left in the rings at the end */
	uint64_t rings;		/* rings handed out (threads at once, at most) */
	uint64_t wait_ns;	/* the program's threads waited for the drain, in all */
	uint64_t waits;		/* times a thread waited */
	bool gave_up;		/* the tracker stopped waiting: rsprof gave no sign of
				 * life for HEAP_HIST_PATIENCE_MS, or was gone */
};

/* 0 or -ENOMEM. */
int heap_history__new(struct heap_history **out);
/* Lays the rings out in r from offset off (page aligned); returns their bytes. */
uint64_t heap_history__layout(struct heap_region *r, uint64_t off);
/* Drain r from now on (its stack keys salted with salt; its layout geo,
 * checked by the caller: never read from r again); the first starts the
 * thread. 0, -ENOMEM or -errno of pthread_create. */
int heap_history__add_region(struct heap_history *hh, struct heap_region *r,
			     const struct heap_region *geo, uint64_t salt);
/* Stop draining r before it is unmapped: a last drain, the rest counted
 * dropped. 0 (also when r was not drained, or hh is NULL) or -ENOMEM. */
int heap_history__remove_region(struct heap_history *hh, struct heap_region *r);
/*
 * The events drained since the last call, in time order: *v, valid until
 * the next call (or delete). After heap_history__stop(), each call drains
 * what is left (a full queue left some in the rings): call until *n is 0.
 * 0 or -ENOMEM.
 */
int heap_history__take(struct heap_history *hh, const struct heap_hist_event **v, size_t *n);
/* The last drain (the target has gone, or the recording stops), then no more. */
void heap_history__stop(struct heap_history *hh);
void heap_history__stats(struct heap_history *hh, struct heap_history_stats *st);
void heap_history__delete(struct heap_history *hh);	/* stops it; NULL ok */

#endif
