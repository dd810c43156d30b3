#!/bin/sh
# Process trees (issue 10): record -- CMD profiles every child the command
# forks and every program it execs, as perf's inherit; samples before an
# exec resolve against the old program, after it against the new one, in
# one interval; -p follows the children it starts (--no-inherit: not);
# report -s process and --pid split the tree.
. "$(dirname "$0")/lib.sh"

FORK=$TEST_SRC/targets/fork_workers.c
line_of() {	# MARKER FILE
	grep -n "/\* HOT:$1 \*/" "$2" | cut -d: -f1
}

if ! have_perf; then
	test_skip 'process trees' 'perf events not allowed here'
	test_done
fi

# share SUBSTRING-OF-FILE LINE DB: the percentage (integer) of all samples
share() {
	sql "$3" "SELECT COALESCE(SUM(c.count), 0) * 100 / (SELECT SUM(count) FROM cpu_samples)
		FROM cpu_samples c JOIN symbols s ON c.addr = s.addr
		WHERE s.file LIKE '%$1' AND s.line = $2"
}

# fork.db and perf's fork.perf count user time only (--user-only, --all-user):
# each child spins 1.5 s of CPU time in its worker, so the user-space split
# is 50/50 by construction; the kernel time of a loaded machine (being
# preempted: finish_task_switch, irqentry_exit_to_user_mode, 14 % of a
# child once) is not what these tests are about (t1015 is).
test_expect_success 'record -- fork_workers: both children on their lines, ~50 % each' '
	"$RSPROF" record -q --no-heap --user-only -F 499 -o fork.db -- "$TARGETS/fork_workers" 1.5 &&
	a=$(share fork_workers.c "$(line_of a "$FORK")" fork.db) &&
	b=$(share fork_workers.c "$(line_of b "$FORK")" fork.db) &&
	say "worker_a $a %, worker_b $b %" &&
	test "$a" -ge 35 && test "$a" -le 65 && test "$b" -ge 35 && test "$b" -le 65 &&
	test $((a + b)) -ge 85
'

test_expect_success 'the children are in processes, every sample has its pid' '
	test "$(sql fork.db "SELECT COUNT(DISTINCT pid) FROM processes")" = 3 &&
	test "$(sql fork.db "SELECT COUNT(*) FROM cpu_samples WHERE pid IS NULL")" = 0 &&
	parent=$(sql fork.db "SELECT value FROM meta WHERE key = '\''pid'\''") &&
	test "$(sql fork.db "SELECT COUNT(*) FROM processes WHERE ppid = $parent")" = 2 &&
	test "$(sql fork.db "SELECT value FROM meta WHERE key = '\''inherit'\''")" = on
'

# the cgroup v2 path this test runs in ("" where there is no v2 hierarchy)
cg=$(sed -n 's/^0:://p' /proc/self/cgroup)
test_expect_success 'each process row has its cgroup v2 path (NULL without one)' '
	sql fork.db "SELECT DISTINCT COALESCE(cgroup, '\''NULL'\'') FROM processes" >cgroups &&
	cat cgroups &&
	if test -n "'"$cg"'"; then
		test "$(cat cgroups)" = "'"$cg"'"
	else
		test "$(cat cgroups)" = NULL
	fi
'

test_expect_success 'report -s process: a Cgroup column when one is not the root' '
	"$RSPROF" report -s process fork.db >root.report &&
	! grep -q Cgroup root.report &&
	cp fork.db cg.db &&
	child=$(sql cg.db "SELECT MAX(pid) FROM processes") &&
	sql cg.db "UPDATE processes SET cgroup = '\''/system.slice/w.service'\'' WHERE pid = $child" &&
	"$RSPROF" report -s process cg.db >cg.report &&
	cat cg.report &&
	grep -q "Cgroup" cg.report &&
	grep "\[$child\]" cg.report | grep -q "/system.slice/w.service" &&
	"$RSPROF" report -s process --json cg.db | python3 -c "
import json, sys
rows = json.load(sys.stdin)[\"cpu\"][\"rows\"]
cg = {r[\"pid\"]: r[\"cgroup\"] for r in rows}
assert cg[$child] == \"/system.slice/w.service\", cg
assert len(set(cg.values())) == 2, cg"
'

test_expect_success 'a file of before processes.cgroup: read as it is, given it on --append' '
	cp fork.db old.db &&
	sql old.db "ALTER TABLE processes DROP COLUMN cgroup" &&
	"$RSPROF" report -s process old.db >old.report &&
	grep -q fork_workers old.report &&
	n=$(sql old.db "SELECT COUNT(*) FROM processes") &&
	"$RSPROF" record -q --no-heap --append -o old.db -- "$TARGETS/fork_workers" 0.2 &&
	test "$(sql old.db "SELECT COUNT(*) FROM processes WHERE cgroup IS NULL")" -ge "$n" &&
	if test -n "'"$cg"'"; then
		test "$(sql old.db "SELECT COUNT(*) FROM processes WHERE cgroup = '\''$cg'\''")" -ge 3
	fi
'

if command -v perf >/dev/null 2>&1; then
	test_expect_success 'perf record on the same program: the same split' '
		perf record -B --no-bpf-event -q --all-user -F 499 -o fork.perf -- "$TARGETS/fork_workers" 1.5 2>/dev/null &&
		perf report -i fork.perf --stdio --sort sym 2>/dev/null >fork.txt &&
		pa=$(awk "/worker_a/ { sub(\"%\", \"\", \$1); print int(\$1) }" fork.txt) &&
		pb=$(awk "/worker_b/ { sub(\"%\", \"\", \$1); print int(\$1) }" fork.txt) &&
		a=$(share fork_workers.c "$(line_of a "$FORK")" fork.db) &&
		b=$(share fork_workers.c "$(line_of b "$FORK")" fork.db) &&
		say "children: rsprof $((a + b)) % (a $a, b $b), perf $((pa + pb)) % (a $pa, b $pb)" &&
		test $((a + b - pa - pb)) -le 10 && test $((pa + pb - a - b)) -le 10
	'
else
	test_skip 'perf record on the same program' 'perf is not installed'
fi

test_expect_success 'report -s process: one row per process, the children ~50 % each' '
	"$RSPROF" report --cpu --csv -s process fork.db >p.csv &&
	cat p.csv &&
	test "$(grep -c "^cpu," p.csv)" -ge 2 &&
	awk -F, "NR > 1 && \$15 != \"\" { n++; if (\$2 >= 35 && \$2 <= 65) ok++ } END { exit !(ok == 2) }" p.csv
'

test_expect_success 'report --pid: one child alone, its line at ~100 %' '
	child=$(sql fork.db "SELECT c.pid FROM cpu_samples c JOIN symbols s ON c.addr = s.addr
		WHERE s.function = '\''worker_b'\'' GROUP BY c.pid ORDER BY SUM(c.count) DESC LIMIT 1") &&
	"$RSPROF" report --cpu --csv --pid "$child" fork.db >b.csv &&
	cat b.csv &&
	awk -F, "NR == 2 { exit !(\$13 == \"worker_b\" && \$2 >= 90) }" b.csv &&
	! grep -q worker_a b.csv &&
	"$RSPROF" report --cpu --pid "$child" fork.db | grep -q "^# process: *$child only"
'

# --user-only here and below, as for fork.db above.
SPLIT=$TEST_SRC/targets/cpu_split.c
for sh in bash sh; do
	test_expect_success "record -- $sh -c './cpu_split 1.2; true': the program's lines, exit 0" '
		cp "$TARGETS/cpu_split" . &&
		"$RSPROF" record --no-heap --user-only -F 499 -o '$sh'.db -- '$sh' -c "./cpu_split 1.2; true" 2>err &&
		cat err && ! grep -q "debug information" err &&
		a=$(share cpu_split.c "$(line_of a "$SPLIT")" '$sh'.db) &&
		b=$(share cpu_split.c "$(line_of b "$SPLIT")" '$sh'.db) &&
		say "'$sh' -c: work_a $a %, work_b $b %" &&
		test "$a" -ge 48 && test "$a" -le 72 && test "$b" -ge 20 && test "$b" -le 40 &&
		"$RSPROF" report -s process '$sh'.db | grep -q "cpu_split \[[0-9]*\]"
	'
done

# The exec comes after 0.5 s of CPU time: on a loaded machine seconds of
# wall time later. -i 30s keeps it inside the first interval all the same,
# where the samples of both programs must be told apart.
EXEC=$TEST_SRC/targets/exec_mid.c
AFTER=$TEST_SRC/targets/exec_after.c
test_expect_success 'exec in the middle of an interval: before on the old image, after on the new' '
	"$RSPROF" record -q --no-heap --user-only -F 499 -i 30s -o exec.db -- \
		"$TARGETS/exec_mid" 0.5 "$TARGETS/exec_after" 1 &&
	b=$(share exec_mid.c "$(line_of before "$EXEC")" exec.db) &&
	a=$(share exec_after.c "$(line_of after "$AFTER")" exec.db) &&
	u=$(sql exec.db "SELECT COALESCE(SUM(c.count), 0) * 100 / (SELECT SUM(count) FROM cpu_samples)
		FROM cpu_samples c LEFT JOIN symbols s ON c.addr = s.addr
		WHERE s.addr IS NULL OR (s.function IS NULL AND s.module IS NULL)") &&
	say "before $b %, after $a %, unknown $u %" &&
	test "$b" -ge 20 && test "$b" -le 48 && test "$a" -ge 52 && test "$a" -le 80 &&
	test "$u" -le 2
'

test_expect_success 'the checkpoint of the exec has samples of both programs; one pid, two images' '
	at=$(sql exec.db "SELECT MIN(end_ms) FROM processes") &&
	cp=$(sql exec.db "SELECT MIN(id) FROM checkpoints WHERE timestamp_ms >= $at") &&
	n=$(sql exec.db "SELECT COUNT(DISTINCT s.function) FROM cpu_samples c JOIN symbols s
		ON c.addr = s.addr WHERE c.checkpoint_id = $cp AND s.function IN
		('\''before'\'', '\''after'\'')") &&
	say "exec at $at ms, in checkpoint $cp: $n of the two programs there" &&
	test "$n" = 2 &&
	test "$(sql exec.db "SELECT COUNT(*) FROM processes")" = 2 &&
	test "$(sql exec.db "SELECT COUNT(DISTINCT pid) FROM processes")" = 1 &&
	sql exec.db "SELECT comm FROM processes ORDER BY start_ms" | tr "\n" " " | grep -q "^exec_mid exec_after $"
'

# A shell that starts fork_workers once rsprof is recording it (its first
# checkpoint is in the file: attached): its grandchildren are followed;
# with --no-inherit they are not. --user-only as above (the sanitizer
# suite at load 7 once gave worker_b 28 % of all time, kernel included).
attach_tree() {	# DB [OPTION]
	rm -f started go
	bash -c "touch started; while ! test -e go; do sleep 0.05; done;
		\"$TARGETS/fork_workers\" 1; sleep 0.3" &
	tp=$!
	test_bg_pids="$test_bg_pids $tp"
	wait_for_file started &&
	{ "$RSPROF" record -q --no-heap --user-only -F 499 ${2:-} -p $tp -o "$1" 2>err.attach &
	  rp=$!; } &&
	wait_checkpoints "$1" &&
	touch go &&
	wait $rp
}

test_expect_success 'record -p: the children started after attach are followed' '
	attach_tree attach.db &&
	a=$(share fork_workers.c "$(line_of a "$FORK")" attach.db) &&
	b=$(share fork_workers.c "$(line_of b "$FORK")" attach.db) &&
	say "attached: worker_a $a %, worker_b $b %" &&
	test "$a" -ge 30 && test "$b" -ge 30
'

test_expect_success 'record -p --no-inherit: the process alone' '
	attach_tree noinherit.db --no-inherit &&
	n=$(sql noinherit.db "SELECT COALESCE(SUM(c.count), 0) FROM cpu_samples c
		JOIN symbols s ON c.addr = s.addr WHERE s.function LIKE '\''worker_%'\''") &&
	say "--no-inherit: $n samples in the workers" &&
	test "$n" = 0 &&
	test "$(sql noinherit.db "SELECT value FROM meta WHERE key = '\''inherit'\''")" = off
'

test_done
