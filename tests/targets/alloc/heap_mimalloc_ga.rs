// Heap test target (built by tests/t1533 with Debian's libmimalloc): a
// Rust #[global_allocator] calling mimalloc's mi_malloc_aligned,
// mi_zalloc_aligned, mi_realloc_aligned and mi_free through FFI, as the
// mimalloc crate does. rustc inlines the allocator into its callers: they
// call mimalloc's functions directly, never __rust_alloc or malloc.
//
//   heap_mimalloc_ga [CHURN [READY_FILE GO_FILE]]
//
// With READY_FILE and GO_FILE (to attach to it): creates READY_FILE, then
// waits (up to 20 s) for GO_FILE to exist before anything below.
//
// Keeps 8 MiB in one Vec (MG_KEEP), 2,000 boxes of 1 KiB (MG_BOXES), a
// Vec grown by realloc to 1 MiB of u64 (MG_GROW); churns CHURN small Vecs
// (MG_CHURN).
#[path = "../hint.rs"]
mod hint;
use hint::black_box;
use std::alloc::{GlobalAlloc, Layout};

#[link(name = "mimalloc")]
extern "C" {
    fn mi_malloc_aligned(size: usize, align: usize) -> *mut u8;
    fn mi_zalloc_aligned(size: usize, align: usize) -> *mut u8;
    fn mi_realloc_aligned(p: *mut u8, size: usize, align: usize) -> *mut u8;
    fn mi_free(p: *mut u8);
}

struct Mi;

unsafe impl GlobalAlloc for Mi {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        mi_malloc_aligned(l.size(), l.align())
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        mi_zalloc_aligned(l.size(), l.align())
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        mi_realloc_aligned(p, n, l.align())
    }
    unsafe fn dealloc(&self, p: *mut u8, _l: Layout) {
        mi_free(p)
    }
}

#[global_allocator]
static GLOBAL: Mi = Mi;

#[inline(never)]
fn keep() -> Vec<u8> {
    vec![7u8; 8 << 20] // MG_KEEP
}

#[inline(never)]
fn boxes() -> Vec<Box<[u8; 1024]>> {
    let mut v = Vec::with_capacity(2000); // MG_BOXES_VEC
    for i in 0..2000 {
        v.push(Box::new([i as u8; 1024])); // MG_BOXES
    }
    v
}

#[inline(never)]
fn grow() -> Vec<u64> {
    let mut v = Vec::new();
    for i in 0..(128u64 << 10) {
        v.push(i); // MG_GROW
    }
    v
}

#[inline(never)]
fn churn(n: usize) -> usize {
    let mut sum = 0;
    for i in 0..n {
        let v: Vec<u64> = black_box(Vec::with_capacity(4 + (i & 7))); // MG_CHURN
        sum += v.capacity();
    }
    sum
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(100000);
    if args.len() > 3 {
        std::fs::write(&args[2], b"").expect("READY_FILE");
        for _ in 0..2000 {
            if std::path::Path::new(&args[3]).exists() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
    let k = keep();
    let b = boxes();
    let g = grow();
    let s = churn(n);
    println!("{} {} {} {}", k.len(), b.len(), g.len(), s);
}
