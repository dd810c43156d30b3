#!/bin/sh
# Heap tracking on a real program nobody here wrote: Redis 7, built from
# Debian's source package with MALLOC=libc (every allocation goes through
# zmalloc to glibc's malloc), once with frame pointers
# (-O2 -g -fno-omit-frame-pointer) and once without (-O2 -g
# -fomit-frame-pointer). For each build, ROUNDS rounds, the configurations
# alternated inside each round, each on a fresh server (loopback, a
# private port, no persistence):
#   unprofiled    redis-server
#   launch        rsprof record --no-cpu -- redis-server
#   sampled       rsprof record --no-cpu --heap-sample-bytes 512K -- redis-server
#   attach        rsprof record --no-cpu -p PID (started after the server
#                 is up; the benchmark starts after its first checkpoint):
#                 the in-process tracker injected into the server
#   attach-sampled  the same with --heap-sample-bytes 512K (byte sampling)
#   uprobe        the same with --heap-backend uprobe (eBPF uprobes)
#   heaptrack     heaptrack redis-server
#   heaptrack-p   heaptrack -p PID (gdb loads its inject library into the
#                 running server; the benchmark starts once it is in)
# and against each server the same two redis-benchmark runs:
#   -t set -d 256 -n N -r N               (SET)
#   -t set,get,lpush -d 256 -n M -r N     (SET*, GET*, LPUSH*)
# Prints req/s (medians) and the ratio to unprofiled, the server's
# main-thread CPU time per request (/proc/PID/schedstat, medians: what a
# loaded machine disturbs less than throughput; on a busy 2-vCPU machine a
# server under rsprof was seen faster than alone), `uptime` before and
# after; then, for the last round's recordings, rsprof's top heap sites
# (`report --heap -n 10`, and one extra untimed recording with
# `--heap-attribution caller`) next to heaptrack_print's top peak and
# leaked backtraces, one frame past the zmalloc wrapper, with the command
# (t_*.c) that made them (bench/heaptrack-sites.awk).
#
#   bench/redis.sh OUT_DIR
#   REDIS_SRC=/path/to/redis ROUNDS=3 N=200000 M=100000 bench/redis.sh OUT_DIR
#   BUILDS=fp CFGS="unprofiled attach uprobe heaptrack-p" bench/redis.sh OUT_DIR
#
# OUT_DIR keeps the profiles (rsprof-{launch,sampled,attach,attach-sampled,uprobe,caller}-{fp,nofp}.db,
# heaptrack{,-p}-{fp,nofp}.zst) and the build and server logs. The Redis source
# comes from REDIS_SRC, or else from `apt-get source redis` (Debian 12:
# 7.0.x) through a private apt configuration with deb-src entries made from
# this machine's own apt sources; the source and the builds live in a
# scratch directory removed at the end (BUILD_DIR=DIR keeps and reuses
# them). RSPROF: the rsprof binary (default: out/rsprof beside bench/).
# Needs root (uprobes), `make` and `make bench-deps`. Takes about 8
# minutes on 2 vCPUs at load 2-5 with the defaults (2 builds of ~30 s,
# then ~70 s a round and build), 20 minutes at load 14.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
[ $# = 1 ] || { sed -n '2,/^set -eu/p' "$0" | sed 's/^# \{0,1\}//;$d' >&2; exit 2; }
mkdir -p "$1"
OUT_DIR=$(cd "$1" && pwd)
RSPROF=${RSPROF:-$here/../out/rsprof}
ROUNDS=${ROUNDS:-3}
N=${N:-200000}
M=${M:-100000}
PORT=${PORT:-$((20000 + $$ % 20000))}
JOBS=$(nproc)

die() { echo "bench/redis.sh: $*" >&2; exit 1; }
[ -x "$RSPROF" ] || die "$RSPROF missing: run make (or set RSPROF)"
[ "$(id -u)" = 0 ] || die "needs root (BPF uprobes)"
command -v heaptrack >/dev/null && command -v heaptrack_print >/dev/null ||
	die "heaptrack missing: run make bench-deps"
command -v redis-server >/dev/null 2>&1 &&
	echo "note: a system redis-server is installed; the builds below are used, not it"

if [ -n "${BUILD_DIR:-}" ]; then
	mkdir -p "$BUILD_DIR"
	W=$(cd "$BUILD_DIR" && pwd)
	keep=1
else
	W=$(mktemp -d "${TMPDIR:-/tmp}/rsprof-bench-redis.XXXXXX")
	keep=0
fi
RUN=$W/run
mkdir -p "$RUN"

# The server and the tool of the run in progress: stopped on any exit.
tool_pid=
cleanup() {
	if [ -s "$RUN/redis.pid" ]; then
		kill "$(cat "$RUN/redis.pid")" 2>/dev/null || true
	fi
	[ -n "$tool_pid" ] && kill "$tool_pid" 2>/dev/null || true
	[ $keep = 1 ] || rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the source ----------------------------------------------------------
get_source() {
	if [ -n "${REDIS_SRC:-}" ]; then
		[ -f "$REDIS_SRC/src/zmalloc.c" ] || die "REDIS_SRC=$REDIS_SRC is not a Redis source tree"
		SRC=$REDIS_SRC
		return
	fi
	SRC=$(ls -d "$W"/src/redis-*/ 2>/dev/null | head -1)
	[ -n "$SRC" ] && return
	# deb-src entries from this machine's own apt sources, in a private
	# apt configuration: the system's is not touched
	A=$W/apt
	mkdir -p "$A/sources.list.d" "$A/lists/partial" "$A/cache/archives/partial" "$W/src"
	: >"$A/sources.list"
	if [ -f /etc/apt/sources.list ]; then
		sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' /etc/apt/sources.list >"$A/sources.list"
	fi
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		sed 's/^Types:.*/Types: deb-src/' "$f" >"$A/sources.list.d/${f##*/}"
	done
	for f in /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' "$f" >"$A/sources.list.d/${f##*/}"
	done
	set -- -o Dir::Etc::sourcelist="$A/sources.list" \
		-o Dir::Etc::sourceparts="$A/sources.list.d" \
		-o Dir::State::Lists="$A/lists" -o Dir::Cache="$A/cache" \
		-o APT::Sandbox::User=root
	echo "getting the source: apt-get source redis (deb-src from this machine's apt sources)"
	apt-get "$@" update -qq >"$W/apt.log" 2>&1 || { cat "$W/apt.log" >&2; die "apt-get update (deb-src) failed"; }
	(cd "$W/src" && apt-get "$@" source -qq redis) >>"$W/apt.log" 2>&1 ||
		{ cat "$W/apt.log" >&2; die "apt-get source redis failed (dpkg-dev installed?)"; }
	SRC=$(ls -d "$W"/src/redis-*/ | head -1)
}

# build NAME OPTIMIZATION: $W/NAME/src/redis-server
build() {
	name=$1 opt=$2
	if [ -x "$W/$name/src/redis-server" ] && [ "$(cat "$W/$name/.opt" 2>/dev/null)" = "$opt" ]; then
		echo "build $name: reusing $W/$name ($opt)"
		return
	fi
	rm -rf "${W:?}/$name"
	cp -a "$SRC" "$W/$name"
	echo "build $name: make MALLOC=libc OPTIMIZATION='$opt' (DEBUG='-g -ggdb')"
	t0=$(date +%s)
	make -C "$W/$name" -j"$JOBS" MALLOC=libc USE_SYSTEMD=no BUILD_TLS=no \
		OPTIMIZATION="$opt" >"$OUT_DIR/build-$name.log" 2>&1 ||
		{ tail -20 "$OUT_DIR/build-$name.log" >&2; die "build $name failed"; }
	echo "$opt" >"$W/$name/.opt"
	echo "build $name: $(($(date +%s) - t0)) s"
}

get_source
echo "source: $SRC"
BUILDS=${BUILDS:-fp nofp}
CFGS=${CFGS:-unprofiled launch sampled attach attach-sampled uprobe heaptrack heaptrack-p}
case " $BUILDS " in *" fp "*) ;; *) BUILDS="fp $BUILDS" ;; esac	# redis-cli, redis-benchmark
build fp "-O2 -fno-omit-frame-pointer"
case " $BUILDS " in *" nofp "*) build nofp "-O2 -fomit-frame-pointer" ;; esac

# ---- one run -------------------------------------------------------------
cli() { "$W/fp/src/redis-cli" -h 127.0.0.1 -p "$PORT" "$@"; }

wait_ready() {
	i=0
	until cli ping 2>/dev/null | grep -q PONG; do
		i=$((i + 1))
		[ $i -lt 300 ] || die "redis-server did not answer on port $PORT (log: $1)"
		sleep 0.1
	done
}

# wait for the first checkpoint of rsprof's file $1: the probes are in
wait_checkpoint() {
	i=0
	while :; do
		c=$("$RSPROF" query --csv "$1" "SELECT COUNT(*) FROM checkpoints" 2>/dev/null | tail -1) || c=0
		[ "${c:-0}" -ge 1 ] 2>/dev/null && return 0
		i=$((i + 1))
		[ $i -lt 300 ] || die "rsprof record -p wrote no checkpoint in 30 s (log: $RUN/tool.log)"
		sleep 0.1
	done
}

# the CPU time of the server's main thread so far, ns (/proc/PID/schedstat:
# the machine's load disturbs it less than the throughput)
server_cpu() {
	for i in 1 2 3 4 5 6 7 8 9 10; do
		[ -s "$RUN/redis.pid" ] && break
		sleep 0.1
	done
	cut -d' ' -f1 "/proc/$(cat "$RUN/redis.pid" 2>/dev/null)/schedstat" 2>/dev/null || true
}

# the benchmark: "test rps" lines appended to $RUN/rps
benchmark() {
	b=$W/fp/src/redis-benchmark
	"$b" -h 127.0.0.1 -p "$PORT" -t set -d 256 -n "$N" -r "$N" --csv >"$RUN/b1.csv"
	"$b" -h 127.0.0.1 -p "$PORT" -t set,get,lpush -d 256 -n "$M" -r "$N" --csv >"$RUN/b2.csv"
	awk -F'"' 'NR > 1 { print $2, $4 }' "$RUN/b1.csv" >"$RUN/rps"
	awk -F'"' 'NR > 1 { print $2 "*", $4 }' "$RUN/b2.csv" >>"$RUN/rps"
}

# serve [WRAPPER...] &: redis-server of build $bld on the private port,
# under WRAPPER (nothing, rsprof record ... --, heaptrack ...); exec, so
# that $! is the server's (or the wrapper's) PID, not a subshell's
serve() {
	exec "$@" "$W/$bld/src/redis-server" --port "$PORT" --bind 127.0.0.1 \
		--save '' --appendonly no --daemonize no \
		--dir "$RUN" --pidfile "$RUN/redis.pid" --logfile "$log"
}

# run BUILD CFG [rsprof options]: one server under CFG, the benchmark, the
# end; appends "build cfg test rps" to $W/results
run() {
	bld=$1 cfg=$2
	shift 2
	log=$OUT_DIR/redis-$bld-$cfg.log
	rm -f "$RUN/redis.pid" "$RUN/rps" "$RUN/r.db" "$RUN"/ht.*
	if cli ping >/dev/null 2>&1; then
		die "port $PORT is already in use: set PORT"
	fi
	case $cfg in
	unprofiled)
		serve &
		tool_pid=$! ;;
	launch|caller)
		serve "$RSPROF" record -q --no-cpu "$@" -o "$RUN/r.db" -- >"$RUN/tool.log" 2>&1 &
		tool_pid=$! ;;
	sampled)
		serve "$RSPROF" record -q --no-cpu --heap-sample-bytes 512K "$@" -o "$RUN/r.db" -- \
			>"$RUN/tool.log" 2>&1 &
		tool_pid=$! ;;
	attach|attach-sampled|uprobe)
		serve &
		srv_pid=$!
		wait_ready "$log"
		be=inject
		[ "$cfg" = uprobe ] && be=uprobe
		[ "$cfg" = attach-sampled ] && set -- --heap-sample-bytes 512K "$@"
		"$RSPROF" record -q --no-cpu --heap-backend $be "$@" -p "$srv_pid" -o "$RUN/r.db" \
			>"$RUN/tool.log" 2>&1 &
		tool_pid=$!
		wait_checkpoint "$RUN/r.db" ;;
	heaptrack)
		serve heaptrack -o "$RUN/ht" >"$RUN/tool.log" 2>&1 &
		tool_pid=$! ;;
	heaptrack-p)
		serve &
		srv_pid=$!
		wait_ready "$log"
		heaptrack -o "$RUN/ht" -p "$srv_pid" >"$RUN/tool.log" 2>&1 &
		tool_pid=$!
		i=0
		until grep -q "injection finished" "$RUN/tool.log" 2>/dev/null; do
			i=$((i + 1))
			[ $i -lt 600 ] || die "heaptrack -p did not inject in 60 s (log: $RUN/tool.log)"
			sleep 0.1
		done ;;
	esac
	wait_ready "$log"
	c0=$(server_cpu)
	benchmark
	c1=$(server_cpu)
	cli shutdown nosave >/dev/null 2>&1 || true
	if ! wait $tool_pid; then
		cat "$RUN/tool.log" >&2 2>/dev/null || true
		die "$bld/$cfg: the run failed (server log: $log)"
	fi
	case $cfg in
	attach|attach-sampled|uprobe|heaptrack-p) wait "$srv_pid" || true ;;
	esac
	tool_pid=
	while read -r t r; do
		echo "$bld $cfg $t $r" >>"$W/results"
	done <"$RUN/rps"
	# the server's CPU per request, in microseconds (both benchmark runs)
	[ -n "$c0" ] && [ -n "$c1" ] &&
		echo "$bld $cfg $(awk -v a="$c0" -v b="$c1" -v n=$((N + 3 * M)) \
			'BEGIN { printf "%.3f", (b - a) / n / 1000 }')" >>"$W/cpu"
	case $cfg in
	launch|sampled|attach|attach-sampled|uprobe|caller)
		mv "$RUN/r.db" "$OUT_DIR/rsprof-$cfg-$bld.db" ;;
	heaptrack|heaptrack-p)
		for f in "$RUN"/ht.*; do
			rm -f "$OUT_DIR/$cfg-$bld".*
			mv "$f" "$OUT_DIR/$cfg-$bld.${f##*/ht.}"
		done ;;
	esac
}

# ---- the rounds ----------------------------------------------------------
echo
echo "machine: $(nproc) CPUs, $(uname -r); $("$W/fp/src/redis-server" --version | cut -d' ' -f1-3)"
echo "rsprof: $("$RSPROF" --version 2>&1 | head -1); $(heaptrack --version 2>&1 | head -1)"
echo "workload: redis-benchmark -t set -d 256 -n $N -r $N, then -t set,get,lpush -d 256 -n $M -r $N"
echo "uptime before: $(uptime)"
: >"$W/results"
: >"$W/cpu"
t_start=$(date +%s)
for round in $(seq "$ROUNDS"); do
	for bld in $BUILDS; do
		for cfg in $CFGS; do
			run "$bld" "$cfg"
		done
	done
	echo "round $round of $ROUNDS done ($(($(date +%s) - t_start)) s)"
done
case " $CFGS " in *" launch "*)
	for bld in $BUILDS; do
		run "$bld" caller --heap-attribution=caller
	done ;;
esac
echo "uptime after:  $(uptime)"

# the heap meta of profile $1: which tracker ran (heap_backend, once the
# launch tracker records it) and what it probed
heap_meta() {
	"$RSPROF" query --csv "$1" "SELECT key || '=' || value FROM meta
		WHERE key IN ('heap_backend', 'heap_probes', 'heap_attribution') ORDER BY key" 2>/dev/null |
		sed 1d | tr '\n' ' '
	# and how full its tables got: a full stack map drops events
	"$RSPROF" info "$1" | sed -n 's/^\(checkpoints\|heap dropped\|call stacks\|symbols\): */\1=/p' |
		tr '\n' ' '
}

# the 5 stacks holding the most live bytes in profile $1, as rsprof stored
# them (report --format=folded), the 6 frames nearest the allocator
folded_top() {
	"$RSPROF" report --heap --format=folded "$1" | awk '{
		v = $NF; sub(/ [^ ]*$/, "")
		n = split($0, f, ";"); s = f[n]
		for (i = n - 1; i >= 1 && i > n - 6; i--) s = f[i] ";" s
		if (i >= 1) s = "...;" s
		print v, s }' | sort -k1,1 -n -r | head -5 |
		awk '{ v = $1; sub(/^[^ ]* /, ""); printf "  %12s  %s\n", v, $0 }'
}

median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'
}

echo
label() {
	case $1 in
	launch) echo "rsprof launch" ;;
	sampled) echo "launch 512K" ;;
	attach) echo "rsprof inject" ;;
	attach-sampled) echo "inject 512K" ;;
	uprobe) echo "rsprof uprobe" ;;
	*) echo "$1" ;;
	esac
}
TOOLS=$(echo "$CFGS" | tr ' ' '\n' | grep -v -x unprofiled | tr '\n' ' ')
echo "req/s, medians of $ROUNDS runs (ratio to unprofiled); * = the set,get,lpush run"
echo "(rsprof inject and uprobe, heaptrack-p: attached to the running server)"
line=$(printf '%-5s %-7s %10s' build test unprofiled)
for cfg in $TOOLS; do line="$line $(printf '%17s' "$(label $cfg)")"; done
echo "$line"
for bld in $BUILDS; do
	for t in SET 'SET*' 'GET*' 'LPUSH*'; do
		base=$(awk -v b="$bld" -v t="$t" '$1 == b && $2 == "unprofiled" && $3 == t { print $4 }' "$W/results" | median)
		line=$(printf '%-5s %-7s %10.0f' "$bld" "$t" "$base")
		for cfg in $TOOLS; do
			v=$(awk -v b="$bld" -v c="$cfg" -v t="$t" '$1 == b && $2 == c && $3 == t { print $4 }' "$W/results" | median)
			line="$line $(awk -v v="$v" -v b="$base" 'BEGIN { printf "%9.0f (%4.2fx)", v, v / b }')"
		done
		echo "$line"
	done
done
echo
echo "the server's main-thread CPU per request (both runs), microseconds, medians (ratio: unprofiled's / this)"
line=$(printf '%-5s %10s' build unprofiled)
for cfg in $TOOLS; do line="$line $(printf '%17s' "$(label $cfg)")"; done
echo "$line"
for bld in $BUILDS; do
	base=$(awk -v b="$bld" '$1 == b && $2 == "unprofiled" { print $3 }' "$W/cpu" | median)
	line=$(printf '%-5s %10s' "$bld" "$base")
	for cfg in $TOOLS; do
		v=$(awk -v b="$bld" -v c="$cfg" '$1 == b && $2 == c { print $3 }' "$W/cpu" | median)
		line="$line $(awk -v v="$v" -v b="$base" 'BEGIN { if (v + 0 > 0) printf "%9.2f (%4.2fx)", v, b / v; else printf "%17s", "-" }')"
	done
	echo "$line"
done
echo "every run:"
sort -k1,1 -k3,3 -k2,2 "$W/results" | awk '
	{ k = $1 " " $3 " " $2; if (k != last) { if (last != "") print line; line = sprintf("  %-5s %-7s %-10s", $1, $3, $2); last = k }
	  line = line sprintf(" %9.0f", $4) }
	END { if (last != "") print line }'

# ---- where the heap is ---------------------------------------------------
for bld in $BUILDS; do
	echo
	echo "==== heap sites, build $bld ($(cat "$W/$bld/.opt")) ===="
	for cfg in launch sampled attach attach-sampled uprobe caller; do
		f=$OUT_DIR/rsprof-$cfg-$bld.db
		[ -f "$f" ] || continue
		echo
		case $cfg in
		caller) echo "---- rsprof report --heap -n 10 (launch, record --heap-attribution=caller)" ;;
		*) echo "---- rsprof report --heap -n 10 ($(label $cfg), last round)" ;;
		esac
		echo "(meta: $(heap_meta "$f"))"
		"$RSPROF" report --heap -n 10 "$f"
	done
	if [ -f "$OUT_DIR/rsprof-launch-$bld.db" ] && [ -f "$OUT_DIR/rsprof-sampled-$bld.db" ]; then
		echo
		echo "---- --heap-sample-bytes 512K against full tracking (launch, last round): the"
		echo "     live bytes at the end of every site holding 1 MiB or more"
		for c in launch sampled; do
			"$RSPROF" report --heap --csv -n 1000 "$OUT_DIR/rsprof-$c-$bld.db" |
				awk -F, -v c=$c 'NR > 1 { print c "|" $10 "|" $4 }'
		done | awk -F'|' '$1 == "launch" { f[$2] = $3 } $1 == "sampled" { s[$2] = $3 }
			END { for (l in f) if (f[l] >= 1048576)
				printf "  %-40s %10.2f MiB full %10.2f MiB sampled (%+.1f%%)\n", l,
					f[l] / 1048576, s[l] / 1048576, 100 * (s[l] - f[l]) / f[l] }'
	fi
	if [ -f "$OUT_DIR/rsprof-launch-$bld.db" ]; then
		echo
		echo "---- rsprof's stored stacks (launch, last round): report --heap --format=folded, top 5"
		folded_top "$OUT_DIR/rsprof-launch-$bld.db"
	fi
	for ht in heaptrack heaptrack-p; do
		ls "$OUT_DIR/$ht-$bld".* >/dev/null 2>&1 || continue
		echo
		echo "---- heaptrack_print ($ht, last round): totals"
		heaptrack_print -f "$(ls "$OUT_DIR/$ht-$bld".*)" -p 0 -a 0 -T 0 -l 0 2>/dev/null |
			grep -E '^(calls to allocation|peak heap|peak RSS|total memory leaked)' || true
		for kind in "-p 1 -l 0" "-p 0 -l 1"; do
			echo
			echo "---- heaptrack_print ($ht) $kind -a 0 -T 0 -n 4 -s 8, one line a backtrace"
			# shellcheck disable=SC2086
			heaptrack_print -f "$(ls "$OUT_DIR/$ht-$bld".*)" $kind -a 0 -T 0 -n 4 -s 8 2>/dev/null |
				awk -v skip='zmalloc[.]c' -v also='/t_[a-z]+[.]c:' -v also_name='the command (t_*.c)' \
					-v strip="$W/$bld/" \
					-f "$here/heaptrack-sites.awk"
		done
	done
done
echo
echo "profiles in $OUT_DIR: $(cd "$OUT_DIR" && ls ./*.db ./*.zst | tr '\n' ' ')"
echo "total time: $(($(date +%s) - t_start)) s of benchmark (builds not counted)"
