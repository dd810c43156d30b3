#!/bin/sh
# Dispatcher: the command table, --version, help, unknown commands.
. "$(dirname "$0")/lib.sh"

test_expect_success 'bare rsprof lists the commands' '
	"$RSPROF" >out &&
	for c in record top report diff timeline info query help; do
		grep -q "^   $c " out || exit 1
	done
'

test_expect_success '--version prints the version' '
	"$RSPROF" --version | grep -q "^rsprof version [0-9]"
'

test_expect_success '--list-cmds lists every command once' '
	"$RSPROF" --list-cmds >out &&
	n=$(ls "$TOP"/builtin/*.c | wc -l) &&
	test "$(wc -l <out)" -eq $n &&
	test "$(sort -u out | wc -l)" -eq $n
'

test_expect_success 'unknown command: exit 2 and the nearest one' '
	expect_exit 2 "$RSPROF" recrod 2>err &&
	grep -q "not an rsprof command" err &&
	grep -q "record" err
'

test_expect_success 'unknown global option: exit 2' '
	expect_exit 2 "$RSPROF" --bogus 2>err &&
	grep -q "unknown option" err
'

test_expect_success 'every command has -h with a usage line, exit 0' '
	for c in $("$RSPROF" --list-cmds); do
		"$RSPROF" $c -h >out 2>&1 || { echo "$c -h failed"; exit 1; }
		grep -q "Usage: rsprof $c" out || { echo "$c: no usage"; cat out; exit 1; }
	done
'

test_expect_success 'a bad option is exit 2 with the option named' '
	for c in $("$RSPROF" --list-cmds); do
		expect_exit 2 "$RSPROF" $c --no-such-option 2>err || exit 1
		grep -q -- "--no-such-option" err || { echo "$c"; cat err; exit 1; }
	done
'

test_expect_success 'rsprof help CMD shows the manual of every command' '
	for c in $("$RSPROF" --list-cmds); do
		"$RSPROF" help $c </dev/null >out 2>&1 || { echo "help $c failed"; cat out; exit 1; }
		grep -q "rsprof-$c" out || { echo "help $c: not the page"; exit 1; }
	done
'

test_expect_success 'rsprof help of an unknown topic: exit 2' '
	expect_exit 2 "$RSPROF" help recrod 2>err &&
	grep -q "record" err
'

test_expect_success 'readers with no profile given and none here: exit 6' '
	for c in report info timeline top; do
		expect_exit 6 "$RSPROF" $c </dev/null >/dev/null 2>err || { echo "$c"; exit 1; }
		grep -q "no rsprof.\*.db in the current directory" err || { echo "$c"; cat err; exit 1; }
	done &&
	expect_exit 6 "$RSPROF" annotate main </dev/null >/dev/null 2>err &&
	grep -q "no rsprof.\*.db in the current directory" err &&
	expect_exit 6 "$RSPROF" history --addr 1 </dev/null >/dev/null 2>err &&
	grep -q "no rsprof.\*.db in the current directory" err
'

test_expect_success 'a failed write to stdout is exit 1' '
	expect_exit 1 "$RSPROF" --version >/dev/full 2>/dev/null
'

test_done
