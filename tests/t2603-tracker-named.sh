#!/bin/sh
# The in-process heap tracker is named as what it is wherever it shows: its
# CPU rows are `[rsprof heap tracking]` in their module too (not the private
# directory it was loaded from, another each run), so `diff` of two runs
# matches them instead of calling them gone and new; and a pprof export is
# named after the program (its mapping first), not after the tracker.
. "$(dirname "$0")/lib.sh"

if ! have_perf; then
	test_skip 'the tracker named' 'perf events not allowed here'
	test_done
fi

# samples of the tracker in a profile
tracker_samples() {
	sql "$1" "SELECT COALESCE(SUM(c.count), 0) FROM cpu_samples c JOIN symbols s
		ON s.addr = c.addr WHERE s.function = '"'[rsprof heap tracking]'"'"
}

# Each run must have samples in the tracker (1-3 % of ~130): a run that
# has none is recorded again, up to four times.
test_expect_success 'two runs with the tracker: its rows, module included' '
	for i in 1 2; do
		for try in 1 2 3 4; do
			rm -f run$i.db &&
			"$RSPROF" record -q -F 999 -o run$i.db -- "$TARGETS/heap_bench" 2000000 \
				>/dev/null || exit 1
			test "$(tracker_samples run$i.db)" -gt 0 && break
		done
		test "$(tracker_samples run$i.db)" -gt 0 || exit 1
	done &&
	sql run1.db "SELECT DISTINCT module FROM symbols WHERE function = '"'[rsprof heap tracking]'"'" >mods &&
	cat mods && test "$(cat mods)" = "[rsprof heap tracking]" &&
	! sql run1.db "SELECT module FROM symbols" | grep -q "rsprof-heap\."
'

test_expect_success 'diff: the tracker is neither gone nor new' '
	"$RSPROF" diff --cpu --csv -n 100000 run1.db run2.db >d.csv && cat d.csv &&
	grep "rsprof heap tracking" d.csv >t.csv && test "$(wc -l <t.csv)" = 1 &&
	! grep -q ",gone,\|,new," t.csv
'

if command -v go >/dev/null 2>&1; then
	test_expect_success 'go tool pprof: the profile is the program'"'"'s' '
		"$RSPROF" report --format pprof -o cpu.pb.gz run1.db &&
		go tool pprof -top cpu.pb.gz 2>/dev/null | head -1 | grep -qx "File: heap_bench" &&
		"$RSPROF" report --heap --format pprof -o heap.pb.gz run1.db &&
		go tool pprof -top heap.pb.gz 2>/dev/null | head -1 | grep -qx "File: heap_bench"
	'
else
	test_skip 'go tool pprof' 'golang-go missing (scripts/packages.txt, test group)'
fi

test_done
