/*
 * The blocks without a header (preload/block.h): pointer -> {size, site}
 * for the few the tracker counts but cannot give a header (alignments
 * above BLOCK_ALIGN_MAX: valloc, pvalloc, page-aligned buffers; sizes near
 * the address space's).
 *
 * Sharded by the pointer's hash into 64 open-addressing tables (linear
 * probing, deletion by backward shift, doubled at 70% load), each behind
 * its own spinlock: no lock is shared by all threads. The tables are
 * mmap'd, never malloc'd: the tracker's memory stays out of the program's
 * heap and out of its own allocator calls.
 *
 * A signal handler that allocates or frees while its thread holds a shard
 * lock never reaches here: the thread is marked busy, and the handler's
 * calls are not counted (preload/malloc.c).
 *
 * A filter in front (live_filter): a counter per hash bucket of the
 * pointers in the table, raised before an entry goes in and lowered after
 * it goes out, so that a pointer whose bucket is at zero is not in the
 * table: the free of a block the tracker never counted (most frees, with
 * byte sampling) is told so by one load, no lock. A counter that reaches
 * its top stays there (always "maybe"). A bucket's pointers all hash to
 * one shard (the filter's slot and the shard are both the top bits of
 * mix()), so its counter changes under that shard's lock: a load and a
 * store, no atomic read-modify-write. Nor is there a count of all entries:
 * a take looks at its shard's.
 *
 * Why a lookup may skip the lock when the filter or the shard's count says
 * nothing is there: a block's entry went in before its allocation
 * returned, and the program orders that before the block's free.
 */
#include <sched.h>
#include <string.h>
#include <sys/mman.h>

#include "preload/tracker.h"

#define SHARD_BITS	6
#define SHARDS		(1u << SHARD_BITS)
#define INITIAL_CAP	512

struct shard {
	int lock;
	struct live_entry *v;
	uint64_t mask;		/* capacity - 1; 0: no table yet */
	uint64_t n;
} __attribute__((aligned(64)));

static struct shard shards[SHARDS];
uint8_t live_filter[LIVE_FILTER];

/* the filter's slot is the top 16 bits of live__hash(), the shard its top SHARD_BITS */
_Static_assert(LIVE_FILTER == 1u << 16 && SHARD_BITS <= 16, "each filter slot belongs to one shard");

static inline uint8_t *filter_of(uint64_t ptr)
{
	return &live_filter[live__filter_slot(ptr)];
}

/* Under the lock of ptr's shard (the only writer of its slot). */
static void filter_up(uint64_t ptr)
{
	uint8_t *f = filter_of(ptr), v = __atomic_load_n(f, __ATOMIC_RELAXED);

	if (v != UINT8_MAX)
		__atomic_store_n(f, v + 1, __ATOMIC_RELEASE);
}

static void filter_down(uint64_t ptr)
{
	uint8_t *f = filter_of(ptr), v = __atomic_load_n(f, __ATOMIC_RELAXED);

	if (v != UINT8_MAX && v)
		__atomic_store_n(f, v - 1, __ATOMIC_RELEASE);
}

static inline void lock(int *l)
{
	int spins = 0;

	while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE)) {
		while (__atomic_load_n(l, __ATOMIC_RELAXED)) {
			__builtin_ia32_pause();
			if (++spins > 200)
				sched_yield();
		}
	}
}

static inline void unlock(int *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

static inline uint64_t mix(uint64_t ptr)
{
	return live__hash(ptr);
}

static struct live_entry *table_new(uint64_t cap)
{
	size_t len = cap * sizeof(struct live_entry);
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	/* random access all over it: huge pages save a TLB miss on most lookups */
	if (len >= (2u << 20))
		madvise(p, len, MADV_HUGEPAGE);
	return p;
}

static inline uint64_t slot_of(uint64_t h, uint64_t mask)
{
	return (h ^ (h >> 29)) & mask;
}

/* Double the table (or make the first). false: no memory. */
static bool grow(struct shard *s)
{
	uint64_t cap = s->mask ? (s->mask + 1) * 2 : INITIAL_CAP, mask = cap - 1;
	struct live_entry *v = table_new(cap);

	if (!v)
		return false;
	for (uint64_t i = 0; s->mask && i <= s->mask; i++) {
		uint64_t j;

		if (!s->v[i].ptr)
			continue;
		j = slot_of(mix(s->v[i].ptr), mask);
		while (v[j].ptr)
			j = (j + 1) & mask;
		v[j] = s->v[i];
	}
	if (s->v)
		munmap(s->v, (s->mask + 1) * sizeof(*s->v));
	s->v = v;
	s->mask = mask;
	return true;
}

int live__put(const struct live_entry *e, struct live_entry *stale)
{
	uint64_t h = mix(e->ptr), i;
	struct shard *s = &shards[h >> (64 - SHARD_BITS)];

	lock(&s->lock);
	if ((s->n + 1) * 10 > (s->mask + 1) * 7 && !grow(s)) {
		unlock(&s->lock);
		return -1;
	}
	for (i = slot_of(h, s->mask); s->v[i].ptr; i = (i + 1) & s->mask) {
		if (s->v[i].ptr == e->ptr) {
			*stale = s->v[i];
			s->v[i] = *e;
			unlock(&s->lock);
			return 1;
		}
	}
	filter_up(e->ptr);
	s->v[i] = *e;
	__atomic_store_n(&s->n, s->n + 1, __ATOMIC_RELAXED);
	unlock(&s->lock);
	return 0;
}

bool live__take(uint64_t ptr, struct live_entry *e)
{
	uint64_t h = mix(ptr), i, j, mask;
	struct shard *s = &shards[h >> (64 - SHARD_BITS)];

	/* most frees here are of blocks allocated before the tracker started,
	 * or (byte sampling) not counted: no lock while the filter or the
	 * shard says it is not there */
	if (!live__maybe(ptr) || !__atomic_load_n(&s->n, __ATOMIC_RELAXED))
		return false;
	lock(&s->lock);
	mask = s->mask;
	if (!mask) {
		unlock(&s->lock);
		return false;
	}
	for (i = slot_of(h, mask); s->v[i].ptr != ptr; i = (i + 1) & mask) {
		if (!s->v[i].ptr) {
			unlock(&s->lock);
			return false;
		}
	}
	*e = s->v[i];
	/* backward shift: move up each later entry whose home is at or before the hole */
	for (j = (i + 1) & mask; s->v[j].ptr; j = (j + 1) & mask) {
		uint64_t home = slot_of(mix(s->v[j].ptr), mask);

		if (((j - home) & mask) >= ((j - i) & mask)) {
			s->v[i] = s->v[j];
			i = j;
		}
	}
	s->v[i].ptr = 0;
	__atomic_store_n(&s->n, s->n - 1, __ATOMIC_RELAXED);
	filter_down(ptr);
	unlock(&s->lock);
	return true;
}

/*
 * A fork child starts its own account (preload/tracker.c): every entry is
 * forgotten, the parent's blocks become unknown frees when the child frees
 * them. The tables go with munmap, the locks are reset: a thread of the
 * parent may have held one at the fork, and it does not exist here.
 * Only the forking thread runs: no lock is needed.
 */
void live__reset(void)
{
	for (unsigned int i = 0; i < SHARDS; i++) {
		struct shard *s = &shards[i];

		if (s->v)
			munmap(s->v, (s->mask + 1) * sizeof(*s->v));
		s->v = NULL;
		s->mask = 0;
		s->n = 0;
		s->lock = 0;
	}
	memset(live_filter, 0, sizeof(live_filter));
}

/*
 * The tracker attached to a running process again (preload/inject.c):
 * the entries of the last attach go (their sites were the last region's),
 * their blocks' frees become unknown frees. Each shard under its lock: a
 * thread of the last attach may still be at it.
 */
void live__forget(void)
{
	for (unsigned int i = 0; i < SHARDS; i++) {
		struct shard *s = &shards[i];

		lock(&s->lock);
		if (s->v)
			munmap(s->v, (s->mask + 1) * sizeof(*s->v));
		s->v = NULL;
		s->mask = 0;
		__atomic_store_n(&s->n, 0, __ATOMIC_RELAXED);
		unlock(&s->lock);
	}
}
