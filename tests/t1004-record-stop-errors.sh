#!/bin/sh
# SIGINT finalises the file; bad targets and arguments give SPEC §2's exit codes.
. "$(dirname "$0")/lib.sh"

if ! have_perf; then
	test_skip 'record stop and errors' 'perf events not allowed here'
	test_done
fi

"$TARGETS/cpu_split" 600 &	# killed at the end
pid=$!
bg_pid $pid
wait_exec $pid "$TARGETS/cpu_split"

test_expect_success 'SIGINT during a recording: exit 0, file finalised' '
	"$RSPROF" record -q --no-heap -p '"$pid"' -i 200ms -o int.db &
	rec=$! &&
	wait_checkpoints int.db 3 &&
	kill -INT $rec &&
	wait $rec &&
	test "$(sql int.db "SELECT value FROM meta WHERE key = '\''stop_reason'\''")" = signal &&
	test -n "$(sql int.db "SELECT value FROM meta WHERE key = '\''end_time'\''")" &&
	test "$(sql int.db "SELECT COUNT(*) FROM checkpoints")" -ge 4 &&
	kill -0 '"$pid"'
'

test_expect_success 'the interrupted file passes the integrity check' '
	test "$(sql int.db "PRAGMA integrity_check")" = ok &&
	"$RSPROF" info --check int.db >out &&
	cat out && grep -q "ok" out
'

test_expect_success 'SIGTERM also finalises' '
	"$RSPROF" record -q --no-heap -p '"$pid"' -o term.db &
	rec=$! &&
	wait_checkpoints term.db &&
	kill -TERM $rec &&
	wait $rec &&
	test "$(sql term.db "SELECT value FROM meta WHERE key = '\''stop_reason'\''")" = signal
'

test_expect_success 'SIGQUIT: rsprof exits at once, the checkpoints so far are readable' '
	"$RSPROF" record -q --no-heap -p '"$pid"' -i 200ms -o quit.db &
	rec=$! &&
	wait_checkpoints quit.db &&
	kill -QUIT $rec;
	wait $rec; r=$?;
	test $r != 0 &&
	test "$(sql quit.db "PRAGMA integrity_check")" = ok &&
	test "$(sql quit.db "SELECT COUNT(*) FROM checkpoints")" -ge 1 &&
	test -z "$(sql quit.db "SELECT value FROM meta WHERE key = '\''end_time'\''")" &&
	kill -0 '"$pid"'
'

test_expect_success 'an existing file is not overwritten (exit 6)' '
	expect_exit 6 "$RSPROF" record -q --no-heap -p '"$pid"' -d 1 -o int.db 2>err &&
	grep -q "exists" err && grep -q "^hint:" err
'

test_expect_success '--append adds checkpoints after the last one' '
	before=$(sql term.db "SELECT MAX(timestamp_ms) FROM checkpoints") &&
	"$RSPROF" record -q --no-heap -p '"$pid"' -d 0.5 --append -o term.db &&
	test "$(sql term.db "SELECT MIN(timestamp_ms) FROM checkpoints WHERE id > (SELECT MIN(id) FROM checkpoints) AND timestamp_ms > $before")" -gt "$before"
'

test_expect_success 'no such PID: exit 3' '
	expect_exit 3 "$RSPROF" record -p 999999999 -o x.db 2>err &&
	grep -q "999999999" err && ! test -e x.db
'

test_expect_success 'no such process name: exit 3' '
	expect_exit 3 "$RSPROF" record -P no-such-name-here -o x.db 2>err &&
	grep -q "no-such-name-here" err
'

test_expect_success '-P with several matches: exit 2 and the list' '
	"$TARGETS/cpu_split" 30 & p2=$! &&
	wait_exec $p2 "$TARGETS/cpu_split" &&
	expect_exit 2 "$RSPROF" record -P cpu_split -o x.db 2>err;
	r=$?; kill $p2; cat err; test $r = 0 &&
	grep -q "'"$pid"'" err && grep -q "$p2" err && ! test -e x.db
'

test_expect_success 'bad duration: exit 2' '
	expect_exit 2 "$RSPROF" record -d 3x -p '"$pid"' 2>err &&
	grep -q "3x" err
'

test_expect_success 'bad frequency, bad interval, bad heap options: exit 2' '
	expect_exit 2 "$RSPROF" record -F 0 -p '"$pid"' &&
	expect_exit 2 "$RSPROF" record -F abc -p '"$pid"' &&
	expect_exit 2 "$RSPROF" record -i 1ms -p '"$pid"' &&
	expect_exit 2 "$RSPROF" record --heap-probes=jemalloc -p '"$pid"' &&
	expect_exit 2 "$RSPROF" record --heap-sample=0 -p '"$pid"' &&
	expect_exit 2 "$RSPROF" record --heap-attribution=x -p '"$pid"' &&
	RSPROF_INTERVAL=soon expect_exit 2 "$RSPROF" record -p '"$pid"'
'

test_expect_success 'no target, two targets, unknown option: exit 2' '
	expect_exit 2 "$RSPROF" record &&
	expect_exit 2 "$RSPROF" record -p '"$pid"' -- true &&
	expect_exit 2 "$RSPROF" record --bogus -p '"$pid"' &&
	expect_exit 2 "$RSPROF" record --no-cpu --no-heap -p '"$pid"'
'

test_expect_success 'options after the command belong to the command' '
	"$RSPROF" record -q --no-heap -o posix.db -- "$TARGETS/cpu_split" 0.2 -p 1 &&
	sql posix.db "SELECT value FROM meta WHERE key = '\''command'\''" | grep -q -- "-p 1$"
'

test_expect_success 'file mode 0600' '
	test "$(stat -c %a int.db)" = 600 && test "$(stat -c %a posix.db)" = 600
'

test_done
