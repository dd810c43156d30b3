/*
 * Call stacks and their counters in the shared region: an index from the
 * stack's hash to a record, records handed out in order, frames in a store
 * handed out in order. Lock-free: a new stack claims an index slot with a
 * compare-and-swap on its key, takes the next record and frame slots with
 * fetch-and-add, fills them, then publishes the record (its key) and the
 * slot (its site). A thread that finds the slot claimed but not yet
 * published waits those few instructions.
 */
#include <sched.h>

#include "preload/tracker.h"

#define SITE_NONE	UINT32_MAX	/* slot claimed, table full: dropped */

static struct heap_region_slot *idx;
static struct heap_region_site *recs;
static uint64_t *frames;
static uint64_t idx_mask;

void sites__init(struct heap_region *r)
{
	idx = (struct heap_region_slot *)((char *)r + r->off_index);
	recs = (struct heap_region_site *)((char *)r + r->off_sites);
	frames = (uint64_t *)((char *)r + r->off_frames);
	idx_mask = r->index_cap - 1;
}

struct heap_region_site *sites__at(uint32_t i)
{
	return &recs[i];
}

uint32_t sites__index(const struct heap_region_site *s)
{
	return (uint32_t)(s - recs);
}

/* Fill record n for stack s and publish it; SITE_NONE when full. */
static uint32_t make(uint64_t key, const struct unwind_stack *s, uint8_t kind)
{
	struct heap_region *r = tracker_region;
	uint64_t n = __atomic_fetch_add(&r->n_sites, 1, __ATOMIC_RELAXED);
	uint64_t need = (uint64_t)s->depth + (uint64_t)s->n_cand, f;
	struct heap_region_site *rec;

	if (n >= r->site_cap) {
		tracker_stat(HEAP_RSTAT_DROP_SITE, 1);
		return SITE_NONE;
	}
	rec = &recs[n];
	f = __atomic_fetch_add(&r->n_frames, need, __ATOMIC_RELAXED);
	if (f + need > r->frame_cap) {
		tracker_stat(HEAP_RSTAT_DROP_FRAMES, 1);
		rec->depth = 0;
		rec->n_cand = 0;
	} else {
		for (int i = 0; i < s->depth; i++)
			frames[f + i] = s->ips[i];
		for (int i = 0; i < s->n_cand; i++)
			frames[f + s->depth + i] = s->cand[i];
		rec->frames = (uint32_t)f;
		rec->depth = (uint8_t)s->depth;
		rec->n_cand = (uint8_t)s->n_cand;
	}
	rec->kind = kind;
	__atomic_store_n(&rec->key, key, __ATOMIC_RELEASE);
	return (uint32_t)n;
}

struct heap_region_site *sites__get(uint64_t key, const struct unwind_stack *s, uint8_t kind)
{
	uint64_t i = (key ^ (key >> 32)) & idx_mask;

	for (uint64_t probes = 0; probes <= idx_mask; probes++, i = (i + 1) & idx_mask) {
		struct heap_region_slot *sl = &idx[i];
		uint64_t k = __atomic_load_n(&sl->key, __ATOMIC_ACQUIRE);
		uint32_t site;

		if (!k) {
			uint64_t zero = 0;

			if (!__atomic_compare_exchange_n(&sl->key, &zero, key, false,
							 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
				k = zero;	/* taken meanwhile: look at it */
			} else {
				site = make(key, s, kind);
				__atomic_store_n(&sl->site_plus1, site == SITE_NONE ? SITE_NONE :
						 site + 1, __ATOMIC_RELEASE);
				return site == SITE_NONE ? NULL : &recs[site];
			}
		}
		if (k != key)
			continue;
		for (int spin = 0; !(site = __atomic_load_n(&sl->site_plus1, __ATOMIC_ACQUIRE));
		     spin++)
			if (spin > 100)
				sched_yield();	/* its maker was preempted */
		return site == SITE_NONE ? NULL : &recs[site - 1];
	}
	tracker_stat(HEAP_RSTAT_DROP_SITE, 1);
	return NULL;
}
