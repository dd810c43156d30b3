#!/bin/sh
# The in-process tracker's block header (issue 8, preload/block.h): blocks
# aligned by memalign & co. (a header at the alignment's offset, or none
# above 64 bytes: the live table), realloc of an aligned block (moved, its
# contents kept), a block written up to malloc_usable_size() and grown,
# realloc(p, 0), calloc on a recycled dirty block; and a SIGALRM handler
# that frees counted blocks while the thread may be inside the tracker:
# every one of those frees is counted (atomically, when the signal lands
# inside it), nothing stays live that the program freed. And the headers'
# share of the resident memory, in report and info (500,002 blocks live:
# 7.63 MiB).
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

SRC=$TEST_SRC/targets/heap_header.c

test_expect_success 'record -- heap_header: its own checks pass under the tracker' '
	"$RSPROF" record -q --no-cpu --heap-backend preload -o hh.db -- "$TARGETS/heap_header" &&
	source_lines hh.db "$SRC" >got &&
	cat got
'

test_expect_success 'aligned blocks, with a header and without, counted as asked' '
	want_line got HH_A32 1000 1 0 && want_line got HH_A64 2048 1 0 &&
	want_line got HH_A24 500 1 0 && want_line got HH_A256 3000 1 0
'

test_expect_success 'realloc of an aligned block, of a block used to its usable size' '
	want_line got HH_GROW_FROM 0 1 1 && want_line got HH_GROWN 5000 1 0 &&
	want_line got HH_USABLE_FROM 0 1 1 && want_line got HH_USABLE_GROWN 400 1 0
'

test_expect_success 'realloc(p, 0) frees, calloc counts once' '
	want_line got HH_ZERO_FROM 0 1 1 && want_line got HH_DIRTY 0 1 1 &&
	want_line got HH_CALLOC 8000 1 0
'

test_expect_success 'frees from a signal handler: each counted, none lost' '
	n=$(sql hh.db "SELECT SUM(h.alloc_count) FROM heap_events h JOIN symbols s
		       ON h.addr = s.addr WHERE s.line = $(line_of HH_LOOP "$SRC")") &&
	test "$n" = 2000000 && want_line got HH_LOOP 0 2000000 2000000 &&
	no_negative_site hh.db && test "$(meta hh.db unknown_frees)" = 0
'

test_expect_success 'the same with --heap-sample 10: nothing below zero, no unknown frees' '
	"$RSPROF" record -q --no-cpu --heap-backend preload --heap-sample 10 -o hh10.db -- \
		"$TARGETS/heap_header" &&
	no_negative_site hh10.db && test "$(meta hh10.db unknown_frees)" = 0
'

# the tracker cannot run under ASan (it replaces the allocator ASan would):
# its UBSan build (aborting at the first undefined behaviour) runs instead
UBSAN_TRACKER=${UBSAN_TRACKER:-$(dirname "$RSPROF")/preload/ubsan/librsprof-heap.so}
test_expect_success 'the tracker built with UBSan: the same checks, the same counts' '
	test -r "$UBSAN_TRACKER" &&
	RSPROF_HEAP_TRACKER=$UBSAN_TRACKER "$RSPROF" record -q --no-cpu --heap-backend preload \
		-o ub.db -- "$TARGETS/heap_header" 300000 &&
	no_negative_site ub.db && test "$(meta ub.db unknown_frees)" = 0 &&
	test "$(sql ub.db "SELECT SUM(h.alloc_bytes) - SUM(h.free_bytes) FROM heap_events h
		JOIN symbols s ON h.addr = s.addr WHERE s.line = $(line_of HH_LOOP "$SRC")")" = 0
'

test_expect_success 'the headers in the resident memory: report and info say how much' '
	"$RSPROF" record -q --no-cpu -i 200ms --heap-backend preload -o live.db -- \
		"$TARGETS/heap_bench_live" 3000000 >/dev/null &&
	test "$(meta live.db heap_block_header_bytes)" = 16 &&
	blocks=$(sql live.db "SELECT SUM(heap_alloc_count) - SUM(heap_free_count) FROM checkpoints") &&
	echo "$blocks blocks live" && test "$blocks" -ge 500000 &&
	"$RSPROF" report --heap -n 1 live.db | grep -A1 "^# memory:" >mem && cat mem &&
	grep -q "; the tracker.s headers ~7\.6[0-9] MiB$" mem &&
	"$RSPROF" info live.db | grep -q "^block headers: *~7\.6[0-9] MiB of the resident memory" &&
	"$RSPROF" info --json live.db | python3 -c "
import json, sys
m = json.load(sys.stdin)[\"memory\"]
assert m[\"header_bytes\"] == 16 * $blocks, m
"
'

test_done
