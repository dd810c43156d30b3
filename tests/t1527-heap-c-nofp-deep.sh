#!/bin/sh
# A C program built -O2 -fomit-frame-pointer (issue 9) whose allocation
# wrapper, xmalloc (a built-in wrapper name), keeps a 2 KiB buffer on its
# stack (tests/targets/nofp_deep.c): the callers' return addresses lie
# beyond the 1 KiB the stack scan reads, so only unwinding through the CFI
# (libunwind, in the in-process tracker) reaches them. With no option the
# four callers' lines hold their bytes (8, 4, 2, 1 MiB); the stack scan
# alone (before libunwind) put all 15 MiB on xmalloc's line. A target that
# cannot load libunwind.so.8 (another mount namespace, a container without
# it) keeps the frame-pointer walk and the scan, and runs as before.
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

SRC=$TEST_SRC/targets/nofp_deep.c
MiB=1048576

# scanned_as_before: hidden.db, out and err of a recording of nofp_deep
# whose target could not load libunwind.so.8: the scan put xmalloc first.
scanned_as_before() {
	grep -q "CFI unwinding off (no libunwind.so.8)" err &&
	test "$(cat out)" = 15728640 &&
	heap_lines hidden.db >hlines && head -n 3 hlines &&
	sed -n 1p hlines | grep -q "|xmalloc|"
}

if [ ! -e /usr/lib/x86_64-linux-gnu/libunwind.so.8 ] && [ ! -e /lib/x86_64-linux-gnu/libunwind.so.8 ]; then
	test_skip 'CFI unwinding' 'libunwind.so.8 missing (apt-get install libunwind-dev)'
	test_expect_success 'without libunwind.so.8: the scan, as before' '
		"$RSPROF" record -v -q --no-cpu -o hidden.db -- "$TARGETS/nofp_deep" >out 2>err &&
		scanned_as_before
	'
	test_done
fi

row() {
	grep "nofp_deep.c|$(line_of "$2" "$SRC")|" "$1"
}

test_expect_success 'the target has no frame pointers, xmalloc a 2 KiB frame' '
	objdump -d "$TARGETS/nofp_deep" | grep -A12 "<xmalloc>:" >xm && cat xm &&
	! sed -n 2,3p xm | grep -q "mov *%rsp,%rbp" &&
	grep -q "sub *\$0x8[0-9a-f][0-9a-f],%rsp" xm
'

test_expect_success 'record -- nofp_deep: the callers lines, no option' '
	"$RSPROF" record -q --no-cpu -o deep.db -- "$TARGETS/nofp_deep" >/dev/null &&
	heap_lines deep.db >lines && head -n 6 lines &&
	row lines DEEP_NAMES | grep -q "|names|" &&
	row lines DEEP_TABLE | grep -q "|table|" &&
	row lines DEEP_BUF | grep -q "|buf|" &&
	row lines DEEP_NODES | grep -q "|nodes|" &&
	! grep -q "|xmalloc|" lines
'

test_expect_success 'each within 10% of its bytes, in order on top of report' '
	within "$(row lines DEEP_NAMES | cut -d"|" -f4)" $((8 * MiB)) 10 &&
	within "$(row lines DEEP_TABLE | cut -d"|" -f4)" $((4 * MiB)) 10 &&
	within "$(row lines DEEP_BUF | cut -d"|" -f4)" $((2 * MiB)) 10 &&
	within "$(row lines DEEP_NODES | cut -d"|" -f4)" $((1 * MiB)) 10 &&
	"$RSPROF" report --heap -n 4 deep.db >rep 2>err && cat rep err &&
	sed -n "/Location/,\$p" rep | sed -n 2,4p >top &&
	sed -n 1p top | grep -q "nofp_deep.c:$(line_of DEEP_NAMES "$SRC") .*names" &&
	sed -n 2p top | grep -q "nofp_deep.c:$(line_of DEEP_TABLE "$SRC") .*table" &&
	sed -n 3p top | grep -q "nofp_deep.c:$(line_of DEEP_BUF "$SRC") .*buf" &&
	! grep -q "^hint:" err
'

# A mount namespace of its own hides the library from the target: root and
# unshare -m with private mounts (not in a chroot whose root is no mount
# point: a bind mount there that is not private would hide the library
# from the whole machine).
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
	test_skip 'without libunwind.so.8 in its mount namespace' 'needs root and unshare to hide the library'
elif ! unshare -m true 2>/dev/null; then
	test_skip 'without libunwind.so.8 in its mount namespace' \
		'unshare -m cannot make its mounts private here (a chroot whose root is no mount point)'
else
	test_expect_success 'without libunwind.so.8 in its mount namespace: the scan, as before' '
		lib=$(readlink -f /usr/lib/x86_64-linux-gnu/libunwind.so.8 2>/dev/null ||
		      readlink -f /lib/x86_64-linux-gnu/libunwind.so.8) &&
		unshare -m sh -c "mount --bind /dev/null \"$lib\" &&
			\"$RSPROF\" record -v -q --no-cpu -o hidden.db -- \"$TARGETS/nofp_deep\"" \
			>out 2>err &&
		scanned_as_before
	'
fi

test_done
