#!/bin/sh
# rsprof info on fixture profiles (tests/unit/fixture.h via tests/helper/fixture):
# the summary, every meta key, --json, --check, refusals.
. "$(dirname "$0")/lib.sh"

FIXTURE=${FIXTURE:-$(dirname "$RSPROF")/tests/helper/fixture}

test_expect_success 'fixtures' '
	"$FIXTURE" fix.db &&
	"$FIXTURE" cpu.db cpu-only
'

test_expect_success 'info shows the summary of the profile' '
	"$RSPROF" info fix.db >out &&
	cat out &&
	grep -q "^file: *fix.db$" out &&
	grep -q "^size: *[0-9.]* KiB ([0-9,]* bytes)" out &&
	grep -q "^schema version: *3$" out &&
	grep -q "^target: *fixture (pid 4242)$" out &&
	grep -q "^executable: */home/dev/proj/fixture$" out &&
	grep -q "^duration: *10.0s$" out &&
	grep -q "^checkpoints: *10$" out &&
	grep -q "^samples: *1,000$" out &&
	grep -q "^lost samples: *10 (1.0%)$" out &&
	grep -q "^heap live: *10.0 MiB$" out &&
	grep -q "^heap peak: *15.0 MiB$" out &&
	grep -q "^allocations: *1,660 (25.0 MiB)$" out &&
	grep -q "^frees: *1,500 (15.0 MiB)$" out &&
	grep -q "^heap dropped: *0$" out &&
	grep -q "^unknown frees: *3 (300 B)$" out &&
	grep -q "^symbols: *7$" out &&
	grep -q "^call stacks: *0$" out &&
	grep -q "^mappings: *0$" out
'

test_expect_success 'info lists every meta key' '
	sqlite3 fix.db "SELECT key FROM meta" >keys &&
	test "$(wc -l <keys)" -ge 10 &&
	while read k; do
		grep -q "^  $k " out || { echo "missing $k"; exit 1; }
	done <keys
'

test_expect_success 'a profile without heap data says so' '
	"$RSPROF" info cpu.db >out &&
	grep -q "^heap: *not recorded$" out &&
	! grep -q "^heap live" out
'

test_expect_success 'info --json is one valid document' '
	"$RSPROF" info --json fix.db >i.json &&
	python3 -m json.tool i.json >/dev/null &&
	python3 - <<-\EOF
	import json, os
	d = json.load(open("i.json"))
	assert d["schema_version"] == 3
	assert d["checkpoints"] == 10 and d["samples"] == 1000 and d["lost_samples"] == 10
	assert abs(d["lost_pct"] - 100 * 10 / 1010) < 0.01
	assert d["symbols"] == 7 and d["duration_ms"] == 10000 and d["finished"]
	assert d["size_bytes"] == os.stat("fix.db").st_size
	h = d["heap"]
	assert h["recorded"] and h["live_bytes"] == 10 * 2**20 and h["peak_bytes"] == 15 * 2**20
	assert h["alloc_count"] == 1660 and h["free_count"] == 1500
	assert d["meta"]["version"] == 3 and d["meta"]["pid"] == 4242
	EOF
'

test_expect_success 'info --check: ok, exit 0' '
	"$RSPROF" info --check fix.db >out &&
	test "$(cat out)" = ok &&
	"$RSPROF" info --check --json fix.db | python3 -m json.tool >/dev/null
'

test_expect_success 'info --check on a damaged file: the findings, exit 6' '
	"$FIXTURE" bad.db &&
	sqlite3 bad.db "PRAGMA journal_mode = DELETE;" >/dev/null &&
	root=$(sqlite3 bad.db "SELECT rootpage FROM sqlite_master WHERE name = '\''idx_cpu_addr'\''") &&
	psize=$(sqlite3 bad.db "PRAGMA page_size") &&
	printf "\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377" |
		dd of=bad.db bs=1 seek=$(( (root - 1) * psize + 8 )) conv=notrunc 2>/dev/null &&
	expect_exit 6 "$RSPROF" info --check bad.db >out 2>err &&
	cat err &&
	grep -q "integrity check" err && ! grep -q "^ok$" out
'

test_expect_success 'no FILE: the newest rsprof.*.db here' '
	mkdir d && cd d &&
	"$FIXTURE" rsprof.a.261122050000.db &&
	"$FIXTURE" rsprof.b.261122050001.db cpu-only &&
	"$RSPROF" info >out &&
	grep -q "^file: *rsprof.b.261122050001.db" out
'

test_expect_success 'reading a finished profile leaves no -wal or -shm behind' '
	mkdir clean && "$FIXTURE" clean/p.db &&
	"$RSPROF" info clean/p.db >/dev/null &&
	"$RSPROF" report clean/p.db >/dev/null &&
	test "$(ls clean)" = p.db
'

if [ "$(id -u)" = 0 ] && command -v runuser >/dev/null && id nobody >/dev/null 2>&1; then
	test_expect_success 'a profile in a directory the reader cannot write is readable' '
		mkdir -m 755 ro && "$FIXTURE" ro/p.db cpu-only && chmod 644 ro/p.db &&
		sqlite3 ro/p.db "DELETE FROM meta WHERE key = '\''end_time'\''" &&
		chmod 755 "$TEST_DIR" &&
		# a copy: nobody may not enter the clone (in /root, say)
		cp "$RSPROF" rsprof && chmod 755 rsprof &&
		runuser -u nobody -- ./rsprof info ro/p.db >out &&
		grep -q "^checkpoints: *10$" out &&
		runuser -u nobody -- ./rsprof report ro/p.db | grep -q "hot_loop" &&
		test "$(ls ro)" = p.db
	'
else
	test_skip 'a profile in a read-only directory' 'needs root and runuser'
fi

test_expect_success 'errors: exit 6 and the file unchanged' '
	expect_exit 6 "$RSPROF" info missing.db 2>err &&
	grep -q "No such file" err &&
	printf "not a database, not even close to one, just text here\n" >text.db &&
	cp text.db text.orig &&
	expect_exit 6 "$RSPROF" info text.db 2>err &&
	grep -q "not a database" err && cmp text.db text.orig &&
	sqlite3 other.db "CREATE TABLE meta (key TEXT, value TEXT);" &&
	cp other.db other.orig &&
	expect_exit 6 "$RSPROF" info other.db 2>err &&
	grep -q "not an rsprof profile" err && cmp other.db other.orig &&
	"$FIXTURE" newer.db &&
	sqlite3 newer.db "UPDATE meta SET value = 4 WHERE key = '\''version'\''; PRAGMA journal_mode = DELETE;" >/dev/null &&
	cp newer.db newer.orig &&
	expect_exit 6 "$RSPROF" info --check newer.db 2>err &&
	grep -q "newer than this rsprof" err && cmp newer.db newer.orig
'

test_expect_success 'bad arguments: exit 2' '
	expect_exit 2 "$RSPROF" info fix.db cpu.db 2>/dev/null &&
	expect_exit 2 "$RSPROF" info --bogus fix.db 2>/dev/null
'

test_done
