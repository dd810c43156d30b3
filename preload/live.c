/*
 * The live pointers: pointer -> {size, site, tick}, for millions of blocks.
 *
 * The shared table: sharded by the pointer's hash into 64 open-addressing
 * tables (linear probing, deletion by backward shift, doubled at 70%
 * load), each behind its own spinlock: no lock is shared by all threads,
 * and two threads collide only when they touch the same shard at the same
 * instant. The tables are mmap'd, never malloc'd: the tracker's memory
 * stays out of the program's heap and out of its own allocator calls.
 *
 * In front of it, each thread's young table: a new block goes into a
 * direct-mapped table of the allocating thread, with plain stores, and
 * moves to the shared table only when another block needs its slot. Most
 * blocks are freed young by the thread that made them: no lock, no atomic
 * instruction at all. Another thread may free a block that is still
 * young: after a miss in its own young table and in the shared one it
 * looks in the others', and claims the entry with a compare-and-swap of its
 * pointer. The owner moving an entry out marks it first (pointer | MOVING,
 * with a compare-and-swap too), puts it in the shared table, then empties
 * the slot; a thread that finds the mark waits and looks in the shared
 * table again. The owner freeing its own young block needs neither: no
 * other thread may free that pointer at the same time.
 *
 * A signal handler that allocates while its thread holds a shard lock
 * never reaches here: the thread is marked busy, and the handler's calls
 * pass through untracked (preload/tracker.c).
 */
#include <sched.h>
#include <string.h>
#include <sys/mman.h>

#include "preload/tracker.h"

#define SHARD_BITS	6
#define SHARDS		(1u << SHARD_BITS)
#define INITIAL_CAP	512

#define YOUNG_SLOTS	128	/* per thread, direct-mapped */
#define YOUNG_TABLES	64	/* threads with one at once; others use the shared table */
#define MOVING		1ULL	/* low bit of a young entry's pointer: being moved out */

struct young {
	struct live_entry e[YOUNG_SLOTS];
	int used;
} __attribute__((aligned(64)));

static struct young youngs[YOUNG_TABLES];
static unsigned int n_youngs;	/* tables handed out at least once */

/*
 * An entry of the shared table: 16 bytes (its size saturates at 1 TiB; its
 * tick is gone: a block moved out of its young table was not freed before
 * the next allocation, so it is not a temporary).
 */
struct shared_entry {
	uint64_t ptr;
	uint64_t meta;		/* size (40 bits) | site << 40 */
};

#define SIZE_BITS	40
#define SIZE_MAX40	((1ULL << SIZE_BITS) - 1)

static inline struct shared_entry pack(const struct live_entry *e)
{
	uint64_t size = e->size < SIZE_MAX40 ? e->size : SIZE_MAX40;

	return (struct shared_entry){ .ptr = e->ptr, .meta = size | (uint64_t)e->site << SIZE_BITS };
}

static inline void unpack(const struct shared_entry *s, struct live_entry *e)
{
	e->ptr = s->ptr;
	e->size = s->meta & SIZE_MAX40;
	e->site = (uint32_t)(s->meta >> SIZE_BITS);
	e->tick = LIVE_NO_TICK;
}

struct shard {
	int lock;
	struct shared_entry *v;
	uint64_t mask;		/* capacity - 1; 0: no table yet */
	uint64_t n;
} __attribute__((aligned(64)));

static struct shard shards[SHARDS];

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
	return (ptr >> 4) * 0x9e3779b97f4a7c15ULL;
}

static struct shared_entry *table_new(uint64_t cap)
{
	size_t len = cap * sizeof(struct shared_entry);
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
	struct shared_entry *v = table_new(cap);

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
	int ret = 0;

	lock(&s->lock);
	if ((s->n + 1) * 10 > (s->mask + 1) * 7 && !grow(s)) {
		unlock(&s->lock);
		return -1;
	}
	for (i = slot_of(h, s->mask); s->v[i].ptr; i = (i + 1) & s->mask) {
		if (s->v[i].ptr == e->ptr) {
			unpack(&s->v[i], stale);
			s->v[i] = pack(e);
			unlock(&s->lock);
			return 1;
		}
	}
	s->v[i] = pack(e);
	s->n++;
	unlock(&s->lock);
	return ret;
}

bool live__take(uint64_t ptr, struct live_entry *e)
{
	uint64_t h = mix(ptr), i, j, mask;
	struct shard *s = &shards[h >> (64 - SHARD_BITS)];

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
	unpack(&s->v[i], e);
	/* backward shift: move up each later entry whose home is at or before the hole */
	for (j = (i + 1) & mask; s->v[j].ptr; j = (j + 1) & mask) {
		uint64_t home = slot_of(mix(s->v[j].ptr), mask);

		if (((j - home) & mask) >= ((j - i) & mask)) {
			s->v[i] = s->v[j];
			i = j;
		}
	}
	s->v[i].ptr = 0;
	s->n--;
	unlock(&s->lock);
	return true;
}

/* --- the young tables -------------------------------------------------- */

static inline struct live_entry *young_slot(struct young *y, uint64_t ptr)
{
	return &y->e[(mix(ptr) >> 40) & (YOUNG_SLOTS - 1)];
}

struct young *live__young(void)
{
	for (;;) {
		unsigned int n = __atomic_load_n(&n_youngs, __ATOMIC_ACQUIRE), i;

		for (i = 0; i < n && i < YOUNG_TABLES; i++) {
			int unused = 0;

			if (__atomic_compare_exchange_n(&youngs[i].used, &unused, 1, false,
							__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
				return &youngs[i];
		}
		if (n >= YOUNG_TABLES)
			return NULL;
		/*
		 * One table more. It is claimed like the others, by its used
		 * flag: once n_youngs counts it, a thread scanning above may
		 * take it first (then look again). A plain store here let two
		 * threads share one table, and lose each other's entries
		 * (t1524: two frees of 480,127 missed, 80 threads starting).
		 */
		if (__atomic_compare_exchange_n(&n_youngs, &n, n + 1, false, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			int unused = 0;

			if (__atomic_compare_exchange_n(&youngs[n].used, &unused, 1, false,
							__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
				return &youngs[n];
		}
	}
}

/*
 * Move the entry of slot s (pointer cur) to the shared table, unless
 * another thread claims it first (it freed that block). stale: called for
 * an entry of the same pointer found there (its free went by unseen).
 * -1: no memory (the entry stays young).
 */
static int evict(struct live_entry *s, uint64_t cur, live_stale_fn stale, void *ctx)
{
	struct live_entry old, prev;
	int put;

	if (!__atomic_compare_exchange_n(&s->ptr, &cur, cur | MOVING, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		return 0;	/* claimed by the thread that freed it */
	old = *s;
	old.ptr = cur;
	put = live__put(&old, &prev);
	if (put < 0) {
		__atomic_store_n(&s->ptr, cur, __ATOMIC_RELEASE);
		return -1;
	}
	__atomic_store_n(&s->ptr, 0, __ATOMIC_RELEASE);
	if (put > 0)
		stale(ctx, &prev);
	return 0;
}

void live__young_release(struct young *y, live_stale_fn stale, void *ctx)
{
	if (!y)
		return;
	for (int i = 0; i < YOUNG_SLOTS; i++) {
		uint64_t cur = __atomic_load_n(&y->e[i].ptr, __ATOMIC_ACQUIRE);

		if (cur && evict(&y->e[i], cur, stale, ctx) < 0)
			__atomic_store_n(&y->e[i].ptr, 0, __ATOMIC_RELEASE);	/* lost */
	}
	__atomic_store_n(&y->used, 0, __ATOMIC_RELEASE);
}

void live__prefetch(struct young *y, uint64_t ptr)
{
	uint64_t cur, h;
	struct shard *sh;

	if (!y)
		return;
	cur = young_slot(y, ptr)->ptr;
	if (!cur || cur == ptr)
		return;
	/* the entry that will move out: its place in the shared table, while
	 * the caller walks the stack */
	h = mix(cur);
	sh = &shards[h >> (64 - SHARD_BITS)];
	if (sh->mask)
		__builtin_prefetch(&sh->v[slot_of(h, sh->mask)], 1);
}

void live__prefetch_shared(uint64_t ptr)
{
	uint64_t h = mix(ptr);
	struct shard *sh = &shards[h >> (64 - SHARD_BITS)];
	uint64_t mask = __atomic_load_n(&sh->mask, __ATOMIC_RELAXED);
	struct shared_entry *v = __atomic_load_n(&sh->v, __ATOMIC_RELAXED);

	/* unlocked: a hint only (a table being replaced is still mapped
	 * until the grow that replaces it unmaps it; a stale v may point at
	 * an unmapped page, which a prefetch ignores) */
	if (mask && v)
		__builtin_prefetch(&v[slot_of(h, mask)], 1);
}

int live__add(struct young *y, const struct live_entry *e, live_stale_fn stale, void *ctx)
{
	struct live_entry *s, prev;
	uint64_t cur;
	int put;

	if (!y) {
		put = live__put(e, &prev);
		if (put > 0)
			stale(ctx, &prev);
		return put < 0 ? -1 : 0;
	}
	s = young_slot(y, e->ptr);
	cur = s->ptr;
	if (cur == e->ptr) {
		prev = *s;
		stale(ctx, &prev);
	} else if (cur && evict(s, cur, stale, ctx) < 0) {
		put = live__put(e, &prev);	/* no room to move the old one: the new one goes */
		if (put > 0)
			stale(ctx, &prev);
		return put < 0 ? -1 : 0;
	}
	s->size = e->size;
	s->site = e->site;
	s->tick = e->tick;
	__atomic_store_n(&s->ptr, e->ptr, __ATOMIC_RELEASE);
	return 0;
}

bool live__remove(struct young *y, uint64_t ptr, struct live_entry *e)
{
	struct live_entry *s;

	if (y) {
		s = young_slot(y, ptr);
		if (s->ptr == ptr) {
			*e = *s;
			__atomic_store_n(&s->ptr, 0, __ATOMIC_RELEASE);
			return true;
		}
	}
	for (int round = 0;; round++) {
		unsigned int n = __atomic_load_n(&n_youngs, __ATOMIC_ACQUIRE), others = 0;
		bool moving = false;

		if (live__take(ptr, e))
			return true;
		if (n > YOUNG_TABLES)
			n = YOUNG_TABLES;
		for (unsigned int i = 0; i < n; i++) {
			struct live_entry c;
			uint64_t v;

			if (&youngs[i] == y)
				continue;
			others++;
			s = young_slot(&youngs[i], ptr);
			v = __atomic_load_n(&s->ptr, __ATOMIC_ACQUIRE);
			if (v == (ptr | MOVING)) {
				moving = true;
				continue;
			}
			if (v != ptr)
				continue;
			c = *s;
			if (__atomic_compare_exchange_n(&s->ptr, &v, 0, false, __ATOMIC_ACQ_REL,
							__ATOMIC_RELAXED)) {
				*e = c;
				e->ptr = ptr;
				return true;
			}
			moving = true;	/* its owner is moving it: the shared table, again */
		}
		/* a move may have ended between the shared table and the scan */
		if (!moving)
			return others && live__take(ptr, e);
		if (round > 100)
			sched_yield();
		else
			__builtin_ia32_pause();
	}
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
	memset(youngs, 0, sizeof(youngs));
	n_youngs = 0;
}
