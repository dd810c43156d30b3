#!/bin/sh
# report --heap --sort-by temporary (issue 14): heap_temp's sites have
# known temporary counts (heaptrack's definition: the free directly follows
# its allocation, no other allocation or free of the thread in between).
# The in-process tracker counts them exactly; heaptrack ranks the same
# program the same way (heaptrack: the test group of scripts/packages.txt); the
# uprobe backend does not count them and says so ('-').
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

SRC=$TEST_SRC/targets/heap_temp.c
L_A=$(line_of TEMP:a "$SRC")
L_B=$(line_of TEMP:b "$SRC")
L_P1=$(line_of PAIR:first "$SRC")
L_P2=$(line_of PAIR:second "$SRC")
L_C=$(line_of KEEP:c "$SRC")

# "line allocs temp" of heap_temp.c's rows, in report's order.
rows() {
	"$RSPROF" report --heap --csv -n 50 "$@" |
		awk -F, 'NR > 1 && $11 ~ /heap_temp[.]c$/ { print $12, $8, ($16 == "" ? "-" : $16) }'
}

test_expect_success 'record heap_temp with the in-process tracker' '
	"$RSPROF" record -q --no-cpu --heap-backend preload -o t.db -- "$TARGETS/heap_temp" &&
	test "$(meta t.db heap_backend)" = preload &&
	test "$(meta t.db heap_temporary)" = 400000
'

test_expect_success 'the known counts of every site' '
	rows t.db >r && cat r &&
	grep -qx "$L_A 300000 300000" r &&
	grep -qx "$L_B 100000 100000" r &&
	grep -qx "$L_P1 50000 0" r &&
	grep -qx "$L_P2 50000 0" r &&
	grep -qx "$L_C 200000 0" r &&
	test "$(sql t.db "SELECT SUM(temp_count) FROM heap_events")" = 400000
'

test_expect_success '--sort-by temporary ranks TEMP:a, then TEMP:b; allocs ranks KEEP:c second' '
	rows --sort-by temporary t.db | head -2 | cut -d" " -f1 | tr "\n" " " >o &&
	test "$(cat o)" = "$L_A $L_B " &&
	rows --sort-by allocs t.db | head -2 | cut -d" " -f1 | tr "\n" " " >o &&
	test "$(cat o)" = "$L_A $L_C "
'

test_expect_success 'the text table: a Temp column, the header says what it counts' '
	"$RSPROF" report --heap --sort-by temporary t.db >out &&
	cat out &&
	grep -q "^# temp:     allocations freed by their thread before its next allocation or$" out &&
	grep -q "^# *free (heaptrack.s \"temporary\", per thread); 400,000 in the recording$" out &&
	grep -q "^# *counted for glibc malloc.s blocks only: 0 under jemalloc, mimalloc,$" out &&
	grep -q "^ *Heap *Peak@cp *Allocs *Temp *Location *Function$" out &&
	grep -q "^ *0 B *0 B *300,000 *300,000 .*heap_temp.c:$L_A *temp_a$" out &&
	! "$RSPROF" report --heap t.db | grep -q Temp &&
	"$RSPROF" report --heap --json --sort-by temporary t.db | python3 -c "
import json, sys
d = json.load(sys.stdin)
h = d[\"heap\"][\"rows\"]
assert h[0][\"line\"] == $L_A and h[0][\"temp_count\"] == 300000, h[0]
"
'

if command -v heaptrack >/dev/null && command -v heaptrack_print >/dev/null; then
	# heaptrack_print -T: "N temporary allocations of M ... from", the
	# function, "  at FILE:LINE"; heap_temp.c lines with N > 0, in order.
	test_expect_success 'heaptrack ranks the temporaries the same way' '
		heaptrack -o ht "$TARGETS/heap_temp" >ht.log 2>&1 &&
		# ht.zst, or ht.gz where zstd is not installed (heaptrack only recommends it)
		ht=$(ls ht.zst ht.gz 2>/dev/null | head -n 1) && test -n "$ht" &&
		heaptrack_print -f "$ht" -p 0 -a 0 -l 0 -T 1 -n 20 -s 0 >ht.txt &&
		sed -n "/^MOST TEMPORARY ALLOCATIONS/,/^total runtime/p" ht.txt |
			awk "/ temporary allocations of / { n = \$1; want = 1; next }
			     want && /^  at .*heap_temp[.]c:/ { sub(/.*:/, \"\"); if (n > 0) print \$0, n; want = 0 }" >ht.rank &&
		cat ht.rank &&
		rows --sort-by temporary t.db | awk "\$3 > 0 { print \$1, \$3 }" >rs.rank &&
		diff ht.rank rs.rank
	'
else
	test_skip 'heaptrack ranks the temporaries the same way' 'heaptrack not installed (scripts/packages.txt, test group: make deps)'
fi

if backend_ok uprobe; then
	test_expect_success 'uprobes do not count temporaries: "-", and the header says so' '
		"$RSPROF" record -q --no-cpu --heap-backend uprobe -o u.db -- "$TARGETS/heap_temp" &&
		test -z "$(meta u.db heap_temporary)" &&
		test "$(sql u.db "SELECT COUNT(*) FROM heap_events WHERE temp_count IS NOT NULL")" = 0 &&
		"$RSPROF" report --heap --sort-by temporary u.db >out &&
		cat out &&
		grep -q "^# temp:     not counted: the uprobe backend" out &&
		grep -q "^ *0 B .* 300,000 *- .*heap_temp.c:$L_A" out &&
		rows u.db | grep -qx "$L_A 300000 -"
	'
fi

# Another allocator's blocks carry no header of the tracker's: their
# temporaries are not counted (0), and the header and the manual say so.
# heap_alloclib churns N malloc+free pairs through jemalloc: heaptrack
# counts them as temporary, rsprof reads 0.
if gcc -g -O1 -DALLOC_JEMALLOC -o alib_je "$TEST_SRC/targets/heap_alloclib.c" \
	-ljemalloc 2>je.err; then
	test_expect_success 'under jemalloc: 0 temporaries, and the header says why' '
		"$RSPROF" record -q --no-cpu -o je.db -- ./alib_je 20000 >/dev/null &&
		test "$(meta je.db heap_temporary)" = 0 &&
		"$RSPROF" report --heap --sort-by temporary je.db >out && head -n 8 out &&
		grep -q "^# *counted for glibc malloc.s blocks only: 0 under jemalloc" out &&
		if command -v heaptrack >/dev/null && command -v heaptrack_print >/dev/null; then
			heaptrack -o htje ./alib_je 20000 >htje.log 2>&1 &&
			ht=$(ls htje.zst htje.gz 2>/dev/null | head -n 1) &&
			n=$(heaptrack_print -f "$ht" | sed -n "s/^temporary memory allocations: \([0-9]*\).*/\1/p") &&
			echo "heaptrack: $n temporary" && test "$n" -ge 20000
		fi
	'
elif [ -n "${CI:-}" ]; then
	test_expect_success 'under jemalloc: the target builds' 'cat je.err; false'
else
	test_skip 'under jemalloc: 0 temporaries' "libjemalloc-dev is not installed ($(head -n 1 je.err))"
fi

test_expect_success 'a file without temp_count (before v3): "-", no error' '
	cp t.db old.db &&
	sqlite3 old.db "ALTER TABLE heap_events DROP COLUMN temp_count" &&
	rows --sort-by temporary old.db | grep -qx "$L_A 300000 -"
'

test_done
