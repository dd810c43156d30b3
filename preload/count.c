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
 *
 * Sampling. One in N (record --heap-sample N): each small allocation is
 * tracked with probability 1/N and counted N times. By bytes (record
 * --heap-sample-bytes S, as tcmalloc, jemalloc and Go sample): each thread
 * counts down the bytes it allocates; the allocation that takes the count
 * to zero is tracked and the next count drawn from an exponential law of
 * mean S. The tracked allocations are then those a Poisson process of rate
 * 1/S per byte hits: one of n bytes is tracked with probability
 * p = 1 - exp(-n/S), and counted 1/p times (bytes n/p), which estimates
 * every site's bytes and counts without bias whatever its sizes (one in N
 * is biased against large blocks: it counts them N times or never). The
 * weight is a function of the size (and, for the count's rounding to an
 * integer, of the pointer): the free takes off what the allocation added.
 * An allocation not tracked touches nothing but the thread's countdown:
 * the block is the allocator's as it comes, no header (preload/malloc.c).
 */
#include <string.h>
#include <sys/auxv.h>

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

/* --- byte sampling: a little floating point, no libm --------------------- */

#define LN2 0.69314718055994530942

/* ln(x), x > 0: x = m 2^e (m in [1, 2)), ln m = 2 atanh((m - 1) / (m + 1)),
 * its series to z^15 (|z| < 1/3: relative error below 1e-8). */
static double ln_(double x)
{
	uint64_t b;
	double m, z, z2, sum;
	int e;

	memcpy(&b, &x, sizeof(b));
	e = (int)((b >> 52) & 0x7ff) - 1023;
	b = (b & ((1ULL << 52) - 1)) | (1023ULL << 52);
	memcpy(&m, &b, sizeof(m));
	z = (m - 1) / (m + 1);
	z2 = z * z;
	sum = 1.0 / 15;
	for (int k = 13; k >= 1; k -= 2)
		sum = 1.0 / k + z2 * sum;
	return e * LN2 + 2 * z * sum;
}

/* 1 - exp(-x), x >= 0: its series for small x (no cancellation), else
 * exp(-x) = 2^-k exp(-r), r in [0, ln 2). */
static double one_minus_exp_neg(double x)
{
	double term = x, sum = 0, r, er, p2;
	uint64_t k, b;

	if (x < 0.25) {
		for (int i = 1; i <= 12; i++) {
			sum += term;
			term *= -x / (i + 1);
		}
		return sum;
	}
	if (x > 60)
		return 1;
	k = (uint64_t)(x / LN2);
	r = x - (double)k * LN2;
	er = 1;
	term = 1;
	for (int i = 1; i <= 16; i++) {
		term *= -r / i;
		er += term;
	}
	b = (uint64_t)(1023 - k) << 52;		/* 2^-k, k <= 87 */
	memcpy(&p2, &b, sizeof(p2));
	return 1 - er * p2;
}

/* Uniform in (0, 1]. */
static inline double unit(uint64_t r)
{
	return (double)((r >> 11) + 1) * (1.0 / 9007199254740992.0);
}

/* The next interval: exponential of mean sample_bytes (at least 1). */
static int64_t draw(struct thread *t)
{
	return (int64_t)(-ln_(unit(next_rand(t))) * (double)sample_bytes) + 1;
}

bool count__sample_hit(struct thread *t, uint64_t n)
{
	if (unlikely(!t->sampling)) {
		/* the thread's first interval, this allocation counted down into it */
		if (!t->rng) {
			/* the kernel's random bytes for the process, the thread's address */
			const uint64_t *ar = (const uint64_t *)getauxval(AT_RANDOM);
			uint64_t seed = (ar ? ar[0] ^ ar[1] : 0) ^ (uint64_t)(uintptr_t)t;

			t->rng = (seed * 0x9e3779b97f4a7c15ULL) | 1;
		}
		t->sampling = 1;
		t->sample_left = draw(t) - ((int64_t)n < 0 ? INT64_MAX : (int64_t)n);
		if (t->sample_left > 0)
			return false;
	}
	t->sample_left = draw(t);
	return true;
}

/* The bytes and the count block p of size bytes stands for. */
static void weigh(uint64_t p, uint64_t size, uint64_t *bytes, uint64_t *count)
{
	double w, f;
	uint64_t h;

	if (likely(!sample_bytes) || !size) {
		uint64_t k = weight_of(size);

		*bytes = size * k;
		*count = k;
		return;
	}
	w = 1 / one_minus_exp_neg((double)size / (double)sample_bytes);
	*bytes = (uint64_t)((double)size * w + 0.5);
	*count = (uint64_t)w;
	/* the count's fraction rounded up with that probability (unbiased),
	 * drawn from the pointer: the same at its free */
	f = w - (double)*count;
	h = (p >> 4) * 0x9e3779b97f4a7c15ULL;
	h ^= h >> 31;
	if (unit(h) <= f)
		(*count)++;
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
	uint64_t w, bytes;
	/* heaptrack's "temporary": the free directly follows its allocation, no
	 * other allocation or free of the thread in between */
	bool temp = tick == ((t->seq ^ t->salt) & BLOCK_TICK_MASK);
	struct heap_region_count *c;

	weigh(p, size, &bytes, &w);
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
	struct heap_region_site *s = sites__at(site);
	struct heap_region *r = tracker_region;
	uint64_t w, bytes;

	weigh(p, size, &bytes, &w);

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
	uint64_t w = 1, bytes = size;
	uint32_t site;
	unsigned int c;

	if (sample_every > 1 && size < HEAP_REGION_SAMPLE_ALWAYS) {
		if (next_rand(t) % sample_every) {
			t->new_from.ret = 0;
			return BLOCK_UNTRACKED;
		}
		w = sample_every;
		bytes = size * w;
	} else if (sample_bytes) {
		weigh(p, size, &bytes, &w);
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
		cadd(&cnt->alloc_bytes, bytes);
		cadd(&cnt->alloc_count, w);
	} else {
		struct heap_region_site *s = t->cache[c].site;

		__atomic_fetch_add(&s->alloc_bytes, bytes, __ATOMIC_RELAXED);
		__atomic_fetch_add(&s->alloc_count, w, __ATOMIC_RELAXED);
	}
	count__add_live(t, (int64_t)bytes);
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
