#!/bin/sh
# Where the in-process tracker cannot work, rsprof falls back to uprobes
# and says why (issue 8): a static executable (no dynamic loader, no
# LD_PRELOAD), a setuid program (the loader ignores LD_PRELOAD). The
# summary and meta.heap_backend_reason say which; the figures are the
# uprobes'. --heap-backend preload there is an error. A program with its
# own malloc linked in stays in-process (its entry points rewritten), as
# do a Rust #[global_allocator] and a program linked with jemalloc & co.
# (t1531, t1533); --heap-backend uprobe still probes their own malloc.
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

C=$TEST_SRC/targets/heap_c.c
OWN=$TEST_SRC/targets/heap_own_malloc.c
GA=$TEST_SRC/targets/heap_global_alloc.rs
MiB=1048576

test_expect_success 'build heap_c statically, and a setuid copy of it' '
	gcc -static -g -O1 -fno-omit-frame-pointer -fno-inline -o c_static "$C" &&
	cp "$TARGETS/heap_c" c_setuid && chmod 4755 c_setuid
'

test_expect_success '--heap-backend preload on a static executable: an error saying why' '
	expect_exit 1 "$RSPROF" record -q --no-cpu --heap-backend preload -o no.db -- ./c_static 1000 0 2>err &&
	cat err && grep -q "cannot run in .*statically linked" err && grep -q "^hint:.*uprobe" err
'

test_expect_success '... and without --no-cpu: CPU only, with the reason' '
	"$RSPROF" record -q --heap-backend preload -o cpuonly.db -- ./c_static 1000 0 >/dev/null 2>err &&
	cat err && grep -q "heap tracking unavailable" err && test "$(meta cpuonly.db heap)" = off
'

if backend_ok uprobe; then
	test_expect_success 'static: uprobes, and the summary says why' '
		"$RSPROF" record --no-cpu -o static.db -- ./c_static 1000000 0 >/dev/null 2>sum &&
		cat sum && grep -q "heap tracked with uprobes: the executable is statically linked" sum &&
		backend_meta static.db uprobe &&
		meta static.db heap_backend_reason | grep -q "statically linked" &&
		heap_lines static.db >lines && head -n 3 lines &&
		sed -n 1p lines | grep -q "heap_c.c|$(line_of HEAP_REALLOC "$C")|grow|" &&
		within "$(sed -n 1p lines | cut -d"|" -f4)" $((40 * MiB)) 10
	'

	test_expect_success 'its own malloc, with uprobes: on its malloc, with its sites' '
		"$RSPROF" record -v --no-cpu --heap-backend uprobe -o own.db -- "$TARGETS/heap_own_malloc" 2>sum &&
		cat sum && backend_meta own.db uprobe &&
		heap_lines own.db >olines && cat olines &&
		grep -q "heap_own_malloc.c|$(line_of OWN_KEEP "$OWN")|main|$((256 * 4096))|256|0" olines &&
		grep -q "heap_own_malloc.c|$(line_of OWN_CHURN "$OWN")|main|0|1000|1000" olines
	'

	test_expect_success '... its probe on the jae after the size check, which the kernel emulates' '
		grep "heap: malloc in .*heap_own_malloc at 0x[0-9a-f]* (+7)" sum &&
		! grep "single-stepped" sum
	'

	# a program linking jemalloc, with uprobes (in-process by default:
	# t1531): uprobes on jemalloc's malloc, not glibc's
	if echo "int main(void) { return 0; }" | gcc -x c -o jtest - -ljemalloc 2>/dev/null; then
		test_expect_success 'a program linking libjemalloc: uprobes on jemalloc'"'"'s own malloc' '
			gcc -g -O1 -fno-omit-frame-pointer -fno-inline -o c_jemalloc "$C" -ljemalloc &&
			"$RSPROF" record -v --no-cpu --heap-backend uprobe -o je.db -- ./c_jemalloc 1000 0 >/dev/null 2>sum &&
			grep -q "heap tracked with uprobes: --heap-backend uprobe" sum &&
			grep -q "heap: malloc in .*libjemalloc" sum &&
			heap_lines je.db >jlines && head -n 3 jlines &&
			sed -n 1p jlines | grep -q "heap_c.c|$(line_of HEAP_REALLOC "$C")|grow|" &&
			within "$(sed -n 1p jlines | cut -d"|" -f4)" $((40 * MiB)) 10 &&
			grep -q "heap_c.c|$(line_of HEAP_CHURN "$C")|churn|0|1000|1000" jlines
		'
	else
		test_skip 'a program linking libjemalloc' 'libjemalloc-dev is not installed'
	fi

	test_expect_success 'setuid: uprobes, and the summary says why' '
		"$RSPROF" record --no-cpu -o suid.db -- ./c_setuid 1000 0 >/dev/null 2>sum &&
		cat sum && grep -q "heap tracked with uprobes: the executable is setuid or setgid" sum &&
		backend_meta suid.db uprobe &&
		heap_lines suid.db | sed -n 1p | grep -q "heap_c.c|$(line_of HEAP_REALLOC "$C")|"
	'
fi

test_expect_success 'its own malloc: in-process, its entry points rewritten, its sites' '
	"$RSPROF" record -v --no-cpu -o ownp.db -- "$TARGETS/heap_own_malloc" 2>sum &&
	grep -q "heap tracked in-process" sum && backend_meta ownp.db preload &&
	grep -q "[1-9][0-9]* allocator entry points rewritten (0 refused)" sum &&
	heap_lines ownp.db >plines && cat plines &&
	grep -q "heap_own_malloc.c|$(line_of OWN_KEEP "$OWN")|main|$((256 * 4096))|256|0" plines &&
	grep -q "heap_own_malloc.c|$(line_of OWN_CHURN "$OWN")|main|0|1000|1000" plines
'

test_expect_success 'a Rust #[global_allocator] over the system allocator: in-process' '
	"$RSPROF" record --no-cpu -o ga.db -- "$TARGETS/heap_global_alloc" 2>sum &&
	cat sum && grep -q "heap tracked in-process" sum &&
	backend_meta ga.db preload &&
	heap_lines ga.db >glines && cat glines &&
	# the line in the allocator, or the vec! that called it when the
	# allocator tail-calls malloc (rustc 1.63 builds it so: no frame of its own)
	sed -n 1p glines | grep -q "heap_global_alloc.rs|\($(line_of GA_ALLOC "$GA")\|$(line_of GA_KEEP "$GA")\)|.*|$((4 * MiB))|1|0"
'

# An address-space limit: the tracker's region (a few hundred MiB of
# address space) would count against it and the program could allocate
# less than alone. A program of the tree started under one is not
# tracked; rsprof itself under one tracks its program with uprobes.
test_expect_success 'a program of the tree under ulimit -v: untracked, its output as alone' '
	sh -c "ulimit -v 2000000; exec \"\$0\" 1000 0" "$TARGETS/heap_c" >want &&
	"$RSPROF" record -q --no-cpu -o aslim.db -- \
		sh -c "ulimit -v 2000000; exec \"\$0\" 1000 0" "$TARGETS/heap_c" >got 2>err &&
	cat err && diff want got &&
	heap_lines aslim.db >alines && cat alines && ! grep -q "heap_c.c" alines &&
	grep -q "1 process of the tree ran under an address-space limit" err &&
	test "$(sql aslim.db "SELECT value FROM meta WHERE key = '\''heap_untracked_limited'\''")" = 1
'

# (ASan cannot start under an address-space limit: its shadow memory is
# terabytes of it. The sanitizer build of make test leaves this one out.)
if ! ldd "$RSPROF" 2>/dev/null | grep -q libasan; then
	test_expect_success 'rsprof under ulimit -v: uprobes, the reason, the output as alone' '
		sh -c "ulimit -v 2000000; exec \"\$0\" record --no-cpu -o aslim2.db -- \
			\"\$1\" 1000 0" "$RSPROF" "$TARGETS/heap_c" >got2 2>sum &&
		cat sum && diff want got2 &&
		grep -q "heap tracked with uprobes: an address-space limit" sum &&
		backend_meta aslim2.db uprobe &&
		heap_lines aslim2.db | sed -n 1p | grep -q "heap_c.c|$(line_of HEAP_REALLOC "$C")|"
	'
fi

test_done
