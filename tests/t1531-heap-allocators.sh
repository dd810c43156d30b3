#!/bin/sh
# A program linked with another allocator (jemalloc, mimalloc, tcmalloc:
# Debian's -dev packages) is tracked in-process: the tracker forwards each
# call to that allocator's own function (the next malloc in the lookup
# order, as heaptrack does), never to glibc's, and leaves its blocks as
# they come (no header: the program hands them to the allocator's own
# functions too, whose entry points are hooked: a block counts once
# whichever function of the family allocates or frees it). The program's output is the same as without rsprof, the
# sites are on its lines with the bytes it keeps; the allocator's own
# mappings are not counted again as mmap sites. Also an allocator in
# LD_PRELOAD, after the tracker (set for the target by env: rsprof's own
# environment stays its own, an ASan build's included).
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

SRC=$TEST_SRC/targets/heap_alloclib.c
LIMIT=60
N=20000

# same DB PROG ARGS...: stdout and exit status without rsprof and under
# `rsprof record --no-cpu -o DB`, compared.
same() {
	_db=$1
	shift
	timeout $LIMIT "$@" >plain.out 2>plain.err
	_want=$?
	timeout $LIMIT "$RSPROF" record -q --no-cpu -o "$_db" -- "$@" >prof.out 2>prof.err
	_got=$?
	[ $_got != 124 ] || { echo "hung under rsprof record" >&2; return 1; }
	cat prof.out
	[ $_got = $_want ] || { echo "exit $_got under rsprof, $_want without" >&2; cat prof.err >&2; return 1; }
	cmp plain.out prof.out || { echo "the output differs" >&2; return 1; }
	test "$(meta "$_db" heap_backend)" = preload
}

for a in jemalloc mimalloc tcmalloc; do
	A=$(echo $a | tr a-z A-Z)
	if ! gcc -g -O1 -fno-omit-frame-pointer -fno-inline -DALLOC_$A -o alib_$a "$SRC" -l$a \
		2>build_$a.err; then
		if [ -n "${CI:-}" ]; then
			test_expect_success "$a: the target builds" 'cat build_'$a'.err; false'
		else
			test_skip "$a" "lib$a-dev is not installed ($(head -n 1 build_$a.err))"
		fi
		continue
	fi
	test_expect_success "$a: in-process, the same output as without rsprof" "
		same $a.db ./alib_$a $N
	"
	test_expect_success "$a: the sites on the program's lines, with their bytes" "
		alib_sites $a.db $N
	"
	test_expect_success "$a: its own mappings are not mmap sites" "
		test \"\$(sql $a.db 'SELECT COUNT(*) FROM heap_events WHERE kind = 1')\" = 0
	"
	# its blocks carry no header of the tracker's: none is estimated in memory
	test_expect_success "$a: no tracker headers counted in the resident memory" "
		test \"\$(meta $a.db heap_block_header_bytes)\" = 0 &&
		\"\$RSPROF\" report --heap $a.db >$a.rep && cat $a.rep &&
		! grep -q \"tracker's headers\" $a.rep
	"
done

if [ -e /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 ]; then
	test_expect_success 'jemalloc in LD_PRELOAD, after the tracker: forwarded to it' '
		same pre.db env LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 \
			"$TARGETS/heap_alloclib" $N &&
		source_lines pre.db "$SRC" >pre.lines && cat pre.lines &&
		want_line pre.lines ALIB_KEEP 1024000 1000 0 &&
		want_line pre.lines ALIB_CHURN 0 $N $N
	'
fi

test_done
