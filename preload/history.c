/*
 * The allocation history's producer side (record --alloc-history, issue
 * 14): every allocation and free the tracker counts goes, with its time,
 * into a ring of the calling thread in the shared region
 * (preload/heap-region.h); rsprof drains the rings (util/heap/history.c).
 *
 * A ring has one producer at a time, its thread: the event is written
 * with plain stores and the head published with a release store, so a
 * call costs a clock read and 32 bytes, no atomic read-modify-write. A
 * full ring (rsprof fell behind) makes the thread wait until rsprof has
 * drained it: every event is kept, the program runs at the pace rsprof
 * writes, and the time waited is summed in the region. The wait is a
 * futex wait through syscall() (no lock, no allocation, no cancellation
 * point; errno kept), in slices of WAIT_SLICE_NS, between which the
 * thread looks whether rsprof is still there (preload/heap-region.h): an
 * rsprof gone or stuck makes it give up, and the events are dropped and
 * counted from then on. A thread takes a ring on its first
 * event (a free one left by an exited thread, else a new one) and gives
 * it back when it exits; a thread that finds none counts its events as
 * dropped (HEAP_RSTAT_HISTORY_NO_RING).
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "preload/tracker.h"

/* A wait on the futex lasts this long at most before the thread looks again. */
#define WAIT_SLICE_NS	10000000ull	/* 10 ms */

TRACKER_HOT bool history_on;

/* The thread's ring, valid for the region (and process) it was taken in. */
static __thread struct {
	struct heap_region_ring *ring;
	const struct heap_region *region;
	uint32_t pid;
} hist __attribute__((tls_model("initial-exec")));

static pthread_key_t ring_key;

static struct heap_region_ring *ring_at(const struct heap_region *r, uint64_t i)
{
	return (void *)((char *)r + r->off_rings + i * r->ring_size);
}

/* The thread exits: its ring goes to the next thread (what it holds stays
 * for rsprof to read; the next producer writes after it). */
static void ring_release(void *p)
{
	struct heap_region_ring *ring = p;

	if (ring && ring == hist.ring) {
		hist.ring = NULL;
		hist.region = NULL;	/* what other destructors free takes a ring again */
		__atomic_store_n(&ring->state, HEAP_RING_FREE, __ATOMIC_RELEASE);
	}
}

bool history__fits(const struct heap_region *r, uint64_t size)
{
	return !r->ring_count ||
	       (r->ring_cap && !(r->ring_cap & (r->ring_cap - 1)) &&
		r->ring_size >= sizeof(struct heap_region_ring) +
				(uint64_t)r->ring_cap * sizeof(struct heap_region_event) &&
		r->off_rings + (uint64_t)r->ring_count * r->ring_size <= size);
}

void history__init(struct heap_region *r)
{
	history_on = false;
	if (!r->ring_count)
		return;
	/* a region after an exec is a copy of the first one's header */
	__atomic_store_n(&r->n_rings, 0, __ATOMIC_RELEASE);
	if (pthread_key_create(&ring_key, ring_release))
		return;
	history_on = true;
}

static struct heap_region_ring *ring_take(struct heap_region *r)
{
	uint64_t n = __atomic_load_n(&r->n_rings, __ATOMIC_ACQUIRE), i;
	struct heap_region_ring *ring = NULL;
	int slot;

	for (i = 0; i < n && i < r->ring_count && !ring; i++) {
		uint32_t free_ = HEAP_RING_FREE;
		struct heap_region_ring *c = ring_at(r, i);

		if (__atomic_compare_exchange_n(&c->state, &free_, HEAP_RING_OWNED, false,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			ring = c;
	}
	if (!ring) {
		i = __atomic_fetch_add(&r->n_rings, 1, __ATOMIC_ACQ_REL);
		if (i >= r->ring_count)
			return NULL;
		ring = ring_at(r, i);
		__atomic_store_n(&ring->state, HEAP_RING_OWNED, __ATOMIC_RELEASE);
	}
	ring->tid = (uint32_t)syscall(SYS_gettid);
	slot = callout__begin(HEAP_CALLOUT_THREAD_KEY);
	pthread_setspecific(ring_key, ring);	/* ring_release() when the thread ends */
	callout__end(slot);
	return ring;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Is rsprof gone: the launched process's parent is another, or the pipe of
 * an injected tracker hung up? */
static bool recorder_gone(const struct heap_region *r)
{
	uint32_t rec = __atomic_load_n(&r->hist_recorder, __ATOMIC_RELAXED);

	if (tracker_injected)
		return inject__peer_gone();
	return rec && (uint32_t)syscall(SYS_getppid) != rec;
}

/*
 * The ring is full: wait until rsprof has taken events from it. true:
 * there is room; false: no more waiting (HEAP_HIST_CLOSED or
 * HEAP_HIST_GAVE_UP set, or history_on cleared by a detach).
 */
static bool ring_wait(struct heap_region *r, struct heap_region_ring *ring, uint64_t head)
{
	uint64_t cap = r->ring_cap, t0 = mono_ns(), now = t0, seen = t0;
	uint64_t beat = __atomic_load_n(&r->hist_beat_ns, __ATOMIC_ACQUIRE);
	int saved = errno;
	bool room = false;

	for (;;) {
		struct timespec slice = { 0, (long)WAIT_SLICE_NS };
		uint64_t tail, b;

		if (!__atomic_load_n(&history_on, __ATOMIC_RELAXED) ||
		    (__atomic_load_n(&r->hist_state, __ATOMIC_ACQUIRE) &
		     (HEAP_HIST_CLOSED | HEAP_HIST_GAVE_UP)))
			break;
		/* `waiting` before the tail is read again; rsprof moves the tail,
		 * then reads `waiting` (both sequentially consistent) */
		__atomic_store_n(&ring->waiting, 1, __ATOMIC_SEQ_CST);
		tail = __atomic_load_n(&ring->tail, __ATOMIC_SEQ_CST);
		if (head - tail < cap) {
			room = true;
			break;
		}
		/* the low word of the tail (little-endian): rsprof wakes it */
		syscall(SYS_futex, (uint32_t *)&ring->tail, FUTEX_WAIT, (uint32_t)tail, &slice,
			NULL, 0);
		now = mono_ns();
		b = __atomic_load_n(&r->hist_beat_ns, __ATOMIC_ACQUIRE);
		if (b != beat) {
			beat = b;
			seen = now;
		} else if (now - seen >= HEAP_HIST_PATIENCE_MS * 1000000ull || recorder_gone(r)) {
			__atomic_fetch_or(&r->hist_state, HEAP_HIST_GAVE_UP, __ATOMIC_ACQ_REL);
			break;
		}
	}
	__atomic_store_n(&ring->waiting, 0, __ATOMIC_RELAXED);
	now = mono_ns();
	if (now > t0) {
		__atomic_fetch_add(&r->hist_wait_ns, now - t0, __ATOMIC_RELAXED);
		__atomic_fetch_add(&r->hist_waits, 1, __ATOMIC_RELAXED);
	}
	errno = saved;
	return room;
}

void history__event(uint64_t ptr, uint64_t size, uint32_t site, enum heap_event_kind kind)
{
	struct heap_region *r = tracker_region;
	struct heap_region_ring *ring = hist.ring;
	struct heap_region_event *ev;
	struct timespec ts;
	uint64_t head, tail;

	if (unlikely(hist.region != r || hist.pid != r->pid)) {
		/* first event of the thread, or a new region (fork, exec) */
		hist.region = r;
		hist.pid = r->pid;
		ring = hist.ring = ring_take(r);
	}
	if (unlikely(!ring)) {
		tracker_stat(HEAP_RSTAT_HISTORY_NO_RING, 1);
		return;
	}
	if (unlikely(__atomic_load_n(&r->hist_state, __ATOMIC_RELAXED))) {
		/* the recording ended: nothing more; rsprof gave no sign of life: counted */
		if (!(__atomic_load_n(&r->hist_state, __ATOMIC_RELAXED) & HEAP_HIST_CLOSED))
			__atomic_store_n(&ring->dropped, ring->dropped + 1, __ATOMIC_RELAXED);
		return;
	}
	head = ring->head;
	tail = __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
	if (unlikely(head - tail >= r->ring_cap) && !ring_wait(r, ring, head)) {
		if (!(__atomic_load_n(&r->hist_state, __ATOMIC_RELAXED) & HEAP_HIST_CLOSED))
			__atomic_store_n(&ring->dropped, ring->dropped + 1, __ATOMIC_RELAXED);
		return;
	}
	/* stamped once there is room: a drain's cut never passes it by */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ev = &ring->ev[head & (r->ring_cap - 1)];
	ev->time_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	ev->ptr = ptr;
	ev->size = size;
	ev->site = site;
	ev->kind = kind;
	__atomic_store_n(&ring->head, head + 1, __ATOMIC_RELEASE);
}
