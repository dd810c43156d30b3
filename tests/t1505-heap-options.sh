#!/bin/sh
# Heap options and failures: --heap-probes picks the allocator; a program
# without the asked-for allocator records CPU only with a warning, or fails
# with exit 5 when heap was all that was asked; --no-heap.
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

if ! have_bpf; then
	test_skip 'heap options' 'needs root and kernel BTF'
	test_done
fi

test_expect_success '--heap-probes=libc on a Rust program: libc malloc family' '
	"$RSPROF" record -q --no-cpu --heap-probes=libc -o libc.db -- "$TARGETS/heap_rust" 1000 0 &&
	test "$(meta libc.db heap_probes)" = libc &&
	heap_lines libc.db | sed -n 1p | grep -q "heap_rust.rs|"
'

test_expect_success '--heap-probes=rust on a C program: CPU only, with the reason' '
	"$RSPROF" record -q --heap-probes=rust -o cpu.db -- "$TARGETS/heap_c" 1000 0 >/dev/null 2>err &&
	cat err && grep -q "no Rust allocator" err && grep -q "CPU only" err &&
	test "$(meta cpu.db heap)" = off
'

test_expect_success '... and exit 5 when only the heap was asked for' '
	expect_exit 5 "$RSPROF" record -q --no-cpu --heap-probes=rust -o none.db -- "$TARGETS/heap_c" 1000 0 >/dev/null 2>err &&
	cat err && grep -q "no Rust allocator" err
'

test_expect_success '--no-heap records no heap' '
	"$RSPROF" record -q --no-heap -o nh.db -- "$TARGETS/heap_c" 1000 0 >/dev/null &&
	test "$(meta nh.db heap)" = off &&
	test "$(sql nh.db "SELECT COUNT(*) FROM heap_events")" = 0
'

test_done
