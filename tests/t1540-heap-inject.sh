#!/bin/sh
# The heap tracker injected into a running process (record -p): the
# process must go on as if nothing happened, whatever rsprof does. Each
# target's own output (and exit status) is compared with a run of it that
# no rsprof touched: 8 threads allocating while threads start and exit,
# attached and detached three times; the main thread blocked inside
# malloc_info() with an arena's lock held when rsprof comes; fork and exec
# all along; byte sampling; rsprof killed with SIGKILL mid-recording; a
# second rsprof while one is attached (no uprobes either: they would break
# the jumps at glibc's free & co.), a third after it; the stress target of
# t1524 (its own account of every block), also with the tracker built with
# UBSan.
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

T=$TARGETS/heap_inject
UBSAN_TRACKER=${UBSAN_TRACKER:-$(dirname "$RSPROF")/preload/ubsan/librsprof-heap.so}

# start MODE ARG: the target in the background, its output in MODE.out; returns once it runs
start() {
	rm -f ready
	"$T" "$1" "$PWD/ready" "$2" >"$1.out" &
	tp=$!
	bg_pid $tp
	wait_for_file ready
}

# finish MODE: the target ended well, its output that of the unprofiled run
finish() {
	wait $tp && "$T" "$1" "$PWD/ready.base" "$2" >"$1.want" && diff "$1.want" "$1.out"
}

# injected DB: the tracker ran in the process, counted something, no site below zero
injected() {
	test "$(meta "$1" heap_backend)" = inject && test -z "$(meta "$1" heap_backend_reason)" &&
	test "$(sql "$1" "SELECT SUM(alloc_count) FROM heap_events")" -gt 0 &&
	no_negative_site "$1"
}

test_expect_success '8 threads starting and exiting: attached and detached three times' '
	start churn 300 &&
	for i in 1 2 3; do
		"$RSPROF" record -q -d 700ms -p $tp -o churn$i.db || exit 1
	done &&
	finish churn 300 &&
	for i in 1 2 3; do injected churn$i.db || exit 1; done &&
	heap_lines churn1.db | grep -q "heap_inject.c|.*|work|" &&
	test "$(meta churn1.db unknown_frees)" -lt 2000
'

# one free in eight goes through a pointer to glibc's free taken before any
# attach: those blocks are freed right (the program would abort otherwise)
# and counted: at most 8 x 64 blocks live at once, plus what the 8 threads
# allocate while the last snapshot reads the allocation and free counters
# a moment apart (629 in all with the sanitizer build of rsprof at load 5);
# uncounted frees would leave millions live
test_expect_success 'frees through a pointer taken before the attach: counted' '
	a=$(sql churn2.db "SELECT SUM(alloc_count) FROM heap_events") &&
	f=$(sql churn2.db "SELECT SUM(free_count) FROM heap_events") &&
	echo "$a allocations, $f frees" && test $((a - f)) -le 1024
'

# byte sampling attached: the region the tracker adopts says so; the same
# tracker, counting all before, samples in the next attach
test_expect_success 'byte sampling attached (after a full attach): the same output, estimates' '
	start churn 300 &&
	"$RSPROF" record -q -d 500ms -p $tp -o full.db &&
	"$RSPROF" record -d 700ms --heap-sample-bytes 16K -p $tp -o samp.db 2>samp.sum &&
	finish churn 300 &&
	cat samp.sum && injected full.db && injected samp.db &&
	test "$(meta samp.db heap_sample_bytes)" = 16384 &&
	test -z "$(meta samp.db heap_block_header_bytes)" &&
	grep -q "heap figures are estimates" samp.sum
'

test_expect_success 'the main thread blocked inside malloc_info, an arena locked: another thread is used' '
	start lock 2000 &&
	"$RSPROF" record -q -v --no-cpu -d 3 -p $tp -o lock.db 2>lock.err &&
	finish lock 2000 && injected lock.db &&
	grep -m1 "safe point" lock.err >first && cat first && ! grep -q "thread $tp " first
'

test_expect_success 'fork and exec all along: attached four times' '
	start fork 1500 &&
	for i in 1 2 3 4; do
		"$RSPROF" record -q -d 400ms -p $tp -o fork$i.db || exit 1
	done &&
	finish fork 1500 && injected fork1.db && injected fork4.db
'

test_expect_success 'rsprof killed (SIGKILL) mid-recording: the program finishes right, the tracker lets go' '
	start steady 400 || exit 1
	"$RSPROF" record -q -p $tp -o killed.db &
	rp=$!
	wait_checkpoints killed.db &&
	grep -q "memfd:rsprof-heap-region" /proc/$tp/maps &&
	kill -9 $rp && { wait $rp; true; } &&
	i=0 && while grep -q "memfd:rsprof-heap-region" /proc/$tp/maps && [ $i -lt 100 ]; do
		sleep 0.1; i=$((i + 1))
	done &&
	! grep -q "memfd:rsprof-heap-region" /proc/$tp/maps &&
	finish steady 400
'

test_expect_success 'a second rsprof meanwhile records CPU only (no uprobes over the tracker), a third attaches' '
	start steady 900 || exit 1
	"$RSPROF" record -q -d 3 -p $tp -o first.db &
	rp=$!
	wait_checkpoints first.db &&
	"$RSPROF" record -d 1 -p $tp -o second.db 2>second.err &&
	wait $rp &&
	"$RSPROF" record -q -d 1 -p $tp -o third.db &&
	finish steady 900 &&
	injected first.db && injected third.db &&
	grep "another rsprof is tracking its heap already" second.err &&
	test "$(meta second.db heap)" = off
'

SRC=$TEST_SRC/targets/heap_stress.c
# stress NAME [ENV]: the stress target attached twice; its account as unprofiled
stress() {
	"$TARGETS/heap_stress" base.txt 4 400000 15 && grep -v ticks base.txt >want || return 1
	"$TARGETS/heap_stress" $1.txt 4 400000 15 &
	sp=$!
	bg_pid $sp &&
	sleep 0.5 &&
	"$RSPROF" record -q --no-cpu -d 1 -p $sp -o $1-a.db &&
	"$RSPROF" record -q --no-cpu -d 1 -p $sp -o $1-b.db &&
	wait $sp && grep -v ticks $1.txt >got && diff want got &&
	injected $1-a.db && injected $1-b.db
}

test_expect_success 'the stress target of t1524, attached twice: its own account as unprofiled' '
	stress stress
'

test_expect_success 'the same with the tracker built with UBSan' '
	test -r "$UBSAN_TRACKER" && export RSPROF_HEAP_TRACKER=$UBSAN_TRACKER && stress ubsan
'

test_done
