#!/bin/sh
# rsprof annotate --since/--until/--window/--at (issue 14): the same window
# options as report, with the same meaning. The fixture's hot.c:20 holds
# 15 % of the first half's samples and 35 % of the second's; parse.rs:77
# holds 10 MiB live at 5 s (the peak) and nothing at the end.
. "$(dirname "$0")/lib.sh"

FIXTURE=$(dirname "$RSPROF")/tests/helper/fixture

# The CPU% annotate prints on source line L (first column).
line_pct() {	# LINE < annotate output
	awk -v l="$1" '!/^#/ && $0 ~ /%/ { for (i = 1; i <= NF; i++) if ($i == l) { print $1; exit } }'
}

test_expect_success 'the halves of a recording: the shares report gives for each window' '
	"$FIXTURE" p.db &&
	"$RSPROF" annotate --stdio --window ..5s p.db src/hot.c >a &&
	cat a &&
	grep -q "^# window:   0ms..5.0s$" a &&
	test "$(line_pct 20 <a)" = 15.0% &&
	"$RSPROF" report --cpu --window ..5s p.db | grep -q "^ *15.0%  proj/src/hot.c:20" &&
	"$RSPROF" annotate --stdio --since 5s p.db src/hot.c >b &&
	grep -q "^# window:   5.0s..10.0s$" b &&
	test "$(line_pct 20 <b)" = 35.0% &&
	"$RSPROF" annotate --stdio --window 5s.. p.db src/hot.c | line_pct 20 | grep -qx 35.0% &&
	"$RSPROF" annotate --stdio --until 5s p.db src/hot.c | line_pct 20 | grep -qx 15.0% &&
	"$RSPROF" annotate --stdio p.db src/hot.c | line_pct 20 | grep -qx 25.0% &&
	! "$RSPROF" annotate --stdio p.db src/hot.c | grep -q "^# window:"
'

test_expect_success '--at: live heap as of a moment, or at the peak' '
	"$RSPROF" annotate --stdio --heap --at 5s p.db parse.rs:77 >h &&
	cat h &&
	grep -q "heap at 5.0s$" h &&
	grep -q "^ *10.0 MiB *15.0 MiB > *77" h &&
	"$RSPROF" annotate --stdio --heap --at peak p.db parse.rs:77 | grep -q "heap at 5.0s (the peak)" &&
	"$RSPROF" annotate --stdio --heap p.db parse.rs:77 >e &&
	grep -q "^ *15.0 MiB > *77" e && ! grep -q "10.0 MiB *15.0 MiB" e
'

test_expect_success 'bad windows: exit 2, as report' '
	expect_exit 2 "$RSPROF" annotate --stdio --window 5s p.db hot_loop 2>err &&
	grep -q "^rsprof annotate: --window: .5s. is not a range" err &&
	expect_exit 2 "$RSPROF" annotate --stdio --since soon p.db hot_loop 2>err &&
	grep -q "is not a duration" err &&
	expect_exit 2 "$RSPROF" annotate --stdio --window 1s..2s --since 1s p.db hot_loop 2>err &&
	grep -q "cannot be combined" err &&
	expect_exit 2 "$RSPROF" report --window 5s p.db 2>/dev/null
'

test_done
