/*
 * Inside the in-process heap tracker (librsprof-heap.so): what its files
 * share. Nothing here is visible outside the library (-fvisibility=hidden).
 */
#ifndef RSPROF_PRELOAD_TRACKER_H
#define RSPROF_PRELOAD_TRACKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "preload/block.h"
#include "preload/heap-region.h"

/* What every call reads, kept together (one or two cache lines, not five). */
#define TRACKER_HOT	__attribute__((section(".data.rsprof_hot")))

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

/* The region this process writes into (NULL: not tracking). */
extern struct heap_region *tracker_region;

static inline void tracker_stat(unsigned int i, uint64_t n)
{
	__atomic_fetch_add(&tracker_region->stats[i], n, __ATOMIC_RELAXED);
}

/* --- the unwinder (preload/unwind.c): a replaceable step ------------------ */

/* Where the allocator was called from: its return address, the caller's
 * frame pointer at the call and the stack pointer after the call returns. */
struct unwind_from {
	uintptr_t ret, fp, sp;
};

/*
 * The caller of the function whose frame (its saved %rbp) is at f. Two
 * 8-byte loads, never the one 16-byte load a compiler merges them into:
 * the call and the push of %rbp stored the two words just before, and a
 * load spanning two stores cannot be forwarded from the store buffer (a
 * stall of ~15 cycles on every allocation, measured with perf).
 */
static inline void unwind__from_frame(struct unwind_from *from, const uintptr_t *f)
{
	from->ret = __atomic_load_n(&f[1], __ATOMIC_RELAXED);
	from->fp = __atomic_load_n(&f[0], __ATOMIC_RELAXED);
	from->sp = (uintptr_t)(f + 2);
}

/* A captured stack, innermost first; cand: stack-scan candidates. */
struct unwind_stack {
	uint64_t ips[HEAP_REGION_MAX_DEPTH];
	uint64_t cand[HEAP_REGION_MAX_CAND];
	int depth, n_cand;
};

/* The modules, the main executable's code (the stack scan keeps words
 * pointing into it), libunwind when the target can load it. */
void unwind__init(void);
/* Is libunwind there (CFI unwinding for code without frame pointers)? */
bool unwind__cfi(void);
/* Capture the stack; lo..hi: the thread's stack (0, 0: unknown, no walk). */
void unwind__stack(const struct unwind_from *from, uintptr_t lo, uintptr_t hi,
		   struct unwind_stack *s);
/* The stack's hash, never 0. */
uint64_t unwind__hash(const struct unwind_stack *s);

/* --- the sites (preload/sites.c): stacks and counters in the region ------- */

void sites__init(struct heap_region *r);
/* The record of stack s (hash key), made on first sight; NULL when the
 * table is full (counted as dropped). */
struct heap_region_site *sites__get(uint64_t key, const struct unwind_stack *s, uint8_t kind);
struct heap_region_site *sites__at(uint32_t idx);
uint32_t sites__index(const struct heap_region_site *s);

/* --- blocks without a header (preload/live.c) ---------------------------- */

/*
 * The blocks the tracker counts but could give no header (preload/block.h:
 * alignments above BLOCK_ALIGN_MAX, sizes of BLOCK_SIZE_MAX or more):
 * pointer -> {size, site}, in a sharded table.
 */
struct live_entry {
	uint64_t ptr;
	uint64_t size;		/* as asked for (not the usable size) */
	uint32_t site;		/* index of the site record */
};

/*
 * Insert e (keyed by e->ptr). 1 when a stale entry for the same pointer was
 * there (its free went by unseen): it is copied to *stale and replaced.
 * 0 inserted; -1 no memory for the table (not inserted).
 */
int live__put(const struct live_entry *e, struct live_entry *stale);
/* Remove ptr's entry into *e; false when it is not there (or the table is empty). */
bool live__take(uint64_t ptr, struct live_entry *e);
/* In a fork child: forget every entry, release every table (no lock taken). */
void live__reset(void);
/* Forget every entry (a new attach), each shard under its lock. */
void live__forget(void);

/* The table's filter (preload/live.c): 0 in ptr's slot, ptr is not there. */
#define LIVE_FILTER	(1u << 16)
extern uint8_t live_filter[LIVE_FILTER];

/* A pointer's hash: its top bits pick its shard of the table, and its filter slot. */
static inline uint64_t live__hash(uint64_t ptr)
{
	return (ptr >> 4) * 0x9e3779b97f4a7c15ULL;
}

static inline unsigned int live__filter_slot(uint64_t ptr)
{
	return (unsigned int)(live__hash(ptr) >> 48);
}

/* May ptr be in the table? false: it is not (one load, no lock). */
static inline bool live__maybe(uint64_t ptr)
{
	return __atomic_load_n(&live_filter[live__filter_slot(ptr)], __ATOMIC_ACQUIRE) != 0;
}

/* --- the allocator forwarded to (preload/next.c) --------------------------- */

/*
 * Each function of the malloc family the program would call without the
 * tracker. foreign: not all glibc's (jemalloc, mimalloc, tcmalloc...): every
 * call is forwarded unchanged, the blocks counted through the live table.
 */
struct next_alloc {
	void *(*malloc)(size_t);
	void (*free)(void *);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	size_t (*usable)(void *);
	const void *owner;	/* the link map of the object whose malloc it is */
	uintptr_t lo, hi;	/* that object's mappings (foreign: 0, 0 when unknown) */
	bool foreign;
	bool usable_own;	/* usable is from malloc's object (glibc's for glibc) */
};

extern struct next_alloc next_alloc;
/* Find them (once; no allocation, no lock: safe at the first malloc). */
void next__init(void);

/* --- the tracker's state and its counting (preload/tracker.c, count.c) ---- */

enum tracker_mode { M_UNINIT, M_INIT, M_OFF, M_ON };

extern int tracker_mode;
/* This image started the tracker once (a fork child restarting: true). */
extern bool tracker_started;
extern uint32_t sample_every;
/* Byte sampling (record --heap-sample-bytes): the mean bytes between two
 * allocations tracked; 0: off. */
extern uint64_t sample_bytes;
/* The account this process counts into (preload/block.h): a fork child's
 * is its parent's + 1. */
extern uint16_t tracker_epoch;
/* Calls before the tracker could start (ld.so's, before libc set the
 * environment up). */
extern unsigned long tracker_early;

#define TCACHE 256

/* A thread's private index of its block: site -> counter (mmap'd). */
struct tindex {
	uint32_t site_plus1;
	uint32_t count;
};

/* struct thread.ready */
enum thread_state {
	T_NEW,		/* no tracked call yet: no memory of its own */
	T_READY,	/* its memory made, its stack bounds known (or given up) */
	T_EXITING,	/* its memory gone: what it still allocates counts into the records */
	T_NO_STACK,	/* started on another stack: bounds learned at the next call */
	T_NO_MEM,	/* no memory could be mapped for it: it counts into the records */
};

/*
 * What the tracker keeps for a thread beyond its few words of TLS, in a
 * mapping of its own made at the thread's first tracked call (its site
 * cache, its counters' index after it). A library loaded by dlopen gets
 * initial-exec TLS only from the loader's small static surplus, so the
 * thread's TLS holds no more than struct thread below.
 */
struct thread_mem {
	uint32_t seq;		/* tracked allocations and frees of this thread */
	uint32_t salt;
	uint32_t gen;		/* the tracker_gen it was made for */
	uint32_t pad;
	size_t size;		/* bytes mapped */
	uintptr_t lo, hi;	/* the thread's stack */
	int64_t live;		/* bytes not yet added to the region's live total */
	struct heap_region_block *block;	/* NULL: count into the records */
	struct tindex *index;		/* 2 * count_cap entries, after the cache */
	struct {
		uint64_t key;
		struct heap_region_site *site;
		struct heap_region_count *count;	/* NULL: the record's counters */
	} cache[TCACHE];
};

/* The thread's TLS: a few words (see struct thread_mem). */
struct thread {
	uint8_t busy;		/* inside the tracker: its calls are not counted */
	uint8_t ready;		/* enum thread_state */
	uint8_t sampling;	/* byte sampling: its first interval drawn */
	uint32_t tid;		/* set when it starts */
	struct thread_mem *mem;	/* T_READY, T_NO_STACK: its memory */
	uint64_t rng;		/* 0: not seeded yet */
	int64_t sample_left;	/* byte sampling: bytes before the next tracked one */
	struct unwind_from new_from;	/* operator new's caller (ret 0: none) */
};

/* Bumped each time the tracker starts counting into a region: a thread's
 * memory of an earlier one is made anew. */
extern uint32_t tracker_gen;

extern __thread struct thread th __attribute__((tls_model("initial-exec")));

/* --- the thread's stack (preload/stack.c) -------------------------------- */

enum stack_bounds {
	STACK_OK,	/* [*lo, *hi): the thread's stack, readable */
	STACK_OTHER,	/* sp is on another stack (sigaltstack): ask again later */
	STACK_UNKNOWN,	/* no way to tell (no /proc): walk no further than the caller */
};

/* The bounds of the stack sp is on, from the kernel alone (no glibc call). */
enum stack_bounds stack__bounds(uintptr_t sp, uintptr_t *lo, uintptr_t *hi);

/* --- calls out of the tracker (preload/tracker.c) ------------------------ */

/*
 * A call the tracker makes into code it does not own (glibc, libunwind),
 * from inside the program's allocation: marked in the region while it runs
 * (heap_region.callouts), so that rsprof can tell a thread stuck there.
 * callout__begin() returns the slot (-1: none free, not marked).
 */
int callout__begin(enum heap_callout what);
void callout__end(int slot);

/* The first call: find the region, or stay out of the way (tracker.c). */
void tracker__init(void);
/*
 * The thread's memory, stack bounds and counter block, at its first
 * tracked call (and when its memory is of an earlier region): t->mem is
 * then the thread's memory, NULL when it has none (it counts into the
 * records).
 */
void tracker__thread_init(struct thread *t);

/* The thread's memory for counting (NULL: none, count into the records). */
static inline struct thread_mem *tracker__mem(struct thread *t)
{
	struct thread_mem *m = t->mem;

	if (__builtin_expect(t->ready == T_READY && m->gen == tracker_gen, 1))
		return m;
	tracker__thread_init(t);
	return t->mem;
}

/* How a call is to be handled (tracker__begin()). */
enum track {
	TRACK_OFF,	/* no tracker in this process (yet): glibc's, as it is */
	TRACK_QUIET,	/* the tracker runs, this call is not counted (the thread
			 * is inside the tracker: a signal handler, libunwind) */
	TRACK_ON,	/* counted: the thread is marked busy until it returns */
};

static inline enum track tracker__begin(struct thread *t)
{
	int m = __atomic_load_n(&tracker_mode, __ATOMIC_RELAXED);

	if (__builtin_expect(m == M_ON && !t->busy, 1)) {
		t->busy = 1;
		return TRACK_ON;
	}
	if (m == M_UNINIT) {
		tracker__init();
		m = __atomic_load_n(&tracker_mode, __ATOMIC_ACQUIRE);
		if (m == M_ON && !t->busy) {
			t->busy = 1;
			return TRACK_ON;
		}
		if (m == M_UNINIT)
			tracker_early++;	/* before libc set the environment up */
	}
	if (m == M_ON) {
		tracker_stat(HEAP_RSTAT_REENTERED, 1);
		return TRACK_QUIET;
	}
	return TRACK_OFF;
}

static inline void tracker__end(struct thread *t)
{
	t->busy = 0;
}

/*
 * A new block at p of size bytes, allocated from `from` (its caller's
 * frame): counted, its site returned (BLOCK_UNTRACKED: sampled out, or
 * dropped) and *tick set for its header. Inside tracker__begin/end.
 */
uint32_t count__alloc(struct thread *t, uint64_t p, uint64_t size,
		      const struct unwind_from *from, uint32_t *tick);
/* A counted block goes (its free, or the old block of a realloc): size and
 * site as counted, tick from its header (BLOCK_NO_TICK: none). */
void count__free(struct thread *t, uint64_t p, uint64_t size, uint32_t site, uint32_t tick);
/* The same from a thread inside the tracker (a signal handler): atomic adds
 * to the site's record only. */
void count__free_quiet(uint64_t p, uint64_t size, uint32_t site);
/* A free of memory the tracker never counted (allocated before it started). */
void count__unknown_free(uint64_t usable);
/* Add to the region's live bytes (in steps). */
void count__add_live(struct thread *t, int64_t bytes);
/* The thread exits: what it holds (memory m) goes to the region. */
void count__thread_exit(struct thread *t, struct thread_mem *m);

#define BLOCK_NO_TICK	UINT32_MAX

/* A block the allocator handed out as it is (no header), counted through
 * the live table when `how` says so (preload/malloc.c). p. */
void *malloc__tabled(struct thread *t, enum track how, void *p, size_t n,
		     const struct unwind_from *from);

/* --- rewriting entry points (preload/patch.c, preload/hooks.c) ----------- */

/*
 * Make fn (fn_size bytes; 0: unknown) jump to hook; *orig: a trampoline
 * that does what fn did. 0, or -1: fn left as it is (an instruction the
 * decoder does not know, a branch into the bytes to replace, no memory
 * within reach, the system refused to write the code).
 */
int patch__hook(void *fn, size_t fn_size, void *hook, void **orig);
/* The tracker's malloc family (preload/malloc.c), bound inside the library. */
void *tracker_malloc(size_t n);
void tracker_free(void *p);
void *tracker_calloc(size_t n, size_t size);
void *tracker_realloc(void *p, size_t n);
void *tracker_memalign(size_t align, size_t n);
void *tracker_aligned_alloc(size_t align, size_t n);
int tracker_posix_memalign(void **out, size_t align, size_t n);
void *tracker_valloc(size_t n);
void *tracker_pvalloc(size_t n);

/* Hook the allocator entry points not reached through malloc (the Rust
 * allocator shims over a #[global_allocator], an executable's own malloc,
 * CPython's object allocator) when patch (the image's first start: one
 * thread running); the counts into the region either way. */
void hooks__init(bool patch);
/*
 * Loaded into a running process: find the entry points to hook (the malloc
 * family of an allocator library the program has instead of glibc's, the
 * allocators' own functions), none rewritten yet; their addresses into
 * at[] (up to max), for rsprof to see that no thread is in their first
 * bytes. The count.
 */
size_t hooks__find_injected(uint64_t *at, size_t max);
/* Rewrite the entries found and not tried yet (every other thread stopped). */
void hooks__apply(void);

/* --- symbols of the loaded objects (preload/next.c) ---------------------- */

/* A dynamic entry's d_ptr as the loader left it: relocated in a writable
 * dynamic section, as linked in a read-only one (the vDSO's). */
static inline uintptr_t next__dyn_ptr(uintptr_t base, uintptr_t v)
{
	return v < base ? v + base : v;
}


/* The executable's link map. */
const void *next__exe(void);
/* name defined in map (its dynamic symbols); *size: its st_size. NULL: not there. */
void *next__lookup(const void *map, const char *name, size_t *size);
/* name in any object but the tracker, first in the lookup order; *map: its object. */
void *next__find(const char *name, const void **map, size_t *size);

/* Byte sampling: the countdown reached, draw the next interval; is the
 * allocation of n bytes (the one that reached it) tracked? */
bool count__sample_hit(struct thread *t, uint64_t n);

/* Is an allocation of n bytes tracked (always without byte sampling)? Touches
 * nothing but the thread's countdown. */
static inline bool count__sampled(struct thread *t, uint64_t n)
{
	if (likely(!sample_bytes))
		return true;
	if (likely((int64_t)n >= 0 && (t->sample_left -= (int64_t)n) > 0))
		return false;
	return count__sample_hit(t, n);
}

/* Byte sampling's fast path: n bytes counted down, not tracked (false:
 * sampling off, or this one may be: count__sample_hit() decides). */
static inline bool count__skip(struct thread *t, uint64_t n)
{
	return sample_bytes && (int64_t)n >= 0 && (t->sample_left -= (int64_t)n) > 0;
}

/* --- exec (preload/exec.c): the tree keeps the tracker ------------------- */

/* The tracker follows the tree from here: dir is the region directory. */
void exec__follow(const char *dir);
/* Stop adding the tracker to the environment of programs exec'd. */
void exec__unfollow(void);

/* --- the tracker loaded into a running process (preload/inject.c, got.c) -- */

/* Loaded by rsprof into a running process (not preloaded). */
extern bool tracker_injected;
/* Every few thousand allocations of a thread: stop counting if rsprof is gone
 * (a cold function of its own: the call stays out of the hot path's registers). */
void inject__check(void);
/* Loaded by rsprof and rsprof is gone (its pipe hung up)? A poll, no lock. */
bool inject__peer_gone(void);
/* In a fork child: rsprof's pipe is not the child's. */
void inject__after_fork_child(void);
/* Counting from the region memfd fd (closed): 0, or -1 (fd closed too). */
int tracker__adopt(int fd);
/* Look up the tracker's functions (ours) and the process's bindings. 0 or -1. */
int got__init(void *(*ours)(const char *name));
/* The process's binding of a name of the list (0: none). */
uintptr_t got__bound(const char *name);
/* Is a in glibc's mapping? */
bool got__glibc(uintptr_t a);
/* Redirect (restore: put back) the slots of every loaded object; how many. */
size_t got__redirect(bool restore, size_t *objects);
/* glibc's free, realloc and malloc_usable_size, as the tracker calls them
 * (their moved first instructions once their entries jump to the tracker). */
void malloc__set_libc(void *free_fn, void *realloc_fn, void *usable_fn);
/* The functions the tracker forwards to, looked up again (after an attach). */
void malloc__resolve(void);

/* --- the allocation history (preload/history.c) ---------------------------- */

/* The region has history rings (record --alloc-history). */
extern bool history_on;

/* Does the region's ring layout fit in size bytes (none is fine)? */
bool history__fits(const struct heap_region *r, uint64_t size);
/* The region claimed: history_on when it has rings. */
void history__init(struct heap_region *r);
/* An allocation or a free into the thread's ring (when full: waits for
 * rsprof to drain it; dropped, counted, once rsprof is gone or stuck). */
void history__event(uint64_t ptr, uint64_t size, uint32_t site, enum heap_event_kind kind);

/* --- for preload/mmap.c (preload/count.c) -------------------------------- */

/* The record of an allocation of `kind` made from `from` (its key mixes the
 * kind in: never the record of a malloc stack); NULL when dropped. */
struct heap_region_site *count__site(struct thread *t, const struct unwind_from *from,
				     unsigned int kind);

#endif
