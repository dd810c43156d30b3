// Heap sites of a Rust program built as cargo builds a release (issue 9):
// -O without frame pointers (tests/targets/Makefile builds nofp_*.rs so),
// std without them either. The in-process tracker unwinds it through the
// DWARF CFI (libunwind).
//
//   nofp_heap_rs [HOLD_MS]
//
// Keeps, each from its own line, until the end (exits without dropping):
//   NOFP_VEC      Vec<u64> grown by push to 2^21 elements: 16 MiB
//   NOFP_ZEROED   vec![0u32; 2^21]: 8 MiB (__rust_alloc_zeroed)
//   NOFP_BOX      65,536 Box<[u8; 64]>: 4 MiB (the Vec holding them: 512 KiB
//                 on NOFP_BOXES)
//   NOFP_STRING   String grown by push to 2 MiB (__rust_realloc)
//   NOFP_MAP      HashMap<u64, u64> of 65,536 entries: its table of 131,072
//                 buckets, 131,072 * 17 + 16 bytes (2.1 MiB)
mod hint;
use hint::black_box;
use std::collections::HashMap;
use std::time::Duration;

#[inline(never)]
fn grow_vec() -> Vec<u64> {
    let mut v = Vec::new();
    for i in 0..(1u64 << 21) {
        v.push(i); // NOFP_VEC
    }
    v
}

#[inline(never)]
fn zeroed() -> Vec<u32> {
    let z = vec![0u32; 1 << 21]; // NOFP_ZEROED
    z
}

#[inline(never)]
fn boxes() -> Vec<Box<[u8; 64]>> {
    let mut v = Vec::with_capacity(1 << 16); // NOFP_BOXES
    for i in 0..(1usize << 16) {
        v.push(Box::new([i as u8; 64])); // NOFP_BOX
    }
    v
}

#[inline(never)]
fn grow_string() -> String {
    let mut s = String::new();
    for i in 0..(2usize << 20) {
        s.push((b'a' + (i % 26) as u8) as char); // NOFP_STRING
    }
    s
}

#[inline(never)]
fn map() -> HashMap<u64, u64> {
    let mut m = HashMap::new();
    for i in 0..(1u64 << 16) {
        m.insert(i, i * 3); // NOFP_MAP
    }
    m
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let hold: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(300);

    let v = grow_vec();
    let z = zeroed();
    let b = boxes();
    let s = grow_string();
    let m = map();
    black_box((&v, &z, &b, &s, &m));
    std::thread::sleep(Duration::from_millis(hold));
    std::process::exit(0);
}
