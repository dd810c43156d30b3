#!/bin/sh
# record --alloc-history keeps every allocation: a program that allocates
# faster than rsprof writes waits for it (back-pressure) instead of losing
# events, and the summary says how long it waited. heap_churn allocates
# and frees N small blocks per thread at one line (CHURN:alloc) and prints
# its own count. The program's output and exit status are those of an
# unprofiled run; rsprof killed or stopped mid-recording never leaves the
# program waiting for good.
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

SRC=$TEST_SRC/targets/heap_churn.c
CHURN=$TARGETS/heap_churn
LIMIT=300	# seconds: writing millions of events on a loaded machine

# same DB ARGS...: heap_churn ARGS unprofiled and under record
# --alloc-history -o DB: the same stdout and exit status; the summary in
# DB.err.
same() {
	_db=$1
	shift
	timeout $LIMIT "$CHURN" "$@" >plain.out 2>plain.err
	_want=$?
	timeout $LIMIT "$RSPROF" record --no-cpu --alloc-history -o "$_db" -- "$CHURN" "$@" \
		>prof.out 2>"$_db.err"
	_got=$?
	cat plain.out prof.out "$_db.err"
	test "$_want" = 0 && test "$_got" = 0 && cmp plain.out prof.out
}

# kept DB N: every one of the program's N allocations at CHURN:alloc is in
# the history, each freed; nothing dropped; every event counted is kept.
kept() {
	_l=$(line_of CHURN:alloc "$SRC")
	test "$(meta "$1" alloc_history_dropped)" = 0 &&
	test "$(meta "$1" alloc_history_events)" = \
	     "$(sql "$1" "SELECT SUM(alloc_count) + SUM(free_count) FROM heap_events")" &&
	test "$(sql "$1" "SELECT COUNT(*) FROM alloc_events a JOIN symbols s ON a.site = s.addr
			  WHERE s.file LIKE '%heap_churn.c' AND s.line = $_l")" = "$2" &&
	test "$(sql "$1" "SELECT COUNT(*) FROM alloc_events a JOIN symbols s ON a.site = s.addr
			  WHERE s.file LIKE '%heap_churn.c' AND s.line = $_l
			    AND time_free IS NOT NULL")" = "$2" &&
	test -n "$(meta "$1" alloc_history_wait_ns)" &&
	grep -Eq "^\[ allocation history: [0-9,]+ events kept, 0 dropped; the program (waited [0-9.]+ m?s for the recorder \(alloc history back-pressure\)|never waited for the recorder) \]$" "$1.err" &&
	! grep -q "warning: allocation history" "$1.err"
}

test_expect_success '100,000 blocks: every allocation kept, the same output' '
	same one.db 100000 &&
	grep -qx "heap_churn: 100000 allocations, 100000 frees in 1 thread, checksum [0-9]*" prof.out &&
	kept one.db 100000
'

test_expect_success '4 threads of 100,000 blocks: every allocation kept, the same output' '
	same four.db 100000 4 &&
	grep -qx "heap_churn: 400000 allocations, 400000 frees in 4 threads, checksum [0-9]*" prof.out &&
	kept four.db 400000
'

# 2,000,000 events: more than the recorder queues (1,048,576) and the
# ring holds (65,536): the program must have waited.
test_expect_success 'more events than rsprof can hold: the program waits, the summary says so' '
	same big.db 1000000 &&
	kept big.db 1000000 &&
	test "$(meta big.db alloc_history_wait_ns)" -gt 0 &&
	grep -Eq "the program waited [0-9.]+ m?s for the recorder \(alloc history back-pressure\)" big.db.err
'

# started PID: wait (60 s at most) until rsprof PID has launched heap_churn
# and it has run for a moment; its PID in $tp.
started() {
	_i=0
	while [ $_i -lt 600 ] && ! tp=$(pgrep -P "$1" -x heap_churn); do
		sleep 0.1
		_i=$((_i + 1))
	done
	test -n "$tp" && sleep 0.5
}

# finished FILE SECONDS: FILE gets heap_churn's last line within SECONDS.
finished() {
	_i=0
	while [ $_i -lt $(($2 * 10)) ] && ! grep -q "^heap_churn:" "$1"; do
		sleep 0.1
		_i=$((_i + 1))
	done
	grep -q "^heap_churn:" "$1"
}

test_expect_success 'rsprof killed mid-recording: the program goes on and ends as it would' '
	"$CHURN" 5000000 2 >plain.out || exit 1
	"$RSPROF" record -q --no-cpu --alloc-history -o killed.db -- "$CHURN" 5000000 2 \
		>killed.out 2>killed.err &
	rp=$! && test_bg_pids="$test_bg_pids $rp" &&
	started $rp && ! grep -q "^heap_churn:" killed.out &&
	t0=$(date +%s) && kill -9 $rp &&
	finished killed.out 60 &&
	echo "the program ended $(($(date +%s) - t0)) s after rsprof was killed" &&
	cmp plain.out killed.out
'

test_expect_success 'rsprof stopped: the program stops waiting after 5 s, the drops are said' '
	"$RSPROF" record --no-cpu --alloc-history -o stopped.db -- "$CHURN" 5000000 2 \
		>stopped.out 2>stopped.err &
	rp=$! && test_bg_pids="$test_bg_pids $rp" &&
	started $rp && ! grep -q "^heap_churn:" stopped.out &&
	t0=$(date +%s) && kill -STOP $rp &&
	finished stopped.out 60; ok=$?; kill -CONT $rp; wait $rp; rc=$?
	echo "the program ended $(($(date +%s) - t0)) s after rsprof was stopped" &&
	cat stopped.err && test $ok = 0 && test $rc = 0 &&
	cmp plain.out stopped.out &&
	dropped=$(meta stopped.db alloc_history_dropped) && test "$dropped" -gt 0 &&
	grep -q "warning: allocation history: $dropped of 20000005 events dropped (rsprof gave no sign of life for 5 s" stopped.err &&
	test $(($(meta stopped.db alloc_history_events) + dropped)) = 20000005
'

# The tracker built with UBSan (fatal): the waits checked for undefined
# behaviour too.
UBSAN_TRACKER=${UBSAN_TRACKER:-$(dirname "$RSPROF")/preload/ubsan/librsprof-heap.so}
if test -r "$UBSAN_TRACKER"; then
	test_expect_success 'the tracker built with UBSan: 2 threads, every allocation kept' '
		RSPROF_HEAP_TRACKER=$UBSAN_TRACKER && export RSPROF_HEAP_TRACKER &&
		same ubsan.db 300000 2 &&
		kept ubsan.db 600000
	'
else
	test_skip "the tracker built with UBSan" "no $UBSAN_TRACKER (make $UBSAN_TRACKER)"
fi

test_done
