#!/bin/sh
# CPU call stacks of a program built without frame pointers, against perf:
# Debian's python3.11 running a Python loop, recorded at the same time by
# `rsprof record -g -p` and `perf record --call-graph dwarf -p`. rsprof's
# stacks reach _start as perf's do, and the top five callers of
# _PyEval_EvalFrameDefault agree with perf's within 3 points.
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3.11
if ! have_perf; then
	test_skip 'python call stacks' 'perf events not allowed here'
	test_done
fi
if ! [ -x "$PY" ] || ! command -v perf >/dev/null 2>&1; then
	test_skip 'python call stacks' 'Debian python3.11 or perf missing (scripts/packages.txt)'
	test_done
fi

cat >loop.py <<'PY'
import sys, time
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
def square(x):
    return x * x
def work():
    s = sum(map(square, range(2000)))
    s += sum(sorted(range(2000), key=lambda v: -v)[:10])
    s += sum(x * x for x in range(2000))
    return s
end = time.time() + float(sys.argv[1])
while time.time() < end:
    fib(15)
    work()
PY

test_expect_success 'python3.11 -g and perf --call-graph dwarf on the same run' '
	"$PY" loop.py 8 & bg_pid $! && pid=$! &&
	sleep 0.5 &&
	{ perf record -B --no-bpf-event -q -e cpu-clock:u --call-graph dwarf -F 499 -p $pid -o perf.data -- sleep 4 \
		2>perf.err & } && perfpid=$! &&
	"$RSPROF" record -q -g -F 499 --user-only --no-heap -p $pid -d 4 -o py.db &&
	wait $perfpid && cat perf.err &&
	perf script -F ip,sym -i perf.data >perf.txt 2>/dev/null &&
	"$RSPROF" report --format folded py.db >py.folded &&
	test -s perf.txt && test -s py.folded
'

test_expect_success 'the stacks reach _start as perf'"'"'s do' '
	n=$(awk "{ s += \$NF } /^_start;/ { w += \$NF } END { printf \"%d %d\", w, s }" py.folded) &&
	set -- $n && echo "rsprof: $1 of $2 samples reach _start" &&
	test $(($1 * 100)) -ge $(($2 * 90)) &&
	t=$(sql py.db "SELECT value FROM meta WHERE key = '"'cpu_stacks_truncated'"'") &&
	echo "$t truncated" && test $((t * 10)) -le $2
'

test_expect_success 'callers of _PyEval_EvalFrameDefault: perf'"'"'s top five within 3 points' '
	python3 "$TEST_SRC/callers-compare.py" perf.txt py.folded _PyEval_EvalFrameDefault 3
'

test_done
