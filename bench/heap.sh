#!/bin/sh
# Heap half of `make bench` (issues 3 and 8): the cost per allocation (each
# with its free) of heap tracking, on an allocation-heavy C target
# (malloc/free) and a Rust one (Vec through __rust_alloc/__rust_dealloc),
# each built with frame pointers and without (issue 9: C -O2
# -fomit-frame-pointer, Rust as cargo's release; the in-process tracker
# unwinds those through the DWARF CFI, its rules cached per return
# address; rows "C nofp", "Rust nofp", measured against heaptrack only),
# and on a large heap (row "C live", heap_bench_live.c: 500,000 blocks
# kept, each pair frees a random one, as a server's heap behaves: every
# free is of an old block, a cache miss for glibc and for the tracker's
# header beside its chunk header, where heap_bench's 16 blocks stay in
# the cache).
# The targets time their own allocation loop, so start-up, attach and the
# writing of the file are not in the figures, both in wall-clock time and
# in the CPU time of the allocating thread (user and kernel: traps
# included), which a loaded machine inflates far less; the tables rank by
# CPU time. One run: the tools alternate round after round, each round
# with an unprofiled baseline; medians of REPS rounds.
#
# The CPU time is what rsprof costs the program (the tracker runs in its
# thread; a uprobe's trap is the thread's kernel time). heaptrack's thread
# mostly waits on the pipe to its interpreter, a process of its own, so its
# thread's CPU time is not its cost: it is compared by wall-clock time, and
# by the CPU time of all its processes (and of all rsprof's), from runs of
# N and 4N pairs (the difference leaves start-up and the file out).
#
#   rsprof (preload)        record --no-cpu -- TARGET: the in-process tracker
#   rsprof (preload) /10    ... --heap-sample 10
#   rsprof (preload) hist   ... --alloc-history: each event also into the
#                           thread's ring (a clock read and 32 bytes)
#   rsprof (inject)         record --no-cpu -p PID: the same tracker put
#                           into the running process, attached while the
#                           target waits before its loop
#   rsprof (uprobe, attach) record --no-cpu --heap-backend uprobe -p PID:
#                           eBPF uprobes, attached the same way
#   rsprof (uprobe) /10     ... --heap-sample 10
#   heaptrack               LD_PRELOAD, a record per call written out
#   heaptrack -p            heaptrack attached with gdb (its inject library:
#                           GOT slots redirected), while the target waits
#                           HT_WAIT_MS before its loop
#   memleak-bpfcc -p PID    bcc: needs kernel headers; skipped with a note
#                           when it cannot run
# The attached rows are compared with heaptrack -p, the others with heaptrack.
#
#   bench/heap.sh [OUT]        OUT: the build directory (default ./out)
#   REPS=5 N=300000 MEMLEAK_N=100000 bench/heap.sh
#   TGTS="heap_bench heap_bench_rs" CONFIGS="preload inject htattach" TREE=0 bench/heap.sh
#   (TREE=0: without the whole tools' CPU time; TREE_CFGS="base inject htattach" chooses)
set -u

OUT=${1:-$(pwd)/out}
RSPROF=$OUT/rsprof
T=$OUT/targets
REPS=${REPS:-5}
N=${N:-300000}
MEMLEAK_N=${MEMLEAK_N:-100000}
ATTACH_WAIT_MS=${ATTACH_WAIT_MS:-3000}
HT_WAIT_MS=${HT_WAIT_MS:-15000}
W=$(mktemp -d "${TMPDIR:-/tmp}/rsprof-bench-heap.XXXXXX")
trap 'rm -rf "$W"' EXIT

TGTS=${TGTS:-heap_bench heap_bench_rs heap_bench_nofp heap_bench_rs_nofp heap_bench_live}
for f in "$RSPROF" "$T/heap_bench" "$T/heap_bench_rs" "$T/heap_bench_nofp" "$T/heap_bench_rs_nofp" \
	 "$T/heap_bench_live"; do
	[ -x "$f" ] || { echo "bench/heap.sh: $f missing: run make all targets" >&2; exit 1; }
done
root=0
[ "$(id -u)" = 0 ] && [ -r /sys/kernel/btf/vmlinux ] && root=1

have_heaptrack=0
command -v heaptrack >/dev/null 2>&1 && have_heaptrack=1

# bcc's memleak compiles its program against kernel headers: the running
# kernel's, or Debian's 6.1 headers through BCC_KERNEL_SOURCE (issue 3).
MEMLEAK=$(command -v memleak-bpfcc 2>/dev/null || true)
memleak_note=
if [ $root = 0 ]; then
	memleak_note="needs root"
elif [ -z "$MEMLEAK" ]; then
	memleak_note="memleak-bpfcc not installed (Debian bpfcc-tools)"
elif [ ! -d "/lib/modules/$(uname -r)/build" ] && [ -z "${BCC_KERNEL_SOURCE:-}" ]; then
	# Debian splits the headers in -common and -amd64; bcc wants one tree
	for d in /usr/src/linux-headers-*-amd64; do
		c=${d%-amd64}-common
		[ -d "$d" ] && [ -d "$c" ] || continue
		mkdir -p "$W/kheaders" && cp -rs "$c/." "$W/kheaders/" &&
			cp -rsf "$d/." "$W/kheaders/" && export BCC_KERNEL_SOURCE=$W/kheaders
	done
	[ -z "${BCC_KERNEL_SOURCE:-}" ] &&
		memleak_note="no kernel headers (apt-get install linux-headers-amd64)"
fi

# attach TARGET N [RSPROF OPTIONS...]: the target waits ATTACH_WAIT_MS
# before its loop; rsprof attaches meanwhile (its first checkpoint, written
# 100 ms in, says the probes are on).
attach() {
	a_tgt=$1 a_n=$2
	shift 2
	"$T/$a_tgt" "$a_n" "$ATTACH_WAIT_MS" >"$W/out" &
	tp=$!
	"$RSPROF" record -q --no-cpu -i 100ms "$@" -p $tp -o "$W/r.db" 2>"$W/err" &
	rp=$!
	wait $tp
	wait $rp
	if [ "$(sqlite3 "$W/r.db" "SELECT MIN(timestamp_ms) FROM checkpoints" 2>/dev/null || echo x)" \
	     -gt "$ATTACH_WAIT_MS" ] 2>/dev/null; then
		echo "bench/heap.sh: rsprof attached after the loop began; raise ATTACH_WAIT_MS" >&2
		return 1
	fi
}

# htattach TARGET N: heaptrack -p while the target waits HT_WAIT_MS (gdb
# takes seconds); it must have seen the whole loop
htattach() {
	"$T/$1" "$2" "$HT_WAIT_MS" >"$W/out" &
	tp=$!
	heaptrack -o "$W/ht" -p $tp >"$W/ht.log" 2>&1
	wait $tp
	seen=$(sed -n 's/^[[:space:]]*allocations:[[:space:]]*//p' "$W/ht.log")
	if [ -z "$seen" ] || [ "$seen" -lt "$2" ]; then
		echo "bench/heap.sh: heaptrack -p saw ${seen:-no} allocations of $2; raise HT_WAIT_MS" >&2
		return 1
	fi
}

# one TARGET CFG: one run; appends "target cfg ns_per_pair" to $W/runs
one() {
	o_tgt=$1 o_cfg=$2 o_n=$N
	rm -f "$W/r.db" "$W"/ht.* "$W/out"
	case $o_cfg in
	base)	"$T/$o_tgt" "$o_n" >"$W/out" ;;
	preload) "$RSPROF" record -q --no-cpu --heap-backend preload -o "$W/r.db" -- \
			"$T/$o_tgt" "$o_n" >"$W/out" ;;
	preload10) "$RSPROF" record -q --no-cpu --heap-backend preload --heap-sample 10 \
			-o "$W/r.db" -- "$T/$o_tgt" "$o_n" >"$W/out" ;;
	preloadhist) "$RSPROF" record -q --no-cpu --heap-backend preload --alloc-history \
			-o "$W/r.db" -- "$T/$o_tgt" "$o_n" >"$W/out" 2>"$W/err" ;;
	inject)	attach "$o_tgt" "$o_n" --heap-backend inject || return 1 ;;
	uprobe)	attach "$o_tgt" "$o_n" --heap-backend uprobe || return 1 ;;
	uprobe10) attach "$o_tgt" "$o_n" --heap-backend uprobe --heap-sample 10 || return 1 ;;
	htattach) htattach "$o_tgt" "$o_n" || return 1 ;;
	heaptrack) heaptrack -o "$W/ht" "$T/$o_tgt" "$o_n" >"$W/ht.log" 2>&1 &&
		grep -E '^[0-9.]+ [0-9]+ [0-9.]+$' "$W/ht.log" >"$W/out" ;;
	memleak) o_n=$MEMLEAK_N
		# the target waits 25 s before its loop: time for bcc to compile and attach
		"$T/$o_tgt" "$o_n" 25000 >"$W/out" &
		tp=$!
		# a background job ignores SIGINT: stop it with TERM, and bound it
		timeout 120 "$MEMLEAK" -p $tp 30 >"$W/ml.log" 2>&1 &
		mp=$!
		wait $tp
		kill -TERM $mp 2>/dev/null
		wait $mp 2>/dev/null
		if ! grep -q "Attaching to pid" "$W/ml.log" || grep -q "^Exception" "$W/ml.log"; then
			memleak_note="memleak-bpfcc failed: $(grep -m1 -i -E "cannot|error|exception" "$W/ml.log")"
			return 1
		fi ;;
	esac
	[ -s "$W/out" ] || { echo "bench/heap.sh: $o_tgt/$o_cfg run failed" >&2; cat "$W/err" >&2; return 1; }
	echo "$o_tgt $o_cfg $(cut -d' ' -f3 "$W/out") $(cut -d' ' -f1 "$W/out")" >>"$W/runs"
}

# tree TARGET CFG PAIRS: the CPU time (user + system, s) of the whole command
tree() {
	case $2 in
	base)	 /usr/bin/time -f '%U %S' -o "$W/time" "$T/$1" "$3" >/dev/null ;;
	preload) /usr/bin/time -f '%U %S' -o "$W/time" "$RSPROF" record -q --no-cpu \
			--heap-backend preload -o "$W/t.db" -- "$T/$1" "$3" >/dev/null ;;
	heaptrack) /usr/bin/time -f '%U %S' -o "$W/time" heaptrack -o "$W/th" \
			"$T/$1" "$3" >/dev/null 2>&1 ;;
	inject|htattach)
		# attached: the target's CPU time and the tool's (gdb, heaptrack's
		# interpreter; rsprof), the target waiting before its loop
		wait_ms=$ATTACH_WAIT_MS
		[ $2 = htattach ] && wait_ms=$HT_WAIT_MS
		/usr/bin/time -f '%U %S' -o "$W/time.t" "$T/$1" "$3" "$wait_ms" >/dev/null &
		tt=$!
		for i in $(seq 100); do
			tp=$(pgrep -P $tt) && break
			sleep 0.05
		done
		if [ $2 = inject ]; then
			/usr/bin/time -f '%U %S' -o "$W/time" "$RSPROF" record -q --no-cpu \
				--heap-backend inject -i 100ms -p $tp -o "$W/t.db" >/dev/null 2>&1
		else
			/usr/bin/time -f '%U %S' -o "$W/time" heaptrack -o "$W/th" -p $tp \
				>/dev/null 2>&1
		fi
		wait $tt
		cat "$W/time.t" >>"$W/time" ;;
	esac
	rm -f "$W/t.db" "$W"/th.*
	awk '{ s += $1 + $2 } END { print s }' "$W/time"
}

median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'
}

configs="preload preload10 preloadhist inject"
[ $root = 1 ] && configs="$configs uprobe uprobe10"
[ $have_heaptrack = 1 ] && configs="$configs heaptrack"
[ $have_heaptrack = 1 ] && command -v gdb >/dev/null 2>&1 && configs="$configs htattach"
configs=${CONFIGS:-$configs}

echo "heap tracking: cost per allocation+free ($N pairs a run, $REPS rounds, medians)"
echo "load before: $(uptime)"
# configs_of TARGET: the no-frame-pointer builds and the large heap
# against heaptrack only
configs_of() {
	case $1 in
	*_nofp|*_live) echo "$configs" | tr ' ' '\n' | grep -x -E "preload|inject|heaptrack" ;;
	*) echo "$configs" ;;
	esac
}

for rep in $(seq "$REPS"); do
	for tgt in $TGTS; do
		for cfg in $(configs_of $tgt); do
			one $tgt base && one $tgt $cfg || exit 1
		done
	done
done
# the whole tools' CPU: runs of N and 4N pairs, the difference per pair
tree_cfgs="base preload inject"
[ $have_heaptrack = 1 ] && tree_cfgs="$tree_cfgs heaptrack"
[ $have_heaptrack = 1 ] && command -v gdb >/dev/null 2>&1 && tree_cfgs="$tree_cfgs htattach"
tree_cfgs=${TREE_CFGS:-$tree_cfgs}
if [ "${TREE:-1}" = 1 ] && command -v /usr/bin/time >/dev/null 2>&1; then
	for rep in $(seq "$REPS"); do
		for tgt in $TGTS; do
			for cfg in $tree_cfgs; do
				a=$(tree $tgt $cfg "$N") && b=$(tree $tgt $cfg $((4 * N))) &&
				echo "$tgt $cfg $(awk -v a=$a -v b=$b -v n=$((3 * N)) \
					'BEGIN { printf "%.1f", (b - a) * 1e9 / n }')" >>"$W/tree"
			done
		done
	done
fi
if [ -z "$memleak_note" ]; then
	for tgt in heap_bench heap_bench_rs; do
		one $tgt base && one $tgt memleak || break
	done
fi
echo "load after:  $(uptime)"

# name_of TARGET: its rows' name
name_of() {
	case $1 in
	heap_bench) echo C ;;
	heap_bench_rs) echo Rust ;;
	heap_bench_nofp) echo "C nofp" ;;
	heap_bench_rs_nofp) echo "Rust nofp" ;;
	heap_bench_live) echo "C live" ;;
	esac
}

printf '\n%-9s %-26s %9s %9s %9s %9s %14s\n' "" "" "cpu ns" "added" "wall ns" "added" "vs heaptrack"
for tgt in $TGTS; do
	name=$(name_of $tgt)
	base=$(awk -v t=$tgt '$1 == t && $2 == "base" { print $3 }' "$W/runs" | median)
	wbase=$(awk -v t=$tgt '$1 == t && $2 == "base" { print $4 }' "$W/runs" | median)
	ht=$(awk -v t=$tgt '$1 == t && $2 == "heaptrack" { print $4 }' "$W/runs" | median)
	htp=$(awk -v t=$tgt '$1 == t && $2 == "htattach" { print $4 }' "$W/runs" | median)
	for cfg in base preload preload10 preloadhist inject uprobe uprobe10 heaptrack htattach memleak; do
		v=$(awk -v t=$tgt -v c=$cfg '$1 == t && $2 == c { print $3 }' "$W/runs" | median)
		wall=$(awk -v t=$tgt -v c=$cfg '$1 == t && $2 == c { print $4 }' "$W/runs" | median)
		[ "$v" = - ] && continue
		case $cfg in
		base)	   label="none (baseline)" ;;
		preload)   label="rsprof (preload)" ;;
		preload10) label="rsprof (preload) sample 10" ;;
		preloadhist) label="rsprof (preload) history" ;;
		inject)	   label="rsprof (inject, attach)" ;;
		uprobe)	   label="rsprof (uprobe, attach)" ;;
		uprobe10)  label="rsprof (uprobe) sample 10" ;;
		heaptrack) label="heaptrack" ;;
		htattach)  label="heaptrack -p" ;;
		memleak)   label="bcc memleak -p" ;;
		esac
		over=$(awk -v v=$v -v b=$base 'BEGIN { printf "%.0f", v - b }')
		wover=$(awk -v v=$wall -v b=$wbase 'BEGIN { printf "%.0f", v - b }')
		ratio=
		# attached: against heaptrack -p; launched: against heaptrack
		case $cfg in
		inject|uprobe|uprobe10|memleak) ref=$htp ;;
		*) ref=$ht ;;
		esac
		[ "$ref" != - ] && [ $cfg != base ] && [ $cfg != heaptrack ] && [ $cfg != htattach ] &&
			ratio=$(awk -v v=$wall -v b=$wbase -v h=$ref 'BEGIN {
				if (v - b <= 0) print "-";
				else if (h - b >= v - b) printf "%.1fx cheaper", (h - b) / (v - b);
				else printf "%.1fx dearer", (v - b) / (h - b) }')
		[ $cfg = heaptrack ] || [ $cfg = htattach ] && over=- && v=-
		printf '%-9s %-26s %9s %9s %9s %9s %14s\n' "$name" "$label" "$v" "$over" "$wall" "$wover" "$ratio"
	done
done
echo "added: over the unprofiled runs; vs heaptrack: added wall-clock time, heaptrack's over rsprof's"
echo "(the attached rows, inject and uprobe, against heaptrack -p)"
if [ -s "$W/tree" ]; then
	echo "(attached: rsprof inject against heaptrack -p, the target's CPU time and the tool's)"
	printf '\nthe whole tool'"'"'s CPU time (all its processes), ns per pair, from runs of %s and %s pairs\n' \
		"$N" "$((4 * N))"
	printf '%-9s %-30s %9s %9s %14s\n' "" "" "cpu ns" "added" "vs heaptrack"
	for tgt in $TGTS; do
		name=$(name_of $tgt)
		base=$(awk -v t=$tgt '$1 == t && $2 == "base" { print $3 }' "$W/tree" | median)
		ht=$(awk -v t=$tgt '$1 == t && $2 == "heaptrack" { print $3 }' "$W/tree" | median)
		htp=$(awk -v t=$tgt '$1 == t && $2 == "htattach" { print $3 }' "$W/tree" | median)
		for cfg in $tree_cfgs; do
			v=$(awk -v t=$tgt -v c=$cfg '$1 == t && $2 == c { print $3 }' "$W/tree" | median)
			over=$(awk -v v=$v -v b=$base 'BEGIN { printf "%.0f", v - b }')
			ratio=
			ref=$ht
			[ $cfg = inject ] && ref=$htp
			[ "$ref" != - ] && { [ $cfg = preload ] || [ $cfg = inject ]; } &&
				ratio=$(awk -v v=$v -v b=$base -v h=$ref 'BEGIN {
					if (v - b <= 0) print "-"; else printf "%.1fx cheaper", (h - b) / (v - b) }')
			case $cfg in
			base) label="none (baseline)" ;;
			preload) label="rsprof (preload)" ;;
			inject) label="rsprof (inject, attach)" ;;
			heaptrack) label="heaptrack (+ its interpreter)" ;;
			htattach) label="heaptrack -p (+ gdb, interp.)" ;;
			esac
			printf '%-9s %-30s %9s %9s %14s\n' "$name" "$label" "$v" "$over" "$ratio"
		done
	done
fi
[ $root = 0 ] && echo "uprobe backend: skipped (needs root and kernel BTF)"
[ -n "$memleak_note" ] && echo "bcc memleak: skipped: $memleak_note"
echo "goal (issue 8): rsprof (preload) <= 150 ns added (cpu) and >= 5x cheaper than heaptrack"
echo "goal (issue 23): rsprof (inject) <= 1.5x rsprof (preload) added, >= 5x cheaper than heaptrack -p"
echo "nofp: no frame pointers, unwound through the DWARF CFI (preload/unwind.c: its rules cached per return address)"
exit 0
