#!/bin/sh
# Threads that start after rsprof attached are sampled; their hot lines show.
. "$(dirname "$0")/lib.sh"

SRC=$TEST_SRC/targets/cpu_threads.c
line_of() {
	grep -n "/\* HOT:$1 \*/" "$SRC" | cut -d: -f1
}

if ! have_perf; then
	test_skip 'record threads started late' 'perf events not allowed here'
	test_done
fi

"$TARGETS/cpu_threads" "$TEST_DIR/go" 2 &
pid=$!
bg_pid $pid
wait_exec $pid "$TARGETS/cpu_threads"

test_expect_success 'record -p PID; the threads start once recording' '
	"$RSPROF" record -q --no-heap -p '"$pid"' -F 499 -o threads.db &
	rec=$! &&
	wait_checkpoints threads.db &&
	touch "$TEST_DIR/go" &&
	wait $rec &&
	test "$(sql threads.db "SELECT value FROM meta WHERE key = '\''stop_reason'\''")" = target-exit
'

test_expect_success 'every thread was sampled' '
	test "$(sql threads.db "SELECT value FROM meta WHERE key = '\''threads'\''")" -ge 4
'

for t in t1 t2 t3; do
	test_expect_success "thread $t: its hot line has samples" '
		n=$(sql threads.db "SELECT COALESCE(SUM(c.count), 0) FROM cpu_samples c
			JOIN symbols s ON c.addr = s.addr
			WHERE s.file LIKE '\''%cpu_threads.c'\'' AND s.line = $(line_of '$t')") &&
		say "'$t': $n samples" &&
		test "$n" -ge 50
	'
done

test_expect_success 'record -- CMD: threads started after exec are sampled too' '
	touch go-now &&
	"$RSPROF" record -q --no-heap -F 499 -o launched.db -- "$TARGETS/cpu_threads" go-now 1.5 &&
	for f in thread_one thread_two thread_three; do
		n=$(sql launched.db "SELECT COALESCE(SUM(c.count), 0) FROM cpu_samples c
			JOIN symbols s ON c.addr = s.addr WHERE s.function = '\''$f'\''") &&
		say "$f: $n samples" &&
		test "$n" -ge 30 || exit 1
	done
'

test_expect_success 'thread churn: new threads followed, dead ones closed' '
	"$TARGETS/cpu_churn" 3 & churn=$! &&
	wait_exec $churn "$TARGETS/cpu_churn" &&
	"$RSPROF" record -q --no-heap -F 499 -p $churn -o churn.db &
	rec=$! &&
	sleep 1.5 &&
	fds=$(ls /proc/$rec/fd | wc -l) &&
	wait $rec &&
	seen=$(sql churn.db "SELECT value FROM meta WHERE key = '\''threads'\''") &&
	n=$(sql churn.db "SELECT COALESCE(SUM(c.count), 0) FROM cpu_samples c
		JOIN symbols s ON c.addr = s.addr WHERE s.function = '\''churn'\''") &&
	say "$fds open fds at 1.5 s, $seen threads followed, $n samples in churn" &&
	test "$fds" -lt 30 && test "$seen" -ge 10 && test "$n" -ge 20
'

test_done
