/*
 * Inside the in-process heap tracker (librsprof-heap.so): what its files
 * share. Nothing here is visible outside the library (-fvisibility=hidden).
 */
#ifndef RSPROF_PRELOAD_TRACKER_H
#define RSPROF_PRELOAD_TRACKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "preload/heap-region.h"

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
/* Is this thread inside libunwind? Its allocations there are untracked:
 * quiet_add() notes them, quiet_take() finds one at its free (true: not an
 * unknown free, not counted). */
bool unwind__inside(void);
void unwind__quiet_add(const void *p);
bool unwind__quiet_take(const void *p);
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

/* --- the live pointers (preload/live.c) ----------------------------------- */

struct live_entry {
	uint64_t ptr;
	uint64_t size;		/* as asked for (not the usable size) */
	uint32_t site;		/* index of the site record */
	uint32_t tick;		/* the allocating thread's count, for temporaries */
};

/* The tick of an entry that cannot be a temporary (it left its young table). */
#define LIVE_NO_TICK	UINT32_MAX

/*
 * Insert e (keyed by e->ptr). 1 when a stale entry for the same pointer was
 * there (its free went by unseen): it is copied to *stale and replaced.
 * 0 inserted; -1 no memory for the table (not inserted).
 */
int live__put(const struct live_entry *e, struct live_entry *stale);
/* Remove ptr's entry into *e; false when it is not there. */
bool live__take(uint64_t ptr, struct live_entry *e);

/* A thread's young table (NULL: none left, the shared table only). */
struct young;
typedef void (*live_stale_fn)(void *ctx, const struct live_entry *stale);

struct young *live__young(void);
/* The thread exits: its young entries move to the shared table. */
void live__young_release(struct young *y, live_stale_fn stale, void *ctx);
/* A new block, into y (moving what had its slot); stale: an entry of the
 * same pointer found (its free went by unseen). 0, -1: no memory. */
int live__add(struct young *y, const struct live_entry *e, live_stale_fn stale, void *ctx);
/* A new block ptr is coming: start fetching what live__add() will touch. */
void live__prefetch(struct young *y, uint64_t ptr);
/* Before a free: the shared table slot of ptr, into the cache (a hint). */
void live__prefetch_shared(uint64_t ptr);
/* Take ptr's entry, wherever it is: y, the shared table, another thread's young. */
bool live__remove(struct young *y, uint64_t ptr, struct live_entry *e);
/* In a fork child: forget every entry, release every table (no lock taken). */
void live__reset(void);

/* --- exec (preload/exec.c): the tree keeps the tracker ------------------- */

/* The tracker follows the tree from here: dir is the region directory. */
void exec__follow(const char *dir);
/* Stop adding the tracker to the environment of programs exec'd. */
void exec__unfollow(void);
/*
 * "LD_PRELOAD=" and the value v without our library into buf (no
 * allocation: safe in a fork child); false when nothing else is left.
 */
bool exec__strip_preload(const char *v, char *buf, size_t len);

/* --- the allocation history (preload/history.c) ---------------------------- */

/* The region has history rings (record --alloc-history). */
extern bool history_on;

/* Does the region's ring layout fit in size bytes (none is fine)? */
bool history__fits(const struct heap_region *r, uint64_t size);
/* The region claimed: history_on when it has rings. */
void history__init(struct heap_region *r);
/* An allocation or a free into the thread's ring (dropped, counted, when full). */
void history__event(uint64_t ptr, uint64_t size, uint32_t site, enum heap_event_kind kind);

/* --- for preload/mmap.c (preload/tracker.c) ------------------------------ */

/*
 * For preload/mmap.c: tracker__enter() is true when this thread's call
 * is to be tracked (it is then inside the tracker until tracker__leave());
 * tracker__site() the record of an allocation of `kind` made from `from`
 * (its key mixes the kind in: never the record of a malloc stack), NULL
 * when dropped; tracker__add_live() adds to the region's live bytes.
 */
bool tracker__enter(void);
void tracker__leave(void);
struct heap_region_site *tracker__site(const struct unwind_from *from, unsigned int kind);
void tracker__add_live(int64_t bytes);

#endif
