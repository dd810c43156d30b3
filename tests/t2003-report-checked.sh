#!/bin/sh
# Arguments checked against the recording, on real recordings: a --pid the
# recording does not have, a window outside it (report, annotate,
# flamegraph, timeline, diff's FILE@A..B), and a heap sort key with --cpu
# are errors with exit 2 and a message that says what the recording has,
# never an empty table and exit 0.
. "$(dirname "$0")/lib.sh"

test_expect_success 'record cpu_split for about 2 s, and fork_workers (three processes)' '
	"$RSPROF" record -q -i 200ms -o c.db -- "$TARGETS/cpu_split" 2 >/dev/null &&
	d=$(sql c.db "SELECT MAX(timestamp_ms) FROM checkpoints") && echo "duration $d ms" &&
	# 2 s of CPU time: longer on a busy machine, below the 60 s of the windows below
	test "$d" -ge 1500 && test "$d" -lt 50000 &&
	"$RSPROF" record -q --no-heap -o f.db -- "$TARGETS/fork_workers" 1 >/dev/null &&
	test "$(sql f.db "SELECT COUNT(DISTINCT pid) FROM processes")" -ge 3
'

test_expect_success 'report --pid 1: not in the profile, exit 2, its PIDs named' '
	pid=$(sql c.db "SELECT value FROM meta WHERE key = \"pid\"") &&
	expect_exit 2 "$RSPROF" report --pid 1 c.db >out 2>err &&
	cat err && test ! -s out &&
	grep -q "^rsprof report: --pid 1: no such process in .c.db.$" err &&
	grep -q "^hint: it has process $pid (rsprof report -s process shows each)$" err &&
	for o in "" --json --csv --heap "--format folded" -g; do
		expect_exit 2 "$RSPROF" report $o --pid 1 c.db >/dev/null 2>&1 || return 1
	done &&
	"$RSPROF" report --cpu --pid "$pid" c.db >out && grep -q "work_a" out
'

test_expect_success 'report --pid in a process tree: every PID of it listed, each accepted' '
	expect_exit 2 "$RSPROF" report --pid 1 f.db 2>err && cat err &&
	for p in $(sql f.db "SELECT DISTINCT pid FROM processes"); do
		grep -q "^hint: it has processes .*\b$p\b" err &&
		"$RSPROF" report --cpu --pid "$p" f.db >/dev/null || return 1
	done
'

test_expect_success 'diff a.db@60s.. of a 2 s recording: exit 2, the length said' '
	expect_exit 2 "$RSPROF" diff c.db@60s.. c.db >out 2>err &&
	cat err && test ! -s out &&
	grep -q "^rsprof diff: c.db@60s..: starts at 1m00s, at or after the end of the recording, which is [0-9.]*s long$" err &&
	expect_exit 2 "$RSPROF" diff c.db c.db@1s..1s 2>err && cat err &&
	grep -q "an empty window (1.0s..1.0s)" err &&
	"$RSPROF" diff c.db@..1s c.db@1s.. >/dev/null
'

test_expect_success 'the same rule for report, annotate, flamegraph and timeline' '
	for w in "--window 60s.." "--window 1s..1s" "--until 0"; do
		for c in report annotate "flamegraph -o f.svg" timeline; do
			fn= && test "$c" != annotate || fn=work_a
			expect_exit 2 "$RSPROF" $c $w c.db $fn >out 2>err || return 1
			cat err
			grep -q "^rsprof [a-z]*: $w: " err || return 1
			grep -q "recording.s [0-9.]*s\|which is [0-9.]*s long" err || return 1
		done
	done &&
	for c in report timeline; do
		expect_exit 2 "$RSPROF" $c --since 0 c.db 2>err && cat err &&
		grep -q "^rsprof $c: --since 0: an empty window" err || return 1
	done &&
	# within the recording, or an end past it: the rest of it, as before
	"$RSPROF" report --window 500ms.. c.db >/dev/null &&
	"$RSPROF" report --until 30s c.db >/dev/null &&
	"$RSPROF" report --since 30s c.db >/dev/null &&
	"$RSPROF" timeline --window 500ms.. c.db >/dev/null
'

test_expect_success 'report --cpu --sort-by peak: refused, exit 2' '
	expect_exit 2 "$RSPROF" report --cpu --sort-by peak c.db >out 2>err &&
	cat err && test ! -s out &&
	grep -q "^rsprof report: --sort-by peak ranks the heap table, and --cpu shows none$" err &&
	for k in live allocated allocs temporary; do
		expect_exit 2 "$RSPROF" report --cpu --sort-by $k c.db 2>/dev/null || return 1
	done &&
	"$RSPROF" report --heap --sort-by peak c.db >/dev/null &&
	"$RSPROF" report --sort-by peak c.db >/dev/null
'

test_done
