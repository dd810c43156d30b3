#!/bin/sh
# Rust (-g -O): a hot #[inline(always)] helper looping on inlined core
# arithmetic; the samples land on the helper's line, not the caller's and not
# in core/ (SPEC §4, issue 2 test 2).
. "$(dirname "$0")/lib.sh"

SRC=$TEST_SRC/targets/rust_inline.rs
hot=$(grep -n "// HOT LINE$" "$SRC" | cut -d: -f1)
caller=$(grep -n "// CALLER LINE$" "$SRC" | cut -d: -f1)

if ! have_perf; then
	test_skip 'record a Rust program' 'perf events not allowed here'
	test_done
fi
if ! test -x "$TARGETS/rust_inline"; then
	test_skip 'record a Rust program' 'rustc missing: no rust_inline target'
	test_done
fi

test_expect_success 'record -F 999 -- rust_inline' '
	"$RSPROF" record -q --no-heap -F 999 -o rust.db -- "$TARGETS/rust_inline" 2 >/dev/null
'

share() {	# SQL condition on symbols s -> percent of all samples
	sql rust.db "SELECT CAST(COALESCE(SUM(c.count), 0) * 100 / (SELECT SUM(count) FROM cpu_samples) AS INTEGER)
		FROM cpu_samples c JOIN symbols s ON c.addr = s.addr WHERE $1"
}

test_expect_success 'most samples on the helper line (HOT LINE)' '
	p=$(share "s.file LIKE '\''%rust_inline.rs'\'' AND s.line = '"$hot"'") &&
	say "line '"$hot"': $p %" &&
	test "$p" -ge 70
'

test_expect_success 'the top location is the helper line, in function mix' '
	sql rust.db "SELECT s.line, s.function FROM cpu_samples c JOIN symbols s ON c.addr = s.addr
		GROUP BY s.file, s.line ORDER BY SUM(c.count) DESC LIMIT 1" >top &&
	cat top &&
	grep -q "^'"$hot"'|.*mix" top
'

test_expect_success 'not the caller line, not core/' '
	p=$(share "s.line = '"$caller"' AND s.file LIKE '\''%rust_inline.rs'\''") &&
	q=$(share "s.file LIKE '\''%/core/%'\''") &&
	say "caller line: $p %, core/: $q %" &&
	test "$p" -le 5 && test "$q" -le 5
'

test_expect_success 'the inline chain is kept in the file (core/ frames in symbol_frames)' '
	n=$(sql rust.db "SELECT COUNT(*) FROM symbol_frames WHERE file LIKE '\''%/core/%'\''") &&
	say "$n core/ frames" && test "$n" -gt 0
'

test_done
