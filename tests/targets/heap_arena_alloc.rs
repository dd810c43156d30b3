// Heap test target: a Rust program whose #[global_allocator] never calls
// malloc: it carves blocks out of 64 MiB arenas it maps itself (mmap
// through libc), and never gives memory back (dealloc only counts). rustc
// inlines it into its callers: no entry point for the tracker to hook;
// the arena's mapping is counted, and report says what it is (t1533).
//
//   heap_arena_alloc [CHURN]
//
// Keeps 8 MiB in one Vec (AR_KEEP) and 2,000 boxes of 1 KiB (AR_BOXES),
// churns CHURN small Vecs (AR_CHURN).
mod hint;
use hint::black_box;
use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicUsize, Ordering};

extern "C" {
    fn mmap(addr: *mut u8, len: usize, prot: i32, flags: i32, fd: i32, off: i64) -> *mut u8;
}

const ARENA: usize = 64 << 20;

struct Arena {
    cur: AtomicUsize,
    end: AtomicUsize,
}

static LIVE: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Arena {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let size = (l.size() + 15) & !15;
        loop {
            let cur = self.cur.load(Ordering::Acquire);
            let start = (cur + l.align() - 1) & !(l.align() - 1);
            if cur != 0 && start + size <= self.end.load(Ordering::Acquire) {
                if self.cur.compare_exchange(cur, start + size, Ordering::AcqRel,
                                             Ordering::Relaxed).is_ok() {
                    LIVE.fetch_add(l.size(), Ordering::Relaxed);
                    return start as *mut u8;
                }
                continue;
            }
            let want = if size + l.align() > ARENA { size + l.align() } else { ARENA };
            let p = mmap(std::ptr::null_mut(), want, 3, 0x22, -1, 0); // AR_MMAP
            if p as isize == -1 {
                return std::ptr::null_mut();
            }
            // a new arena (racing threads each map one: the loser's is wasted)
            self.end.store(p as usize + want, Ordering::Release);
            self.cur.store(p as usize, Ordering::Release);
        }
    }
    unsafe fn dealloc(&self, _p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static GLOBAL: Arena = Arena { cur: AtomicUsize::new(0), end: AtomicUsize::new(0) };

#[inline(never)]
fn keep() -> Vec<u8> {
    vec![7u8; 8 << 20] // AR_KEEP
}

#[inline(never)]
fn boxes() -> Vec<Box<[u8; 1024]>> {
    let mut v = Vec::with_capacity(2000);
    for i in 0..2000 {
        v.push(Box::new([i as u8; 1024])); // AR_BOXES
    }
    v
}

#[inline(never)]
fn churn(n: usize) -> usize {
    let mut sum = 0;
    for i in 0..n {
        let v: Vec<u64> = black_box(Vec::with_capacity(4 + (i & 7))); // AR_CHURN
        sum += v.capacity();
    }
    sum
}

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(100000);
    let k = keep();
    let b = boxes();
    let s = churn(n);
    println!("{} {} {} {}", k.len(), b.len(), s, LIVE.load(Ordering::Relaxed) >= (8 << 20));
}
