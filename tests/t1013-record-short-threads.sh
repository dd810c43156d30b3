#!/bin/sh
# Short-lived threads are sampled from their first instruction (issue 10):
# a worker pool that starts a thread per 5 ms task, recorded by rsprof and
# by perf record: samples per CPU second of the pool's tasks within 20 % of
# perf's (the program writes the CPU time it used, so a busy machine does
# not skew the comparison).
. "$(dirname "$0")/lib.sh"

if ! have_perf; then
	test_skip 'short-lived threads' 'perf events not allowed here'
	test_done
fi
if ! command -v perf >/dev/null 2>&1 || ! perf record -B --no-bpf-event -q -o probe.data -- true 2>/dev/null; then
	test_skip 'short-lived threads against perf' 'perf record does not run here'
	test_done
fi

test_expect_success 'rsprof record -- thread_pool: the 5 ms threads are sampled' '
	"$RSPROF" record -q --no-heap -F 999 -o pool.db -- "$TARGETS/thread_pool" 3 rs.cpu &&
	n=$(sql pool.db "SELECT COALESCE(SUM(c.count), 0) FROM cpu_samples c JOIN symbols s
		ON c.addr = s.addr WHERE s.function = '\''pool_task'\''") &&
	echo "$n" >rs.n &&
	say "rsprof: $n samples in pool_task, $(cat rs.cpu) (CPU s, threads)" &&
	test "$n" -ge 20
'

test_expect_success 'perf record -- thread_pool' '
	perf record -B --no-bpf-event -q -F 999 -o pool.perf -- "$TARGETS/thread_pool" 3 perf.cpu 2>/dev/null &&
	perf script -i pool.perf -F ip,sym 2>/dev/null | grep -c " pool_task$" >perf.n &&
	say "perf: $(cat perf.n) samples in pool_task, $(cat perf.cpu) (CPU s, threads)" &&
	test "$(cat perf.n)" -ge 20
'

test_expect_success 'samples per CPU second: rsprof within 20 % of perf' '
	awk -v rn="$(cat rs.n)" -v pn="$(cat perf.n)" -v rc="$(cut -d" " -f1 rs.cpu)" \
	    -v pc="$(cut -d" " -f1 perf.cpu)" "BEGIN {
		r = rn / rc; p = pn / pc; q = r / p;
		printf \"# rsprof %.1f/s, perf %.1f/s: ratio %.2f\\n\", r, p, q;
		exit !(q >= 0.8 && q <= 1.2) }"
'

test_expect_success 'the threads are counted: one per task and the main thread' '
	t=$(sql pool.db "SELECT value FROM meta WHERE key = '\''threads'\''") &&
	want=$(cut -d" " -f2 rs.cpu) &&
	say "$t threads followed, $want tasks" &&
	test "$t" -ge "$want"
'

test_done
