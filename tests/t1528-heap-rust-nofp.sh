#!/bin/sh
# A Rust program built as cargo builds a release, without frame pointers
# (issue 9; tests/targets/nofp_heap_rs.rs, -O -C force-frame-pointers=no):
# launched under rsprof, the in-process tracker unwinds it through the
# DWARF CFI (libunwind) and Vec growth, vec![0; n], Box, String and
# HashMap land on the user's lines with the bytes they keep, as t1500
# checks for the frame-pointer build. The stored stacks are whole: they
# reach glibc's start-up code, which no frame-pointer chain of this program
# nor the stack scan (the executable's words only) gives.
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

SRC=$TEST_SRC/targets/nofp_heap_rs.rs
BIN=$TARGETS/nofp_heap_rs
MiB=1048576

if [ ! -e /usr/lib/x86_64-linux-gnu/libunwind.so.8 ] && [ ! -e /lib/x86_64-linux-gnu/libunwind.so.8 ]; then
	test_skip 'CFI unwinding' 'libunwind.so.8 missing (apt-get install libunwind-dev)'
	test_done
fi

# site LINES MARKER: the row of the marker's line
site() {
	grep "nofp_heap_rs.rs|$(line_of "$2" "$SRC")|" "$1"
}

test_expect_success 'the target keeps no frame pointers' '
	! objdump -d "$BIN" | grep -A6 "nofp_heap_rs8grow_vec.*>:" | grep -q "mov *%rsp,%rbp"
'

test_expect_success 'record -- nofp_heap_rs: the tracker unwinds through the CFI' '
	"$RSPROF" record -v -q --no-cpu -o rs.db -- "$BIN" 2>err &&
	grep "CFI unwinding" err && grep -q "CFI unwinding on (libunwind)" err &&
	test "$(meta rs.db heap_backend)" = preload &&
	heap_lines rs.db >lines && head -n 8 lines
'

test_expect_success 'Vec growth, vec![0; n], Box, String and HashMap on their lines' '
	site lines NOFP_VEC | grep -q "|nofp_heap_rs::grow_vec|" &&
	site lines NOFP_ZEROED | grep -q "|nofp_heap_rs::zeroed|" &&
	site lines NOFP_BOX | grep -q "|nofp_heap_rs::boxes|" &&
	site lines NOFP_STRING | grep -q "|nofp_heap_rs::grow_string|" &&
	site lines NOFP_MAP | grep -q "|nofp_heap_rs::map|"
'

test_expect_success 'each within 10% of what it keeps' '
	within "$(site lines NOFP_VEC | cut -d"|" -f4)" $((16 * MiB)) 10 &&
	within "$(site lines NOFP_ZEROED | cut -d"|" -f4)" $((8 * MiB)) 10 &&
	within "$(site lines NOFP_BOX | cut -d"|" -f4)" $((4 * MiB)) 10 &&
	test "$(site lines NOFP_BOX | cut -d"|" -f5)" = 65536 &&
	within "$(site lines NOFP_STRING | cut -d"|" -f4)" $((2 * MiB)) 10 &&
	within "$(site lines NOFP_MAP | cut -d"|" -f4)" $((131072 * 17 + 16)) 10 &&
	within "$(site lines NOFP_BOXES | cut -d"|" -f4)" $((MiB / 2)) 10
'

test_expect_success 'report --heap: the five on top, nothing in alloc:: or std' '
	"$RSPROF" report --heap -n 6 rs.db >rep && cat rep &&
	sed -n "/Location/,\$p" rep | sed -n 2,6p >top &&
	test "$(grep -c "nofp_heap_rs.rs:" top)" = 5 &&
	! grep -q "alloc::\|/library/" top
'

test_expect_success 'the stacks are whole: from the allocation to glibc start-up' '
	id=$(sql rs.db "SELECT h.stack_id FROM heap_events h JOIN symbols s ON s.addr = h.addr
		WHERE s.function = '"'"'nofp_heap_rs::grow_vec'"'"' ORDER BY h.alloc_bytes DESC LIMIT 1") &&
	sql rs.db "SELECT y.function FROM stack_frames f JOIN symbols y ON y.addr = f.addr
		WHERE f.stack_id = $id ORDER BY f.pos" >frames && cat frames &&
	grep -qx "nofp_heap_rs::grow_vec" frames &&
	grep -qx "nofp_heap_rs::main" frames &&
	grep -q "^__libc_start" frames
'

test_done
