#!/bin/sh
# Heap tracking on a C program (issue 3, test 2): realloc growth, calloc and
# many small mallocs retain 40, 10 and 4 MiB on three lines; a churn line
# mallocs and frees a million times. Probes are glibc's, attached past
# free's NULL check.
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

SRC=$TEST_SRC/targets/heap_c.c
L_REALLOC=$(line_of HEAP_REALLOC "$SRC")
L_CALLOC=$(line_of HEAP_CALLOC "$SRC")
L_MALLOC=$(line_of HEAP_MALLOC "$SRC")
L_CHURN=$(line_of HEAP_CHURN "$SRC")
MiB=1048576

for B in $HEAP_BACKENDS; do
backend_ok $B || continue

test_expect_success "[$B] record -- heap_c with the libc probes" '
	"$RSPROF" record --heap-backend $B -q -o c-$B.db -- "$TARGETS/heap_c" 1000000 300 >/dev/null &&
	backend_meta c-$B.db $B &&
	test "$(meta c-$B.db heap_probes)" = libc &&
	test "$(meta c-$B.db heap_dropped)" = 0 &&
	heap_lines c-$B.db >lines && head -n 6 lines
'

test_expect_success "[$B] realloc, calloc and malloc lines on top, in order" '
	sed -n 1p lines | grep -q "heap_c.c|$L_REALLOC|grow|" &&
	sed -n 2p lines | grep -q "heap_c.c|$L_CALLOC|zeroed|" &&
	sed -n 3p lines | grep -q "heap_c.c|$L_MALLOC|small_blocks|"
'

test_expect_success "[$B] each within 10% of what it keeps (40, 10, 4 MiB)" '
	within "$(sed -n 1p lines | cut -d"|" -f4)" $((40 * MiB)) 10 &&
	within "$(sed -n 2p lines | cut -d"|" -f4)" $((10 * MiB)) 10 &&
	within "$(sed -n 3p lines | cut -d"|" -f4)" $((4 * MiB)) 10 &&
	test "$(sed -n 3p lines | cut -d"|" -f5)" = 65536
'

test_expect_success "[$B] realloc moved the block each time: one live block on its line" '
	l=$(sed -n 1p lines) &&
	test $(( $(echo "$l" | cut -d"|" -f5) - $(echo "$l" | cut -d"|" -f6) )) = 1
'

test_expect_success "[$B] the churn line: nothing live, a million allocations" '
	churn=$(grep "heap_c.c|$L_CHURN|" lines) && echo "$churn" &&
	test "$(echo "$churn" | cut -d"|" -f4)" = 0 &&
	test "$(echo "$churn" | cut -d"|" -f5)" = 1000000
'

test_expect_success "[$B] no site below zero; live heap = sum of the sites" '
	no_negative_site c-$B.db &&
	sum=$(sql c-$B.db "SELECT SUM(alloc_bytes) - SUM(free_bytes) FROM heap_events") &&
	last=$(sql c-$B.db "SELECT heap_live_bytes FROM checkpoints ORDER BY id DESC LIMIT 1") &&
	test "$sum" = "$last" &&
	seed_heap_queries c-$B.db >out && sed -n 1p out | grep -q "heap_c.c|$L_REALLOC|"
'

test_expect_success "[$B] report --heap puts the three retaining lines on top" '
	"$RSPROF" report --heap c-$B.db >rep && cat rep &&
	sed -n "/Location/,\$p" rep | sed -n 2,4p >top3 &&
	sed -n 1p top3 | grep -q "heap_c.c:$L_REALLOC .*grow" &&
	sed -n 2p top3 | grep -q "heap_c.c:$L_CALLOC .*zeroed" &&
	sed -n 3p top3 | grep -q "heap_c.c:$L_MALLOC .*small_blocks"
'
done

test_done
