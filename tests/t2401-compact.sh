#!/bin/sh
# Compacted checkpoints (rsprof-files(5), cpu_series): a random profile written
# with its older blocks compacted reads, in every reader command, exactly as
# the same profile written whole, also over windows inside compacted time;
# the seed-000 queries that do not look inside a compacted block answer the
# same; info says what is compacted; record --retain folds compacted blocks
# as it folds whole ones.
. "$(dirname "$0")/lib.sh"

GEN=$(dirname "$RSPROF")/tests/helper/random-profile

# same A B: every reader command prints the same on A and on B (named alike)
same() {
	cp "$2" whole.db &&
	fail=0 &&
	while read -r args; do
		"$RSPROF" $args "$1" >a.out 2>&1; a=$?
		"$RSPROF" $args whole.db >b.out 2>&1; b=$?
		sed -i "s|whole.db|$1|" b.out
		if [ $a != $b ] || ! cmp -s a.out b.out; then
			echo "differs: rsprof $args"
			diff a.out b.out | head -5
			fail=1
		fi
	done <<-\ARGS &&
	report -n 0 --csv
	report -s function -n 0 --csv
	report -s file -n 0 --csv
	report -s module --json
	report --since 1m -n 0 --csv
	report --since 7m -n 0 --csv
	report --window 61s..5m -n 0 --csv
	report --window 7s..200s -s file -n 0 --csv
	report --window 95s..96s -n 0 --csv
	report --heap --at 2m -n 0 --csv
	report --heap --at 97s -s function -n 0 --csv
	report --heap --at 3m7s -n 0 --csv
	report --heap --sort-by temporary -n 0 --csv
	report --heap --sort-by temporary --window 61s..5m -s function -n 0 --csv
	report --heap --sort-by temporary --since 2m -n 0 --json
	report --heap -n 0
	report --filter b.c -s file -n 0 --csv
	report --format folded
	report --format folded --heap --at 3m
	timeline --csv
	timeline --json --since 2m
	timeline --rank peak --csv -n 9
	timeline --rank growth --json --window 1m..4m
	timeline --rank peak --json -n 9 --window 2m..
	timeline --rank peak --json -n 9 --window 59s..6m
	timeline --cpu --csv
	timeline --cpu --csv --window 30s..3m
	top --stdio
	ARGS
	"$RSPROF" diff "$1" whole.db >d.out && grep -qi "identical\|no change\|same" d.out &&
	"$RSPROF" diff "$1@61s..97s" whole.db@61s..97s >d.out &&
	grep -qi "identical\|no change\|same" d.out &&
	test $fail = 0
}

test_expect_success 'a profile of 500 checkpoints, compacted after 2m: read as written whole' '
	"$GEN" c.db 500 1 0 120000 &&
	"$GEN" w.db 500 1 0 0 &&
	test "$(sqlite3 c.db "SELECT through FROM series_state")" = 360 &&
	test "$(sqlite3 w.db "SELECT through FROM series_state")" = 0 &&
	test "$(sqlite3 c.db "SELECT COUNT(*) FROM cpu_samples")" -lt \
	     "$(sqlite3 w.db "SELECT COUNT(*) FROM cpu_samples")" &&
	same c.db w.db
'

test_expect_success 'info says which checkpoints are compacted' '
	"$RSPROF" info c.db >i.out &&
	grep -q "^compacted: *360 checkpoints, 0ms\.\.6m00s: packed" i.out &&
	! "$RSPROF" info w.db | grep -q "^compacted:" &&
	"$RSPROF" info --json c.db | grep -A3 "\"compacted\"" | grep -q "\"until_ms\": 360000" &&
	"$RSPROF" info --check c.db
'

test_expect_success 'the seed-000 queries: the same over the run, its last 10 s, a threshold and the end' '
	# each query on its own: split the file at its comment lines
	awk "/^-- §/ { n++ } n { print > (\"q\" n \".sql\") }" "$TOP/tests/seed000.sql" &&
	test -s q7.sql &&
	for q in 1 2 3 4 6; do
		sqlite3 -bail c.db <q$q.sql >c$q.out && sqlite3 -bail w.db <q$q.sql >w$q.out &&
		cmp c$q.out w$q.out || { echo "seed query $q differs"; return 1; }
	done &&
	test -s c1.out && test -s c4.out &&
	sqlite3 -bail c.db <q5.sql >/dev/null && sqlite3 -bail c.db <q7.sql >/dev/null &&
	# the heap growth query per checkpoint: the same outside compacted time
	sqlite3 c.db <q7.sql | awk -F"|" "\$1 > 360000" >c7.out &&
	sqlite3 w.db <q7.sql | awk -F"|" "\$1 > 360000" >w7.out &&
	test -s c7.out && cmp c7.out w7.out
'

test_expect_success 'compacted, then folded by record --retain: as folded alone' '
	"$GEN" rc.db 900 3 300000 60000 &&
	"$GEN" r.db 900 3 300000 0 &&
	test "$(sqlite3 rc.db "SELECT COUNT(*) FROM checkpoints WHERE merged = 60")" -gt 3 &&
	test "$(sqlite3 rc.db "SELECT through FROM series_state")" -gt \
	     "$(sqlite3 rc.db "SELECT folded0 FROM totals_state")" &&
	test "$(sqlite3 rc.db "SELECT MIN(id) / 1048576 * 60 FROM cpu_series")" -ge \
	     "$(sqlite3 rc.db "SELECT folded0 FROM totals_state")" &&
	same rc.db r.db
'

# a block's parts are packed when its last checkpoint is written (ahead of
# its compaction, unread until series_state.through covers it), it is
# compacted at once when it has aged, and its event rows are then folded
# over the next checkpoints (a slice of its addresses each); a writer
# killed in the middle leaves parts packed ahead of the compacted blocks
# and a compacted block whose rows are folded for part of its addresses:
# read exactly as the same profile written whole (and killed there too),
# the seed-000 sums the same
for n in 470 500; do
	test_expect_success "killed after checkpoint $n, in the middle of a block's compaction" '
		rm -f m$n.db* mw$n.db* &&
		FIXTURE_KILL=1 "$GEN" m$n.db $n 7 0 120000 &&
		FIXTURE_KILL=1 "$GEN" mw$n.db $n 7 0 0 &&
		# what the killed writers left in their WAL, into the files (same() copies one)
		sqlite3 m$n.db "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null &&
		sqlite3 mw$n.db "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null &&
		sqlite3 m$n.db "SELECT through, pack_addr IS NOT NULL, dropped < through,
			(SELECT COUNT(DISTINCT id / 1048576) FROM cpu_series
			 WHERE id >= through / 60 * 1048576) FROM series_state" >st.out &&
		case $n in
		470) test "$(cat st.out)" = "300|0|0|2" ;;	# 301..420 packed ahead
		500) test "$(cat st.out)" = "360|0|1|2" ;;	# 301..360 partly folded
		esac &&
		"$RSPROF" info --check m$n.db &&
		for q in 1 2 3 4 6; do
			sqlite3 -bail m$n.db <q$q.sql >c$q.out && sqlite3 -bail mw$n.db <q$q.sql >w$q.out &&
			cmp c$q.out w$q.out || { echo "seed query $q differs"; return 1; }
		done &&
		same m$n.db mw$n.db
	'
done

test_expect_success 'a damaged series is an error (exit 6), not a wrong answer; info --check finds it' '
	cp c.db bad.db &&
	sqlite3 bad.db "UPDATE cpu_series SET data = X'"'"'05ff'"'"' WHERE id = (SELECT MIN(id) FROM cpu_series)" &&
	{ "$RSPROF" report --window 10s..20s bad.db 2>err.txt; test $? = 6; } &&
	grep -q "cpu_series is damaged" err.txt &&
	cp c.db swap.db &&
	sqlite3 swap.db "UPDATE cpu_series SET id = -1 WHERE id = 1048576;
		UPDATE cpu_series SET id = 1048576 WHERE id = 2097152;
		UPDATE cpu_series SET id = 2097152 WHERE id = -1" &&
	"$RSPROF" info --check c.db &&
	{ "$RSPROF" info --check swap.db 2>err.txt; test $? = 6; } &&
	grep -q "cpu series of checkpoints 61..120 do not add up" err.txt
'

if have_perf; then
	test_expect_success 'record --compact-after: a real recording, compacted as it runs' '
		"$RSPROF" record -q -i 20ms --compact-after 300ms -o rec.db -- \
			"$TARGETS/cpu_split" 3.5 0 &&
		test "$(sqlite3 rec.db "SELECT through FROM series_state")" -ge 60 &&
		"$RSPROF" info rec.db | grep -q "^compacted: " &&
		"$RSPROF" info --check rec.db &&
		sqlite3 -bail rec.db <"$TOP/tests/seed000.sql" >/dev/null &&
		test "$(sqlite3 rec.db "SELECT SUM(count) FROM cpu_samples")" = \
		     "$(sqlite3 rec.db "SELECT SUM(cpu_total) FROM checkpoints")" &&
		"$RSPROF" report --window 200ms..1s -n 0 --csv rec.db >/dev/null &&
		"$RSPROF" record -q -i 20ms --compact-after 0 -o never.db -- "$TARGETS/cpu_split" 1.5 0 &&
		test "$(sqlite3 never.db "SELECT through FROM series_state")" = 0
	'

	# a block of 60 checkpoints every 0.6 s, compacted once it is 0.1 s old,
	# its packing spread over the 50 writes after that: how long that takes
	# depends on the load, so each kill comes 0, 0.3 or 0.7 s after the
	# first block is compacted (wait_compacted FILE N: until the recorder
	# has compacted through checkpoint N), not after a fixed time
	wait_compacted() {
		_i=0
		while :; do
			# not before the recorder made its -wal and -shm (it refuses
			# companions that another process made first)
			_n=0
			[ -e "$1-wal" ] && [ -e "$1-shm" ] &&
			_n=$(sqlite3 -readonly -batch -noheader "$1" \
				"SELECT through FROM series_state" 2>/dev/null)
			case $_n in ''|*[!0-9]*) _n=0 ;; esac
			[ "$_n" -ge "$2" ] && return 0
			_i=$((_i + 1))
			[ $_i -gt 600 ] && { echo "$1: not compacted through $2 after 60 s" >&2; return 1; }
			sleep 0.1
		done
	}
	test_expect_success 'SIGKILL while compacting: every block whole or compacted, the sums kept' '
		for t in 0 0.3 0.7; do
			rm -f k.db k.db-wal k.db-shm &&
			{ "$RSPROF" record -q -i 10ms --compact-after 100ms -o k.db -- \
				"$TARGETS/cpu_split" 4 0 & } &&
			pid=$! &&
			wait_compacted k.db 60 &&
			# (on a slow machine the program may have ended first: then
			# the file was closed, and must read the same)
			sleep $t && { kill -9 $pid 2>/dev/null; wait $pid; true; } &&
			# the program outlives its recorder: stopped here, not left spinning
			{ kill -9 "$(sql k.db "SELECT value FROM meta WHERE key = '\''pid'\''")" 2>/dev/null; true; } &&
			test "$(sqlite3 k.db "SELECT through FROM series_state")" -ge 60 &&
			"$RSPROF" info --check k.db &&
			test "$(sqlite3 k.db "SELECT SUM(count) FROM cpu_samples")" = \
			     "$(sqlite3 k.db "SELECT SUM(cpu_total) FROM checkpoints")" &&
			sqlite3 -bail k.db <"$TOP/tests/seed000.sql" >/dev/null &&
			"$RSPROF" timeline --cpu --csv k.db >/dev/null || return 1
		done
	'
else
	test_skip 'record --compact-after' 'perf events not allowed here'
fi

test_done
