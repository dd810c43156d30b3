#!/bin/sh
# 8 threads allocating while threads start and exit (issue 8): 50 rounds of
# 8 short-lived threads, each freeing the blocks a thread of the previous
# round kept (cross-thread frees of exited threads' memory) and churning.
# In-process, each thread counts into a block of counters that the next
# thread takes over when it exits; every figure must still be exact.
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

SRC=$TEST_SRC/targets/heap_thread_churn.c
ROUNDS=50

churn_lines() {
	sql "$1" "SELECT s.line, SUM(h.alloc_bytes) - SUM(h.free_bytes), SUM(h.alloc_count),
			 SUM(h.free_count)
		  FROM heap_events h JOIN symbols s ON h.addr = s.addr
		  WHERE s.file LIKE '%heap_thread_churn.c' GROUP BY s.line ORDER BY s.line"
}

for B in $HEAP_BACKENDS; do
backend_ok $B || continue

test_expect_success "[$B] record -- heap_thread_churn $ROUNDS" '
	"$RSPROF" record -q --heap-backend $B -i 100ms -o churn-$B.db -- "$TARGETS/heap_thread_churn" $ROUNDS &&
	backend_meta churn-$B.db $B && test "$(meta churn-$B.db heap_dropped)" = 0 &&
	churn_lines churn-$B.db >lines-$B && cat lines-$B
'

test_expect_success "[$B] kept blocks: the last round live, every earlier one freed by the next" '
	grep -qx "$(line_of CHURN_KEEP "$SRC")|$((8 * 16 * 1024))|$((ROUNDS * 8 * 16))|$(((ROUNDS - 1) * 8 * 16))" lines-$B
'

test_expect_success "[$B] churn: every pair counted, nothing live" '
	grep -qx "$(line_of CHURN_PAIRS "$SRC")|0|$((ROUNDS * 8 * 2000))|$((ROUNDS * 8 * 2000))" lines-$B
'

test_expect_success "[$B] no unknown frees, no site below zero, live heap = sum of the sites" '
	n=$(meta churn-$B.db unknown_frees) && echo "unknown frees: $n" &&
	no_negative_site churn-$B.db &&
	sum=$(sql churn-$B.db "SELECT SUM(alloc_bytes) - SUM(free_bytes) FROM heap_events") &&
	last=$(sql churn-$B.db "SELECT heap_live_bytes FROM checkpoints ORDER BY id DESC LIMIT 1") &&
	echo "sum $sum, live $last" && test "$sum" = "$last"
'
done

test_done
