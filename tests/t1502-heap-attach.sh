#!/bin/sh
# Attach to a program that allocated before rsprof came (issue 3, test 3):
# its frees of that memory are counted apart as unknown frees and never
# drive a site below zero.
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

if ! have_bpf; then
	test_skip 'heap tracking after attach' 'needs root and kernel BTF'
	test_done
fi

SRC=$TEST_SRC/targets/heap_attach.c
L_AFTER=$(line_of HEAP_AFTER "$SRC")

test_expect_success 'record -p PID while the program frees what it had before' '
	"$TARGETS/heap_attach" ready go 300 &
	tp=$! && bg_pid $tp &&
	wait_for_file ready &&
	"$RSPROF" record -q -p $tp -o attach.db &
	rp=$! &&
	wait_checkpoints attach.db &&
	touch go &&
	wait $rp
'

test_expect_success 'no site below zero' '
	heap_lines attach.db && no_negative_site attach.db
'

test_expect_success 'the 2000 frees of memory allocated before attach are reported' '
	n=$(meta attach.db unknown_frees) && b=$(meta attach.db unknown_free_bytes) &&
	echo "unknown frees: $n, $b bytes" &&
	test "$n" -ge 2000 && test "$n" -le 2100 &&
	test "$b" -ge 8192000 && test "$b" -le 8700000
'

test_expect_success 'what was allocated after attach is on its line' '
	heap_lines attach.db | sed -n 1p | grep "heap_attach.c|$L_AFTER|main|2097152|2|0" &&
	heap_lines attach.db | grep "heap_attach.c|$(line_of HEAP_CHURN "$SRC")|main|0|10000|10000"
'

# jemalloc's blocks have no glibc chunk header: with uprobes the sizes of
# frees of memory allocated before attach are unknown, never read from
# garbage (the injected tracker asks jemalloc's malloc_usable_size: t1542)
if gcc -g -O1 -o heap_attach_je "$SRC" -ljemalloc 2>/dev/null; then
	test_expect_success 'jemalloc, uprobes: unknown frees counted, their sizes said to be unknown' '
		rm -f ready go &&
		./heap_attach_je ready go 300 &
		tp=$! && bg_pid $tp &&
		wait_for_file ready &&
		"$RSPROF" record -q --heap-backend uprobe -p $tp -o je.db &
		rp=$! &&
		wait_checkpoints je.db &&
		touch go &&
		wait $rp &&
		test "$(meta je.db heap_backend)" = uprobe &&
		n=$(meta je.db unknown_frees) && echo "unknown frees: $n" &&
		test "$n" -ge 2000 && test "$n" -le 2100 &&
		test -z "$(meta je.db unknown_free_bytes)" &&
		"$RSPROF" info je.db >info.out && grep "unknown frees" info.out &&
		grep -q "unknown frees: *2,0[0-9][0-9] (sizes unknown" info.out &&
		"$RSPROF" info --json je.db | grep -q "\"unknown_free_bytes\": null" &&
		heap_lines je.db | sed -n 1p | grep "heap_attach.c|$L_AFTER|main|2097152|2|0"
	'
else
	test_skip 'jemalloc: unknown frees' 'libjemalloc-dev is not installed'
fi

test_done
