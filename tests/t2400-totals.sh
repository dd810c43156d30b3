#!/bin/sh
# The totals the recorder keeps per block of checkpoints (rsprof-files(5)):
# every reader command prints the same from them as from a scan of the event
# tables (the same file without totals_state), on random profiles whose sites
# share lines, functions and files, with and without record --retain; the
# seed-000 queries still run on them.
. "$(dirname "$0")/lib.sh"

GEN=$(dirname "$RSPROF")/tests/unit/bin/test-totals

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
	report --filter b.c -s file -n 0 --csv
	report --format folded
	report --format folded --heap
	report --format folded --heap --at 3m
	timeline --csv
	timeline --json --since 2m
	timeline --rank peak --csv -n 9
	timeline --rank growth --json --window 1m..4m
	timeline --cpu --csv
	top --stdio
	info
	ARGS
	"$RSPROF" diff "$1" scan.db >d.out && grep -qi "identical\|no change\|same" d.out &&
	test $fail = 0
}

test_expect_success 'a random profile of 500 checkpoints: the same from the totals' '
	"$GEN" --fixture r.db 500 1 &&
	test "$(sqlite3 r.db "SELECT through FROM totals_state")" = 480 &&
	same r.db
'

test_expect_success 'with record --retain 2m: the same from the totals' '
	"$GEN" --fixture k.db 500 2 120000 &&
	test "$(sqlite3 k.db "SELECT COUNT(*) FROM checkpoints WHERE merged = 60")" -gt 3 &&
	"$RSPROF" info k.db | grep -q "^folded: .* into [0-9]* checkpoints of 1m.*record --retain 2m00s" &&
	"$RSPROF" report --window 30s..50s k.db | grep -q "^# window: .*folded by --retain" &&
	same k.db
'

test_expect_success 'the seed-000 queries run on both' '
	sqlite3 -bail r.db <"$TOP/tests/seed000.sql" >seed.out &&
	test -s seed.out &&
	sqlite3 -bail k.db <"$TOP/tests/seed000.sql" >/dev/null
'

test_done
