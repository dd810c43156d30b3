#!/bin/sh
# rsprof diff FILE@A..B FILE@C..D (issue 14): two windows of one recording,
# the same output as diff. phases runs first() hot for half of its run and
# second() for the other half: the diff of the halves shows the swap.
. "$(dirname "$0")/lib.sh"

FIXTURE=$(dirname "$RSPROF")/tests/helper/fixture
SRC=$TEST_SRC/targets/phases.c
L_FIRST=$(grep -n "PHASE:first" "$SRC" | cut -d: -f1)
L_SECOND=$(grep -n "PHASE:second" "$SRC" | cut -d: -f1)

test_expect_success 'fixture: the halves of one file, CPU and heap, as report --window' '
	"$FIXTURE" p.db &&
	"$RSPROF" diff --csv p.db@..5s p.db@5s.. >out &&
	cat out &&
	# cold.c:5 only runs in the first half (20 %), hot.c:20 goes 15 -> 35 %
	grep -q "^cpu,gone,.*cold.c:5,.*,20.0000,0.0000,-20.0000,100,0$" out &&
	grep -q "^cpu,changed,.*hot.c:20,.*,15.0000,35.0000,20.0000,75,175$" out &&
	grep -q "^cpu,same,.*hot.c:10,.*,60.0000,60.0000,0.0000,300,300$" out &&
	# heap: parse.rs held 10 MB at 5 s, nothing at the end
	grep -q "^heap,changed,.*parse.rs:77,.*,10485760,0,-10485760," out &&
	"$RSPROF" report --cpu --csv --window ..5s p.db | grep -q "^cpu,20.0000,.*cold.c"
'

test_expect_success 'fixture: the header names the windows; JSON has them' '
	"$RSPROF" diff p.db@..5s p.db@5s.. >out &&
	cat out &&
	grep -q "^A: p.db@0ms..5.0s  window 5.0s of 10.0s  500 samples  live 15.0 MiB at 5.0s$" out &&
	grep -q "^B: p.db@5.0s..10.0s  window 5.0s of 10.0s  500 samples  live 10.0 MiB at 10.0s$" out &&
	"$RSPROF" diff --json p.db@2s..4s p.db | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert d[\"a\"][\"window\"] == {\"from_ms\": 2000, \"to_ms\": 4000, \"samples\": 200, \"live_bytes\": 12582912}, d[\"a\"]
assert d[\"b\"][\"window\"] is None
"
'

test_expect_success 'a whole file against a window of it; a file whose name has an @' '
	"$RSPROF" diff p.db p.db@0.. | grep -q "^no change" &&
	cp p.db "x@1s..2s.db" &&
	"$RSPROF" diff "x@1s..2s.db" p.db | grep -q "^no change"
'

test_expect_success 'a bad window or a missing file: exit 2 / 6' '
	expect_exit 2 "$RSPROF" diff p.db@soon p.db 2>err &&
	grep -q "not a window A..B" err &&
	expect_exit 2 "$RSPROF" diff p.db@5s..2s p.db 2>/dev/null &&
	expect_exit 6 "$RSPROF" diff nothere.db@1s..2s p.db 2>/dev/null
'

if ! have_perf; then
	test_skip 'window diff of a recording' 'perf events not allowed here'
	test_done
fi

test_expect_success 'phases: the diff of the two halves shows the swap' '
	"$RSPROF" record -q --no-heap -F 499 -i 500ms -o ph.db -- "$TARGETS/phases" 4 &&
	"$RSPROF" diff --cpu --csv ph.db@0..2s ph.db@2s.. >out &&
	cat out &&
	# first(): most of A, little of B; second(): the other way round
	awk -F, -v l=":$L_FIRST" "index(\$3, l) { exit !(\$7 >= 60 && \$8 <= 40) }" out &&
	awk -F, -v l=":$L_SECOND" "index(\$3, l) { exit !(\$7 <= 40 && \$8 >= 60) }" out &&
	sed -n 2,3p out | grep -q "phases.c:$L_FIRST" &&
	sed -n 2,3p out | grep -q "phases.c:$L_SECOND" &&
	"$RSPROF" diff ph.db@0..2s ph.db@2s.. | grep -q "^A: ph.db@0ms..2.0s  window 2.0s of"
'

test_done
