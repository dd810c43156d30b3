#!/bin/sh
# report --callers, --callees and -g (issue 14): leaf() is called 3:1 from
# a() and b() (CPU, a `record -g` profile) and keep() retains 3 MiB through
# a and 1 MiB through b (heap stacks): the callers of each show 75 % / 25 %.
. "$(dirname "$0")/lib.sh"

FIXTURE=${FIXTURE:-$(dirname "$RSPROF")/tests/helper/fixture}

# "function share" of the depth-1 rows of a --csv tree.
level1() {
	awk -F, 'NR > 1 && $1 == 1 { print $2, int($4 + 0.5) }'
}

test_expect_success 'a profile without stacks: the call graph says so, exit 1' '
	"$FIXTURE" fix.db &&
	expect_exit 1 "$RSPROF" report --callers hot_loop fix.db >out 2>err &&
	! test -s out &&
	grep -q "no CPU call stacks" err &&
	grep -q "record with -g" err
'

test_expect_success 'bad combinations: exit 2' '
	expect_exit 2 "$RSPROF" report -g --callers x fix.db 2>err &&
	grep -q "one at a time" err &&
	expect_exit 2 "$RSPROF" report --callers x --format folded fix.db 2>/dev/null &&
	expect_exit 2 "$RSPROF" report --callers x --cpu --heap fix.db 2>/dev/null
'

if ! have_perf; then
	test_skip 'call graphs of a recording' 'perf events not allowed here'
	test_done
fi
if ! have_bpf; then
	test_skip 'call graphs of a recording' 'heap tracking needs root and BTF'
	test_done
fi

# User time only: on a loaded machine the kernel samples of being preempted
# land under leaf as its callees, and leaf is then not all self.
test_expect_success 'record -g the callers target' '
	"$RSPROF" record -q -g -F 499 --user-only -o calls.db -- "$TARGETS/callers" 3 >/dev/null &&
	test "$(sql calls.db "SELECT COUNT(*) FROM cpu_stacks")" -gt 0
'

test_expect_success '--callers leaf: a 75 %, b 25 % (+- 8)' '
	"$RSPROF" report --callers leaf --csv calls.db >tree.csv &&
	cat tree.csv &&
	head -1 tree.csv | grep -q "^depth,function,value,share_pct,pct_of_all,call_site$" &&
	sed -n 2p tree.csv | grep -q "^0,leaf," &&
	level1 <tree.csv >lv &&
	cat lv &&
	test "$(wc -l <lv)" = 2 &&
	a=$(awk "\$1 == \"a\" { print \$2 }" lv) && b=$(awk "\$1 == \"b\" { print \$2 }" lv) &&
	test "$a" -ge 67 && test "$a" -le 83 && test "$b" -ge 17 && test "$b" -le 33 &&
	test $((a + b)) -ge 99
'

test_expect_success '--callers leaf as text: the tree, call sites on the CALL lines' '
	LANG=C.UTF-8 LC_ALL=C.UTF-8 "$RSPROF" report --callers leaf calls.db >out &&
	cat out &&
	grep -q "^# callers of leaf: [0-9,]* samples" out &&
	grep -q "Share *Samples *Caller *Call site" out &&
	grep -q "├─ a .*callers.c:$(grep -n "CALL:a" "$TEST_SRC/targets/callers.c" | cut -d: -f1)" out &&
	grep -q "└─ b .*callers.c:$(grep -n "CALL:b" "$TEST_SRC/targets/callers.c" | cut -d: -f1)" out &&
	LANG=C LC_ALL=C "$RSPROF" report --callers leaf calls.db | grep -q "|- a "
'

test_expect_success '--callers --json: nested callers' '
	"$RSPROF" report --callers leaf --json calls.db >t.json &&
	python3 -c "
import json
d = json.load(open(\"t.json\"))
assert d[\"view\"] == \"callers\" and d[\"kind\"] == \"cpu\", d
t = d[\"tree\"]
assert t[\"function\"] == \"leaf\"
names = [c[\"function\"] for c in t[\"callers\"]]
assert names[:2] == [\"a\", \"b\"], names
assert abs(sum(c[\"value\"] for c in t[\"callers\"]) - t[\"value\"]) == 0
assert t[\"callers\"][0][\"callers\"][0][\"function\"] == \"main\"
"
'

test_expect_success '--callees a: leaf, keep and [self], leaf nearly all' '
	"$RSPROF" report --callees a --csv calls.db >ce.csv &&
	cat ce.csv &&
	level1 <ce.csv | awk "\$1 == \"leaf\" { exit !(\$2 >= 90) } END { }" &&
	level1 <ce.csv | grep -q "^leaf "
'

test_expect_success '-g: main holds everything, leaf is all self' '
	"$RSPROF" report -g --csv calls.db >g.csv &&
	cat g.csv &&
	head -1 g.csv | grep -q "^function,total,self,total_pct,self_pct,file,line$" &&
	awk -F, "\$1 == \"main\" { exit !(\$4 >= 95) }" g.csv &&
	awk -F, "\$1 == \"leaf\" { exit !(\$4 >= 90 && \$5 >= 90) }" g.csv &&
	"$RSPROF" report -g -n 3 calls.db >g.txt &&
	cat g.txt &&
	grep -q "^Children *Self *Samples *Function / callees" g.txt
'

test_expect_success 'heap: --heap --callers keep: exactly 75 % / 25 % of the bytes' '
	"$RSPROF" report --heap --callers keep --csv calls.db >h.csv &&
	cat h.csv &&
	level1 <h.csv >lv &&
	grep -qx "a 75" lv && grep -qx "b 25" lv &&
	awk -F, "NR == 2 { exit !(\$3 == 4194304) }" h.csv
'

# A second recording appended to the first has stacks of its own: none of
# its samples may be filed under a stack of the first program.
test_expect_success 'record -g --append: each recording keeps its own stacks' '
	"$RSPROF" record -q -g --no-heap -F 499 -o app.db -- "$TARGETS/cpu_split" 0.3 &&
	first=$(sql app.db "SELECT MAX(id) FROM checkpoints") &&
	"$RSPROF" record -q -g --no-heap -F 499 --append -o app.db -- "$TARGETS/callgraph" 0.3 &&
	test "$(sql app.db "SELECT COUNT(DISTINCT stack_id) FROM cpu_stacks")" = \
	     "$(sql app.db "SELECT COUNT(*) FROM stacks")" &&
	sql app.db "SELECT DISTINCT s.function FROM cpu_stacks c
		JOIN stack_frames f ON f.stack_id = c.stack_id JOIN symbols s ON s.addr = f.addr
		WHERE c.checkpoint_id > $first" >fns &&
	cat fns &&
	grep -qx crunch fns && ! grep -q "^work_" fns
'

test_expect_success 'an unknown function: exit 1; a missing name: exit 2' '
	expect_exit 1 "$RSPROF" report --callers nosuch calls.db 2>err &&
	grep -q "no function .nosuch." err &&
	expect_exit 2 "$RSPROF" report --callers 2>/dev/null
'

# A program that writes and syncs a file: the disk's and the timer's
# interrupts run on its thread. Their samples are not main's work: each
# such stack ends at the kernel's interrupt entry, with no program frame.
irq_stacks="SELECT DISTINCT f.stack_id FROM stack_frames f JOIN symbols s ON s.addr = f.addr
	WHERE s.function LIKE 'asm_sysvec_%' OR s.function LIKE 'asm_common_interrupt%'"
test_expect_success 'interrupt samples: stacks of their own, under the entry' '
	cat >irq.c <<-\EOF &&
	#include <fcntl.h>
	#include <time.h>
	#include <unistd.h>
	static char buf[1 << 16];
	int main(void)
	{
		volatile unsigned long x = 0;
		time_t end = time(NULL) + 4;

		while (time(NULL) < end) {
			int fd = open("irq.tmp", O_WRONLY | O_CREAT | O_TRUNC, 0600);

			for (int i = 0; i < 16; i++)
				if (fd < 0 || write(fd, buf, sizeof(buf)) < 0)
					return 1;
			fsync(fd);
			close(fd);
			for (long i = 0; i < 3000000; i++)
				x += i;
		}
		return unlink("irq.tmp");
	}
	EOF
	gcc -g -O1 -fno-omit-frame-pointer -o irq irq.c &&
	"$RSPROF" record -q -g -F 999 --no-heap -o irq.db -- ./irq &&
	n=$(sql irq.db "SELECT COUNT(*) FROM ($irq_stacks)") &&
	echo "# stacks through an interrupt entry: $n" &&
	test "$n" -ge 1 &&
	# nothing but the kernel in them, and the entry outermost
	test "$(sql irq.db "SELECT COUNT(*) FROM stack_frames f JOIN symbols s ON s.addr = f.addr
		WHERE f.stack_id IN ($irq_stacks) AND (s.module IS NULL OR s.module NOT LIKE '"'"'[kernel%'"'"')")" = 0 &&
	test "$(sql irq.db "SELECT COUNT(*) FROM stack_frames f JOIN symbols s ON s.addr = f.addr
		WHERE f.stack_id IN ($irq_stacks) AND f.pos < (SELECT MAX(pos) FROM stack_frames g
		WHERE g.stack_id = f.stack_id) AND (s.function LIKE '"'"'asm_sysvec_%'"'"'
		OR s.function LIKE '"'"'asm_common_interrupt%'"'"')")" = 0 &&
	"$RSPROF" report -g --cpu -n 100000 -t 0.001 irq.db >out &&
	grep -E "^ +[0-9.]+% +[0-9.]+% +[0-9]+  asm_(sysvec_|common_interrupt)" out &&
	! grep -E "^ .*[─└├].*asm_(sysvec_|common_interrupt)" out
'

test_done
