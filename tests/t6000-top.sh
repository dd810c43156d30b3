#!/bin/sh
# rsprof top: the live view, driven for real in tmux (send-keys, capture-pane),
# the file follower, and the ranking printed once when stdout is no terminal.
. "$(dirname "$0")/lib.sh"

SRC=$TOP/tests/targets/cpu_split.c
LINE_A=$(grep -n '/\* HOT:a \*/' "$SRC" | cut -d: -f1)
LINE_B=$(grep -n '/\* HOT:b \*/' "$SRC" | cut -d: -f1)

# A tmux server of our own, so nothing else's sessions are touched.
TMUX_SOCK=rsprof-t6000-$$
tm() {
	tmux -L "$TMUX_SOCK" "$@"
}
tmux_cleanup() {
	tm kill-server 2>/dev/null
	test_cleanup
}
trap tmux_cleanup EXIT

# start NAME COLS ROWS COMMAND: COMMAND runs in a UTF-8 locale in TEST_DIR;
# its exit status lands in NAME.status.
start() {
	tm new-session -d -s "$1" -x "$2" -y "$3" \
		"cd '$TEST_DIR' && LANG=C.UTF-8 LC_ALL=C.UTF-8 $4; echo \$? > $1.status; sleep 30"
}

screen() {
	tm capture-pane -p -t "$1"
}

# The waits below return as soon as the screen shows what they wait for;
# their bounds (20-30 s) are for a loaded CI runner, where a key may take
# seconds to be read and the screen redrawn. W is that bound.
W=30

# wait_screen NAME SECONDS GREP-ARGS...: until the screen matches.
wait_screen() {
	_n=$1
	_lim=$(( $2 * 10 ))
	shift 2
	_i=0
	while [ $_i -le $_lim ]; do
		screen "$_n" >screen.txt
		grep -q "$@" screen.txt && return 0
		sleep 0.1
		_i=$((_i + 1))
	done
	echo "screen of $_n did not match: $*" >&2
	cat screen.txt >&2
	return 1
}

# wait_row NAME SECONDS PATTERN: until the first data row of the table
# (line 4 of the screen) matches.
wait_row() {
	_i=0
	while [ $_i -le $(( $2 * 10 )) ]; do
		screen "$1" >screen.txt
		sed -n 4p screen.txt | grep -q "$3" && return 0
		sleep 0.1
		_i=$((_i + 1))
	done
	echo "first row of $1 did not match: $3" >&2
	cat screen.txt >&2
	return 1
}

# wait_gone NAME SECONDS PATTERN: until the screen does not show PATTERN
# (a capture may catch a frame half drawn).
wait_gone() {
	_i=0
	while [ $_i -le $(( $2 * 10 )) ]; do
		screen "$1" >screen.txt
		grep -q "$3" screen.txt || return 0
		sleep 0.1
		_i=$((_i + 1))
	done
	echo "screen of $1 still shows: $3" >&2
	cat screen.txt >&2
	return 1
}

# fail_screen NAME MESSAGE: say what was wrong, show the screen, fail.
fail_screen() {
	echo "$2" >&2
	screen "$1" >&2
	return 1
}

# check_file FILE: rsprof info --check, its output shown when it fails.
check_file() {
	"$RSPROF" info --check "$1" >check.out 2>&1 && return 0
	cat check.out >&2
	return 1
}

key() {
	tm send-keys -t "$@"
}

if ! have_perf; then
	test_skip 'rsprof top with a target' 'perf_event_open not allowed'
	test_done
fi

# cpu_split runs 60 s of CPU time: still running when q stops it (test 9)
test_expect_success 'top -- CMD: header and the hottest line on top' '
	start live 120 30 "$RSPROF top -o live.db -- $TARGETS/cpu_split 60" &&
	wait_row live $W "cpu_split.c:$LINE_A" &&
	wait_screen live $W "PID [0-9][0-9]*  cpu_split  99 Hz  heap [a-z]*  elapsed [0-9]" &&
	{ tm capture-pane -e -p -t live | grep -q "$(printf "\033")\[3[0-7]m" ||
		fail_screen live "no colours"; } &&
	wait_screen live $W "samples [0-9,]*  lost [0-9,]* (.*)  live heap .*  peak .*  checkpoints [1-9]" &&
	grep -q "file live.db" screen.txt &&
	grep -q "q quit" screen.txt
'

test_expect_success 'key 2: heap table alone' '
	key live 2 &&
	wait_screen live $W "Live *Peak@cp *Allocs" &&
	wait_gone live $W "CPU%"
'

test_expect_success 'key 1: CPU table alone, wide' '
	key live 1 &&
	wait_screen live $W "CPU% *Samples *Share" &&
	wait_gone live $W "Live"
'

test_expect_success 'key 3: both tables side by side' '
	key live 3 &&
	wait_screen live $W "CPU%.*│ *Live"
'

test_expect_success '/ + pattern + Enter filters, Esc clears' '
	key live / w o r k _ b &&
	wait_screen live $W "filter (path or function): work_b" &&
	key live Enter &&
	wait_screen live $W "filter \"work_b\"" &&
	wait_row live $W "cpu_split.c:$LINE_B" &&
	wait_gone live $W "cpu_split.c:$LINE_A" &&
	key live Escape &&
	wait_row live $W "cpu_split.c:$LINE_A" &&
	wait_gone live $W "filter \""
'

test_expect_success 'p pauses the display, the recording goes on' '
	key live p &&
	wait_screen live $W PAUSED &&
	n1=$(sql live.db "SELECT COUNT(*) FROM checkpoints") &&
	wait_checkpoints live.db $((n1 + 1)) $W &&
	wait_screen live 1 PAUSED &&
	key live p &&
	wait_screen live $W "recording"
'

test_expect_success 'Enter shows the row detail with its chart, Esc closes it' '
	key live Home Enter &&
	wait_screen live $W "CPU location detail" &&
	wait_screen live $W "path .*cpu_split.c" &&
	wait_screen live $W "samples per checkpoint" &&
	key live Escape &&
	wait_gone live $W "CPU location detail" &&
	wait_screen live $W "CPU%"
'

test_expect_success 'h, ? and F1 show the keys; any key closes them' '
	for k in h "?" F1; do
		key live "$k" &&
		wait_screen live $W "rsprof top: keys" &&
		wait_screen live $W "p or Space *pause" &&
		key live x &&
		wait_gone live $W "rsprof top: keys" || exit 1
	done &&
	wait_screen live $W "h help"
'

test_expect_success 'q quits, restores the terminal, and the file is complete' '
	wait_screen live $W "checkpoints [0-9]" &&
	shown=$(sed -n "s/.*checkpoints \([0-9]*\).*/\1/p" screen.txt) &&
	key live q &&
	wait_for_file live.status &&
	test "$(cat live.status)" = 0 &&
	wait_gone live $W "CPU%" &&
	check_file live.db &&
	test -n "$(sql live.db "SELECT value FROM meta WHERE key = '\''end_time'\''")" &&
	echo "checkpoints on screen $shown, in the file $(sql live.db "SELECT COUNT(*) FROM checkpoints")" &&
	test "$(sql live.db "SELECT COUNT(*) FROM checkpoints")" -ge "$shown"
'

test_expect_success 'a annotates the selected row, c shows its callers (issue 14)' '
	"$RSPROF" record -q -g --no-heap -o calls.db -- $TARGETS/callers 2 &&
	start panes 120 30 "$RSPROF top cpu calls.db" &&
	wait_row panes $W "callers.c:.*leaf" &&
	key panes Home a &&
	wait_screen panes $W "annotate leaf" &&
	wait_screen panes $W "HOT:leaf" &&
	grep -q "^# function: leaf" screen.txt &&
	key panes q &&
	wait_gone panes $W "annotate leaf" &&
	wait_screen panes $W "Location" &&
	key panes c &&
	wait_screen panes $W "callers of leaf (CPU stacks)" &&
	wait_screen panes $W "└─ b " &&
	grep -q "Share *Samples *Caller" screen.txt &&
	grep -q "├─ a " screen.txt &&
	key panes Escape &&
	wait_gone panes $W "callers of leaf" &&
	key panes q &&
	wait_for_file panes.status &&
	test "$(cat panes.status)" = 0
'

if have_bpf && test -x "$TARGETS/heap_teardown"; then
	test_expect_success 'the header: one word for the heap from the start, the clock stops at exit' '
		start ex 120 30 "$RSPROF top -o ex.db -- $TARGETS/heap_teardown 1" &&
		wait_screen ex $W "heap_teardown  99 Hz  heap [a-z]*  elapsed" &&
		first=$(sed -n "s/.*99 Hz  heap \([a-z]*\)  elapsed.*/\1/p" screen.txt) &&
		test "$first" = preload &&
		wait_screen ex $W "target exited" &&
		el1=$(sed -n "s/.*elapsed \([^ ]*\) .*/\1/p" screen.txt) &&
		grep -q "heap preload  elapsed" screen.txt &&
		sleep 2.5 &&
		screen ex >screen.txt &&
		el2=$(sed -n "s/.*elapsed \([^ ]*\) .*/\1/p" screen.txt) &&
		echo "elapsed $el1 then $el2" &&
		test "$el1" = "$el2" &&
		key ex q && wait_for_file ex.status
	'
fi

test_expect_success 'a terminal below 80x24 says so; resizing brings the view back' '
	start small 60 20 "$RSPROF top live.db" &&
	wait_screen small $W "terminal too small: 60x20" &&
	grep -q "needs at least 80x24" screen.txt &&
	tm resize-window -t small -x 100 -y 30 &&
	wait_screen small $W "rsprof top  PID" &&
	wait_screen small $W "finished" &&
	key small q &&
	wait_for_file small.status
'

# cpu_split runs 10 s of CPU time: its recording goes on (1 s checkpoints)
# while the follower shows the first ones, however slow the machine.
test_expect_success 'following a file that rsprof record writes: checkpoints rise, then finished' '
	"$RSPROF" record -q -o rec.db -- $TARGETS/cpu_split 10 &
	bg_pid $! &&
	wait_checkpoints rec.db &&
	start follow 100 30 "$RSPROF top rec.db" &&
	wait_screen follow $W "checkpoints [1-9]" &&
	c1=$(sed -n "s/.*checkpoints \([0-9]*\).*/\1/p" screen.txt) &&
	grep -q "following" screen.txt &&
	i=0 && while :; do
		screen follow >screen.txt
		c2=$(sed -n "s/.*checkpoints \([0-9]*\).*/\1/p" screen.txt)
		test "${c2:-0}" -gt "$c1" 2>/dev/null || test $i -ge $((W * 10)) && break
		i=$((i + 1)) && sleep 0.1
	done &&
	echo "checkpoints $c1 then $c2" &&
	test "$c2" -gt "$c1" &&
	wait_screen follow 60 "finished" &&
	key follow q &&
	wait_for_file follow.status &&
	test "$(cat follow.status)" = 0
'

test_expect_success 'ASCII lines when the locale is not UTF-8; no colours with NO_COLOR' '
	tm new-session -d -s ascii -x 100 -y 30 \
		"cd $TEST_DIR && LANG=C LC_ALL=C NO_COLOR=1 $RSPROF top live.db; sleep 30" &&
	wait_screen ascii $W "CPU%.*| *Live" &&
	! grep -q "│" screen.txt &&
	! tm capture-pane -e -p -t ascii | grep -q "$(printf "\033")\[[34][0-7]m" &&
	key ascii q
'

test_expect_success 'top cpu FILE | cat: the table once, exit 0' '
	"$RSPROF" top cpu live.db >out.txt &&
	head -n 1 out.txt | grep -q "CPU%.*Location.*Function" &&
	sed -n 2p out.txt | grep -q "cpu_split.c:$LINE_A" &&
	! grep -q "Heap" out.txt &&
	test "$(wc -l <out.txt)" -le 21 &&
	"$RSPROF" top cpu live.db | head -n 2 >out2.txt &&
	test "$(wc -l <out2.txt)" = 2
'

test_expect_success 'TERM=dumb on a terminal: the table once, exit 0' '
	start dumb 100 30 "TERM=dumb $RSPROF top cpu live.db" &&
	wait_for_file dumb.status &&
	test "$(cat dumb.status)" = 0 &&
	wait_screen dumb $W "CPU%  Location" &&
	grep -q "cpu_split.c:$LINE_A" screen.txt
'

test_expect_success 'bad arguments: exit 2' '
	expect_exit 2 "$RSPROF" top --window=soon live.db 2>err &&
	grep -q "window" err &&
	expect_exit 2 "$RSPROF" top live.db rec.db 2>err &&
	expect_exit 2 "$RSPROF" top -p 1 -- true 2>err
'

test_expect_success 'a missing file: exit 6, no screen' '
	expect_exit 6 "$RSPROF" top --stdio no-such.db 2>err &&
	grep -q "no-such.db" err
'

test_done
