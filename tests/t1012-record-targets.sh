#!/bin/sh
# Several targets (issue 10): -p A,B and -p A -p B record both; -P never
# takes a kernel thread, and a process named exactly NAME wins over the
# ones whose names contain it.
. "$(dirname "$0")/lib.sh"

if ! have_perf; then
	test_skip 'record several targets' 'perf events not allowed here'
	test_done
fi

cp "$TARGETS/cpu_split" cg
cp "$TARGETS/cpu_split" cg_other
./cg 30 & p1=$!
bg_pid $p1
./cg_other 30 & p2=$!
bg_pid $p2
wait_exec $p1 ./cg
wait_exec $p2 ./cg_other

samples_of() {	# DB PID
	sql "$1" "SELECT COALESCE(SUM(count), 0) FROM cpu_samples WHERE pid = $2"
}

test_expect_success '-p A,B: both processes recorded, each with its samples' '
	"$RSPROF" record -q --no-heap -F 499 -d 1.5s -p $p1,$p2 -o ab.db &&
	a=$(samples_of ab.db $p1) && b=$(samples_of ab.db $p2) &&
	say "pid $p1: $a samples, pid $p2: $b samples" &&
	test "$a" -ge 20 && test "$b" -ge 20 &&
	test "$(sql ab.db "SELECT value FROM meta WHERE key = '\''pids'\''")" = "$p1,$p2" &&
	test "$(sql ab.db "SELECT value FROM meta WHERE key = '\''pid'\''")" = "$p1"
'

test_expect_success '-p A -p B: the same (the last -p does not replace the first)' '
	"$RSPROF" record -q --no-heap -F 499 -d 1s -p $p1 -p $p2 -o ab2.db &&
	test "$(samples_of ab2.db $p1)" -ge 10 && test "$(samples_of ab2.db $p2)" -ge 10
'

test_expect_success 'report --pid and -s process on two targets' '
	"$RSPROF" report --cpu -s process ab.db >p.txt &&
	cat p.txt &&
	grep -q "cg \[$p1\]" p.txt && grep -q "cg_other \[$p2\]" p.txt &&
	"$RSPROF" report --cpu --csv -n 1 --pid $p2 ab.db | grep -q ",work_a,"
'

test_expect_success 'bad PID lists: exit 2' '
	expect_exit 2 "$RSPROF" record -p "$p1,x" -o bad.db 2>err &&
	grep -q "not a process ID" err &&
	expect_exit 2 "$RSPROF" record -p "$p1," -o bad.db 2>/dev/null &&
	! test -e bad.db
'

kthread=$(ps -e -o comm= | grep -E "^kworker/.*cg" | head -1)
test_expect_success "-P cg: the program named cg, not a kernel thread${kthread:+ ($kthread)}" '
	"$RSPROF" record -q --no-heap -d 0.3s -P cg -o byname.db &&
	test "$(sql byname.db "SELECT value FROM meta WHERE key = '\''pid'\''")" = $p1
'

test_expect_success '-P rcu: kernel threads (rcu_preempt...) never match' '
	cp "$TARGETS/cpu_split" my_rcu_app &&
	{ ./my_rcu_app 30 & p3=$!; } &&
	test_bg_pids="$test_bg_pids $p3" && wait_exec $p3 ./my_rcu_app &&
	"$RSPROF" record -q --no-heap -d 0.3s -P rcu -o rcu.db 2>err &&
	cat err &&
	test "$(sql rcu.db "SELECT value FROM meta WHERE key = '\''pid'\''")" = $p3
'

test_expect_success '-P g: several substring matches are listed, exit 2' '
	expect_exit 2 "$RSPROF" record -q --no-heap -d 0.3s -P g -o g.db 2>err &&
	cat err &&
	grep -q "$p1 *cg$" err && grep -q "$p2 *cg_other$" err &&
	! grep -q kworker err
'

test_expect_success '-p on a kernel thread: refused' '
	expect_exit 2 "$RSPROF" record -q --no-heap -d 0.3s -p 2 -o k.db 2>err &&
	cat err && grep -q "kernel thread" err
'

test_done
