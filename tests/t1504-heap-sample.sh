#!/bin/sh
# --heap-sample 10 (issue 3, test 5): one small allocation in 10 is tracked
# and stands for 10, big ones are always tracked; the retaining lines stay
# on top within 25%, and the file says it was sampled.
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

test_expect_success "[$B] record --heap-sample 10" '
	"$RSPROF" record --heap-backend $B -q --heap-sample 10 -o s-$B.db -- "$TARGETS/heap_rust" 1000000 300 &&
	backend_meta s-$B.db $B &&
	test "$(meta s-$B.db heap_sample)" = 10 &&
	heap_lines s-$B.db >lines && head -n 5 lines
'

test_expect_success "[$B] the three retaining lines on top within 25%" '
	sed -n 1p lines | grep -q "heap_rust.rs|$L_VEC|" &&
	sed -n 2p lines | grep -q "heap_rust.rs|$L_ZERO|" &&
	sed -n 3p lines | grep -q "heap_rust.rs|$L_STR|" &&
	within "$(sed -n 1p lines | cut -d"|" -f4)" $((40 * MiB)) 25 &&
	within "$(sed -n 2p lines | cut -d"|" -f4)" $((10 * MiB)) 25 &&
	within "$(sed -n 3p lines | cut -d"|" -f4)" $((4 * MiB)) 25
'

test_expect_success "[$B] the churn count is scaled: about a million" '
	n=$(grep "heap_rust.rs|$L_CHURN|" lines | cut -d"|" -f5) && echo "$n" &&
	within "$n" 1000000 25
'

test_expect_success "[$B] no site below zero" '
	no_negative_site s-$B.db
'

test_expect_success "[$B] report --heap puts the three retaining lines on top" '
	"$RSPROF" report --heap s-$B.db >rep && cat rep &&
	sed -n "/Location/,\$p" rep | sed -n 2,4p >top3 &&
	sed -n 1p top3 | grep -q "heap_rust.rs:$L_VEC .*grow_vec" &&
	sed -n 2p top3 | grep -q "heap_rust.rs:$L_ZERO .*zeroed" &&
	sed -n 3p top3 | grep -q "heap_rust.rs:$L_STR .*grow_string"
'
done

test_done
