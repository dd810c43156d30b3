#!/bin/sh
# A launched program that replaces itself with exec (issue 8): the new
# image makes the next generation's region and rsprof follows it; what the
# old image held went with it (its sites end at zero), and the new
# image's figures are right.
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

EX=$TEST_SRC/targets/heap_exec.c
C=$TEST_SRC/targets/heap_c.c
MiB=1048576

test_expect_success 'record -- heap_exec 300 heap_c' '
	"$RSPROF" record -q --no-cpu -i 100ms --heap-backend preload -o ex.db -- \
		"$TARGETS/heap_exec" 300 "$TARGETS/heap_c" 100000 200 >/dev/null &&
	heap_lines ex.db >lines && cat lines
'

test_expect_success 'the old image: its 1 MiB allocated, and gone with it' '
	grep -q "heap_exec.c|$(line_of EXEC_BEFORE "$EX")|main|0|16|16" lines
'

test_expect_success 'the new image: its lines as when launched directly' '
	sed -n 1p lines | grep -q "heap_c.c|$(line_of HEAP_REALLOC "$C")|grow|" &&
	within "$(sed -n 1p lines | cut -d"|" -f4)" $((40 * MiB)) 10 &&
	grep -q "heap_c.c|$(line_of HEAP_CHURN "$C")|churn|0|100000|100000" lines
'

test_expect_success 'no site below zero; live heap = sum of the sites' '
	no_negative_site ex.db &&
	sum=$(sql ex.db "SELECT SUM(alloc_bytes) - SUM(free_bytes) FROM heap_events") &&
	last=$(sql ex.db "SELECT heap_live_bytes FROM checkpoints ORDER BY id DESC LIMIT 1") &&
	echo "sum $sum, live $last" && test "$sum" = "$last"
'

test_done
