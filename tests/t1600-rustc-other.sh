#!/bin/sh
# The Rust targets and the demo built with the rustc that the build did not
# choose: Debian 12's 1.63 (legacy symbol mangling only) and a current rustc
# (rustup's, in ~/.cargo/bin: v0 mangling for the program, legacy left in
# parts of std) must both build them, and the Rust CPU and heap tests pass on
# those builds too (t1001, t1500, t1508, t1528, t9000 run again against them).
. "$(dirname "$0")/lib.sh"

version() {
	"$1" --version 2>/dev/null | head -n 1
}

used=$(version "$RUSTC")
other=
for r in "$(command -v rustc)" "$HOME/.cargo/bin/rustc" /usr/bin/rustc; do
	[ -n "$r" ] && [ -x "$r" ] || continue
	v=$(version "$r")
	if [ -n "$v" ] && [ "$v" != "$used" ]; then
		other=$r
		break
	fi
done

if [ -z "$other" ]; then
	# Not a missing kernel feature: a machine with only Debian's rustc (a
	# fresh one) skips this, on CI too.
	test_count=$((test_count + 1))
	echo "ok $test_count # skip a second rustc: only ${used:-no rustc} here"
	test_done
fi
say "build: $RUSTC ($used); other: $other ($(version "$other"))"

test_expect_success "the Rust targets build with $(version "$other")" '
	make --no-print-directory -C "$TOP/tests/targets" OUT="$TEST_DIR/targets" RUSTC="$other" rust &&
	test -x "$TEST_DIR/targets/heap_rust" && test -x "$TEST_DIR/targets/rust_inline"
'

# t9000 finds the demo beside rsprof.
test_expect_success "the demo builds with $(version "$other")" '
	make --no-print-directory -C "$TOP" OUT="$TEST_DIR/out" RUSTC="$other" "$TEST_DIR/out/demo" &&
	cp "$RSPROF" "$TEST_DIR/out/rsprof"
'

# mangled FILE PREFIX: how many symbols of the file start with PREFIX
mangled() {
	nm "$1" | awk -v p="$2" 'index($3, p) == 1 { n++ } END { print n + 0 }'
}

test_expect_success 'the symbol mangling of each rustc' '
	make --no-print-directory -C "$TOP/tests/targets" OUT="$TEST_DIR/used" RUSTC="$RUSTC" \
		"$TEST_DIR/used/heap_rust" &&
	for b in used/heap_rust targets/heap_rust; do
		say "$b: $(mangled "$b" _R) v0 symbols, $(mangled "$b" _ZN) legacy"
	done &&
	for r in "$RUSTC:used" "$other:targets"; do
		case $(version "${r%:*}") in
		"rustc 1.63."*) test "$(mangled "${r#*:}/heap_rust" _R)" = 0 ;;
		esac || exit 1
	done
'

# again SCRIPT TITLE: the test script against the other rustc's builds.
again() {
	RSPROF=$TEST_DIR/out/rsprof TARGETS=$TEST_DIR/targets RUSTC=$other \
		"$TEST_SRC/$1" >"$1.tap" 2>&1
	_rc=$?
	if [ $_rc = 0 ] && grep -q "^ok .*# skip" "$1.tap"; then
		test_skip "$2" "$(grep -m 1 "# skip" "$1.tap" | sed 's/.*# skip //')"
	elif [ $_rc = 0 ]; then
		test_ok "$2 ($(grep -c "^ok" "$1.tap") checks)"
	else
		test_not_ok "$2"
		sed 's/^/# /' "$1.tap" | tail -n 60
	fi
}

again t1001-record-rust-inline.sh "CPU: the inlined helper's line (t1001), other rustc"
again t1500-heap-rust.sh "heap: the Rust allocator's lines (t1500), other rustc"
again t1508-heap-no-frame-pointers.sh "heap without frame pointers (t1508), other rustc"
again t1528-heap-rust-nofp.sh "heap, Rust without frame pointers, through the CFI (t1528), other rustc"
again t9000-demo.sh "the demo's hot and retaining lines (t9000), other rustc"

test_done
