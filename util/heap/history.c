/*
 * Draining the tracker's event rings (util/heap/history.h).
 */
#include "util/heap/history.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "preload/heap-region.h"
#include "util/error.h"

#define DRAIN_NS	2000000		/* 2 ms */

struct hregion {
	struct heap_region *r;
	/* its layout, as checked when it was added: never read again from the
	 * region, which the target may write anything into */
	uint64_t off_rings, ring_size, ring_cap, ring_count, off_sites, site_cap;
	uint64_t salt;
};

struct heap_history {
	pthread_mutex_t lock;
	pthread_t thread;
	bool running;
	bool stop;
	struct hregion *regions;
	size_t n_regions;
	uint64_t gone_dropped, gone_rings;	/* of the regions removed */
	uint64_t gone_wait_ns, gone_waits;
	bool gone_gave_up;
	/* the queue (drain -> take), and the batch handed out by take */
	struct heap_hist_event *q, *out;
	size_t n_q, cap_q, cap_out;
	uint64_t events;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int heap_history__new(struct heap_history **out)
{
	struct heap_history *hh = calloc(1, sizeof(*hh));

	*out = NULL;
	if (!hh)
		return -ENOMEM;
	pthread_mutex_init(&hh->lock, NULL);
	*out = hh;
	return 0;
}

uint64_t heap_history__layout(struct heap_region *r, uint64_t off)
{
	uint64_t ring = sizeof(struct heap_region_ring) +
			(uint64_t)HEAP_HISTORY_RING_CAP * sizeof(struct heap_region_event);

	ring = (ring + 4095) & ~4095ull;
	r->off_rings = off;
	r->ring_size = ring;
	r->ring_cap = HEAP_HISTORY_RING_CAP;
	r->ring_count = HEAP_HISTORY_RINGS;
	r->hist_recorder = (uint32_t)getpid();	/* the launched process's parent */
	return ring * HEAP_HISTORY_RINGS;
}

static const struct heap_region_ring *ring_at(const struct hregion *g, uint64_t i)
{
	return (const void *)((const char *)g->r + g->off_rings + i * g->ring_size);
}

static int ev_cmp(const void *x, const void *y)
{
	const struct heap_hist_event *a = x, *b = y;

	return (a->time_ns > b->time_ns) - (a->time_ns < b->time_ns);
}

/* An allocation's stack key, as util/heap/preload.c gives it. */
static uint64_t key_of(const struct hregion *g, uint32_t site)
{
	const struct heap_region_site *recs = (const void *)((const char *)g->r + g->off_sites);
	uint64_t key;

	if (site >= g->site_cap)
		return 1;
	key = __atomic_load_n(&recs[site].key, __ATOMIC_ACQUIRE);
	return (key ^ g->salt) ? key ^ g->salt : 1;
}

/* Room for n more events in the queue. 0 or -ENOMEM. */
static int queue_grow(struct heap_history *hh, size_t n)
{
	size_t cap = hh->cap_q ? hh->cap_q : 65536;
	void *v;

	if (hh->n_q + n <= hh->cap_q)
		return 0;
	while (cap < hh->n_q + n)
		cap *= 2;
	v = realloc(hh->q, cap * sizeof(*hh->q));
	if (!v)
		return -ENOMEM;
	hh->q = v;
	hh->cap_q = cap;
	return 0;
}

/* Wake the threads waiting for the ring's tail to move (preload/history.c). */
static void ring_wake(struct heap_region_ring *ring, bool always)
{
	if (always || __atomic_load_n(&ring->waiting, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, (uint32_t *)&ring->tail, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/*
 * One drain, lock held: every ring's events up to the cut, appended to
 * the queue, then that part sorted by time. The queue holds
 * HEAP_HISTORY_QUEUE events at most (the rings wait, and their threads
 * with them, while the writer catches up); all: whatever it takes (a
 * region about to go). Each region drained learns that rsprof is alive.
 */
static int drain(struct heap_history *hh, bool all)
{
	uint64_t cut = now_ns();
	size_t first = hh->n_q;
	size_t room = all ? SIZE_MAX : HEAP_HISTORY_QUEUE > hh->n_q ? HEAP_HISTORY_QUEUE - hh->n_q : 0;
	int err = 0;

	for (size_t g = 0; g < hh->n_regions && !err; g++) {
		const struct hregion *hr = &hh->regions[g];
		uint64_t nr = __atomic_load_n(&hr->r->n_rings, __ATOMIC_ACQUIRE);
		uint64_t mask = hr->ring_cap - 1;

		__atomic_store_n(&hr->r->hist_beat_ns, cut, __ATOMIC_RELEASE);
		if (nr > hr->ring_count)
			nr = hr->ring_count;
		for (uint64_t i = 0; i < nr && room && !err; i++) {
			struct heap_region_ring *ring = (struct heap_region_ring *)ring_at(hr, i);
			uint64_t head = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE);
			uint64_t tail = ring->tail;

			if (head - tail > hr->ring_cap)
				tail = head - hr->ring_cap;	/* never: the producer checks */
			if (head != tail)
				err = queue_grow(hh, head - tail < room ? head - tail : room);
			while (!err && tail != head && room) {
				const struct heap_region_event *e = &ring->ev[tail & mask];
				struct heap_hist_event *o;

				if (e->time_ns > cut)
					break;	/* stamped after the cut: the next drain */
				o = &hh->q[hh->n_q++];
				o->time_ns = e->time_ns;
				o->ptr = e->ptr;
				o->size = e->size;
				o->key = e->kind == HEAP_EVENT_ALLOC ? key_of(&hh->regions[g], e->site) : 0;
				tail++;
				room--;
			}
			/* the tail before `waiting` is read (the producer: the reverse) */
			__atomic_store_n(&ring->tail, tail, __ATOMIC_SEQ_CST);
			ring_wake(ring, false);
		}
	}
	if (hh->n_q > first)
		qsort(hh->q + first, hh->n_q - first, sizeof(*hh->q), ev_cmp);
	hh->events += hh->n_q - first;
	return err;
}

static void *drain_thread(void *arg)
{
	struct heap_history *hh = arg;
	struct timespec ts = { 0, DRAIN_NS };

	for (;;) {
		bool stop;
		int err;

		pthread_mutex_lock(&hh->lock);
		stop = hh->stop;
		err = stop ? 0 : drain(hh, false);
		pthread_mutex_unlock(&hh->lock);
		if (stop)
			break;
		if (err)
			pr_warn("allocation history: no memory to drain the tracker's events");
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int heap_history__add_region(struct heap_history *hh, struct heap_region *r,
			     const struct heap_region *geo, uint64_t salt)
{
	struct hregion *v;
	int err = 0;

	if (!geo->ring_count)
		return 0;
	pthread_mutex_lock(&hh->lock);
	v = realloc(hh->regions, (hh->n_regions + 1) * sizeof(*v));
	if (!v) {
		pthread_mutex_unlock(&hh->lock);
		return -ENOMEM;
	}
	hh->regions = v;
	hh->regions[hh->n_regions++] = (struct hregion){
		.r = r, .off_rings = geo->off_rings, .ring_size = geo->ring_size,
		.ring_cap = geo->ring_cap, .ring_count = geo->ring_count,
		.off_sites = geo->off_sites, .site_cap = geo->site_cap, .salt = salt,
	};
	pthread_mutex_unlock(&hh->lock);
	if (!hh->running && !hh->stop) {
		sigset_t all, old;

		/* signals stay with the recorder's thread */
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		err = -pthread_create(&hh->thread, NULL, drain_thread, hh);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (err)
			pr_err("cannot start the allocation history's thread: %s", strerror(-err));
		else
			hh->running = true;
	}
	return err;
}

/* What r's rings dropped and how many it handed out (left: what they still hold). */
static void region_stats(const struct hregion *g, bool left, uint64_t *dropped,
			 uint64_t *rings)
{
	uint64_t nr = __atomic_load_n(&g->r->n_rings, __ATOMIC_ACQUIRE);


	*dropped += __atomic_load_n(&g->r->stats[HEAP_RSTAT_HISTORY_NO_RING], __ATOMIC_RELAXED);
	if (nr > g->ring_count)
		nr = g->ring_count;	/* threads beyond the rings: in NO_RING */
	*rings += nr;
	for (uint64_t i = 0; i < nr; i++) {
		const struct heap_region_ring *ring = ring_at(g, i);

		*dropped += __atomic_load_n(&ring->dropped, __ATOMIC_RELAXED);
		/* left in the ring when the recording ended (or its region went) */
		if (left)
			*dropped += __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE) - ring->tail;
	}
}

/* The time r's threads waited for the drain, and whether they gave up. */
static void region_waits(const struct hregion *g, uint64_t *ns, uint64_t *waits, bool *gave_up)
{
	*ns += __atomic_load_n(&g->r->hist_wait_ns, __ATOMIC_RELAXED);
	*waits += __atomic_load_n(&g->r->hist_waits, __ATOMIC_RELAXED);
	if (__atomic_load_n(&g->r->hist_state, __ATOMIC_RELAXED) & HEAP_HIST_GAVE_UP)
		*gave_up = true;
}

/* No more draining of g: its threads neither wait nor record from now on. */
static void region_close(const struct hregion *g)
{
	uint64_t nr = __atomic_load_n(&g->r->n_rings, __ATOMIC_ACQUIRE);

	__atomic_fetch_or(&g->r->hist_state, HEAP_HIST_CLOSED, __ATOMIC_SEQ_CST);
	if (nr > g->ring_count)
		nr = g->ring_count;
	for (uint64_t i = 0; i < nr; i++)
		ring_wake((struct heap_region_ring *)ring_at(g, i), true);
}

/*
 * Stop draining r (its process exec'd or exited and rsprof is about to
 * unmap it): one last drain first, of everything its rings hold.
 */
int heap_history__remove_region(struct heap_history *hh, struct heap_region *r)
{
	int err = 0;

	if (!hh)
		return 0;
	pthread_mutex_lock(&hh->lock);
	for (size_t g = 0; g < hh->n_regions; g++) {
		if (hh->regions[g].r != r)
			continue;
		err = drain(hh, true);
		region_stats(&hh->regions[g], true, &hh->gone_dropped, &hh->gone_rings);
		region_waits(&hh->regions[g], &hh->gone_wait_ns, &hh->gone_waits,
			     &hh->gone_gave_up);
		region_close(&hh->regions[g]);
		hh->regions[g] = hh->regions[--hh->n_regions];
		break;
	}
	pthread_mutex_unlock(&hh->lock);
	return err;
}

int heap_history__take(struct heap_history *hh, const struct heap_hist_event **v, size_t *n)
{
	struct heap_hist_event *t;
	size_t c;

	pthread_mutex_lock(&hh->lock);
	if (!hh->running) {
		/* no thread (stopped, or not started): drain here */
		int err = drain(hh, false);

		if (err) {
			pthread_mutex_unlock(&hh->lock);
			return err;
		}
	}
	t = hh->out;
	c = hh->cap_out;
	hh->out = hh->q;
	hh->cap_out = hh->cap_q;
	*v = hh->out;
	*n = hh->n_q;
	hh->q = t;
	hh->cap_q = c;
	hh->n_q = 0;
	pthread_mutex_unlock(&hh->lock);
	return 0;
}

void heap_history__stop(struct heap_history *hh)
{
	if (!hh)
		return;
	pthread_mutex_lock(&hh->lock);
	hh->stop = true;
	/* the recording ends: no thread of the program waits for it any more */
	for (size_t g = 0; g < hh->n_regions; g++)
		region_close(&hh->regions[g]);
	pthread_mutex_unlock(&hh->lock);
	if (hh->running) {
		pthread_join(hh->thread, NULL);
		hh->running = false;
	}
	/* the last events: the queue may be full, drain as it empties */
	pthread_mutex_lock(&hh->lock);
	if (drain(hh, false))
		pr_warn("allocation history: no memory to drain the tracker's events");
	pthread_mutex_unlock(&hh->lock);
}

void heap_history__stats(struct heap_history *hh, struct heap_history_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!hh)
		return;
	pthread_mutex_lock(&hh->lock);
	st->events = hh->events;
	st->dropped = hh->gone_dropped;
	st->rings = hh->gone_rings;
	st->wait_ns = hh->gone_wait_ns;
	st->waits = hh->gone_waits;
	st->gave_up = hh->gone_gave_up;
	for (size_t g = 0; g < hh->n_regions; g++) {
		region_stats(&hh->regions[g], hh->stop, &st->dropped, &st->rings);
		region_waits(&hh->regions[g], &st->wait_ns, &st->waits, &st->gave_up);
	}
	pthread_mutex_unlock(&hh->lock);
}

void heap_history__delete(struct heap_history *hh)
{
	if (!hh)
		return;
	heap_history__stop(hh);
	pthread_mutex_destroy(&hh->lock);
	free(hh->regions);
	free(hh->q);
	free(hh->out);
	free(hh);
}
