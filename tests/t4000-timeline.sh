#!/bin/sh
# rsprof timeline: series over checkpoints on a fixture (known numbers), then
# on a real recording of a program that leaks from one line while another
# holds constant memory (issue 4, test 2).
. "$(dirname "$0")/lib.sh"

FIXTURE=$(dirname "$RSPROF")/tests/helper/fixture
MB=1048576

# csv_col FILE HEADER-SUBSTRING: the values of the first column whose header
# contains the substring, one per line.
csv_col() {
	python3 - "$1" "$2" <<-\EOF_PY
	import csv, sys
	rows = list(csv.reader(open(sys.argv[1])))
	i = next(i for i, h in enumerate(rows[0]) if sys.argv[2] in h)
	for r in rows[1:]:
	    print(r[i])
	EOF_PY
}

svg_check() {	# FILE LABEL...: well-formed, with a polyline and a legend per label
	python3 - "$@" <<-\EOF_PY
	import sys
	import xml.etree.ElementTree as ET
	ns = "{http://www.w3.org/2000/svg}"
	root = ET.parse(sys.argv[1]).getroot()
	assert root.tag == ns + "svg", root.tag
	lines = root.iter(ns + "polyline")
	titles = [p.find(ns + "title").text for p in lines]
	legend = [t.text for t in root.iter(ns + "text") if t.get("class") == "legend"]
	texts = " ".join(t.text or "" for t in root.iter(ns + "text"))
	assert "MiB" in texts and "seconds" in texts, texts
	for want in sys.argv[2:]:
	    assert any(want in t for t in titles), (want, titles)
	    assert any(want in t for t in legend), (want, legend)
	print(len(titles), "series:", titles)
	EOF_PY
}

test_expect_success 'fixture profile' '
	"$FIXTURE" p.db small && md5sum p.db >p.md5 &&
	"$FIXTURE" cpu.db cpu-only
'

test_expect_success '--csv: one row per checkpoint with the totals' '
	"$RSPROF" timeline --csv p.db >out &&
	test "$(sed -n 1p out)" = "time_ms,live_bytes,alloc_bytes,freed_bytes,cpu_samples" &&
	test "$(wc -l <out)" -eq 11 &&
	test "$(sed -n 2p out)" = "1000,$((3 * MB)),$((4 * MB)),$MB,100" &&
	test "$(sed -n 6p out)" = "5000,$((15 * MB)),$((4 * MB)),$MB,100" &&
	test "$(sed -n 11p out)" = "10000,$((10 * MB)),$MB,$((2 * MB)),100"
'

test_expect_success '-n 2: the site series, ranked by final live bytes' '
	"$RSPROF" timeline --csv -n 2 p.db >out &&
	head -1 out | grep -q "live .*cache.rs:42 app::cache::insert,live .*parse.rs:77 app::parse$" &&
	csv_col out cache.rs >cache &&
	test "$(sed -n 1p cache)" = $MB && test "$(sed -n 10p cache)" = $((10 * MB)) &&
	csv_col out parse.rs >parse &&
	test "$(sed -n 5p parse)" = $((10 * MB)) && test "$(sed -n 10p parse)" = 0
'

test_expect_success '--rank peak and --rank growth choose other sites' '
	"$RSPROF" timeline --csv -n 1 --rank peak p.db | head -1 | grep -q "cache.rs" &&
	"$RSPROF" timeline --csv -n 1 --rank growth p.db | head -1 | grep -q "cache.rs" &&
	"$RSPROF" timeline --csv -n 1 --rank final --filter parse p.db | head -1 |
		grep -q "parse.rs" &&
	expect_exit 2 "$RSPROF" timeline --rank sideways p.db 2>err &&
	grep -q "final, peak or growth" err
'

test_expect_success '--since, --until, --window: the checkpoints in the window' '
	"$RSPROF" timeline --csv -n 2 --since 3s p.db >out &&
	test "$(sed 1d out | cut -d, -f1 | tr "\n" " ")" = "8000 9000 10000 " &&
	"$RSPROF" timeline --csv --until 2s p.db | sed 1d | cut -d, -f1 >out &&
	test "$(tr "\n" " " <out)" = "1000 2000 " &&
	"$RSPROF" timeline --csv --window 4s..6s p.db | sed 1d | cut -d, -f1 >out &&
	test "$(tr "\n" " " <out)" = "5000 6000 " &&
	"$RSPROF" timeline --since 3s p.db | tail -1 >out &&
	cat out &&
	grep -q "^growth: -2.00 MiB in 2.0s (-60.0 MiB/min); grew most: .*cache.rs:42 .*(+2.00 MiB)$" out &&
	"$RSPROF" timeline --json -n 2 --rank growth --window 5s.. p.db | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert [p[\"time_ms\"] for p in d[\"series\"]] == [6000, 7000, 8000, 9000, 10000], d[\"series\"]
s = {x[\"line\"]: x for x in d[\"sites\"]}
assert s[77][\"peak_bytes\"] == 8 * 1048576 and s[77][\"growth_bytes\"] == -8 * 1048576, s[77]
assert s[42][\"growth_bytes\"] == 4 * 1048576, s[42]
assert [x[\"line\"] for x in d[\"sites\"]] == [42, 77]
" &&
	expect_exit 2 "$RSPROF" timeline --window 20s.. p.db 2>err &&
	grep -q "^rsprof timeline: --window 20s..: starts at 20.0s, at or after the end of the recording, which is 10.0s long$" err &&
	expect_exit 2 "$RSPROF" timeline --since 1s --window ..2s p.db 2>/dev/null &&
	expect_exit 2 "$RSPROF" timeline --until soon p.db 2>/dev/null
'

test_expect_success '--cpu: per-site CPU series' '
	"$RSPROF" timeline --csv --cpu -n 2 p.db >out &&
	head -1 out | grep -q ",cpu .*hot.c:10 hot_loop,cpu .*hot.c:20 warm$" &&
	csv_col out hot.c:20 >warm &&
	test "$(sed -n 1p warm)" = 15 && test "$(sed -n 10p warm)" = 35
'

test_expect_success '--json: a document with series, sites and growth' '
	"$RSPROF" timeline --json -n 2 p.db >out &&
	python3 -c "
import json
d = json.load(open(\"out\"))
assert d[\"checkpoints\"] == 10 and len(d[\"series\"]) == 10
assert d[\"series\"][4][\"live_bytes\"] == 15 * 1048576
assert [s[\"line\"] for s in d[\"sites\"]] == [42, 77]
assert d[\"sites\"][1][\"peak_bytes\"] == 10 * 1048576
assert d[\"growth\"][\"bytes\"] == 7 * 1048576, d[\"growth\"]
assert d[\"growth\"][\"grew_most\"][\"line\"] == 42
"
'

test_expect_success 'the chart: UTF-8 blocks, ASCII in the C locale, fits the width' '
	LC_ALL=C.UTF-8 COLUMNS=90 "$RSPROF" timeline -n 2 p.db >utf &&
	grep -q "█" utf &&
	LC_ALL=C COLUMNS=70 "$RSPROF" timeline -n 2 p.db >ascii &&
	! LC_ALL=C grep -q "[^ -~]" ascii &&
	grep -q "#" ascii &&
	LC_ALL=C.UTF-8 python3 -c "
import sys
for f, w in ((\"utf\", 90), (\"ascii\", 70)):
    for l in open(f, encoding=\"utf-8\"):
        if not l.startswith(\"growth:\") and not l.startswith(\"p.db\"):
            assert len(l.rstrip(\"\\n\")) <= w, (f, len(l), l)
"
'

test_expect_success 'the growth summary line' '
	"$RSPROF" timeline p.db >out &&
	tail -1 out | grep -q "^growth: +7.00 MiB in 9.0s (+46.7 MiB/min); grew most: .*cache.rs:42 app::cache::insert (+9.00 MiB)$"
'

test_expect_success 'a CPU-only profile charts CPU and says there is no heap' '
	"$RSPROF" timeline cpu.db >out &&
	grep -q "CPU samples per interval" out &&
	tail -1 out | grep -q "no heap data"
'

test_expect_success '--svg: a well-formed SVG with every series' '
	"$RSPROF" timeline -n 2 --svg p.svg p.db >out &&
	grep -q "^wrote p.svg" out && grep -q "^growth:" out &&
	svg_check p.svg "live heap" "cache.rs:42 app::cache::insert" "parse.rs:77 app::parse"
'

test_expect_success 'readers leave the profile byte-identical' '
	md5sum -c p.md5
'

test_expect_success 'a version-1 profile: totals and sites computed' '
	make_v1 v1.db &&
	"$RSPROF" timeline --csv -n 2 v1.db >out &&
	test "$(sed -n 1p out)" = "time_ms,live_bytes,alloc_bytes,freed_bytes,cpu_samples,live s/a.c:10 f,live s/b.c:20 g" &&
	test "$(sed -n 4p out)" = "3000,1250,1100,50,9,1000,250" &&
	"$RSPROF" timeline --csv --cpu v1.db | sed -n 2p | grep -qx "1000,100,100,0,5,5,0" &&
	"$RSPROF" timeline v1.db | tail -1 | grep -q "grew most: s/a.c:10 f (+1000 B)$"
'

test_expect_success 'no file given: the newest rsprof.*.db here' '
	mkdir newest && cp p.db newest/rsprof.fixture.251122050000.db &&
	cp cpu.db newest/rsprof.fixture.251122060000.db &&
	(cd newest && "$RSPROF" timeline --csv >../out) &&
	test "$(sed -n 2p out | cut -d, -f2)" = 0
'

test_expect_success 'bad inputs: exit 6, clear error, nothing written' '
	echo "not a profile" >text.db &&
	sqlite3 foreign.db "CREATE TABLE t (x); INSERT INTO t VALUES (1)" &&
	head -c 3000 p.db >trunc.db &&
	for f in missing.db text.db foreign.db trunc.db; do
		test -e $f && md5sum $f >bad.md5
		expect_exit 6 "$RSPROF" timeline --svg bad.svg $f >out 2>err || exit 1
		test ! -s out && grep -q "^rsprof timeline: " err && grep -q "^hint: " err ||
			{ cat err; exit 1; }
		test ! -e bad.svg || { echo "svg written for $f"; exit 1; }
		if test -e bad.md5; then md5sum -c bad.md5 || exit 1; rm bad.md5; fi
	done
'

# --- real recordings: C (libc malloc) and Rust (__rust_alloc) ------------------
if ! have_perf || ! have_bpf; then
	test_skip 'timeline of a leaking program' 'needs perf events and BPF (root)'
	test_done
fi

leak_checks() {	# TARGET SOURCE
	t=$1
	src=$2
	rising=$(grep -n -E "LEAK:rising( \*/)?$" "$TEST_SRC/targets/$2" | cut -d: -f1)
	flat=$(grep -n -E "LEAK:flat( \*/)?$" "$TEST_SRC/targets/$2" | cut -d: -f1)

	test_expect_success "$t: record 3 s with 250 ms checkpoints" '
		"$RSPROF" record -q -i 250ms -o $t.db -- "$TARGETS/$t" 3 >/dev/null &&
		test "$(sql $t.db "SELECT COUNT(*) FROM checkpoints")" -ge 8
	'

	test_expect_success "$t: timeline --csv, the leaking site rises, the other is flat" '
		"$RSPROF" timeline --csv -n 2 $t.db >$t.csv &&
		cat $t.csv &&
		csv_col $t.csv "$src:$rising " >rising &&
		csv_col $t.csv "$src:$flat " >flat &&
		python3 - rising flat <<-\EOF_PY
		import sys
		r = [int(x) for x in open(sys.argv[1])]
		f = [int(x) for x in open(sys.argv[2])]
		assert all(b >= a for a, b in zip(r, r[1:])), ("not monotonic", r)
		assert r[-1] - r[0] >= 2 * 1048576, ("did not rise", r)
		steps = sum(1 for a, b in zip(r, r[1:]) if b > a)
		assert steps >= len(r) * 2 // 3, ("rises in too few steps", r)
		# flat from the first checkpoint that saw it (the first or the second)
		first = next(i for i, v in enumerate(f) if v)
		assert first <= 1 and set(f[first:]) == {4 * 1048576}, ("not flat at 4 MiB", f)
		EOF_PY
	'

	test_expect_success "$t: the growth summary names the leaking line" '
		"$RSPROF" timeline $t.db >out &&
		tail -1 out &&
		tail -1 out | grep -q "^growth: +.* MiB in .*/min); grew most: .*$src:$rising .*leak_step (+"
	'

	test_expect_success "$t: --svg holds both series" '
		"$RSPROF" timeline -n 2 --svg $t.svg $t.db >/dev/null &&
		svg_check $t.svg "$src:$rising " "$src:$flat "
	'
}

leak_checks leak_steady leak_steady.c
leak_checks leak_steady_rs leak_steady_rs.rs

# A program that frees everything before it ends: every site's final bytes
# are 0, so by default the sites are ranked by their peaks, and said so.
test_expect_success 'nothing live at the end: the sites ranked by peak, and said so' '
	cat >freed.c <<-\EOF &&
	#include <stdlib.h>
	#include <string.h>
	#include <unistd.h>
	int main(void)
	{
		char *big = malloc(8 << 20); /* BIG */
		char *small = malloc(1000); /* SMALL */
		memset(big, 1, 8 << 20);
		memset(small, 1, 1000);
		usleep(1200000);
		free(big);
		usleep(1200000);
		free(small);
		return 0;
	}
	EOF
	gcc -g -O0 -o freed freed.c &&
	"$RSPROF" record -q --no-cpu -i 250ms -o freed.db -- ./freed &&
	"$RSPROF" timeline -n 2 freed.db >out && cat out &&
	grep -q "^live bytes of the top 2 sites (by peak: nothing is live at the end):" out &&
	big=$(grep -n "BIG" freed.c | cut -d: -f1) &&
	small=$(grep -n "SMALL" freed.c | cut -d: -f1) &&
	grep -A1 "^live bytes of the top" out | tail -1 | grep -q "^freed.c:$big " &&
	"$RSPROF" timeline -n 2 --json freed.db | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert d[\"rank\"] == \"peak\", d[\"rank\"]
assert [s[\"line\"] for s in d[\"sites\"]] == [$big, $small], d[\"sites\"]
" &&
	"$RSPROF" timeline -n 2 --rank final freed.db | grep -q "(by final):"
'

test_done
