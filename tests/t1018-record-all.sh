#!/bin/sh
# record -a: every process of the host, as `perf record -a`: three programs
# started while it records are all in the profile, each as a process of its
# own (processes rows with comm and executable) with its own hot line;
# --comm and --cgroup narrow it; rsprof's own work and the idle task are
# not in it; -a --push sends one profile per process (service_name each).
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/push-lib.sh"

if ! have_perf || [ "$(id -u)" != 0 ] &&
   [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 0 ]; then
	test_skip 'record -a' 'perf events on every CPU need root or CAP_PERFMON'
	test_done
fi

hot() {	# FILE MARKER
	grep -n "/\* HOT:$2 \*/" "$TOP/tests/targets/$1" | cut -d: -f1
}

# the hottest line of process PID in FILE: "function:line"
top_line() {	# FILE PID
	"$RSPROF" report --json --cpu -n 1 --pid "$2" "$1" | python3 -c '
import json, sys
r = json.load(sys.stdin)["cpu"]["rows"][0]
print("%s:%s" % (r["function"], r["line"]))'
}

start_receiver r.all
# three programs started after the recording began
"$RSPROF" record -a -F 499 -i 250ms -d 4 --push http://127.0.0.1:$RPORT \
	--push-interval 2s --push-spool "$TEST_DIR/spool" -o all.db 2>all.err &
rec=$!
wait_checkpoints all.db 1
"$TARGETS/cpu_split" 1 &
p1=$!
"$TARGETS/cpu_duty" 2 5000 10 &
p2=$!
"$TARGETS/cpu_bench" 300 >/dev/null &
p3=$!
wait $p1 $p2 $p3
wait $rec
rc=$?
self=$rec

test_expect_success 'record -a: the recording ends at its duration' '
	cat all.err &&
	test '$rc' = 0 &&
	test "$(sql all.db "SELECT value FROM meta WHERE key = '"'target'"'")" = system &&
	grep -q "profile written to all.db" all.err
'

test_expect_success 'three programs started while recording: each a process of its own' '
	for p in '$p1' '$p2' '$p3'; do
		sql all.db "SELECT pid, comm, exe FROM processes WHERE pid = $p" >row.$p &&
		cat row.$p && test -s row.$p || exit 1
	done &&
	grep -q "|cpu_split|.*/cpu_split$" row.'$p1' &&
	grep -q "|cpu_duty|.*/cpu_duty$" row.'$p2' &&
	grep -q "|cpu_bench|.*/cpu_bench$" row.'$p3'
'

test_expect_success '... each with its own hot line' '
	test "$(top_line all.db '$p1')" = "work_a:$(hot cpu_split.c a)" &&
	test "$(top_line all.db '$p2')" = "duty:$(hot cpu_duty.c duty)" &&
	test "$(top_line all.db '$p3')" = "mix:$(hot cpu_bench.c mix)"
'

test_expect_success 'rsprof itself and the idle task are not in it' '
	test "$(sql all.db "SELECT COUNT(*) FROM cpu_samples WHERE pid IN (0, '$self')
		OR pid IS NULL")" = 0
'

test_expect_success '-a --push: one profile per process, its service_name' '
	pcheck r.all errors &&
	pcheck r.all labels >labels &&
	for s in cpu_split cpu_duty cpu_bench; do
		grep -q "\"service_name\": \"$s\"" labels || { echo "no $s"; exit 1; }
	done &&
	grep "\"pid\": \"'$p1'\"" labels | grep -q cpu_split &&
	test "$(pcheck r.all leaf samples/count work_a:$(hot cpu_split.c a))" -gt 0
'
stop_receiver

# a name of its own: the host may run other cpu_split
cp "$TARGETS/cpu_split" ./t1017-solo
"$RSPROF" record -q -a -F 499 -i 250ms -d 2 --comm t1017-solo -o comm.db &
rec=$!
wait_checkpoints comm.db 1
./t1017-solo 0.5 &
p4=$!
"$TARGETS/cpu_bench" 200 >/dev/null
wait $p4 $rec
rc=$?
test_expect_success '-a --comm NAME: the processes of that name alone' '
	test '$rc' = 0 &&
	test "$(sql comm.db "SELECT SUM(count) FROM cpu_samples WHERE pid = '$p4'")" -gt 10 &&
	test "$(sql comm.db "SELECT COUNT(*) FROM cpu_samples WHERE pid <> '$p4'")" = 0
'

cg=$(sed -n 's/^0:://p' /proc/self/cgroup)
"$RSPROF" record -q -a -F 499 -i 250ms -d 2 --cgroup "/sys/fs/cgroup$cg" -o cg.db &
rec=$!
"$RSPROF" record -q -a -F 499 -i 250ms -d 2 --cgroup /no/such/group -o nocg.db &
rec2=$!
wait_checkpoints cg.db 1
wait_checkpoints nocg.db 1
"$TARGETS/cpu_split" 0.5 &
p5=$!
wait $p5 $rec $rec2
test_expect_success '-a --cgroup PATH: the processes in it (this test'"'"'s), not others' '
	test -n "'"$cg"'" &&
	test "$(sql cg.db "SELECT SUM(count) FROM cpu_samples WHERE pid = '$p5'")" -gt 10 &&
	test "$(sql nocg.db "SELECT COUNT(*) FROM cpu_samples WHERE pid = '$p5'")" = 0
'

test_expect_success 'bad combinations: exit 2' '
	expect_exit 2 "$RSPROF" record -a -p $$ 2>e1 && grep -q "only one target" e1 &&
	expect_exit 2 "$RSPROF" record -a --no-cpu 2>e2 && grep -q "not with --no-cpu" e2 &&
	expect_exit 2 "$RSPROF" record --comm x -p $$ 2>e3 && grep -q "every process (-a)" e3 &&
	expect_exit 2 "$RSPROF" record -a --comm "" 2>e4
'

test_done
