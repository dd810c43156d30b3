/*
 * librsprof-heap.so: rsprof's in-process heap tracker (issue 8), handed to
 * the programs rsprof launches through LD_PRELOAD.
 *
 * It interposes the malloc family and forwards every call to glibc's own
 * implementation (__libc_malloc & co.: no dlsym, so nothing allocates
 * while the tracker starts). For each allocation it walks the caller's
 * frame pointers (preload/unwind.c), finds the stack's record in the
 * shared region (preload/sites.c) and adds to its counters; the pointer is
 * kept with its size and record (preload/live.c) until its free. No
 * syscall, no lock shared by all threads, nothing sent per call: rsprof
 * reads the counters at each checkpoint (util/heap/preload.c).
 *
 * Which process is tracked: the one whose region file rsprof made
 * (preload/heap-region.h) and, when rsprof records the process tree (its
 * tree file is there), every process that loads the library with the
 * directory in its environment: each makes its own region.
 * fork(): the child never writes into its parent's counters. With the
 * tree it starts an account of its own: at its first allocation it makes
 * its region (lazily, so a child that only execs costs nothing; nothing
 * is allocated and no lock is taken in the fork handler: the live table is
 * dropped with munmap and its locks reset). Blocks it inherited are not
 * in its account: their frees are its unknown frees, as for memory
 * allocated before the tracker started. Without the tree the child stops
 * tracking and takes the library out of its environment.
 * exec(): the new image makes the next generation's region (a program of
 * the tree exec'd by a child: a region of its own). preload/exec.c puts
 * the library back into an environment that lost it (env -i).
 *
 * Re-entry: a thread inside the tracker is marked busy (initial-exec TLS);
 * calls it makes meanwhile (a signal handler that allocates, glibc
 * allocating inside pthread_getattr_np) pass straight through, untracked.
 * A block freed that way and handed out again is found still in the
 * table: counted freed then (HEAP_RSTAT_STALE).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "preload/tracker.h"

#define EXPORT __attribute__((visibility("default")))

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);
extern void *__libc_memalign(size_t align, size_t n);
extern void *__libc_valloc(size_t n);
extern void *__libc_pvalloc(size_t n);
extern size_t malloc_usable_size(void *p);
extern void *__libc_stack_end;
extern char **environ;

enum mode { M_UNINIT, M_INIT, M_OFF, M_ON };

static int mode = M_UNINIT;
static unsigned long early;		/* calls before the tracker could start */
struct heap_region *tracker_region;
static uint32_t sample_every = 1;
static bool tree;			/* rsprof records every process of the tree */
static bool forked;			/* a fork child that has made no region yet */
static bool started_once;		/* this image registered its handlers */

#define CACHE 256

/* A thread's private index of its block: site -> counter (mmap'd). */
struct tindex {
	uint32_t site_plus1;
	uint32_t count;
};

struct thread {
	uint8_t busy;		/* inside the tracker: calls pass through */
	uint8_t ready;		/* stack bounds known */
	uint32_t seq;		/* tracked allocations and frees of this thread */
	uint32_t salt;
	uintptr_t lo, hi;	/* the thread's stack */
	int64_t live;		/* bytes not yet added to the region's live total */
	uint64_t rng;
	struct unwind_from new_from;	/* operator new's caller (ret 0: none) */
	struct heap_region_block *block;	/* NULL: count into the records */
	struct young *young;		/* its young blocks (preload/live.c); NULL: none */
	struct tindex *index;		/* 2 * count_cap entries */
	struct {
		uint64_t key;
		struct heap_region_site *site;
		struct heap_region_count *count;	/* NULL: the record's counters */
	} cache[CACHE];
};

static pthread_key_t thread_key;

static void flush_live(struct thread *t);
static void stale_gone(void *ctx, const struct live_entry *e);

static __thread struct thread th __attribute__((tls_model("initial-exec")));

/* The allocator's caller, read in the interposed function itself. */
#define CALLER(c) unwind__from_frame(&(c), __builtin_frame_address(0))

/* --- start, fork, environment ------------------------------------------- */

static struct heap_region_block *block_at(uint64_t i)
{
	struct heap_region *r = tracker_region;

	return (struct heap_region_block *)((char *)r + r->off_blocks + i * r->block_size);
}

/*
 * A block of counters for this thread: one freed by a thread that exited,
 * else a new one; none left: the thread counts into the records.
 */
static void block_take(struct thread *t)
{
	struct heap_region *r = tracker_region;
	uint64_t n = __atomic_load_n(&r->n_blocks, __ATOMIC_ACQUIRE), i;
	size_t isize = 2 * (size_t)r->count_cap * sizeof(struct tindex);
	struct heap_region_block *b = NULL;
	void *idx;

	idx = mmap(NULL, isize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (idx == MAP_FAILED) {
		tracker_stat(HEAP_RSTAT_NO_BLOCK, 1);
		return;
	}
	for (i = 0; i < n && i < r->block_cap && !b; i++) {
		uint32_t st = HEAP_BLOCK_FREE;

		b = block_at(i);
		if (__atomic_load_n(&b->n_used, __ATOMIC_RELAXED) >= r->count_cap ||
		    !__atomic_compare_exchange_n(&b->state, &st, HEAP_BLOCK_OWNED, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			b = NULL;
	}
	if (!b) {
		i = __atomic_fetch_add(&r->n_blocks, 1, __ATOMIC_ACQ_REL);
		if (i >= r->block_cap) {
			munmap(idx, isize);
			tracker_stat(HEAP_RSTAT_NO_BLOCK, 1);
			return;
		}
		b = block_at(i);
		__atomic_store_n(&b->state, HEAP_BLOCK_OWNED, __ATOMIC_RELEASE);
	}
	b->tid = (uint32_t)syscall(SYS_gettid);
	t->index = idx;
	t->block = b;
}

/* A thread exits (pthread key destructor): its block goes to the next thread. */
static void thread_exit(void *p)
{
	struct thread *t = p;
	struct heap_region_block *b = t->block;

	if (t != &th || !tracker_region)
		return;
	t->busy = 1;
	live__young_release(t->young, stale_gone, t);
	t->young = NULL;
	if (t->live)
		flush_live(t);
	memset(t->cache, 0, sizeof(t->cache));
	t->ready = 2;	/* what it still allocates counts into the records */
	if (b) {
		t->block = NULL;
		munmap(t->index, 2 * (size_t)tracker_region->count_cap * sizeof(struct tindex));
		t->index = NULL;
		__atomic_store_n(&b->state, HEAP_BLOCK_FREE, __ATOMIC_RELEASE);
	}
	t->busy = 0;
}

static void thread_init(struct thread *t)
{
	if (t->ready == 2)
		return;		/* exiting: no block any more */
	t->ready = 1;
	t->salt = (uint32_t)(uintptr_t)t * 2654435761u;
	t->rng = ((uint64_t)(uintptr_t)t ^ 0x9e3779b97f4a7c15ULL) | 1;
	if (syscall(SYS_gettid) == getpid()) {
		struct rlimit rl;
		uintptr_t span = 8u << 20;

		if (!getrlimit(RLIMIT_STACK, &rl) && rl.rlim_cur != RLIM_INFINITY &&
		    rl.rlim_cur > span)
			span = rl.rlim_cur;
		t->hi = (uintptr_t)__libc_stack_end;
		t->lo = t->hi > span ? t->hi - span : 0;
	} else {
		pthread_attr_t a;
		void *addr;
		size_t size;

		if (!pthread_getattr_np(pthread_self(), &a)) {
			if (!pthread_attr_getstack(&a, &addr, &size)) {
				t->lo = (uintptr_t)addr;
				t->hi = (uintptr_t)addr + size;
			}
			pthread_attr_destroy(&a);
		}
	}
	tracker_stat(HEAP_RSTAT_THREADS, 1);
	t->young = live__young();
	block_take(t);
	pthread_setspecific(thread_key, t);	/* thread_exit() when it ends */
}

/*
 * Take the tracker out of the environment (in place: no allocation, no
 * lock, so it is safe in a fork child): LD_PRELOAD without our library,
 * no RSPROF_HEAP_DIR. Children started from here do not load it.
 */
static void env_scrub(void)
{
	static char preload[4096];
	const size_t dl = sizeof(HEAP_REGION_DIR_ENV);	/* with the '=' */
	char **e = environ;
	size_t w = 0;

	if (!e)
		return;
	for (size_t r = 0; e[r]; r++) {
		char *v = e[r];

		if (v == preload) {		/* scrubbed before (a fork of a fork) */
			e[w++] = v;
			continue;
		}
		if (!strncmp(v, HEAP_REGION_DIR_ENV "=", dl))
			continue;
		if (!strncmp(v, "LD_PRELOAD=", 11)) {
			if (!exec__strip_preload(v + 11, preload, sizeof(preload)))
				continue;
			v = preload;
		}
		e[w++] = v;
	}
	e[w] = NULL;
}

/*
 * The fork child: never again a write into the parent's region. With the
 * tree, its own account from its first allocation on (tracker_init()):
 * only syscalls and stores here, the forking thread is the only one.
 */
static void after_fork_child(void)
{
	struct heap_region *old = tracker_region;
	struct thread *t = &th;

	__atomic_store_n(&mode, M_OFF, __ATOMIC_RELEASE);
	tracker_region = NULL;
	if (!tree || !old) {
		env_scrub();
		return;
	}
	if (t->index)
		munmap(t->index, 2 * (size_t)old->count_cap * sizeof(struct tindex));
	munmap(old, old->size);
	live__reset();
	memset(t->cache, 0, sizeof(t->cache));
	t->index = NULL;
	t->block = NULL;
	t->young = NULL;
	t->live = 0;
	t->new_from.ret = 0;
	if (t->ready == 1)
		t->ready = 0;	/* a block and a young table in the new region */
	forked = true;
	__atomic_store_n(&mode, M_UNINIT, __ATOMIC_RELEASE);
}

static void after_fork_parent(void)
{
	if (tracker_region)
		tracker_stat(HEAP_RSTAT_FORKS, 1);
}

static struct heap_region *map_region(int fd, size_t *size)
{
	struct stat st;
	void *p;

	if (fstat(fd, &st) || st.st_size < (off_t)sizeof(struct heap_region))
		return NULL;
	p = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return NULL;
	*size = st.st_size;
	return p;
}

static bool region_ok(const struct heap_region *r, size_t size)
{
	return r->magic == HEAP_REGION_MAGIC && r->version == HEAP_REGION_VERSION &&
	       r->header_size == sizeof(*r) && r->size == size &&
	       r->pid == (uint32_t)getpid() && r->site_cap && r->index_cap &&
	       !(r->index_cap & (r->index_cap - 1)) &&
	       r->off_frames + r->frame_cap * sizeof(uint64_t) <= size &&
	       r->count_cap && r->block_size >= sizeof(struct heap_region_block) +
				r->count_cap * sizeof(struct heap_region_count) &&
	       r->off_blocks + r->block_cap * r->block_size <= size && history__fits(r, size);
}

/*
 * This image follows another of the same process (exec): a region of its
 * own, the next generation, laid out as the first.
 */
static struct heap_region *next_generation(const char *dir, const struct heap_region *old,
					   size_t size)
{
	char path[PATH_MAX];
	struct heap_region *r;
	void *p;

	for (unsigned int g = old->generation + 1; g < old->generation + 1000; g++) {
		int fd;

		snprintf(path, sizeof(path), "%s/" HEAP_REGION_FILE_GEN, dir, (int)getpid(), g);
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0) {
			if (errno == EEXIST)
				continue;
			return NULL;
		}
		if (ftruncate(fd, size)) {
			close(fd);
			unlink(path);
			return NULL;
		}
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
		if (p == MAP_FAILED) {
			unlink(path);
			return NULL;
		}
		r = p;
		memcpy(r, old, offsetof(struct heap_region, clock_ms));
		r->generation = g;
		r->ppid = (uint32_t)getppid();
		__atomic_store_n(&r->state, HEAP_REGION_CLAIMED, __ATOMIC_RELEASE);
		return r;
	}
	return NULL;
}

/* The tree's template read into *t: rsprof records every process of the tree. */
static bool tree_template(const char *dir, struct heap_region *t)
{
	char path[PATH_MAX];
	int fd;
	bool ok;

	snprintf(path, sizeof(path), "%s/" HEAP_REGION_TREE, dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ok = pread(fd, t, sizeof(*t), 0) == (ssize_t)sizeof(*t);
	close(fd);
	return ok && t->magic == HEAP_REGION_MAGIC && t->version == HEAP_REGION_VERSION &&
	       t->header_size == sizeof(*t) && t->size >= sizeof(*t);
}

/*
 * A process of the tree without a region from rsprof: "heap.PID" made from
 * the template, claimed at once. NULL: there is one already (*exists), or
 * it cannot be made.
 */
static struct heap_region *region_make(const char *dir, const struct heap_region *t, bool *exists)
{
	char path[PATH_MAX];
	struct heap_region *r;
	void *p;
	int fd;

	*exists = false;
	snprintf(path, sizeof(path), "%s/" HEAP_REGION_FILE, dir, (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		*exists = errno == EEXIST;
		return NULL;
	}
	if (ftruncate(fd, (off_t)t->size)) {
		close(fd);
		unlink(path);
		return NULL;
	}
	p = mmap(NULL, t->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		unlink(path);
		return NULL;
	}
	r = p;
	memcpy(r, t, offsetof(struct heap_region, clock_ms));
	r->pid = (uint32_t)getpid();
	r->generation = 0;
	r->ppid = (uint32_t)getppid();
	r->flags = forked ? HEAP_REGION_FORKED : 0;
	if (!region_ok(r, t->size)) {
		munmap(p, t->size);
		unlink(path);
		return NULL;
	}
	__atomic_store_n(&r->state, HEAP_REGION_CLAIMED, __ATOMIC_RELEASE);
	return r;
}

/* The region rsprof made for this process, claimed; NULL: not recorded. */
static struct heap_region *region_claim(void)
{
	const char *dir = getenv(HEAP_REGION_DIR_ENV);
	char path[PATH_MAX];
	struct heap_region *r, *n, t;
	uint32_t offered = HEAP_REGION_OFFERED;
	size_t size = 0;
	bool exists = true;
	int fd;

	if (!dir || !*dir)
		return NULL;
	tree = tree_template(dir, &t);
	snprintf(path, sizeof(path), "%s/" HEAP_REGION_FILE, dir, (int)getpid());
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 && tree) {
		r = region_make(dir, &t, &exists);
		if (r || !exists)
			return r;
		fd = open(path, O_RDWR | O_CLOEXEC);
	}
	if (fd < 0)
		return NULL;
	r = map_region(fd, &size);
	close(fd);
	if (!r)
		return NULL;
	if (!region_ok(r, size)) {
		munmap(r, size);
		return NULL;
	}
	if (__atomic_compare_exchange_n(&r->state, &offered, HEAP_REGION_CLAIMED, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return r;
	/* claimed by an earlier image of this process: this one exec'd */
	n = next_generation(dir, r, size);
	munmap(r, size);
	return n;
}

/*
 * The first call (a constructor, or an allocation before it): find the
 * region, or stay out of the way. Before libc has set up the environment
 * (ld.so allocating at start-up) nothing can be decided: those calls pass
 * through and the next one tries again.
 */
static void tracker_init(void)
{
	int expect = M_UNINIT;
	struct heap_region *r;

	if (!environ)
		return;
	if (!__atomic_compare_exchange_n(&mode, &expect, M_INIT, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return;
	th.busy = 1;
	r = region_claim();
	forked = false;
	if (!r) {
		env_scrub();
		exec__unfollow();
		__atomic_store_n(&mode, M_OFF, __ATOMIC_RELEASE);
		th.busy = 0;
		return;
	}
	sample_every = r->sample_every ? r->sample_every : 1;
	r->stats[HEAP_RSTAT_EARLY] = early;
	early = 0;
	sites__init(r);
	history__init(r);
	tracker_region = r;
	if (tree)
		exec__follow(getenv(HEAP_REGION_DIR_ENV));
	if (!started_once) {	/* a fork child keeps its parent's */
		started_once = true;
		unwind__init();
		pthread_atfork(NULL, after_fork_parent, after_fork_child);
		pthread_key_create(&thread_key, thread_exit);
	}
	r->stats[HEAP_RSTAT_CFI] = unwind__cfi();
	__atomic_store_n(&mode, M_ON, __ATOMIC_RELEASE);
	th.busy = 0;
}

__attribute__((constructor)) static void tracker_ctor(void)
{
	if (__atomic_load_n(&mode, __ATOMIC_ACQUIRE) == M_UNINIT)
		tracker_init();
}

/* --- counting ------------------------------------------------------------ */

/* Should calls of this thread be tracked now? Starts the tracker if need be. */
static inline bool tracking(struct thread *t)
{
	int m = __atomic_load_n(&mode, __ATOMIC_RELAXED);

	if (likely(m == M_ON && !t->busy))
		return true;
	if (m == M_UNINIT) {
		tracker_init();
		if (__atomic_load_n(&mode, __ATOMIC_ACQUIRE) == M_ON && !t->busy)
			return true;
		if (__atomic_load_n(&mode, __ATOMIC_ACQUIRE) == M_UNINIT)
			early++;	/* before libc set the environment up */
		return false;
	}
	if (m == M_ON && t->busy)
		tracker_stat(HEAP_RSTAT_REENTERED, 1);
	return false;
}

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

static inline void add_live(struct thread *t, int64_t d)
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

/* A live entry goes: its free, or the old block of a realloc. */
static inline void count_free(struct thread *t, const struct live_entry *e)
{
	uint64_t w = weight_of(e->size), bytes = e->size * w;
	bool temp = e->tick == (t->seq ^ t->salt) && e->tick != LIVE_NO_TICK;
	struct heap_region_count *c = counter_of(t, e->site);

	/* heaptrack's "temporary": the free directly follows its allocation, no
	 * other allocation or free of the thread in between */
	t->seq++;
	if (unlikely(history_on))
		history__event(e->ptr, e->size, e->site, HEAP_EVENT_FREE);

	if (likely(c)) {
		cadd(&c->free_bytes, bytes);
		cadd(&c->free_count, w);
		if (temp)
			cadd(&c->temp_count, w);
	} else {
		struct heap_region_site *s = sites__at(e->site);

		__atomic_fetch_add(&s->free_bytes, bytes, __ATOMIC_RELAXED);
		__atomic_fetch_add(&s->free_count, w, __ATOMIC_RELAXED);
		if (temp)
			__atomic_fetch_add(&s->temp_count, w, __ATOMIC_RELAXED);
	}
	add_live(t, -(int64_t)bytes);
}

/* A block found still live when its pointer came back: its free went by unseen. */
static void stale_gone(void *ctx, const struct live_entry *e)
{
	tracker_stat(HEAP_RSTAT_STALE, 1);
	count_free(ctx, e);
}

/* The site of the allocation made from `from`: its cache slot. NULL: dropped. */
static unsigned int site_of(struct thread *t, const struct unwind_from *from)
{
	struct unwind_stack st;
	struct unwind_from nf;
	struct heap_region_site *s;
	uint64_t key;
	unsigned int c;

	if (unlikely(t->ready != 1))
		thread_init(t);
	if (t->new_from.ret) {
		/* malloc inside operator new: the stack of new's caller */
		nf = t->new_from;
		from = &nf;
		t->new_from.ret = 0;
	}
	unwind__stack(from, t->lo, t->hi, &st);
	key = unwind__hash(&st);
	c = key & (CACHE - 1);
	if (likely(t->cache[c].key == key))
		return c;
	s = sites__get(key, &st, HEAP_SITE_MALLOC);
	if (!s)
		return CACHE;
	t->cache[c].key = key;
	t->cache[c].site = s;
	t->cache[c].count = counter_of(t, sites__index(s));
	return c;
}

/* A new block p of size bytes, allocated from `from`. */
static void count_alloc(struct thread *t, void *p, uint64_t size, const struct unwind_from *from)
{
	struct heap_region_count *cnt;
	struct live_entry e;
	uint64_t w = 1;
	unsigned int c;

	if (!p) {
		tracker_stat(HEAP_RSTAT_NULL_RETURNS, 1);
		return;
	}
	if (sample_every > 1 && size < HEAP_REGION_SAMPLE_ALWAYS) {
		if (next_rand(t) % sample_every) {
			t->new_from.ret = 0;
			return;
		}
		w = sample_every;
	}
	live__prefetch(t->young, (uintptr_t)p);
	c = site_of(t, from);
	if (c == CACHE)
		return;
	t->seq++;
	e.ptr = (uintptr_t)p;
	e.size = size;
	e.site = sites__index(t->cache[c].site);
	e.tick = t->seq ^ t->salt;
	if (live__add(t->young, &e, stale_gone, t) < 0) {
		tracker_stat(HEAP_RSTAT_DROP_LIVE, 1);
		return;
	}
	if (unlikely(history_on))
		history__event(e.ptr, size, e.site, HEAP_EVENT_ALLOC);
	cnt = t->cache[c].count;
	if (likely(cnt)) {
		cadd(&cnt->alloc_bytes, size * w);
		cadd(&cnt->alloc_count, w);
	} else {
		struct heap_region_site *s = t->cache[c].site;

		__atomic_fetch_add(&s->alloc_bytes, size * w, __ATOMIC_RELAXED);
		__atomic_fetch_add(&s->alloc_count, w, __ATOMIC_RELAXED);
	}
	add_live(t, (int64_t)(size * w));
}

/* p goes (free, or realloc's old block): counted against its site. */
static void release(struct thread *t, void *p)
{
	struct live_entry e;

	if (live__remove(t->young, (uintptr_t)p, &e)) {
		count_free(t, &e);
	} else if (sample_every == 1 && !unwind__quiet_take(p)) {
		/* (a block of libunwind's own is not unknown: preload/unwind.c) */
		tracker_stat(HEAP_RSTAT_UNKNOWN_FREES, 1);
		tracker_stat(HEAP_RSTAT_UNKNOWN_FREE_BYTES, malloc_usable_size(p));
	}
}

/* --- for preload/mmap.c ------------------------------------------------- */

bool tracker__enter(void)
{
	struct thread *t = &th;
	int m = __atomic_load_n(&mode, __ATOMIC_ACQUIRE);

	if (m == M_UNINIT) {
		tracker_init();
		m = __atomic_load_n(&mode, __ATOMIC_ACQUIRE);
	}
	/* busy: the tracker's own tables, or a signal handler inside it */
	if (m != M_ON || t->busy)
		return false;
	t->busy = 1;
	return true;
}

void tracker__leave(void)
{
	th.busy = 0;
}

struct heap_region_site *tracker__site(const struct unwind_from *from, unsigned int kind)
{
	struct thread *t = &th;
	struct unwind_stack st;
	uint64_t key;

	if (unlikely(t->ready != 1))
		thread_init(t);
	unwind__stack(from, t->lo, t->hi, &st);
	key = unwind__hash(&st) ^ ((uint64_t)kind * 0x9e3779b97f4a7c15ULL);
	return sites__get(key ? key : 1, &st, (uint8_t)kind);
}

void tracker__add_live(int64_t bytes)
{
	add_live(&th, bytes);
}

/* --- the interposed functions -------------------------------------------- */

/* An untracked block p: one libunwind allocated (inside the tracker) is
 * noted, so that its free does not count as unknown (preload/unwind.c). */
static inline void *quiet(const struct thread *t, void *p)
{
	if (unlikely(t->busy) && p && unwind__inside())
		unwind__quiet_add(p);
	return p;
}

/* An untracked free or realloc of p: a block libunwind allocated is forgotten. */
static inline void unquiet(const struct thread *t, void *p)
{
	if (unlikely(t->busy) && p && unwind__inside())
		unwind__quiet_take(p);
}

/*
 * An allocation of n bytes by fn (__libc_malloc, __libc_valloc...), made
 * for the caller of the interposed function whose frame is `frame`.
 */
static inline __attribute__((always_inline)) void *
sized(void *(*fn)(size_t), size_t n, const uintptr_t *frame)
{
	struct thread *t = &th;
	struct unwind_from from;
	void *p;

	if (!tracking(t))
		return quiet(t, fn(n));
	unwind__from_frame(&from, frame);
	t->busy = 1;
	p = fn(n);
	count_alloc(t, p, n, &from);
	t->busy = 0;
	return p;
}

EXPORT void *malloc(size_t n)
{
	return sized(__libc_malloc, n, __builtin_frame_address(0));
}

EXPORT void free(void *p)
{
	struct thread *t = &th;

	if (!p)
		return;
	if (!tracking(t)) {
		unquiet(t, p);
		__libc_free(p);
		return;
	}
	t->busy = 1;
	/* the two cache misses of a free of an old block, side by side: its
	 * entry in the shared table and glibc's chunk header */
	live__prefetch_shared((uintptr_t)p);
	__builtin_prefetch((const char *)p - 16, 1);
	/* out of the table first: once freed, another thread may get p back */
	release(t, p);
	__libc_free(p);
	t->busy = 0;
}

EXPORT void *calloc(size_t n, size_t size)
{
	struct thread *t = &th;
	struct unwind_from from;
	size_t bytes;
	void *p;

	if (!tracking(t))
		return quiet(t, __libc_calloc(n, size));
	CALLER(from);
	t->busy = 1;
	p = __libc_calloc(n, size);
	if (p || !__builtin_mul_overflow(n, size, &bytes))
		count_alloc(t, p, (uint64_t)n * size, &from);
	t->busy = 0;
	return p;
}

static void *do_realloc(struct thread *t, void *old, size_t n, const struct unwind_from *from)
{
	struct live_entry e;
	bool had = false;
	size_t old_usable = 0;
	void *p;

	t->busy = 1;
	if (old) {
		had = live__remove(t->young, (uintptr_t)old, &e);
		if (!had)
			old_usable = malloc_usable_size(old);
	}
	p = __libc_realloc(old, n);
	if (!p && (n || !old)) {
		/* failed: the old block stays */
		if (had && live__add(t->young, &e, stale_gone, t) < 0)
			tracker_stat(HEAP_RSTAT_DROP_LIVE, 1);
		tracker_stat(HEAP_RSTAT_NULL_RETURNS, 1);
	} else {
		/* moved or not, the old block goes and the new one comes (realloc(p, 0): freed) */
		if (had) {
			count_free(t, &e);
		} else if (old && sample_every == 1 && !unwind__quiet_take(old)) {
			tracker_stat(HEAP_RSTAT_UNKNOWN_FREES, 1);
			tracker_stat(HEAP_RSTAT_UNKNOWN_FREE_BYTES, old_usable);
		}
		if (p)
			count_alloc(t, p, n, from);
	}
	t->busy = 0;
	return p;
}

EXPORT void *realloc(void *old, size_t n)
{
	struct thread *t = &th;
	struct unwind_from from;

	if (!tracking(t)) {
		unquiet(t, old);
		return quiet(t, __libc_realloc(old, n));
	}
	CALLER(from);
	return do_realloc(t, old, n, &from);
}

EXPORT void *reallocarray(void *old, size_t n, size_t size)
{
	struct thread *t = &th;
	struct unwind_from from;
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	if (!tracking(t)) {
		unquiet(t, old);
		return quiet(t, __libc_realloc(old, bytes));
	}
	CALLER(from);
	return do_realloc(t, old, bytes, &from);
}

static void *aligned(size_t align, size_t n, const struct unwind_from *from)
{
	struct thread *t = &th;
	void *p;

	if (!tracking(t))
		return quiet(t, __libc_memalign(align, n));
	t->busy = 1;
	p = __libc_memalign(align, n);
	count_alloc(t, p, n, from);
	t->busy = 0;
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

EXPORT void *valloc(size_t n)
{
	return sized(__libc_valloc, n, __builtin_frame_address(0));
}

EXPORT void *pvalloc(size_t n)
{
	return sized(__libc_pvalloc, n, __builtin_frame_address(0));
}

/*
 * C++ operator new: Debian's libstdc++ keeps no frame pointers, so at the
 * malloc inside new the line that called new is not in the chain. Each
 * variant notes its caller for the malloc (or aligned_alloc) it makes, and
 * forwards to the real one (found once with dlsym; it throws as it would).
 * operator new[] calling operator new keeps the outer caller.
 */
#define NEW_WRAPPER(name, params, args)					\
	EXPORT void *name params					\
	{								\
		static void *(*real) params;				\
		void *(*fn) params = __atomic_load_n(&real, __ATOMIC_ACQUIRE); \
		struct thread *t = &th;					\
		bool mark;						\
		void *p;						\
									\
		if (!fn) {						\
			fn = (void *(*) params)dlsym(RTLD_NEXT, #name);	\
			if (!fn)					\
				abort();				\
			__atomic_store_n(&real, fn, __ATOMIC_RELEASE);	\
		}							\
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
