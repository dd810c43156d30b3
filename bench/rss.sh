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

hwm() {	# record options...: rsprof's VmHWM in KiB, recording rustc
	hwm_of "$@" -- "$real" -g -O --edition 2021 -o "$W/prog" "$SRC"
}

hwm_of() {	# record options... -- command...: rsprof's VmHWM in KiB
	rm -f "$W/r.db"
	"$RSPROF" record -q -o "$W/r.db" "$@" >/dev/null 2>&1 &
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

# A tree of many processes of a few programs: each process is named by a
# resolver of its own, sharing what they name of one file
# (util/symbols/symcache.h). A build of 40 one-line C files, two at a time
# (121 processes: make, gcc, cc1, as, collect2, ld), and 40 runs of ls.
mkdir -p "$W/mk"
for i in $(seq 40); do echo "int f$i(void) { return $i; }" >"$W/mk/f$i.c"; done
printf 'all: %s\n%%.o: %%.c\n\tgcc -O2 -c -o $@ $<\n' "$(seq -f 'f%g.o' 40 | tr '\n' ' ')" \
	>"$W/mk/Makefile"
echo "== rsprof's peak RSS recording a tree of processes"
for opts in "" "--no-heap"; do
	rm -f "$W"/mk/*.o
	kb=$(hwm_of $opts -- make -s -j2 -C "$W/mk")
	printf '  make -j2, 40 files     record %-10s %6d MiB\n' "${opts:-(default)}" $((kb / 1024))
	kb=$(hwm_of $opts -- sh -c 'for i in $(seq 40); do ls -R /usr/include/linux; done >/dev/null')
	printf '  40 x ls -R             record %-10s %6d MiB\n' "${opts:-(default)}" $((kb / 1024))
done
