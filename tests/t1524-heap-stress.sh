#!/bin/sh
# Stress (issue 8): threads doing random malloc, calloc, realloc,
# posix_memalign and free, handing blocks to each other, exiting and
# starting again, a fork now and then while the others allocate, a timer
# signal every 200 us. The target keeps its own account of every block;
# the profile must agree with it exactly, line by line.
#
# The in-process tracker cannot run under AddressSanitizer (ASan replaces
# the allocator the tracker interposes), so it is checked this way
# instead: the exact account above, with the normal build and with a build
# of the tracker with UBSan (aborting at the first undefined behaviour),
# and, with uprobes, the same account from the other backend.
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

SRC=$TEST_SRC/targets/heap_stress.c
UBSAN_TRACKER=${UBSAN_TRACKER:-$(dirname "$RSPROF")/preload/ubsan/librsprof-heap.so}

# profile_account FILE: "MARKER allocs alloc_bytes frees free_bytes" by line
profile_account() {
	for m in ST_MALLOC ST_CALLOC ST_REALLOC ST_MEMALIGN; do
		l=$(line_of $m "$SRC")
		echo "$m $(sql "$1" "SELECT SUM(h.alloc_count), SUM(h.alloc_bytes), SUM(h.free_count),
				     SUM(h.free_bytes) FROM heap_events h JOIN symbols s ON h.addr = s.addr
			      WHERE s.file LIKE '%heap_stress.c' AND s.line = $l" | tr '|' ' ')"
	done
}

# stress NAME THREADS ITERS [RSPROF OPTIONS]: record, compare with the target's account
stress() {
	name=$1 threads=$2 iters=$3
	shift 3
	"$RSPROF" record -q --no-cpu -i 100ms "$@" -o $name.db -- \
		"$TARGETS/heap_stress" "$PWD/$name.txt" $threads $iters 3 &&
	grep -v ticks $name.txt >want-$name && profile_account $name.db >got-$name &&
	echo "target:" && cat want-$name && echo "profile:" && cat got-$name &&
	diff want-$name got-$name &&
	test "$(meta $name.db heap_dropped)" = 0 && no_negative_site $name.db
}

test_expect_success 'in-process: the profile agrees with the target, line by line' '
	stress preload 4 100000 --heap-backend preload && backend_meta preload.db preload &&
	test "$(meta preload.db unknown_frees)" = 0
'

# 80 threads at once, handing blocks to each other: a free counted by a thread other than the allocating one
test_expect_success 'in-process, 80 threads: the same' '
	stress many 80 5000 --heap-backend preload && test "$(meta many.db unknown_frees)" = 0
'

test_expect_success 'in-process, the tracker built with UBSan: the same' '
	test -r "$UBSAN_TRACKER" &&
	RSPROF_HEAP_TRACKER=$UBSAN_TRACKER stress ubsan 4 30000 --heap-backend preload &&
	test "$(meta ubsan.db unknown_frees)" = 0
'

# uprobes also see glibc free the chunks of each exiting thread's cache
# (tcache), which it took back without a malloc call: unknown frees there.
if backend_ok uprobe; then
	test_expect_success 'uprobes: the same' '
		stress uprobe 4 10000 --heap-backend uprobe && backend_meta uprobe.db uprobe
	'
fi

test_done
