#!/bin/sh
# --heap-sample-bytes SIZE (the in-process tracker): one allocation tracked
# per SIZE bytes allocated on average (a Poisson process over the bytes, as
# tcmalloc, jemalloc and Go sample), each counted 1/(1 - exp(-size/SIZE))
# times: every site's live bytes estimated without bias whatever its block
# sizes. The program's output is unchanged; the summary, report and info
# say the figures are estimates and at what rate; --heap-sample N and
# uprobes do not mix with it.
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

SRC=$TEST_SRC/targets/heap_sizes.c
MiB=1048576

test_expect_success 'the same output as without rsprof' '
	"$TARGETS/heap_sizes" 100000 >plain.out &&
	"$RSPROF" record --no-cpu --heap-sample-bytes 64K -o s.db -- "$TARGETS/heap_sizes" 100000 \
		>prof.out 2>sum &&
	cat sum && cmp plain.out prof.out &&
	test "$(meta s.db heap_backend)" = preload &&
	test "$(meta s.db heap_sample_bytes)" = 65536 &&
	grep -q "heap figures are estimates: one allocation tracked per 64.0 KiB allocated on average" sum
'

test_expect_success 'each site near its 32 MiB whatever its block size; churn at 0' '
	source_lines s.db "$SRC" >lines && cat lines &&
	for m in SIZES_SMALL SIZES_MID SIZES_BIG; do
		l=$(line_of $m "$SRC") &&
		live=$(grep "^$l|" lines | cut -d"|" -f2) &&
		within "$live" $((32 * MiB)) 20 || return 1
	done &&
	grep -q "^$(line_of SIZES_CHURN "$SRC")|0|" lines &&
	no_negative_site s.db
'

test_expect_success 'the total near the 104 MiB kept' '
	live=$(sql s.db "SELECT SUM(alloc_bytes) - SUM(free_bytes) FROM heap_events") &&
	within "$live" $((104 * MiB)) 10
'

test_expect_success 'report and info say the figures are estimates, and the rate' '
	"$RSPROF" report --heap s.db >rep && grep -q "estimates: sampled every 64.0 KiB allocated" rep &&
	"$RSPROF" report --heap --json s.db | grep -q "\"heap_sample_bytes\": *65536" &&
	"$RSPROF" info s.db >inf && grep -q "one allocation per 64.0 KiB allocated on average" inf
'

test_expect_success 'sizes: K, M, KiB; nonsense refused (exit 2)' '
	"$RSPROF" record -q --no-cpu --heap-sample-bytes 1MiB -o m.db -- "$TARGETS/heap_sizes" 10 >/dev/null &&
	test "$(meta m.db heap_sample_bytes)" = $MiB &&
	expect_exit 2 "$RSPROF" record -q --no-cpu --heap-sample-bytes 0 -o x.db -- true &&
	expect_exit 2 "$RSPROF" record -q --no-cpu --heap-sample-bytes 12Q -o x.db -- true &&
	expect_exit 2 "$RSPROF" record -q --no-cpu --heap-sample-bytes 2G -o x.db -- true
'

test_expect_success '--heap-sample N with it: refused (exit 2)' '
	expect_exit 2 "$RSPROF" record -q --no-cpu --heap-sample 10 --heap-sample-bytes 512K \
		-o x.db -- "$TARGETS/heap_sizes" 10 2>err &&
	grep -q "choose one" err
'

test_expect_success 'with --heap-backend uprobe: refused, it cannot sample by bytes (exit 2)' '
	expect_exit 2 "$RSPROF" record -q --no-cpu --heap-backend uprobe --heap-sample-bytes 512K \
		-o x.db -- "$TARGETS/heap_sizes" 10 2>err &&
	cat err && grep -q "cannot sample by bytes" err
'

test_expect_success 'a fork tree and threads under byte sampling: the same output' '
	"$TARGETS/heap_stress" plain2.txt 4 20000 2 >plain2.out &&
	"$RSPROF" record -q --no-cpu --heap-sample-bytes 4K -o st.db -- \
		"$TARGETS/heap_stress" prof2.txt 4 20000 2 >prof2.out &&
	cmp plain2.out prof2.out &&
	grep -v "^ticks" plain2.txt >a && grep -v "^ticks" prof2.txt >b && cmp a b && no_negative_site st.db
'

# another allocator: forwarded to (jemalloc), or with its malloc an alias
# of its own entry points, hooked (mimalloc, tcmalloc): counted down once
for a in jemalloc mimalloc tcmalloc; do
	gcc -g -O1 -fno-omit-frame-pointer -o sizes_$a "$SRC" -l$a 2>/dev/null || continue
	test_expect_success "$a under byte sampling: the same output, the same estimates" "
		./sizes_$a 1000 >plain3.out &&
		\"\$RSPROF\" record -q --no-cpu --heap-sample-bytes 64K -o $a.db -- ./sizes_$a 1000 >prof3.out &&
		cmp plain3.out prof3.out &&
		live=\$(sql $a.db 'SELECT SUM(alloc_bytes) - SUM(free_bytes) FROM heap_events') &&
		within \"\$live\" \$((104 * MiB)) 10
	"
done

test_done
