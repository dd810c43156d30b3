#!/bin/sh
# record --push URL and the faults of a store (tests/push-receiver.py as
# the store): every interval arrives once while recording, with report's
# totals; 500 then 200; a store down for 10 s then up (every interval
# exactly once); 413 (a clear error, exit 1, the profile written); rsprof
# SIGKILLed with a full spool (the next `rsprof push` sends the rest); the
# next record --push sends what an earlier one left in the spool.
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/push-lib.sh"

if ! have_perf; then
	test_skip 'record --push' 'perf events not allowed here'
	test_done
fi

# a process to attach to, for the recordings killed or stopped by duration
"$TARGETS/cpu_split" &
bg_pid $!
pid=$!

PUSH="--push-interval 1s --push-spool $TEST_DIR/spool"

# every interval of FILE once at the store of DIR, with report's CPU total
all_once() {	# DIR FILE
	pcheck "$1" errors && pcheck "$1" dups &&
	test "$(pcheck "$1" total samples/count)" = "$(total_of "$2" cpu.total_samples)"
}

start_receiver r.live
test_expect_success 'record --push: every interval while recording, report'"'"'s totals' '
	"$RSPROF" record -F 499 -i 250ms $PUSH --push http://127.0.0.1:$RPORT \
		--push-format pyroscope-connect -o live.db -- "$TARGETS/cpu_split" 2 2>live.err &&
	cat live.err &&
	all_once r.live live.db &&
	n=$(pcheck r.live count) && test "$n" -ge 2 &&
	grep -q "pushed $n profiles" live.err &&
	test "$(sql live.db "SELECT COUNT(*) FROM pushes WHERE state = '"'pushed'"'")" = "$n" &&
	test "$(sql live.db "SELECT COUNT(*) FROM meta WHERE key = '"'hostname'"'")" = 1
'

test_expect_success 'record --push of the heap: allocations and the live bytes at the end' '
	"$RSPROF" record -q --no-cpu -i 250ms $PUSH --push \
		http://127.0.0.1:$RPORT/api/profiles/writeraw -o heap.db -- \
		"$TARGETS/heap_paced" 150000 100000 >/dev/null &&
	pcheck r.live errors &&
	test "$(pcheck r.live total alloc_objects/count)" = \
	     "$(total_of heap.db summary.alloc_count)" &&
	test "$(pcheck r.live last inuse_space/bytes)" = \
	     "$(total_of heap.db heap.total_live_bytes)"
'
stop_receiver

start_receiver r.500 --fail 3
test_expect_success 'the store answers 500, then 200: every interval once' '
	"$RSPROF" record -F 499 -i 250ms $PUSH --push http://127.0.0.1:$RPORT \
		-o f500.db -- "$TARGETS/cpu_split" 2 2>f500.err &&
	cat f500.err &&
	all_once r.500 f500.db &&
	grep -q "HTTP 500" f500.err &&
	grep -q "3 tries failed" f500.err
'
stop_receiver

# The store is down for the first 10 s of a 13 s recording.
PORT=$(free_port)
"$RSPROF" record -F 199 -i 250ms --no-heap $PUSH --push http://127.0.0.1:$PORT \
	-d 13s -p $pid -o down.db 2>down.err &
rec=$!
sleep 10
start_receiver r.down --port $PORT
wait $rec
rc=$?
test_expect_success 'the store down for 10 s, then up: every interval exactly once' '
	test '$rc' = 0 &&
	cat down.err &&
	grep -q "cannot push" down.err &&
	grep -q "answers again" down.err &&
	all_once r.down down.db &&
	test "$(pcheck r.down count)" -ge 12 &&
	test "$(sql down.db "SELECT COUNT(*) FROM pushes WHERE state <> '"'pushed'"'")" = 0 &&
	! grep -q queued down.err
'
stop_receiver

start_receiver r.413 --status 413
test_expect_success '413: a clear error and exit 1; the profile is written' '
	expect_exit 1 "$RSPROF" record -i 250ms --no-heap $PUSH --push http://127.0.0.1:$RPORT \
		-d 2 -p $pid -o big.db 2>big.err &&
	cat big.err &&
	grep -q "refused the cpu/$pid profile.*HTTP 413" big.err &&
	grep -q "hint: push shorter intervals (--push-interval)" big.err &&
	grep -q "profile written to big.db" big.err &&
	test "$(sql big.db "SELECT http_status FROM pushes WHERE state = '"'rejected'"'")" = 413 &&
	expect_exit 1 "$RSPROF" push $PUSH big.db http://127.0.0.1:$RPORT 2>push413.err &&
	grep -q "HTTP 413" push413.err
'
stop_receiver

# SIGKILL while the store is down and the spool is full
PORT=$(free_port)
test_expect_success 'SIGKILL with a full spool: the next rsprof push sends the rest' '
	"$RSPROF" record -q -F 199 -i 250ms --no-heap --push-interval 1s \
		--push-spool kspool --push-spool-size 1K --push http://127.0.0.1:'$PORT' \
		-p $pid -o kill.db 2>kill.err &
	rec=$! &&
	wait_checkpoints kill.db 24 &&
	kill -9 $rec && { wait $rec; true; } &&
	cat kill.err &&
	grep -q "is full" kill.err &&
	ls kspool | grep -q "\.item$"
'
start_receiver r.kill --port $PORT
test_expect_success '... all of it, each interval once' '
	"$RSPROF" push --push-spool kspool kill.db http://127.0.0.1:$RPORT &&
	pcheck r.kill errors && pcheck r.kill dups &&
	got=$(pcheck r.kill total samples/count) &&
	want=$(sql kill.db "SELECT SUM(count) FROM cpu_samples") &&
	n=$(pcheck r.kill count) &&
	echo "pushed $got samples in $n profiles, $want in the file; spool: $(ls kspool)" &&
	test "$got" = "$want" && test "$n" -ge 5 &&
	test -z "$(ls kspool)" &&
	"$RSPROF" push --push-spool kspool kill.db http://127.0.0.1:$RPORT 2>again.err &&
	grep -q "0 profiles pushed" again.err
'
stop_receiver

PORT=$(free_port)
test_expect_success 'record --push to a store that is down: the rest left in the spool' '
	"$RSPROF" record -F 199 -i 250ms --no-heap --push-timeout 1s --push-spool lspool \
		--push-interval 1s --push http://127.0.0.1:'$PORT' -d 2 -p $pid -o left.db \
		2>left.err &&
	cat left.err &&
	grep -q "queued in lspool" left.err &&
	grep -q "rsprof push left.db http://127.0.0.1:'$PORT'/ingest" left.err
'
start_receiver r.next --port $PORT
test_expect_success 'the next record --push sends it first, and writes its ledger' '
	"$RSPROF" record -q -F 199 -i 250ms --no-heap --push-spool lspool --push-interval 1s \
		--push http://127.0.0.1:$RPORT -d 2 -p $pid -o next.db &&
	pcheck r.next errors && pcheck r.next dups &&
	test "$(pcheck r.next total samples/count)" = \
	     $(( $(total_of left.db cpu.total_samples) + $(total_of next.db cpu.total_samples) )) &&
	test -z "$(ls lspool)" &&
	test "$(sql left.db "SELECT COUNT(*) FROM pushes WHERE state = '"'pushed'"'")" -ge 2
'
stop_receiver

test_expect_success '--push with --append, or push options without --push: exit 2' '
	expect_exit 2 "$RSPROF" record --append --push http://127.0.0.1:1 -o live.db \
		-p $pid 2>app.err &&
	grep -q "with --append" app.err &&
	expect_exit 2 "$RSPROF" record --label a=b -p $pid 2>opt.err &&
	grep -q "need --push URL" opt.err &&
	expect_exit 2 "$RSPROF" record --push gopher://x -p $pid
'

test_done
