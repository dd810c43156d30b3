#!/bin/sh
# Several targets (issue 10): -p A,B and -p A -p B record both; -P never
# takes a kernel thread, and a process named exactly NAME wins over the
# ones whose names contain it.
#
# -P looks at every process of the machine: the names here carry this
# script's PID (cg$$, 15 characters of comm at most), so that another run of
# the suite beside this one (a chroot sharing the PID namespace) matches
# none of them.
. "$(dirname "$0")/lib.sh"

if ! have_perf; then
	test_skip 'record several targets' 'perf events not allowed here'
	test_done
fi

CG=cg$$
CG_OTHER=${CG}_other
RCU_APP=my_rcu$$
cp "$TARGETS/cpu_split" $CG
cp "$TARGETS/cpu_split" $CG_OTHER
./$CG 600 & p1=$!	# both killed at the end
bg_pid $p1
./$CG_OTHER 600 & p2=$!
bg_pid $p2
wait_exec $p1 ./$CG
wait_exec $p2 ./$CG_OTHER

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
	grep -q "$CG \[$p1\]" p.txt && grep -q "$CG_OTHER \[$p2\]" p.txt &&
	"$RSPROF" report --cpu --csv -n 1 --pid $p2 ab.db | grep -q ",work_a,"
'

test_expect_success 'bad PID lists: exit 2' '
	expect_exit 2 "$RSPROF" record -p "$p1,x" -o bad.db 2>err &&
	grep -q "not a process ID" err &&
	expect_exit 2 "$RSPROF" record -p "$p1," -o bad.db 2>/dev/null &&
	! test -e bad.db
'

test_expect_success "-P $CG: the program named so, not $CG_OTHER that contains the name" '
	"$RSPROF" record -q --no-heap -d 0.3s -P $CG -o byname.db &&
	test "$(sql byname.db "SELECT value FROM meta WHERE key = '\''pid'\''")" = $p1
'

# "rcu" is part of kernel threads' names (rcu_preempt, rcu_tasks_kthread...)
# and of $RCU_APP (my_rcu + PID), but no unique name makes a substring
# unique: another process of the machine may contain "rcu" too (the same
# test of a suite run beside this one). Then rsprof lists the matches (exit 2): $RCU_APP is
# among them, and no kernel thread (a child of kthreadd, PID 2).
cp "$TARGETS/cpu_split" $RCU_APP
./$RCU_APP 600 & p3=$!	# killed after the test
bg_pid $p3
wait_exec $p3 ./$RCU_APP
test_expect_success '-P rcu: kernel threads (rcu_preempt...) never match' '
	say "kernel threads named rcu*: $(ps -e -o comm= | grep -c "^rcu" || true)" &&
	"$RSPROF" record -q --no-heap -d 0.3s -P rcu -o rcu.db 2>err; r=$?;
	cat err &&
	if [ $r = 0 ]; then
		test "$(sql rcu.db "SELECT value FROM meta WHERE key = '\''pid'\''")" = $p3
	else
		test $r = 2 && grep -q "^ *$p3  *$RCU_APP\$" err &&
		sed -n "s/^ *\([0-9][0-9]*\)  .*/\1/p" err >listed &&
		say "other processes match rcu: $(grep -v "^$p3\$" listed | tr "\n" " ")" &&
		while read -r p; do
			pp=$(ps -o ppid= -p "$p" | tr -d " ") &&
			if [ "$p" = 2 ] || [ "$pp" = 2 ]; then
				echo "kernel thread $p listed"; exit 1
			fi
		done <listed
	fi
'
kill $p3

test_expect_success '-P g: several substring matches are listed, exit 2' '
	expect_exit 2 "$RSPROF" record -q --no-heap -d 0.3s -P g -o g.db 2>err &&
	cat err &&
	grep -q "$p1 *$CG$" err && grep -q "$p2 *$CG_OTHER$" err &&
	! grep -q kworker err
'

test_expect_success '-p on a kernel thread: refused' '
	expect_exit 2 "$RSPROF" record -q --no-heap -d 0.3s -p 2 -o k.db 2>err &&
	cat err && grep -q "kernel thread" err
'

test_done
