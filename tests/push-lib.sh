# tests/push-lib.sh — the loopback store of the push tests (sourced after lib.sh).
#
#   start_receiver DIR [--port P] [--fail N] [--status S]
#       tests/push-receiver.py in the background, killed at the end; sets
#       RPORT and RPID once it listens. Outside a test's body: the body
#       runs in a subshell, which would keep them (and the PID to kill).
#   stop_receiver        the last one started
#   free_port            a TCP port nobody listens on now
#   pcheck DIR CMD...    tests/push-check.py: what the store received
#   total_of FILE KEY    report --json's number KEY (cpu.total_samples...)

if ! command -v python3 >/dev/null; then
	test_skip 'push tests' 'python3 missing (scripts/packages.txt, test group)'
	test_done
fi

start_receiver() {
	_rdir=$1
	shift
	mkdir -p "$_rdir"
	rm -f "$_rdir/port"
	python3 "$TEST_SRC/push-receiver.py" "$_rdir" "$@" >>"$_rdir.stderr" 2>&1 &
	RPID=$!
	test_bg_pids="$test_bg_pids $RPID"
	wait_for_file "$_rdir/port" 60 || { echo "the receiver did not start" >&2; return 1; }
	RPORT=$(cat "$_rdir/port")
}

stop_receiver() {
	kill "$RPID" 2>/dev/null
	wait "$RPID" 2>/dev/null
	return 0
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

pcheck() {
	python3 "$TEST_SRC/push-check.py" "$@"
}

total_of() {	# FILE KEY.KEY...
	"$RSPROF" report --json -n 1 "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
for k in sys.argv[1].split("."):
    d = d[k]
print(d)' "$2"
}
