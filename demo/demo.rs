// The demo program of `make demo`: a small "service" that parses records,
// scores them (the hot loop) and keeps an index in memory (the heap that
// stays). Built with debug info and frame pointers:
//   rustc -g -O -C force-frame-pointers=yes demo/demo.rs
use std::collections::HashMap;
use std::time::{Duration, Instant};

struct Record {
    id: u64,
    payload: Vec<u8>,
}

#[inline(never)]
fn parse(id: u64) -> Record {
    let payload = vec![(id & 0xff) as u8; 256]; // demo: retained heap
    Record { id, payload }
}

#[inline(never)]
fn score(r: &Record) -> u64 {
    let mut h = r.id;
    for round in 0..32u64 {
        for &b in &r.payload {
            h = h.wrapping_mul(6364136223846793005).wrapping_add(b as u64 ^ round); // demo: hot line
        }
    }
    h
}

fn main() {
    let secs: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(3);
    let end = Instant::now() + Duration::from_secs(secs);
    let mut index: HashMap<u64, Record> = HashMap::new();
    let mut total = 0u64;
    let mut id = 0u64;
    while Instant::now() < end {
        let r = parse(id);
        total = total.wrapping_add(score(&r));
        index.insert(id, r);
        id += 1;
    }
    println!("demo: {} records indexed, checksum {:x}", index.len(), total);
    // Like many services, exit without tearing the index down: what it
    // holds is still live when the recording ends.
    std::process::exit(0);
}
