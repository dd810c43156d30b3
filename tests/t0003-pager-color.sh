#!/bin/sh
# The pager and colours of the commands that print reports: on a terminal
# (a pty from script(1)) the output goes through $RSPROF_PAGER with
# colours, as git and perf do; --no-pager, PAGER=cat, a pipe, --color and
# NO_COLOR each change that as documented; the exit status stays rsprof's.
. "$(dirname "$0")/lib.sh"

FIXTURE=${FIXTURE:-$(dirname "$RSPROF")/tests/helper/fixture}

if ! command -v script >/dev/null 2>&1; then
	test_skip 'the pager' 'script(1) (util-linux) is not installed'
	test_done
fi

# on_tty CMD...: run CMD on a pseudo-terminal, its status kept; the pager
# (when it runs) copies what it gets to paged.txt
on_tty() {
	rm -f paged.txt
	TERM=xterm COLUMNS=100 RSPROF_PAGER="cat >$PWD/paged.txt" \
		script -qec "$*" /dev/null >tty.txt 2>&1
}

esc=$(printf '\033')

test_expect_success 'fixture profile' '
	"$FIXTURE" p.db
'

test_expect_success 'on a terminal: report goes through the pager, in colour' '
	on_tty "\"$RSPROF\" report p.db" &&
	test -s paged.txt &&
	grep -q "CPU%" paged.txt &&
	grep -q "$esc\[1m" paged.txt &&
	grep -q "$esc\[1;31m" paged.txt &&
	! grep -q "CPU%" tty.txt
'

test_expect_success 'diff, timeline and query are paged too; errors and status kept' '
	on_tty "\"$RSPROF\" diff p.db p.db" && grep -q "identical\|no change" paged.txt &&
	on_tty "\"$RSPROF\" timeline p.db" && test -s paged.txt &&
	on_tty "\"$RSPROF\" query p.db \"SELECT 1 AS one\"" && grep -q one paged.txt &&
	expect_exit 6 on_tty "\"$RSPROF\" report missing.db" &&
	grep -q "cannot open" paged.txt
'

test_expect_success '--no-pager and PAGER=cat: straight to the terminal' '
	on_tty "\"$RSPROF\" report --no-pager p.db" &&
	! test -e paged.txt && grep -q "CPU%" tty.txt &&
	rm -f paged.txt &&
	TERM=xterm PAGER=cat script -qec "\"$RSPROF\" report p.db" /dev/null >tty.txt 2>&1 &&
	! test -e paged.txt && grep -q "CPU%" tty.txt && grep -q "$esc\[" tty.txt
'

test_expect_success 'not a terminal: no pager, no colour' '
	rm -f paged.txt &&
	RSPROF_PAGER="cat >$PWD/paged.txt" TERM=xterm "$RSPROF" report p.db >out &&
	! test -e paged.txt && grep -q "CPU%" out && ! grep -q "$esc" out
'

test_expect_success '--color=always, never, NO_COLOR' '
	"$RSPROF" report --color=always p.db >out && grep -q "$esc\[1m" out &&
	on_tty "\"$RSPROF\" report --color=never p.db" && ! grep -q "$esc" paged.txt &&
	on_tty "NO_COLOR=1 \"$RSPROF\" report p.db" && ! grep -q "$esc" paged.txt &&
	on_tty "NO_COLOR=1 \"$RSPROF\" report --color=always p.db" && grep -q "$esc" paged.txt
'

test_expect_success 'a bad --color: exit 2, the values named' '
	expect_exit 2 "$RSPROF" report --color=sometimes p.db 2>err &&
	grep -q "auto, always or never" err
'

test_done
