#!/bin/sh
# Targets without debug info (exit 5 when nothing at all can be named, or a
# warning and function names when a symbol table is left) and permission
# errors (exit 4 naming what is missing).
. "$(dirname "$0")/lib.sh"

if ! have_perf; then
	test_skip 'record debug info and permissions' 'perf events not allowed here'
	test_done
fi

# static and stripped, user time only: nothing recorded has a name
gcc -g -O1 -static -o nodebug "$TEST_SRC/targets/cpu_split.c" && strip --strip-all nodebug
cp "$TARGETS/cpu_split" symtab && strip --strip-debug symtab

# long and often enough that a few samples land in the [vdso]'s clock_gettime,
# whose kernel-given name names none of the program
test_expect_success 'no DWARF and no symbol table: exit 5 with a hint' '
	expect_exit 5 "$RSPROF" record --user-only --no-heap -F 4999 -o nodebug.db -- ./nodebug 4 2>err &&
	cat err &&
	grep -q "debug" err && grep -q "^hint:.*-g" err && ! test -e nodebug.db
'

test_expect_success 'symbol table only: warning, function-level profile' '
	"$RSPROF" record -q --no-heap -F 499 -o symtab.db -- ./symtab 1 2>err &&
	cat err &&
	grep -q "warning:.*function" err &&
	sql symtab.db "SELECT s.function FROM cpu_samples c JOIN symbols s ON c.addr = s.addr
		GROUP BY s.function ORDER BY SUM(c.count) DESC LIMIT 1" | grep -q work_a
'

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
	test_skip 'permission errors' 'needs root to run a check as another user'
	test_done
fi

"$TARGETS/cpu_split" 600 &	# killed after the test that uses it
pid=$!
bg_pid $pid
wait_exec $pid "$TARGETS/cpu_split"

test_expect_success "another user's process: exit 4 naming CAP_SYS_PTRACE" '
	chmod 777 . &&
	expect_exit 4 setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$RSPROF" record --no-heap -p '"$pid"' -o perm.db 2>err &&
	cat err &&
	grep -q "CAP_SYS_PTRACE" err && grep -q "^hint:" err
'
kill $pid

test_expect_success 'unprivileged, own process: heap in-process, CPU recorded' '
	cp "$TARGETS/cpu_split" mine && chmod 755 mine &&
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$RSPROF" record -q -F 199 -o mine.db -- ./mine 0.5 2>err; r=$?;
	cat err;
	p=$(cat /proc/sys/kernel/perf_event_paranoid);
	if [ "$p" -gt 2 ]; then
		test $r = 4 && grep -q "perf_event_paranoid" err
	else
		test $r = 0 && ! grep -qi "heap" err &&
		test "$(sql mine.db "SELECT value FROM meta WHERE key = '\''heap_backend'\''")" = preload &&
		test "$(sql mine.db "SELECT SUM(count) FROM cpu_samples")" -gt 0
	fi
'

test_expect_success 'unprivileged, --heap-backend uprobe: heap unavailable warning, CPU recorded' '
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$RSPROF" record -q -F 199 --heap-backend uprobe -o up.db -- ./mine 0.5 2>err; r=$?;
	cat err;
	p=$(cat /proc/sys/kernel/perf_event_paranoid);
	if [ "$p" -gt 2 ]; then
		test $r = 4 && grep -q "perf_event_paranoid" err
	else
		test $r = 0 && grep -q "heap tracking unavailable: .*CAP_BPF" err &&
		test "$(sql up.db "SELECT SUM(count) FROM cpu_samples")" -gt 0
	fi
'

test_expect_success 'unprivileged --no-cpu --heap-backend uprobe: heap required, exit 4 naming CAP_BPF' '
	expect_exit 4 setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$RSPROF" record --no-cpu --heap-backend uprobe -o nobpf.db -- ./mine 0.2 2>err &&
	cat err &&
	grep -q "CAP_BPF" err && grep -q "^hint:" err && ! test -e nobpf.db
'

test_expect_success 'unprivileged --no-cpu: the in-process tracker needs no BPF' '
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$RSPROF" record -q --no-cpu -o heaponly.db -- ./mine 0.2 &&
	test "$(sql heaponly.db "SELECT value FROM meta WHERE key = '\''heap_backend'\''")" = preload
'

test_done
