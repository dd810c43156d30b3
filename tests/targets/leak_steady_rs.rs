// Timeline test target (issue 4, test 2), the Rust allocator's side: one
// line leaks steadily while another holds constant memory.
//
//   leak_steady_rs [SECONDS]
//
// hold() keeps 4 MiB from start to end (LEAK:flat); every 20 ms leak_step()
// allocates 32 KiB that is never freed (LEAK:rising). The vector that keeps
// the leaked blocks is allocated once, up front, so it does not grow.
use std::time::{Duration, Instant};

#[inline(never)]
fn hold() -> Vec<u8> {
    vec![1u8; 4 << 20] // LEAK:flat
}

#[inline(never)]
fn leak_step(kept: &mut Vec<Vec<u8>>) {
    let block = vec![7u8; 32 << 10]; // LEAK:rising
    kept.push(block);
}

#[inline(never)]
fn work(seed: u64) -> u64 {
    let mut x = seed;
    for i in 0..200_000u64 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(i); // CPU:work
    }
    x
}

fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(3.0);
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let mut kept: Vec<Vec<u8>> = Vec::with_capacity((secs * 60.0) as usize + 64);
    let held = hold();
    let mut sum = 0u64;
    while Instant::now() < end {
        leak_step(&mut kept);
        sum = sum.wrapping_add(work(sum));
        std::thread::sleep(Duration::from_millis(20));
    }
    println!("{} {} {}", sum & 1, kept.len(), held[0]);
    // exit without freeing: what is kept is still live when recording ends
    std::process::exit(0);
}
