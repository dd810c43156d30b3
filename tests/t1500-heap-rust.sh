#!/bin/sh
# Heap tracking on a Rust program (issue 3, test 1): Vec growth, vec![0; n]
# (__rust_alloc_zeroed) and String growth (__rust_realloc) retain 40, 10 and
# 4 MiB on three lines of the program; a churn line allocates and frees a
# million times. Every figure lands on the user's line, not in alloc::.
# Once per backend (issue 8): in-process (malloc below the Rust allocator)
# and uprobes (the Rust allocator's own functions).
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

SRC=$TEST_SRC/targets/heap_rust.rs
L_VEC=$(line_of HEAP_VEC "$SRC")
L_ZERO=$(line_of HEAP_ZEROED "$SRC")
L_STR=$(line_of HEAP_STRING "$SRC")
L_CHURN=$(line_of HEAP_CHURN "$SRC")
MiB=1048576

for B in $HEAP_BACKENDS; do
backend_ok $B || continue

test_expect_success "[$B] record -- heap_rust" '
	"$RSPROF" record -q --heap-backend $B -o rust-$B.db -- "$TARGETS/heap_rust" 1000000 300 &&
	test "$(meta rust-$B.db heap)" = on && backend_meta rust-$B.db $B &&
	{ test $B = preload || test "$(meta rust-$B.db heap_probes)" = rust; } &&
	test "$(meta rust-$B.db heap_dropped)" = 0 &&
	heap_lines rust-$B.db >lines-$B && head -n 6 lines-$B
'

test_expect_success "[$B] the three retaining lines are on top, in order, on the program's lines" '
	cat lines-$B &&
	sed -n 1p lines-$B | grep -q "heap_rust.rs|$L_VEC|heap_rust::grow_vec|" &&
	sed -n 2p lines-$B | grep -q "heap_rust.rs|$L_ZERO|heap_rust::zeroed|" &&
	sed -n 3p lines-$B | grep -q "heap_rust.rs|$L_STR|heap_rust::grow_string|"
'

test_expect_success "[$B] each within 10% of what it keeps (40, 10, 4 MiB)" '
	within "$(sed -n 1p lines-$B | cut -d"|" -f4)" $((40 * MiB)) 10 &&
	within "$(sed -n 2p lines-$B | cut -d"|" -f4)" $((10 * MiB)) 10 &&
	within "$(sed -n 3p lines-$B | cut -d"|" -f4)" $((4 * MiB)) 10
'

test_expect_success "[$B] the churn line: about nothing live, about a million allocations" '
	churn=$(grep "heap_rust.rs|$L_CHURN|" lines-$B) && echo "$churn" &&
	live=$(echo "$churn" | cut -d"|" -f4) && n=$(echo "$churn" | cut -d"|" -f5) &&
	test "$live" -ge 0 && test "$live" -le 4096 &&
	test "$n" -ge 500000 && test "$n" -le 2000000
'

test_expect_success "[$B] no site below zero, no unknown frees, live heap = sum of the sites" '
	no_negative_site rust-$B.db &&
	test "$(meta rust-$B.db unknown_frees)" = 0 &&
	sum=$(sql rust-$B.db "SELECT SUM(alloc_bytes) - SUM(free_bytes) FROM heap_events") &&
	last=$(sql rust-$B.db "SELECT heap_live_bytes FROM checkpoints ORDER BY id DESC LIMIT 1") &&
	echo "sum $sum, last checkpoint $last" && test "$sum" = "$last"
'

test_expect_success "[$B] heap call stacks are stored once and referenced" '
	test "$(sql rust-$B.db "SELECT COUNT(*) FROM heap_events WHERE stack_id IS NULL")" = 0 &&
	test "$(sql rust-$B.db "SELECT COUNT(*) FROM heap_events h LEFT JOIN stacks s ON s.id = h.stack_id WHERE s.id IS NULL")" = 0 &&
	test "$(sql rust-$B.db "SELECT COUNT(*) FROM stacks")" = "$(sql rust-$B.db "SELECT COUNT(DISTINCT hash) FROM stacks")"
'

test_expect_success "[$B] seed 000 §7.5.2 heap queries run verbatim" '
	seed_heap_queries rust-$B.db >out && head -n 3 out &&
	sed -n 1p out | grep -q "heap_rust.rs|$L_VEC|"
'

test_expect_success "[$B] --heap-attribution=stack shows the plumbing (the allocator's caller)" '
	"$RSPROF" record -q --no-cpu --heap-backend $B --heap-attribution=stack -o stack-$B.db -- "$TARGETS/heap_rust" 1000 0 &&
	heap_lines stack-$B.db >slines && head -n 3 slines &&
	sed -n 1p slines | grep -q "/library/alloc/\|/library/std/"
'

test_expect_success "[$B] report --heap puts the three retaining lines on top" '
	"$RSPROF" report --heap rust-$B.db >rep && cat rep &&
	sed -n "/Location/,\$p" rep | sed -n 2,4p >top3 &&
	sed -n 1p top3 | grep -q "heap_rust.rs:$L_VEC .*grow_vec" &&
	sed -n 2p top3 | grep -q "heap_rust.rs:$L_ZERO .*zeroed" &&
	sed -n 3p top3 | grep -q "heap_rust.rs:$L_STR .*grow_string"
'
done

test_done
