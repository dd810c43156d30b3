/*
 * The shared-memory region of the in-process heap tracker: written by the
 * tracker preloaded into the target (preload/tracker.c), read by rsprof
 * at each checkpoint (util/heap/preload.c). Both include this header; it
 * uses fixed-width types only, like bpf/heap.h.
 *
 * One region per process image, a file in rsprof's private directory
 * (HEAP_REGION_DIR_ENV): rsprof creates "heap.PID" for the process it
 * launches before letting it exec (state HEAP_REGION_OFFERED); the tracker
 * of that process claims it. An image that finds its PID's file claimed
 * already (the process called exec) makes "heap.PID.GEN" with the next
 * generation: addresses of one image mean nothing in the next.
 *
 * Process trees: when rsprof follows the children (record
 * without --no-inherit) it also writes HEAP_REGION_TREE, a header that
 * gives the geometry. Any other process that loads the tracker with the
 * directory in its environment (a fork child at its first allocation, a
 * program a child exec'd) then makes "heap.PID" itself from it, already
 * claimed; rsprof finds the new files at each checkpoint. Without that
 * file a process with no region of its own is not recorded and the
 * tracker stays out of its way (and out of its children's environment).
 *
 * Layout: this header, then the site index (index_cap slots), the site
 * records (site_cap), the frames (frame_cap u64), the thread blocks
 * (block_cap blocks of count_cap counters), and with record
 * --alloc-history the event rings (ring_count rings of ring_cap events,
 * below). The file is sparse: only what is used takes memory.
 *
 * A site's totals are its record's counters plus its counters in every
 * thread block: each thread counts into a block of its own with plain
 * stores (no atomic instruction on the hot path); the record's counters
 * take what a thread without a block (or with a full one) counts.
 */
#ifndef RSPROF_PRELOAD_HEAP_REGION_H
#define RSPROF_PRELOAD_HEAP_REGION_H

#include <stdint.h>

#define HEAP_REGION_MAGIC	0x7061656872707372ULL	/* "rsprheap" */
#define HEAP_REGION_VERSION	5	/* 2: ppid, flags, the tree file; the history rings;
					 * 3: the calls out (callouts); 4: sample_bytes;
					 * 5: the history waits for rsprof (hist_*) */

/* The environment variable that names the private directory. */
#define HEAP_REGION_DIR_ENV	"RSPROF_HEAP_DIR"
/* The tracker's file name in that directory (and in /proc/PID/maps). */
#define HEAP_REGION_SO		"librsprof-heap.so"
/* Region files: "heap.PID" (the launched image), "heap.PID.GEN" after an exec. */
#define HEAP_REGION_FILE	"heap.%d"
#define HEAP_REGION_FILE_GEN	"heap.%d.%u"
/* The tree's template: its presence means "every process of the tree". */
#define HEAP_REGION_TREE	"heap.tree"
/* An empty file: a process of the tree ran under an address-space limit
 * (RLIMIT_AS), which the region would count against: not tracked. */
#define HEAP_REGION_LIMITED	"limited.%d"

/* Frames kept per stack and stack words kept from the scan (as bpf/heap.h). */
#define HEAP_REGION_MAX_DEPTH	24
#define HEAP_REGION_MAX_CAND	16
/* A frame-pointer chain shorter than this gets the stack scanned. */
#define HEAP_REGION_SCAN_MIN	4
#define HEAP_REGION_SCAN_WORDS	128	/* 1 KiB above the call */

/* With sampling, allocations this large are always tracked (bpf/heap.h). */
#define HEAP_REGION_SAMPLE_ALWAYS (64 * 1024)
/* A thread adds its live bytes to live_bytes/peak_bytes in steps this large. */
#define HEAP_REGION_FLUSH	(64 * 1024)

enum heap_region_state {
	HEAP_REGION_OFFERED = 1,	/* made by rsprof, no tracker yet */
	HEAP_REGION_CLAIMED = 2,	/* a tracker writes into it */
};

/* Counters of the region (stats[]). */
enum heap_region_stat {
	HEAP_RSTAT_UNKNOWN_FREES,	/* free of a pointer never seen allocated */
	HEAP_RSTAT_UNKNOWN_FREE_BYTES,	/* their usable size */
	HEAP_RSTAT_DROP_SITE,		/* site table full: allocation not counted */
	HEAP_RSTAT_DROP_FRAMES,		/* frame store full: a site without its stack */
	HEAP_RSTAT_DROP_LIVE,		/* no memory for the pointer table: not counted */
	HEAP_RSTAT_NULL_RETURNS,	/* failed allocations (count nothing else) */
	HEAP_RSTAT_REENTERED,		/* calls while the thread was inside the tracker
					 * (a signal handler): passed through, untracked */
	HEAP_RSTAT_STALE,		/* a pointer handed out again while still live:
					 * its free went by unseen; counted freed then */
	HEAP_RSTAT_THREADS,		/* threads that allocated */
	HEAP_RSTAT_FORKS,		/* fork()s (tracked as their own processes with
					 * the tree, else not at all) */
	HEAP_RSTAT_NO_BLOCK,		/* threads that found no free thread block */
	HEAP_RSTAT_EARLY,		/* calls before the tracker could start (ld.so's,
					 * before libc set the environment up): untracked */
	HEAP_RSTAT_HISTORY_NO_RING,	/* history events of threads that found no free
					 * ring: dropped */
	HEAP_RSTAT_CFI,			/* 1: libunwind loaded, code without frame
					 * pointers unwound through its CFI; 0: not */
	HEAP_RSTAT_HOOKED,		/* allocator entry points rewritten to the
					 * tracker (preload/hooks.c) */
	HEAP_RSTAT_HOOK_REFUSED,	/* entry points found that could not be: their
					 * allocations are not seen */
	HEAP_RSTAT_MAX = 16,
};

/*
 * What a thread inside the tracker is calling out to, from inside the
 * program's allocation (heap_region.callouts): code the tracker does not
 * own, which may wait on a lock. rsprof reports a slot that stays taken
 * with the same seq for seconds: the tracker is stuck there.
 */
enum heap_callout {
	HEAP_CALLOUT_NONE,
	HEAP_CALLOUT_THREAD_KEY,	/* pthread_setspecific() (may allocate) */
	HEAP_CALLOUT_MODULES,		/* dl_iterate_phdr() (the loader's lock) */
	HEAP_CALLOUT_LIBUNWIND,		/* libunwind's unw_backtrace() */
	HEAP_CALLOUT_STACK,		/* the thread's stack mapping (/proc/self/maps) */
	HEAP_CALLOUT_MAX,
};

#define HEAP_REGION_CALLOUTS	16

struct heap_region_callout {
	uint32_t tid;			/* 0: free */
	uint32_t what;			/* enum heap_callout */
	uint64_t seq;			/* calls made through this slot */
};

struct heap_region {
	uint64_t magic;
	uint32_t version;
	uint32_t header_size;		/* sizeof(struct heap_region) */
	uint64_t size;			/* bytes of the whole file */
	uint32_t pid;
	uint32_t generation;		/* 0: the launched image; n: after n execs */
	uint32_t state;			/* enum heap_region_state */
	uint32_t sample_every;		/* track one small allocation in N; 1: all */
	uint32_t site_cap;
	uint32_t index_cap;		/* a power of two, >= 2 * site_cap */
	uint64_t frame_cap;
	uint32_t block_cap;		/* thread blocks */
	uint32_t count_cap;		/* counters per thread block */
	uint64_t off_index, off_sites, off_frames, off_blocks;
	uint64_t block_size;		/* bytes of one thread block */
	/* the allocation history (record --alloc-history); ring_count 0: off */
	uint64_t off_rings;
	uint64_t ring_size;		/* bytes of one ring, header included */
	uint32_t ring_cap;		/* events per ring, a power of two */
	uint32_t ring_count;
	uint64_t n_rings;		/* rings handed out (written by the tracker) */

	/* written by rsprof */
	uint64_t clock_ms;		/* ms since the start, at the last checkpoint */

	/* written by the tracker */
	uint64_t n_sites;		/* records handed out (a record is complete once
					 * its key is set) */
	uint64_t n_frames;		/* frame slots handed out */
	uint64_t n_blocks;		/* thread blocks handed out */
	int64_t live_bytes;		/* live bytes, added in steps (HEAP_REGION_FLUSH) */
	int64_t peak_bytes;		/* highest live_bytes seen */
	uint64_t stats[HEAP_RSTAT_MAX];
	uint32_t ppid;			/* the parent when the region was made */
	uint32_t flags;			/* enum heap_region_flags */
	uint64_t sample_bytes;		/* byte sampling: mean bytes between two tracked
					 * allocations (0: off); sample_every is 1 then */
	/* the allocation history's back-pressure (struct heap_region_ring) */
	uint64_t hist_wait_ns;		/* the tracker's: ns its threads waited for rsprof */
	uint64_t hist_waits;		/* the tracker's: times a thread waited */
	uint64_t hist_beat_ns;		/* rsprof's: CLOCK_MONOTONIC of its last drain */
	uint32_t hist_recorder;		/* rsprof's pid, the launched process's parent
					 * (copied to the next generation); 0: unknown */
	uint32_t hist_state;		/* enum heap_hist_state, bits */
	struct heap_region_callout callouts[HEAP_REGION_CALLOUTS];
};

/* heap_region.hist_state */
enum heap_hist_state {
	HEAP_HIST_CLOSED = 1,		/* rsprof's: it drains no more (the recording
					 * ended): record nothing, never wait */
	HEAP_HIST_GAVE_UP = 2,		/* the tracker's: rsprof did not drain for
					 * HEAP_HIST_PATIENCE_MS (or is gone): the
					 * rest is dropped, counted, without waiting */
};

/* How long a thread waits for rsprof's drain to show a sign of life. */
#define HEAP_HIST_PATIENCE_MS	5000

enum heap_region_flags {
	HEAP_REGION_FORKED = 1,		/* made by a fork child before any exec: its
					 * code is its parent's */
	HEAP_REGION_NO_HEADERS = 2,	/* the tracker's: the allocator is another
					 * library's, its blocks carry no header */
};

/* What a site's allocations are (heap_region_site.kind, heap_events.kind). */
enum heap_region_kind {
	HEAP_SITE_MALLOC = 0,		/* the malloc family */
	HEAP_SITE_MMAP = 1,		/* anonymous mappings (preload/mmap.c) */
};

/*
 * The index: stack hash -> record, open addressing (linear probing). A
 * slot is claimed by setting its key; its site is set once the record is
 * complete (0: not yet).
 */
struct heap_region_slot {
	uint64_t key;
	uint32_t site_plus1;
	uint32_t pad;
};

/*
 * One call stack and its running totals (rsprof takes the deltas). The
 * counters are weighted by sampling already. A record is complete when
 * key != 0; rsprof reads free_* before alloc_* so that it never sees a
 * free without its allocation.
 */
struct heap_region_site {
	uint64_t key;			/* hash of the stack, never 0 */
	uint64_t alloc_bytes;
	uint64_t alloc_count;
	uint64_t free_bytes;
	uint64_t free_count;
	uint64_t temp_count;		/* freed by the allocating thread before its next
					 * allocation or free (heaptrack's "temporary") */
	int64_t peak_bytes;		/* reserved: the site's highest live bytes */
	uint32_t frames;		/* index of its first frame in the frame store */
	uint8_t depth;			/* return addresses, innermost first */
	uint8_t n_cand;			/* then stack-scan candidates (bpf/heap.h) */
	uint8_t kind;			/* enum heap_region_kind, set before the key */
	uint8_t flags;
};

/* A thread's counters of one site (a site may have several: they add up). */
struct heap_region_count {
	uint32_t site_plus1;		/* 0: not in use yet */
	uint32_t pad;
	uint64_t alloc_bytes;
	uint64_t alloc_count;
	uint64_t free_bytes;
	uint64_t free_count;
	uint64_t temp_count;
};

enum heap_region_block_state {
	HEAP_BLOCK_OWNED = 1,		/* a live thread counts into it */
	HEAP_BLOCK_FREE = 2,		/* its thread exited: the next thread may take it
					 * (its counters stay, new ones come after) */
};

/* One thread's counters: count_cap of them follow the header. */
struct heap_region_block {
	uint32_t state;			/* enum heap_region_block_state; 0: never used */
	uint32_t n_used;		/* counters handed out */
	uint32_t tid;			/* the thread that owns it (or owned it last) */
	uint32_t pad[13];
	struct heap_region_count counts[];
};

/*
 * The allocation history (record --alloc-history): every allocation and
 * free the tracker counts, with its time, into a ring of the thread's own
 * (single producer: plain stores, the head published with a release);
 * rsprof drains the rings every few milliseconds (util/heap/history.c).
 *
 * Back-pressure: a thread that finds its ring full waits until rsprof has
 * drained it (a futex wait on the low word of the ring's tail, `waiting`
 * set; rsprof wakes it after moving the tail), adding the time waited to
 * hist_wait_ns. It never waits for an rsprof that is gone or stuck: it
 * stops waiting for good (HEAP_HIST_GAVE_UP, the events from then on
 * dropped and counted) when rsprof's drain has not written hist_beat_ns
 * for HEAP_HIST_PATIENCE_MS, when the launched process's parent is no
 * longer hist_recorder, or when the pipe of an injected tracker hangs up;
 * after HEAP_HIST_CLOSED nothing is recorded. A thread that finds no ring
 * free counts HEAP_RSTAT_HISTORY_NO_RING.
 * A ring goes to the next thread when its thread exits, as the blocks do.
 */
enum heap_event_kind {
	HEAP_EVENT_ALLOC = 1,
	HEAP_EVENT_FREE = 2,
};

struct heap_region_event {
	uint64_t time_ns;		/* CLOCK_MONOTONIC */
	uint64_t ptr;
	uint64_t size;			/* as asked for */
	uint32_t site;			/* index of the site record */
	uint32_t kind;			/* enum heap_event_kind */
};

enum heap_ring_state {
	HEAP_RING_OWNED = 1,
	HEAP_RING_FREE = 2,
};

/* One ring: its header (the producer's and the consumer's words on cache
 * lines of their own), then ring_cap events. */
struct heap_region_ring {
	uint32_t state;			/* enum heap_ring_state; 0: never used */
	uint32_t tid;
	uint64_t pad0[7];
	uint64_t head;			/* events written (the producer's) */
	uint64_t dropped;		/* events lost: given up waiting (the producer's) */
	uint32_t waiting;		/* the producer waits for the tail to move */
	uint32_t pad1w;
	uint64_t pad1[5];
	uint64_t tail;			/* events read (rsprof's) */
	uint64_t pad2[7];
	struct heap_region_event ev[];
};

#endif
