#!/bin/sh
# Allocation wrappers (issue 9) in a C program built -O2
# -fomit-frame-pointer (tests/targets/nofp_wrap.c): four callers keep 8, 4,
# 2 and 1 MiB through a wrapper. With a wrapper named like none of the
# built-in ones (pool_take, or take_inline inlined into its callers),
# report names it and the option; report
# --alloc-fn re-attributes the stored stacks to the callers without
# touching the file; record --alloc-fn does it at record time and keeps the
# pattern for report. With xmalloc, a built-in name, no option is needed.
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

if ! have_bpf; then
	test_skip 'allocation wrappers' 'needs root and kernel BTF'
	test_done
fi

SRC=$TEST_SRC/targets/nofp_wrap.c
L_NAMES=$(line_of WRAP_NAMES "$SRC")
L_TABLE=$(line_of WRAP_TABLE "$SRC")
L_BUF=$(line_of WRAP_BUF "$SRC")
L_NODES=$(line_of WRAP_NODES "$SRC")
MiB=1048576

# heap_rows FILE [OPTION...]: "line,live_bytes,function" of report --heap --csv
heap_rows() {
	_f=$1
	shift
	"$RSPROF" report --heap --csv -n 100 "$@" "$_f" | awk -F, '$1 == "heap" { print $12 "," $4 "," $13 }'
}

# callers_right ROWS: the callers of 8, 4 and 2 MiB on top, in order, and
# the one of 1 MiB (beside the 1 MiB calloc of names' array), each within
# 10% of its bytes
callers_right() {
	sed -n 1p "$1" | grep -q "^$L_NAMES,.*,names$" &&
	sed -n 2p "$1" | grep -q "^$L_TABLE,.*,table$" &&
	sed -n 3p "$1" | grep -q "^$L_BUF,.*,buf$" &&
	within "$(sed -n 1p "$1" | cut -d, -f2)" $((8 * MiB)) 10 &&
	within "$(sed -n 2p "$1" | cut -d, -f2)" $((4 * MiB)) 10 &&
	within "$(sed -n 3p "$1" | cut -d, -f2)" $((2 * MiB)) 10 &&
	within "$(grep "^$L_NODES," "$1" | cut -d, -f2)" $((1 * MiB)) 10
}

test_expect_success 'the target has no frame pointers' '
	! objdump -d "$TARGETS/nofp_wrap" | grep -A3 "<pool_take>:" | grep -q "mov *%rsp,%rbp"
'

test_expect_success 'record the custom wrapper: its line holds the heap' '
	"$RSPROF" record -q --no-cpu -o custom.db -- "$TARGETS/nofp_wrap" custom >/dev/null &&
	heap_rows custom.db >rows 2>err && cat rows &&
	sed -n 1p rows | grep -q ",pool_take$" &&
	within "$(sed -n 1p rows | cut -d, -f2)" $((15 * MiB)) 10
'

test_expect_success 'report says one site holds most through many lines, and names the option' '
	cat err &&
	grep -q "is at [a-z/]*nofp_wrap.c:[0-9]* in pool_take, reached from 4 different lines" err &&
	grep -q "^hint: .*--alloc-fn .pool_take." err
'

# heaptrack shows "pool_take <- names <- main" at once: the default table
# must not hide the callers of a wrapper nobody named, even two of them.
test_expect_success 'the default report shows that site'"'"'s callers, two levels out' '
	"$RSPROF" report --heap custom.db >tbl 2>/dev/null && cat tbl &&
	grep -q "^# callers of pool_take: " tbl &&
	for f in names table buf nodes; do
		grep -q "^ *[0-9.]*%  *[0-9.]* [KM]iB  *[|\`├└]. $f  " tbl || return 1
	done &&
	"$RSPROF" report --heap --csv custom.db >csv 2>/dev/null &&
	! grep -q "callers of" csv &&
	"$RSPROF" report --heap --alloc-fn pool_take custom.db >named 2>/dev/null &&
	! grep -q "callers of" named
'

test_expect_success 'two callers are enough to show them and warn' '
	cat >two.c <<-\EOF &&
	#include <stdio.h>
	#include <stdlib.h>
	#include <string.h>
	__attribute__((noinline)) static void *my_alloc(size_t n)
	{
		void *p = malloc(n);
		if (!p)
			abort();
		memset(p, 0, n);
		return p;
	}
	__attribute__((noinline)) static void *leak_list(void)
	{
		void *h = NULL;
		for (int i = 0; i < 30000; i++) {
			void **x = my_alloc(1008);
			*x = h;
			h = x;
		}
		return h;
	}
	__attribute__((noinline)) static void *leak_buf(void)
	{
		return my_alloc(20 << 20);
	}
	int main(void)
	{
		void *l = leak_list(), *b = leak_buf();
		return printf("%d\n", l && b) < 0;
	}
	EOF
	gcc -g -O1 -fno-omit-frame-pointer -o two two.c &&
	"$RSPROF" record -q --no-cpu -o two.db -- ./two >/dev/null &&
	"$RSPROF" report --heap two.db >tbl 2>err && cat tbl err &&
	grep -q "^# callers of my_alloc: " tbl &&
	grep -q "leak_list  *two.c:$(grep -n "my_alloc(1008)" two.c | cut -d: -f1)$" tbl &&
	grep -q "leak_buf  *two.c:$(grep -n "my_alloc(20 << 20)" two.c | cut -d: -f1)$" tbl &&
	grep -q "main  *two.c:" tbl &&
	grep -q "in my_alloc, reached from 2 different lines" err
'

test_expect_success 'report --alloc-fn: the callers, the file unchanged' '
	sum=$(sha256sum <custom.db) &&
	heap_rows custom.db --alloc-fn pool_take >rows2 2>err2 && cat rows2 &&
	callers_right rows2 &&
	! grep -q hint err2 &&
	test "$(sha256sum <custom.db)" = "$sum" &&
	test ! -e custom.db-wal
'

test_expect_success 'a glob names it too; other tables follow (--sort function)' '
	heap_rows custom.db --alloc-fn "pool_*" >rows3 && callers_right rows3 &&
	"$RSPROF" report --heap --csv -s function --alloc-fn "pool_*" custom.db |
		awk -F, "\$1 == \"heap\" { print \$13 }" | sed -n 1p | grep -qx names
'

test_expect_success 'record --alloc-fn: sites at record time, the pattern kept for report' '
	"$RSPROF" record -q --no-cpu --alloc-fn "pool_*" -o rec.db -- \
		"$TARGETS/nofp_wrap" custom >/dev/null &&
	test "$(meta rec.db heap_alloc_fn)" = "pool_*" &&
	heap_lines rec.db >lines && head -n 4 lines &&
	sed -n 1p lines | grep -q "nofp_wrap.c|$L_NAMES|names|" &&
	heap_rows rec.db >rows4 && callers_right rows4
'

test_expect_success 'xmalloc is built in: the callers with no option' '
	"$RSPROF" record -q --no-cpu -o x.db -- "$TARGETS/nofp_wrap" xmalloc >/dev/null &&
	heap_rows x.db >rows5 2>err5 && cat rows5 &&
	callers_right rows5 && ! grep -q hint err5 &&
	heap_lines x.db | sed -n 1p | grep -q "nofp_wrap.c|$L_NAMES|names|" &&
	seed_heap_queries x.db | sed -n 1p | grep -q "nofp_wrap.c|$L_NAMES|"
'

test_expect_success 'timeline --alloc-fn: the series of the callers, as report' '
	"$RSPROF" timeline -n 4 --csv custom.db | head -n 1 | grep -q "nofp_wrap.c:[0-9]* pool_take" &&
	sum=$(sha256sum <custom.db) &&
	"$RSPROF" timeline -n 4 --csv --alloc-fn pool_take custom.db >tl.csv && cat tl.csv &&
	head -n 1 tl.csv | grep -q ",live targets/nofp_wrap.c:$L_NAMES names,live targets/nofp_wrap.c:$L_TABLE table,live targets/nofp_wrap.c:$L_BUF buf," &&
	! grep -q pool_take tl.csv &&
	last=$(tail -n 1 tl.csv) &&
	within "$(echo "$last" | cut -d, -f6)" $((8 * MiB)) 10 &&
	within "$(echo "$last" | cut -d, -f7)" $((4 * MiB)) 10 &&
	within "$(echo "$last" | cut -d, -f8)" $((2 * MiB)) 10 &&
	test "$(sha256sum <custom.db)" = "$sum" &&
	"$RSPROF" timeline -n 4 --alloc-fn "pool_*" custom.db | grep -q "nofp_wrap.c:$L_NAMES names .* last 8.00 MiB" &&
	expect_exit 2 "$RSPROF" timeline --alloc-fn "" custom.db 2>/dev/null
'

test_expect_success 'diff --alloc-fn: a wrapper named in one run and built in in the other' '
	"$RSPROF" diff --heap --csv custom.db x.db >d1.csv && cat d1.csv &&
	grep -q "^heap,gone,.*,pool_take," d1.csv &&
	grep -q "^heap,new,.*,$L_NAMES,names," d1.csv &&
	"$RSPROF" diff --heap --csv --alloc-fn pool_take custom.db x.db >d2.csv && cat d2.csv &&
	! grep -q pool_take d2.csv &&
	grep -q "^heap,same,.*,$L_NAMES,names,[0-9]*,[0-9]*,0," d2.csv &&
	grep -q "^heap,same,.*,$L_TABLE,table,[0-9]*,[0-9]*,0," d2.csv &&
	grep -q "^heap,same,.*,$L_BUF,buf,[0-9]*,[0-9]*,0," d2.csv &&
	! grep -q "^heap,\(new\|gone\|changed\)," d2.csv &&
	expect_exit 2 "$RSPROF" diff --alloc-fn "" custom.db x.db 2>/dev/null
'

test_expect_success 'a wrapper inlined into its callers: the callers lines in the same frames' '
	"$RSPROF" record -q --no-cpu -o inl.db -- "$TARGETS/nofp_wrap" inline >/dev/null &&
	heap_rows inl.db >rows6 2>err6 && sed -n 1p rows6 | grep -q ",take_inline$" &&
	grep -q "^hint: .*--alloc-fn .take_inline." err6 &&
	heap_rows inl.db --alloc-fn take_inline >rows7 && cat rows7 && callers_right rows7
'

test_expect_success 'bad --alloc-fn values are refused' '
	expect_exit 2 "$RSPROF" report --heap --alloc-fn "" x.db 2>/dev/null &&
	expect_exit 2 "$RSPROF" record --alloc-fn "" -- true 2>/dev/null
'

test_done
