#!/bin/sh
# record --alloc-history (issue 14): the in-process tracker's allocations
# and frees, recorded through the preload backend, answer "who owned this
# address then?". heap_history allocates, frees and allocates again at the
# same address, printing "EVENT ADDRESS MONO_NS LINE" to stderr; history
# --addr X --at T names the owner each time, before and after the reuse.
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

SRC=$TEST_SRC/targets/heap_history.c

test_expect_success 'record heap_history with --alloc-history (the in-process tracker)' '
	"$RSPROF" record -q --no-cpu --alloc-history -o h.db -- "$TARGETS/heap_history" 2>ev &&
	cat ev &&
	test "$(meta h.db heap_backend)" = preload &&
	test "$(meta h.db alloc_history_dropped)" = 0 &&
	# every allocation and free the tracker counted is an event kept
	test "$(meta h.db alloc_history_events)" = \
	     "$(sql h.db "SELECT SUM(alloc_count) + SUM(free_count) FROM heap_events")" &&
	test "$(sql h.db "SELECT COUNT(*) FROM alloc_events")" = \
	     "$(sql h.db "SELECT SUM(alloc_count) FROM heap_events")" &&
	test "$(grep -c "^alloc " ev)" = 4 && test "$(grep -c "^free " ev)" = 4
'

# The history time (s, 6 decimals) of a CLOCK_MONOTONIC ns plus ms milliseconds.
t0=$(meta h.db alloc_history_monotonic_ns 2>/dev/null)
at() {	# MONO_NS MS
	awk -v t="$1" -v z="$t0" -v ms="$2" "BEGIN { printf \"%dms\", (t - z) / 1000000 + ms }"
}

test_expect_success 'the owner of each allocation, 10 ms after it: its own line' '
	grep "^alloc " ev | while read -r what addr ns line; do
		fn=$(sed -n "${line}p" "$SRC" | grep -o "HIST:[a-z]*") &&
		"$RSPROF" history h.db --addr "$addr" --at "$(at "$ns" 10)" >o &&
		cat o &&
		grep -q "^# owner:    $addr at .*: allocation [0-9]* (.* B at $addr, .*heap_history.c:$line " o ||
		{ echo "no owner at line $line ($fn) for $addr"; exit 1; }
	done
'

test_expect_success 'after each free: free, last held by the allocation before' '
	prev_line= &&
	while read -r what addr ns line; do
		if [ "$what" = alloc ]; then
			eval "line_$(echo "$addr" | tr -d x)=$line"
			continue
		fi
		eval "held=\$line_$(echo "$addr" | tr -d x)"
		"$RSPROF" history h.db --addr "$addr" --at "$(at "$ns" 10)" >o &&
		cat o &&
		grep -q "^# owner:    $addr at .*: free (last held by allocation [0-9]*, .*heap_history.c:$held " o ||
		exit 1
	done <ev
'

test_expect_success 'the reused address: three owners in time order, each freed' '
	addr=$(grep "^alloc " ev | head -1 | cut -d" " -f2) &&
	test "$(grep -c "^alloc $addr " ev)" -ge 2 &&
	"$RSPROF" history h.db --addr "$addr" --csv >all.csv &&
	cat all.csv &&
	grep "^alloc $addr " ev | cut -d" " -f4 | tr "\n" " " >want &&
	awk -F, "NR > 1 && \$2 == $(printf %d "$addr") { print \$7 }" all.csv | tr "\n" " " >got &&
	test "$(cat want)" = "$(cat got)" &&
	awk -F, "NR > 1 && \$2 == $(printf %d "$addr") && \$5 == \"\" { n++ } END { exit n > 0 }" all.csv
'

test_expect_success 'a block made by a thread, freed by main: owned, then free' '
	addr=$(grep "^alloc " ev | awk "\$4 == $(line_of HIST:thread "$SRC")" | cut -d" " -f2) &&
	ns=$(grep "^alloc $addr " ev | cut -d" " -f3) &&
	"$RSPROF" history h.db --addr "$addr" --at "$(at "$ns" 10)" | grep -q "allocation .*worker)" &&
	fns=$(grep "^free $addr " ev | cut -d" " -f3) &&
	"$RSPROF" history h.db --addr "$addr" --at "$(at "$fns" 10)" | grep -q ": free (last held"
'

test_expect_success 'info, report and history say how many events were dropped' '
	"$RSPROF" info h.db | grep -q "^alloc history: *[0-9,]* events kept, 0 dropped" &&
	"$RSPROF" report --heap h.db | grep -q "^# history:  [0-9,]* allocation and free events kept (rsprof history), 0 dropped$" &&
	"$RSPROF" history h.db --addr 0x1 --json | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert d[\"history_dropped\"] == 0, d
"
'

test_expect_success 'a busy program: what was kept and what was dropped add up' '
	"$RSPROF" record -q --no-cpu --alloc-history -o busy.db -- "$TARGETS/heap_temp" 2>err;
	cat err &&
	kept=$(meta busy.db alloc_history_events) && dropped=$(meta busy.db alloc_history_dropped) &&
	test $((kept + dropped)) = 1400002 &&
	if [ "$dropped" != 0 ]; then grep -q "warning: allocation history: $dropped of 1400002 events dropped" err; fi &&
	test "$(sql busy.db "SELECT COUNT(*) FROM alloc_events")" -gt 0 &&
	test "$(sql busy.db "SELECT COUNT(*) FROM alloc_events WHERE site IS NULL OR site = 0")" = 0 &&
	sqlite3 -bail busy.db <"$TEST_SRC/seed000.sql" >/dev/null
'

test_expect_success '--alloc-history needs the in-process tracker: exit 2 otherwise' '
	expect_exit 2 "$RSPROF" record --alloc-history -p $$ 2>err &&
	grep -q "in-process tracker" err &&
	expect_exit 2 "$RSPROF" record --alloc-history --heap-backend uprobe -- true 2>err &&
	expect_exit 2 "$RSPROF" record --alloc-history --no-heap -- true 2>err &&
	grep -q "not with --no-heap" err
'

test_expect_success 'a launch the tracker cannot serve (static): an error, not a silent nothing' '
	gcc -static -O1 -o heap_static "$TEST_SRC/targets/heap_c.c" &&
	! "$RSPROF" record -q --no-cpu --alloc-history -o own.db -- ./heap_static 10 0 2>err &&
	grep -q "alloc-history needs the in-process heap tracker" err
'

test_done
