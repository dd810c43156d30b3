#!/bin/sh
# Heap tracking on a C++ program: std::vector growth, new and new[] go
# through operator new in libstdc++, which keeps no frame pointers; probed
# there, each lands on the user's line, and the malloc inside is not
# counted again.
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

SRC=$TEST_SRC/targets/heap_cxx.cc
L_VECTOR=$(line_of HEAP_VECTOR "$SRC")
L_NEW=$(line_of HEAP_NEW "$SRC")
L_ARRAY=$(line_of HEAP_NEW_ARRAY "$SRC")

for B in $HEAP_BACKENDS; do
backend_ok $B || continue

test_expect_success "[$B] record -- heap_cxx" '
	"$RSPROF" record --heap-backend $B -q --no-cpu -o cxx-$B.db -- "$TARGETS/heap_cxx" 100 &&
	backend_meta cxx-$B.db $B &&
	test "$(meta cxx-$B.db heap_probes)" = libc &&
	heap_lines cxx-$B.db >lines && cat lines
'

test_expect_success "[$B] vector growth, new[] and new on their lines, in order, not counted twice" '
	sed -n 1p lines | grep "heap_cxx.cc|$L_VECTOR|grow()|4194304|" &&
	sed -n 2p lines | grep "heap_cxx.cc|$L_ARRAY|arrays()|1048576|1|0" &&
	sed -n 3p lines | grep "heap_cxx.cc|$L_NEW|nodes()|655360|10240|0"
'

test_expect_success "[$B] no site below zero; live heap = sum of the sites" '
	no_negative_site cxx-$B.db &&
	sum=$(sql cxx-$B.db "SELECT SUM(alloc_bytes) - SUM(free_bytes) FROM heap_events") &&
	last=$(sql cxx-$B.db "SELECT heap_live_bytes FROM checkpoints ORDER BY id DESC LIMIT 1") &&
	test "$sum" = "$last"
'
done

test_done
