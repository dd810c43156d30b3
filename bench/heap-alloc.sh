#!/bin/sh
# Heap tracking with other allocators, byte sampling and deep stacks
# (`make bench`): the cost per allocation with its free of
#   - a C program linked with jemalloc, mimalloc, tcmalloc (heap_bench.c
#     built here with -l...: the tracker forwards to that allocator),
#   - a Rust program whose #[global_allocator] calls Debian's libmimalloc
#     through FFI (heap_bench_rs.rs with the allocator added here: the
#     tracker hooks mimalloc's entry points),
#   - the glibc C and Rust targets and heap_deep.c (recursive stacks 40-120
#     frames deep, ~50 MB live),
# each unprofiled, tracked in full (launched), attached (`record -p`: the
# tracker injected; not heap_deep, which starts at once) and with
# --heap-sample-bytes 512K (launched); the targets time their own loop (CPU time of the thread: a loaded machine
# inflates it less than wall-clock time). One run: the configurations
# alternate round after round, medians of REPS rounds. Then rustc
# compiling a small file with the heap tracked (its executable defines
# malloc: jemalloc, hooked), against without; and how close the sampled
# estimates of the sites holding 1 MiB or more come to full tracking.
#
#   bench/heap-alloc.sh [OUT]        OUT: the build directory (default ./out)
#   REPS=5 N=1000000 bench/heap-alloc.sh
set -u

OUT=${1:-$(pwd)/out}
RSPROF=$OUT/rsprof
T=$OUT/targets
SRC=$(cd "$(dirname "$0")/.." && pwd)/tests/targets
REPS=${REPS:-5}
N=${N:-1000000}
W=$(mktemp -d "${TMPDIR:-/tmp}/rsprof-bench-alloc.XXXXXX")
trap 'rm -rf "$W"' EXIT

for f in "$RSPROF" "$T/heap_bench" "$T/heap_bench_rs" "$T/heap_deep" "$T/heap_sizes"; do
	[ -x "$f" ] || { echo "bench/heap-alloc.sh: $f missing: run make all targets" >&2; exit 1; }
done

# the targets: path by name, those built here when their library is there
path_of() {
	case $1 in
	heap_bench_je|heap_bench_mi|heap_bench_tc|heap_bench_rs_mi) echo "$W/$1" ;;
	*) echo "$T/$1" ;;
	esac
}
TGTS="heap_bench"
notes=
for a in je:jemalloc mi:mimalloc tc:tcmalloc; do
	if gcc -g -O2 -fno-omit-frame-pointer -o "$W/heap_bench_${a%%:*}" "$SRC/heap_bench.c" \
	       -l"${a#*:}" 2>/dev/null; then
		TGTS="$TGTS heap_bench_${a%%:*}"
	else
		notes="$notes lib${a#*:}-dev missing;"
	fi
done
RUSTC=${RUSTC:-$(command -v rustc || echo "$HOME/.cargo/bin/rustc")}
{
	sed "s|^mod hint;|#[path = \"$SRC/hint.rs\"] mod hint;|" "$SRC/heap_bench_rs.rs"
	cat <<'RS'
#[link(name = "mimalloc")]
extern "C" {
    fn mi_malloc_aligned(size: usize, align: usize) -> *mut u8;
    fn mi_free(p: *mut u8);
}
struct Mi;
unsafe impl std::alloc::GlobalAlloc for Mi {
    unsafe fn alloc(&self, l: std::alloc::Layout) -> *mut u8 { mi_malloc_aligned(l.size(), l.align()) }
    unsafe fn dealloc(&self, p: *mut u8, _l: std::alloc::Layout) { mi_free(p) }
}
#[global_allocator]
static GLOBAL: Mi = Mi;
RS
} >"$W/heap_bench_rs_mi.rs"
if "$RUSTC" -g -O -C force-frame-pointers=yes --edition 2021 -o "$W/heap_bench_rs_mi" \
	"$W/heap_bench_rs_mi.rs" 2>/dev/null; then
	TGTS="$TGTS heap_bench_rs"
	TGTS="$TGTS heap_bench_rs_mi"
else
	notes="$notes the Rust mimalloc target does not build;"
fi
TGTS="$TGTS heap_deep"

# one TARGET CFG: "target cfg cpu_ns wall_ns" into $W/runs
one() {
	o_p=$(path_of "$1")
	rm -f "$W/r.db" "$W/out"
	case $2 in
	base)	"$o_p" "$N" >"$W/out" ;;
	full)	"$RSPROF" record -q --no-cpu -o "$W/r.db" -- "$o_p" "$N" >"$W/out" ;;
	s512k)	"$RSPROF" record -q --no-cpu --heap-sample-bytes 512K -o "$W/r.db" -- \
			"$o_p" "$N" >"$W/out" ;;
	inject)	[ "$1" = heap_deep ] && return 0
		# the target waits 500 ms before its loop: rsprof attaches meanwhile
		"$o_p" "$N" 500 >"$W/out" &
		o_t=$!
		sleep 0.1
		"$RSPROF" record -q --no-cpu -o "$W/r.db" -p $o_t 2>"$W/err"
		wait $o_t
		[ "$(sqlite3 "$W/r.db" "SELECT value FROM meta WHERE key = 'heap_backend'")" = inject ] ||
			{ echo "bench/heap-alloc.sh: $1 attached: not injected" >&2; cat "$W/err" >&2
			  return 1; } ;;
	esac
	[ -s "$W/out" ] || { echo "bench/heap-alloc.sh: $1/$2 failed" >&2; return 1; }
	echo "$1 $2 $(cut -d' ' -f3 "$W/out") $(cut -d' ' -f1 "$W/out")" >>"$W/runs"
}

median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'
}

echo "heap tracking, other allocators, byte sampling, deep stacks: cost per allocation+free"
echo "($N pairs a run, $REPS rounds alternated, medians)${notes:+ skipped:$notes}"
echo "load before: $(uptime)"
for rep in $(seq "$REPS"); do
	for tgt in $TGTS; do
		for cfg in base full inject s512k; do
			one $tgt $cfg || exit 1
		done
	done
done

name_of() {
	case $1 in
	heap_bench) echo "C (glibc)" ;;
	heap_bench_je) echo "C jemalloc" ;;
	heap_bench_mi) echo "C mimalloc" ;;
	heap_bench_tc) echo "C tcmalloc" ;;
	heap_bench_rs) echo "Rust (glibc)" ;;
	heap_bench_rs_mi) echo "Rust mimalloc" ;;
	heap_deep) echo "C deep" ;;
	esac
}
added() {
	awk -v v="$1" -v b="$2" 'BEGIN { if (v == "-") print "-"; else printf "%.1f", v - b }'
}
printf '\n%-14s %9s %9s %9s %9s %9s %9s %9s\n' "" "alone" "tracked" "added" "attached" "added" \
	"512K" "added"
for tgt in $TGTS; do
	b=$(awk -v t=$tgt '$1 == t && $2 == "base" { print $3 }' "$W/runs" | median)
	f=$(awk -v t=$tgt '$1 == t && $2 == "full" { print $3 }' "$W/runs" | median)
	i=$(awk -v t=$tgt '$1 == t && $2 == "inject" { print $3 }' "$W/runs" | median)
	s=$(awk -v t=$tgt '$1 == t && $2 == "s512k" { print $3 }' "$W/runs" | median)
	printf '%-14s %9s %9s %9s %9s %9s %9s %9s\n' "$(name_of $tgt)" "$b" "$f" "$(added $f $b)" \
		"$i" "$(added $i $b)" "$s" "$(added $s $b)"
done
echo "CPU ns of the allocating thread per pair; added: over the unprofiled runs"

# rustc compiling a small file: its executable defines malloc (jemalloc)
SYSROOT=$("$RUSTC" --print sysroot 2>/dev/null)
if [ -x "$SYSROOT/bin/rustc" ] && command -v /usr/bin/time >/dev/null 2>&1; then
	cat >"$W/small.rs" <<'RS'
use std::collections::HashMap;
fn main() {
    let mut m = HashMap::new();
    for i in 0..1000u32 {
        m.insert(i, vec![i; 10]);
    }
    println!("{}", m.len());
}
RS
	for rep in $(seq "$REPS"); do
		/usr/bin/time -f '%e' -o "$W/t" "$SYSROOT/bin/rustc" -O -o "$W/s0" "$W/small.rs" &&
			echo "base $(cat "$W/t")" >>"$W/rustc"
		rm -f "$W/rc.db"
		/usr/bin/time -f '%e' -o "$W/tw" "$RSPROF" record -q --no-cpu -o "$W/rc.db" -- \
			/usr/bin/time -f '%e' -o "$W/t" "$SYSROOT/bin/rustc" -O -o "$W/s1" "$W/small.rs" &&
			echo "tracked $(cat "$W/t") $(cat "$W/tw")" >>"$W/rustc"
	done
	rb=$(awk '$1 == "base" { print $2 }' "$W/rustc" | median)
	rt=$(awk '$1 == "tracked" { print $2 }' "$W/rustc" | median)
	rw=$(awk '$1 == "tracked" { print $3 }' "$W/rustc" | median)
	printf '\nrustc -O of a 7-line file: %s s alone, %s s tracked (%sx; the whole rsprof command %s s)\n' \
		"$rb" "$rt" "$(awk -v a=$rt -v b=$rb 'BEGIN { printf "%.2f", a / b }')" "$rw"
fi

# the sampled estimates against full tracking, sites of 1 MiB or more
"$RSPROF" record -q --no-cpu -o "$W/full.db" -- "$T/heap_sizes" 100000 >/dev/null &&
"$RSPROF" record -q --no-cpu --heap-sample-bytes 512K -o "$W/samp.db" -- "$T/heap_sizes" 100000 \
	>/dev/null &&
{
	printf '\n--heap-sample-bytes 512K against full tracking, heap_sizes.c sites of 1 MiB or more:\n'
	for db in full samp; do
		sqlite3 "$W/$db.db" "SELECT s.line, SUM(h.alloc_bytes) - SUM(h.free_bytes) FROM heap_events h
			JOIN symbols s ON h.addr = s.addr WHERE s.file LIKE '%heap_sizes.c'
			GROUP BY s.line" | sed "s/^/$db|/"
	done | awk -F'|' '$1 == "full" { f[$2] = $3 } $1 == "samp" { s[$2] = $3 }
		END { for (l in f) if (f[l] >= 1048576)
			printf "  line %s: %.1f MiB full, %.1f MiB sampled (%+.1f%%)\n", l,
				f[l] / 1048576, s[l] / 1048576, 100 * (s[l] - f[l]) / f[l] }'
}
echo "load after:  $(uptime)"
