// Call-graph test target in Rust: a trait method (`<Crc as Hasher>::digest`,
// which pprof must not cut to `::digest`) called from run() on the line
// marked CALL:digest, itself called from main() on the line marked CALL:run.
// The time goes to the line marked HOT:digest. Builds with rustc 1.63.
// Usage: callgraph_rs [SECONDS] (default 2).
use std::time::Instant;

trait Hasher {
    fn digest(&self, n: u64) -> u64;
}

struct Crc {
    seed: u64,
}

impl Hasher for Crc {
    #[inline(never)]
    fn digest(&self, n: u64) -> u64 {
        let mut h = self.seed;
        for i in 0..n {
            h = h.wrapping_mul(0x9e3779b97f4a7c15).wrapping_add(i).rotate_left(13); // HOT:digest
        }
        h
    }
}

#[inline(never)]
fn run(h: &dyn Hasher, n: u64) -> u64 {
    let r = h.digest(n); // CALL:digest
    r ^ (r >> 7)
}

fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(2.0);
    let c = Crc { seed: secs as u64 + 7 };
    let start = Instant::now();
    let mut total = 0u64;
    while start.elapsed().as_secs_f64() < secs {
        total = total.wrapping_add(run(&c, 200_000 + (total & 1))); // CALL:run
    }
    println!("{}", total);
}
