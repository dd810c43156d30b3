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
 *
 * Another allocator (jemalloc, mimalloc, tcmalloc... linked with the
 * program or preloaded after the tracker: preload/next.c finds it): each
 * call goes to that allocator's own function, unchanged, and the blocks
 * it hands out are the program's as they come; the tracker keeps each
 * counted block in the live table (pointer -> size, site). No header
 * there, because no test on the bytes before a pointer can tell the
 * tracker's blocks from that allocator's exactly and safely:
 *  - the word before a block of jemalloc's or mimalloc's is the end of its
 *    neighbour (the program's bytes, any value) or, for the first block of
 *    a slab or a page, the end of another mapping, maybe none: a read
 *    there may fault, and no mark, magic word or per-process secret
 *    makes bytes the program controls impossible to match;
 *  - blocks reach free() that the tracker never saw allocated (before it
 *    started, from the allocator's own entry points: mallocx, mi_malloc,
 *    tc_malloc, memory an allocator hands out on its internal paths), so
 *    "every block carries a header" cannot hold;
 *  - the program may hand a block from malloc() to its allocator's other
 *    functions (sdallocx, rallocx and sallocx, mi_free, mi_usable_size,
 *    tc_free_sized: legitimate where malloc is that allocator): a header
 *    would give them a pointer 16 bytes into one of their blocks.
 * The table is exact by construction (a pointer is in it iff the tracker
 * counted its allocation and has not seen its free), reads nothing of the
 * program's, and costs a lookup per free, behind one of 64 shard locks.
 *
 * Byte sampling (record --heap-sample-bytes): an allocation not tracked is
 * the allocator's block as it comes, no header, no table (preload/count.c).
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

#define NEXT next_alloc

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

/* The allocator's malloc_usable_size (0 when it has none). */
static size_t next_usable(void *p)
{
	return NEXT.usable ? NEXT.usable(p) : 0;
}

/*
 * The size of a block the tracker never saw allocated, for its count of
 * unknown frees: only from the allocator's own malloc_usable_size (an
 * allocator that has none would have glibc's read bytes before the block
 * that are not glibc's, maybe on a page not mapped); else 0, unknown.
 */
static size_t unknown_size(void *p)
{
	return NEXT.usable_own ? next_usable(p) : 0;
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

/* A block of the allocator's as it is, counted through the live table. */
void *malloc__tabled(struct thread *t, enum track how, void *p, size_t n,
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

/* malloc(n) as `how` says; samp: tracked (count__sampled()). */
static inline void *get_as(struct thread *t, enum track how, bool samp, size_t n,
			   const struct unwind_from *from)
{
	if (how == TRACK_OFF || !samp)
		return NEXT.malloc(n);
	if (unlikely(NEXT.foreign || n >= HDR_SIZE_LIMIT))
		return malloc__tabled(t, how, NEXT.malloc(n), n, from);
	return with_hdr(t, how, __libc_malloc(n + BLOCK_HDR), BLOCK_HDR, n, from);
}

static inline void *get(struct thread *t, enum track how, size_t n,
			const struct unwind_from *from)
{
	return get_as(t, how, how == TRACK_OFF || count__sampled(t, n), n, from);
}

/* memalign(align, n) as `how` says (glibc's: the header after the alignment). */
static void *get_aligned(struct thread *t, enum track how, size_t align, size_t n,
			 const struct unwind_from *from)
{
	if (how == TRACK_OFF || !count__sampled(t, n))
		return __libc_memalign(align, n);
	if (align > (SIZE_MAX >> 1) + 1) {	/* as glibc */
		errno = EINVAL;
		return NULL;
	}
	if (align & (align - 1))	/* as glibc: the next power of two */
		align = (size_t)1 << (64 - __builtin_clzl(align));
	if (align <= BLOCK_HDR)
		return get_as(t, how, true, n, from);
	if (align <= BLOCK_ALIGN_MAX && n < HDR_SIZE_LIMIT)
		return with_hdr(t, how, __libc_memalign(align, n + align), (uint32_t)align, n,
				from);
	return malloc__tabled(t, how, __libc_memalign(align, n), n, from);
}

/* What the allocator's malloc_usable_size says of p's block, less the header. */
static size_t usable(void *p)
{
	struct block_info b;

	if (NEXT.foreign || !block_ours(p))
		return next_usable(p);
	block_read(p, &b);
	return next_usable(block_raw(p, &b)) - b.off;
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

/*
 * A block without a header goes: from the live table, or never seen (an
 * unknown free, counted when every allocation is tracked). Before the
 * allocator has it back: then another thread may get its address.
 */
static void uncount_plain(struct thread *t, enum track how, void *p)
{
	struct live_entry e;

	/* a thread inside the tracker may hold a shard's lock: no table then
	 * (the entry is found stale when its pointer comes back) */
	if (how != TRACK_ON)
		return;
	if (live__take((uintptr_t)p, &e))
		count__free(t, e.ptr, e.size, e.site, BLOCK_NO_TICK);
	else if (sample_every == 1 && !sample_bytes)
		count__unknown_free(unknown_size(p));
}

/* free(p) as `how` says; p not NULL. */
static void put(struct thread *t, enum track how, void *p)
{
	struct block_info b;

	if (unlikely(NEXT.foreign)) {
		uncount_plain(t, how, p);
		NEXT.free(p);
		return;
	}
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
	struct thread *t = &th;

	/* byte sampling, not tracked: the thread's countdown only (busy: an
	 * allocator's own entry point that is this malloc, hooked, must not
	 * count it down again) */
	if (count__skip(t, n)) {
		uint8_t busy = t->busy;
		void *p;

		t->busy = 1;
		p = NEXT.malloc(n);
		t->busy = busy;
		return p;
	}
	return alloc_from(n, __builtin_frame_address(0));
}

EXPORT void free(void *p)
{
	struct thread *t = &th;
	enum track how;

	if (!p)
		return;
	/* byte sampling: a block never tracked goes back at once (one load of
	 * the live table's filter, the word before it with glibc) */
	if (sample_bytes && !live__maybe((uintptr_t)p) && (NEXT.foreign || !block_ours(p))) {
		NEXT.free(p);
		return;
	}
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
		return NEXT.calloc(n, size);
	if (__builtin_mul_overflow(n, size, &bytes)) {
		p = NEXT.foreign ? NEXT.calloc(n, size) : NULL;	/* counts nothing */
		if (!NEXT.foreign)
			errno = ENOMEM;
	} else if (!count__sampled(t, bytes)) {
		p = NEXT.calloc(n, size);
	} else {
		if (how == TRACK_ON)
			CALLER(from);
		if (NEXT.foreign || bytes >= HDR_SIZE_LIMIT)
			p = malloc__tabled(t, how, NEXT.calloc(n, size), bytes, &from);
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
 * would not keep the alignment, so the offset would change), or with a
 * header where the new one is to have none (byte sampling). glibc's only.
 */
static void *realloc_moved(struct thread *t, enum track how, bool samp, void *old, size_t n,
			   const struct unwind_from *from)
{
	size_t have = usable(old);
	void *p = get_as(t, how, samp, n, from);

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

/*
 * realloc(old, n) of a block without a header, into one without: the
 * allocator's realloc as it is (another allocator's blocks always; glibc's
 * not tracked). The old block leaves the table before the call (after it,
 * another thread may get the address), and comes back if the call fails.
 */
static void *realloc_plain(struct thread *t, enum track how, bool samp, void *old, size_t n,
			   const struct unwind_from *from)
{
	struct live_entry e, stale;
	bool had = false;
	size_t unknown = 0;
	void *p;

	if (how == TRACK_ON) {
		had = live__take((uintptr_t)old, &e);
		if (!had && sample_every == 1 && !sample_bytes)
			unknown = unknown_size(old);
	}
	p = NEXT.realloc(old, n);
	if (!p && n) {
		/* failed: the old block stays as it was */
		if (had && live__put(&e, &stale) < 0) {
			tracker_stat(HEAP_RSTAT_DROP_LIVE, 1);
			count__free(t, e.ptr, e.size, e.site, BLOCK_NO_TICK);
		}
		if (how == TRACK_ON)
			tracker_stat(HEAP_RSTAT_NULL_RETURNS, 1);
		return NULL;
	}
	/* the old block is gone (realloc(old, 0) freed it when NULL comes back) */
	if (had)
		count__free(t, e.ptr, e.size, e.site, BLOCK_NO_TICK);
	else if (how == TRACK_ON && sample_every == 1 && !sample_bytes)
		count__unknown_free(unknown);
	if (!p || !samp)
		return p;
	return malloc__tabled(t, how, p, n, from);
}

static void *do_realloc(void *old, size_t n, const struct unwind_from *from)
{
	struct thread *t = &th;
	enum track how = tracker__begin(t);
	struct block_info b;
	bool samp;
	void *p;

	/* a block with the tracker's header loses it, tracking or not */
	if (how == TRACK_OFF && (NEXT.foreign || !old || !block_ours(old)))
		return NEXT.realloc(old, n);
	if (!old) {
		p = get(t, how, n, from);
	} else if (NEXT.foreign) {
		samp = n && count__sampled(t, n);
		p = realloc_plain(t, how, samp, old, n, from);
	} else if (!n) {
		/* glibc's realloc(p, 0): freed, NULL */
		put(t, how, old);
		p = NULL;
	} else if (!block_ours(old)) {
		samp = count__sampled(t, n);
		p = samp ? realloc_moved(t, how, true, old, n, from) :
			   realloc_plain(t, how, false, old, n, from);
	} else {
		block_read(old, &b);
		samp = count__sampled(t, n);
		/* memalign's offset would not survive glibc's realloc */
		if (b.off != BLOCK_HDR || n >= HDR_SIZE_LIMIT || !samp)
			p = realloc_moved(t, how, samp, old, n, from);
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

/* Which aligned allocation (the allocator's own function for each). */
enum aligned_fn { AL_MEMALIGN, AL_ALIGNED_ALLOC, AL_VALLOC, AL_PVALLOC };

/* Another allocator's aligned allocation, forwarded as it is. */
static void *foreign_aligned(enum aligned_fn fn, size_t align, size_t n)
{
	switch (fn) {
	case AL_MEMALIGN:
		return NEXT.memalign ? NEXT.memalign(align, n) : NULL;
	case AL_ALIGNED_ALLOC:
		return NEXT.aligned_alloc ? NEXT.aligned_alloc(align, n) : NULL;
	case AL_VALLOC:
		return NEXT.valloc ? NEXT.valloc(n) : NULL;
	case AL_PVALLOC:
		return NEXT.pvalloc ? NEXT.pvalloc(n) : NULL;
	}
	return NULL;
}

static void *aligned(enum aligned_fn fn, size_t align, size_t n, const struct unwind_from *from)
{
	struct thread *t = &th;
	enum track how = tracker__begin(t);
	void *p;

	if (NEXT.foreign) {
		p = foreign_aligned(fn, align, n);
		if (how != TRACK_OFF && count__sampled(t, n))
			p = malloc__tabled(t, how, p, n, from);
	} else if (fn == AL_VALLOC || fn == AL_PVALLOC) {
		/* a page-aligned block: glibc's, through the live table */
		p = fn == AL_VALLOC ? __libc_valloc(n) : __libc_pvalloc(n);
		if (how != TRACK_OFF && count__sampled(t, n))
			p = malloc__tabled(t, how, p, n, from);
	} else {
		p = get_aligned(t, how, align, n, from);
	}
	if (how == TRACK_ON)
		tracker__end(t);
	return p;
}

EXPORT void *memalign(size_t align, size_t n)
{
	struct unwind_from from;

	CALLER(from);
	return aligned(AL_MEMALIGN, align, n, &from);
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
	struct unwind_from from;

	CALLER(from);
	return aligned(AL_ALIGNED_ALLOC, align, n, &from);
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	struct unwind_from from;
	struct thread *t;
	enum track how;
	int rc;
	void *p;

	CALLER(from);
	if (NEXT.foreign) {
		if (!NEXT.posix_memalign)
			return ENOMEM;
		t = &th;
		how = tracker__begin(t);
		rc = NEXT.posix_memalign(out, align, n);
		if (!rc && how != TRACK_OFF && count__sampled(t, n))
			malloc__tabled(t, how, *out, n, &from);
		if (how == TRACK_ON)
			tracker__end(t);
		return rc;
	}
	if (align % sizeof(void *) || (align & (align - 1)) || !align)
		return EINVAL;
	p = aligned(AL_MEMALIGN, align, n, &from);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

EXPORT void *valloc(size_t n)
{
	struct unwind_from from;

	CALLER(from);
	return aligned(AL_VALLOC, 0, n, &from);
}

EXPORT void *pvalloc(size_t n)
{
	struct unwind_from from;

	CALLER(from);
	return aligned(AL_PVALLOC, 0, n, &from);
}

EXPORT size_t malloc_usable_size(void *p)
{
	return p ? usable(p) : 0;
}

/*
 * The tracker's own definitions, whatever the program's symbols resolve
 * to (an executable's malloc wins over ours for every reference, the
 * tracker's included): what preload/hooks.c makes an executable's own
 * malloc jump to.
 */
#define OWN(name) extern __typeof__(name) tracker_##name __attribute__((alias(#name), copy(name), visibility("hidden")));
OWN(malloc)
OWN(free)
OWN(calloc)
OWN(realloc)
OWN(memalign)
OWN(aligned_alloc)
OWN(posix_memalign)
OWN(valloc)
OWN(pvalloc)
#undef OWN

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
