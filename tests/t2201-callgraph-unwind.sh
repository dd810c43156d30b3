#!/bin/sh
# CPU call stacks that tell the truth: a leaf that sets up no frame
# (gcc -O2 builds one even with -fno-omit-frame-pointer) is called 3:1
# from path_a and path_b; its callers must show 75 % / 25 %, with frame
# pointers (-g, --call-graph fp) and without (-g unwinds the stack copy
# through the CFI). A stack cut short ends with [truncated] and is counted.
# A Rust release build without frame pointers reaches main through std.
. "$(dirname "$0")/lib.sh"

if ! have_perf; then
	test_skip 'CPU call stacks' 'perf events not allowed here'
	test_done
fi

SRC=$TEST_SRC/targets/callers_leaf.c
L_A=$(grep -n "CALL:a" "$SRC" | cut -d: -f1)
L_B=$(grep -n "CALL:b" "$SRC" | cut -d: -f1)

# shares FILE: "path_a path_b" shares (%) of leaf's callers
shares() {
	"$RSPROF" report --callers leaf --csv "$1" >"$1.csv" &&
	awk -F, 'NR > 1 && $1 == 1 { s[$2] = int($4 + 0.5) } END { print s["path_a"] + 0, s["path_b"] + 0 }' \
		"$1.csv"
}

# split FILE: 75/25 within 10 points
split_ok() {
	set -- $(shares "$1") && echo "path_a $1 %, path_b $2 %" &&
	test "$1" -ge 65 && test "$1" -le 85 && test "$2" -ge 15 && test "$2" -le 35 &&
	test $(($1 + $2)) -ge 98
}

for t in "callers_leaf -g" "callers_leaf --call-graph=fp" "callers_leaf_nofp -g"; do
	prog=${t%% *}
	mode=${t#* }
	db=$prog$(echo "$mode" | tr -d ' =-').db
	test_expect_success "$prog, $mode: leaf's callers path_a 75 %, path_b 25 % (+- 10)" "
		\"\$RSPROF\" record -q $mode -F 499 --user-only --no-heap -o $db -- \"\$TARGETS/$prog\" 2 >/dev/null &&
		split_ok $db
	"
done

if command -v go >/dev/null 2>&1; then
	test_expect_success 'go tool pprof -traces: the calls of both paths, on their lines' '
		"$RSPROF" report --format pprof -o leaf.pb.gz callers_leafg.db &&
		go tool pprof -traces -lines leaf.pb.gz >leaf.traces 2>leaf.err &&
		grep -q "path_a .*callers_leaf.c:$L_A" leaf.traces &&
		grep -q "path_b .*callers_leaf.c:$L_B" leaf.traces &&
		"$RSPROF" report --format pprof -o nofp.pb.gz callers_leaf_nofpg.db &&
		go tool pprof -traces -lines nofp.pb.gz >nofp.traces 2>>leaf.err &&
		grep -q "path_a .*callers_leaf.c:$L_A" nofp.traces &&
		grep -q "path_b .*callers_leaf.c:$L_B" nofp.traces
	'
else
	test_skip 'go tool pprof' 'golang-go missing (scripts/packages.txt, test group)'
fi

test_expect_success 'whole stacks: none truncated, counted in meta' '
	test "$(sql callers_leaf_nofpg.db "SELECT value FROM meta WHERE key = '"'cpu_stacks_truncated'"'")" -le 5 &&
	test "$(sql callers_leaf_nofpg.db "SELECT value FROM meta WHERE key = '"'cpu_stacks_unwound'"'")" -gt 100
'

# 64 bytes of stack: the copy ends inside main's frame; without frame
# pointers the kernel's chain cannot go on
test_expect_success 'a copy too small: [truncated] frames, counted and said' '
	"$RSPROF" record -q --call-graph dwarf,64 -F 499 --user-only --no-heap -o small.db -- \
		"$TARGETS/callers_leaf_nofp" 1 >/dev/null &&
	t=$(sql small.db "SELECT value FROM meta WHERE key = '"'cpu_stacks_truncated'"'") &&
	n=$(sql small.db "SELECT value FROM meta WHERE key = '"'cpu_stacks_unwound'"'") &&
	echo "$t of $n truncated" && test "$t" -gt 0 &&
	"$RSPROF" report -g small.db >small.out &&
	grep -q "^# stacks: .* stop short of the first frame: they end with \[truncated\]" small.out &&
	grep -q "\[truncated\]" small.out &&
	sql small.db "SELECT function FROM symbols WHERE addr = 9223372036854775807" | grep -qx "\[truncated\]"
'

if command -v "${RUSTC:-rustc}" >/dev/null 2>&1; then
	test_expect_success 'Rust release build without frame pointers: -g reaches main through std' '
		"${RUSTC:-rustc}" -g -O -C force-frame-pointers=no --edition 2021 -o rs_nofp \
			"$TEST_SRC/targets/rust_inline.rs" &&
		"$RSPROF" record -q -g -F 499 --user-only --no-heap -o rs.db -- ./rs_nofp 1 >/dev/null &&
		"$RSPROF" report -g --csv rs.db >rs.csv &&
		grep -q "lang_start" rs.csv &&
		n=$(sql rs.db "SELECT COUNT(DISTINCT f.stack_id) FROM stack_frames f JOIN symbols s
			       ON s.addr = f.addr WHERE s.function = '"'main'"'") &&
		all=$(sql rs.db "SELECT COUNT(*) FROM stacks") && echo "$n of $all stacks reach main" &&
		test $((n * 10)) -ge $((all * 9))
	'

	# std's frames are deep and their names long, the test's paths too: the
	# trees and their headers still fit
	test_expect_success 'call trees of deep Rust stacks fit the width (80 and 100 columns)' '
		for cols in 80 100; do
			for v in "-g" "--callees main" "--callers main"; do
				COLUMNS=$cols "$RSPROF" report $v rs.db >tree || return 1
				python3 -c "
import sys
w = max(len(l.rstrip(\"\\n\")) for l in open(\"tree\", encoding=\"utf-8\"))
assert w <= $cols, (\"$v\", w)
" || return 1
			done
		done
	'
else
	test_skip 'Rust without frame pointers' 'no rustc'
fi

test_done
