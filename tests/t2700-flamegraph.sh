#!/bin/sh
# rsprof flamegraph: a profile's stacks as one self-contained SVG. The
# callers target calls leaf() 3:1 through a() and b() and keeps 3 MiB
# through a and 1 MiB through b: the frames' widths say so, for the CPU
# and for the heap; two profiles make a differential graph. Each picture is
# loaded in Debian's headless Chromium: its own script lays the frames out,
# a click zooms, the search matches, a screenshot shows it.
. "$(dirname "$0")/lib.sh"

if ! have_perf; then
	test_skip 'flame graphs' 'perf events not allowed here'
	test_done
fi

# widths FILE.svg: "name value" of every frame, from the frames' data
widths() {
	python3 - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
for g in ET.parse(sys.argv[1]).iter(ns + "g"):
    if g.get("class") == "f":
        print(g.get("data-name"), g.get("data-v"), g.get("data-d"))
PY
}

# share FILE.svg NAME: NAME's share (%) of the frames named a or b
share() {
	widths "$1" | awk -v n="$2" '$1 == "a" || $1 == "b" { s[$1] += $2; t += $2 }
		END { if (t) printf "%d\n", 100 * s[n] / t + 0.5; else print -1 }'
}

test_expect_success 'record -g the callers target' '
	"$RSPROF" record -q -g -F 499 --user-only -o calls.db -- "$TARGETS/callers" 2 >/dev/null &&
	"$RSPROF" record -q -g -F 499 --user-only -o calls2.db -- "$TARGETS/callers" 1 >/dev/null
'

test_expect_success 'CPU: a valid SVG, a 75 %, b 25 % (+- 10)' '
	"$RSPROF" flamegraph -o cpu.svg calls.db 2>err && cat err &&
	grep -q "^rsprof flamegraph: wrote cpu.svg ([0-9]* frames" err &&
	a=$(share cpu.svg a) && b=$(share cpu.svg b) && echo "a $a %, b $b %" &&
	test "$a" -ge 65 && test "$a" -le 85 && test "$b" -ge 15 && test "$b" -le 35 &&
	test "$(grep -o "https*://[^\"]*" cpu.svg | sort -u)" = "http://www.w3.org/2000/svg" &&
	test "$(grep -c "xlink:href\|<image\|src=" cpu.svg)" = 0
'

test_expect_success 'heap: --heap, in use: a 3 MiB, b 1 MiB' '
	"$RSPROF" flamegraph --heap -o heap.svg calls.db 2>/dev/null &&
	a=$(share heap.svg a) && b=$(share heap.svg b) && echo "a $a %, b $b %" &&
	test "$a" = 75 && test "$b" = 25 &&
	"$RSPROF" flamegraph --heap --heap-value allocs -o allocs.svg calls.db 2>/dev/null &&
	test "$(share allocs.svg a)" = 75
'

test_expect_success 'differential: the base'"'"'s share in each frame' '
	"$RSPROF" flamegraph -o diff.svg calls2.db calls.db 2>/dev/null &&
	grep -q "data-a=" diff.svg && grep -q ": differential" diff.svg
'

if [ -x /usr/bin/chromium ]; then
	for svg in cpu heap diff; do
		test_expect_success "Chromium: $svg.svg renders, a click zooms, the search matches" "
			python3 \"\$TEST_SRC/flamegraph-check.py\" /usr/bin/chromium $svg.svg chk-$svg
		"
	done
else
	test_skip 'Chromium' 'chromium missing (scripts/packages.txt, test group)'
fi

test_expect_success 'no stacks, bad options: exit 1 and 2 with the reason' '
	"$RSPROF" record -q -F 99 --no-heap -o nog.db -- "$TARGETS/callers" 0.2 >/dev/null &&
	expect_exit 1 "$RSPROF" flamegraph -o x.svg nog.db 2>e1 && grep -q "no CPU call stacks" e1 &&
	grep -q "^hint: record with -g" e1 && ! test -e x.svg &&
	expect_exit 2 "$RSPROF" flamegraph --heap-value peak calls.db 2>e2 &&
	expect_exit 2 "$RSPROF" flamegraph --cpu --heap calls.db 2>e3 &&
	expect_exit 2 "$RSPROF" flamegraph a.db b.db c.db 2>e4 && grep -q "at most two" e4
'

test_expect_success 'the output: replaced whole, never through a link' '
	"$RSPROF" flamegraph -o cpu.svg calls.db 2>/dev/null && test -s cpu.svg &&
	ln -s /etc/passwd-not-here link.svg &&
	expect_exit 1 "$RSPROF" flamegraph -o link.svg calls.db 2>e5 && cat e5 &&
	test -L link.svg && ! test -e /etc/passwd-not-here &&
	"$RSPROF" flamegraph -o - calls.db >stdout.svg 2>/dev/null && head -1 stdout.svg | grep -q "<?xml"
'

test_done
