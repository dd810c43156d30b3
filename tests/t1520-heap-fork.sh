#!/bin/sh
# A program that forks (issue 8): parent and child both allocate; the
# parent's figures are right and nothing of the child's gets into them.
# With --no-inherit, in-process, the child stops tracking at fork and
# takes the tracker out of its environment: the program it execs does not
# load it, and neither does what a process started through posix_spawn
# (system()) runs. With uprobes the child is another process: not counted
# either. Without --no-inherit (issue 10) the in-process tracker follows
# the tree: the child's allocations are its own rows (its pid), and the
# programs exec'd or spawned load the tracker too.
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

SRC=$TEST_SRC/targets/heap_fork.c

for B in $HEAP_BACKENDS; do
backend_ok $B || continue

test_expect_success "[$B] record -- heap_fork" '
	mkdir -p $B && rm -f $B/child-env $B/spawned-maps &&
	"$RSPROF" record -q --no-cpu --no-inherit --heap-backend $B -o fork-$B.db -- \
		"$TARGETS/heap_fork" "$PWD/$B" &&
	backend_meta fork-$B.db $B &&
	source_lines fork-$B.db "$SRC" >lines-$B && cat lines-$B
'

test_expect_success "[$B] the parent's lines are exact" '
	want_line lines-$B FORK_BEFORE $((32 * 4096)) 64 32 &&
	want_line lines-$B FORK_AFTER $((128 * 4096)) 128 0
'

test_expect_success "[$B] nothing of the child: no churn, no 2 MiB, no frees of what it inherited" '
	! grep -q "^$(line_of FORK_CHILD_CHURN "$SRC")|" lines-$B &&
	! grep -q "^$(line_of FORK_CHILD_KEEP "$SRC")|" lines-$B &&
	test "$(meta fork-$B.db unknown_frees)" = 0 && no_negative_site fork-$B.db
'

test_expect_success "[$B] live heap = sum of the sites" '
	sum=$(sql fork-$B.db "SELECT SUM(alloc_bytes) - SUM(free_bytes) FROM heap_events") &&
	last=$(sql fork-$B.db "SELECT heap_live_bytes FROM checkpoints ORDER BY id DESC LIMIT 1") &&
	echo "sum $sum, live $last" && test "$sum" = "$last"
'
done

case " $HEAP_BACKENDS " in *" preload "*)
test_expect_success '--no-inherit: the child'"'"'s exec and the spawned program'"'"'s children run without the tracker' '
	cat preload/child-env preload/spawned-maps &&
	test "$(cat preload/child-env)" = clean &&
	test "$(cat preload/spawned-maps)" = 0
'

test_expect_success 'the tree (default): the child'"'"'s rows under its own pid' '
	mkdir -p tree &&
	"$RSPROF" record -q --no-cpu --heap-backend preload -o tree.db -- \
		"$TARGETS/heap_fork" "$PWD/tree" &&
	parent=$(sql tree.db "SELECT pid FROM processes WHERE comm = '"'"'heap_fork'"'"'
			      ORDER BY start_ms, pid LIMIT 1") &&
	sql tree.db "SELECT h.pid = $parent, s.line, SUM(h.alloc_bytes) - SUM(h.free_bytes),
			    SUM(h.alloc_count), SUM(h.free_count)
		     FROM heap_events h JOIN symbols s ON h.addr = s.addr
		     WHERE s.file LIKE '"'"'%heap_fork.c'"'"' GROUP BY h.pid = $parent, s.line" >tlines &&
	cat tlines &&
	grep -qx "1|$(line_of FORK_BEFORE "$SRC")|$((32 * 4096))|64|32" tlines &&
	grep -qx "1|$(line_of FORK_AFTER "$SRC")|$((128 * 4096))|128|0" tlines &&
	grep -qx "0|$(line_of FORK_CHILD_KEEP "$SRC")|0|8|8" tlines &&
	test "$(meta tree.db unknown_frees)" = 64 && no_negative_site tree.db
'

test_expect_success 'the tree: the child'"'"'s exec and the spawned program'"'"'s children load the tracker' '
	cat tree/child-env tree/spawned-maps &&
	test "$(cat tree/child-env)" = preloaded &&
	test "$(cat tree/spawned-maps)" -ge 1
'
esac

test_done
