/*
 * Counting an allocation and its free (the tracker's hot path).
 *
 * An allocation: its caller's stack is walked (preload/unwind.c) and
 * hashed, the hash looked up in the thread's cache of sites (else in the
 * shared index, preload/sites.c), and its bytes and count added to the
 * thread's own counters of that site (its block in the region: plain
 * stores, no atomic instruction). The site goes into the block's header
 * (preload/block.h), so the free needs no lookup: its bytes are taken off
 * the same site's counters of the thread that frees. A thread without a
 * block of counters (all taken) counts into the site's record with atomic
 * adds, as a signal handler's free does (count__free_quiet()).
 *
 * Live bytes: each thread adds to the region's total in steps of
 * HEAP_REGION_FLUSH, and to its peak then.
 */
#include <string.h>

#include "preload/tracker.h"

static inline uint64_t next_rand(struct thread *t)
{
	uint64_t x = t->rng;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	t->rng = x;
	return x;
}

static inline uint64_t weight_of(uint64_t size)
{
	return sample_every > 1 && size < HEAP_REGION_SAMPLE_ALWAYS ? sample_every : 1;
}

static void flush_live(struct thread *t)
{
	struct heap_region *r = tracker_region;
	int64_t now = __atomic_add_fetch(&r->live_bytes, t->live, __ATOMIC_RELAXED);
	int64_t peak = __atomic_load_n(&r->peak_bytes, __ATOMIC_RELAXED);

	t->live = 0;
	while (now > peak && !__atomic_compare_exchange_n(&r->peak_bytes, &peak, now, true,
							  __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

void count__add_live(struct thread *t, int64_t d)
{
	t->live += d;
	if (unlikely(t->live >= HEAP_REGION_FLUSH || t->live <= -HEAP_REGION_FLUSH))
		flush_live(t);
}

/* The owner's add to its block: a plain store, never torn (8-byte aligned). */
static inline void cadd(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, *p + v, __ATOMIC_RELAXED);
}

/* This thread's counter of site i; NULL: none (count into the record). */
static struct heap_region_count *counter_of(struct thread *t, uint32_t i)
{
	struct heap_region_block *b = t->block;
	uint32_t cap = tracker_region->count_cap, mask = 2 * cap - 1, n, j;
	struct heap_region_count *c;

	if (!b)
		return NULL;
	for (j = (i * 2654435761u) & mask; t->index[j].site_plus1; j = (j + 1) & mask)
		if (t->index[j].site_plus1 == i + 1)
			return &b->counts[t->index[j].count];
	n = b->n_used;
	if (n >= cap)
		return NULL;
	c = &b->counts[n];
	__atomic_store_n(&c->site_plus1, i + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&b->n_used, n + 1, __ATOMIC_RELEASE);
	t->index[j].site_plus1 = i + 1;
	t->index[j].count = n;
	return c;
}

void count__free(struct thread *t, uint64_t p, uint64_t size, uint32_t site, uint32_t tick)
{
	uint64_t w = weight_of(size), bytes = size * w;
	/* heaptrack's "temporary": the free directly follows its allocation, no
	 * other allocation or free of the thread in between */
	bool temp = tick == ((t->seq ^ t->salt) & BLOCK_TICK_MASK);
	struct heap_region_count *c;

	t->seq++;
	if (unlikely(history_on))
		history__event(p, size, site, HEAP_EVENT_FREE);
	c = counter_of(t, site);
	if (likely(c)) {
		cadd(&c->free_bytes, bytes);
		cadd(&c->free_count, w);
		if (temp)
			cadd(&c->temp_count, w);
	} else {
		struct heap_region_site *s = sites__at(site);

		__atomic_fetch_add(&s->free_bytes, bytes, __ATOMIC_RELAXED);
		__atomic_fetch_add(&s->free_count, w, __ATOMIC_RELAXED);
		if (temp)
			__atomic_fetch_add(&s->temp_count, w, __ATOMIC_RELAXED);
	}
	count__add_live(t, -(int64_t)bytes);
}

void count__free_quiet(uint64_t p, uint64_t size, uint32_t site)
{
	uint64_t w = weight_of(size), bytes = size * w;
	struct heap_region_site *s = sites__at(site);
	struct heap_region *r = tracker_region;

	__atomic_fetch_add(&s->free_bytes, bytes, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->free_count, w, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&r->live_bytes, (int64_t)bytes, __ATOMIC_RELAXED);
}

void count__unknown_free(uint64_t usable)
{
	tracker_stat(HEAP_RSTAT_UNKNOWN_FREES, 1);
	tracker_stat(HEAP_RSTAT_UNKNOWN_FREE_BYTES, usable);
}

/* The site of the allocation made from `from`: its cache slot. TCACHE: dropped. */
static unsigned int site_of(struct thread *t, const struct unwind_from *from)
{
	struct unwind_stack st;
	struct unwind_from nf;
	struct heap_region_site *s;
	uint64_t key;
	unsigned int c;

	if (unlikely(t->ready != 1))
		tracker__thread_init(t);
	if (t->new_from.ret) {
		/* malloc inside operator new: the stack of new's caller */
		nf = t->new_from;
		from = &nf;
		t->new_from.ret = 0;
	}
	unwind__stack(from, t->lo, t->hi, &st);
	key = unwind__hash(&st);
	c = key & (TCACHE - 1);
	if (likely(t->cache[c].key == key))
		return c;
	s = sites__get(key, &st, HEAP_SITE_MALLOC);
	if (!s)
		return TCACHE;
	t->cache[c].key = key;
	t->cache[c].site = s;
	t->cache[c].count = counter_of(t, sites__index(s));
	return c;
}

uint32_t count__alloc(struct thread *t, uint64_t p, uint64_t size,
		      const struct unwind_from *from, uint32_t *tick)
{
	struct heap_region_count *cnt;
	uint64_t w = 1;
	uint32_t site;
	unsigned int c;

	if (sample_every > 1 && size < HEAP_REGION_SAMPLE_ALWAYS) {
		if (next_rand(t) % sample_every) {
			t->new_from.ret = 0;
			return BLOCK_UNTRACKED;
		}
		w = sample_every;
	}
	c = site_of(t, from);
	if (c == TCACHE)
		return BLOCK_UNTRACKED;
	t->seq++;
	*tick = t->seq ^ t->salt;
	site = sites__index(t->cache[c].site);
	if (unlikely(history_on))
		history__event(p, size, site, HEAP_EVENT_ALLOC);
	cnt = t->cache[c].count;
	if (likely(cnt)) {
		cadd(&cnt->alloc_bytes, size * w);
		cadd(&cnt->alloc_count, w);
	} else {
		struct heap_region_site *s = t->cache[c].site;

		__atomic_fetch_add(&s->alloc_bytes, size * w, __ATOMIC_RELAXED);
		__atomic_fetch_add(&s->alloc_count, w, __ATOMIC_RELAXED);
	}
	count__add_live(t, (int64_t)(size * w));
	return site;
}

struct heap_region_site *count__site(struct thread *t, const struct unwind_from *from,
				     unsigned int kind)
{
	struct unwind_stack st;
	uint64_t key;

	if (unlikely(t->ready != 1))
		tracker__thread_init(t);
	unwind__stack(from, t->lo, t->hi, &st);
	key = unwind__hash(&st) ^ ((uint64_t)kind * 0x9e3779b97f4a7c15ULL);
	return sites__get(key ? key : 1, &st, (uint8_t)kind);
}

void count__thread_exit(struct thread *t)
{
	if (t->live)
		flush_live(t);
	memset(t->cache, 0, sizeof(t->cache));
}
