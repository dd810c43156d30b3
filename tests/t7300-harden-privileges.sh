#!/bin/sh
# Issue 11, items 2 and 3: the README's setcap install (cap_perfmon,cap_bpf)
# used by a real unprivileged user. Their own processes are recorded; a
# setuid or setgid program they started, a non-dumpable process, another
# user's process, a setuid executable to launch, a setuid program run later
# by a launched command, by an attached process or by its child: refused,
# or run without its privileges. Commands that only read drop every capability first.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ] || ! command -v setcap >/dev/null || ! command -v setpriv >/dev/null ||
   ! make_test_user; then
	test_skip 'setcap install and setuid targets' 'needs root, setcap, setpriv and useradd'
	test_done
fi

chmod 755 "$TEST_DIR"
mkdir out && chown "$TEST_USER" out
cp "$RSPROF" rsprof-cap && chmod 755 rsprof-cap &&
setcap cap_perfmon,cap_bpf+ep rsprof-cap || { test_skip 'setcap' 'setcap failed here'; test_done; }
cp "$TARGETS/cpu_split" plain && chmod 755 plain
cp "$TARGETS/cpu_split" suid && chmod 4755 suid		# setuid root
cp "$TARGETS/cpu_split" sgid && chgrp 0 sgid && chmod 2755 sgid	# setgid root
cp "$TARGETS/exec_mid" exec_mid && chmod 755 exec_mid
cp "$TARGETS/fork_exec" fork_exec && chmod 755 fork_exec
cp "$(command -v id)" sid && chmod 4755 sid		# a setuid-root id(1)

# as the user, in the user's directory
user() { (cd out && as_test_user "$@"); }

# start PROGRAM ARGS as the user in the background (in this shell, not in a
# test's subshell, so that the end kills it); prints its PID
start_user() {
	(cd out && exec setpriv --reuid="$TEST_UID" --regid="$TEST_GID" --clear-groups \
		--inh-caps=-all "$@") &
	bg_pid $!
	wait_exec $! "$1"
}

# (killed once the tests that use them are done)
start_user "$TEST_DIR/plain" 600; own=$!
start_user "$TEST_DIR/suid" 600; suid=$!
start_user "$TEST_DIR/sgid" 600; sgid=$!
start_user /usr/bin/python3 -c "import ctypes, time
ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)
time.sleep(600)"
nodump=$!
"$TARGETS/cpu_split" 600 &
rootp=$!
bg_pid $rootp
wait_exec $rootp "$TARGETS/cpu_split"
# until python has made itself non-dumpable: its /proc/PID files are root's then
i=0
while [ "$(stat -c %u /proc/$nodump/status 2>/dev/null)" != 0 ] && [ $i -lt 600 ]; do
	sleep 0.1
	i=$((i + 1))
done

test_expect_success 'their own process: recorded (CPU), whatever perf_event_paranoid says' '
	user ../rsprof-cap record -q --no-heap -d 1 -p $own -o own.db 2>err; r=$?;
	cat err; test $r = 0 &&
	test "$(sql out/own.db "SELECT SUM(count) FROM cpu_samples")" -gt 0
'

test_expect_success 'a setuid-root program the user started: refused (exit 4)' '
	grep -q "^Uid:.*	0	" /proc/$suid/status &&
	user ../rsprof-cap record -q --no-heap -d 1 -p $suid -o suid.db 2>err; r=$?;
	cat err; test $r = 4 && grep -q "setuid" err && ! test -e out/suid.db
'

test_expect_success 'a setgid program the user started: refused (exit 4)' '
	user ../rsprof-cap record -q --no-heap -d 1 -p $sgid -o sgid.db 2>err; r=$?;
	cat err; test $r = 4 && grep -q "setgid" err
'

test_expect_success 'a process that made itself non-dumpable: refused (exit 4)' '
	user ../rsprof-cap record -q --no-heap -d 1 -p $nodump -o nd.db 2>err; r=$?;
	cat err; test $r = 4 && grep -q "not dumpable" err
'

test_expect_success "root's process: refused (exit 4)" '
	user ../rsprof-cap record -q --no-heap -d 1 -p $rootp -o root.db 2>err; r=$?;
	cat err; test $r = 4 && grep -q "belongs to user 0" err
'
kill $own $suid $sgid $nodump $rootp 2>/dev/null

test_expect_success 'launching a setuid program: refused (exit 4), nothing run, no file' '
	user ../rsprof-cap record -q -o launch.db -- ../suid 0.2 2>err; r=$?;
	cat err; test $r = 4 && grep -q "setuid program" err && ! test -e out/launch.db
'

test_expect_success 'a setuid program a launched command runs later gets no privilege' '
	user ../rsprof-cap record -q --no-heap -o later.db -- ../exec_mid 0.3 ../sid -u \
		>euid 2>err; r=$?;
	cat err euid; test $r = 0 && test "$(cat euid)" = "$TEST_UID"
'

# the exec comes after 1 s of CPU, into the recording (which stops at it)
start_user "$TEST_DIR/exec_mid" 1 "$TEST_DIR/suid" 3; execs=$!
test_expect_success 'an attached process that runs a setuid program: the recording stops (exit 4)' '
	user ../rsprof-cap record -q --no-heap -i 200ms -d 30 -p $execs -o att.db 2>err; r=$?;
	cat err; test $r = 4 && grep -q "gained privileges" err
'

start_user "$TEST_DIR/fork_exec" 1 "$TEST_DIR/suid" 3; forks=$!
test_expect_success 'a child of an attached process runs a setuid program: stops, nothing of it kept' '
	user ../rsprof-cap record -q --no-heap -i 200ms -d 30 -p $forks -o child.db 2>err; r=$?;
	cat err; test $r = 4 && grep -q "gained privileges" err &&
	test "$(sql out/child.db "SELECT COUNT(*) FROM processes WHERE comm = '\''suid'\''")" = 0
'

# the child runs setuid id(1), which exits at once and is reaped by the
# parent before rsprof reads the exec's record (/proc has nothing left to
# check): judged by the file it ran
start_user "$TEST_DIR/fork_exec" 1 "$TEST_DIR/sid"; quick=$!
test_expect_success 'a child that ran a setuid program and is gone before the check: stops' '
	user ../rsprof-cap record -q --no-heap -i 200ms -d 30 -p $quick -o quick.db 2>err; r=$?;
	cat err; test $r = 4 && grep -q "gained privileges" err &&
	test "$(sql out/quick.db "SELECT COUNT(*) FROM processes WHERE comm = '\''sid'\''")" = 0
'

test_expect_success 'commands that only read drop every capability before opening a file' '
	cp rsprof-cap rsprof-dac &&
	setcap cap_perfmon,cap_bpf,cap_dac_read_search+ep rsprof-dac &&
	cp "$TEST_SRC/fuzz/corpus/reader/v3-cpu-heap-stacks-rss" secret.db && chmod 600 secret.db &&
	for c in "info ../secret.db" "report ../secret.db" "timeline ../secret.db" \
		 "query ../secret.db SELECT*FROM(meta)" "diff ../secret.db ../secret.db" \
		 "top --stdio ../secret.db" "annotate --stdio ../secret.db grow" \
		 "history ../secret.db --addr 0x1000"; do
		user ../rsprof-dac $c >/dev/null 2>err; r=$?
		grep -q "Permission denied" err && test $r = 4 ||
			{ echo "rsprof $c: exit $r"; cat err; exit 1; }
	done
'

test_done
