// Heap test target (issue 3, test 1): known retaining lines and churn.
//
//   heap_rust [CHURN [HOLD_MS]]
//
// Keeps 40 MiB live from the Vec growth line (HEAP_VEC), 10 MiB from
// vec![0u8; n] (HEAP_ZEROED, __rust_alloc_zeroed), 4 MiB from String growth
// (HEAP_STRING, __rust_realloc), churns CHURN allocate+free pairs
// (HEAP_CHURN), holds HOLD_MS, and exits without dropping anything so the
// retained memory is still live when the recording ends.
mod hint;
use hint::black_box;
use std::time::Duration;

#[inline(never)]
fn grow_vec() -> Vec<[u8; 5]> {
    let mut v = Vec::new();
    for i in 0..(1usize << 23) {
        v.push([i as u8; 5]); // HEAP_VEC: 2^23 * 5 bytes = 40 MiB
    }
    v
}

#[inline(never)]
fn zeroed() -> Vec<u8> {
    let z = vec![0u8; 10 << 20]; // HEAP_ZEROED: 10 MiB
    z
}

#[inline(never)]
fn grow_string() -> String {
    let mut s = String::new();
    for i in 0..(4usize << 20) {
        s.push((b'a' + (i % 26) as u8) as char); // HEAP_STRING: 4 MiB
    }
    s
}

#[inline(never)]
fn churn(n: u64) -> u64 {
    let mut sum = 0u64;
    for i in 0..n {
        let b = Box::new([i; 4]); // HEAP_CHURN: 32 bytes, freed at once
        sum = sum.wrapping_add(black_box(&b)[1]);
    }
    sum
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let hold: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1500);

    let v = grow_vec();
    let z = zeroed();
    let s = grow_string();
    let sum = churn(n);
    black_box((&v, &z, &s, sum));
    std::thread::sleep(Duration::from_millis(hold));
    std::process::exit(0);
}
