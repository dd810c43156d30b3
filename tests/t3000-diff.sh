#!/bin/sh
# rsprof diff: fixtures first (known numbers), then two real builds of one
# program where B makes one function twice as slow and one allocation site
# keep twice the bytes (issue 4, test 1), and a B with every line moved.
. "$(dirname "$0")/lib.sh"

FIXTURE=$(dirname "$RSPROF")/tests/helper/fixture
SRC=$TEST_SRC/targets/diff_prog.c

test_expect_success 'fixture profiles' '
	"$FIXTURE" p.db small && md5sum p.db >p.md5 &&
	"$FIXTURE" cpu.db cpu-only && md5sum cpu.db >cpu.md5
'

test_expect_success 'a profile diffed with itself shows no change' '
	"$RSPROF" diff p.db p.db >out &&
	cat out &&
	grep -q "^no change" out &&
	grep -q "^A: p.db  10.0s  1,000 samples  live 10.0 MiB  peak 15.0 MiB" out &&
	"$RSPROF" diff --csv p.db p.db >csv &&
	test "$(sed 1d csv | cut -d, -f2 | sort -u)" = same &&
	test "$(sed 1d csv | cut -d, -f9 | sort -u | tr -d 0.)" = "" &&
	"$RSPROF" diff --json p.db p.db | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert d[\"identical\"] is True
assert all(r[\"delta_pct\"] == 0 for r in d[\"cpu\"]) and len(d[\"cpu\"]) == 4
assert all(r[\"delta_bytes\"] == 0 for r in d[\"heap\"]) and len(d[\"heap\"]) == 2
"
'

test_expect_success 'only one side has heap data: no heap table, said so' '
	"$RSPROF" diff p.db cpu.db >out &&
	grep -q "^B: cpu.db .* no heap data" out &&
	grep -q "only A has heap data" out
'

test_expect_success 'options: --cpu, --heap, -n, --threshold, --filter, --by file' '
	"$RSPROF" diff --cpu p.db p.db >out && ! grep -q "^Heap" out && grep -q "^CPU" out &&
	"$RSPROF" diff --heap p.db p.db >out && grep -q "^Heap" out && ! grep -q "^CPU" out &&
	test "$("$RSPROF" diff --csv -n 2 --cpu p.db p.db | wc -l)" -eq 3 &&
	test "$("$RSPROF" diff --csv -t 0.1 p.db p.db | wc -l)" -eq 1 &&
	"$RSPROF" diff --csv --filter HOT p.db p.db >out &&
	test "$(sed 1d out | grep -vc "hot.c")" -eq 0 && test "$(wc -l <out)" -eq 3 &&
	"$RSPROF" diff --csv --by file --cpu p.db p.db >out &&
	grep -q "^cpu,same,.*hot.c,.*hot.c,0,,85.0000,85.0000" out &&
	expect_exit 2 "$RSPROF" diff --by nothing p.db p.db 2>/dev/null &&
	expect_exit 2 "$RSPROF" diff -t lots p.db p.db 2>/dev/null &&
	expect_exit 2 "$RSPROF" diff p.db 2>/dev/null
'

test_expect_success 'a version-1 profile against a version-2 one' '
	make_v1 v1.db &&
	"$RSPROF" diff --csv v1.db v1.db >out &&
	test "$(sed 1d out | cut -d, -f2 | sort -u)" = same &&
	grep -q "^heap,same,s/a.c:10,s/a.c,10,f,1000,1000,0,0,0$" out &&
	"$RSPROF" diff --csv --cpu v1.db p.db >out &&
	grep -q "^cpu,gone,s/a.c:10,s/a.c,10,f,57.1429,0.0000,-57.1429,12,0$" out &&
	grep -q "^cpu,new,.*hot.c:10,.*,10,hot_loop,0.0000,60.0000,60.0000,0,600$" out
'

test_expect_success 'readers leave the profiles byte-identical' '
	md5sum -c p.md5 cpu.md5
'

test_expect_success 'bad inputs: exit 6, clear error, nothing written' '
	echo "not a profile" >text.db &&
	sqlite3 foreign.db "CREATE TABLE t (x); INSERT INTO t VALUES (1)" &&
	head -c 3000 p.db >trunc.db &&
	for f in missing.db text.db foreign.db trunc.db; do
		test -e $f && md5sum $f >bad.md5
		for args in "p.db $f" "$f p.db"; do
			expect_exit 6 "$RSPROF" diff $args >out 2>err || exit 1
			test ! -s out && grep -q "^rsprof diff: " err && grep -q "^hint: " err ||
				{ cat err; exit 1; }
		done
		if test -e bad.md5; then md5sum -c bad.md5 || exit 1; rm bad.md5; fi
	done &&
	test ! -e missing.db
'

# --- two real builds ---------------------------------------------------------
if ! have_perf; then
	test_skip 'diff of two builds' 'perf events not allowed here'
	test_done
fi

# Both builds come from the same path, as two builds of one checkout do.
build() {	# OUTPUT: compile build/diff_prog.c as the Makefile of the targets does
	gcc -g -O1 -fno-omit-frame-pointer -fno-inline -o "$1" build/diff_prog.c
}
make_b() {
	sed -e 's/^#define SLOW_FACTOR 1$/#define SLOW_FACTOR 2/' \
	    -e 's/^#define RETAIN_MB 8$/#define RETAIN_MB 16/' "$SRC"
}
line_in() {	# FILE MARKER
	grep -n "/\* $2 \*/" "$1" | cut -d: -f1
}

test_expect_success 'build A, B (slower changed(), 2x retained) and B moved down 3 lines' '
	mkdir build &&
	cp "$SRC" build/diff_prog.c && build prog_a &&
	make_b >build/diff_prog.c && build prog_b &&
	grep -q "^#define SLOW_FACTOR 2$" build/diff_prog.c &&
	{ printf "/* moved */\n/* down */\n/* by three */\n"; make_b; } >build/diff_prog.c &&
	cp build/diff_prog.c moved.c && build prog_m
'

# --user-only: the shares compared are of the program's own code; kernel
# samples of a loaded machine (page faults, preemption) vary from run to
# run (#10 and #13 failed once beside a benchmark; the output was not
# kept, this is the likely cause, as in t1000 and t1010)
HEAP=
NOHEAP=--no-heap
if have_bpf; then
	HEAP=1
	NOHEAP=
fi
test_expect_success 'record the three builds' '
	for b in a b m; do
		"$RSPROF" record -q --user-only -F 499 $NOHEAP -o $b.db -- ./prog_$b 8000 >/dev/null ||
			exit 1
	done &&
	for b in a b m; do
		say "$b: $(sql $b.db "SELECT SUM(count) FROM cpu_samples") samples"
	done
'

CPU_LINE=$(line_in "$SRC" CPU:changed)
HEAP_LINE=$(line_in "$SRC" HEAP:changed)

test_expect_success 'diff A B: changed() first in CPU with +, its site first in heap with +' '
	"$RSPROF" diff a.db b.db &&
	"$RSPROF" diff --csv a.db b.db >out &&
	grep "^cpu," out | head -1 >cpu1 &&
	cat cpu1 &&
	grep -q "^cpu,changed,[^,]*diff_prog.c:$CPU_LINE,[^,]*,$CPU_LINE,changed," cpu1 &&
	delta=$(cut -d, -f9 cpu1) &&
	python3 -c "assert $delta >= 5, $delta" &&
	if [ -n "$HEAP" ]; then
		grep "^heap," out | head -1 >heap1 &&
		cat heap1 &&
		grep -q "^heap,changed,[^,]*diff_prog.c:$HEAP_LINE,[^,]*,$HEAP_LINE,retain_changed," heap1 &&
		test "$(cut -d, -f9 heap1)" -eq $((8 * 1048576)) &&
		test "$(cut -d, -f10,11 heap1)" = "8,16" &&
		grep -q "^heap,same,.*,retain_steady,8388608,8388608,0,8,8$" out
	fi
'

# f: a hot line and a stray line 3 below it; B has 3 lines inserted above,
# so the hot line lands on the number the stray line had in A. A file of
# the schema rsprof writes (a.db's) whose module /s/p has the build-id
# BUILD_ID.
moved_fixture() {	# FILE HOT STRAY G BUILD_ID
	sqlite3 a.db .schema | sqlite3 "$1" &&
	sqlite3 "$1" "
	ATTACH 'a.db' AS a;
	INSERT INTO meta SELECT * FROM a.meta;
	UPDATE meta SET value = '/s/p' WHERE key = 'exe_path';
	INSERT INTO checkpoints (id, timestamp_ms, cpu_total) VALUES (1, 1000, 605);
	INSERT INTO symbols (addr, file, line, function, module) VALUES
		(1, '/s/p.c', $2, 'f', '/s/p'), (2, '/s/p.c', $3, 'f', '/s/p'),
		(3, '/s/p.c', $4, 'g', '/s/p');
	INSERT INTO map (pid, addr_begin, addr_end, perm, offset, path, build_id)
		VALUES (1, 0, 4096, 'r-xp', 0, '/s/p', '$5');
	INSERT INTO cpu_samples (checkpoint_id, addr, count) VALUES (1, 1, 500), (1, 2, 5),
		(1, 3, 100);"
}

test_expect_success 'a moved hot line onto a stray line'"'"'s number: each paired with itself' '
	moved_fixture sa.db 10 13 40 aaaa && moved_fixture sb.db 13 16 43 bbbb &&
	"$RSPROF" diff --cpu sa.db sb.db >tbl && cat tbl &&
	"$RSPROF" diff --csv --cpu sa.db sb.db >out &&
	grep -q "^cpu,moved,s/p.c:13,s/p.c,13,f,82.6446,82.6446,0.0000," out &&
	grep -q "^cpu,moved,s/p.c:16,s/p.c,16,f,0.8264,0.8264,0.0000," out &&
	grep -q "^cpu,moved,s/p.c:43,s/p.c,43,g," out &&
	test "$(sed 1d out | wc -l)" = 3 &&
	"$RSPROF" diff --json --cpu sa.db sb.db | python3 -c "
import json, sys
d = json.load(sys.stdin)
m = {(r[\"line_a\"], r[\"line\"]) for r in d[\"cpu\"] if r[\"status\"] == \"moved\"}
assert m == {(10, 13), (13, 16), (40, 43)}, m
assert d[\"identical\"] is False
"
'

test_expect_success '... not moved when most of the function stayed (a stray line, not a shift)' '
	moved_fixture ta.db 10 12 40 aaaa && moved_fixture tb.db 10 15 40 bbbb &&
	"$RSPROF" diff --csv --cpu ta.db tb.db >out && cat out &&
	grep -q "^cpu,same,s/p.c:10,s/p.c,10,f," out &&
	grep -q "^cpu,same,s/p.c:40,s/p.c,40,g," out
'

test_expect_success '... not moved between two runs of one build: gone there, new here' '
	moved_fixture sc.db 10 13 40 aaaa && moved_fixture sd.db 13 16 43 aaaa &&
	"$RSPROF" diff --csv --cpu sc.db sd.db >out && cat out &&
	! grep -q "^cpu,moved," out &&
	grep -q "^cpu,gone,s/p.c:10,s/p.c,10,f," out &&
	grep -q "^cpu,changed,s/p.c:13,s/p.c,13,f," out &&
	grep -q "^cpu,new,s/p.c:16,s/p.c,16,f," out &&
	grep -q "^cpu,gone,s/p.c:40,s/p.c,40,g," out &&
	grep -q "^cpu,new,s/p.c:43,s/p.c,43,g," out
'

# One recording that spins on one line, then on the line above it: two
# windows of it are one build, so the line the time went to is new and the
# one it left is gone, never "moved".
test_expect_success 'two windows of one recording: a changed line is new and gone, not moved' '
	cat >phases.c <<-\EOF &&
	#include <time.h>
	static volatile unsigned long x;
	static double now(void)
	{
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		return t.tv_sec + t.tv_nsec / 1e9;
	}
	__attribute__((noinline)) static void spin(double s, int second)
	{
		for (double end = now() + s; now() < end;) {
			for (int i = 0; i < 1000000 && !second; i++) x++; /* FIRST */
			for (int i = 0; i < 1000000 && second; i++) x--; /* LATER */
		}
	}
	int main(void)
	{
		spin(1.5, 0);
		spin(1.5, 1);
		return 0;
	}
	EOF
	gcc -g -O0 -o phases phases.c &&
	"$RSPROF" record -q --user-only -F 499 $NOHEAP -o phases.db -- ./phases &&
	"$RSPROF" diff --csv --cpu phases.db@0..1s phases.db@2s.. >out && cat out &&
	! grep -q "^cpu,moved," out &&
	grep -q "^cpu,gone,[^,]*phases.c:$(line_in phases.c FIRST),.*,spin," out &&
	grep -q "^cpu,new,[^,]*phases.c:$(line_in phases.c LATER),.*,spin," out
'

test_expect_success 'lines moved by 3: --by line reports them moved, --by function matches' '
	"$RSPROF" diff a.db m.db >tbl &&
	cat tbl &&
	grep -q "moved from $CPU_LINE  *[^ ]*diff_prog.c:$((CPU_LINE + 3))  *changed" tbl &&
	"$RSPROF" diff --csv a.db m.db >out &&
	grep -q "^cpu,moved,[^,]*diff_prog.c:$((CPU_LINE + 3)),.*,changed," out &&
	# a line of steady() or changed() sampled a few times in one run only is rightly new/gone
	! awk -F, "\$1 == \"cpu\" && \$2 ~ /new|gone/ && \$6 ~ /^(steady|changed)\$/ &&
		\$7 + \$8 >= 1" out | grep . &&
	"$RSPROF" diff --json a.db m.db | python3 -c "
import json, sys
d = json.load(sys.stdin)
r = [r for r in d[\"cpu\"] if r[\"function\"] == \"changed\"][0]
assert r[\"status\"] == \"moved\" and r[\"line_a\"] == $CPU_LINE and r[\"line\"] == $((CPU_LINE + 3)), r
" &&
	"$RSPROF" diff --by function a.db m.db &&
	"$RSPROF" diff --csv --by function a.db m.db >out &&
	grep "^cpu," out | head -1 | grep -q "^cpu,changed,[^,]*diff_prog.c,[^,]*,0,changed," &&
	delta=$(grep "^cpu," out | head -1 | cut -d, -f9) &&
	python3 -c "assert $delta >= 5, $delta" &&
	! grep -q "^cpu,\(new\|gone\),.*,\(steady\|changed\|other\)," out &&
	if [ -n "$HEAP" ]; then
		grep "^heap," out | head -1 | grep -q "^heap,changed,.*,retain_changed,[0-9]*,[0-9]*,8388608,8,16$"
	fi
'

# Attached, the mappings come from /proc/PID/maps, which has no build-ids:
# they are read from the mapped files, so two builds attached to pair
# their lines as moved too (without them: conservatively gone and new).
test_expect_success 'attached recordings of the two builds: the changed line moved' '
	for b in a m; do
		./prog_$b 1000000 >/dev/null & pid=$! && bg_pid $pid &&
		wait_exec $pid "$PWD/prog_$b" &&
		"$RSPROF" record -q --user-only -F 499 --no-heap -p $pid -d 3s -o p$b.db ||
			exit 1
		kill $pid
	done &&
	test -n "$(sql pa.db "SELECT build_id FROM map WHERE path LIKE '"'"'%/prog_a'"'"'
		AND build_id IS NOT NULL LIMIT 1")" &&
	"$RSPROF" diff --csv pa.db pm.db >out &&
	grep -q "^cpu,moved,[^,]*diff_prog.c:$((CPU_LINE + 3)),.*,changed," out
'

# Two checkouts of one project in different directories (issue 12): the
# recorded paths differ in everything but the part below the checkout.
test_expect_success 'two checkouts in different directories: every site matched (but stray samples)' '
	mkdir -p ck1/proj/src ck2/other-name/src &&
	cp "$SRC" ck1/proj/src/diff_prog.c && cp "$SRC" ck2/other-name/src/diff_prog.c &&
	(cd ck1/proj && gcc -g -O1 -fno-omit-frame-pointer -fno-inline -o prog src/diff_prog.c) &&
	(cd ck2/other-name && gcc -g -O1 -fno-omit-frame-pointer -fno-inline -o prog src/diff_prog.c) &&
	"$RSPROF" record -q -F 499 $NOHEAP -o ck1.db -- ck1/proj/prog 4000 >/dev/null &&
	"$RSPROF" record -q -F 499 $NOHEAP -o ck2.db -- ck2/other-name/prog 4000 >/dev/null &&
	test "$(sql ck1.db "SELECT COUNT(*) FROM symbols WHERE file LIKE '\''%/ck1/proj/src/diff_prog.c'\''")" -gt 0 &&
	"$RSPROF" diff ck1.db ck2.db >tbl &&
	cat tbl &&
	for by in line function file; do
		"$RSPROF" diff --csv --by $by ck1.db ck2.db >out.$by || exit 1
		# the sites of the program; one sampled a few times in one run only (main) is
		# rightly new/gone, and so is the stdout buffer of libc when resolved in one run only
		! awk -F, "\$2 ~ /new|gone/ && \$4 ~ /diff_prog/ && (\$1 == \"heap\" || \$7 + \$8 >= 1)" out.$by |
			grep . || { cat out.$by; exit 1; }
		grep -q "^cpu,[a-z]*,src/diff_prog.c" out.$by || { cat out.$by; exit 1; }
	done
'

if [ -z "$HEAP" ]; then
	test_skip 'heap half of the diff of two builds' 'BPF not available (needs root and BTF)'
fi

test_done
