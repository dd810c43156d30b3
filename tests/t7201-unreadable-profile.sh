#!/bin/sh
# A profile that exists but that the user may not read (mode 000, or in a
# directory they cannot search), read by a real unprivileged user: every
# reader exits 4 (permission denied), not 6 (database error), and the hint
# says whose file it is and what to do.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null || ! make_test_user; then
	test_skip 'an unreadable profile' 'needs root, setpriv and useradd (a second user)'
	test_done
fi

chmod 755 "$TEST_DIR"
cp "$RSPROF" rsprof-copy && chmod 755 rsprof-copy

test_expect_success 'record a profile, then make it mode 000' '
	"$RSPROF" record -q -o p.db -- "$TARGETS/cpu_split" 0.3 >/dev/null &&
	chmod 644 p.db && cp p.db closed.db && chmod 000 closed.db &&
	mkdir private && cp p.db private/p.db && chmod 700 private
'

test_expect_success 'every reader: exit 4, "Permission denied", whose file and what to do' '
	for c in "info closed.db" "report closed.db" "timeline closed.db" \
		 "query closed.db SELECT*FROM(meta)" "diff closed.db p.db" "diff p.db closed.db" \
		 "flamegraph -o f.svg closed.db" "annotate --stdio closed.db work_a" \
		 "top --stdio closed.db" "history closed.db --addr 0x1000"; do
		as_test_user ./rsprof-copy $c >out 2>err; r=$?
		{ test $r = 4 && test ! -s out &&
		  grep -q "cannot open .closed.db.: Permission denied$" err &&
		  grep -q "^hint: .closed.db. is mode 0000, owned by uid 0: read it as that user" err; } ||
			{ echo "rsprof $c: exit $r"; cat err; return 1; }
	done
'

test_expect_success 'in a directory the user cannot search: exit 4 and a hint' '
	expect_exit 4 as_test_user ./rsprof-copy report private/p.db >/dev/null 2>err &&
	cat err &&
	grep -q "Permission denied" err && grep -q "^hint: a directory on the path" err
'

# A readable profile whose -wal (left by a writer still running, or killed)
# the user may not read: SQLite says only "unable to open database file".
test_expect_success 'an unreadable -wal beside a readable profile: exit 4 naming it' '
	cp p.db w.db && chmod 644 w.db &&
	python3 -c "import os, sqlite3
c = sqlite3.connect(\"w.db\"); c.execute(\"PRAGMA journal_mode=wal\")
c.execute(\"CREATE TABLE later(x)\"); c.commit(); os._exit(0)" &&
	test -s w.db-wal && chmod 600 w.db-wal && chmod 644 w.db-shm &&
	expect_exit 4 as_test_user ./rsprof-copy report w.db >out 2>err &&
	cat err && test ! -s out &&
	grep -q "cannot read .w.db-wal.: Permission denied$" err &&
	grep -q "^hint: .w.db-wal. is mode 0600, owned by uid 0" err &&
	chmod 644 w.db-wal &&
	as_test_user ./rsprof-copy report w.db >/dev/null
'

test_expect_success 'the same file readable: exit 0; a missing one: still 6' '
	chmod 644 closed.db &&
	as_test_user ./rsprof-copy info closed.db >/dev/null &&
	expect_exit 6 as_test_user ./rsprof-copy info missing.db 2>/dev/null
'

test_done
