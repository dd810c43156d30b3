#!/bin/sh
# rsprof's own memory (SPEC §7: under 100 MB for typical targets) while it
# records rustc compiling a test target: rustc maps librustc_driver
# (150 MB) and libLLVM, whose symbol tables rsprof reads. The number is
# rsprof's VmHWM (its own peak RSS) read from /proc while it runs: GNU
# time's "Maximum resident set size" is the largest of rsprof *and its
# children*, i.e. rustc's own peak (125 MB here), not rsprof's.
#
#   bench/rss.sh [OUT]        OUT: the build directory (default ./out)
set -u

OUT=${1:-$(pwd)/out}
RSPROF=$OUT/rsprof
SRC=$(cd "$(dirname "$0")/.." && pwd)/tests/targets/heap_rust.rs
RUSTC=${RUSTC:-$(command -v rustc || echo "$HOME/.cargo/bin/rustc")}
W=$(mktemp -d "${TMPDIR:-/tmp}/rsprof-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT

[ -x "$RSPROF" ] || { echo "bench/rss.sh: $RSPROF missing: run make" >&2; exit 1; }
# rustup's proxy execs the real compiler: profile that one
real=$("$RUSTC" --print sysroot 2>/dev/null)/bin/rustc
[ -x "$real" ] || { echo "bench/rss.sh: no rustc: skipped" >&2; exit 0; }

hwm() {	# record options...: rsprof's VmHWM in KiB
	rm -f "$W/r.db"
	"$RSPROF" record -q "$@" -o "$W/r.db" -- "$real" -g -O --edition 2021 \
		-o "$W/prog" "$SRC" 2>/dev/null &
	p=$!
	kb=0
	while [ -d /proc/$p ]; do
		v=$(awk '/^VmHWM:/ { print $2 }' /proc/$p/status 2>/dev/null)
		[ -n "$v" ] && kb=$v
		sleep 0.05
	done
	wait $p
	echo "$kb"
}

echo "== rsprof's peak RSS recording rustc ($(uptime | sed 's/.*load/load/'))"
for opts in "" "-g" "--no-heap"; do
	kb=$(hwm $opts)
	printf '  record %-10s %6d MiB%s\n' "${opts:-(default)}" $((kb / 1024)) \
		"$([ "$kb" -ge 102400 ] && echo '  over 100 MB (SPEC §7)')"
done
