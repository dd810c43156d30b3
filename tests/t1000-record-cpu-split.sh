#!/bin/sh
# record -p at 999 Hz: three functions at ~60/30/10 % land on their own lines.
. "$(dirname "$0")/lib.sh"

SRC=$TEST_SRC/targets/cpu_split.c
line_of() {
	grep -n "/\* HOT:$1 \*/" "$SRC" | cut -d: -f1
}

if ! have_perf; then
	test_skip 'record cpu_split by PID' 'perf events not allowed here'
	test_done
fi

"$TARGETS/cpu_split" 600 &	# killed once recorded
pid=$!
bg_pid $pid
wait_exec $pid "$TARGETS/cpu_split"

# --user-only: shares of user time, which the program's own code splits
# by construction; a loaded machine adds kernel samples of being preempted
# (finish_task_switch..., up to 14 % seen) to the total (t1015 is the test
# of kernel time).
test_expect_success 'record -p PID -F 999 for 3s' '
	"$RSPROF" record -q --no-heap --user-only -p '"$pid"' -F 999 -d 3.5s -o split.db &&
	test -s split.db
'
kill $pid

test_expect_success 'the file holds the run: meta, checkpoints, samples' '
	test "$(sql split.db "SELECT value FROM meta WHERE key = '\''cpu_freq_hz'\''")" = 999 &&
	test "$(sql split.db "SELECT value FROM meta WHERE key = '\''stop_reason'\''")" = duration &&
	test "$(sql split.db "SELECT value FROM meta WHERE key = '\''pid'\''")" = '"$pid"' &&
	n=$(sql split.db "SELECT COUNT(*) FROM checkpoints") &&
	test "$n" -ge 3 && test "$n" -le 5 &&
	s=$(sql split.db "SELECT SUM(count) FROM cpu_samples") &&
	say "$s samples in $n checkpoints" &&
	test "$s" -ge 300	# 999 Hz of the CPU time the target got (a busy CI box)
'

# The top three CPU lines of `rsprof report --csv`, as "line|function|pct"
# (columns found by their header names).
test_expect_success 'rsprof report --csv' '
	"$RSPROF" report --cpu --csv -n 3 split.db >report.csv &&
	cat report.csv &&
	awk -F, '\''NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		{ print $col["line"] "|" $col["function"] "|" $col["pct"] }'\'' report.csv >top3 &&
	test "$(wc -l <top3)" = 3
'

check_line() {	# rank, marker, expected share
	row=$(sed -n "$1p" top3)
	line=$(echo "$row" | cut -d'|' -f1)
	pct=$(echo "$row" | cut -d'|' -f3 | cut -d. -f1)
	say "rank $1: $row (want line $(line_of "$2"), $3 %)"
	test "$line" = "$(line_of "$2")" &&
	test "$pct" -ge $(($3 - 8)) && test "$pct" -le $(($3 + 8))
}

test_expect_success 'top line: work_a, 60 % +- 8' 'check_line 1 a 60'
test_expect_success 'second line: work_b, 30 % +- 8' 'check_line 2 b 30'
test_expect_success 'third line: work_c, 10 % +- 8' 'check_line 3 c 10'

# Rows without a line (kernel functions, counted since kernel time is) are
# one group here but one row per function in report: left out.
test_expect_success 'the same order from the file by SQL' '
	sql split.db "SELECT s.line FROM cpu_samples c JOIN symbols s ON c.addr = s.addr
		WHERE s.line IS NOT NULL
		GROUP BY s.file, s.line ORDER BY SUM(c.count) DESC LIMIT 3" >seed3 &&
	cut -d"|" -f1 top3 >report3 &&
	diff seed3 report3
'

test_expect_success 'the file is mode 0600' '
	test "$(stat -c %a split.db)" = 600
'

test_done
