#!/bin/sh
# report --heap --sort-by live|peak|allocated|allocs (issue 14; temporary: t2301): the heap
# table ranked by what is held, what was held at most, what was allocated
# (churn) or how often; on the fixture's known numbers, then on heap_c
# whose churn line allocates a million times and keeps nothing.
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

FIXTURE=${FIXTURE:-$(dirname "$RSPROF")/tests/helper/fixture}

# The heap rows of report --csv as "short-location" lines, in order.
order() {
	"$RSPROF" report --heap --csv "$@" | awk -F, 'NR > 1 { sub(/.*\//, "", $10); print $10 }'
}

test_expect_success 'fixture: live and peak rank cache.rs first, allocated and allocs parse.rs' '
	"$FIXTURE" fix.db &&
	test "$(order fix.db | head -1)" = cache.rs:42 &&
	test "$(order --sort-by live fix.db | head -1)" = cache.rs:42 &&
	test "$(order --sort-by peak fix.db | head -1)" = cache.rs:42 &&
	test "$(order --sort-by allocated fix.db | head -1)" = parse.rs:77 &&
	test "$(order --sort-by allocs fix.db | head -1)" = parse.rs:77
'

test_expect_success 'fixture: --sort-by allocated shows an Allocated column' '
	"$RSPROF" report --heap --sort-by allocated fix.db >out &&
	cat out &&
	grep -q "^ *Heap *Peak@cp *Allocated *Allocs *Location" out &&
	grep -q "^ *0 B *10.0 MiB *15.0 MiB *1,500 .*parse.rs:77" out &&
	"$RSPROF" report --heap fix.db | grep -q "^ *Heap *Peak@cp *Allocs *Location"
'

test_expect_success 'fixture: the threshold is a share of the sort key' '
	test "$(order --sort-by allocated -t 50 fix.db)" = parse.rs:77 &&
	test "$(order -t 50 fix.db)" = cache.rs:42
'

test_expect_success 'an unknown key: exit 2, the keys named' '
	expect_exit 2 "$RSPROF" report --sort-by lifetime fix.db 2>err &&
	grep -q "live, peak, allocated, allocs or temporary" err
'

if ! have_bpf; then
	test_skip 'heap sort keys on a recording' 'needs root and kernel BTF'
	test_done
fi

SRC=$TEST_SRC/targets/heap_c.c
L_REALLOC=$(line_of HEAP_REALLOC "$SRC")
L_CHURN=$(line_of HEAP_CHURN "$SRC")

test_expect_success 'heap_c: live ranks the realloc line first, allocs the churn line' '
	"$RSPROF" record -q -o c.db -- "$TARGETS/heap_c" 200000 200 >/dev/null &&
	test "$(order c.db | head -1)" = "heap_c.c:$L_REALLOC" &&
	test "$(order --sort-by allocs c.db | head -1)" = "heap_c.c:$L_CHURN" &&
	"$RSPROF" report --heap --csv --sort-by allocs c.db |
		awk -F, "NR == 2 { exit !(\$8 == 200000 && \$4 == 0) }"
'

test_done
