#!/bin/sh
# Kernel time counts (issue 10): a program half in pread() shows its
# compute loop near 50 %, as perf does, with the kernel's part in
# [kernel.kallsyms] rows; --user-only gives the old shares of user time,
# and the report's header says which.
. "$(dirname "$0")/lib.sh"

SRC=$TEST_SRC/targets/pread_half.c
HOT=$(grep -n "/\* HOT:compute \*/" "$SRC" | cut -d: -f1)

if ! have_perf; then
	test_skip 'kernel time' 'perf events not allowed here'
	test_done
fi
if [ "$(id -u)" != 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 1 ]; then
	test_skip 'kernel time' 'kernel samples need root, CAP_PERFMON or perf_event_paranoid <= 1'
	test_done
fi

compute() {	# DB: integer share of the compute line
	sql "$1" "SELECT COALESCE(SUM(c.count), 0) * 100 / (SELECT SUM(count) FROM cpu_samples)
		FROM cpu_samples c JOIN symbols s ON c.addr = s.addr
		WHERE s.file LIKE '%pread_half.c' AND s.line = $HOT"
}
kernel() {	# DB: integer share of the kernel's rows
	sql "$1" "SELECT COALESCE(SUM(c.count), 0) * 100 / (SELECT SUM(count) FROM cpu_samples)
		FROM cpu_samples c JOIN symbols s ON c.addr = s.addr
		WHERE s.module IN ('[kernel.kallsyms]', '[kernel]')"
}

test_expect_success 'record -- pread_half: compute ~50 %, the kernel ~50 %' '
	"$RSPROF" record -q --no-heap -F 499 -o k.db -- "$TARGETS/pread_half" data 2 &&
	c=$(compute k.db) && k=$(kernel k.db) &&
	echo "$c $k" >rs.txt &&
	say "rsprof: do_compute $c %, kernel $k %" &&
	test "$c" -ge 30 && test "$c" -le 70 && test "$k" -ge 30 && test "$k" -le 70 &&
	test "$(sql k.db "SELECT value FROM meta WHERE key = '\''cpu_scope'\''")" = user+kernel
'

test_expect_success 'the kernel rows are named from /proc/kallsyms' '
	"$RSPROF" report --cpu -n 5 k.db >r.txt && cat r.txt &&
	grep -q "\[kernel.kallsyms\] *[a-z_]" r.txt &&
	grep -q "^# CPU%: *share of all CPU time, user and kernel" r.txt
'

if command -v perf >/dev/null 2>&1; then
	test_expect_success 'perf record on the same program: the same split (within 15 points)' '
		perf record -B --no-bpf-event -q -F 499 -o k.perf -- "$TARGETS/pread_half" data 2 2>/dev/null &&
		perf report -i k.perf --stdio --sort dso,sym 2>/dev/null >k.txt &&
		pc=$(awk "/do_compute/ { sub(\"%\", \"\", \$1); print int(\$1) }" k.txt) &&
		pk=$(awk "/\[kernel.kallsyms\]/ { sub(\"%\", \"\", \$1); s += \$1 } END { print int(s) }" k.txt) &&
		set -- $(cat rs.txt) &&
		say "do_compute: rsprof $1 %, perf $pc %; kernel: rsprof $2 %, perf $pk %" &&
		test $(($1 - pc)) -le 15 && test $((pc - $1)) -le 15 &&
		test $(($2 - pk)) -le 15 && test $((pk - $2)) -le 15
	'
else
	test_skip 'perf record on the same program' 'perf is not installed'
fi

test_expect_success '--user-only: user time only, compute near 100 %, the header says so' '
	"$RSPROF" record -q --no-heap --user-only -F 499 -o u.db -- "$TARGETS/pread_half" data 1 &&
	c=$(compute u.db) && k=$(kernel u.db) &&
	say "--user-only: do_compute $c %, kernel $k %" &&
	test "$c" -ge 85 && test "$k" = 0 &&
	test "$(sql u.db "SELECT value FROM meta WHERE key = '\''cpu_scope'\''")" = user &&
	"$RSPROF" report --cpu u.db | grep -q "^# CPU%: *share of user time only"
'

test_done
