#!/bin/sh
# Programs built without frame pointers (Documentation/technical/heap-tracking.txt,
# "Without frame pointers"):
# Rust without -C force-frame-pointers=yes, whose Vec and String growth
# goes through std code instantiated in the crate (no frame pointers
# either), and C with -fomit-frame-pointer. The frame-pointer chain stops
# early; the kernel then keeps the stack words pointing into the
# executable's text, and those following a call give the user's line.
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

RS=$TEST_SRC/targets/heap_rust.rs
C=$TEST_SRC/targets/heap_c.c
MiB=1048576

test_expect_success "build heap_rust without frame pointers, heap_c with -fomit-frame-pointer" '
	"$RUSTC" -g -O --edition 2021 -o rust_nofp "$RS" &&
	gcc -g -O1 -fomit-frame-pointer -fno-inline -o c_nofp "$C"
'

for B in $HEAP_BACKENDS; do
backend_ok $B || continue

test_expect_success "[$B] Rust: Vec and String growth still on their lines" '
	"$RSPROF" record --heap-backend $B -q --no-cpu -o rs-$B.db -- ./rust_nofp 1000 0 &&
	heap_lines rs-$B.db >lines && head -n 4 lines &&
	sed -n 1p lines | grep -q "heap_rust.rs|$(line_of HEAP_VEC "$RS")|" &&
	sed -n 2p lines | grep -q "heap_rust.rs|$(line_of HEAP_ZEROED "$RS")|" &&
	sed -n 3p lines | grep -q "heap_rust.rs|$(line_of HEAP_STRING "$RS")|" &&
	within "$(sed -n 1p lines | cut -d"|" -f4)" $((40 * MiB)) 10 &&
	within "$(sed -n 3p lines | cut -d"|" -f4)" $((4 * MiB)) 10
'

test_expect_success "[$B] C: the three lines that call the allocator" '
	"$RSPROF" record --heap-backend $B -q --no-cpu -o c-$B.db -- ./c_nofp 1000 0 >/dev/null &&
	heap_lines c-$B.db >clines && head -n 4 clines &&
	sed -n 1p clines | grep -q "heap_c.c|$(line_of HEAP_REALLOC "$C")|" &&
	sed -n 2p clines | grep -q "heap_c.c|$(line_of HEAP_CALLOC "$C")|" &&
	sed -n 3p clines | grep -q "heap_c.c|$(line_of HEAP_MALLOC "$C")|"
'
done

test_done
