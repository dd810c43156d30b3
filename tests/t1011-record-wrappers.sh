#!/bin/sh
# Wrappers are not errors (issue 10): env, nice, timeout, taskset, sh -c
# exec or fork the real program; the debug information is judged on the
# programs that got samples, at the end. Exit 5 only when none of them has
# debug information or symbols.
. "$(dirname "$0")/lib.sh"

SRC=$TEST_SRC/targets/cpu_split.c
line_of() {
	grep -n "/\* HOT:$1 \*/" "$SRC" | cut -d: -f1
}

if ! have_perf; then
	test_skip 'record through wrappers' 'perf events not allowed here'
	test_done
fi

cp "$TARGETS/cpu_split" .
cp "$TARGETS/cpu_split" nodebug && strip --strip-all nodebug

# The top line's share of work_a, by SQL.
work_a() {
	sql "$1" "SELECT COALESCE(SUM(c.count), 0) * 100 / (SELECT SUM(count) FROM cpu_samples)
		FROM cpu_samples c JOIN symbols s ON c.addr = s.addr
		WHERE s.file LIKE '%cpu_split.c' AND s.line = $(line_of a)"
}

# --user-only: shares of user time, which the program's own code splits
# by construction; a loaded machine adds kernel samples of being preempted
# (finish_task_switch..., up to 14 % seen) to the total (t1015 is the test
# of kernel time).
# wrapped DB COMMAND...: record it, no debug-information complaint, work_a ~60 %
wrapped() {
	db=$1
	shift
	"$RSPROF" record --no-heap --user-only -F 499 -o "$db" -- "$@" 2>err &&
	cat err &&
	! grep -q "debug information" err && ! grep -q "^rsprof record: error" err &&
	a=$(work_a "$db") &&
	say "$*: work_a $a %" &&
	test "$a" -ge 48 && test "$a" -le 72
}

test_expect_success 'record -- env X=1 ./cpu_split' 'wrapped w1.db env X=1 ./cpu_split 1.2 0'
test_expect_success 'record -- nice -n 5 ./cpu_split' 'wrapped w2.db nice -n 5 ./cpu_split 1.2 0'
test_expect_success 'record -- timeout 20 ./cpu_split' 'wrapped w3.db timeout 20 ./cpu_split 1.2 0'
test_expect_success 'record -- taskset -c 0 ./cpu_split' \
	'wrapped w4.db taskset -c 0 ./cpu_split 1.2 0'
test_expect_success 'record -- sh -c "./cpu_split"' 'wrapped w5.db sh -c "./cpu_split 1.2 0"'
test_expect_success 'record -- bash -c "./cpu_split; true"' \
	'wrapped w6.db bash -c "./cpu_split 1.2 0; true"'

test_expect_success 'the wrapper and the program are both in processes' '
	sql w1.db "SELECT comm FROM processes ORDER BY start_ms" | tr "\n" " " >comms &&
	cat comms && grep -q "cpu_split" comms &&
	sql w6.db "SELECT comm FROM processes ORDER BY start_ms" | tr "\n" " " >comms &&
	cat comms && grep -q "bash" comms && grep -q "cpu_split" comms
'

# a stripped program is recorded as perf records it (t1017 has the rest)
# Kept with a warning when its libraries or the kernel got samples; on a
# busy machine a run may get none of those (its loop alone), and then
# nothing could be named: exit 5. Either way the program is named, not env.
test_expect_success 'a wrapper around a program without debug information: the program named' '
	st=0 && "$RSPROF" record --no-heap -o nd.db -- env X=1 ./nodebug 1 2>err || st=$? &&
	cat err && echo "# exit $st" &&
	grep -q "nodebug has no debug information and no symbol table" err &&
	grep -q "^hint:" err && ! grep -q "env has no" err &&
	if test $st = 0; then
		grep -q "nodebug has no debug information and no symbol table: its own code" err &&
		test -s nd.db
	else
		test $st = 5 && grep -q "nothing recorded could be named" err
	fi
'

test_expect_success 'a stripped wrapper with symbols only: no warning about it' '
	"$RSPROF" record -q --no-heap -o sw.db -- timeout 20 ./cpu_split 0.8 0 2>err &&
	cat err && ! grep -q timeout err
'

test_done
