#!/bin/sh
# Injecting the heap tracker into a running process never widens who can
# do what: an unprivileged user, with a plain rsprof or the README's setcap
# install (cap_perfmon,cap_bpf), is refused root's process and another
# user's with the reason (the may-trace check comes before any ptrace:
# nothing is put into them), and injects into their own process without
# any capability. The tracker's memfds are no file anyone else can open.
# The region is read as hostile input: a process that writes garbage over
# its layout and its sites cannot make rsprof (root) fail.
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

if [ "$(id -u)" != 0 ] || ! command -v setcap >/dev/null || ! command -v setpriv >/dev/null ||
   ! make_test_user; then
	test_skip 'injection and privileges' 'needs root, setcap, setpriv and useradd'
	test_done
fi
# a second user, whose process the first is refused
OTHER_USER=rsprof-o$$
useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
	"$OTHER_USER" >/dev/null 2>&1 || { test_skip 'another user' 'useradd failed'; test_done; }
test_users="$test_users $OTHER_USER"
OTHER_UID=$(id -u "$OTHER_USER") && OTHER_GID=$(id -g "$OTHER_USER")

chmod 755 "$TEST_DIR"
mkdir out && chown "$TEST_USER" out
cp "$RSPROF" rsprof-plain && chmod 755 rsprof-plain
cp "$RSPROF" rsprof-cap && chmod 755 rsprof-cap &&
setcap cap_perfmon,cap_bpf+ep rsprof-cap || { test_skip 'setcap' 'setcap failed here'; test_done; }
cp "$TARGETS/heap_inject" target && chmod 755 target
mkdir rd && chmod 1777 rd

user() { (cd out && as_test_user "$@"); }

# run_as UID GID MODE: the target as that user, in the background; prints its PID
run_as() {
	setpriv --reuid="$1" --regid="$2" --clear-groups --inh-caps=-all \
		"$TEST_DIR/target" steady "$TEST_DIR/rd/$3" 30000 >/dev/null &
	bg_pid $!
	wait_for_file "rd/$3"
}

# no_tracker PID: nothing of rsprof's in the process
no_tracker() {
	! grep -q "librsprof-heap\|rsprof-heap-region" /proc/$1/maps
}

run_as 0 0 root; rootp=$!
run_as "$OTHER_UID" "$OTHER_GID" other; otherp=$!
run_as "$TEST_UID" "$TEST_GID" own; own=$!

for r in plain cap; do
	test_expect_success "rsprof-$r as a user, root's process: refused (exit 4), nothing put into it" '
		user ../rsprof-'$r' record -q -d 1 -p $rootp -o root.db 2>err; r=$?;
		cat err; test $r = 4 && grep -q "belongs to user 0: tracing it needs CAP_SYS_PTRACE" err &&
		no_tracker $rootp
	'
	test_expect_success "rsprof-$r as a user, another user's process: refused (exit 4)" '
		user ../rsprof-'$r' record -q -d 1 --heap-backend inject -p $otherp -o other.db 2>err;
		r=$?; cat err; test $r = 4 &&
		grep -q "belongs to user $OTHER_UID: tracing it needs CAP_SYS_PTRACE" err &&
		no_tracker $otherp
	'
done

test_expect_success 'their own process: the tracker injected without any capability' '
	user ../rsprof-plain record -q --no-cpu -d 1 -p $own -o own.db 2>err; r=$?;
	cat err; test $r = 0 && test "$(meta out/own.db heap_backend)" = inject &&
	test "$(sql out/own.db "SELECT SUM(alloc_count) FROM heap_events")" -gt 0 &&
	test -z "$(find /dev/shm /tmp /var/tmp -maxdepth 1 -user $TEST_USER 2>/dev/null)"
'

test_expect_success 'its memfds: no path, no fd left open, another user cannot open them' '
	grep "memfd:librsprof-heap" /proc/$own/maps &&
	! ls -l /proc/$own/fd | grep memfd &&
	! setpriv --reuid="$OTHER_UID" --regid="$OTHER_GID" --clear-groups --inh-caps=-all \
		cat /proc/$own/map_files/* >/dev/null 2>&1
'

kill $rootp $otherp $own 2>/dev/null

test_expect_success 'a process writing garbage over the region: rsprof (root) finishes, the file reads' '
	rm -f ready.s &&
	"$TARGETS/heap_inject" scribble "$PWD/ready.s" 3000 >scribble.out &
	sp=$! && bg_pid $sp &&
	wait_for_file ready.s &&
	"$RSPROF" record -q -i 200ms -d 3 -p $sp -o hostile.db &&
	wait $sp && grep "scribble: [0-9]" scribble.out &&
	"$RSPROF" report hostile.db >/dev/null && "$RSPROF" info hostile.db >/dev/null
'

if [ -n "${RSPROF_SAN:-}" ] && [ -x "$RSPROF_SAN" ]; then
	test_expect_success 'the same under ASan and UBSan' '
		rm -f ready.s &&
		"$TARGETS/heap_inject" scribble "$PWD/ready.s" 3000 >scribble.out &
		sp=$! && bg_pid $sp &&
		wait_for_file ready.s &&
		"$RSPROF_SAN" record -q -i 200ms -d 3 -p $sp -o hostile-san.db &&
		wait $sp && "$RSPROF_SAN" report hostile-san.db >/dev/null
	'
else
	test_skip 'the same under ASan and UBSan' 'RSPROF_SAN (make test) names no sanitizer build'
fi

test_done
