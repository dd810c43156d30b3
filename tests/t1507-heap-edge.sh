#!/bin/sh
# The allocator's corner cases (issue 3, "Correctness"): realloc(NULL, n)
# counts once, realloc in place and moved, realloc(p, 0) frees, failed
# allocations (NULL) count nothing and a failed realloc keeps the old
# block, posix_memalign, aligned_alloc, calloc, free(NULL).
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

SRC=$TEST_SRC/targets/heap_edge.c

for B in $HEAP_BACKENDS; do
backend_ok $B || continue

test_expect_success "[$B] record -- heap_edge" '
	"$RSPROF" record --heap-backend $B -q --no-cpu -o edge-$B.db -- "$TARGETS/heap_edge" 100 &&
	backend_meta edge-$B.db $B &&
	source_lines edge-$B.db "$SRC" >got &&
	cat got
'

test_expect_success "[$B] realloc(NULL, n) is one allocation, not two" '
	want_line got EDGE_REALLOC_NULL 3000 1 0
'

test_expect_success "[$B] realloc shrinking and growing: old block freed, new one counted" '
	want_line got EDGE_SHRINK_FROM 0 1 1 && want_line got EDGE_SHRINK 50000 1 0 &&
	want_line got EDGE_GROW_FROM 0 1 1 && want_line got EDGE_GROW_MOVE 300000 1 0
'

test_expect_success "[$B] posix_memalign, aligned_alloc, calloc" '
	want_line got EDGE_MEMALIGN 4096 1 0 && want_line got EDGE_ALIGNED 8192 1 0 &&
	want_line got EDGE_CALLOC 6000 1 0
'

test_expect_success "[$B] realloc(p, 0) and free free" '
	want_line got EDGE_REALLOC_ZERO_FROM 0 1 1 && no_line got EDGE_REALLOC_ZERO &&
	want_line got EDGE_FREED 0 1 1
'

test_expect_success "[$B] failed allocations count nothing; a failed realloc keeps the old block" '
	no_line got EDGE_FAIL_MALLOC && no_line got EDGE_FAIL_CALLOC &&
	no_line got EDGE_FAIL_REALLOC &&
	want_line got EDGE_KEEP_OLD 1000 1 0
'

test_expect_success "[$B] nothing unknown, nothing below zero" '
	test "$(meta edge-$B.db unknown_frees)" = 0 && no_negative_site edge-$B.db
'

done

# Kernels before 6.13 have no session uprobes: the same with the
# uprobe + uretprobe pairs rsprof falls back to, as with each backend.
edge_rows() {
	sql "$1" "SELECT s.line, SUM(h.alloc_bytes) - SUM(h.free_bytes), SUM(h.alloc_count),
		  SUM(h.free_count) FROM heap_events h JOIN symbols s ON h.addr = s.addr
		  WHERE s.file LIKE '%heap_edge.c' GROUP BY s.line ORDER BY s.line"
}
if backend_ok uprobe; then
	test_expect_success 'the same through the uprobe + uretprobe fallback' '
		RSPROF_HEAP_CLASSIC=1 "$RSPROF" record --heap-backend uprobe -q --no-cpu -o classic.db -- "$TARGETS/heap_edge" 100 &&
		edge_rows classic.db >classic &&
		for b in $HEAP_BACKENDS; do
			edge_rows edge-$b.db >$b && diff classic $b || exit 1
		done
	'
fi

test_done
