// Heap test target (issue 8): a Rust program with its own
// #[global_allocator] that counts and hands over to the system allocator
// (as tracking allocators do): its memory comes from malloc, and the
// in-process tracker sees it there. (A #[global_allocator] that is
// jemalloc or mimalloc never calls malloc: rsprof uses uprobes then.)
//
//   heap_global_alloc [HOLD_MS]
//
// Keeps 4 MiB in one Vec (GA_KEEP), allocated in the allocator's own code
// (GA_ALLOC: the program's own code, so the first-user frame).
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static CALLS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        CALLS.fetch_add(1, Ordering::Relaxed);
        System.alloc(l) // GA_ALLOC
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[inline(never)]
fn keep() -> Vec<u8> {
    vec![1u8; 4 << 20] // GA_KEEP
}

fn main() {
    let hold: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(100);
    let v = keep();
    std::thread::sleep(std::time::Duration::from_millis(hold));
    println!("{} {}", v.len(), CALLS.load(Ordering::Relaxed) > 0);
    std::process::exit(0); // v stays live
}
