#!/bin/sh
# Issue 11, item 5: readers on hostile files. A FIFO (as the profile or
# its -wal) is refused, not waited on; a recursive view where a table
# should be is refused at once; a time budget stops a read that takes too
# long; query streams its rows (constant memory) and --max-rows bounds them.
. "$(dirname "$0")/lib.sh"

cp "$TEST_SRC/fuzz/corpus/reader/v2-cpu-heap-stacks" p.db

# every reader on FILE, each within 10 s, each with exit status 6
all_readers_6() {
	for args in "report $1" "report --json $1" "info $1" "timeline $1" "diff p.db $1" \
		    "query $1 SELECT*FROM(meta)" "top --stdio $1"; do
		# shellcheck disable=SC2086
		timeout 10 "$RSPROF" $args >/dev/null 2>err; r=$?
		if [ $r != 6 ]; then
			echo "rsprof $args: exit $r, not 6"; cat err; return 1
		fi
	done
}

test_expect_success 'a FIFO as the profile: every reader refuses it at once (exit 6)' '
	mkfifo fifo.db && all_readers_6 fifo.db && grep -q "not a regular file" err
'

test_expect_success 'a FIFO as the -wal: refused, not waited on' '
	cp p.db w.db && mkfifo w.db-wal && all_readers_6 w.db && grep -q "not a regular file" err
'

test_expect_success 'recursive views for meta and checkpoints: every reader refuses at once' '
	for t in meta checkpoints; do
		cp p.db view-$t.db &&
		sqlite3 view-$t.db "PRAGMA legacy_alter_table = 1;
			ALTER TABLE $t RENAME TO old_$t;
			CREATE VIEW $t AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL
				SELECT n + 1 FROM r) SELECT o.* FROM r, old_$t o;" &&
		all_readers_6 view-$t.db && grep -q "is a view" err || exit 1
	done
'

test_expect_success 'the time budget stops a reader: exit 6, with a clear message' '
	cp p.db slow.db &&
	sqlite3 slow.db "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c
		LIMIT 300000) INSERT INTO cpu_samples SELECT 1 + x % 5, x, 1 FROM c" &&
	"$RSPROF" report slow.db >/dev/null &&
	RSPROF_TIME_LIMIT=1ms expect_exit 6 "$RSPROF" report slow.db >/dev/null 2>err;
	r=$?; cat err; test $r = 0 && grep -q "more than 1ms of CPU time" err &&
	grep -q "RSPROF_TIME_LIMIT" err
'

test_expect_success 'query: an endless statement ends at the budget (exit 6)' '
	RSPROF_TIME_LIMIT=1s expect_exit 6 timeout 30 "$RSPROF" query p.db \
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)
		 SELECT COUNT(*) FROM c" 2>err; r=$?; cat err; test $r = 0
'

test_expect_success 'RSPROF_TIME_LIMIT that is not a duration: exit 2' '
	RSPROF_TIME_LIMIT=soon expect_exit 2 "$RSPROF" info p.db 2>err && grep -q soon err
'

# max resident memory of a command, in KiB (python: the children's rusage).
# Under the sanitizer build (make test SANITIZE=1) ASan's quarantine keeps
# every freed block for a while (256 MB by default), which is ASan's memory,
# not rsprof's: without it the figure is rsprof's own plus the shadow.
maxrss() {
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0" \
	python3 -c "import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)" "$@"
}

big="WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 1500000)
     SELECT x, printf('%.100c', 'x') AS pad FROM c"

test_expect_success 'query streams: 150 MB of CSV, JSON or table in constant memory' '
	for fmt in --csv --json ""; do
		kb=$(maxrss "$RSPROF" query $fmt p.db "$big") &&
		echo "query $fmt: max RSS $kb KiB" &&
		test "$kb" -lt 65536 || exit 1
	done
'

test_expect_success 'query streams: the rows are all there' '
	"$RSPROF" query --csv p.db "$big" | wc -l >n && test "$(cat n)" = 1500001
'

test_expect_success 'query --max-rows: the first N rows, then an error (exit 6)' '
	expect_exit 6 "$RSPROF" query --csv --max-rows 10 p.db "$big" >out 2>err; r=$?;
	cat err; test $r = 0 && test "$(wc -l <out)" = 11 && grep -q "more than 10 rows" err &&
	"$RSPROF" query --csv --max-rows 10 p.db "SELECT * FROM meta LIMIT 10" >/dev/null &&
	expect_exit 2 "$RSPROF" query --max-rows -1 p.db "SELECT 1"
'

test_expect_success 'query: bad SQL leaves stdout empty' '
	expect_exit 1 "$RSPROF" query --json p.db "SELECT FROM" >out 2>/dev/null &&
	! test -s out
'

test_done
