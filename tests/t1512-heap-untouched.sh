#!/bin/sh
# A heap larger than the resident memory: heap_untouched mallocs 64 MiB and
# writes only the first 8 MiB. The tracker counts the 64 MiB when they are
# allocated, the kernel counts a page as resident once it is written: the
# report's header, info and timeline say the heap is the larger and why,
# never "64.0 MiB of 10 MiB resident".
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

MiB=1048576

test_expect_success 'record heap_untouched: 64 MiB live, far less resident' '
	"$RSPROF" record -q -i 200ms -o u.db -- "$TARGETS/heap_untouched" 1000 >/dev/null &&
	rss=$(sql u.db "SELECT rss_bytes FROM checkpoints WHERE rss_bytes IS NOT NULL
		ORDER BY id DESC LIMIT 1") && echo "rss $rss" &&
	test "$rss" -lt $((40 * MiB)) &&
	heap_lines u.db | head -n 2 &&
	within "$(heap_lines u.db | sed -n 1p | cut -d"|" -f4)" $((64 * MiB)) 1
'

test_expect_success 'report: the heap is more than the resident memory, and why' '
	"$RSPROF" report u.db >rep && head -n 8 rep &&
	grep -q "^# memory: *tracked heap 64.0 MiB, more than the [0-9.]* MiB resident:$" rep &&
	grep -q "^# *allocated bytes count at once, a page is resident once written$" rep &&
	! grep -q "64.0 MiB of" rep &&
	test "$(grep -A2 "^# memory:" rep | awk "length > 80" | wc -l)" = 0
'

test_expect_success 'info: no share above 100 %, the same reason' '
	"$RSPROF" info u.db >info && grep "^tracked heap:" info &&
	grep -q "^tracked heap: *64.0 MiB, more than the [0-9.]* MiB resident (allocated bytes count at once, a page is resident once written)$" info &&
	! grep "^tracked heap:" info | grep -q "%"
'

test_expect_success 'timeline: the same words under the resident chart' '
	"$RSPROF" timeline u.db >tl && grep -A1 "^tracked heap" tl &&
	grep -q "^tracked heap 64.0 MiB, more than the [0-9.]* MiB resident at the end:$" tl &&
	grep -q "^  allocated bytes count at once, a page is resident once written$" tl
'

test_done
