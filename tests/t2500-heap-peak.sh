#!/bin/sh
# Live at the end of a launched program is after its teardown (issue 12):
# report --at peak, a header line when live at the end is far below the
# peak, timeline marks the peak; --at after the end says so; the CPU
# timeline does not drop in the last, partial interval.
. "$(dirname "$0")/lib.sh"

SRC=$TEST_SRC/targets/heap_teardown.c
HOLD=$(grep -n "/\* HOLD \*/" "$SRC" | cut -d: -f1)

if ! have_bpf || ! test -x "$TARGETS/heap_teardown"; then
	test_skip 'heap teardown' 'BPF not available (needs root and BTF) or target not built'
	test_done
fi

test_expect_success 'record heap_teardown: 32 MiB held, then all freed before exit' '
	"$RSPROF" record -q --no-cpu -o td.db -- "$TARGETS/heap_teardown" 2 >/dev/null
'

test_expect_success 'report: live 0 at the end, the header names --at peak' '
	"$RSPROF" report --heap td.db >end.out &&
	cat end.out &&
	grep -q "^# heap: *live 0 B  peak 32.0 MiB" end.out &&
	unwrap end.out | grep -q "^# heap: *live at the end is far below the peak, 32.0 MiB at [0-9.]*s: .report --at peak." &&
	grep -q "^ *0 B  *32.0 MiB  *32  [^ ]*heap_teardown.c:$HOLD " end.out
'

test_expect_success 'report --at peak: the site holding the peak, on its line' '
	"$RSPROF" report --heap --at peak td.db >peak.out &&
	cat peak.out &&
	grep -q "^# heap at: *[0-9.]*s, the peak (the checkpoint with the most live heap, 32.0 MiB)" peak.out &&
	grep -q "^ *32.0 MiB  *32.0 MiB  *32  [^ ]*heap_teardown.c:$HOLD " peak.out &&
	! grep -q "far below the peak" peak.out &&
	"$RSPROF" report --heap --at peak --json td.db | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert d[\"heap\"][\"total_live_bytes\"] == 32 << 20, d[\"heap\"]
"
'

test_expect_success 'report --at after the end: the end, and the header says so' '
	"$RSPROF" report --heap --at 100s td.db >late.out &&
	grep -q "^# heap at: *the end, [0-9.]*s (--at 1m40s is after the end of the recording)" late.out &&
	expect_exit 2 "$RSPROF" report --at soon td.db 2>err &&
	grep -q "not a duration or .peak." err
'

test_expect_success 'timeline marks the peak' '
	LC_ALL=C "$RSPROF" timeline td.db >tl.out &&
	cat tl.out &&
	grep -q "^ *\^ peak 32.0 MiB at [0-9.]*s (rsprof report --at peak)" tl.out
'

if have_perf && test -x "$TARGETS/cpu_split"; then
	test_expect_success 'CPU timeline: no drop in the last, partial interval' '
		"$RSPROF" record -q --no-heap -F 499 -o cpu.db -- "$TARGETS/cpu_split" 2.5 &&
		test "$(sql cpu.db "SELECT COUNT(*) FROM checkpoints")" -ge 3 &&
		LC_ALL=C COLUMNS=100 "$RSPROF" timeline cpu.db >cpu.out &&
		cat cpu.out &&
		# rows of the area chart: how high the first and the last column reach
		awk "/^CPU samples per interval/ { on = 1; next }
		     on && / \\+-/ { exit }
		     on { l = substr(\$0, length(\$0)); f = substr(\$0, 13, 1);
			  if (l != \" \") last++; if (f != \" \") first++ }
		     END { print first + 0, last + 0 }" cpu.out >h &&
		cat h &&
		read first last <h &&
		# what the columns should be: samples per second of each interval
		# (the machine may give the program less CPU in one interval than
		# in another; a partial interval must not read lower for being short)
		"$RSPROF" timeline --csv cpu.db >cpu.csv &&
		awk -F, "NR > 1 { r = \$5 * 1000 / (\$1 - t); t = \$1; if (NR == 2) f = r; l = r }
			 END { print int(100 * l / f) }" cpu.csv >want &&
		cat want &&
		test "$first" -ge 4 &&
		test $((last * 100)) -ge $(( (first * $(cat want)) - 200 ))
	'
fi

test_done
