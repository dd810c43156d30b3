#!/bin/sh
# Where the heap tracker is not put into a running process, rsprof falls
# back to uprobes and says why in one line, in the summary and in
# meta.heap_backend_reason; --heap-backend inject makes that an error. The
# target goes on unchanged: its output as unprofiled.
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/heap-lib.sh"

T=$TARGETS/heap_inject

if ! have_bpf; then
	test_skip 'uprobes where injection is refused' 'needs root and kernel BTF'
	test_done
fi

# start PROG MODE ARG: in the background, once it runs
start() {
	rm -f ready
	"$1" "$2" "$PWD/ready" "$3" >"$2.out" &
	tp=$!
	bg_pid $tp
	wait_for_file ready
}

# refused DB REASON: uprobes ran, and the file and the summary say why
refused() {
	test "$(meta "$1" heap_backend)" = uprobe &&
	meta "$1" heap_backend_reason | grep -- "$2" &&
	grep "heap tracked with uprobes: .*$2" "$1.err"
}

test_expect_success 'a seccomp filter: uprobes, and the reason' '
	start "$T" seccomp 400 || exit 1
	"$RSPROF" record -d 1 -p $tp -o seccomp.db 2>seccomp.db.err >seccomp.db.sum &&
	cat seccomp.db.sum >>seccomp.db.err &&
	refused seccomp.db "seccomp filter" &&
	wait $tp && "$T" seccomp "$PWD/r2" 400 >want && diff want seccomp.out
'

test_expect_success '--heap-backend inject there: an error saying why (heap only), CPU only (else)' '
	start "$T" seccomp 300 || exit 1
	"$RSPROF" record -q -d 500ms --heap-backend inject -p $tp -o cpu.db 2>err &&
	grep "heap tracking unavailable" err && test "$(meta cpu.db heap)" = off &&
	expect_exit 1 "$RSPROF" record -q --no-cpu -d 1 --heap-backend inject -p $tp -o no.db 2>err &&
	cat err && grep "cannot be put into process $tp: .*seccomp" err && grep hint: err &&
	wait $tp
'

if gcc -g -O1 -fno-omit-frame-pointer -pthread -static -o heap_inject_static \
	"$TEST_SRC/targets/heap_inject.c" 2>/dev/null; then
	test_expect_success 'a static executable: uprobes, and the reason' '
		start ./heap_inject_static steady 300 || exit 1
		"$RSPROF" record -d 1 -p $tp -o static.db 2>static.db.err >>static.db.err &&
		refused static.db "statically linked" &&
		wait $tp && ./heap_inject_static steady "$PWD/r2" 300 >want && diff want steady.out
	'
else
	test_skip 'a static executable' 'gcc -static failed (no static libc?)'
fi

test_expect_success 'a process traced already (another tracer): uprobes, and the reason' '
	start "$T" steady 400 || exit 1
	python3 -c "
import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
if libc.ptrace(0x4206, $tp, 0, 0):
    sys.exit(1)
open(\"traced\", \"w\").close()
time.sleep(4)
" &
	py=$!
	wait_for_file traced &&
	"$RSPROF" record -d 1 -p $tp -o traced.db 2>traced.db.err >>traced.db.err &&
	refused traced.db "traced already" &&
	wait $py && wait $tp && "$T" steady "$PWD/r2" 400 >want && diff want steady.out
'

test_expect_success 'a stopped process: uprobes, and the reason' '
	start "$T" steady 400 || exit 1
	kill -STOP $tp &&
	"$RSPROF" record -d 500ms -p $tp -o stopped.db 2>stopped.db.err >>stopped.db.err &&
	kill -CONT $tp &&
	refused stopped.db "stopped" &&
	wait $tp && "$T" steady "$PWD/r2" 400 >want && diff want steady.out
'

# The tracker's region is a few hundred MiB of address space in the
# process: under a limit the program could allocate less than alone.
test_expect_success 'an address-space limit (ulimit -v): uprobes, and the reason' '
	rm -f ready &&
	sh -c "ulimit -v 2000000; exec \"\$0\" steady \"\$1\" 400" "$T" "$PWD/ready" \
		>aslimit.out &
	tp=$! &&
	bg_pid $tp && wait_for_file ready &&
	"$RSPROF" record -d 500ms -p $tp -o aslimit.db 2>aslimit.db.err >>aslimit.db.err &&
	refused aslimit.db "address-space limit" &&
	wait $tp && "$T" steady "$PWD/r3" 400 >want && diff want aslimit.out
'

test_done
