#!/bin/sh
# rsprof query: the user's SQL on a read-only connection; writes refused and
# the file byte-identical; table, CSV, JSON; SQL from stdin; bad inputs.
. "$(dirname "$0")/lib.sh"

FIXTURE=$(dirname "$RSPROF")/tests/helper/fixture

test_expect_success 'a fixture profile (written through db__create)' '
	"$FIXTURE" p.db small && test -s p.db &&
	md5sum p.db >p.md5
'

test_expect_success 'a table with a header line' '
	"$RSPROF" query p.db "SELECT key, value FROM meta ORDER BY key" >out &&
	head -1 out | grep -q "^key  *value" &&
	grep -q "^process_name  *fixture" out &&
	grep -q "^version  *3" out
'

test_expect_success 'seed 000 top CPU query runs verbatim' '
	"$RSPROF" query --csv p.db "SELECT s.file, s.line, s.function, SUM(c.count) as samples
		FROM cpu_samples c JOIN symbols s ON c.addr = s.addr
		GROUP BY c.addr ORDER BY samples DESC LIMIT 2" >out &&
	cat out &&
	test "$(sed -n 1p out)" = "file,line,function,samples" &&
	grep -q "hot.c,10,hot_loop,300" out
'

test_expect_success '--csv quotes fields and prints NULL as empty' '
	"$RSPROF" query --csv p.db "SELECT 1 AS a, '\''x,y'\'' AS b, NULL AS c, '\''say \"hi\"'\'' AS d" >out &&
	test "$(sed -n 1p out)" = "a,b,c,d" &&
	test "$(sed -n 2p out)" = "1,\"x,y\",,\"say \"\"hi\"\"\""
'

test_expect_success '--json is an array of objects with typed values' '
	"$RSPROF" query --json p.db "SELECT 1 AS i, 2.5 AS r, '\''t'\'' AS s, NULL AS n, x'\''0aff'\'' AS b" >out &&
	python3 -c "
import json, sys
d = json.load(open(\"out\"))
assert d == [{\"i\": 1, \"r\": 2.5, \"s\": \"t\", \"n\": None, \"b\": \"x'\''0aff'\''\"}], d
"
'

test_expect_success '--json of an empty result is []' '
	"$RSPROF" query --json p.db "SELECT * FROM meta WHERE 0" >out &&
	python3 -c "import json; assert json.load(open(\"out\")) == []"
'

test_expect_success 'SQL from stdin with -' '
	echo "SELECT COUNT(*) AS n FROM checkpoints;" | "$RSPROF" query --csv p.db - >out &&
	test "$(sed -n 2p out)" = 10
'

test_expect_success '-n limits the rows' '
	"$RSPROF" query --csv -n 3 p.db "SELECT id FROM checkpoints ORDER BY id" >out &&
	test "$(wc -l <out)" -eq 4
'

test_expect_success 'read-only PRAGMAs work' '
	"$RSPROF" query --csv p.db "PRAGMA table_info(meta)" >out &&
	grep -q ",key,TEXT," out
'

test_expect_success 'DELETE FROM meta fails and the file is byte-identical' '
	expect_exit 1 "$RSPROF" query p.db "DELETE FROM meta" >out 2>err &&
	cat err &&
	grep -q "refused" err && grep -q "^hint:" err &&
	test ! -s out &&
	md5sum -c p.md5 &&
	test "$(sql p.db "SELECT COUNT(*) FROM meta")" -gt 5
'

test_expect_success 'every kind of write is refused, the file unchanged' '
	for s in "INSERT INTO meta VALUES ('\''x'\'', '\''y'\'')" \
		 "UPDATE meta SET value = 0" \
		 "DROP TABLE meta" \
		 "CREATE TABLE t (x)" \
		 "CREATE TEMP TABLE t (x)" \
		 "ALTER TABLE meta ADD COLUMN z" \
		 "ATTACH '\''other.db'\'' AS o" \
		 "PRAGMA query_only = 0" \
		 "PRAGMA user_version = 7" \
		 "BEGIN" \
		 "VACUUM" \
		 "REPLACE INTO meta VALUES ('\''version'\'', '\''9'\'')" \
		 "WITH x AS (SELECT 1) DELETE FROM meta"; do
		expect_exit 1 "$RSPROF" query p.db "$s" >out 2>err ||
			{ echo "not refused: $s"; cat out err; exit 1; }
		grep -q refused err || { echo "no refusal message for: $s"; cat err; exit 1; }
	done &&
	test ! -e other.db &&
	md5sum -c p.md5
'

test_expect_success 'a write after a read in one string is refused too' '
	expect_exit 1 "$RSPROF" query p.db "SELECT 1; DELETE FROM meta" 2>err &&
	grep -q "one SQL statement" err &&
	md5sum -c p.md5
'

test_expect_success 'bad SQL: exit 1 with the message of SQLite' '
	expect_exit 1 "$RSPROF" query p.db "SELEKT 1" >out 2>err &&
	grep -q "bad SQL" err && test ! -s out &&
	expect_exit 1 "$RSPROF" query p.db "SELECT nope FROM meta" 2>err &&
	grep -q "no such column" err
'

test_expect_success 'every example query of rsprof-files(5) runs through query' '
	python3 - "$TOP/Documentation/rsprof-files.txt" <<-\EOF_PY >queries &&
	import sys
	text = open(sys.argv[1]).read()
	ex = text[text.index("\nEXAMPLES\n"):text.index("\nFILES\n")]
	block = []
	for line in ex.split("\n"):
	    if line.startswith("\t"):
	        block.append(line[1:])
	        if line.rstrip().endswith(";"):
	            print(" ".join(l.strip() for l in block).replace("\x00", ""))
	            block = []
	    elif line.strip():
	        block = []
	EOF_PY
	test "$(wc -l <queries)" -ge 8 &&
	while read -r q; do
		case $q in *cpu_stacks*) continue ;; esac	# only in -g recordings
		case $q in *pushes*) continue ;; esac	# only in profiles pushed
		"$RSPROF" query --csv p.db "$q" >out 2>err || { echo "$q"; cat err; exit 1; }
	done <queries
'

test_expect_success 'missing arguments: exit 2' '
	expect_exit 2 "$RSPROF" query p.db 2>err &&
	grep -q "hint:" err &&
	expect_exit 2 "$RSPROF" query --csv --json p.db "SELECT 1" 2>/dev/null
'

test_expect_success 'bad inputs: exit 6, clear error, nothing written' '
	echo "not a profile" >text.db &&
	sqlite3 foreign.db "CREATE TABLE t (x); INSERT INTO t VALUES (1)" &&
	head -c 3000 p.db >trunc.db &&
	for f in missing.db text.db foreign.db trunc.db; do
		test -e $f && md5sum $f >bad.md5
		expect_exit 6 "$RSPROF" query $f "SELECT 1" >out 2>err || exit 1
		test ! -s out && grep -q "^rsprof query: " err && grep -q "^hint: " err ||
			{ cat err; exit 1; }
		if test -e bad.md5; then md5sum -c bad.md5 || exit 1; rm bad.md5; fi
	done &&
	test ! -e missing.db
'

test_done
