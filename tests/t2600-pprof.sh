#!/bin/sh
# pprof exports read by the real `go tool pprof` (issue 12): callers of -g
# stacks on their call lines (return address - 1), Rust trait methods with
# their types (name vs system_name), -disasm finding the hot function
# (mappings with start, limit, offset, build-id), heap exports with the four
# sample types whose totals equal report's, -o FILE, no binary to a terminal.
. "$(dirname "$0")/lib.sh"

C_SRC=$TEST_SRC/targets/callgraph.c
RS_SRC=$TEST_SRC/targets/callgraph_rs.rs
line_of() {	# FILE MARKER
	grep -n "$2" "$1" | tail -1 | cut -d: -f1
}

if ! command -v go >/dev/null; then
	test_skip 'go tool pprof' 'golang-go missing (scripts/packages.txt, test group)'
	test_done
fi
if ! have_perf; then
	test_skip 'record -g' 'perf events not allowed here'
	test_done
fi

# pprof -traces -lines: "function file:line" per frame, leaf first
trace_has() {	# FILE FUNCTION-REGEX LINE
	grep -E "^ +([0-9.]+[a-z]*s +)?$2 [^ ]*:$3( |$)" "$1" >/dev/null
}

# pprof -traces: CALLER on LINE right below a frame of CALLEE, i.e. as the
# caller of CALLEE (a sample taken in CALLER's own code after the call is
# CALLER on that line too, legitimately, but as the leaf)
trace_calls() {	# FILE CALLEE CALLER LINE
	awk -v callee="$2" -v caller="$3" -v line="$4" "
		{ f = \$1; l = \$2 }
		\$1 ~ /^[0-9.]+[a-z]*s\$/ { f = \$2; l = \$3 }
		{ sub(/.*:/, \"\", l) }
		prev == callee && f == caller && l == line { found = 1 }
		{ prev = f }
		END { exit !found }" "$1"
}

test_expect_success 'C: record -g callgraph' '
	"$RSPROF" record -q -g --no-heap -F 499 -o c.db -- "$TARGETS/callgraph" 2 >/dev/null &&
	"$RSPROF" report --format pprof -o c.pb.gz c.db &&
	go tool pprof -traces -lines c.pb.gz >c.traces 2>c.err &&
	sed -n 1,20p c.traces
'

test_expect_success 'C: each caller on its call line (go tool pprof -traces -lines)' '
	trace_has c.traces crunch '"$(line_of "$C_SRC" HOT:crunch)"' &&
	trace_has c.traces outer '"$(line_of "$C_SRC" CALL:crunch)"' &&
	trace_has c.traces main '"$(line_of "$C_SRC" CALL:outer)"' &&
	! trace_calls c.traces crunch outer '"$(( $(line_of "$C_SRC" CALL:crunch) + 1 ))"' &&
	! trace_calls c.traces outer main '"$(( $(line_of "$C_SRC" CALL:outer) + 1 ))"' &&
	trace_calls c.traces crunch outer '"$(line_of "$C_SRC" CALL:crunch)"'
'

# A sample in the dynamic loader at start-up (built without frame pointers)
# has garbage callers, [unknown] as in perf: those stacks are left out (seen
# under load: "[unknown];_dl_check_map_versions;match_symbol 1").
test_expect_success 'C: library frames have names, not [unknown]' '
	"$RSPROF" report --format folded c.db >c.folded &&
	head -3 c.folded &&
	grep -q "main;outer;crunch [0-9]*$" c.folded &&
	! grep -v ";_dl_" c.folded | grep "unknown"
'

test_expect_success 'folded: each stack once, the values adding up to every sample' '
	sed "s/ [0-9]*\$//" c.folded | sort | uniq -d >c.dups &&
	test ! -s c.dups &&
	samples=$("$RSPROF" info c.db | sed -n "s/^samples: *//p" | tr -d ,) &&
	test "$(awk "{ s += \$NF } END { print s }" c.folded)" = "$samples" &&
	sort c.folded | cmp - c.folded
'

test_expect_success 'report -s symbol: one row per ELF symbol, as perf shows' '
	"$RSPROF" report --cpu -s symbol c.db >sym.out &&
	cat sym.out &&
	grep -q "^ *[0-9.]*%  \[callgraph\]  *crunch$" sym.out &&
	test "$(grep -c "crunch$" sym.out)" = 1
'

test_expect_success 'C: go tool pprof -list shows the call on its line' '
	go tool pprof -list "^outer$" c.pb.gz >c.list &&
	grep -E " '"$(line_of "$C_SRC" CALL:crunch)"':.*CALL:crunch" c.list | grep -qv "^ *\. *\. "
'

if ! test -x "$TARGETS/callgraph_rs"; then
	test_skip 'Rust -g recording' 'rustc missing: no callgraph_rs target'
	test_done
fi

test_expect_success 'Rust: record -g callgraph_rs' '
	"$RSPROF" record -q -g --no-heap -F 499 -o rs.db -- "$TARGETS/callgraph_rs" 2 >/dev/null &&
	"$RSPROF" report --format pprof -o rs.pb.gz rs.db &&
	go tool pprof -top rs.pb.gz >rs.top 2>rs.err &&
	go tool pprof -traces -lines rs.pb.gz >rs.traces 2>>rs.err &&
	cat rs.top
'

test_expect_success 'Rust: the trait method keeps its type in go tool pprof -top' '
	grep -q "<callgraph_rs::Crc as callgraph_rs::Hasher>::digest$" rs.top &&
	! grep -E -q " ::digest$" rs.top
'

test_expect_success 'Rust: callers on their call lines, nothing inlined in between' '
	trace_has rs.traces "<callgraph_rs::Crc as callgraph_rs::Hasher>::digest" '"$(line_of "$RS_SRC" HOT:digest)"' &&
	trace_has rs.traces callgraph_rs::run '"$(line_of "$RS_SRC" CALL:digest)"' &&
	trace_has rs.traces callgraph_rs::main '"$(line_of "$RS_SRC" CALL:run)"' &&
	"$RSPROF" report --format folded rs.db >rs.folded &&
	grep -q ";callgraph_rs::main;callgraph_rs::run;<callgraph_rs::Crc as callgraph_rs::Hasher>::digest [0-9]*$" rs.folded
'

test_expect_success 'Rust: go tool pprof -list run shows the call line' '
	go tool pprof -list "callgraph_rs::run" rs.pb.gz >rs.list &&
	cat rs.list &&
	grep -E " '"$(line_of "$RS_SRC" CALL:digest)"':.*CALL:digest" rs.list | grep -qv "^ *\. *\. "
'

test_expect_success 'go tool pprof -disasm finds the hot function' '
	go tool pprof -disasm digest rs.pb.gz >rs.dis 2>&1 &&
	head -8 rs.dis &&
	grep -q "^ROUTINE.*digest" rs.dis &&
	grep -E -q "^ +[0-9.]+m?s .* [0-9a-f]+: " rs.dis
'

# pprof matches -disasm's regexp twice: against the profile's names
# (demangled) and against the binary's symbols (Go 1.19's pprof: mangled
# only, for Rust's legacy mangling), so a regexp must fit both spellings
test_expect_success '-disasm by the trait method'"'"'s type: samples on its instructions' '
	go tool pprof -disasm "Crc.*digest" rs.pb.gz >rs2.dis 2>&1 &&
	grep "^ROUTINE" rs2.dis &&
	test "$(grep -c "^ROUTINE" rs2.dis)" = 1 &&
	grep -q "^ROUTINE.*Crc.*Hasher.*digest" rs2.dis &&
	flat=$(sed -n "s/^ *\([0-9.]*\)\(m\?s\) .*(flat, cum).*/\1\2/p" rs2.dis) &&
	echo "flat: $flat" && test "$flat" != "0" &&
	grep -E -q "^ +[0-9.]+m?s .* [0-9a-f]+: .*;.*digest callgraph_rs.rs:[0-9]+" rs2.dis
'

test_expect_success '-disasm in C: the hot function, its instructions on its lines' '
	go tool pprof -disasm crunch c.pb.gz >c.dis 2>&1 &&
	grep -q "^ROUTINE.*crunch" c.dis &&
	grep -E -q "^ +[0-9.]+m?s .* [0-9a-f]+: .*;crunch callgraph.c:'"$(line_of "$C_SRC" HOT:crunch)"'$" c.dis
'

test_expect_success 'mappings carry start, limit, offset and build-id' '
	go tool pprof -raw rs.pb.gz >rs.raw &&
	id=$(readelf -n "$TARGETS/callgraph_rs" | sed -n "s/.*Build ID: *//p") &&
	grep -E "^1: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ $TARGETS/callgraph_rs $id " rs.raw
'

test_expect_success '-o FILE; no binary to a terminal, no -o for text' '
	test -s rs.pb.gz &&
	expect_exit 2 "$RSPROF" report -o x.txt rs.db &&
	! test -e x.txt
'

if command -v tmux >/dev/null; then
	test_expect_success 'pprof to a terminal is refused' '
		tmux -L t2600 new-session -d -x 100 -y 10 \
			"\"$RSPROF\" report --format pprof \"$TEST_DIR/rs.db\" 2>\"$TEST_DIR/tty.err\"; echo \$? >\"$TEST_DIR/tty.rc\"" &&
		wait_for_file "$TEST_DIR/tty.rc" &&
		test "$(cat tty.rc)" = 2 &&
		grep -q "not for a terminal" tty.err
	'
fi

if have_bpf && [ -x "$TARGETS/heap_rust" ]; then
	test_expect_success 'Rust: one spelling per function (legacy and v0 names agree)' '
		"$RSPROF" record -q -g -o hr.db -- "$TARGETS/heap_rust" >/dev/null &&
		sql hr.db "SELECT DISTINCT function FROM symbol_frames UNION
			SELECT DISTINCT function FROM symbols" >fns &&
		grep "grow" fns &&
		# RawVecInner in current std; a free function in the std of 1.63 (Debian)
		grep -qx "alloc::raw_vec::\(RawVecInner::\)\{0,1\}finish_grow" fns &&
		! grep -E "^<[A-Za-z_:]+>::|RawVecInner<A>|RawVec<T,A>" fns
	'
fi

if have_bpf && [ -x "$TARGETS/heap_c" ]; then
	test_expect_success 'heap export: four sample types, totals equal report' '
		"$RSPROF" record -q -o heap.db -- "$TARGETS/heap_c" >/dev/null &&
		"$RSPROF" report --heap --format pprof -o heap.pb.gz heap.db &&
		go tool pprof -raw heap.pb.gz >heap.raw &&
		grep -q "^alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes\[dflt\]$" heap.raw &&
		sed -n "/^Samples:/,/^Locations/p" heap.raw |
			awk "/^ *-?[0-9]+ +-?[0-9]+ +-?[0-9]+ +-?[0-9]+:/ { a += \$1; b += \$2; c += \$3; d += \$4 }
			     END { print a, b, c, d }" >pp.tot &&
		"$RSPROF" report --heap --json -n 0 heap.db >h.json &&
		python3 -c "import json, sys
d = json.load(open(\"h.json\"))
s = d[\"summary\"]
rows = d[\"heap\"][\"rows\"]
ab = sum(r[\"alloc_bytes\"] for r in rows)
print(s[\"alloc_count\"], ab, s[\"alloc_count\"] - s[\"free_count\"], s[\"live_bytes\"])" >rep.tot &&
		cat pp.tot rep.tot &&
		test "$(cat pp.tot)" = "$(cat rep.tot)"
	'
fi

test_done
