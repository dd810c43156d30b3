#!/bin/sh
# End to end: what `make demo` shows. The bundled demo's hot line tops the
# CPU table and its retaining line tops the heap table.
. "$(dirname "$0")/lib.sh"

DEMO=$(dirname "$RSPROF")/demo
SRC=$TOP/demo/demo.rs
hot_line=$(grep -n 'demo: hot line' "$SRC" | cut -d: -f1)
heap_line=$(grep -n 'demo: retained heap' "$SRC" | cut -d: -f1)

if ! have_perf; then
	test_skip 'demo recording' 'perf_event_open not permitted here'
	test_done
fi

test_expect_success 'record the demo (launch mode)' '
	"$RSPROF" record -q -o demo.db -- "$DEMO" 3 >demo.out 2>demo.err &&
	grep -q "records indexed" demo.out
'

test_expect_success 'the report names the demo hot line first' '
	"$RSPROF" report --cpu --csv -n 1 demo.db >cpu.csv &&
	sed -n 2p cpu.csv | grep -q "demo.rs:$hot_line\|demo.rs,$hot_line" || { cat cpu.csv; exit 1; }
'

if have_bpf; then
	test_expect_success 'the heap table names the retaining line first' '
		"$RSPROF" report --heap --csv -n 1 demo.db >heap.csv &&
		sed -n 2p heap.csv | grep -q "demo.rs:$heap_line\|demo.rs,$heap_line" ||
			{ cat heap.csv; cat demo.err; exit 1; }
	'
else
	test_skip 'heap table of the demo' 'BPF needs root and /sys/kernel/btf/vmlinux'
fi

test_expect_success 'its report: no 0 B rows, the first screen within 80 columns' '
	COLUMNS=80 "$RSPROF" report -n 10 demo.db >r80 && cat r80 &&
	! grep -q "^ *0 B  *0 B " r80 &&
	# columns, not bytes: a cut is marked with "…" in a UTF-8 locale
	head -n 24 r80 | python3 -c "
import sys
bad = [l for l in sys.stdin if len(l.rstrip(\"\\n\")) > 80]
print(\"\".join(bad), end=\"\")
sys.exit(1 if bad else 0)
"
'

test_expect_success 'scripts/demo.sh runs as make demo runs it' '
	"$TOP/scripts/demo.sh" "$(dirname "$RSPROF")" >make-demo.out 2>&1 &&
	grep -q "demo.rs:$hot_line" make-demo.out || { cat make-demo.out; exit 1; }
'

test_done
