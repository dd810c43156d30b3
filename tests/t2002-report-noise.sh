#!/bin/sh
# report's tables without noise: ranked by live bytes, the heap sites that
# hold nothing at the end (glibc's and the runtime's one-offs:
# __fopen_internal, __getdelim, std's stack_overflow::imp::get_stack...)
# when others do, the sites with neither live bytes nor a peak when none
# does, and CPU rows below 0.05 % are left out of the text tables and
# counted in a line under them; -a shows them; --json and --csv keep every
# row. diff's tables likewise.
. "$(dirname "$0")/lib.sh"

DEMO=$(dirname "$RSPROF")/demo

if ! have_perf; then
	test_skip 'report noise' 'perf_event_open not permitted here'
	test_done
fi

test_expect_success 'the demo, recorded' '
	"$RSPROF" record -q -o d.db -- "$DEMO" 2 >/dev/null &&
	n=$(sql d.db "SELECT COUNT(*) FROM (SELECT addr FROM heap_events GROUP BY addr
		       HAVING SUM(alloc_bytes) - SUM(free_bytes) = 0)") &&
	echo "$n sites hold nothing at the end" && test "$n" -gt 0
'

test_expect_success 'the text table: no 0 B rows, the rest counted' '
	"$RSPROF" report --heap -n 50 d.db >t && cat t &&
	! grep -q "^ *0 B " t &&
	grep -q "^# [0-9]* sites* with nothing live not shown (-a shows them)$" t &&
	! grep -q "__libc_start_call_main" t
'

# Nothing live at the end: the sites that held memory at a checkpoint stay.
test_expect_success 'nothing live at the end: the peaks shown, the rest counted' '
	cat >freed.c <<-\EOF &&
	#include <stdlib.h>
	#include <string.h>
	#include <unistd.h>
	int main(void)
	{
		char *p = malloc(4 << 20);	/* HELD */

		memset(p, 1, 4 << 20);
		usleep(1300000);
		free(p);
		return 0;
	}
	EOF
	gcc -g -O0 -o freed freed.c &&
	"$RSPROF" record -q --no-cpu -o f.db -- ./freed &&
	"$RSPROF" report --heap f.db >ft && cat ft &&
	grep -q "^ *0 B  *4.00 MiB .*freed.c:6 " ft &&
	! grep -q "^ *0 B  *0 B " ft
'

test_expect_success '-a: every row, no footer' '
	"$RSPROF" report --heap -a -n 50 d.db >a && grep -q "^ *0 B  *0 B " a &&
	! grep -q "not shown" a &&
	h=$(sed -n "s/^# \\([0-9]*\\) site.* not shown.*/\\1/p" t) &&
	test $(($(grep -c " B " a) - $(grep -c " B " t))) -ge "$h"
'

test_expect_success 'diff of two demo runs: no row that shows nothing, counted; -a and --csv keep them' '
	"$RSPROF" record -q -o d2.db -- "$DEMO" 1 >/dev/null &&
	"$RSPROF" diff --heap d.db d2.db >dt && cat dt &&
	! grep -q "^ *0 B  *0 B " dt &&
	grep -q "^# [0-9]* rows* that shows* nothing not shown (-a shows them)$" dt &&
	"$RSPROF" diff --heap -a d.db d2.db >da && grep -q "^ *0 B  *0 B " da &&
	! grep -q "not shown" da &&
	"$RSPROF" diff --heap --csv d.db d2.db | grep -q "^heap,same,.*,0,0,0,"
'

test_expect_success '--json keeps every row' '
	"$RSPROF" report --heap --json -n 50 d.db | python3 -c "
import json, sys
rows = json.load(sys.stdin)[\"heap\"][\"rows\"]
assert any(r[\"live_bytes\"] == 0 for r in rows), rows
"
'

test_done
