#!/bin/sh
# Call stacks of programs whose own code keeps no frame pointers: with
# --call-graph fp the recorder says so once, up front, with what to do; a
# frame-pointer build gets no warning, and neither does a recording
# without call stacks; -g (dwarf: the stack copy unwound through the CFI)
# needs no frame pointers and says nothing.
# The check runs once samples came: -F 999, as these programs take only
# some milliseconds of CPU time (at 99 Hz one sample, or none).
. "$(dirname "$0")/lib.sh"

if ! have_perf; then
	test_skip 'record -g without frame pointers' 'perf events not allowed here'
	test_done
fi

# meta_of FILE KEY
meta_of() {
	sql "$1" "SELECT value FROM meta WHERE key = '$2'"
}

test_expect_success 'C -O2 -fomit-frame-pointer, --call-graph fp: one warning, then the recording' '
	{ "$RSPROF" record -q --call-graph fp -F 999 --no-heap -o c.db -- "$TARGETS/nofp_wrap" xmalloc \
		>/dev/null 2>err; rc=$?; cat err; test $rc = 0; } &&
	test "$(grep -c "keeps no frame pointers" err)" = 1 &&
	grep -q "nofp_wrap keeps no frame pointers (0 of [0-9]* functions of its own code" err &&
	grep -q "^hint: record with -g (--call-graph dwarf" err &&
	test "$(meta_of c.db call_graph)" = on && test "$(meta_of c.db call_graph_mode)" = fp,512
'

test_expect_success 'the same with -g: nothing said, the stacks reach main' '
	"$RSPROF" record -q -g -F 999 --no-heap -o cg.db -- "$TARGETS/nofp_wrap" xmalloc >/dev/null 2>errg &&
	cat errg && ! grep -q "frame pointers" errg &&
	test "$(meta_of cg.db call_graph_mode)" = dwarf,8192 &&
	n=$(sql cg.db "SELECT COUNT(*) FROM stack_frames f JOIN symbols s ON s.addr = f.addr
		       WHERE s.function = '"'main'"'") && test "$n" -gt 0
'

test_expect_success 'a frame-pointer build, or no call stacks: nothing said' '
	"$RSPROF" record -q --call-graph fp -F 999 --no-heap -o fp.db -- "$TARGETS/heap_c" 1000 0 \
		>/dev/null 2>err2 &&
	! grep -q "frame pointers" err2 &&
	test "$(sql fp.db "SELECT SUM(count) FROM cpu_samples")" -gt 0 &&
	"$RSPROF" record -q -F 999 --no-heap -o nog.db -- "$TARGETS/nofp_wrap" xmalloc >/dev/null 2>err3 &&
	! grep -q "frame pointers" err3 &&
	test "$(sql nog.db "SELECT SUM(count) FROM cpu_samples")" -gt 0
'

if command -v "${RUSTC:-rustc}" >/dev/null 2>&1; then
	test_expect_success 'Rust without force-frame-pointers, --call-graph fp: the crate has none' '
		"${RUSTC:-rustc}" -g -O --edition 2021 -o rs_nofp "$TEST_SRC/targets/heap_rust.rs" &&
		"$RSPROF" record -q --call-graph fp -F 999 --no-heap -o rs.db -- ./rs_nofp 10 0 \
			>/dev/null 2>err4 &&
		cat err4 && grep -q "rs_nofp keeps no frame pointers" err4 &&
		"$RSPROF" record -q --call-graph fp -F 999 --no-heap -o rsfp.db -- \
			"$TARGETS/heap_rust" 10 0 >/dev/null 2>err5 &&
		! grep -q "frame pointers" err5
	'
else
	test_skip 'Rust without force-frame-pointers' 'no rustc'
fi

test_expect_success 'a bad --call-graph mode: exit 2, with the modes' '
	expect_exit 2 "$RSPROF" record --call-graph lbr -- true 2>err6 &&
	grep -q "is not fp, dwarf or dwarf,SIZE" err6 &&
	expect_exit 2 "$RSPROF" record --call-graph dwarf,100 -- true 2>err7 &&
	expect_exit 2 "$RSPROF" record --call-graph dwarf,70000 -- true 2>err8
'

test_done
