#!/bin/sh
# Memory that never passes through malloc (issue 9): the in-process tracker
# counts the program's anonymous mappings at the line that called mmap, as
# allocations of their own kind (heap_events.kind = 1), and follows them
# through munmap, mremap and MAP_FIXED. heap_mmap keeps 50 MiB in 5 mmap
# arenas of its own sub-allocator beside 1 MiB from malloc (which glibc
# serves with an mmap of its own: counted once, as the malloc). With
# "remap" it unmaps, grows, cuts, shrinks and maps over its arenas (40 MiB
# left, 2 MiB at the MAP_FIXED line), starts a thread (glibc's stack, not
# counted) and maps a file (not anonymous, not counted).
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

MiB=1048576
SRC="$TEST_SRC/targets/heap_mmap.c"
ARENA=$(line_of HEAP_MMAP_ARENA "$SRC")
FIXED=$(line_of HEAP_MMAP_FIXED "$SRC")
MALLOC=$(line_of HEAP_MMAP_MALLOC "$SRC")

# live bytes at LINE of heap_mmap.c, kind KIND
live_at() {
	sql "$1" "SELECT COALESCE(SUM(h.alloc_bytes) - SUM(h.free_bytes), 0)
		FROM heap_events h JOIN symbols s ON h.addr = s.addr
		WHERE s.file LIKE '%heap_mmap.c' AND s.line = $2 AND h.kind = $3"
}

test_expect_success 'record heap_mmap: the arena line holds the 50 MiB' '
	"$RSPROF" record -q -i 200ms -o m.db -- "$TARGETS/heap_mmap" 600 >/dev/null &&
	test "$(meta m.db heap_backend)" = preload &&
	heap_lines m.db | head -n 3 &&
	a=$(live_at m.db $ARENA 1) && echo "arena $a" &&
	within "$a" $((50 * MiB)) 10 &&
	test "$(sql m.db "SELECT SUM(alloc_count) FROM heap_events h JOIN symbols s
		ON h.addr = s.addr WHERE s.line = $ARENA AND h.kind = 1")" = 5
'

test_expect_success 'the malloc beside it counts once, as a malloc' '
	m=$(live_at m.db $MALLOC 0) && echo "malloc $m" && within "$m" $MiB 10 &&
	test "$(live_at m.db $MALLOC 1)" = 0 &&
	test "$(sql m.db "SELECT SUM(alloc_bytes) - SUM(free_bytes) FROM heap_events
		WHERE kind = 1")" = $((50 * MiB)) &&
	seed_heap_queries m.db >/dev/null
'

test_expect_success 'report --heap tags the mapping rows [mmap]' '
	"$RSPROF" report --heap m.db >rep && cat rep &&
	grep -q "^ *50.0 MiB .*heap_mmap.c:$ARENA  *arena_new \[mmap\]$" rep &&
	grep "heap_mmap.c:$MALLOC " rep | grep -v -q "\[mmap\]" &&
	grep -q "^# memory: *tracked heap 5[01].[0-9] MiB of 5[0-9].[0-9] MiB resident" rep &&
	"$RSPROF" report --heap --json m.db | python3 -c "
import json, sys
rows = json.load(sys.stdin)[\"heap\"][\"rows\"]
k = {r[\"line\"]: r[\"kind\"] for r in rows}
assert k[$ARENA] == \"mmap\" and k[$MALLOC] == \"heap\", k
" &&
	"$RSPROF" report --heap --csv m.db | grep -q ",arena_new,.*,mmap$"
'

test_expect_success 'munmap, mremap and MAP_FIXED are followed' '
	"$RSPROF" record -q -i 200ms -o r.db -- "$TARGETS/heap_mmap" 300 remap >/dev/null &&
	heap_lines r.db | head -n 4 &&
	test "$(live_at r.db $ARENA 1)" = $((40 * MiB)) &&
	test "$(live_at r.db $FIXED 1)" = $((2 * MiB)) &&
	test "$(sql r.db "SELECT SUM(alloc_bytes) - SUM(free_bytes) FROM heap_events
		WHERE kind = 1")" = $((42 * MiB)) &&
	test "$(sql r.db "SELECT SUM(alloc_bytes) FROM heap_events WHERE kind = 1")" = $((62 * MiB)) &&
	test "$(sql r.db "SELECT SUM(free_bytes) FROM heap_events WHERE kind = 1")" = $((20 * MiB)) &&
	no_negative_site r.db
'

test_expect_success 'a file of before heap_events.kind (and temp_count) reads as malloc' '
	cp m.db old.db &&
	sqlite3 old.db "ALTER TABLE heap_events DROP COLUMN kind;
		ALTER TABLE heap_events DROP COLUMN temp_count" &&
	"$RSPROF" report --heap old.db >old && grep -q "arena_new$" old &&
	! grep -q "\[mmap\]" old
'

test_expect_success 'record --append to such a file adds the columns' '
	"$RSPROF" record -q --append -o old.db -- "$TARGETS/heap_mmap" 100 >/dev/null &&
	test "$(sql old.db "SELECT COUNT(*) FROM heap_events WHERE kind = 1")" -ge 1 &&
	"$RSPROF" report --heap old.db | grep -q "arena_new \[heap+mmap\]$"
'

test_expect_success 'peak resident memory is the kernel high-water mark (VmHWM)' '
	# 100 MiB touched and given back at once, then rest: the checkpoint at
	# 5 s sees the rest, the kernel saw the peak. Touching 100 MiB takes
	# this virtual machine 0.5-1 s of page faults (a checkpoint every
	# second saw it live in most runs); one may still fall in it on a
	# loaded machine: then it saw the peak itself, and the run says
	# nothing of VmHWM; up to three runs for one whose checkpoints missed it.
	i=0 &&
	while :; do
		rm -f p.db* &&
		"$RSPROF" record -q -i 5s -o p.db -- /usr/bin/python3 -c "
import time
t0 = time.monotonic()
b = bytearray(100 << 20)
del b
time.sleep(max(0.5, 6 - (time.monotonic() - t0)))
" &&
		hwm=$(meta p.db rss_peak_bytes) &&
		cpmax=$(sql p.db "SELECT MAX(rss_bytes) FROM checkpoints") &&
		echo "VmHWM $hwm, highest checkpoint $cpmax" || return 1
		i=$((i + 1))
		test "$cpmax" -lt $((60 * MiB)) || test $i -ge 3 || continue
		break
	done &&
	test "$hwm" -ge $((100 * MiB)) && test "$cpmax" -lt $((60 * MiB)) &&
	"$RSPROF" report p.db | grep -A1 "^# memory: " | grep -q "peak 1[0-9][0-9][0-9.]* MiB" &&
	"$RSPROF" info --json p.db | python3 -c "
import json, sys
m = json.load(sys.stdin)[\"memory\"]
assert m[\"rss_peak_bytes\"] == $hwm, m
"
'

test_expect_success 'fork: each process counts its own mappings, the child never frees the parent'"'"'s' '
	"$RSPROF" record -q -i 200ms -o f.db -- "$TARGETS/heap_mmap_fork" >/dev/null &&
	F="$TEST_SRC/targets/heap_mmap_fork.c" &&
	sql f.db "SELECT h.pid, s.line, SUM(h.alloc_bytes), SUM(h.free_bytes) FROM heap_events h
		JOIN symbols s ON h.addr = s.addr WHERE h.kind = 1 GROUP BY h.pid, s.line" >rows &&
	cat rows &&
	grep -q "^[0-9]*|$(line_of HEAP_FORK_PARENT "$F")|$((8 * MiB))|0$" rows &&
	grep -q "^[0-9]*|$(line_of HEAP_FORK_CHILD "$F")|$((4 * MiB))|0$" rows &&
	test "$(wc -l <rows)" = 2 && no_negative_site f.db
'

test_done
