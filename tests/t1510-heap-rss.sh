#!/bin/sh
# Resident memory beside the tracked heap (issue 9): heap_mmap keeps 50 MiB
# in anonymous mmap arenas of its own sub-allocator (never through malloc)
# and 1 MiB from malloc. The recorder reads the process's resident memory
# at each checkpoint (checkpoints.rss_bytes, rss_anon_bytes: schema v3);
# report's header, info and timeline show it beside the tracked 1 MiB.
# Recorded with uprobes, which see malloc only (the in-process tracker
# counts the arenas too: t1511).
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

if ! have_bpf; then
	test_skip 'resident memory beside the heap' 'needs root and kernel BTF'
	test_done
fi

MiB=1048576

test_expect_success 'record heap_mmap: resident memory at each checkpoint' '
	"$RSPROF" record -q -i 200ms --heap-backend uprobe -o m.db -- "$TARGETS/heap_mmap" 1200 \
		>/dev/null &&
	test "$(meta m.db version)" = 3 &&
	rss=$(sql m.db "SELECT MAX(rss_bytes) FROM checkpoints") &&
	anon=$(sql m.db "SELECT MAX(rss_anon_bytes) FROM checkpoints") &&
	echo "rss $rss anon $anon" &&
	test "$anon" -ge $((50 * MiB)) && test "$rss" -ge "$anon" &&
	test "$(sql m.db "SELECT COUNT(*) FROM checkpoints WHERE rss_bytes IS NOT NULL")" -ge 3
'

test_expect_success 'the tracked heap is the 1 MiB from malloc' '
	heap_lines m.db >lines && head -n 3 lines &&
	within "$(sed -n 1p lines | cut -d"|" -f4)" $MiB 10
'

test_expect_success 'report: tracked heap of the resident memory, in the header' '
	"$RSPROF" report m.db >rep && head -n 6 rep &&
	grep -q "^# memory: *tracked heap 1.00 MiB of [5-9][0-9].[0-9] MiB resident$" rep &&
	grep -q "^# *anonymous [5-9][0-9].[0-9] MiB, peak " rep &&
	"$RSPROF" report --json m.db | python3 -c "
import json, sys
s = json.load(sys.stdin)[\"summary\"]
assert s[\"rss_anon_bytes\"] >= 50 * 2**20 and s[\"rss_peak_bytes\"] >= s[\"rss_bytes\"], s
"
'

test_expect_success 'info: resident memory and the tracked share' '
	"$RSPROF" info m.db >info && grep -E "^(resident memory|tracked heap):" info &&
	grep -q "^tracked heap: *1.00 MiB of [5-9][0-9].[0-9] MiB resident ([0-9].[0-9]%)" info &&
	"$RSPROF" info --json m.db | python3 -c "
import json, sys
m = json.load(sys.stdin)[\"memory\"]
assert m[\"rss_anon_bytes\"] >= 50 * 2**20, m
"
'

test_expect_success 'timeline: a resident memory series' '
	"$RSPROF" timeline --csv m.db >tl.csv && head -n 3 tl.csv &&
	head -n 1 tl.csv | grep -q ",rss_bytes$" &&
	max=$(awk -F, "NR > 1 && \$6 > m { m = \$6 } END { print m }" tl.csv) &&
	test "$max" -ge $((50 * MiB)) &&
	"$RSPROF" timeline m.db >tl.txt &&
	grep -q "^resident memory " tl.txt &&
	grep -q "^tracked heap 1.00 MiB of [5-9][0-9].[0-9] MiB resident at the end" tl.txt
'

test_expect_success 'a version-2 file (no resident memory) reads as before' '
	cp m.db v2.db &&
	sqlite3 v2.db "ALTER TABLE checkpoints DROP COLUMN rss_bytes;
		ALTER TABLE checkpoints DROP COLUMN rss_anon_bytes;
		UPDATE meta SET value = 2 WHERE key = \"version\"" &&
	"$RSPROF" report v2.db >rep2 && ! grep -q "^# memory" rep2 &&
	grep -q "^# heap: *live 1.00 MiB" rep2 &&
	"$RSPROF" info v2.db >info2 && ! grep -q "^resident memory" info2 &&
	"$RSPROF" timeline --csv v2.db >tl2.csv &&
	test "$(sed -n 1p tl2.csv)" = "time_ms,live_bytes,alloc_bytes,freed_bytes,cpu_samples" &&
	"$RSPROF" timeline v2.db | grep -v -q "^resident memory"
'

test_done
