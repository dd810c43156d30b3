#!/bin/sh
# Several threads allocating at once (issue 3, test 4): the per-stack
# counters and the live total agree, SUM(alloc_bytes) - SUM(free_bytes)
# is the live heap of the last checkpoint, and each thread's share is there.
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

SRC=$TEST_SRC/targets/heap_threads.c
L_KEEP=$(line_of HEAP_KEEP "$SRC")
L_CHURN=$(line_of HEAP_CHURN "$SRC")

for B in $HEAP_BACKENDS; do
backend_ok $B || continue

test_expect_success "[$B] record -- heap_threads, 4 threads" '
	"$RSPROF" record --heap-backend $B -q -o thr-$B.db -- "$TARGETS/heap_threads" 4 100000 300 &&
	backend_meta thr-$B.db $B &&
	test "$(meta thr-$B.db heap_dropped)" = 0 &&
	heap_lines thr-$B.db >lines && cat lines
'

test_expect_success "[$B] totals add up: sum of the sites = reported live heap" '
	sum=$(sql thr-$B.db "SELECT SUM(alloc_bytes) - SUM(free_bytes) FROM heap_events") &&
	last=$(sql thr-$B.db "SELECT heap_live_bytes FROM checkpoints ORDER BY id DESC LIMIT 1") &&
	echo "sum $sum, live $last" && test "$sum" = "$last" &&
	sums=$(sql thr-$B.db "SELECT SUM(heap_alloc_bytes) - SUM(heap_free_bytes) FROM checkpoints") &&
	echo "checkpoint columns: $sums" && { test "$sums" = "$sum" || test "$sums" = 0; }
'

test_expect_success "[$B] every thread's 1 MiB is on the keep line" '
	grep "heap_threads.c|$L_KEEP|worker|4194304|4096|0" lines
'

test_expect_success "[$B] every thread's churn is counted, nothing of it live" '
	grep "heap_threads.c|$L_CHURN|worker|0|400000|400000" lines
'

# glibc frees a thread's tcache and other per-thread blocks at its exit;
# it allocated them internally, not through malloc: a few unknown frees.
test_expect_success "[$B] no site below zero, few unknown frees" '
	no_negative_site thr-$B.db && n=$(meta thr-$B.db unknown_frees) && echo "$n unknown frees" &&
	test "$n" -lt 100
'
done

test_done
