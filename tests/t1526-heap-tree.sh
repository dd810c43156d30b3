#!/bin/sh
# Heap tracking of a process tree (issues 8, 10): every process of the
# tree the launched command starts is tracked in-process, each in its own
# region, its rows with its pid: fork children, a program run by a shell
# (bash -c), a program exec'd with an empty environment (env -i). A
# SIGKILL of rsprof leaves nothing in $TMPDIR.
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

SRC=$TEST_SRC/targets/heap_tree.c
L_PARENT=$(line_of TREE_PARENT "$SRC")
L_A=$(line_of TREE_CHILD_A "$SRC")
L_B=$(line_of TREE_CHILD_B "$SRC")
L_CHURN=$(line_of TREE_CHURN "$SRC")
L_FOPEN=$(line_of TREE_FOPEN "$SRC")
L_STDIO=$(line_of TREE_STDIO "$SRC")

# pid_lines FILE: "pid|line|live|allocs|frees" of heap_tree.c
pid_lines() {
	sql "$1" "SELECT h.pid, s.line, SUM(h.alloc_bytes) - SUM(h.free_bytes),
			 SUM(h.alloc_count), SUM(h.free_count)
		  FROM heap_events h JOIN symbols s ON h.addr = s.addr
		  WHERE s.file LIKE '%heap_tree.c' GROUP BY h.pid, s.line ORDER BY h.pid, s.line"
}

# the tree's expected lines, the parent's pid in DIR/parent; the parent's
# fopen and fprintf hold glibc's FILE and its buffer, on the lines that
# called them (glibc's own frames are never the site), freed by fclose
check_tree() {	# LINES DIR
	p=$(cat "$2/parent") &&
	grep -qx "$p|$L_PARENT|$((80 * 4096))|100|20" "$1" &&
	a=$(grep "|$L_A|$((3 * 65536))|3|0\$" "$1" | cut -d"|" -f1) &&
	b=$(grep "|$L_B|$((5 * 32768))|5|0\$" "$1" | cut -d"|" -f1) &&
	test -n "$a" && test -n "$b" && test "$a" != "$p" && test "$b" != "$p" &&
	test "$a" != "$b" &&
	grep -qx "$a|$L_CHURN|0|1000|1000" "$1" && grep -qx "$b|$L_CHURN|0|1000|1000" "$1" &&
	test "$(grep -c "^$a|" "$1")" = 2 && test "$(grep -c "^$b|" "$1")" = 2 &&
	grep -qx "$p|$L_FOPEN|0|1|1" "$1" && grep -qx "$p|$L_STDIO|0|1|1" "$1" &&
	test "$(grep -c "^$p|" "$1")" = 3
}

test_expect_success 'record -- heap_tree: the parent and both children' '
	mkdir -p t && "$RSPROF" record -q --heap-backend preload -o tree.db -- \
		"$TARGETS/heap_tree" "$PWD/t" &&
	pid_lines tree.db >lines && cat lines && check_tree lines t
'

test_expect_success 'what the children inherited: their unknown frees, never a site below zero' '
	test "$(meta tree.db unknown_frees)" = 200 && no_negative_site tree.db
'

test_expect_success 'live heap = sum of the sites (the children'"'"'s leaks included)' '
	sum=$(sql tree.db "SELECT SUM(alloc_bytes) - SUM(free_bytes) FROM heap_events") &&
	last=$(sql tree.db "SELECT heap_live_bytes FROM checkpoints ORDER BY id DESC LIMIT 1") &&
	echo "sum $sum, live $last" && test "$sum" = "$last" &&
	test "$sum" = $((80 * 4096 + 3 * 65536 + 5 * 32768))
'

test_expect_success 'the processes table has the children; report --heap -s process splits them' '
	test "$(sql tree.db "SELECT COUNT(DISTINCT pid) FROM processes WHERE comm = '"'"'heap_tree'"'"'")" = 3 &&
	"$RSPROF" report --heap -s process tree.db >proc.out && cat proc.out &&
	test "$(grep -c "heap_tree \[" proc.out)" = 3 &&
	grep -q "^ *320 KiB .*heap_tree \[$(cat t/parent)\]" proc.out &&
	grep -q "^ *192 KiB .*heap_tree \[" proc.out &&
	grep -q "^ *160 KiB .*heap_tree \[" proc.out
'

test_expect_success 'report --heap --pid CHILD: only that child'"'"'s lines' '
	a=$(grep "|$L_A|" lines | cut -d"|" -f1) &&
	"$RSPROF" report --heap --pid "$a" tree.db >pid.out && cat pid.out &&
	grep -q "heap_tree.c:$L_A" pid.out && ! grep -q "heap_tree.c:$L_PARENT" pid.out &&
	! grep -q "heap_tree.c:$L_B" pid.out
'

test_expect_success 'top --stdio -s process heap: a row per process' '
	"$RSPROF" top --stdio -s process heap tree.db >top.out && cat top.out &&
	test "$(grep -c "heap_tree \[" top.out)" = 3 &&
	grep -q "^ *320 KiB .*heap_tree \[$(cat t/parent)\]" top.out &&
	expect_exit 2 "$RSPROF" top --stdio -s function tree.db
'

test_expect_success '--no-inherit: the launched process only, as before' '
	mkdir -p n && "$RSPROF" record -q --no-inherit --heap-backend preload -o noinh.db -- \
		"$TARGETS/heap_tree" "$PWD/n" &&
	pid_lines noinh.db >nlines && cat nlines &&
	test "$(wc -l <nlines)" = 3 &&
	grep -qx "$(cat n/parent)|$L_PARENT|$((80 * 4096))|100|20" nlines &&
	grep -qx "$(cat n/parent)|$L_FOPEN|0|1|1" nlines &&
	test "$(meta noinh.db unknown_frees)" = 0
'

test_expect_success 'record -- bash -c "heap_tree; true": the program the shell runs' '
	mkdir -p sh && "$RSPROF" record -q -o bash.db -- \
		bash -c "\"$TARGETS/heap_tree\" \"$PWD/sh\"; true" 2>err && cat err &&
	pid_lines bash.db >blines && cat blines && check_tree blines sh
'

test_expect_success 'record -- env -i heap_tree: an empty environment keeps the tracker' '
	mkdir -p env && "$RSPROF" record -q -o env.db -- \
		env -i "$TARGETS/heap_tree" "$PWD/env" 2>err && cat err &&
	pid_lines env.db >elines && cat elines && check_tree elines env
'

# A program of the recorded tree that runs rsprof itself (a test script, a
# CI job profiled as a whole): the inner rsprof launches its program with
# its own tracker only; with both, the program spun in the tracker's
# malloc forever. The inner recording is the one a lone rsprof makes.
# (An ASan build of rsprof cannot run with the tracker preloaded: ASan
# must come first and own malloc. The sanitizer build of make test leaves
# this one out.)
if ! ldd "$RSPROF" 2>/dev/null | grep -q libasan; then
	test_expect_success 'rsprof recorded by rsprof: the inner one tracks its tree as alone' '
		mkdir -p nest && timeout 120 "$RSPROF" record -q --no-cpu -o outer.db -- \
			"$RSPROF" record -q -o inner.db -- "$TARGETS/heap_tree" "$PWD/nest" 2>err &&
		cat err && pid_lines inner.db >nlines && cat nlines && check_tree nlines nest &&
		test "$(sql outer.db "SELECT COUNT(*) FROM processes
			WHERE comm = '"'"'rsprof'"'"'")" -ge 1
	'
fi

# A stripped wrapper (dash: no symbol table) that takes the samples, then
# execs a program so short that it often gets none: that program's heap
# rows are what the recording is judged on, not exit 5 for the wrapper
# (seen under load with env -i above: env got the only samples and the
# profile was deleted; the rule before failed this test in 5 of 10 runs).
test_expect_success 'a stripped wrapper with every sample, a program with heap rows only: kept' '
	mkdir -p w && "$RSPROF" record -q -o wrap.db -- \
		sh -c "i=0; while [ \$i -lt 100000 ]; do i=\$((i + 1)); done; exec \"\$0\" \"\$1\"" \
		"$TARGETS/heap_tree" "$PWD/w" 2>err && cat err &&
	pid_lines wrap.db >wlines && cat wlines && check_tree wlines w
'

test_expect_success 'a SIGKILL of rsprof leaves nothing in $TMPDIR; what the tree runs then loads no tracker' '
	mkdir -p tmp &&
	TMPDIR=$PWD/tmp "$RSPROF" record -q -o kill.db -- \
		sh -c "echo \$\$ >\"$PWD/target\"; sleep 3; /bin/true; echo >\"$PWD/after\"" \
		2>kill.err &
	rp=$! &&
	wait_for_file target &&
	n=0 && while [ -z "$(ls tmp)" ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done &&
	ls tmp | grep -q "^rsprof-heap\." &&
	kill -KILL $rp && { wait $rp; true; } &&
	n=0 && while [ -n "$(ls tmp)" ] && [ $n -lt 300 ]; do sleep 0.1; n=$((n + 1)); done &&
	ls -la tmp && test -z "$(ls tmp)" &&
	wait_for_file after && cat kill.err && ! grep -q "cannot be preloaded" kill.err
'

test_done
