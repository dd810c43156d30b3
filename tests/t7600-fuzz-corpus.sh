#!/bin/sh
# Issue 11, item 10: the fuzz targets (tests/fuzz/) replay their corpus in
# the tree under the sanitizer build (ASan, UBSan fatal): the profile reader
# on the seed profiles and on the corrupted ones of tests/corrupt.py, the
# option parser on its argument lists. `make fuzz` fuzzes from the same
# corpus with libFuzzer.
. "$(dirname "$0")/lib.sh"

if [ -z "${FUZZ_DIR:-}" ] || [ ! -x "$FUZZ_DIR/fuzz-reader-replay" ]; then
	test_skip 'fuzz corpus replay' 'no sanitizer build of the fuzz targets (make test makes it)'
	test_done
fi
export ASAN_OPTIONS=exitcode=99:detect_leaks=1 UBSAN_OPTIONS=exitcode=98:print_stacktrace=1

test_expect_success 'the reader target replays tests/fuzz/corpus/reader' '
	timeout 300 "$FUZZ_DIR/fuzz-reader-replay" "$TEST_SRC"/fuzz/corpus/reader/* >out 2>err;
	r=$?; cat out; test $r = 0 || { cat err; exit 1; }
'

test_expect_success 'the reader target on the corrupted profiles' '
	cp "$TEST_SRC/fuzz/corpus/reader/v3-cpu-heap-stacks-rss" base.db &&
	python3 "$TEST_SRC/corrupt.py" base.db v --seed 7 --flips 20 >/dev/null &&
	timeout 600 "$FUZZ_DIR/fuzz-reader-replay" v/*.db >out 2>err;
	r=$?; tail -3 out; test $r = 0 || { grep -v "^ok" out | tail; cat err; exit 1; }
'

test_expect_success 'the reader target on the corrupted profiles with totals (record --retain)' '
	cp "$TEST_SRC/fuzz/corpus/reader/v3-totals-retain" tbase.db &&
	python3 "$TEST_SRC/corrupt.py" tbase.db tv --seed 7 --flips 20 >/dev/null &&
	timeout 600 "$FUZZ_DIR/fuzz-reader-replay" tv/*.db >out 2>err;
	r=$?; tail -3 out; test $r = 0 || { grep -v "^ok" out | tail; cat err; exit 1; }
'

test_expect_success 'the option parser target replays tests/fuzz/corpus/options' '
	timeout 60 "$FUZZ_DIR/fuzz-options-replay" "$TEST_SRC"/fuzz/corpus/options/* >out 2>err;
	r=$?; cat out; test $r = 0 || { cat err; exit 1; }
'

test_done
