/*
 * Memory that never passes through malloc: anonymous mappings
 * made by the program itself, counted as allocations of their own kind
 * (HEAP_SITE_MMAP) at the line that called mmap. CPython keeps its small
 * objects in pymalloc arenas obtained this way, as do many runtimes and
 * arena allocators; without this their memory would be missing from the
 * tracked heap.
 *
 * What is counted: mmap()/mmap64() with MAP_ANONYMOUS (private or shared)
 * that succeed and are not PROT_NONE (address space reserved, as runtimes
 * do, is not memory; committing it later with mprotect is not followed), munmap() of such a range (whole or in part), mremap()
 * growing, shrinking or moving it, and a MAP_FIXED mapping laid over one
 * (the kernel unmaps what was there). A file mapping is not counted.
 *
 * What is not, by design: the mappings of another allocator the program
 * uses (jemalloc's, mimalloc's, tcmalloc's, called from its object:
 * preload/next.c), whose blocks are counted as the malloc calls they are;
 * and glibc's own mappings. malloc's large blocks and
 * arenas, pthread_create's thread stacks and ld.so's mappings are made
 * through glibc's internal calls (__mmap, not the PLT), so they never
 * reach here: a malloc'd block served by mmap counts once, as the malloc
 * it is, and thread stacks stay out of the heap (they are in the resident
 * memory shown beside it). The tracker's own tables come through here
 * while their thread is inside the tracker: passed through, uncounted.
 *
 * The live mappings are kept in a sorted array of ranges -> site, behind a
 * spinlock: mmap is a system call already, the lock is not on malloc's
 * path. A range found under a new mapping was unmapped unseen (by a
 * signal handler, or a raw system call): counted freed then.
 */
#include <errno.h>
#include <stdarg.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "preload/sys.h"
#include "preload/tracker.h"

#define EXPORT __attribute__((visibility("default")))

/* One live mapping (or what is left of it), [lo, hi). */
struct range {
	uint64_t lo, hi;
	uint32_t site;
	uint32_t piece;		/* cut off another range: its end is not a free */
};

static struct {
	int lock;
	uint64_t owner;		/* the region the sites belong to: its pid and generation
				 * (a fork child's region may sit where its parent's was) */
	struct range *v;
	size_t n, cap;
} map;

static inline void lock(void)
{
	int spins = 0;

	while (__atomic_exchange_n(&map.lock, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&map.lock, __ATOMIC_RELAXED))
			if (++spins > 200)
				sched_yield();
}

static inline void unlock(void)
{
	__atomic_store_n(&map.lock, 0, __ATOMIC_RELEASE);
}

#define RESETTING UINT64_MAX

/*
 * Take the lock. The ranges of another region mean nothing here: a fork
 * child that counts into a region of its own starts with none, and with
 * the lock free (the thread that held it in the parent is not in the
 * child). One thread resets, the others wait for it.
 */
static void map_lock(void)
{
	const uint64_t me = (uint64_t)tracker_region->pid << 32 | tracker_region->generation;
	uint64_t o = __atomic_load_n(&map.owner, __ATOMIC_ACQUIRE);

	while (o != me) {
		if (o != RESETTING && __atomic_compare_exchange_n(&map.owner, &o, RESETTING, false,
								  __ATOMIC_ACQ_REL,
								  __ATOMIC_ACQUIRE)) {
			map.n = 0;
			__atomic_store_n(&map.lock, 0, __ATOMIC_RELEASE);
			__atomic_store_n(&map.owner, me, __ATOMIC_RELEASE);
			break;
		}
		sched_yield();
		o = __atomic_load_n(&map.owner, __ATOMIC_ACQUIRE);
	}
	lock();
}

/* Room for one more range; false: none (the mapping is not counted). */
static bool map_grow(void)
{
	size_t cap = map.cap ? 2 * map.cap : 1024;
	void *p;

	if (map.n < map.cap)
		return true;
	p = map.v ? sys_mremap(map.v, map.cap * sizeof(*map.v), cap * sizeof(*map.v),
			       MREMAP_MAYMOVE, NULL) :
		    sys_mmap(NULL, cap * sizeof(*map.v), PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return false;
	map.v = p;
	map.cap = cap;
	return true;
}

/* The first range whose end is above a. */
static size_t map_find(uint64_t a)
{
	size_t lo = 0, hi = map.n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (map.v[mid].hi <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Is this call to be tracked? Not when the tracker itself maps (its tables)
 * or its thread is inside it. Then inside the tracker until tracker__end(). */
static bool enter(struct thread *t)
{
	/*
	 * Never the tracker's start from here: an allocator maps memory while
	 * it holds its own locks (jemalloc's malloc_init_hard), and the start
	 * allocates (dlopen, pthread_key_create). The constructor or the first
	 * malloc starts it; mappings made before are not counted. A fork
	 * child's restart allocates nothing: it may start here.
	 */
	if (__atomic_load_n(&tracker_mode, __ATOMIC_ACQUIRE) == M_UNINIT && !tracker_started)
		return false;
	return !t->busy && tracker__begin(t) == TRACK_ON;
}

static void count_free(uint32_t site, uint64_t bytes, bool whole)
{
	struct heap_region_site *s = sites__at(site);

	__atomic_fetch_add(&s->free_bytes, bytes, __ATOMIC_RELAXED);
	if (whole)
		__atomic_fetch_add(&s->free_count, 1, __ATOMIC_RELAXED);
	count__add_live(&th, -(int64_t)bytes);
}

/*
 * [lo, hi) is unmapped: the ranges there lose those bytes (counted freed
 * against their sites, unless count is false). A range cut in the middle
 * becomes two.
 */
static void map_cut(uint64_t lo, uint64_t hi, bool count)
{
	size_t i = map_find(lo);

	while (i < map.n && map.v[i].lo < hi) {
		struct range *r = &map.v[i];
		uint64_t a = r->lo > lo ? r->lo : lo, b = r->hi < hi ? r->hi : hi;
		bool whole = a == r->lo && b == r->hi;

		if (count)
			count_free(r->site, b - a, whole && !r->piece);
		if (whole) {
			memmove(r, r + 1, (map.n - i - 1) * sizeof(*r));
			map.n--;
			continue;
		}
		if (a > r->lo && b < r->hi) {
			/* a hole in the middle: the end becomes a range of its own */
			if (!map_grow()) {
				/* no room: the end is forgotten, counted freed now */
				if (count)
					count_free(r->site, r->hi - b, false);
				r->hi = a;
				return;
			}
			r = &map.v[i];
			memmove(r + 2, r + 1, (map.n - i - 1) * sizeof(*r));
			map.n++;
			r[1] = (struct range){ .lo = b, .hi = r->hi, .site = r->site, .piece = 1 };
			r->hi = a;
			return;
		}
		if (a == r->lo)
			r->lo = b;
		else
			r->hi = a;
		i++;
	}
}

/* A new range; what was mapped there before went unseen (counted freed). */
static void map_add(uint64_t lo, uint64_t hi, uint32_t site)
{
	size_t i;

	map_cut(lo, hi, true);
	if (!map_grow()) {
		tracker_stat(HEAP_RSTAT_DROP_LIVE, 1);
		count_free(site, hi - lo, true);	/* cannot be followed: not live */
		return;
	}
	i = map_find(lo);
	memmove(&map.v[i + 1], &map.v[i], (map.n - i) * sizeof(map.v[0]));
	map.v[i] = (struct range){ .lo = lo, .hi = hi, .site = site };
	map.n++;
}

static inline uint64_t page_up(uint64_t n)
{
	return (n + 4095) & ~(uint64_t)4095;
}

/* --- the interposed functions -------------------------------------------- */

static void *do_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off,
		     const uintptr_t *frame)
{
	struct unwind_from from;
	struct heap_region_site *s;
	void *p;

	/* another allocator's own mappings: its heap, counted as its blocks */
	if (!enter(&th))
		return sys_mmap(addr, len, prot, flags, fd, off);
	if (unlikely(next_alloc.foreign) && frame[1] - next_alloc.lo < next_alloc.hi - next_alloc.lo) {
		tracker__end(&th);
		return sys_mmap(addr, len, prot, flags, fd, off);
	}
	p = sys_mmap(addr, len, prot, flags, fd, off);
	if (p == MAP_FAILED || !len) {
		tracker__end(&th);
		return p;
	}
	if (!(flags & MAP_ANONYMOUS) || prot == PROT_NONE) {
		/* a file mapping (or a reservation) laid over anonymous ones: they are gone */
		if (flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) {
			map_lock();
			map_cut((uintptr_t)p, (uintptr_t)p + page_up(len), true);
			unlock();
		}
		tracker__end(&th);
		return p;
	}
	from.ret = frame[1];
	from.fp = frame[0];
	from.sp = (uintptr_t)(frame + 2);
	s = count__site(&th, &from, HEAP_SITE_MMAP);
	if (s) {
		uint64_t bytes = page_up(len);

		__atomic_fetch_add(&s->alloc_bytes, bytes, __ATOMIC_RELAXED);
		__atomic_fetch_add(&s->alloc_count, 1, __ATOMIC_RELAXED);
		count__add_live(&th, (int64_t)bytes);
		map_lock();
		map_add((uintptr_t)p, (uintptr_t)p + bytes, sites__index(s));
		unlock();
	}
	tracker__end(&th);
	return p;
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return do_mmap(addr, len, prot, flags, fd, off, __builtin_frame_address(0));
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return do_mmap(addr, len, prot, flags, fd, off, __builtin_frame_address(0));
}

EXPORT int munmap(void *addr, size_t len)
{
	int rc;

	if (!enter(&th))
		return sys_munmap(addr, len);
	rc = sys_munmap(addr, len);
	if (!rc && len) {
		map_lock();
		map_cut((uintptr_t)addr, (uintptr_t)addr + page_up(len), true);
		unlock();
	}
	tracker__end(&th);
	return rc;
}

/*
 * A range grown, shrunk or moved keeps its site: the difference in size is
 * allocated or freed there, a move changes nothing. MREMAP_DONTUNMAP (and
 * old_size 0, a second view of a shared mapping) leave the old range
 * mapped: the new one is a mapping of its own.
 */
EXPORT void *mremap(void *old, size_t old_size, size_t new_size, int flags, ...)
{
	void *new_addr = NULL, *p;
	uint64_t o = (uintptr_t)old, os = page_up(old_size), ns = page_up(new_size), got = 0;
	uint32_t site = UINT32_MAX;
	bool keep_old;
	size_t i;

	if (flags & MREMAP_FIXED) {
		va_list ap;

		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	if (!enter(&th))
		return sys_mremap(old, old_size, new_size, flags, new_addr);
	p = sys_mremap(old, old_size, new_size, flags, new_addr);
	if (p == MAP_FAILED) {
		tracker__end(&th);
		return p;
	}
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif
	keep_old = (flags & MREMAP_DONTUNMAP) || !old_size;
	map_lock();
	i = map_find(o);
	if (i < map.n && map.v[i].lo < o + (os ? os : 1)) {
		/* the range the old mapping starts in: its site follows the move */
		uint64_t a = map.v[i].lo > o ? map.v[i].lo : o;
		uint64_t b = map.v[i].hi < o + os ? map.v[i].hi : o + os;

		site = map.v[i].site;
		if (!keep_old) {
			got = b - a;
			map_cut(a, b, false);
		}
	}
	/* anything else under the old range (it spanned two) is gone */
	if (!keep_old)
		map_cut(o, o + os, true);
	if (site != UINT32_MAX) {
		struct heap_region_site *s = sites__at(site);

		if (ns > got) {
			__atomic_fetch_add(&s->alloc_bytes, ns - got, __ATOMIC_RELAXED);
			if (keep_old)
				__atomic_fetch_add(&s->alloc_count, 1, __ATOMIC_RELAXED);
			count__add_live(&th, (int64_t)(ns - got));
		} else if (got > ns) {
			count_free(site, got - ns, false);
		}
		map_add((uintptr_t)p, (uintptr_t)p + ns, site);
	} else {
		/* not ours (a file mapping, malloc's): only what it lands on goes */
		map_cut((uintptr_t)p, (uintptr_t)p + ns, true);
	}
	unlock();
	tracker__end(&th);
	return p;
}
