#!/bin/sh
# Issue 11, items 5 and 10: corrupted profiles (tables dropped or made
# recursive views, NULL/text/blob/extreme values in every column, hostile
# meta values, truncations, byte flips, a damaged WAL; tests/corrupt.py)
# through every reader, under the sanitizer build (ASan, UBSan fatal) with
# a time limit: no crash, no sanitizer report, no hang, and an exit status
# of 0, 1, 2 or 6.
. "$(dirname "$0")/lib.sh"

# make test builds rsprof with the sanitizers as $RSPROF_SAN
R=${RSPROF_SAN:-$RSPROF}
[ -x "$R" ] || R=$RSPROF
[ "$R" = "$RSPROF" ] && say "no sanitizer build (RSPROF_SAN): using $RSPROF"
export ASAN_OPTIONS=exitcode=99:detect_leaks=1 UBSAN_OPTIONS=exitcode=98:print_stacktrace=1
export RSPROF_TIME_LIMIT=5s

cp "$TEST_SRC/fuzz/corpus/reader/v3-cpu-heap-stacks-rss" base.db
# every column NULL and INT64_MAX here; t7600 replays a wider set in-process
python3 "$TEST_SRC/corrupt.py" base.db v --seed 11 --flips 10 --sample 0 >names || exit 1
# schema 3's totals and what record --retain folded, damaged the same ways
# (the damage to the other tables is the base's above)
cp "$TEST_SRC/fuzz/corpus/reader/v3-totals-retain" tbase.db
python3 "$TEST_SRC/corrupt.py" tbase.db tv --seed 11 --flips 10 --sample 0 >tnames || exit 1
grep -E "totals|merged|^(drop-|view-|trunc-|flip-|wal-|huge-|dup-)" tnames |
	while read -r n; do mv "tv/$n.db" "v/t-$n.db" &&
		if [ -e "tv/$n.db-wal" ]; then mv "tv/$n.db-wal" "v/t-$n.db-wal"; fi &&
		echo "t-$n"; done >>names || exit 1
say "$(wc -l <names) corrupted profiles"

# Every reader and output form on one file; a line per run that went wrong.
cat >run-one.sh <<'EOS'
#!/bin/sh
# run-one.sh RSPROF NAME: all readers on v/NAME.db; prints problems
R=$1 n=$2 f=v/$2.db
runs() {
	echo "report $f"
	echo "report --json --sort function $f"
	echo "report --format pprof --heap $f"
	echo "info $f"
	echo "timeline -n 3 $f"
	echo "diff base.db $f"
	echo "report --window 0.5s..1s $f"
	echo "top --stdio $f"
	# a column's value: the readers above; the rest of the damage: every form
	case $n in val-*) return ;; esac
	echo "report --csv --heap --at 1s $f"
	echo "report --format folded $f"
	echo "report --window 0.2s..0.8s --sort module -n 2 $f"
	echo "info --json $f"
	echo "info --check $f"
	echo "timeline --csv --cpu $f"
	echo "timeline --json -n 2 --rank growth $f"
	echo "timeline --svg out-$n.svg -n 2 $f"
	echo "diff --json --by function $f base.db"
	echo "query $f SELECT*FROM(symbols)"
	echo "report -g --sort-by alloc $f"
	echo "annotate --stdio $f grow"
	echo "history $f --addr 0x1000"
}
runs | while read -r args; do
	# shellcheck disable=SC2086
	timeout 30 "$R" $args >/dev/null 2>err-$n
	rc=$?
	if grep -qE "runtime error|Sanitizer|AddressSanitizer|LeakSanitizer" err-$n; then
		echo "SANITIZER rc=$rc: rsprof $args"
		sed 's/^/    /' err-$n | head -30
	elif [ $rc = 124 ]; then
		echo "HANG: rsprof $args"
	elif [ $rc != 0 ] && [ $rc != 1 ] && [ $rc != 2 ] && [ $rc != 6 ]; then
		echo "EXIT $rc: rsprof $args"
		sed 's/^/    /' err-$n | head -10
	fi
done
rm -f err-$n out-$n.svg
EOS
chmod +x run-one.sh

test_expect_success 'every reader on every corrupted profile: no crash, report or hang' '
	xargs -P 2 -n 1 ./run-one.sh "$R" <names >problems 2>&1;
	cat problems;
	! test -s problems
'

test_expect_success 'a recursive view where a table should be: refused at once (exit 6)' '
	for t in meta checkpoints symbols cpu_samples; do
		expect_exit 6 timeout 10 "$R" info v/view-$t.db 2>err || exit 1
		grep -q "is a view" err || { cat err; exit 1; }
	done
'

test_expect_success 'a value longer than 16 MiB: a clear error (exit 6)' '
	expect_exit 6 timeout 30 "$R" report v/huge-text.db 2>err;
	r=$?; cat err; test $r = 0 && grep -qi "too big" err
'

test_done
