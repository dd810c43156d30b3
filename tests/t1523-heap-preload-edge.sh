#!/bin/sh
# The in-process tracker's own corner cases (issue 8), beyond t1507's
# (which both backends pass): reallocarray (and its overflow), valloc,
# pvalloc, memalign, posix_memalign's EINVAL, calloc's overflow, malloc(0),
# malloc_usable_size() on a tracked block, free(NULL), and frees of memory
# it never saw allocated (allocated before it loaded: counted apart as
# unknown frees, with their size, never against a site).
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

SRC=$TEST_SRC/targets/heap_preload_edge.c

test_expect_success 'record -- heap_preload_edge' '
	"$RSPROF" record -q --no-cpu --heap-backend preload -o pe.db -- "$TARGETS/heap_preload_edge" &&
	source_lines pe.db "$SRC" >got &&
	cat got
'

test_expect_success 'reallocarray moves its block; its overflow counts nothing' '
	want_line got PE_RA_FROM 0 1 1 && want_line got PE_REALLOCARRAY 4000 1 0 &&
	no_line got PE_RA_OVERFLOW
'

test_expect_success 'valloc, pvalloc, memalign, malloc(0): counted as asked' '
	want_line got PE_VALLOC 5000 1 0 && want_line got PE_PVALLOC 3000 1 0 &&
	want_line got PE_MEMALIGN 7000 1 0 && want_line got PE_ZERO 0 1 0
'

test_expect_success 'posix_memalign EINVAL and calloc overflow count nothing' '
	no_line got PE_EINVAL && no_line got PE_CALLOC_OVERFLOW
'

test_expect_success 'malloc_usable_size on a tracked block, and its free' '
	want_line got PE_USABLE 0 1 1
'

test_expect_success 'frees of memory the tracker never saw: 10 unknown frees, with their size' '
	no_line got PE_BEFORE &&
	n=$(meta pe.db unknown_frees) && b=$(meta pe.db unknown_free_bytes) && echo "$n frees, $b bytes" &&
	test "$n" = 10 && test "$b" -ge 20000 && test "$b" -le 21000 &&
	no_negative_site pe.db
'

test_done
