/*
 * preload/live.c, the in-process tracker's live-pointer table, against a
 * reference (util/hashmap): random inserts and removals of clustered
 * pointers (as malloc hands them out), tables grown from empty, deletion
 * by backward shift, stale entries replaced, sizes of a terabyte and more
 * (the blocks too large for a header) kept whole.
 */
#include "preload/live.c"

#include <stdio.h>
#include <stdlib.h>

#include "util/hashmap.h"
#include "tap.h"

struct heap_region *tracker_region;

static uint64_t rng = 88172645463325252ULL;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

int main(void)
{
	struct hashmap ref = { 0 };
	uint64_t base = 0x55d0c0000000ULL, live = 0, mismatches = 0, stale_ok = 1;
	struct live_entry e, got, stale;
	int put;

	/* 2 million operations over 400k addresses 16 bytes apart */
	for (int i = 0; i < 2000000; i++) {
		uint64_t ptr = base + (next() % 400000) * 16;
		uint64_t v;

		if (hashmap__get(&ref, ptr, &v)) {
			if (!live__take(ptr, &got) || got.ptr != ptr || got.size != v) {
				mismatches++;
				continue;
			}
			hashmap__remove(&ref, ptr);
			live--;
		} else {
			e = (struct live_entry){ .ptr = ptr, .size = (ptr >> 4) & 0xffffff, .site = i };
			put = live__put(&e, &stale);
			if (put != 0)
				mismatches++;
			hashmap__set(&ref, ptr, e.size);
			live++;
		}
	}
	is_int(mismatches, 0, "2M random puts and takes agree with the reference");
	is_int(hashmap__size(&ref), live, "the reference counts what is live");

	/* every live pointer can still be found, once */
	mismatches = 0;
	hashmap__for_each(&ref, i) {
		if (!live__take(ref.keys[i], &got) || got.size != ref.vals[i])
			mismatches++;
		else if (live__take(ref.keys[i], &got))
			mismatches++;
	}
	is_int(mismatches, 0, "every live pointer taken back exactly once");
	ok(!live__take(base, &got) && !live__take(base + 16 * 399999, &got), "then the table is empty");

	/* a pointer put twice: the first entry comes back as stale */
	e = (struct live_entry){ .ptr = base, .size = 10, .site = 1 };
	live__put(&e, &stale);
	e.size = 20;
	e.site = 2;
	put = live__put(&e, &stale);
	stale_ok = put == 1 && stale.size == 10 && stale.site == 1;
	ok(stale_ok, "a pointer handed out again while live: the old entry is returned as stale");
	ok(live__take(base, &got) && got.size == 20 && !live__take(base, &got),
	   "and the new one replaced it");
	e = (struct live_entry){ .ptr = base, .size = (5ULL << 40) + 3, .site = 7 };
	ok(live__put(&e, &stale) == 0 && live__take(base, &got) && got.size == e.size &&
	   got.site == 7, "a size of 5 TiB comes back whole");
	hashmap__free(&ref);
	return done_testing();
}
