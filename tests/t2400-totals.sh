#!/bin/sh
# The totals the recorder keeps per block of checkpoints (rsprof-files(5)):
# every reader command prints the same from them as from a scan of the event
# tables (the same file without totals_state), on random profiles whose sites
# share lines, functions and files, with and without record --retain; the
# seed-000 queries still run on them.
. "$(dirname "$0")/lib.sh"

GEN=$(dirname "$RSPROF")/tests/helper/random-profile

# same FILE: every command alike on FILE and on a copy without totals
same() {
	cp "$1" scan.db &&
	sqlite3 scan.db "DROP TABLE totals_state" &&
	fail=0 &&
	while read -r args; do
		"$RSPROF" $args "$1" >a.out 2>&1; a=$?
		"$RSPROF" $args scan.db >b.out 2>&1; b=$?
		sed -i "s|scan.db|$1|" b.out
		if [ $a != $b ] || ! cmp -s a.out b.out; then
			echo "differs: rsprof $args $1"
			diff a.out b.out | head -5
			fail=1
		fi
	done <<-\ARGS &&
	report -n 0 --csv
	report -s function -n 0 --csv
	report -s file -n 0 --csv
	report -s module --json
	report --since 1m -n 0 --csv
	report --window 61s..5m -n 0 --csv
	report --window 7s..200s -s file -n 0 --csv
	report --heap --at 2m -n 0 --csv
	report --heap --at 97s -s function -n 0 --csv
	report --heap --sort-by temporary -n 0 --csv
	report --heap --sort-by temporary --window 61s..5m -s function -n 0 --csv
	report --heap --sort-by temporary --since 2m -n 0 --json
	report --heap --sort-by temporary --at 3m -s file
	report --heap -n 0
	report --filter b.c -s file -n 0 --csv
	report --format folded
	report --format folded --heap
	report --format folded --heap --at 3m
	timeline --csv
	timeline --json --since 2m
	timeline --rank peak --csv -n 9
	timeline --rank growth --json --window 1m..4m
	timeline --rank peak --json -n 9 --window 2m..
	timeline --rank peak --json -n 9 --window 59s..6m
	timeline --cpu --csv
	top --stdio
	info
	ARGS
	"$RSPROF" diff "$1" scan.db >d.out && grep -qi "identical\|no change\|same" d.out &&
	test $fail = 0
}

test_expect_success 'a random profile of 500 checkpoints: the same from the totals' '
	"$GEN" r.db 500 1 &&
	test "$(sqlite3 r.db "SELECT through FROM totals_state")" = 480 &&
	same r.db
'

test_expect_success 'temp_count: counted rows summed, "not counted" kept (NULL), heap read from the totals' '
	test "$(sqlite3 r.db "SELECT SUM(temp_count) FROM heap_events WHERE checkpoint_id <= 480")" = \
	     "$(sqlite3 r.db "SELECT SUM(temp_count) FROM heap_totals WHERE level = 0")" &&
	test "$(sqlite3 r.db "SELECT COUNT(*) FROM heap_totals WHERE temp_count IS NULL")" -gt 0 &&
	test "$(sqlite3 r.db "SELECT COUNT(*) FROM heap_totals WHERE temp_count IS NOT NULL")" -gt 0 &&
	"$RSPROF" report -v -v --heap --sort-by temporary r.db >/dev/null 2>v.err &&
	grep -q "heap from the totals" v.err &&
	"$RSPROF" info --check r.db
'

test_expect_success 'kind: a key of the totals (mmap rows apart from malloc rows of a site)' '
	test "$(sqlite3 r.db "SELECT COUNT(DISTINCT kind) FROM heap_totals")" = 2 &&
	test "$(sqlite3 r.db "SELECT kind, SUM(alloc_bytes) FROM heap_events WHERE checkpoint_id <= 480 GROUP BY kind")" = \
	     "$(sqlite3 r.db "SELECT kind, SUM(alloc_bytes) FROM heap_totals WHERE level = 2 GROUP BY kind")" &&
	"$RSPROF" report --heap -n 0 --csv r.db | grep -q ",heap+mmap"
'

test_expect_success 'an early v3 file (totals without temp_count and kind): its heap is scanned' '
	cp r.db early.db &&
	sqlite3 early.db "CREATE TABLE ht (level INTEGER NOT NULL, block INTEGER NOT NULL,
		addr INTEGER NOT NULL, stack_id INTEGER NOT NULL, pid INTEGER NOT NULL,
		alloc_bytes INTEGER NOT NULL, free_bytes INTEGER NOT NULL,
		alloc_count INTEGER NOT NULL, free_count INTEGER NOT NULL, peak INTEGER NOT NULL,
		PRIMARY KEY (level, block, addr, stack_id, pid)) WITHOUT ROWID;
		INSERT INTO ht SELECT level, block, addr, stack_id, pid, SUM(alloc_bytes),
		SUM(free_bytes), SUM(alloc_count), SUM(free_count), MAX(peak) FROM heap_totals
		GROUP BY 1, 2, 3, 4, 5; DROP TABLE heap_totals; ALTER TABLE ht RENAME TO heap_totals" &&
	"$RSPROF" report -v -v --heap --sort-by temporary -n 0 --csv early.db >early.out 2>v.err &&
	grep -q "do not add up temp_count: scanning" v.err &&
	"$RSPROF" report --heap --sort-by temporary -n 0 --csv r.db >r.out &&
	cmp early.out r.out &&
	"$RSPROF" info --check early.db
'

test_expect_success 'with record --retain 2m: the same from the totals' '
	"$GEN" k.db 500 2 120000 &&
	test "$(sqlite3 k.db "SELECT COUNT(*) FROM checkpoints WHERE merged = 60")" -gt 3 &&
	"$RSPROF" info k.db | grep -q "^folded: .* into [0-9]* checkpoints of 1m.*record --retain 2m00s" &&
	"$RSPROF" report --window 30s..50s k.db | grep -A1 "^# window: " | grep -q "folded by --retain" &&
	"$GEN" k0.db 500 2 &&
	test "$(sqlite3 k.db "SELECT SUM(temp_count), COUNT(temp_count) > 0, COUNT(*) > COUNT(temp_count) FROM heap_events")" = \
	     "$(sqlite3 k0.db "SELECT SUM(temp_count), 1, 1 FROM heap_events")" &&
	same k.db
'

test_expect_success 'the seed-000 queries run on both' '
	sqlite3 -bail r.db <"$TOP/tests/seed000.sql" >seed.out &&
	test -s seed.out &&
	sqlite3 -bail k.db <"$TOP/tests/seed000.sql" >/dev/null
'

test_done
