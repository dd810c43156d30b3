#!/bin/sh
# A running program linked with another allocator (jemalloc, mimalloc,
# tcmalloc: Debian's -dev packages) gets the heap tracker injected, as one
# on glibc's malloc does: the allocator library's malloc family and its
# own entry points (mallocx, mi_malloc, tc_malloc...) are rewritten to go
# through the tracker while every other thread is stopped, and stay as a
# pass-through after rsprof is gone. Each target's output and exit status
# are those of a run no rsprof touched: 8 threads allocating while threads
# start and exit, attached and detached three times then rsprof killed
# with SIGKILL; the program of t1531 (malloc's blocks handed to the
# allocator's own functions and back), its sites on its lines.
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

if ! have_bpf; then
	test_skip 'injection into programs of other allocators' 'needs root and kernel BTF'
	test_done
fi

SRC=$TEST_SRC/targets/heap_alloclib.c
N=20000

# injected DB: the tracker ran in the process, counted something, no site below zero
injected() {
	test "$(meta "$1" heap_backend)" = inject && test -z "$(meta "$1" heap_backend_reason)" &&
	test "$(sql "$1" "SELECT SUM(alloc_count) FROM heap_events")" -gt 0 &&
	no_negative_site "$1"
}

for a in jemalloc mimalloc tcmalloc; do
	A=$(echo $a | tr a-z A-Z)
	if ! gcc -g -O1 -fno-omit-frame-pointer -pthread -o inj_$a \
		"$TEST_SRC/targets/heap_inject.c" -l$a 2>build_$a.err ||
	   ! gcc -g -O1 -fno-omit-frame-pointer -fno-inline -DALLOC_$A -o alib_$a "$SRC" -l$a \
		2>>build_$a.err; then
		if [ -n "${CI:-}" ]; then
			test_expect_success "$a: the targets build" 'cat build_'$a'.err; false'
		else
			test_skip "$a" "lib$a-dev is not installed ($(head -n 1 build_$a.err))"
		fi
		continue
	fi

	test_expect_success "$a: 8 threads churning, attached three times, then rsprof killed" "
		rm -f ready
		./inj_$a churn \"\$PWD/ready\" 400 >churn_$a.out &
		tp=\$!
		bg_pid \$tp
		wait_for_file ready || exit 1
		for i in 1 2 3; do
			\"\$RSPROF\" record -q -d 600ms -p \$tp -o churn_$a\$i.db || exit 1
		done
		\"\$RSPROF\" record -q -p \$tp -o killed_$a.db &
		rp=\$!
		wait_checkpoints killed_$a.db && kill -KILL \$rp && { wait \$rp || :; } &&
		wait \$tp && ./inj_$a churn \"\$PWD/ready.base\" 400 >churn_$a.want &&
		diff churn_$a.want churn_$a.out &&
		for i in 1 2 3; do injected churn_$a\$i.db || exit 1; done &&
		heap_lines churn_${a}1.db | grep -q 'heap_inject.c|.*|work|'
	"

	test_expect_success "$a: attached, the program's sites on its lines, its output as alone" "
		rm -f ready go
		./alib_$a $N \"\$PWD/ready\" \"\$PWD/go\" >alib_$a.out &
		tp=\$!
		bg_pid \$tp
		wait_for_file ready || exit 1
		\"\$RSPROF\" record -v --no-cpu -p \$tp -o alib_$a.db 2>alib_$a.err &
		rp=\$!
		wait_checkpoints alib_$a.db && touch go &&
		wait \$rp && wait \$tp && ./alib_$a $N >alib_$a.want && diff alib_$a.want alib_$a.out &&
		injected alib_$a.db &&
		grep 'allocator entry points rewritten (0 refused)' alib_$a.err &&
		alib_sites alib_$a.db $N &&
		test \"\$(sql alib_$a.db 'SELECT COUNT(*) FROM heap_events WHERE kind = 1')\" = 0
	"
done

# a Rust #[global_allocator] calling Debian's libmimalloc through FFI
# (inlined into every caller: only mimalloc's own entry points see its
# allocations), attached once it runs
MG=$TEST_SRC/targets/alloc/heap_mimalloc_ga.rs
MiB=1048576
if rustc -g -O --edition 2021 -o mg "$MG" 2>mg.err; then
	test_expect_success 'Rust #[global_allocator] over mimalloc, attached: its lines, its output' '
		rm -f ready go
		./mg 20000 "$PWD/ready" "$PWD/go" >mg.out &
		tp=$!
		bg_pid $tp
		wait_for_file ready || exit 1
		"$RSPROF" record -v --no-cpu -p $tp -o mg.db 2>mg.sum &
		rp=$!
		wait_checkpoints mg.db && touch go &&
		wait $rp && wait $tp && ./mg 20000 >mg.want && diff mg.want mg.out &&
		injected mg.db &&
		grep -q "[1-9][0-9]* allocator entry points rewritten (0 refused)" mg.sum &&
		"$RSPROF" report --heap --csv --sort-by allocated -n 50 mg.db |
			awk -F, "\$11 ~ /heap_mimalloc_ga.rs\$/ { print \$12 \"|\" \$4 \"|\" \$6 \"|\" \$8 \"|\" \$9 }" \
			>mg.lines && cat mg.lines &&
		grep -qx "$(line_of MG_KEEP "$MG")|0|$((8 * MiB))|1|1" mg.lines &&
		grep -qx "$(line_of MG_BOXES "$MG")|0|$((2000 * 1024))|2000|2000" mg.lines &&
		grep -q "^$(line_of MG_CHURN "$MG")|0|[0-9]*|20000|20000$" mg.lines
	'
elif [ -n "${CI:-}" ]; then
	test_expect_success 'the mimalloc Rust target builds' 'cat mg.err; false'
else
	test_skip 'Rust over mimalloc, attached' "it does not build here ($(head -n 1 mg.err))"
fi

# an allocator inside the executable: refused with the reason, uprobes instead
test_expect_success 'the executable'"'"'s own malloc: uprobes, and why' '
	"$TARGETS/heap_own_malloc" 4000 >own.out &
	tp=$!
	bg_pid $tp
	"$RSPROF" record -d 500ms -p $tp -o own.db >own.sum 2>&1
	rc=$?
	wait $tp
	cat own.sum && test $rc = 0 &&
	test "$(meta own.db heap_backend)" = uprobe &&
	meta own.db heap_backend_reason | grep "its own malloc.*launch the program under rsprof"
'

test_done
