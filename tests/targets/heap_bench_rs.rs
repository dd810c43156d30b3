// Allocation-heavy Rust target for bench/heap.sh: N Box allocations and
// drops through __rust_alloc/__rust_dealloc, timed inside the program.
// Prints "ns_per_pair N".
//
//   heap_bench_rs [N [DELAY_MS]]
mod hint;
use hint::black_box;
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let delay: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(0);
    let mut keep: Vec<Option<Vec<u8>>> = (0..16).map(|_| None).collect();

    if delay > 0 {
        std::thread::sleep(Duration::from_millis(delay));
    }
    let t0 = Instant::now();
    for i in 0..n {
        let v: Vec<u8> = Vec::with_capacity(16 + (i & 255));
        keep[i & 15] = Some(black_box(v));
    }
    let dt = t0.elapsed();
    black_box(&keep);
    println!("{:.1} {}", dt.as_nanos() as f64 / n as f64, n);
}
