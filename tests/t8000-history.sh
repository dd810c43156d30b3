#!/bin/sh
# rsprof history (issue 14, seed 001): the half-axis query on a fixture
# history written through the writer (tests/unit/history-fixture.h): 0x1000
# held by A (64 B, app::parse) from 1 s to 2 s, free, then reused by B
# (32 B, app::cache::insert) from 3 s on; C at 0x2000, D at 0x3000.
. "$(dirname "$0")/lib.sh"

FIXTURE=${FIXTURE:-$(dirname "$RSPROF")/tests/helper/fixture}

test_expect_success 'a fixture profile with a history' '
	"$FIXTURE" h.db history &&
	test "$(sql h.db "SELECT value FROM meta WHERE key = '\''version'\''")" = 3 &&
	test "$(sql h.db "SELECT COUNT(*) FROM alloc_events")" = 4
'

test_expect_success 'the owner of 0x1010 before, during and after the reuse' '
	"$RSPROF" history h.db --addr 0x1010 --at 0.5s >o0 &&
	grep -q "^# owner:    0x1010 at 0.500000 s: never allocated before$" o0 &&
	"$RSPROF" history h.db --addr 0x1010 --at 1.5s >o1 &&
	cat o1 &&
	grep -q "^# owner:    0x1010 at 1.500000 s: allocation 1 (64 B at 0x1000, .*parse.rs:77 app::parse)$" o1 &&
	"$RSPROF" history h.db --addr 0x1010 --at 2.5s >o2 &&
	grep -q "^# owner:    0x1010 at 2.500000 s: free (last held by allocation 1, .*parse.rs:77 app::parse, freed at 2.000000 s)$" o2 &&
	"$RSPROF" history h.db --addr 0x1010 --at 3s >o3 &&
	grep -q "^# owner:    0x1010 at 3.000000 s: allocation 3 (32 B at 0x1000, .*cache.rs:42 app::cache::insert)$" o3 &&
	# 0x1030 is inside A (64 B) but not B (32 B): free after A
	"$RSPROF" history h.db --addr 0x1030 --at 4s >o4 &&
	grep -q "^# owner:    0x1030 at 4.000000 s: free (last held by allocation 1" o4
'

test_expect_success 'forward from a moment, backward from it (newest first)' '
	"$RSPROF" history h.db --addr 0x1010 --at 1.5s >f &&
	grep -q "^ *Event *Address *Size *Allocated (s) *Freed (s) *Lifetime *Site *Function$" f &&
	test "$(grep -c "^ *[0-9]* *0x" f)" = 1 &&
	grep -q "^ *3 *0x1000 *32 *3.000000 *live *.*cache.rs:42 *app::cache::insert$" f &&
	"$RSPROF" history h.db --addr 0x1010 --at 3s --before >b &&
	cat b &&
	grep "^ *[0-9]* *0x" b | awk "{ print \$1 }" | tr "\n" " " | grep -qx "3 1 " &&
	grep -q "^ *1 *0x1000 *64 *1.000000 *2.000000 *1.0s .*parse.rs:77" b
'

test_expect_success 'a range, pages of -n with --after' '
	"$RSPROF" history h.db --addr 0x1000..0x3fff -n 2 >p1 &&
	test "$(grep "^ *[0-9]* *0x" p1 | awk "{ print \$1 }" | tr "\n" " ")" = "1 2 " &&
	"$RSPROF" history h.db --addr 0x1000..0x3fff -n 2 --after 2 >p2 &&
	test "$(grep "^ *[0-9]* *0x" p2 | awk "{ print \$1 }" | tr "\n" " ")" = "3 4 " &&
	grep -q "(continued)" p2 &&
	"$RSPROF" history h.db --addr 0x1000..0x3fff -n 2 --after 4 | grep -q "^# no allocation"
'

test_expect_success '--json and --csv' '
	"$RSPROF" history h.db --addr 4112 --at 2.5s --json >h.json &&
	python3 -c "
import json
d = json.load(open(\"h.json\"))
assert d[\"history_events\"] == 4
assert d[\"query\"][\"addr_first\"] == 0x1010 and d[\"query\"][\"time_ns\"] == 2500000000
o = d[\"owner\"]
assert o[\"live\"] is False and o[\"allocation\"][\"id\"] == 1
assert o[\"allocation\"][\"time_free_ns\"] == 2000000000
a = d[\"allocations\"]
assert [x[\"id\"] for x in a] == [3] and a[0][\"time_free_ns\"] is None
assert a[0][\"function\"] == \"app::cache::insert\" and a[0][\"line\"] == 42
" &&
	"$RSPROF" history h.db --addr 0x2000 --csv >h.csv &&
	cat h.csv &&
	head -1 h.csv | grep -qx "id,addr,size,time_alloc_ns,time_free_ns,file,line,function,stack_id" &&
	sed -n 2p h.csv | grep -qx "2,8192,16,1500000000,2500000000,/home/dev/proj/src/cache.rs,42,app::cache::insert,7"
'

test_expect_success 'no --addr, bad values: exit 2' '
	expect_exit 2 "$RSPROF" history h.db 2>err && grep -q "addr is needed" err &&
	expect_exit 2 "$RSPROF" history h.db --addr zz 2>/dev/null &&
	expect_exit 2 "$RSPROF" history h.db --addr 0x20..0x10 2>/dev/null &&
	expect_exit 2 "$RSPROF" history h.db --addr 1 --at soon 2>/dev/null &&
	expect_exit 2 "$RSPROF" history h.db --addr 1 --after x 2>/dev/null &&
	expect_exit 2 "$RSPROF" history h.db --addr 1 --json --csv 2>/dev/null
'

test_expect_success 'a profile without a history: exit 6, said so' '
	"$FIXTURE" fix.db &&
	expect_exit 6 "$RSPROF" history fix.db --addr 0x1000 >out 2>err &&
	! test -s out &&
	grep -q "has no allocation history" err
'

test_expect_success 'a version-2 profile (no history tables) still reads everywhere' '
	sqlite3 fix.db "PRAGMA journal_mode = DELETE;" >/dev/null &&
	cp fix.db v2.db &&
	sqlite3 v2.db "DROP TABLE alloc_events; DROP TABLE alloc_chunks; DROP TABLE alloc_slices;
		UPDATE meta SET value = 2 WHERE key = '\''version'\''; PRAGMA journal_mode = DELETE;" >/dev/null &&
	"$RSPROF" report v2.db >r &&
	grep -q "hot.c:10" r &&
	"$RSPROF" info v2.db | grep -q "^schema version: *2$" &&
	expect_exit 6 "$RSPROF" history v2.db --addr 1 2>err &&
	grep -q "has no allocation history" err
'

test_expect_success 'seed 000 read queries run verbatim on a version-3 file with a history' '
	sqlite3 -bail h.db <"$TEST_SRC/seed000.sql" >/dev/null
'

test_done
