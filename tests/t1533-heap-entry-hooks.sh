#!/bin/sh
# Allocators not reached through the tracker's malloc are hooked in-process
# by rewriting their entry points (preload/patch.c, preload/hooks.c):
# rustc, whose executable defines malloc (jemalloc linked in), and
# CPython, whose objects come from pymalloc (wrapped through
# PyMem_SetAllocator, as tracemalloc does). The program's own output and
# exit status are those of an unprofiled run; the sites are the program's
# (CPython's objects, not pymalloc's arenas).
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

LIMIT=120
MiB=1048576

# same DB PROG ARGS...: stdout and exit status without rsprof and under
# `rsprof record -v --no-cpu -o DB` (its stderr into sum), compared.
same() {
	_db=$1
	shift
	timeout $LIMIT "$@" >plain.out 2>plain.err
	_want=$?
	timeout $LIMIT "$RSPROF" record -v --no-cpu -o "$_db" -- "$@" >prof.out 2>sum
	_got=$?
	[ $_got != 124 ] || { echo "hung under rsprof record" >&2; return 1; }
	[ $_got = $_want ] || { echo "exit $_got under rsprof, $_want without" >&2; cat sum >&2; return 1; }
	cmp plain.out prof.out || { echo "the output differs" >&2; return 1; }
	test "$(meta "$_db" heap_backend)" = preload
}

cat >small.rs <<'RS'
use std::collections::HashMap;
fn main() {
    let mut m = HashMap::new();
    for i in 0..1000u32 {
        m.insert(i, vec![i; 10]);
    }
    println!("{}", m.len());
}
RS

SYSROOT=$(rustc --print sysroot 2>/dev/null)
RUSTC=$SYSROOT/bin/rustc
if [ -x "$RUSTC" ] && nm -D "$RUSTC" 2>/dev/null | grep -q " T malloc$"; then
	test_expect_success 'rustc (its own malloc): in-process, the same result' '
		same rustc.db "$RUSTC" -O -o small_prof small.rs &&
		"$RUSTC" -O -o small_plain small.rs && ./small_plain >a && ./small_prof >b && cmp a b &&
		grep -q "[1-9] allocator entry points rewritten (0 refused)" sum &&
		n=$(sql rustc.db "SELECT SUM(alloc_count) FROM heap_events") &&
		echo "$n allocations" && test "$n" -gt 50000 &&
		no_negative_site rustc.db
	'
else
	test_skip 'rustc with its own malloc' "no rustc whose executable defines malloc ($RUSTC)"
fi

# a Rust #[global_allocator] calling mimalloc through FFI (inlined into
# every caller: only mimalloc's own entry points see its allocations)
MG=$TEST_SRC/targets/alloc/heap_mimalloc_ga.rs
if rustc -g -O --edition 2021 -o mg "$MG" 2>mg.err; then
	test_expect_success 'Rust #[global_allocator] over mimalloc (FFI): in-process, the same output' '
		same mg.db ./mg 20000 &&
		grep -q "[1-9][0-9]* allocator entry points rewritten (0 refused)" sum
	'
	# report's view: the allocator's methods are passed over to their callers
	test_expect_success '... its allocations on the program'"'"'s lines, none left' '
		"$RSPROF" report --heap --csv --sort-by allocated -n 50 mg.db |
			awk -F, "\$11 ~ /heap_mimalloc_ga.rs\$/ { print \$12 \"|\" \$4 \"|\" \$6 \"|\" \$8 \"|\" \$9 }" \
			>mg.lines && cat mg.lines &&
		grep -qx "$(line_of MG_KEEP "$MG")|0|$((8 * MiB))|1|1" mg.lines &&
		grep -qx "$(line_of MG_BOXES "$MG")|0|$((2000 * 1024))|2000|2000" mg.lines &&
		grep -q "^$(line_of MG_CHURN "$MG")|0|[0-9]*|20000|20000$" mg.lines &&
		grep -q "^$(line_of MG_GROW "$MG")|0|" mg.lines &&
		no_negative_site mg.db
	'
elif [ -n "${CI:-}" ]; then
	test_expect_success 'the mimalloc Rust target builds' 'cat mg.err; false'
else
	test_skip 'Rust over mimalloc' "it does not build here ($(head -n 1 mg.err))"
fi

# a #[global_allocator] that maps its own memory and is inlined into its
# callers: no entry point to hook; the arena's mapping is counted, and the
# report says most of the heap is an allocator's arenas, and what to do
test_expect_success 'Rust #[global_allocator] over its own mmap: the same output, and a hint' '
	same ar.db "$TARGETS/heap_arena_alloc" 20000 &&
	"$RSPROF" report --heap ar.db >ar.rep && cat ar.rep &&
	grep -q "of the heap at its peak (64.0 MiB) is anonymous mappings" ar.rep &&
	grep -q "Rust #\[global_allocator\] over its own mmap, allocate through System" ar.rep
'

test_expect_success 'a heap of malloc blocks gets no such hint' '
	"$RSPROF" record -q --no-cpu -o c.db -- "$TARGETS/heap_c" 1000 0 &&
	"$RSPROF" report --heap c.db >c.rep && ! grep -q "anonymous mappings" c.rep
'

PY=$(command -v python3.11 || true)
[ -x /usr/bin/python3.11 ] && PY=/usr/bin/python3.11
if [ -n "$PY" ] && nm -D "$PY" 2>/dev/null | grep -q " T PyMem_SetAllocator$"; then
	cat >objs.py <<'PYEOF'
keep = [{"k": i, "v": str(i) * 3} for i in range(100000)]
print(len(keep), sum(len(d["v"]) for d in keep))
PYEOF
	test_expect_success 'CPython: in-process, its allocator wrapped, the same output' '
		same py.db "$PY" objs.py &&
		grep -q "2 allocator entry points rewritten (0 refused)" sum
	'
	test_expect_success 'CPython: the objects are the sites, not pymalloc arenas' '
		sql py.db "SELECT s.file, s.function, SUM(h.alloc_bytes) AS b FROM heap_events h
			JOIN symbols s ON h.addr = s.addr GROUP BY s.file, s.line ORDER BY b DESC
			LIMIT 5" >top && cat top &&
		head -n 1 top | grep -q "Objects/" && ! grep -q "new_arena" top &&
		test "$(sql py.db "SELECT COUNT(*) FROM heap_events WHERE kind = 1 AND alloc_bytes > $MiB")" = 0
	'
else
	test_skip 'CPython' 'no python3.11 exporting PyMem_SetAllocator (Debian python3.11)'
fi

test_done
