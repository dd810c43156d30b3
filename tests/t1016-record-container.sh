#!/bin/sh
# A target in its own mount namespace (issue 10): its files are opened
# through /proc/PID/root and checked by build-id, for CPU and heap alike.
# The program is a bind-mounted copy: outside the namespace its path holds
# nothing (heap), or another program (CPU: a decoy of the same name).
. "$(dirname "$0")/lib.sh"

if ! have_perf || [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null 2>&1; then
	test_skip 'a target in another mount namespace' 'needs root and unshare'
	test_done
fi
if ! unshare -m --propagation private true 2>/dev/null; then
	test_skip 'a target in another mount namespace' 'unshare -m is not allowed here'
	test_done
fi

mkdir -p mnt
# inside: DIR is bind-mounted on mnt/, the program runs as mnt/prog
in_ns() {	# DIR PROGRAM ARGS...: exec it as mnt/prog in a new mount namespace
	d=$1 && mkdir -p "$d" && cp "$2" "$d/prog" && shift 2 &&
	exec unshare -m --propagation private sh -c \
		"mount --bind '$TEST_DIR/$d' '$TEST_DIR/mnt' && exec '$TEST_DIR/mnt/prog' $*"
}

# --user-only: shares of user time, which the program's own code splits
# by construction; a loaded machine adds kernel samples of being preempted
# (finish_task_switch..., up to 14 % seen) to the total (t1015 is the test
# of kernel time).
# wait_prog PID: until the process started by in_ns runs mnt/prog (up to 60 s)
wait_prog() {
	_i=0
	while [ "$(cat /proc/$1/comm 2>/dev/null)" != prog ]; do
		_i=$((_i + 1))
		[ $_i -gt 1200 ] && { echo "process $1 never ran mnt/prog" >&2; return 1; }
		sleep 0.05
	done
}

SPLIT=$TEST_SRC/targets/cpu_split.c
RS=$TEST_SRC/targets/leak_steady_rs.rs
line_of() {	# MARKER FILE
	grep -n "$1" "$2" | head -1 | cut -d: -f1
}

if have_bpf; then
	test_expect_success 'heap: attach to a Rust program that exists only inside the namespace' '
		rm -f mnt/prog &&
		(in_ns real1 "$TARGETS/leak_steady_rs" 60) &
		tp=$!
		test_bg_pids="$test_bg_pids $tp"
		wait_prog $tp &&
		! test -e mnt/prog &&
		{ "$RSPROF" record -q -p $tp -d 1.5s -o heap.db 2>err; r=$?; kill $tp; test $r = 0; } &&
		cat err && ! grep -q "cannot open" err &&
		test "$(sql heap.db "SELECT value FROM meta WHERE key = '\''heap_probes'\''")" = rust &&
		n=$(sql heap.db "SELECT COALESCE(SUM(h.alloc_bytes - h.free_bytes), 0)
			FROM heap_events h JOIN symbols s ON h.addr = s.addr
			WHERE s.file LIKE '\''%leak_steady_rs.rs'\'' AND
			s.line = $(line_of "// LEAK:rising" "$RS")") &&
		say "leak_step line: $n bytes live" &&
		test "$n" -ge 1000000
	'
else
	test_skip 'heap in a mount namespace' 'needs root and kernel BTF'
fi

test_expect_success 'CPU: attached, the program inside, not the decoy of the same path outside' '
	cp "$TARGETS/exec_after" mnt/prog &&
	(in_ns real2 "$TARGETS/cpu_split" 120) &
	tp=$!
	test_bg_pids="$test_bg_pids $tp"
	wait_prog $tp &&
	{ "$RSPROF" record -q --no-heap --user-only -F 499 -p $tp -d 1.5s -o cpu.db; r=$?; kill $tp; test $r = 0; } &&
	a=$(sql cpu.db "SELECT COALESCE(SUM(c.count), 0) * 100 / (SELECT SUM(count) FROM cpu_samples)
		FROM cpu_samples c JOIN symbols s ON c.addr = s.addr
		WHERE s.file LIKE '\''%cpu_split.c'\'' AND s.line = $(line_of "/\* HOT:a \*/" "$SPLIT")") &&
	say "work_a: $a %" && test "$a" -ge 48 && test "$a" -le 72 &&
	test "$(sql cpu.db "SELECT COUNT(*) FROM symbols WHERE file LIKE '\''%exec_after.c'\''")" = 0
'

test_expect_success 'CPU: launched through unshare, the program exec'\''d inside' '
	mkdir -p real3 && cp "$TARGETS/cpu_split" real3/prog &&
	"$RSPROF" record -q --no-heap --user-only -F 499 -o launch.db -- unshare -m --propagation private \
		sh -c "mount --bind '\''$TEST_DIR/real3'\'' '\''$TEST_DIR/mnt'\'' && exec '\''$TEST_DIR/mnt/prog'\'' 1.2" &&
	a=$(sql launch.db "SELECT COALESCE(SUM(c.count), 0) * 100 / (SELECT SUM(count) FROM cpu_samples)
		FROM cpu_samples c JOIN symbols s ON c.addr = s.addr
		WHERE s.file LIKE '\''%cpu_split.c'\'' AND s.line = $(line_of "/\* HOT:a \*/" "$SPLIT")") &&
	say "work_a: $a %" && test "$a" -ge 48 && test "$a" -le 72 &&
	test "$(sql launch.db "SELECT COUNT(*) FROM symbols WHERE file LIKE '\''%exec_after.c'\''")" = 0
'


# rsprof in a chroot whose root is a bind mount of / (the same files at the
# same paths: a container's view, or scripts/fresh-check.sh's), the target
# in a mount namespace of its own started from there. The kernel names the
# target's files (/proc/PID/exe, maps) from the top of the target's
# namespace, croot/...: they are opened through /proc/PID/root all the same.
cat >attach.sh <<'EOF'
# attach.sh DIR PROG SECONDS RSPROF-RECORD-OPTIONS...: DIR/PROG/prog run as
# DIR/mnt/prog in a mount namespace of its own, recorded for SECONDS.
d=$1 prog=$2 secs=$3
shift 3
cd "$d" || exit 1
unshare -m --propagation private sh -c "mount --bind '$d/$prog' '$d/mnt' && exec '$d/mnt/prog' 60" &
tp=$!
i=0
while [ "$(cat /proc/$tp/comm 2>/dev/null)" != prog ]; do
	i=$((i + 1))
	[ $i -gt 1200 ] && { echo "process $tp never ran mnt/prog" >&2; kill $tp; exit 1; }
	sleep 0.05
done
echo "exe: $(readlink /proc/$tp/exe)"
"$RSPROF" record -p $tp -d "$secs" "$@"
r=$?
kill $tp
exit $r
EOF
# chrooted CMD...: CMD in a chroot of a bind mount of /, in a mount
# namespace of its own (gone with it)
chrooted() {
	mkdir -p "$TEST_DIR/croot" &&
	unshare -m --propagation private sh -c 'mount --rbind / "$0" && exec chroot "$0" "$@"' \
		"$TEST_DIR/croot" "$@"
}

test_expect_success 'rsprof in a chroot, the target in another mount namespace: CPU' '
	mkdir -p chroot-cpu && cp "$TARGETS/cpu_split" chroot-cpu/prog &&
	chrooted sh "$TEST_DIR/attach.sh" "$TEST_DIR" chroot-cpu 1.5s -v --no-heap --user-only \
		-F 499 -o chroot-cpu.db >out 2>err &&
	cat out && grep "^exe: .*/croot/" out &&
	! grep "cannot open" err &&
	a=$(sql chroot-cpu.db "SELECT COALESCE(SUM(c.count), 0) * 100 / (SELECT SUM(count) FROM cpu_samples)
		FROM cpu_samples c JOIN symbols s ON c.addr = s.addr
		WHERE s.file LIKE '\''%cpu_split.c'\'' AND s.line = $(line_of "/\* HOT:a \*/" "$SPLIT")") &&
	say "work_a: $a %" && test "$a" -ge 48 && test "$a" -le 72
'

if have_bpf; then
	test_expect_success 'rsprof in a chroot, the target in another mount namespace: heap' '
		mkdir -p chroot-heap && cp "$TARGETS/leak_steady_rs" chroot-heap/prog &&
		chrooted sh "$TEST_DIR/attach.sh" "$TEST_DIR" chroot-heap 1.5s -q --no-cpu \
			-o chroot-heap.db >out 2>err &&
		cat out err && ! grep -q "cannot open" err &&
		n=$(sql chroot-heap.db "SELECT COALESCE(SUM(h.alloc_bytes - h.free_bytes), 0)
			FROM heap_events h JOIN symbols s ON h.addr = s.addr
			WHERE s.file LIKE '\''%leak_steady_rs.rs'\'' AND
			s.line = $(line_of "// LEAK:rising" "$RS")") &&
		say "leak_step line: $n bytes live" &&
		test "$n" -ge 1000000
	'
else
	test_skip 'heap, rsprof in a chroot' 'needs root and kernel BTF'
fi

test_done
