#!/bin/sh
# Every symbol source for every module (issue 10): a shared library whose
# debug information is split off (.gnu_debuglink with compressed sections;
# perf's build-id cache ~/.debug), libc's lines from libc6-dbg, a JIT's
# /tmp/perf-PID.map, and [vdso] as a module of its own.
. "$(dirname "$0")/lib.sh"

if ! have_perf; then
	test_skip 'symbol sources' 'perf events not allowed here'
	test_done
fi

LIBSRC=$TEST_SRC/targets/splitlib
HOT=$(grep -n "/\* HOT:lib \*/" "$LIBSRC/split.c" | cut -d: -f1)

# lib_share DB: the share (integer %) of split.c's hot line
lib_share() {
	sql "$1" "SELECT COALESCE(SUM(c.count), 0) * 100 / (SELECT SUM(count) FROM cpu_samples)
		FROM cpu_samples c JOIN symbols s ON c.addr = s.addr
		WHERE s.file LIKE '%split.c' AND s.line = $HOT"
}

# --user-only: shares of user time, which the program's own code splits
# by construction; a loaded machine adds kernel samples of being preempted
# (finish_task_switch..., up to 14 % seen) to the total (t1015 is the test
# of kernel time).
build_split() {	# DIR: libsplit.so (stripped) and split_main, debug info kept aside
	mkdir -p "$1" &&
	gcc -g -O1 -fPIC -shared -o "$1/libsplit.so" "$LIBSRC/split.c" &&
	gcc -g -O1 -o "$1/split_main" "$LIBSRC/main.c" -L"$1" -lsplit -Wl,-rpath,"$1" &&
	objcopy --only-keep-debug "$1/libsplit.so" "$1/libsplit.so.debug" &&
	objcopy --strip-debug "$1/libsplit.so" &&
	! readelf -S "$1/libsplit.so" | grep -q debug_line
}

test_expect_success 'a library with its debug info in .debug/ by .gnu_debuglink (compressed)' '
	build_split "$TEST_DIR/a" &&
	mkdir a/.debug &&
	objcopy --compress-debug-sections=zlib a/libsplit.so.debug a/.debug/libsplit.so.debug &&
	rm a/libsplit.so.debug &&
	readelf -S a/.debug/libsplit.so.debug | grep -A1 debug_info | grep -q "C" &&
	(cd a && objcopy --add-gnu-debuglink=.debug/libsplit.so.debug libsplit.so) &&
	"$RSPROF" record -q --no-heap --user-only -F 499 -o link.db -- a/split_main 1 &&
	s=$(lib_share link.db) && say "split.c:$HOT: $s %" &&
	test "$s" -ge 80
'

# Each process has a resolver of its own; the compressed debug file is
# inflated once for all of them, and each one's samples get its lines.
test_expect_success 'compressed debug info shared by three processes: inflated once, lines in each' '
	"$RSPROF" record -vv --no-heap --user-only -F 499 -o three.db -- \
		sh -c "a/split_main 0.4; a/split_main 0.4; a/split_main 0.4" 2>three.err &&
	grep "libsplit.so.debug: inflated once" three.err &&
	test "$(grep -c "libsplit.so.debug: inflated once" three.err)" = 1 &&
	sql three.db "SELECT c.pid, SUM(c.count) * 100 / (SELECT SUM(count) FROM cpu_samples
		WHERE pid = c.pid) FROM cpu_samples c JOIN symbols s ON c.addr = s.addr
		WHERE s.file LIKE '\''%split.c'\'' AND s.line = $HOT GROUP BY c.pid" >three.txt &&
	cat three.txt && test "$(wc -l <three.txt)" = 3 &&
	awk -F"|" "\$2 < 80 { exit 1 }" three.txt
'

# A later process of the same file takes the names the first one gave
# (util/symbols/symcache.h): the lines above are the test that they are
# right. A library rebuilt under the same path between two processes is
# another file (its build-id): each process gets its own build's lines.
test_expect_success 'names shared by processes of one file, not across a rebuild' '
	grep "symbols: .* addresses named for all processes" three.err >shared.txt &&
	cat shared.txt &&
	taken=$(sed -n "s/.*, \([0-9]*\) names taken.*/\1/p" shared.txt) &&
	test "$taken" -gt 0 &&
	mkdir -p e e2 &&
	gcc -g -O1 -fPIC -shared -o e/libsplit.so "$LIBSRC/split.c" &&
	{ printf "\n\n\n"; cat "$LIBSRC/split.c"; } >e2/split.c &&
	gcc -g -O1 -fPIC -shared -o e/libsplit.new "e2/split.c" &&
	gcc -g -O1 -o e/split_main "$LIBSRC/main.c" -Le -lsplit -Wl,-rpath,"$TEST_DIR/e" &&
	# checkpoints (-i) while it sleeps: the first process is named before
	# its file is replaced (later, its file is not there to name it by)
	"$RSPROF" record -q --no-heap --user-only -F 499 -i 100ms -o rebuilt.db -- \
		sh -c "e/split_main 0.4; sleep 0.5; mv e/libsplit.new e/libsplit.so; e/split_main 0.4" &&
	sql rebuilt.db "SELECT c.pid, s.file, s.line, s.function, SUM(c.count) FROM cpu_samples c
		JOIN symbols s ON c.addr = s.addr GROUP BY 1, 2, 3, 4 HAVING SUM(c.count) > 4" &&
	sql rebuilt.db "SELECT c.pid, s.line FROM cpu_samples c JOIN symbols s ON c.addr = s.addr
		JOIN processes p ON p.pid = c.pid AND p.comm = '\''split_main'\''
		WHERE s.file LIKE '\''%split.c'\'' GROUP BY c.pid, s.line
		HAVING SUM(c.count) * 100 >= 80 * (SELECT SUM(count) FROM cpu_samples
		WHERE pid = c.pid) ORDER BY MIN(p.start_ms)" >rebuilt.txt &&
	cat rebuilt.txt &&
	test "$(cut -d"|" -f2 rebuilt.txt | tr "\n" " ")" = "$HOT $((HOT + 3)) "
'

# Without a build-id (Rust's toolchain has none) a file is known by the one
# read: device, inode, size, modification time. Rewritten in place (the
# same inode), it is another file.
test_expect_success 'a library without a build-id: shared, not across an in-place rewrite' '
	mkdir -p n &&
	gcc -g -O1 -fPIC -shared -Wl,--build-id=none -o n/libsplit.so "$LIBSRC/split.c" &&
	gcc -g -O1 -fPIC -shared -Wl,--build-id=none -o n/libsplit.new "e2/split.c" &&
	! readelf -n n/libsplit.so | grep -q "Build ID" &&
	gcc -g -O1 -o n/split_main "$LIBSRC/main.c" -Ln -lsplit -Wl,-rpath,"$TEST_DIR/n" &&
	"$RSPROF" record -vv --no-heap --user-only -F 499 -i 100ms -o nobid.db -- \
		sh -c "n/split_main 0.3; n/split_main 0.3; sleep 0.5;
		       cat n/libsplit.new >n/libsplit.so; n/split_main 0.3" 2>nobid.err &&
	grep "symbols: .* names taken" nobid.err &&
	taken=$(sed -n "s/.*, \([0-9]*\) names taken.*/\1/p" nobid.err) &&
	test "$taken" -gt 0 &&
	sql nobid.db "SELECT c.pid, s.line FROM cpu_samples c JOIN symbols s ON c.addr = s.addr
		JOIN processes p ON p.pid = c.pid AND p.comm = '\''split_main'\''
		WHERE s.file LIKE '\''%split.c'\'' GROUP BY c.pid, s.line
		HAVING SUM(c.count) * 100 >= 80 * (SELECT SUM(count) FROM cpu_samples
		WHERE pid = c.pid) ORDER BY MIN(p.start_ms)" >nobid.txt &&
	cat nobid.txt &&
	test "$(cut -d"|" -f2 nobid.txt | tr "\n" " ")" = "$HOT $HOT $((HOT + 3)) "
'

test_expect_success 'a library whose debug info is only in perf'\''s build-id cache (~/.debug)' '
	build_split "$TEST_DIR/b" &&
	id=$(readelf -n b/libsplit.so | awk "/Build ID/ { print \$3 }") &&
	mkdir -p "home/.debug/.build-id/$(echo $id | cut -c1-2)/$(echo $id | cut -c3-)" &&
	mv b/libsplit.so.debug "home/.debug/.build-id/$(echo $id | cut -c1-2)/$(echo $id | cut -c3-)/debug" &&
	HOME=$TEST_DIR/home "$RSPROF" record -q --no-heap --user-only -F 499 -o cache.db -- b/split_main 1 &&
	s=$(lib_share cache.db) && say "split.c:$HOT: $s %" &&
	test "$s" -ge 80
'

test_expect_success 'without its debug info: function names from the symbol table, no line' '
	build_split "$TEST_DIR/c" && rm c/libsplit.so.debug &&
	"$RSPROF" record -q --no-heap -F 499 -o nodbg.db -- c/split_main 0.5 &&
	test "$(lib_share nodbg.db)" = 0 &&
	sql nodbg.db "SELECT s.function FROM cpu_samples c JOIN symbols s ON c.addr = s.addr
		GROUP BY s.function ORDER BY SUM(c.count) DESC LIMIT 1" | grep -q "^split_spin$"
'

libc_dbg=$(ls /usr/lib/debug/.build-id/*/*.debug 2>/dev/null | head -1)
if dpkg -s libc6-dbg >/dev/null 2>&1; then
	test_expect_success 'libc with libc6-dbg: memset on its own source line' '
		"$RSPROF" record -q --no-heap --user-only -F 499 -o libc.db -- "$TARGETS/libc_memset" 1 &&
		"$RSPROF" report --cpu --csv -n 3 libc.db >libc.csv && cat libc.csv &&
		sql libc.db "SELECT s.file || \":\" || s.line, SUM(c.count) * 100 /
			(SELECT SUM(count) FROM cpu_samples) FROM cpu_samples c JOIN symbols s
			ON c.addr = s.addr WHERE s.module LIKE '\''%libc.so%'\''
			GROUP BY s.module" >libc.txt && cat libc.txt &&
		sql libc.db "SELECT COALESCE(SUM(c.count), 0) * 100 / (SELECT SUM(count) FROM cpu_samples)
			FROM cpu_samples c JOIN symbols s ON c.addr = s.addr
			WHERE s.module LIKE '\''%libc.so%'\'' AND s.file LIKE '\''%memset%'\''
			AND s.line > 0" >pct && say "memset lines: $(cat pct) %" &&
		test "$(cat pct)" -ge 70
	'
else
	test_skip 'libc lines from libc6-dbg' 'libc6-dbg is not installed'
fi

test_expect_success 'a JIT named by its /tmp/perf-PID.map, as perf reads it' '
	"$RSPROF" record -q --no-heap --user-only -F 499 -o jit.db -- "$TARGETS/jit_perfmap" 1 keep &&
	"$RSPROF" report --cpu --csv -n 3 jit.db >jit.csv && cat jit.csv &&
	pct=$(awk -F, "NR == 2 && \$13 == \"jit_spin_loop\" { print int(\$2) }" jit.csv) &&
	say "jit_spin_loop: $pct %" && test "$pct" -ge 80 &&
	pid=$(sql jit.db "SELECT value FROM meta WHERE key = '\''pid'\''") &&
	grep -q "^tmp/perf-$pid.map\|perf-$pid.map" jit.csv &&
	rm -f /tmp/perf-$pid.map
'

if command -v perf >/dev/null 2>&1; then
	test_expect_success 'perf names the same JIT code' '
		perf record -B --no-bpf-event -q -F 499 -o jit.perf -- "$TARGETS/jit_perfmap" 1 keep 2>/dev/null &&
		perf report -i jit.perf --stdio --sort sym 2>/dev/null | grep -v "^#" | grep . |
			head -1 >jit.perf.txt && cat jit.perf.txt &&
		grep -q jit_spin_loop jit.perf.txt &&
		rm -f /tmp/perf-*.map.rsprof-test
	'
else
	test_skip 'perf names the same JIT code' 'perf is not installed'
fi

test_expect_success '[vdso] is its own module, not merged into libc'\''s clock_gettime' '
	"$RSPROF" record -q --no-heap -F 499 -o vdso.db -- "$TARGETS/vdso_clock" 1 &&
	"$RSPROF" report --cpu --csv -n 5 vdso.db >vdso.csv && cat vdso.csv &&
	v=$(awk -F, "\$14 == \"[vdso]\" { s += \$2 } END { print int(s) }" vdso.csv) &&
	say "[vdso]: $v %" && test "$v" -ge 40 &&
	test "$(awk -F, "\$14 == \"[vdso]\"" vdso.csv | wc -l)" -ge 1 &&
	! awk -F, "\$14 == \"[vdso]\" && \$10 !~ /vdso/" vdso.csv | grep -q .
'

test_expect_success 'the PLT stub of clock_gettime is clock_gettime@plt, not _init' '
	"$RSPROF" report --cpu --csv vdso.db >all.csv &&
	! grep -q ",_init," all.csv &&
	"$RSPROF" report --cpu -s symbol vdso.db >sym.txt &&
	! grep -q " _init$" sym.txt &&
	if grep -q "@plt" all.csv; then
		grep "@plt" all.csv | grep -q "clock_gettime@plt"
	fi
'

test_done
