#!/bin/sh
# rsprof annotate of any function the profile's stacks name, not only those
# with samples or allocations of their own: a caller of an allocation
# wrapper (heap stacks), a caller of the hot leaf (CPU stacks of record -g),
# each line with what went through it (callees included) beside its own
# numbers; the whole function from its declaration; --asm naming the
# targets of calls as objdump does.
. "$(dirname "$0")/lib.sh"

cat >hot.c <<'EOF'
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
struct node { struct node *next; char pad[1000]; };
__attribute__((noinline)) static void *my_alloc(size_t n)
{
	void *p = malloc(n);
	if (!p) abort();
	memset(p, 0, n);
	return p;
}
__attribute__((noinline)) static struct node *leak_list(int n)
{
	struct node *h = NULL;
	for (int i = 0; i < n; i++) {
		struct node *x = my_alloc(sizeof(*x));	/* CALL:list */
		x->next = h;
		h = x;
	}
	return h;
}
__attribute__((noinline)) static char *leak_buf(size_t n)
{
	return my_alloc(n);	/* CALL:buf */
}
int main(void)
{
	struct node *l = leak_list(30000);	/* MAIN:list */
	char *b = leak_buf(20 << 20);		/* MAIN:buf */
	printf("%p %p\n", (void *)l, (void *)b);
	return 0;
}
EOF

cat >cpu.c <<'EOF'
#include <stdlib.h>
static volatile unsigned long sink;
__attribute__((noipa)) static unsigned long spin(unsigned long n)
{
	unsigned long x = 0;
	for (unsigned long i = 0; i < n; i++)
		x = x * 31 + i;
	return x;
}
__attribute__((noipa)) static void work(int rounds)
{
	for (int r = 0; r < rounds; r++) {
		sink += spin(3000000);	/* CALL:a */
		sink += spin(1000000);	/* CALL:b */
	}
}
int main(int argc, char **argv)
{
	work(argc > 1 ? atoi(argv[1]) : 100);
	return 0;
}
EOF

line_of() {	# MARK FILE
	grep -n "$1" "$2" | cut -d: -f1
}

# The cells of source line L in annotate's output, without the text.
cells_of() {	# LINE < annotate output
	awk -v l="$1" '!/^#/ { t = $0; sub(/^ */, "", t)
		if (match($0, "[ *>] +" l "  ")) { print substr($0, 1, RSTART); exit } }'
}

test_expect_success 'build the programs' '
	gcc -g -O1 -fno-omit-frame-pointer -o hot hot.c &&
	gcc -g -O1 -fno-omit-frame-pointer -o cpu cpu.c
'

test_expect_success 'heap: a caller of the wrapper is annotated, the live heap through its call' '
	"$RSPROF" record -q --no-cpu -o hot.db -- ./hot >/dev/null &&
	"$RSPROF" report --heap --callers my_alloc hot.db >callers &&
	cat callers &&
	grep -q "leak_list" callers &&
	"$RSPROF" annotate --stdio hot.db leak_list >out &&
	cat out &&
	grep -q "^# function: leak_list" out &&
	grep -q "^# through:  live 28.[0-9] MiB" out &&
	grep -q "^# columns:  own: .*Live, Allocated; through it, callees too: .*Live tot, Alloc tot" out &&
	grep -q "Live    Live tot   Allocated   Alloc tot   Line  Source" out &&
	# its own columns are empty, the totals on the call line hold what report says
	want=$(awk "/leak_list/ { print \$2, \$3; exit }" callers) &&
	got=$(cells_of "$(line_of CALL:list hot.c)" <out | awk "{ print \$1, \$2 }") &&
	say "report --callers: $want, annotate: $got" &&
	test -n "$want" && test "$want" = "$got" &&
	"$RSPROF" annotate --stdio hot.db main >main &&
	cat main &&
	cells_of "$(line_of MAIN:list hot.c)" <main | grep -q "^ *28.[0-9] MiB *28.[0-9] MiB" &&
	cells_of "$(line_of MAIN:buf hot.c)" <main | grep -q "^ *20.0 MiB *20.0 MiB"
'

test_expect_success 'heap: FILE:LINE of a call opens its caller, the line marked' '
	"$RSPROF" annotate --stdio hot.db "hot.c:$(line_of MAIN:buf hot.c)" >at &&
	cat at &&
	grep -q "^# function: main" at &&
	grep -q "20.0 MiB *20.0 MiB > *$(line_of MAIN:buf hot.c)  .*MAIN:buf" at
'

test_expect_success 'heap: the function wrapped keeps its own numbers beside the totals' '
	"$RSPROF" annotate --stdio hot.db my_alloc >own &&
	cat own &&
	grep -q "^# total: .* live 48.[0-9] MiB" own &&
	cells_of 7 <own | grep -q "^ *48.[0-9] MiB *48.[0-9] MiB *48.[0-9] MiB *48.[0-9] MiB"
'

test_expect_success 'the whole function: from its declaration to its closing brace' '
	for fn in leak_list my_alloc main; do
		first=$(grep -n "static.* \*$fn(\|^int $fn(" hot.c | cut -d: -f1) &&
		last=$(awk -v f=$first "NR > f && /^}/ { print NR; exit }" hot.c) &&
		"$RSPROF" annotate --stdio hot.db $fn >whole &&
		awk "!/^#/ && / [0-9]+  / { for (i = 1; i <= NF; i++) if (\$i ~ /^[0-9]+\$/) { print \$i; break } }" \
			whole | sed -n "/^$first\$/,\$p" >lines &&
		say "$fn: lines $(head -n 1 lines)..$(tail -n 1 lines), want $first..$last" &&
		test "$(head -n 1 lines)" = "$first" &&
		test "$(tail -n 1 lines)" = "$last" &&
		test "$(wc -l <lines)" -eq $((last - first + 1)) || return 1
	done
'

test_expect_success '--asm: calls name their targets as objdump does' '
	"$RSPROF" annotate --stdio --asm hot.db main >asm &&
	cat asm &&
	sed -n "s/.*callq .* <\(.*\)>\$/\1/p" asm >ours &&
	objdump -d --no-show-raw-insn --disassemble=main hot |
		sed -n "s/.*call .* <\(.*\)>\$/\1/p" >theirs &&
	cat ours theirs &&
	sort ours >ours.s && sort theirs >theirs.s &&
	test -s ours && cmp ours.s theirs.s &&
	grep -qx leak_list ours &&
	"$RSPROF" annotate --stdio --asm hot.db my_alloc | grep -q "callq .* <malloc@plt>$" &&
	# the call into the wrapper carries the heap allocated through it
	"$RSPROF" annotate --stdio --asm hot.db leak_list >asm2 &&
	grep "callq .* <my_alloc>$" asm2 | grep -q "28.[0-9] MiB *28.[0-9] MiB *[0-9a-f]*:"
'

if command -v go >/dev/null; then
	test_expect_success 'heap: Live tot is go tool pprof -list'"'"'s cum column' '
		"$RSPROF" report --format pprof -o hot.pb.gz hot.db &&
		go tool pprof -sample_index=inuse_space -list "^leak_list\$" hot.pb.gz >list 2>err &&
		cat list &&
		l=$(line_of CALL:list hot.c) &&
		cum=$(awk -v l="$l:" "\$3 == l { print \$2 }" list) &&
		ours=$("$RSPROF" annotate --stdio hot.db leak_list | cells_of "$l" | awk "{ print \$1 }") &&
		say "pprof cum: $cum, annotate Live tot: $ours" &&
		# 28.84MB (pprof: MB of 2^20 bytes) against 28.8 MiB
		awk -v p="$cum" -v o="$ours" "BEGIN { sub(/MB\$/, \"\", p); d = p - o; exit !(p > 0 && d < 0.1 && d > -0.1) }"
	'
else
	test_skip 'heap: against go tool pprof -list' 'golang-go missing (scripts/packages.txt, test group)'
fi

if ! have_perf; then
	test_skip 'CPU: a caller of the hot leaf' 'perf events not allowed here'
	test_done
fi

test_expect_success 'CPU (record -g): a caller of the hot leaf, Total% on each call line' '
	"$RSPROF" record -q -g --no-heap -F 999 -o cpu.db -- ./cpu 300 &&
	"$RSPROF" annotate --stdio cpu.db work >out &&
	cat out &&
	grep -q "^# function: work" out &&
	grep -q "^   CPU%   Total%   Line  Source" out &&
	a=$(cells_of "$(line_of CALL:a cpu.c)" <out | tr -d "*%" | awk "{ print \$NF }") &&
	b=$(cells_of "$(line_of CALL:b cpu.c)" <out | tr -d "*%" | awk "{ print \$NF }") &&
	total=$(sed -n "s/^# through:  CPU \([0-9.]*\)%.*/\1/p" out) &&
	say "CALL:a $a%, CALL:b $b%, work $total%" &&
	# spin(3000000) and spin(1000000): three to one, and together the function
	awk -v a="$a" -v b="$b" -v t="$total" "BEGIN { exit !(a > 2 * b && a < 5 * b &&
		a + b > t - 1.5 && a + b < t + 1.5 && t > 90) }" &&
	# without -g only the sampled functions: spin, no stacks through work
	"$RSPROF" record -q --no-heap -F 999 -o flat.db -- ./cpu 30 &&
	expect_exit 1 "$RSPROF" annotate --stdio flat.db work 2>err &&
	grep -q "no function or source file .work." err
'

test_expect_success 'CPU --asm: the call instructions carry the samples through them' '
	"$RSPROF" annotate --stdio --asm cpu.db work >asm &&
	cat asm &&
	grep "callq .* <spin>$" asm >calls &&
	test "$(wc -l <calls)" -eq 2 &&
	awk "\$1 ~ /%\$/ { n++ } END { exit !(n == 2) }" calls
'

if command -v go >/dev/null; then
	test_expect_success 'CPU: Total% is go tool pprof -list'"'"'s cum column' '
		"$RSPROF" report --format pprof -o cpu.pb.gz cpu.db &&
		go tool pprof -unit=ms -list "^work\$" cpu.pb.gz >list 2>err &&
		cat list &&
		"$RSPROF" annotate --stdio cpu.db work >out &&
		for m in CALL:a CALL:b; do
			l=$(line_of $m cpu.c) &&
			cum=$(awk -v l="$l:" "\$3 == l { print \$2 }" list | tr -d ms) &&
			tot=$(awk "/^# total:/ { next } /^Total:/ { print \$2 }" list | tr -d ms) &&
			ours=$(cells_of "$l" <out | tr -d "*%" | awk "{ print \$NF }") &&
			say "$m: pprof cum $cum of $tot ms, annotate Total% $ours" &&
			awk -v c="$cum" -v t="$tot" -v o="$ours" "BEGIN { d = 100 * c / t - o
				exit !(t > 0 && d < 1.5 && d > -1.5) }" || return 1
		done
	'
else
	test_skip 'CPU: against go tool pprof -list' 'golang-go missing (scripts/packages.txt, test group)'
fi

test_done
