/*
 * Structures shared by bpf/heap.bpf.c and util/heap/heap.c (fixed-width types
 * only: vmlinux.h on one side, <linux/types.h> on the other).
 */
#ifndef RSPROF_BPF_HEAP_H
#define RSPROF_BPF_HEAP_H

/* Frames kept per allocation stack: enough to step out of the Rust
 * allocator plumbing (finish_grow, grow_amortized, grow_one, reserve...)
 * and to store a useful stack for pprof. */
#define HEAP_MAX_DEPTH 24

/* What an allocator entry point is; the probe's bpf_cookie. */
enum heap_kind {
	HEAP_KIND_MALLOC = 1,		/* malloc(size), __rust_alloc(size, align) */
	HEAP_KIND_CALLOC,		/* calloc(n, size) */
	HEAP_KIND_REALLOC,		/* realloc(ptr, size) */
	HEAP_KIND_ALIGNED,		/* aligned_alloc(align, size), memalign(align, size) */
	HEAP_KIND_POSIX_MEMALIGN,	/* posix_memalign(&ptr, align, size) */
	HEAP_KIND_RUST_REALLOC,		/* __rust_realloc(ptr, old_size, align, new_size) */
	HEAP_KIND_FREE,			/* free(ptr) */
	HEAP_KIND_RUST_DEALLOC,		/* __rust_dealloc(ptr, size, align) */
};

/* Per-CPU counters (index into the `stats` array map). */
enum heap_stat {
	HEAP_STAT_UNKNOWN_FREES,	/* free of a pointer not in the live map */
	HEAP_STAT_UNKNOWN_FREE_BYTES,
	HEAP_STAT_DROP_LIVE,		/* live map full: allocation not tracked */
	HEAP_STAT_DROP_STACK,		/* stack map full or stack capture failed */
	HEAP_STAT_DROP_SITE,		/* site map full */
	HEAP_STAT_DROP_ENTRY,		/* per-thread entry map full */
	HEAP_STAT_NULL_RETURNS,		/* failed allocations (count nothing else) */
	HEAP_STAT_NESTED,		/* allocator entered from inside the allocator */
	HEAP_STAT_MAX,
};

/* Entry data of an allocator call, keyed by thread id, read at return. */
struct heap_entry {
	__u64 size;
	__u64 old_ptr;		/* realloc */
	__u64 old_size;		/* __rust_realloc: size of the old block */
	__u64 memptr;		/* posix_memalign: where the pointer is stored */
	__u64 stack;		/* stack key; 0 when the call is not tracked (sampling) */
	__u32 kind;
	__u32 depth;		/* nested allocator calls seen since this entry */
	__u32 weight;		/* allocations this one stands for (sampling) */
	__u32 pad;
};

/* One live allocation, keyed by pointer. */
struct heap_live {
	__u64 size;
	__u64 stack;
	__u64 weight;		/* 1, or N when sampled one in N */
};

/* With --heap-sample N, allocations this large are always tracked: a few
 * big blocks would otherwise be all or nothing, N times over. */
#define HEAP_SAMPLE_ALWAYS (64 * 1024)

/* Running totals of one stack; user space takes deltas per checkpoint. */
struct heap_site {
	__u64 alloc_bytes;
	__u64 alloc_count;
	__u64 free_bytes;
	__u64 free_count;
	/* freed by the allocating thread before its next allocation or free (heaptrack's
	 * "temporary"): counted by the in-process tracker only, 0 here */
	__u64 temp_count;
};

/* Chains shorter than this get the stack scanned (bpf/heap.bpf.c). */
#define HEAP_SCAN_MIN_CHAIN 4
#define HEAP_MAX_CAND 16

/* The captured frames, innermost first: ips[0] is the return address into
 * the allocator's caller, the rest the frame-pointer chain; 0 ends it.
 * cand: for a short chain, the words of the stack above the allocator
 * that point into the executable's text, nearest first (0: none); user
 * space keeps those that follow a call instruction. */
struct heap_stack {
	__u64 ips[HEAP_MAX_DEPTH];
	__u64 cand[HEAP_MAX_CAND];
};

#endif
