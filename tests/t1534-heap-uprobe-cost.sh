#!/bin/sh
# With uprobes (an attached process), the probes' whole cost (the trap,
# the kernel's uprobe handling, the BPF program and what it calls) is the
# one [rsprof heap tracking] row of the CPU table, never kernel rows that
# look like the program's; the summary says what the backend costs per
# allocation, measured when the CPU is sampled.
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

if backend_ok uprobe; then
	test_expect_success 'attached: the probes'"'"' time is one [rsprof heap tracking] row' '
		"$TARGETS/heap_bench" 300000 3000 >/dev/null & pid=$! &&
		sleep 0.3 &&
		"$RSPROF" record -F 999 -o up.db -p $pid 2>sum; rc=$?; wait $pid; test $rc = 0 &&
		cat sum &&
		grep -q "the uprobes cost the program ~[0-9.]* [un]s of CPU per allocation" sum &&
		"$RSPROF" report --cpu --csv -n 20 up.db >cpu.csv && cat cpu.csv &&
		sed -n 2p cpu.csv | grep -q "\[rsprof heap tracking\]" &&
		test "$(grep -c "\[rsprof heap tracking\]" cpu.csv)" = 1 &&
		! grep -E ",(bpf_prog_|htab_|uprobe_|handle_swbp|__get_user_handle_exception)" cpu.csv
	'

	test_expect_success 'without CPU sampling: the summary says the cost per call' '
		"$TARGETS/heap_bench" 300000 3000 >/dev/null & pid=$! &&
		sleep 0.3 &&
		"$RSPROF" record --no-cpu -o up2.db -p $pid 2>sum2; rc=$?; wait $pid; test $rc = 0 &&
		grep -q "the uprobes cost the program a trap into the kernel per allocation" sum2
	'
fi

test_done
