#!/bin/sh
# record -g on a program whose own code keeps no frame pointers (issue 9):
# the recorder says so once, up front, with what to do; a frame-pointer
# build gets no warning, and neither does a recording without -g.
# The check runs once samples came: -F 999, as these programs take only
# some milliseconds of CPU time (at 99 Hz one sample, or none).
. "$(dirname "$0")/lib.sh"

if ! have_perf; then
	test_skip 'record -g without frame pointers' 'perf events not allowed here'
	test_done
fi

test_expect_success 'C -O2 -fomit-frame-pointer: one warning, then the recording' '
	{ "$RSPROF" record -q -g -F 999 --no-heap -o c.db -- "$TARGETS/nofp_wrap" xmalloc >/dev/null 2>err;
	  rc=$?; cat err; test $rc = 0; } &&
	test "$(grep -c "keeps no frame pointers" err)" = 1 &&
	grep -q "nofp_wrap keeps no frame pointers (0 of [0-9]* functions of its own code" err &&
	grep -q "^hint: build with -fno-omit-frame-pointer" err &&
	test "$(sql c.db "SELECT value FROM meta WHERE key = '\''call_graph'\''")" = on
'

test_expect_success 'a frame-pointer build, or no -g: nothing said' '
	"$RSPROF" record -q -g -F 999 --no-heap -o fp.db -- "$TARGETS/heap_c" 1000 0 >/dev/null 2>err2 &&
	! grep -q "frame pointers" err2 &&
	test "$(sql fp.db "SELECT SUM(count) FROM cpu_samples")" -gt 0 &&
	"$RSPROF" record -q -F 999 --no-heap -o nog.db -- "$TARGETS/nofp_wrap" xmalloc >/dev/null 2>err3 &&
	! grep -q "frame pointers" err3 &&
	test "$(sql nog.db "SELECT SUM(count) FROM cpu_samples")" -gt 0
'

if command -v "${RUSTC:-rustc}" >/dev/null 2>&1; then
	test_expect_success 'Rust without force-frame-pointers: std keeps them, the crate does not' '
		"${RUSTC:-rustc}" -g -O --edition 2021 -o rs_nofp "$TEST_SRC/targets/heap_rust.rs" &&
		"$RSPROF" record -q -g -F 999 --no-heap -o rs.db -- ./rs_nofp 10 0 >/dev/null 2>err4 &&
		cat err4 && grep -q "rs_nofp keeps no frame pointers" err4 &&
		"$RSPROF" record -q -g -F 999 --no-heap -o rsfp.db -- "$TARGETS/heap_rust" 10 0 \
			>/dev/null 2>err5 &&
		! grep -q "frame pointers" err5
	'
else
	test_skip 'Rust without force-frame-pointers' 'no rustc'
fi

test_done
