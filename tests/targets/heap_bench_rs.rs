// Allocation-heavy Rust target for bench/heap.sh: N Box allocations and
// drops through __rust_alloc/__rust_dealloc, timed inside the program.
// Prints "ns_per_pair N cpu_ns_per_pair": wall-clock time, and the CPU time
// of the thread (user and kernel: what a loaded machine does not inflate).
//
//   heap_bench_rs [N [DELAY_MS]]
mod hint;
use hint::black_box;
use std::time::{Duration, Instant};

#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

extern "C" {
    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
}

// The CPU time of this thread, in ns (CLOCK_THREAD_CPUTIME_ID).
fn thread_cpu_ns() -> f64 {
    let mut ts = Timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe {
        clock_gettime(3, &mut ts);
    }
    ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let delay: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(0);
    let mut keep: Vec<Option<Vec<u8>>> = (0..16).map(|_| None).collect();

    if delay > 0 {
        std::thread::sleep(Duration::from_millis(delay));
    }
    // a first tenth untimed: the steady state is measured, not the start
    for i in 0..n / 10 {
        let v: Vec<u8> = Vec::with_capacity(16 + (i & 255));
        keep[i & 15] = Some(black_box(v));
    }
    let t0 = Instant::now();
    let c0 = thread_cpu_ns();
    for i in 0..n {
        let v: Vec<u8> = Vec::with_capacity(16 + (i & 255));
        keep[i & 15] = Some(black_box(v));
    }
    let c1 = thread_cpu_ns();
    let dt = t0.elapsed();
    black_box(&keep);
    println!(
        "{:.1} {} {:.1}",
        dt.as_nanos() as f64 / n as f64,
        n,
        (c1 - c0) / n as f64
    );
}
