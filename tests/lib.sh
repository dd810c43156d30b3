# tests/lib.sh — sourced by every tests/tNNNN-*.sh (after git's t/test-lib.sh).
#
#   . "$(dirname "$0")/lib.sh"
#   test_expect_success 'title' 'commands'
#   test_skip 'title' 'reason'      only outside CI; on CI a skip is a failure
#   test_done
#
# Each script runs in its own scratch directory ($TEST_DIR), removed at the end
# unless the script failed (then its path is printed) or KEEP=1.
# $RSPROF is the binary under test, $TARGETS the directory of built targets.

set -u

TEST_SRC=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$TEST_SRC/.." && pwd)
: "${RSPROF:=$TOP/out/rsprof}"
: "${TARGETS:=$TOP/out/targets}"
# The rustc the targets were built with: make exports it; by hand, the
# Makefile's choice (PATH, then ~/.cargo/bin, then Debian's).
if [ -z "${RUSTC:-}" ]; then
	RUSTC=$(command -v rustc || { [ -x "$HOME/.cargo/bin/rustc" ] && echo "$HOME/.cargo/bin/rustc"; } ||
		echo /usr/bin/rustc)
fi
export RSPROF TARGETS RUSTC
TEST_NAME=$(basename "$0" .sh)
TEST_DIR=$(mktemp -d "${TMPDIR:-/tmp}/rsprof-$TEST_NAME.XXXXXX")
cd "$TEST_DIR" || exit 1
# perf's build-id cache per test script: two perf record runs of prove -j2
# writing ~/.debug at once make Debian's perf 6.1 abort
# (util/build-id.c:1010, "stack smashing detected")
PERF_BUILDID_DIR=$TEST_DIR/.debug
export PERF_BUILDID_DIR

test_count=0
test_failures=0
test_bg_pids=
test_users=

# Kill what a test left running (targets launched in the background).
test_cleanup() {
	for p in $test_bg_pids; do
		kill -9 "$p" 2>/dev/null
	done
	for p in $test_bg_pids; do
		wait "$p" 2>/dev/null
	done
	# userdel refuses while a process of the user is still going away
	for u in $test_users; do
		_i=0
		while ! userdel "$u" 2>/dev/null && [ $_i -lt 50 ]; do
			_i=$((_i + 1))
			sleep 0.2
		done
	done
	if [ "$test_failures" -eq 0 ] && [ "${KEEP:-0}" != 1 ]; then
		cd / && rm -rf "$TEST_DIR"
	else
		echo "# scratch directory kept: $TEST_DIR"
	fi
}
trap test_cleanup EXIT

# Remember a background PID so it is killed at the end: bg_pid $!
# It also waits (up to 60 s: a loaded CI runner) until that child of the
# shell has run its exec: before, /proc/PID/exe is the shell, and
# `record -p PID` would profile /bin/dash (exit 5, "no debug information").
#
# Waits in the tests poll for what they wait for and give up only after
# a generous bound (60 s): on a busy machine a step may take seconds, and
# a wait that returns early on success costs nothing when it is quick.
bg_pid() {
	test_bg_pids="$test_bg_pids $1"
	bg_sh=$(readlink /proc/$$/exe)
	bg_i=0
	while [ $bg_i -lt 1200 ] && bg_exe=$(readlink /proc/$1/exe 2>/dev/null) &&
	      [ "$bg_exe" = "$bg_sh" ]; do
		sleep 0.05
		bg_i=$((bg_i + 1))
	done
}

say() {
	echo "# $*"
}

test_ok() {
	test_count=$((test_count + 1))
	echo "ok $test_count - $1"
}

test_not_ok() {
	test_count=$((test_count + 1))
	test_failures=$((test_failures + 1))
	echo "not ok $test_count - $1"
}

test_expect_success() {
	_title=$1
	_body=$2
	_out=$TEST_DIR/.out.$((test_count + 1))
	if (eval "$_body") >"$_out" 2>&1; then
		test_ok "$_title"
		[ "${VERBOSE:-0}" = 1 ] && sed 's/^/# /' "$_out"
	else
		test_not_ok "$_title"
		# on stderr too: prove shows it without -v, so a CI log says why
		sed 's/^/# /' "$_out" | tail -n 60
		{ echo "# $TEST_NAME: not ok $test_count - $_title"; sed 's/^/#   /' "$_out" | tail -n 30; } >&2
	fi
	return 0
}

# A missing feature: a skip outside CI, a failure on CI (DEVELOPERS.md).
test_skip() {
	if [ -n "${CI:-}" ]; then
		test_not_ok "$1 (needed on CI: $2)"
	else
		test_count=$((test_count + 1))
		echo "ok $test_count # skip $1: $2"
	fi
}

test_done() {
	echo "1..$test_count"
	[ "$test_failures" -eq 0 ]
	exit $?
}

# --- helpers used by the checks --------------------------------------------

# expect_exit CODE command args...: run, compare the exit status.
expect_exit() {
	_want=$1
	shift
	"$@"
	_got=$?
	if [ "$_got" != "$_want" ]; then
		echo "expected exit $_want, got $_got: $*" >&2
		return 1
	fi
	return 0
}

# Wait until a file exists (up to $2 seconds, default 60).
wait_for_file() {
	_i=0
	_lim=$(( ${2:-60} * 10 ))
	while [ ! -e "$1" ]; do
		_i=$((_i + 1))
		[ $_i -gt $_lim ] && return 1
		sleep 0.1
	done
	return 0
}

# A program started with `prog &` is a forked shell until it has exec'd:
# wait_exec PID PROG waits (up to 60 s) until /proc/PID/exe is PROG.
wait_exec() {
	_want=$(readlink -f "$2")
	_i=0
	while [ "$(readlink /proc/"$1"/exe 2>/dev/null)" != "$_want" ]; do
		_i=$((_i + 1))
		[ $_i -gt 1200 ] && { echo "process $1 did not exec $2" >&2; return 1; }
		sleep 0.05
	done
	return 0
}

# wait_checkpoints FILE [N [SECONDS]]: until a profile being recorded holds
# N checkpoints (default 1; up to SECONDS, default 60): the recorder is then
# attached and in its loop, where a fixed sleep would only guess. (Read
# only, once the file is there: sqlite3 would create it, and rsprof never
# writes over a file.)
wait_checkpoints() {
	_i=0
	_lim=$(( ${3:-60} * 10 ))
	while :; do
		_n=0
		[ -s "$1" ] && _n=$(sqlite3 -readonly -batch -noheader "$1" \
			"SELECT COUNT(*) FROM checkpoints" 2>/dev/null)
		case $_n in ''|*[!0-9]*) _n=0 ;; esac
		[ "$_n" -ge "${2:-1}" ] && return 0
		_i=$((_i + 1))
		if [ $_i -gt $_lim ]; then
			echo "$1: fewer than ${2:-1} checkpoints after ${3:-60} s" >&2
			return 1
		fi
		sleep 0.1
	done
	return 0
}

# sql FILE 'SELECT ...': one value or a table with | separators.
sql() {
	sqlite3 -batch -noheader "$1" "$2"
}

# Can this machine record? (root or enough capabilities, perf_event_open)
have_perf() {
	[ "$(id -u)" = 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 1 ]
}

have_bpf() {
	[ "$(id -u)" = 0 ] && [ -r /sys/kernel/btf/vmlinux ]
}

# unwrap FILE: a report's header as one line per key again (a header line
# longer than the width goes on under its value: "#" and two blanks or more)
unwrap() {
	sed -e ':a' -e 'N' -e '$!ba' -e 's/\n#  \+/ /g' "$1"
}

# A version-1 profile (seed 000's schema as written: no totals columns, no
# counts, no module): the readers compute what version 2 precomputes.
make_v1() {	# FILE
	sqlite3 "$1" "
	CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
	CREATE TABLE checkpoints (id INTEGER PRIMARY KEY, timestamp_ms INTEGER NOT NULL);
	CREATE TABLE symbols (addr INTEGER PRIMARY KEY, file TEXT, line INTEGER, function TEXT);
	CREATE TABLE cpu_samples (checkpoint_id INTEGER NOT NULL, addr INTEGER NOT NULL,
		count INTEGER NOT NULL);
	CREATE TABLE heap_events (checkpoint_id INTEGER NOT NULL, addr INTEGER NOT NULL,
		alloc_bytes INTEGER NOT NULL DEFAULT 0, free_bytes INTEGER NOT NULL DEFAULT 0);
	INSERT INTO meta VALUES ('version', '1'), ('pid', '1'), ('process_name', 'x'),
		('exe_path', '/x'), ('start_time', '2025-01-01T00:00:00Z'),
		('checkpoint_interval_ms', '1000'), ('cpu_freq_hz', '99');
	INSERT INTO checkpoints VALUES (1, 1000), (2, 2000), (3, 3000);
	INSERT INTO symbols VALUES (1, '/s/a.c', 10, 'f'), (2, '/s/b.c', 20, 'g');
	INSERT INTO cpu_samples VALUES (1, 1, 5), (2, 1, 7), (3, 2, 9);
	INSERT INTO heap_events VALUES (1, 2, 100, 0), (2, 2, 100, 0), (3, 2, 100, 50),
		(3, 1, 1000, 0);"
}

# A real unprivileged user for the permission tests, made with useradd and
# removed at the end (root only): sets TEST_USER, TEST_UID, TEST_GID.
make_test_user() {
	TEST_USER=rsprof-t$$
	useradd --system --no-create-home --home-dir /nonexistent \
		--shell /usr/sbin/nologin "$TEST_USER" >/dev/null 2>&1 || return 1
	test_users="$test_users $TEST_USER"
	TEST_UID=$(id -u "$TEST_USER") && TEST_GID=$(id -g "$TEST_USER")
}

# as_test_user CMD...: run CMD as $TEST_USER, without root's capabilities
# (a file capability of CMD itself still applies, as for a user's shell).
as_test_user() {
	setpriv --reuid="$TEST_UID" --regid="$TEST_GID" --clear-groups --inh-caps=-all "$@"
}
