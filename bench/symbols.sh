#!/bin/sh
# Symbol resolution benchmark (not a test): resolver__new on a running
# target, then 1,000 distinct addresses spread over its code (cold: every
# unit they fall in is read), the same again (cache), and 1,000 over libc.
# Targets: tests/targets/rust_inline (4 MB, Rust -g -O) and a generated Rust
# program of 400 functions over HashMap/BTreeMap/format! (26 MB, 8 MB of
# .debug_info), built once into $OUT/bench.
#   bench/symbols.sh [OUT]     OUT: the build directory (default ./out)
# Goal (issue 2): 1,000 addresses of a big Rust binary well under a second,
# start-up (exe + libc) under 0.1 s.
set -u
OUT=${1:-$(pwd)/out}
BIN=$OUT/tests/unit/bin/test-resolver
if [ ! -x "$BIN" ]; then
	make -s "$BIN" OUT="$OUT" || exit 1
fi
if [ ! -x "$OUT/targets/rust_inline" ]; then
	make -s targets OUT="$OUT" || exit 1
fi

echo "== symbols: rust_inline (Rust -g -O, $(( $(stat -c %s "$OUT/targets/rust_inline") / 1048576 )) MB)"
"$BIN" --bench "$OUT/targets/rust_inline" 1000 || exit 1

big=$OUT/bench/big_rs
if [ ! -x "$big" ] && command -v rustc >/dev/null; then
	mkdir -p "$OUT/bench"
	echo "(building a big Rust program once: $big, about two minutes)"
	python3 - >"$OUT/bench/big_rs.rs" <<'PY'
print("use std::collections::{HashMap, BTreeMap};\nuse std::hint::black_box;")
for i in range(400):
    print(f"""
#[inline(never)]
fn f{i}(n: u64) -> u64 {{
    let mut m: HashMap<String, Vec<u64>> = HashMap::new();
    let mut b: BTreeMap<u64, String> = BTreeMap::new();
    for k in 0..n {{
        let key = format!("k{{}}-{i}", k % 17);
        m.entry(key.clone()).or_default().push(k.wrapping_mul({i + 3}));
        b.insert(k ^ {i}, key);
    }}
    let mut v: Vec<u64> = m.values().flat_map(|x| x.iter().copied()).collect();
    v.sort_unstable_by(|a, c| c.cmp(a));
    v.iter().take(3).sum::<u64>() + b.len() as u64
}}""")
print("fn main() {\n    let secs: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(10);")
print("    let t = std::time::Instant::now();\n    let mut x = 0u64;\n    while t.elapsed().as_secs() < secs {")
for i in range(400):
    print(f"        x = x.wrapping_add(f{i}(black_box(20)));")
print("    }\n    println!(\"{}\", x);\n}")
PY
	rustc -g -O -C codegen-units=4 --edition 2021 -o "$big" "$OUT/bench/big_rs.rs" || exit 1
fi
if [ -x "$big" ]; then
	echo
	echo "== symbols: a big Rust program ($(( $(stat -c %s "$big") / 1048576 )) MB)"
	"$BIN" --bench "$big" 1000 || exit 1
fi
