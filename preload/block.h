/*
 * The tracker's header before each block it hands out.
 *
 * A block the tracker allocates carries, in the 16 bytes just before the
 * pointer the program gets, what its free needs: the size asked for, the
 * site it was counted against, the allocating thread's tick (heaptrack's
 * "temporary") and the account it belongs to. A free reads those from the
 * line glibc's own free touches anyway (the chunk header sits right below
 * ours), where a table of live pointers costs a cache miss, often a TLB
 * miss, on every free of an old block (the whole difference on a large
 * heap: bench/heap.sh's "C live" row, Redis).
 *
 *   raw                    glibc's block (its chunk header just below)
 *   raw + off - 16         word 0: size (40 bits) | off / 16 (8) | epoch (16)
 *   raw + off - 8          word 1: BLOCK_MARK (8 bits) | tick (24) | site (32)
 *   raw + off              the program's pointer
 *
 * off is 16 for the malloc family, the alignment asked for by memalign &
 * co. up to BLOCK_ALIGN_MAX (raw is then aligned, and the header sits at
 * the end of the first aligned slot). Larger alignments and sizes of
 * BLOCK_SIZE_MAX or more get no header: their blocks are glibc's as they
 * come, kept in the live table (preload/live.c), like every block
 * allocated before the tracker started or while it stays out of the way.
 *
 * Whose block is it? Word 1 sits where glibc keeps a chunk's size field
 * for a block of its own. On x86-64 a chunk's size is a multiple of 16 and
 * its flags are bits 0-2 (PREV_INUSE, IS_MMAPPED, NON_MAIN_ARENA): bit 3 is
 * clear in every size field glibc writes, and set in BLOCK_MARK. So the
 * test is exact, not a guess: no block of glibc's can pass for one of ours
 * (and free() of a pointer that is neither is undefined for glibc too).
 *
 * site BLOCK_UNTRACKED: a block handed out while the tracker did not count
 * (sampled out, or a call made from inside the tracker: a signal handler,
 * libunwind): its free only takes the header off. epoch: the account of
 * the process that allocated it; a fork child of the tree counts from a
 * new one (its parent's blocks are not in its account).
 */
#ifndef RSPROF_PRELOAD_BLOCK_H
#define RSPROF_PRELOAD_BLOCK_H

#include <stdbool.h>
#include <stdint.h>

#define BLOCK_HDR		16
#define BLOCK_MARK		0x5aU	/* bit 3 set: never a glibc size field */
#define BLOCK_MARK_BIT		0x08U
#define BLOCK_ALIGN_MAX		64	/* alignments up to this: a header */
#define BLOCK_SIZE_BITS		40
#define BLOCK_SIZE_MAX		((1ULL << BLOCK_SIZE_BITS) - 1)
#define BLOCK_UNTRACKED		UINT32_MAX
#define BLOCK_TICK_MASK		0xffffffU

struct block_hdr {
	uint64_t w0, w1;
};

/* What a block's header says. */
struct block_info {
	uint64_t size;		/* as asked for */
	uint32_t site;		/* BLOCK_UNTRACKED: not counted */
	uint32_t tick;		/* 24 bits */
	uint16_t epoch;
	uint32_t off;		/* bytes from glibc's block to the program's */
};

static inline struct block_hdr *block_hdr(const void *p)
{
	return (struct block_hdr *)((uintptr_t)p - BLOCK_HDR);
}

/* Was p handed out with a header (by the tracker)? Reads p - 8 only. */
static inline bool block_ours(const void *p)
{
	return __atomic_load_n(&block_hdr(p)->w1, __ATOMIC_RELAXED) & BLOCK_MARK_BIT;
}

static inline void block_read(const void *p, struct block_info *b)
{
	const struct block_hdr *h = block_hdr(p);
	uint64_t w0 = h->w0, w1 = h->w1;

	b->size = w0 & BLOCK_SIZE_MAX;
	b->off = (uint32_t)((w0 >> BLOCK_SIZE_BITS) & 0xff) * 16;
	b->epoch = (uint16_t)(w0 >> 48);
	b->tick = (uint32_t)(w1 >> 8) & BLOCK_TICK_MASK;
	b->site = (uint32_t)(w1 >> 32);
}

/* The pointer glibc handed out for p's block. */
static inline void *block_raw(const void *p, const struct block_info *b)
{
	return (void *)((uintptr_t)p - b->off);
}

/* Write the header of the block at raw (off: 16, or its alignment); the
 * program's pointer. size < BLOCK_SIZE_MAX, off <= BLOCK_ALIGN_MAX. */
static inline void *block_make(void *raw, uint32_t off, uint64_t size, uint32_t site,
			       uint32_t tick, uint16_t epoch)
{
	void *p = (char *)raw + off;
	struct block_hdr *h = block_hdr(p);

	h->w0 = size | (uint64_t)(off / 16) << BLOCK_SIZE_BITS | (uint64_t)epoch << 48;
	h->w1 = BLOCK_MARK | (uint64_t)(tick & BLOCK_TICK_MASK) << 8 | (uint64_t)site << 32;
	return p;
}

#endif
