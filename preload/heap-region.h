/*
 * The shared-memory region of the in-process heap tracker: written by the
 * tracker preloaded into the target (preload/tracker.c), read by rsprof
 * at each checkpoint (util/heap/preload.c). Both include this header; it
 * uses fixed-width types only, like bpf/heap.h.
 *
 * One region per process image, a file in rsprof's private directory
 * (HEAP_REGION_DIR_ENV): rsprof creates "heap.PID" for the process it
 * launches before letting it exec (state HEAP_REGION_OFFERED); the tracker
 * of that process claims it. A process that finds no file for its PID is
 * not recorded and the tracker stays out of its way. An image that finds
 * its PID's file claimed already (the recorded process called exec) makes
 * "heap.PID.GEN" with the next generation: addresses of one image mean
 * nothing in the next.
 *
 * Layout: this header, then the site index (index_cap slots), the site
 * records (site_cap), the frames (frame_cap u64), the thread blocks
 * (block_cap blocks of count_cap counters). The file is sparse: only what
 * is used takes memory.
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
#define HEAP_REGION_VERSION	1

/* The environment variable that names the private directory. */
#define HEAP_REGION_DIR_ENV	"RSPROF_HEAP_DIR"
/* The tracker's file name in that directory (and in /proc/PID/maps). */
#define HEAP_REGION_SO		"librsprof-heap.so"
/* Region files: "heap.PID" (the launched image), "heap.PID.GEN" after an exec. */
#define HEAP_REGION_FILE	"heap.%d"
#define HEAP_REGION_FILE_GEN	"heap.%d.%u"

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
	HEAP_RSTAT_FORKS,		/* fork()s: the children are not tracked */
	HEAP_RSTAT_NO_BLOCK,		/* threads that found no free thread block */
	HEAP_RSTAT_EARLY,		/* calls before the tracker could start (ld.so's,
					 * before libc set the environment up): untracked */
	HEAP_RSTAT_MAX = 16,
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
	uint64_t reserved_history[4];	/* an optional per-event stream, later */

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
	uint64_t reserved[6];
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
					 * allocation (heaptrack's "temporary") */
	int64_t peak_bytes;		/* reserved: the site's highest live bytes */
	uint32_t frames;		/* index of its first frame in the frame store */
	uint8_t depth;			/* return addresses, innermost first */
	uint8_t n_cand;			/* then stack-scan candidates (bpf/heap.h) */
	uint8_t kind;			/* reserved: 0 heap; anonymous mmap later */
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

#endif
