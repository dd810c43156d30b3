#!/bin/sh
# Threaded programs under the default launch (the in-process heap tracker)
# end as they end without rsprof: the same output and exit status, within a
# time limit. Rust's std (built with every rustc found: a current rustc's
# std asks glibc for each new thread's stack bounds, which allocates, before
# any of the program's code) and glibc's threads; and rsprof's watchdog says
# when a thread is stuck in a call the tracker makes.
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

LIMIT=60	# seconds: a loaded CI runner; these programs take well under one

# same PROG ARGS...: the program's stdout and exit status unprofiled and
# under `rsprof record -- PROG ARGS` (file $DB), compared; a run that does not
# end within $LIMIT seconds fails.
same() {
	env -u RUST_BACKTRACE timeout $LIMIT "$@" >plain.out 2>plain.err
	_want=$?
	env -u RUST_BACKTRACE timeout $LIMIT "$RSPROF" record -q -o "$DB" -- "$@" >prof.out 2>prof.err
	_got=$?
	if [ $_got = 124 ]; then
		echo "hung: still running after $LIMIT s under rsprof record" >&2
		return 1
	fi
	cat prof.out
	[ $_got = $_want ] || { echo "exit $_got under rsprof, $_want without" >&2; cat prof.err >&2; return 1; }
	cmp plain.out prof.out || { echo "the output differs" >&2; diff plain.out prof.out >&2; return 1; }
	test "$(meta "$DB" heap_backend)" = preload
}

RUST_CASES="spawn scope pool tls panic command churn"

# Every rustc the build could use: on PATH, rustup's, Debian's (one per version).
rustcs=
seen=
for r in "$RUSTC" "$(command -v rustc)" "$HOME/.cargo/bin/rustc" /usr/bin/rustc; do
	[ -n "$r" ] && [ -x "$r" ] || continue
	v=$("$r" --version 2>/dev/null | head -n 1)
	[ -n "$v" ] || continue
	case "|$seen|" in *"|$v|"*) continue ;; esac
	seen="$seen|$v"
	rustcs="$rustcs $r"
done

n=0
for r in $rustcs; do
	n=$((n + 1))
	v=$("$r" --version | head -n 1)
	B=rs$n/thread_std
	# as a user builds a release with debug information: no forced frame pointers
	test_expect_success "build thread_std with $v" '
		mkdir -p rs$n && "$r" -g -O --edition 2021 -o $B "$TEST_SRC/targets/thread_std.rs"
	'
	for c in $RUST_CASES; do
		test_expect_success "Rust $c ($v): same output and status under record" "
			DB=rs$n-$c.db && same ./$B $c
		"
	done

	SRC=$TEST_SRC/targets/thread_std.rs
	test_expect_success "Rust spawn ($v): the thread's Vec is on its line" '
		source_lines rs$n-spawn.db "$SRC" >lines && cat lines &&
		want_line lines THREAD_VEC 0 1 1
	'
	test_expect_success "Rust panic ($v): the panic message, unprofiled and profiled" '
		DB=rs$n-panic2.db && same ./$B panic &&
		grep "deliberate panic with 10 strings" plain.err &&
		grep "deliberate panic with 10 strings" prof.err
	'
done
[ -n "$rustcs" ] || test_skip "Rust threads" "no rustc"

for c in getattr stacksize signal fork; do
	test_expect_success "C $c: same output and status under record" "
		DB=c-$c.db && same \"\$TARGETS/thread_libc\" $c
	"
done

SRC=$TEST_SRC/targets/thread_libc.c
test_expect_success 'C getattr: the threads'"'"' blocks are on their line' '
	source_lines c-getattr.db "$SRC" >lines && cat lines &&
	want_line lines GETATTR_KEEP 4000 4 0
'

test_expect_success 'C: all four cases in one process' '
	DB=c-all.db && same "$TARGETS/thread_libc" getattr stacksize signal fork
'

# The same with the tracker built with UBSan (fatal): what the tracker does
# when a thread starts is checked for undefined behaviour too.
UBSAN_TRACKER=${UBSAN_TRACKER:-$(dirname "$RSPROF")/preload/ubsan/librsprof-heap.so}
test_expect_success 'the tracker built with UBSan: C and Rust threads' '
	test -r "$UBSAN_TRACKER" && export RSPROF_HEAP_TRACKER=$UBSAN_TRACKER &&
	DB=ubsan-c.db && same "$TARGETS/thread_libc" getattr stacksize signal fork &&
	for d in rs*/; do d=${d%/}
		DB=ubsan-$d.db && same ./$d/thread_std $RUST_CASES || exit 1
	done
'

# The watchdog: heap_stuck's second thread never returns from the
# pthread_setspecific() the tracker calls; rsprof says so within seconds.
test_expect_success 'a thread stuck in a call of the tracker is reported' '
	"$TARGETS/heap_stuck" | grep -x "done worker" &&
	"$RSPROF" record -q -o stuck.db -- "$TARGETS/heap_stuck" >stuck.out 2>stuck.err &
	rec=$! &&
	i=0 && while ! grep -q "stuck in PID" stuck.err && [ $i -lt 300 ]; do
		sleep 0.1; i=$((i + 1))
	done &&
	cat stuck.err &&
	pid=$(pgrep -x -P $rec heap_stuck) &&
	tid=$(sed -n "s/.*stuck in PID $pid, thread \([0-9]*\): in pthread_setspecific for [0-9]* s$/\1/p" stuck.err) &&
	test -n "$tid" && test "$tid" != "$pid" && test -d /proc/$pid/task/$tid &&
	grep -q "^hint: .*--heap-backend uprobe or --no-heap" stuck.err &&
	kill -9 $pid && { wait $rec; rc=$?; } &&
	echo "record exited $rc" && test $rc -lt 124
'

test_done
