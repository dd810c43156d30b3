#!/bin/sh
# rsprof report on fixture profiles with known numbers (tests/unit/fixture.h,
# written through db__create by tests/helper/fixture), then on a real recording.
#
# The small fixture: 10 checkpoints of 1 s. CPU: hot.c:10 60 %, hot.c:20 25 %
# (15/checkpoint in the first half, 35 in the second), cold.c:5 10 % (first
# half only), [libc.so.6] memcpy 5 %. Heap: cache.rs:42 +1 MB per checkpoint
# (10 MB live), parse.rs:77 up to 10 MB at 5 s, 0 at the end.
. "$(dirname "$0")/lib.sh"

FIXTURE=${FIXTURE:-$(dirname "$RSPROF")/tests/helper/fixture}

# "location,pct" of the CPU (or heap: $1 = heap) rows of report --csv
rows() {
	_t=$1
	shift
	"$RSPROF" report --csv "$@" | awk -F, -v t="$_t" '$1 == t { print $10 "," $2 }'
}

# The location column without the directories srcpath__display keeps.
short() {
	sed 's|^[^,]*/||'
}

test_expect_success 'fixture profiles are written through db__create' '
	"$FIXTURE" fix.db &&
	"$FIXTURE" cpu.db cpu-only &&
	test "$(stat -c %a fix.db)" = 600
'

test_expect_success 'CPU ranking: lines in order, with their shares' '
	rows cpu fix.db | short >got &&
	printf "%s\n" "hot.c:10,60.0000" "hot.c:20,25.0000" "cold.c:5,10.0000" \
		"[libc.so.6],5.0000" >want &&
	cmp want got
'

test_expect_success 'the text table: header, CPU% Location Function, heap columns' '
	"$RSPROF" report fix.db >out &&
	cat out &&
	grep -q "^# file: *fix.db" out &&
	grep -q "^# duration: 10.0s  checkpoints: 10  samples: 1,000  lost: 10 (1.0%)" out &&
	grep -q "^# heap: *live 10.0 MiB  peak 15.0 MiB" out &&
	grep -q "^ *CPU%  Location  *Function" out &&
	grep -q "^ *60.0%  [^ ]*hot.c:10  *hot_loop$" out &&
	grep -q "^ *Heap  *Peak@cp  *Allocs  Location  *Function" out &&
	grep -q "^# heap: *3 frees of memory allocated before the recording (300 B, not in live)$" out &&
	grep -q "^ *10.0 MiB  *10.0 MiB  *160  [^ ]*cache.rs:42  *app::cache::insert$" out
'

test_expect_success 'percentages add up to 100' '
	"$RSPROF" report --csv -n 100 fix.db |
		awk -F, "\$1 == \"cpu\" { s += \$2 } END { exit !(s > 99.9 && s < 100.1) }"
'

test_expect_success '-n limits the rows of each table' '
	test "$(rows cpu -n 2 fix.db | wc -l)" = 2 &&
	test "$(rows heap -n 1 fix.db | wc -l)" = 1 &&
	test "$(rows cpu --top 3 fix.db | wc -l)" = 3
'

test_expect_success '-t leaves out rows below the threshold' '
	rows cpu -t 20 fix.db | short >got &&
	printf "%s\n" "hot.c:10,60.0000" "hot.c:20,25.0000" >want &&
	cmp want got &&
	test "$(rows cpu --threshold 5 fix.db | wc -l)" = 4
'

test_expect_success '--since: the last seconds only' '
	rows cpu --since 4s fix.db | short >got &&
	printf "%s\n" "hot.c:10,60.0000" "hot.c:20,35.0000" "[libc.so.6],5.0000" >want &&
	cmp want got &&
	"$RSPROF" report --json --since 4s fix.db >j.json &&
	python3 -c "import json; d = json.load(open(\"j.json\")); assert d[\"cpu\"][\"total_samples\"] == 400, d"
'

test_expect_success '--until: the first seconds only' '
	rows cpu --until 5s fix.db | short >got &&
	printf "%s\n" "hot.c:10,60.0000" "cold.c:5,20.0000" "hot.c:20,15.0000" \
		"[libc.so.6],5.0000" >want &&
	cmp want got
'

test_expect_success '--window A..B, open ends' '
	rows cpu --window 5s..10s fix.db | short >a &&
	rows cpu --since 5s fix.db | short >b &&
	cmp a b &&
	rows cpu --window ..5s fix.db | short >a &&
	rows cpu --until 5s fix.db | short >b &&
	cmp a b &&
	rows cpu --window 5s.. fix.db | short >a &&
	! grep -q cold a
'

test_expect_success '--window with --since is a usage error' '
	expect_exit 2 "$RSPROF" report --window 1s..2s --since 1s fix.db 2>err &&
	grep -q "cannot be combined" err
'

test_expect_success 'bad durations, sort keys, thresholds: exit 2' '
	expect_exit 2 "$RSPROF" report --since 5parsecs fix.db 2>err &&
	grep -q "5parsecs" err &&
	expect_exit 2 "$RSPROF" report --window 9s..2s fix.db 2>/dev/null &&
	expect_exit 2 "$RSPROF" report -s lines fix.db 2>err &&
	grep -q "line, function, file, module, symbol or process" err &&
	expect_exit 2 "$RSPROF" report -t 120 fix.db 2>/dev/null &&
	expect_exit 2 "$RSPROF" report --json --csv fix.db 2>/dev/null &&
	expect_exit 2 "$RSPROF" report fix.db cpu.db 2>/dev/null
'

test_expect_success '--at: heap as it was at that moment' '
	rows heap --at 5s fix.db | short >got &&
	printf "%s\n" "parse.rs:77,66.6667" "cache.rs:42,33.3333" >want &&
	cmp want got &&
	"$RSPROF" report --heap --at 5s fix.db | grep -q "^ *10.0 MiB  *10.0 MiB .*parse.rs:77"
'

test_expect_success 'heap at the end: live, peak, allocations, freed sites after' '
	"$RSPROF" report --csv --heap fix.db | awk -F, "\$1 == \"heap\"" >h &&
	cat h &&
	head -1 h | grep -q "^heap,100.0000,0,10485760,10485760,10485760,0,160,0,.*cache.rs:42" &&
	sed -n 2p h | grep -q "^heap,0.0000,0,0,10485760,15728640,15728640,1500,1500,.*parse.rs:77"
'

test_expect_success '--filter: case-insensitive substring of path or function' '
	rows cpu --filter COLD fix.db | short >got &&
	echo "cold.c:5,10.0000" >want &&
	cmp want got &&
	rows cpu --filter Hot_Lo fix.db | short | grep -q "^hot.c:10," &&
	test "$(rows cpu --filter memcpy fix.db | wc -l)" = 1 &&
	test "$(rows heap --filter cache:: fix.db | wc -l)" = 1
'

test_expect_success 'nothing passes the filter: said so, exit 0' '
	"$RSPROF" report --filter no-such-thing fix.db >out &&
	grep -q "^# no CPU location passes the filter" out &&
	grep -q "^# no live heap passing the filter" out
'

test_expect_success '-s function, file, module aggregate' '
	rows cpu -s file fix.db | short >got &&
	printf "%s\n" "hot.c,85.0000" "cold.c,10.0000" "[libc.so.6],5.0000" >want &&
	cmp want got &&
	rows cpu -s module fix.db >got &&
	printf "%s\n" "[fixture],95.0000" "[libc.so.6],5.0000" >want &&
	cmp want got &&
	"$RSPROF" report --cpu -s function fix.db | grep -q "^ *60.0%  .*hot.c  *hot_loop$"
'

test_expect_success '--full-paths shows the recorded path' '
	"$RSPROF" report --cpu --full-paths fix.db | grep -q "/home/dev/proj/src/hot.c:10  *hot_loop"
'

test_expect_success '--cpu and --heap choose the tables' '
	"$RSPROF" report --cpu fix.db >out &&
	grep -q "CPU%" out && ! grep -q "Allocs" out &&
	"$RSPROF" report --heap fix.db >out &&
	! grep -q "CPU%" out && grep -q "Allocs" out &&
	"$RSPROF" report cpu.db >out &&
	grep -q "CPU%" out && ! grep -q "Allocs" out && ! grep -q "^# heap" out
'

test_expect_success '--heap on a profile without heap data: exit 6' '
	expect_exit 6 "$RSPROF" report --heap cpu.db 2>err &&
	grep -q "no heap data" err
'

test_expect_success '--json is one valid document with both tables' '
	"$RSPROF" report --json fix.db >r.json &&
	python3 -m json.tool r.json >/dev/null &&
	python3 - <<-\EOF
	import json
	d = json.load(open("r.json"))
	cpu, heap = d["cpu"], d["heap"]
	assert cpu["total_samples"] == 1000
	assert [r["samples"] for r in cpu["rows"]] == [600, 250, 100, 50]
	assert abs(sum(r["pct"] for r in cpu["rows"]) - 100) < 0.01
	assert cpu["rows"][0]["file"] == "/home/dev/proj/src/hot.c"
	assert cpu["rows"][0]["line"] == 10 and cpu["rows"][0]["function"] == "hot_loop"
	assert cpu["rows"][3]["line"] is None
	assert heap["total_live_bytes"] == 10 * 2**20
	assert heap["rows"][0]["peak_bytes"] == 10 * 2**20
	assert heap["rows"][1]["alloc_count"] == 300 * 5
	assert d["summary"]["peak_bytes"] == 15 * 2**20
	EOF
'

test_expect_success '--csv: header and one row per location' '
	"$RSPROF" report --csv fix.db >r.csv &&
	head -1 r.csv | grep -q "^table,pct,samples,live_bytes,peak_bytes,alloc_bytes,free_bytes,alloc_count,free_count,location,file,line,function,module,pid,temp_count,kind$" &&
	test "$(wc -l <r.csv)" = 7 &&
	python3 -c "import csv; rows = list(csv.reader(open(\"r.csv\"))); assert all(len(r) == 17 for r in rows)"
'

test_expect_success '--format folded: flame graph stacks' '
	"$RSPROF" report --format folded fix.db >f.txt &&
	cat f.txt &&
	# hot_loop: two lines, 300 samples each, one stack of names: summed
	grep -q "^hot_loop 600$" f.txt && grep -q "^warm 250$" f.txt &&
	test "$(grep -c "^hot_loop " f.txt)" = 1 &&
	grep -q "^memcpy 50$" f.txt &&
	test "$(awk "{ s += \$NF } END { print s }" f.txt)" = 1000 &&
	"$RSPROF" report --format folded --heap fix.db >h.txt &&
	test "$(cat h.txt)" = "app::cache::insert 10485760" &&
	"$RSPROF" report --format folded --since 4s fix.db | grep -q "^warm 140$"
'

test_expect_success '--format pprof: a gzipped profile.proto' '
	"$RSPROF" report --format pprof fix.db >cpu.pb.gz &&
	gzip -t cpu.pb.gz &&
	python3 "$TOP/tests/pprof-dump.py" cpu.pb.gz >dump &&
	cat dump &&
	grep -q "^sample_type \[\[.samples., .count.\], \[.cpu., .nanoseconds.\]\]" dump &&
	grep -q "^\[250, [0-9]*\] warm:20$" dump &&
	"$RSPROF" report --format pprof --heap fix.db >heap.pb.gz &&
	python3 "$TOP/tests/pprof-dump.py" heap.pb.gz >dump &&
	grep -q "^sample_type .*alloc_objects.*alloc_space.*inuse_objects.*inuse_space" dump &&
	grep -q "^\[160, 10485760, 160, 10485760\] app::cache::insert:42$" dump &&
	grep -q "^\[1500, 15728640, 0, 0\] app::parse:77$" dump
'

test_expect_success '--format: bad values and combinations are usage errors' '
	expect_exit 2 "$RSPROF" report --format svg fix.db 2>err &&
	grep -q "text, folded or pprof" err &&
	expect_exit 2 "$RSPROF" report --format folded --json fix.db 2>/dev/null
'

test_expect_success 'the table fits $COLUMNS, 100 columns when not a terminal' '
	COLUMNS=60 LC_ALL=C "$RSPROF" report fix.db >out &&
	awk "!/^#/ && length(\$0) > 60 { bad = 1 } END { exit bad }" out &&
	grep -q "\.\." out &&
	# a UTF-8 terminal: the same widths in columns, the cut marked "…"
	COLUMNS=60 LC_ALL=C.UTF-8 "$RSPROF" report fix.db >out &&
	grep -q "…" out && ! grep -q "\.\." out &&
	python3 -c "
import sys
sys.exit(any(len(l.rstrip(\"\\n\")) > 60 for l in open(\"out\", encoding=\"utf-8\")))
" &&
	env -u COLUMNS "$RSPROF" report --full-paths fix.db >out &&
	awk "length(\$0) > 100 { bad = 1 } END { exit bad }" out
'

cat >v1.sql <<\EOF
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE checkpoints (id INTEGER PRIMARY KEY, timestamp_ms INTEGER NOT NULL);
CREATE TABLE symbols (addr INTEGER PRIMARY KEY, file TEXT, line INTEGER, function TEXT);
CREATE TABLE cpu_samples (checkpoint_id INTEGER NOT NULL, addr INTEGER NOT NULL,
    count INTEGER NOT NULL);
CREATE TABLE heap_events (checkpoint_id INTEGER NOT NULL, addr INTEGER NOT NULL,
    alloc_bytes INTEGER NOT NULL DEFAULT 0, free_bytes INTEGER NOT NULL DEFAULT 0);
INSERT INTO meta VALUES ('version', '1'), ('pid', '7'), ('process_name', 'old');
INSERT INTO checkpoints VALUES (1, 1000), (2, 2000);
INSERT INTO symbols VALUES (1, 'src/main.rs', 10, 'main'), (2, 'src/lib.rs', 5, 'lib::f');
INSERT INTO cpu_samples VALUES (1, 1, 30), (2, 1, 30), (1, 2, 40);
INSERT INTO heap_events VALUES (1, 2, 1000, 0), (2, 2, 500, 200);
EOF

test_expect_success 'a version 1 file (seed 000 schema exactly) is read' '
	sqlite3 -bail v1.db <v1.sql &&
	rows cpu v1.db >got &&
	printf "%s\n" "src/main.rs:10,60.0000" "src/lib.rs:5,40.0000" >want &&
	cmp want got &&
	"$RSPROF" report --heap --csv v1.db | grep -q "^heap,100.0000,0,1300,1300,1500,200," &&
	"$RSPROF" info v1.db | grep -q "^schema version: *1$"
'

test_expect_success 'no FILE: the newest rsprof.*.db here' '
	mkdir newest && cd newest &&
	"$FIXTURE" rsprof.app.261122050000.db cpu-only &&
	"$FIXTURE" rsprof.app.261122060000.db &&
	"$FIXTURE" rsprof.app.251122070000.db cpu-only &&
	"$RSPROF" report >out &&
	grep -q "^# file: *rsprof.app.261122060000.db" out &&
	grep -q Allocs out
'

test_expect_success 'no FILE and no profile here: exit 6 with a hint' '
	mkdir empty && cd empty &&
	expect_exit 6 "$RSPROF" report 2>err &&
	grep -q "no rsprof.*db" err && grep -q "^hint: " err
'

# A bad file: exit 6, a message, nothing on stdout, the file unchanged.
refused() {
	cp "$1" "$1.orig" &&
	expect_exit 6 "$RSPROF" report "$1" >out 2>err &&
	cat err &&
	test ! -s out &&
	grep -q "^rsprof report: .*$2" err &&
	cmp "$1" "$1.orig"
}

test_expect_success 'errors: exit 6, the file byte-identical' '
	expect_exit 6 "$RSPROF" report missing.db 2>err &&
	grep -q "missing.db.*No such file" err &&
	echo "just some text, not a database at all, long enough to be read" >text.db &&
	refused text.db "not a database" &&
	sqlite3 other.db "CREATE TABLE t (x); INSERT INTO t VALUES (1);" &&
	refused other.db "not an rsprof profile" &&
	"$FIXTURE" newer.db &&
	sqlite3 newer.db "UPDATE meta SET value = 4 WHERE key = '\''version'\''; PRAGMA journal_mode = DELETE;" >/dev/null &&
	refused newer.db "profile version 4 is newer than this rsprof (3); upgrade rsprof" &&
	"$FIXTURE" trunc.db &&
	sqlite3 trunc.db "PRAGMA journal_mode = DELETE;" >/dev/null &&
	truncate -s $(( $(stat -c %s trunc.db) / 2 )) trunc.db &&
	refused trunc.db "truncated"
'

test_expect_success '--json on an error: nothing on stdout' '
	expect_exit 6 "$RSPROF" report --json text.db >out 2>/dev/null &&
	test ! -s out
'

test_expect_success 'a failed write to stdout is exit 1' '
	expect_exit 1 "$RSPROF" report fix.db >/dev/full 2>/dev/null
'

test_expect_success 'seed 000 read queries run verbatim on a file db__create wrote' '
	sqlite3 -bail fix.db <"$TOP/tests/seed000.sql" >seed.out &&
	grep -q "hot.c|10|hot_loop|300" seed.out &&
	grep -q "cache.rs|42|app::cache::insert|10485760" seed.out
'

if have_perf && [ -x "$TARGETS/cpu_split" ]; then
	test_expect_success 'a real recording: the hot line first' '
		"$RSPROF" record -q --no-heap -F 499 -i 500ms -o real.db -- "$TARGETS/cpu_split" 2 &&
		"$RSPROF" report -n 3 real.db >out &&
		cat out &&
		a=$(grep -n "/\* HOT:a \*/" "$TOP/tests/targets/cpu_split.c" | cut -d: -f1) &&
		grep -m1 "cpu_split.c:" out | grep -q "cpu_split.c:$a " &&
		"$RSPROF" report --json real.db | python3 -m json.tool >/dev/null
	'
else
	test_skip 'a real recording' 'perf events not allowed or targets not built'
fi

if have_perf && [ -x "$TARGETS/cpu_split" ]; then
	test_expect_success 'a real -g recording: stacks in folded and pprof form' '
		"$RSPROF" record -q -g --no-heap -F 499 -o g.db -- "$TARGETS/cpu_split" 1 &&
		"$RSPROF" report --format folded g.db >g.txt &&
		cat g.txt &&
		grep -q "work_a [0-9]*$" g.txt &&
		test "$(grep -c ";" g.txt)" -ge 1 &&
		"$RSPROF" report --format pprof g.db >g.pb.gz &&
		python3 "$TOP/tests/pprof-dump.py" g.pb.gz | grep -q "work_a:"
	'
else
	test_skip 'a real -g recording' 'perf events not allowed or targets not built'
fi

if have_bpf && [ -x "$TARGETS/heap_c" ]; then
	test_expect_success 'a real heap recording: the retaining lines, biggest first' '
		"$RSPROF" record -q -o heap.db -- "$TARGETS/heap_c" 1000 300 >/dev/null &&
		"$RSPROF" report --heap --csv -n 3 heap.db >h.csv &&
		cat h.csv &&
		src="$TOP/tests/targets/heap_c.c" &&
		i=2 &&
		for m in HEAP_REALLOC HEAP_CALLOC HEAP_MALLOC; do
			l=$(grep -n "$m:" "$src" | cut -d: -f1) &&
			sed -n ${i}p h.csv | grep -q "heap_c.c:$l," || { echo "$m not row $i"; exit 1; }
			i=$((i + 1))
		done &&
		live=$(sed -n 2p h.csv | cut -d, -f4) &&
		test "$live" -ge $((38 << 20)) && test "$live" -le $((42 << 20))
	'

	test_expect_success 'a --no-cpu recording: the heap table alone' '
		"$RSPROF" record -q --no-cpu -o nocpu.db -- "$TARGETS/heap_c" 1000 100 >/dev/null &&
		"$RSPROF" report nocpu.db >out &&
		grep -q Allocs out && ! grep -q "CPU%" out &&
		"$RSPROF" report --cpu nocpu.db | grep -q "no CPU samples"
	'
else
	test_skip 'a real heap recording' 'BPF not allowed or targets not built'
fi

test_done
