/*
 * The malloc family, interposed: malloc, calloc, realloc,
 * reallocarray, free, memalign, aligned_alloc, posix_memalign, valloc,
 * pvalloc, malloc_usable_size, and C++'s operator new (for its caller).
 *
 * Each forwards to glibc's own implementation (__libc_malloc & co.: no
 * dlsym on the way, so nothing allocates while the tracker starts), asking
 * for 16 bytes more: the block's header (preload/block.h) holds its size
 * and site, so that its free finds them on the line glibc's free touches
 * anyway. Blocks that can have no header (large alignments, sizes near the
 * address space) are kept in the live table (preload/live.c); blocks
 * glibc handed out before the tracker started, or that another library
 * got from __libc_malloc, carry none either: the header's mark tells them
 * apart exactly, and they go back to glibc as they are (counted as
 * unknown frees when the tracker never saw them allocated).
 *
 * Once the tracker has put a header on a block, every free must take it
 * off, whatever happens since (the tracker stopped in a fork child, a
 * signal handler frees it): free() looks at the mark before anything
 * else. A process the tracker does not follow gets glibc's blocks as they
 * are, no header.
 *
 * The program's memory grows by the headers: 16 bytes a block (on glibc's
 * 16-byte granularity, a block of 1 to 8 bytes stays in its 32-byte chunk,
 * others take one more granule), the alignment for memalign & co. up to 64.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "preload/tracker.h"

#define EXPORT __attribute__((visibility("default")))

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);
extern void *__libc_memalign(size_t align, size_t n);
extern void *__libc_valloc(size_t n);
extern void *__libc_pvalloc(size_t n);

/* Sizes from this up get no header (BLOCK_SIZE_MAX, less the largest offset). */
#define HDR_SIZE_LIMIT	(BLOCK_SIZE_MAX - BLOCK_ALIGN_MAX)

/* The allocator's caller, read in the interposed function itself. */
#define CALLER(c) unwind__from_frame(&(c), __builtin_frame_address(0))

/*
 * A function of the library after this one (RTLD_NEXT) into *slot, looked
 * up once; NULL when none (abort() when `must`). dlsym may allocate: those
 * allocations are not counted.
 */
static void *next_fn(void **slot, const char *name, bool must)
{
	void *fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

	if (!fn) {
		struct thread *t = &th;
		uint8_t busy = t->busy;

		t->busy = 1;
		fn = dlsym(RTLD_NEXT, name);
		t->busy = busy;
		if (!fn && must)
			abort();
		if (fn)
			__atomic_store_n(slot, fn, __ATOMIC_RELEASE);
	}
	return fn;
}

/* glibc's malloc_usable_size (a weak symbol of libc's), found in the constructor. */
static void *libc_usable;

static size_t glibc_usable(void *p)
{
	size_t (*fn)(void *) = (size_t (*)(void *))next_fn(&libc_usable, "malloc_usable_size", true);

	return fn(p);
}

__attribute__((constructor)) static void malloc_ctor(void)
{
	glibc_usable(NULL);
}

/* --- blocks with a header -------------------------------------------------- */

/*
 * glibc's block raw (NULL: it failed) for n bytes, with the header at
 * raw + off - 16: counted when `how` says so. The program's pointer.
 */
static inline void *with_hdr(struct thread *t, enum track how, void *raw, uint32_t off,
			     size_t n, const struct unwind_from *from)
{
	uint32_t site = BLOCK_UNTRACKED, tick = 0;

	if (unlikely(!raw)) {
		if (how == TRACK_ON)
			tracker_stat(HEAP_RSTAT_NULL_RETURNS, 1);
		return NULL;
	}
	if (how == TRACK_ON)
		site = count__alloc(t, (uintptr_t)raw + off, n, from, &tick);
	return block_make(raw, off, n, site, tick, tracker_epoch);
}

/* A block of glibc's as it is, counted through the live table. */
static void *tabled(struct thread *t, enum track how, void *p, size_t n,
		    const struct unwind_from *from)
{
	struct live_entry e, stale;
	uint32_t tick;

	if (how != TRACK_ON)
		return p;
	if (!p) {
		tracker_stat(HEAP_RSTAT_NULL_RETURNS, 1);
		return NULL;
	}
	e.site = count__alloc(t, (uintptr_t)p, n, from, &tick);
	if (e.site == BLOCK_UNTRACKED)
		return p;
	e.ptr = (uintptr_t)p;
	e.size = n;
	switch (live__put(&e, &stale)) {
	case 1:	/* its pointer's last free went by unseen (a signal handler's) */
		tracker_stat(HEAP_RSTAT_STALE, 1);
		count__free(t, stale.ptr, stale.size, stale.site, BLOCK_NO_TICK);
		break;
	case -1:	/* no memory to follow it: not live */
		tracker_stat(HEAP_RSTAT_DROP_LIVE, 1);
		count__free(t, e.ptr, n, e.site, BLOCK_NO_TICK);
		break;
	}
	return p;
}

/* malloc(n) as `how` says. */
static inline void *get(struct thread *t, enum track how, size_t n,
			const struct unwind_from *from)
{
	if (how == TRACK_OFF)
		return __libc_malloc(n);
	if (unlikely(n >= HDR_SIZE_LIMIT))
		return tabled(t, how, __libc_malloc(n), n, from);
	return with_hdr(t, how, __libc_malloc(n + BLOCK_HDR), BLOCK_HDR, n, from);
}

/* memalign(align, n) as `how` says. */
static void *get_aligned(struct thread *t, enum track how, size_t align, size_t n,
			 const struct unwind_from *from)
{
	if (how == TRACK_OFF)
		return __libc_memalign(align, n);
	if (align > (SIZE_MAX >> 1) + 1) {	/* as glibc */
		errno = EINVAL;
		return NULL;
	}
	if (align & (align - 1))	/* as glibc: the next power of two */
		align = (size_t)1 << (64 - __builtin_clzl(align));
	if (align <= BLOCK_HDR)
		return get(t, how, n, from);
	if (align <= BLOCK_ALIGN_MAX && n < HDR_SIZE_LIMIT)
		return with_hdr(t, how, __libc_memalign(align, n + align), (uint32_t)align, n,
				from);
	return tabled(t, how, __libc_memalign(align, n), n, from);
}

/* What glibc's malloc_usable_size says of p's block, less the header. */
static size_t usable(void *p)
{
	struct block_info b;

	if (!block_ours(p))
		return glibc_usable(p);
	block_read(p, &b);
	return glibc_usable(block_raw(p, &b)) - b.off;
}

/* The counted block p (header b) goes: off its site's counters. */
static void uncount(struct thread *t, enum track how, void *p, const struct block_info *b)
{
	if (how == TRACK_OFF)
		return;
	if (unlikely(b->epoch != tracker_epoch)) {
		/* a fork child freeing its parent's block: not in its account */
		if (how == TRACK_ON)
			count__unknown_free(b->size);
		return;
	}
	if (how == TRACK_ON)
		count__free(t, (uintptr_t)p, b->size, b->site, b->tick);
	else
		count__free_quiet((uintptr_t)p, b->size, b->site);
}

/* A block without a header goes: from the live table, or never seen. */
static void uncount_plain(struct thread *t, enum track how, void *p)
{
	struct live_entry e;

	/* a thread inside the tracker may hold a shard's lock: no table then
	 * (the entry is found stale when its pointer comes back) */
	if (how != TRACK_ON)
		return;
	if (live__take((uintptr_t)p, &e))
		count__free(t, e.ptr, e.size, e.site, BLOCK_NO_TICK);
	else if (sample_every == 1)
		count__unknown_free(glibc_usable(p));
}

/* free(p) as `how` says; p not NULL. Counted before glibc has the block
 * back: then another thread may get it. */
static void put(struct thread *t, enum track how, void *p)
{
	struct block_info b;

	if (likely(block_ours(p))) {
		block_read(p, &b);
		if (b.site != BLOCK_UNTRACKED)
			uncount(t, how, p, &b);
		__libc_free(block_raw(p, &b));
		return;
	}
	uncount_plain(t, how, p);
	__libc_free(p);
}

/* --- the interposed functions ------------------------------------------- */

static inline __attribute__((always_inline)) void *
alloc_from(size_t n, const uintptr_t *frame)
{
	struct thread *t = &th;
	enum track how = tracker__begin(t);
	struct unwind_from from;
	void *p;

	if (likely(how == TRACK_ON))
		unwind__from_frame(&from, frame);
	p = get(t, how, n, &from);
	if (likely(how == TRACK_ON))
		tracker__end(t);
	return p;
}

EXPORT void *malloc(size_t n)
{
	return alloc_from(n, __builtin_frame_address(0));
}

EXPORT void free(void *p)
{
	struct thread *t = &th;
	enum track how;

	if (!p)
		return;
	how = tracker__begin(t);
	put(t, how, p);
	if (how == TRACK_ON)
		tracker__end(t);
}

EXPORT void *calloc(size_t n, size_t size)
{
	struct thread *t = &th;
	enum track how = tracker__begin(t);
	struct unwind_from from;
	size_t bytes;
	void *p;

	if (how == TRACK_OFF)
		return __libc_calloc(n, size);
	if (__builtin_mul_overflow(n, size, &bytes)) {
		p = NULL;	/* counts nothing */
		errno = ENOMEM;
	} else {
		if (how == TRACK_ON)
			CALLER(from);
		if (bytes >= HDR_SIZE_LIMIT)
			p = tabled(t, how, __libc_calloc(n, size), bytes, &from);
		else
			p = with_hdr(t, how, __libc_calloc(1, bytes + BLOCK_HDR), BLOCK_HDR,
				     bytes, &from);
	}
	if (how == TRACK_ON)
		tracker__end(t);
	return p;
}

/*
 * realloc(old, n) by a new block, a copy and the old one's free: for a
 * block without a header, or with one at another offset (memalign's: glibc
 * would not keep the alignment, so the offset would change).
 */
static void *realloc_moved(struct thread *t, enum track how, void *old, size_t n,
			   const struct unwind_from *from)
{
	size_t have = usable(old);
	void *p = get(t, how, n, from);

	if (!p)
		return NULL;
	memcpy(p, old, have < n ? have : n);
	put(t, how, old);
	return p;
}

/* realloc(old, n) of a block with the malloc family's header, by glibc's
 * realloc (in place when it can be). */
static void *realloc_hdr(struct thread *t, enum track how, void *old,
			 const struct block_info *b, size_t n, const struct unwind_from *from)
{
	uint32_t site = BLOCK_UNTRACKED, tick = 0;
	void *raw = __libc_realloc(block_raw(old, b), n + BLOCK_HDR);

	if (!raw) {
		/* failed: the old block stays as it was */
		if (how == TRACK_ON)
			tracker_stat(HEAP_RSTAT_NULL_RETURNS, 1);
		return NULL;
	}
	/* moved or not, the old block goes and the new one comes */
	if (b->site != BLOCK_UNTRACKED)
		uncount(t, how, old, b);
	if (how == TRACK_ON)
		site = count__alloc(t, (uintptr_t)raw + BLOCK_HDR, n, from, &tick);
	return block_make(raw, BLOCK_HDR, n, site, tick, tracker_epoch);
}

static void *do_realloc(void *old, size_t n, const struct unwind_from *from)
{
	struct thread *t = &th;
	enum track how = tracker__begin(t);
	struct block_info b;
	void *p;

	if (!old) {
		p = get(t, how, n, from);
	} else if (!n) {
		/* glibc's realloc(p, 0): freed, NULL */
		put(t, how, old);
		p = NULL;
	} else if (!block_ours(old)) {
		p = how == TRACK_OFF ? __libc_realloc(old, n) : realloc_moved(t, how, old, n, from);
	} else {
		block_read(old, &b);
		/* memalign's offset would not survive glibc's realloc */
		if (b.off != BLOCK_HDR || n >= HDR_SIZE_LIMIT)
			p = realloc_moved(t, how, old, n, from);
		else
			p = realloc_hdr(t, how, old, &b, n, from);
	}
	if (how == TRACK_ON)
		tracker__end(t);
	return p;
}

EXPORT void *realloc(void *old, size_t n)
{
	struct unwind_from from;

	CALLER(from);
	return do_realloc(old, n, &from);
}

EXPORT void *reallocarray(void *old, size_t n, size_t size)
{
	struct unwind_from from;
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	CALLER(from);
	return do_realloc(old, bytes, &from);
}

static void *aligned(size_t align, size_t n, const struct unwind_from *from)
{
	struct thread *t = &th;
	enum track how = tracker__begin(t);
	void *p = get_aligned(t, how, align, n, from);

	if (how == TRACK_ON)
		tracker__end(t);
	return p;
}

EXPORT void *memalign(size_t align, size_t n)
{
	struct unwind_from from;

	CALLER(from);
	return aligned(align, n, &from);
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
	struct unwind_from from;

	CALLER(from);
	return aligned(align, n, &from);
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	struct unwind_from from;
	void *p;

	if (align % sizeof(void *) || (align & (align - 1)) || !align)
		return EINVAL;
	CALLER(from);
	p = aligned(align, n, &from);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

/* A page-aligned block (valloc, pvalloc): glibc's, through the live table. */
static void *paged(void *(*fn)(size_t), size_t n, const struct unwind_from *from)
{
	struct thread *t = &th;
	enum track how = tracker__begin(t);
	void *p = tabled(t, how, fn(n), n, from);

	if (how == TRACK_ON)
		tracker__end(t);
	return p;
}

EXPORT void *valloc(size_t n)
{
	struct unwind_from from;

	CALLER(from);
	return paged(__libc_valloc, n, &from);
}

EXPORT void *pvalloc(size_t n)
{
	struct unwind_from from;

	CALLER(from);
	return paged(__libc_pvalloc, n, &from);
}

EXPORT size_t malloc_usable_size(void *p)
{
	return p ? usable(p) : 0;
}

/*
 * C++ operator new: Debian's libstdc++ keeps no frame pointers, so at the
 * malloc inside new the line that called new is not in the chain. Each
 * variant notes its caller for the malloc (or aligned_alloc) it makes, and
 * forwards to the real one (it throws as it would), found with dlsym in
 * the constructor: dlsym takes the loader's lock, which a thread calling
 * new must not wait for (another thread may hold it while it waits on a
 * lock of the program's). A libstdc++ loaded later (a C++ library a C
 * program dlopens) is looked up at its first new, outside any count.
 * operator new[] calling operator new keeps the outer caller.
 */
#define NEW_WRAPPER(name, params, args)					\
	static void *(*real_##name) params;				\
	EXPORT void *name params					\
	{								\
		void *(*fn) params = __atomic_load_n(&real_##name, __ATOMIC_ACQUIRE); \
		struct thread *t = &th;					\
		bool mark;						\
		void *p;						\
									\
		if (unlikely(!fn))					\
			fn = (void *(*) params)next_fn((void **)&real_##name, #name, true); \
		mark = !t->new_from.ret;				\
		if (mark)						\
			CALLER(t->new_from);				\
		p = fn args;						\
		if (mark)						\
			t->new_from.ret = 0;				\
		return p;						\
	}

struct nothrow_t;
NEW_WRAPPER(_Znwm, (size_t n), (n))
NEW_WRAPPER(_Znam, (size_t n), (n))
NEW_WRAPPER(_ZnwmRKSt9nothrow_t, (size_t n, const struct nothrow_t *nt), (n, nt))
NEW_WRAPPER(_ZnamRKSt9nothrow_t, (size_t n, const struct nothrow_t *nt), (n, nt))
NEW_WRAPPER(_ZnwmSt11align_val_t, (size_t n, size_t al), (n, al))
NEW_WRAPPER(_ZnamSt11align_val_t, (size_t n, size_t al), (n, al))
NEW_WRAPPER(_ZnwmSt11align_val_tRKSt9nothrow_t,
	    (size_t n, size_t al, const struct nothrow_t *nt), (n, al, nt))
NEW_WRAPPER(_ZnamSt11align_val_tRKSt9nothrow_t,
	    (size_t n, size_t al, const struct nothrow_t *nt), (n, al, nt))

#define NEW_RESOLVE(name) next_fn((void **)&real_##name, #name, false)

/* The real operator new of each variant, when libstdc++ is loaded already. */
__attribute__((constructor)) static void new_ctor(void)
{
	NEW_RESOLVE(_Znwm);
	NEW_RESOLVE(_Znam);
	NEW_RESOLVE(_ZnwmRKSt9nothrow_t);
	NEW_RESOLVE(_ZnamRKSt9nothrow_t);
	NEW_RESOLVE(_ZnwmSt11align_val_t);
	NEW_RESOLVE(_ZnamSt11align_val_t);
	NEW_RESOLVE(_ZnwmSt11align_val_tRKSt9nothrow_t);
	NEW_RESOLVE(_ZnamSt11align_val_tRKSt9nothrow_t);
}
