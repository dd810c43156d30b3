#!/bin/sh
# Issue 11, items 1 and 8: the files rsprof writes, attacked by an
# unprivileged user who plants links, FIFOs and files in a shared sticky
# directory before root writes there: never written through, never left
# behind, mode 0600 whatever the umask.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null || ! make_test_user; then
	test_skip 'planted links and files' 'needs root, setpriv and useradd for an attacker'
	test_done
fi

chmod 755 "$TEST_DIR"
mkdir shared && chmod 1777 shared
S=$TEST_DIR/shared
# root's secret, which the attacker would like overwritten
printf 'root secret\n' >secret && chmod 600 secret
cp "$TEST_SRC/fuzz/corpus/reader/v2-cpu-heap-stacks" p.db

plant() {	# plant COMMAND...: the attacker runs it in the shared directory
	(cd "$S" && as_test_user "$@")
}

test_expect_success 'timeline --svg: a planted link to a root file is refused' '
	plant ln -s "$TEST_DIR/secret" pic.svg &&
	expect_exit 1 "$RSPROF" timeline --svg "$S/pic.svg" p.db 2>err &&
	cat err && grep -q "symbolic link" err &&
	test "$(cat secret)" = "root secret" && test -L "$S/pic.svg"
'

test_expect_success 'timeline --svg: a planted PATH.tmp link is not used' '
	plant ln -s "$TEST_DIR/secret" new.svg.tmp &&
	"$RSPROF" timeline --svg "$S/new.svg" p.db >out &&
	test "$(cat secret)" = "root secret" &&
	grep -q "<svg" "$S/new.svg" && test "$(stat -c %a "$S/new.svg")" = 600 &&
	test "$(stat -c %U "$S/new.svg")" = root
'

test_expect_success 'timeline --svg: a FIFO is refused without blocking' '
	plant mkfifo fifo.svg &&
	expect_exit 1 timeout 10 "$RSPROF" timeline --svg "$S/fifo.svg" p.db 2>err &&
	cat err && grep -q "not a regular file" err
'

if dd if=/dev/zero of=disk.img bs=1k count=64 2>/dev/null &&
   loop=$(losetup -f --show disk.img 2>/dev/null); then
	test_expect_success 'timeline --svg: a link to a block device is refused, the device untouched' '
		before=$(md5sum <"$loop") &&
		plant ln -s "$loop" dev.svg &&
		expect_exit 1 "$RSPROF" timeline --svg "$S/dev.svg" p.db 2>err &&
		cat err && test "$(md5sum <"$loop")" = "$before"
	'
	losetup -d "$loop"
else
	test_skip 'timeline --svg to a loop device' 'no loop device here'
fi

test_expect_success 'timeline --svg: umask 0777 still gives mode 0600' '
	(umask 0777 && "$RSPROF" timeline --svg mask.svg p.db >/dev/null) &&
	test "$(stat -c %a mask.svg)" = 600
'

if ! have_perf; then
	test_skip 'record into planted files' 'perf events not allowed here'
	test_done
fi

rec() {	# rec FILE: a short CPU-only recording as root
	"$RSPROF" record -q --no-heap -o "$1" -- "$TARGETS/cpu_split" 0.1
}

test_expect_success 'record -o a planted link: refused (exit 6), nothing written' '
	plant ln -s "$TEST_DIR/secret" a.db &&
	expect_exit 6 rec "$S/a.db" 2>err && cat err &&
	grep -q "symbolic link" err && test "$(cat secret)" = "root secret" &&
	! test -e "$S/a.db-wal" && ! test -e "$S/a.db-shm"
'

test_expect_success 'record: a planted -wal link: refused, nothing left behind' '
	plant ln -s "$TEST_DIR/secret" b.db-wal &&
	expect_exit 6 rec "$S/b.db" 2>err && cat err &&
	test "$(cat secret)" = "root secret" &&
	! test -e "$S/b.db" && ! test -e "$S/b.db-shm"
'

test_expect_success 'record: a planted -shm file of the attacker: refused, nothing left behind' '
	plant touch c.db-shm &&
	expect_exit 6 rec "$S/c.db" 2>err && cat err &&
	! test -e "$S/c.db" && ! test -e "$S/c.db-wal" &&
	test "$(stat -c %U "$S/c.db-shm")" = "$TEST_USER"
'

test_expect_success 'record: a planted -wal file of the attacker: refused' '
	plant touch d.db-wal &&
	expect_exit 6 rec "$S/d.db" 2>err && cat err &&
	! test -e "$S/d.db" && test "$(stat -c %s "$S/d.db-wal")" = 0
'

test_expect_success 'record: umask 0777 and 0277 both give a readable 0600 profile' '
	(umask 0777 && rec "$S/m777.db") && (umask 0277 && rec "$S/m277.db") &&
	test "$(stat -c %a "$S/m777.db")" = 600 && test "$(stat -c %a "$S/m277.db")" = 600 &&
	"$RSPROF" info "$S/m777.db" >/dev/null && "$RSPROF" info "$S/m277.db" >/dev/null &&
	! test -e "$S/m777.db-wal" && ! test -e "$S/m277.db-shm"
'

test_expect_success 'record fails after the file was made (no debug info): nothing left behind' '
	gcc -g -O1 -static -o nodebug "$TEST_SRC/targets/cpu_split.c" && strip --strip-all nodebug &&
	expect_exit 5 "$RSPROF" record -q --user-only --no-heap -o "$S/e.db" -- ./nodebug 0.1 \
		2>/dev/null;
	r=$?; ls -la "$S"; test $r = 0 &&
	! test -e "$S/e.db" && ! test -e "$S/e.db-wal" && ! test -e "$S/e.db-shm"
'

test_expect_success 'root in a directory it reaches only through CAP_DAC_OVERRIDE: no -wal/-shm left' '
	mkdir user-dir && chown "$TEST_USER" user-dir && chmod 755 user-dir &&
	rec user-dir/f.db && ls -la user-dir &&
	test -s user-dir/f.db && ! test -e user-dir/f.db-wal && ! test -e user-dir/f.db-shm
'

test_done
