/*
 * librsprof-heap.so: rsprof's in-process heap tracker, handed to
 * the programs rsprof launches through LD_PRELOAD. This file: its start,
 * its threads, fork and exec.
 *
 * The malloc family is interposed (preload/malloc.c) and forwarded to
 * glibc's own implementation, each block with a header that names its
 * site (preload/block.h). For each allocation the caller's frame pointers
 * are walked (preload/unwind.c), the stack's record found in the shared
 * region (preload/sites.c) and its counters added to (preload/count.c).
 * No syscall, no lock shared by all threads, nothing sent per call: rsprof
 * reads the counters at each checkpoint (util/heap/preload.c).
 *
 * Which process is tracked: the one whose region file rsprof made
 * (preload/heap-region.h) and, when rsprof records the process tree (its
 * tree file is there), every process that loads the library with the
 * directory in its environment: each makes its own region.
 * fork(): the child never writes into its parent's counters. With the
 * tree it starts an account of its own (a new epoch in its blocks'
 * headers): at its first allocation it makes its region (lazily, so a
 * child that only execs costs nothing; nothing is allocated and no lock is
 * taken in the fork handler: the live table is dropped with munmap and its
 * locks reset). Blocks it inherited are not in its account: their frees
 * are its unknown frees, as for memory allocated before the tracker
 * started. Without the tree the child stops tracking (its frees still take
 * the headers off) and takes the library out of its environment.
 * exec(): the new image makes the next generation's region (a program of
 * the tree exec'd by a child: a region of its own). preload/exec.c puts
 * the library back into an environment that lost it (env -i).
 *
 * Re-entry: a thread inside the tracker is marked busy (initial-exec TLS);
 * calls it makes meanwhile (a signal handler that allocates, glibc
 * allocating inside pthread_setspecific, libunwind) are not counted; a
 * counted block freed meanwhile is taken off its site with atomic adds.
 *
 * What the tracker calls from inside the program's allocation: only code
 * that cannot wait on a lock the program may hold at that moment. The
 * thread's stack bounds come from the kernel (preload/stack.c), not from
 * pthread_getattr_np(), which holds the thread's own lock while it
 * allocates; files are opened with syscall() (no cancellation point);
 * modules loaded after the start are found with _dl_find_object(), which
 * takes no lock (preload/unwind.c). The calls into code the tracker does
 * not own that remain (pthread_setspecific, dl_iterate_phdr where glibc
 * has no _dl_find_object, libunwind) are marked in the region while they
 * run (callout__begin()), so that rsprof reports a thread stuck in one.
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

#include "preload/ld-preload.h"
#include "preload/sys.h"
#include "preload/tracker.h"

extern char **environ;

TRACKER_HOT int tracker_mode = M_UNINIT;
unsigned long tracker_early;
TRACKER_HOT struct heap_region *tracker_region;
TRACKER_HOT uint32_t sample_every = 1;
TRACKER_HOT uint64_t sample_bytes;
TRACKER_HOT uint16_t tracker_epoch;
TRACKER_HOT uint32_t tracker_gen;
static bool tree;			/* rsprof records every process of the tree */
static bool forked;			/* a fork child that has made no region yet */
bool tracker_started;			/* this image registered its handlers */
static bool hooks_done;			/* this image's entry points are rewritten */

static pthread_key_t thread_key;
static struct heap_region *last;	/* the range of the last attach's region */
static size_t last_size;

__thread struct thread th __attribute__((tls_model("initial-exec")));

/* --- start, fork, environment ------------------------------------------- */

static struct heap_region_block *block_at(uint64_t i)
{
	struct heap_region *r = tracker_region;

	return (struct heap_region_block *)((char *)r + r->off_blocks + i * r->block_size);
}

/*
 * A block of counters for the thread whose memory is m: one freed by a
 * thread that exited, else a new one; none left: the thread counts into
 * the records.
 */
static void block_take(struct thread_mem *m, uint32_t tid)
{
	struct heap_region *r = tracker_region;
	uint64_t n = __atomic_load_n(&r->n_blocks, __ATOMIC_ACQUIRE), i;
	struct heap_region_block *b = NULL;

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
			tracker_stat(HEAP_RSTAT_NO_BLOCK, 1);
			return;
		}
		b = block_at(i);
		__atomic_store_n(&b->state, HEAP_BLOCK_OWNED, __ATOMIC_RELEASE);
	}
	b->tid = tid;
	m->block = b;
}

/* The thread's memory for the region now: its cache, then its index (both
 * zero). NULL: no memory. */
static struct thread_mem *mem_new(void)
{
	size_t head = (sizeof(struct thread_mem) + 63) & ~(size_t)63;
	size_t size = head + 2 * (size_t)tracker_region->count_cap * sizeof(struct tindex);
	struct thread_mem *m;

	size = (size + 4095) & ~(size_t)4095;
	m = sys_mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	m->size = size;
	m->gen = tracker_gen;
	m->index = (struct tindex *)((char *)m + head);
	return m;
}

/* The thread's memory goes (its block given back first, when it has one). */
static void mem_drop(struct thread *t)
{
	struct thread_mem *m = t->mem;

	if (!m)
		return;
	t->mem = NULL;
	sys_munmap(m, m->size);
}

/* A thread exits (pthread key destructor): its block goes to the next thread. */
static void thread_exit(void *p)
{
	struct thread *t = p;
	struct thread_mem *m = t->mem;

	if (t != &th || !tracker_region)
		return;
	t->busy = 1;
	t->ready = T_EXITING;	/* what it still allocates counts into the records */
	if (m && m->gen == tracker_gen) {
		count__thread_exit(t, m);
		if (m->block)
			__atomic_store_n(&m->block->state, HEAP_BLOCK_FREE, __ATOMIC_RELEASE);
	}
	mem_drop(t);
	t->busy = 0;
}

int callout__begin(enum heap_callout what)
{
	struct heap_region *r = tracker_region;
	uint32_t tid = th.tid;

	if (!r || !tid)
		return -1;
	for (int i = 0; i < HEAP_REGION_CALLOUTS; i++) {
		struct heap_region_callout *c = &r->callouts[i];
		uint32_t free_ = 0;

		if (__atomic_load_n(&c->tid, __ATOMIC_RELAXED) ||
		    !__atomic_compare_exchange_n(&c->tid, &free_, tid, false, __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			continue;
		__atomic_store_n(&c->what, (uint32_t)what, __ATOMIC_RELAXED);
		__atomic_fetch_add(&c->seq, 1, __ATOMIC_RELEASE);
		return i;
	}
	return -1;
}

void callout__end(int slot)
{
	if (slot >= 0 && tracker_region)
		__atomic_store_n(&tracker_region->callouts[slot].tid, 0, __ATOMIC_RELEASE);
}

/*
 * The thread's first tracked call (and, while it was on another stack,
 * the next ones; and the first after the tracker started on a new region):
 * its memory, its stack bounds, its block of counters, its exit handler.
 * Nothing here calls into glibc but pthread_setspecific(), which takes no
 * lock (and allocates, untracked, only for keys past the first 32).
 */
void tracker__thread_init(struct thread *t)
{
	struct thread_mem *m = t->mem;
	uintptr_t lo = 0, hi = 0;
	enum stack_bounds sb;
	bool first = false;
	int slot;

	if (t->ready == T_EXITING || t->ready == T_NO_MEM)
		return;
	if (m && m->gen != tracker_gen) {
		/* made for an earlier region: its block and cache were that one's */
		mem_drop(t);
		m = NULL;
		t->ready = T_NEW;
	}
	if (t->ready == T_NEW) {
		t->tid = (uint32_t)sys_gettid();
		if (!t->rng)
			t->rng = ((uint64_t)(uintptr_t)t ^ 0x9e3779b97f4a7c15ULL) | 1;
		m = t->mem = mem_new();
		if (!m) {
			t->ready = T_NO_MEM;
			tracker_stat(HEAP_RSTAT_NO_BLOCK, 1);
			return;
		}
		first = true;
	}
	slot = callout__begin(HEAP_CALLOUT_STACK);
	sb = stack__bounds((uintptr_t)__builtin_frame_address(0), &lo, &hi);
	callout__end(slot);
	if (sb == STACK_OK) {
		m->lo = lo;
		m->hi = hi;
	} else {
		m->lo = m->hi = 0;	/* no walk past the caller */
	}
	if (first) {
		m->salt = (uint32_t)(uintptr_t)m * 2654435761u;
		tracker_stat(HEAP_RSTAT_THREADS, 1);
		block_take(m, t->tid);
		slot = callout__begin(HEAP_CALLOUT_THREAD_KEY);
		pthread_setspecific(thread_key, t);	/* thread_exit() when it ends */
		callout__end(slot);
	}
	t->ready = sb == STACK_OTHER ? T_NO_STACK : T_READY;
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
			if (!ld_preload__strip(v + 11, preload, sizeof(preload)))
				continue;
			v = preload;
		}
		e[w++] = v;
	}
	e[w] = NULL;
}

/*
 * The fork child: never again a write into the parent's region. With the
 * tree, its own account from its first allocation on (tracker__init()):
 * only syscalls and stores here, the forking thread is the only one.
 */
static void after_fork_child(void)
{
	struct heap_region *old = tracker_region;
	struct thread *t = &th;

	__atomic_store_n(&tracker_mode, M_OFF, __ATOMIC_RELEASE);
	tracker_region = NULL;
	if (tracker_injected) {
		/* its parent's region and pipe: not the child's (and no mid-call thread here) */
		inject__after_fork_child();
		if (old)
			munmap(old, old->size);
		last = NULL;
		return;
	}
	if (!tree || !old) {
		env_scrub();
		return;
	}
	mem_drop(t);
	munmap(old, old->size);
	live__reset();
	t->new_from.ret = 0;
	if (t->ready != T_EXITING)
		t->ready = T_NEW;	/* its memory and a block in the new region */
	forked = true;
	tracker_epoch++;	/* what it inherited is not in its account */
	__atomic_store_n(&tracker_mode, M_UNINIT, __ATOMIC_RELEASE);
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
		fd = sys_open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0) {
			if (errno == EEXIST)
				continue;
			return NULL;
		}
		if (ftruncate(fd, size)) {
			sys_close(fd);
			unlink(path);
			return NULL;
		}
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		sys_close(fd);
		if (p == MAP_FAILED) {
			unlink(path);
			return NULL;
		}
		r = p;
		memcpy(r, old, offsetof(struct heap_region, clock_ms));
		r->hist_recorder = old->hist_recorder;	/* the same parent */
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
	fd = sys_open(path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return false;
	ok = sys_pread(fd, t, sizeof(*t), 0) == (ssize_t)sizeof(*t);
	sys_close(fd);
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
	fd = sys_open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		*exists = errno == EEXIST;
		return NULL;
	}
	if (ftruncate(fd, (off_t)t->size)) {
		sys_close(fd);
		unlink(path);
		return NULL;
	}
	p = mmap(NULL, t->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	sys_close(fd);
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
	struct rlimit as;
	uint32_t offered = HEAP_REGION_OFFERED;
	size_t size = 0;
	bool exists = true;
	int fd;

	if (!dir || !*dir)
		return NULL;
	tree = tree_template(dir, &t);
	/*
	 * Under an address-space limit (a program of the tree started under
	 * `ulimit -v`) the region's mapping would count against the program's
	 * allowance: it could allocate less than alone. Not tracked; an empty
	 * file tells rsprof so (its summary counts these processes).
	 */
	if (!getrlimit(RLIMIT_AS, &as) && as.rlim_cur != RLIM_INFINITY) {
		if (tree) {
			snprintf(path, sizeof(path), "%s/" HEAP_REGION_LIMITED, dir, (int)getpid());
			fd = sys_open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
			if (fd >= 0)
				sys_close(fd);
		}
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/" HEAP_REGION_FILE, dir, (int)getpid());
	fd = sys_open(path, O_RDWR | O_CLOEXEC, 0);
	if (fd < 0 && tree) {
		r = region_make(dir, &t, &exists);
		if (r || !exists)
			return r;
		fd = sys_open(path, O_RDWR | O_CLOEXEC, 0);
	}
	if (fd < 0)
		return NULL;
	r = map_region(fd, &size);
	sys_close(fd);
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
void tracker__init(void)
{
	int expect = M_UNINIT;
	struct heap_region *r;

	next__init();	/* whatever happens next, calls go to the right allocator */
	if (!environ)
		return;
	if (!__atomic_compare_exchange_n(&tracker_mode, &expect, M_INIT, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return;
	th.busy = 1;
	r = region_claim();
	forked = false;
	if (!r) {
		env_scrub();
		exec__unfollow();
		__atomic_store_n(&tracker_mode, M_OFF, __ATOMIC_RELEASE);
		th.busy = 0;
		return;
	}
	sample_every = r->sample_every ? r->sample_every : 1;
	sample_bytes = r->sample_bytes;
	if (sample_bytes)
		sample_every = 1;
	r->stats[HEAP_RSTAT_EARLY] = tracker_early;
	tracker_early = 0;
	sites__init(r);
	history__init(r);
	tracker_region = r;
	__atomic_store_n(&tracker_gen, tracker_gen + 1, __ATOMIC_RELEASE);
	if (tree)
		exec__follow(getenv(HEAP_REGION_DIR_ENV));
	if (!tracker_started) {	/* a fork child keeps its parent's */
		tracker_started = true;
		unwind__init();
		pthread_atfork(NULL, after_fork_parent, after_fork_child);
		pthread_key_create(&thread_key, thread_exit);
	}
	r->stats[HEAP_RSTAT_CFI] = unwind__cfi();
	if (next_alloc.foreign)
		__atomic_fetch_or(&r->flags, HEAP_REGION_NO_HEADERS, __ATOMIC_RELAXED);
	hooks__init(!hooks_done);	/* a fork child keeps its parent's */
	hooks_done = true;
	__atomic_store_n(&tracker_mode, M_ON, __ATOMIC_RELEASE);
	th.busy = 0;
}

/*
 * Counting into the region rsprof made for this running process (the
 * memfd fd, closed here): the tracker loaded by rsprof (preload/inject.c).
 * A region of an earlier attach leaves its range reserved (preload/inject.c
 * put anonymous memory there): the new one takes its place when it can.
 */
int tracker__adopt(int fd)
{
	uint32_t offered = HEAP_REGION_OFFERED;
	struct heap_region *r;
	struct stat st;
	void *p;

	if (fstat(fd, &st) || st.st_size < (off_t)sizeof(struct heap_region)) {
		sys_close(fd);
		return -1;
	}
	p = sys_mmap(last && last_size == (size_t)st.st_size ? last : NULL, st.st_size,
		     PROT_READ | PROT_WRITE, MAP_SHARED | (last && last_size == (size_t)st.st_size ?
							   MAP_FIXED : 0), fd, 0);
	sys_close(fd);
	if (p == MAP_FAILED)
		return -1;
	r = p;
	if (!region_ok(r, st.st_size) ||
	    !__atomic_compare_exchange_n(&r->state, &offered, HEAP_REGION_CLAIMED, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		if (p != last)
			sys_munmap(p, st.st_size);
		return -1;
	}
	last = r;
	last_size = st.st_size;
	sample_every = r->sample_every ? r->sample_every : 1;
	sample_bytes = r->sample_bytes;
	if (sample_bytes)
		sample_every = 1;
	r->generation = tracker_gen + 1;	/* what preload/mmap.c kept is of another region */
	sites__init(r);
	history__init(r);
	live__forget();
	tracker_epoch++;	/* blocks of an earlier attach are not in this account */
	tracker_region = r;
	__atomic_store_n(&tracker_gen, tracker_gen + 1, __ATOMIC_RELEASE);
	if (!tracker_started) {
		tracker_started = true;
		unwind__init();
		pthread_atfork(NULL, after_fork_parent, after_fork_child);
		pthread_key_create(&thread_key, thread_exit);
	}
	r->stats[HEAP_RSTAT_CFI] = unwind__cfi();
	if (next_alloc.foreign)
		__atomic_fetch_or(&r->flags, HEAP_REGION_NO_HEADERS, __ATOMIC_RELAXED);
	return 0;
}

/* Preloaded (launch), not loaded by rsprof into a running process? */
static bool preloaded(void)
{
	const char *v = getenv("LD_PRELOAD");

	return v && strstr(v, HEAP_REGION_SO);
}

__attribute__((constructor)) static void tracker_ctor(void)
{
	if (__atomic_load_n(&tracker_mode, __ATOMIC_ACQUIRE) == M_UNINIT && preloaded())
		tracker__init();
}
