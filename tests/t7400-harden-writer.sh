#!/bin/sh
# Issue 11, items 6, 7 and 9: nothing recorded is lost or misreported. The
# .db alone holds every finished checkpoint after SIGKILL but at most the
# last one (the WAL thread copies each checkpoint into the .db after its
# commit, and the writer waits for that copy before the next); a second writer
# is refused; a profile deleted or replaced mid-run, or a full disk, is an
# error (exit 6) and the summary never says "written"; output errors exit 6.
. "$(dirname "$0")/lib.sh"

if ! have_perf; then
	test_skip 'record: writer hardening' 'perf events not allowed here'
	test_done
fi

"$TARGETS/cpu_split" 600 &	# killed at the end
pid=$!
bg_pid $pid
wait_exec $pid "$TARGETS/cpu_split"

cps() {	# checkpoints in FILE as SQLite reads it (WAL included)
	sqlite3 -readonly "$1" "SELECT COUNT(*) FROM checkpoints"
}

test_expect_success 'SIGKILL at random moments: the .db copied alone holds all checkpoints but at most the last' '
	for i in 1 2 3 4 5; do
		"$RSPROF" record -q --no-heap -F 499 -i 100ms -p '"$pid"' -o k$i.db &
		rec=$! &&
		wait_checkpoints k$i.db &&
		sleep "$(python3 -c "import random; random.seed($i); print(0.3 + random.random() * 1.5)")" &&
		kill -9 $rec && { wait $rec; true; } &&
		cp k$i.db alone$i.db &&
		alone=$("$RSPROF" query alone$i.db "SELECT COUNT(*) FROM checkpoints" | tail -1 | tr -d " ") &&
		all=$(cps k$i.db) &&
		echo "kill $i: $alone checkpoints in the .db alone, $all with its WAL" &&
		test "$alone" -ge 1 && test "$alone" -ge $((all - 1)) &&
		"$RSPROF" info alone$i.db >/dev/null &&
		sqlite3 -bail alone$i.db <"$TEST_SRC/seed000.sql" >/dev/null || exit 1
	done
'

test_expect_success 'a second record --append into a profile being written: refused (exit 6)' '
	"$RSPROF" record -q --no-heap -i 100ms -d 5 -p '"$pid"' -o c.db &
	rec=$! &&
	wait_checkpoints c.db &&
	expect_exit 6 "$RSPROF" record -q --no-heap -d 0.5 --append -p '"$pid"' -o c.db 2>err;
	r=$?; cat err; wait $rec && test $r = 0 &&
	grep -q "another rsprof is recording into it" err &&
	test "$(sql c.db "SELECT COUNT(*) FROM meta WHERE key = '\''appended_pid'\''")" = 0 &&
	test "$(sql c.db "SELECT COUNT(*) FROM checkpoints a JOIN checkpoints b
		ON b.id = a.id + 1 WHERE b.timestamp_ms <= a.timestamp_ms")" = 0
'

test_expect_success '--append after the first recording ended: accepted' '
	"$RSPROF" record -q --no-heap -d 0.5 --append -p '"$pid"' -o c.db &&
	test "$(sql c.db "SELECT COUNT(*) FROM meta WHERE key = '\''appended_pid'\''")" = 1
'

test_expect_success 'the profile deleted mid-run: exit 6, the loss said, no "written"' '
	"$RSPROF" record --no-heap -i 100ms -d 3 -p '"$pid"' -o del.db 2>err &
	rec=$! &&
	wait_checkpoints del.db && rm del.db &&
	{ wait $rec; r=$?; true; } && cat err && test $r = 6 &&
	grep -q "was deleted" err && ! grep -q "profile written" err
'

test_expect_success 'the profile replaced mid-run: exit 6, no "written"' '
	"$RSPROF" record --no-heap -i 100ms -d 3 -p '"$pid"' -o rep.db 2>err &
	rec=$! &&
	wait_checkpoints rep.db && cp c.db other.db && mv other.db rep.db &&
	{ wait $rec; r=$?; true; } && cat err && test $r = 6 &&
	grep -q "replaced" err && ! grep -q "profile written" err
'

if [ "$(id -u)" = 0 ] && mkdir full && mount -t tmpfs -o size=1m tmpfs full 2>/dev/null; then
	test_expect_success 'disk full while recording: exit 6, no "written"' '
		"$RSPROF" record --no-heap -F 999 -i 50ms -d 20 -p '"$pid"' -o full/f.db 2>err &
		rec=$! &&
		wait_checkpoints full/f.db &&
		{ dd if=/dev/zero of=full/filler bs=4k 2>/dev/null; true; } &&
		{ wait $rec; r=$?; true; } && cat err && ls -la full && test $r = 6 &&
		grep -q "full" err && ! grep -q "profile written" err
	'
	umount full
	# smaller than the new file's first image (37 KB in 1 KiB pages)
	mkdir tiny && mount -t tmpfs -o size=16k tmpfs tiny &&
	test_expect_success 'disk full at the start: exit 6, nothing left behind' '
		expect_exit 6 "$RSPROF" record --no-heap -d 1 -p '"$pid"' -o tiny/g.db 2>err; r=$?;
		cat err; ls -la tiny; test $r = 0 &&
		! test -e tiny/g.db && ! test -e tiny/g.db-wal && ! test -e tiny/g.db-shm
	'
	umount tiny
else
	test_skip 'disk full on a small tmpfs' 'needs root to mount a tmpfs'
fi

test_expect_success 'exit codes: --append without -o 2, a missing directory 6, an existing file 6' '
	expect_exit 2 "$RSPROF" record --append -p '"$pid"' -d 0.2 2>err &&
	grep -q "append" err &&
	expect_exit 6 "$RSPROF" record -q --no-heap -p '"$pid"' -d 0.2 -o nodir/x.db &&
	expect_exit 6 "$RSPROF" record -q --no-heap -p '"$pid"' -d 0.2 -o c.db
'

# A reader that opens the file the moment it is a WAL database (a poller,
# `rsprof top`) makes the -shm it misses; rsprof made its companions after
# the first image then, and refused that -shm ("a file of that name
# exists": 3 of 80 starts failed so). Now they come first.
test_expect_success 'a reader polling the file as it is made: every recording starts' '
	fails=0 &&
	for i in $(seq 30); do
		rm -f r.db r.db-wal r.db-shm
		( while [ ! -s r.db ]; do :; done
		  for k in 1 2 3 4 5 6 7 8; do
			sqlite3 -readonly r.db "SELECT COUNT(*) FROM meta" >/dev/null 2>&1
		  done ) &
		rp=$!
		"$RSPROF" record -q --no-heap -d 100ms -p '"$pid"' -o r.db 2>race.err ||
			{ fails=$((fails + 1)); cat race.err; }
		wait $rp
	done &&
	test "$fails" = 0
'

if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && make_test_user &&
   [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 2 ]; then
	test_expect_success 'a directory the user may not write: exit 6, not 4' '
		chmod 755 "$TEST_DIR" && mkdir ro && chmod 755 ro &&
		# a copy the user can run: the build may sit where only root reaches
		# (a clone in /root, as scripts/fresh-check.sh makes)
		cp "$TARGETS/cpu_split" "$TEST_DIR/cpu_split" && chmod 755 "$TEST_DIR/cpu_split" &&
		expect_exit 6 as_test_user "$RSPROF" record -q --no-heap -o ro/x.db \
			-- "$TEST_DIR/cpu_split" 0.1 2>err; r=$?; cat err; test $r = 0
	'
else
	test_skip 'output permission denied as a user' 'needs root, useradd and perf_event_paranoid <= 2'
fi

test_done
