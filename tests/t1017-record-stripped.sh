#!/bin/sh
# Stripped programs are recorded, as perf records them: Debian's gzip (no
# symbol table, no debug information) keeps its profile, its own code
# [unknown] by module, the kernel's rows named, exit 0 with a warning; exit
# 5 only when nothing at all could be named (a static stripped program,
# user time only). Its debug information is found where perf and gdb look:
# beside it through .gnu_debuglink, and from a debuginfod server
# (Debian's, on loopback, serving a directory) when DEBUGINFOD_URLS is set.
. "$(dirname "$0")/lib.sh"

if ! have_perf; then
	test_skip 'stripped programs' 'perf events not allowed here'
	test_done
fi

SRC=$TEST_SRC/targets/cpu_split.c
L_A=$(grep -n "HOT:a" "$SRC" | cut -d: -f1)

test_expect_success 'gzip, stripped: recorded, exit 0, a warning, named rows kept' '
	head -c 20000000 /dev/urandom >big.bin &&
	"$RSPROF" record -q -F 999 --no-heap -o gz.db -- gzip -c big.bin >/dev/null 2>err; rc=$?;
	cat err && test $rc = 0 && test -s gz.db &&
	grep -q "gzip has no debug information and no symbol table: its own code is \[unknown\]" err &&
	grep -q "^hint: install its debug symbols" err &&
	"$RSPROF" report gz.db >gz.out && cat gz.out &&
	grep -q "\[gzip\] *\[unknown\]" gz.out &&
	test "$(sql gz.db "SELECT COUNT(*) FROM symbols WHERE function IS NOT NULL")" -gt 0
'

test_expect_success 'static and stripped, user time only: nothing named, exit 5, no file' '
	gcc -g -O1 -static -o split_static "$SRC" && strip split_static &&
	expect_exit 5 "$RSPROF" record -q --user-only -F 999 --no-heap -o st.db -- ./split_static 0.3 \
		>/dev/null 2>err2 &&
	cat err2 && grep -q "nothing recorded could be named" err2 && ! test -e st.db
'

test_expect_success '.gnu_debuglink: the debug file beside the program' '
	mkdir -p dl && gcc -g -O1 -fno-omit-frame-pointer -o dl/split "$SRC" &&
	objcopy --only-keep-debug dl/split dl/split.debug &&
	strip --strip-all dl/split && objcopy --add-gnu-debuglink=dl/split.debug dl/split &&
	"$RSPROF" record -q --user-only -F 499 --no-heap -o dl.db -- dl/split 0.5 >/dev/null 2>err3 &&
	! grep -q "no debug information" err3 &&
	"$RSPROF" report dl.db | grep -q "cpu_split.c:$L_A "
'

if ! command -v debuginfod >/dev/null 2>&1; then
	test_skip 'debuginfod' 'debuginfod missing (scripts/packages.txt, test group)'
	test_done
fi

# the server, started here so that the end of the script stops it (each probe
# of it with a cache of its own: a miss is cached for 10 minutes)
mkdir -p srv && gcc -g -O1 -fno-omit-frame-pointer -o srv/split "$SRC" && strip -o split srv/split
port=$((20000 + $$ % 20000))
debuginfod -F srv -p $port -d dbgd.sqlite >dbgd.log 2>&1 &
bg_pid $!

test_expect_success 'debuginfod on loopback: the stripped program gets its lines' '
	id=$(readelf -n split | awk "/Build ID/ { print \$3 }") && test -n "$id" &&
	i=0 && until DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$TEST_DIR/probe.$i \
		debuginfod-find debuginfo "$id" >/dev/null 2>&1; do
		i=$((i + 1)); test $i -lt 300 || { cat dbgd.log; exit 1; }; sleep 0.2
	done &&
	{ "$RSPROF" record -q --user-only -F 499 --no-heap -o nodbg.db -- ./split 0.3 >/dev/null \
		2>err4; rc=$?; test $rc = 0 || test $rc = 5; } &&
	grep -q "has no debug information" err4 &&
	DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$TEST_DIR/cache \
		"$RSPROF" record -q --user-only -F 499 --no-heap -o dbg.db -- ./split 0.5 >/dev/null \
		2>err5 &&
	cat err5 && ! grep -q "no debug information" err5 &&
	"$RSPROF" report dbg.db >dbg.out && cat dbg.out && grep -q "cpu_split.c:$L_A " dbg.out
'

test_done
