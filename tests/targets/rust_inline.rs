// A hot #[inline(always)] helper whose loop is made of inlined core
// arithmetic (wrapping_mul, wrapping_add, rotate_left): the line table puts
// nearly every sample inside core/src/num/uint_macros.rs; rsprof must report
// the helper's own line below (marked HOT LINE), not the caller's line
// (CALLER LINE) and not core/. Usage: rust_inline [SECONDS] (default 3).
mod hint;
use hint::black_box;

#[inline(always)]
fn mix(x: u64, n: u64) -> u64 {
    let mut h = x;
    for i in 0..n {
        h = h.wrapping_mul(0x9e3779b97f4a7c15).wrapping_add(i).rotate_left(17); // HOT LINE
    }
    h
}

#[inline(never)]
fn work(seed: u64) -> u64 {
    let mut acc = 0u64;
    for k in 0..100u64 {
        acc ^= mix(black_box(seed + k), 100_000); // CALLER LINE
    }
    acc
}

fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(3.0);
    let start = std::time::Instant::now();
    let mut total = 0u64;
    while start.elapsed().as_secs_f64() < secs {
        total = total.wrapping_add(work(black_box(total)));
    }
    println!("{}", total);
}
