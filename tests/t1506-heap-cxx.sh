#!/bin/sh
# Heap tracking on a C++ program: std::vector growth, new and new[] go
# through operator new in libstdc++, which keeps no frame pointers; probed
# there, each lands on the user's line, and the malloc inside is not
# counted again.
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

if ! have_bpf; then
	test_skip 'heap tracking of a C++ program' 'needs root and kernel BTF'
	test_done
fi

SRC=$TEST_SRC/targets/heap_cxx.cc
L_VECTOR=$(line_of HEAP_VECTOR "$SRC")
L_NEW=$(line_of HEAP_NEW "$SRC")
L_ARRAY=$(line_of HEAP_NEW_ARRAY "$SRC")

test_expect_success 'record -- heap_cxx' '
	"$RSPROF" record -q --no-cpu -o cxx.db -- "$TARGETS/heap_cxx" 100 &&
	test "$(meta cxx.db heap_probes)" = libc &&
	heap_lines cxx.db >lines && cat lines
'

test_expect_success 'vector growth, new[] and new on their lines, in order, not counted twice' '
	sed -n 1p lines | grep "heap_cxx.cc|$L_VECTOR|grow()|4194304|" &&
	sed -n 2p lines | grep "heap_cxx.cc|$L_ARRAY|arrays()|1048576|1|0" &&
	sed -n 3p lines | grep "heap_cxx.cc|$L_NEW|nodes()|655360|10240|0"
'

test_expect_success 'no site below zero; live heap = sum of the sites' '
	no_negative_site cxx.db &&
	sum=$(sql cxx.db "SELECT SUM(alloc_bytes) - SUM(free_bytes) FROM heap_events") &&
	last=$(sql cxx.db "SELECT heap_live_bytes FROM checkpoints ORDER BY id DESC LIMIT 1") &&
	test "$sum" = "$last"
'

test_done
