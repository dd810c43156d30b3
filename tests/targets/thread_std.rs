// Threads through Rust's std, one case per argument: what a Rust program
// does with threads, each printing a result that does not depend on
// scheduling. Built with every rustc found (tests/t1530): std's thread
// start-up changed across releases (since 1.8x every new thread asks glibc
// for its stack bounds, which allocates, before any of the program's code).
use std::cell::RefCell;
use std::panic;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;

static DROPPED: AtomicUsize = AtomicUsize::new(0);

struct Noisy(Vec<u64>);

impl Drop for Noisy {
    fn drop(&mut self) {
        DROPPED.fetch_add(self.0.len(), Ordering::SeqCst);
    }
}

thread_local! {
    static LOCAL: RefCell<Noisy> = RefCell::new(Noisy(Vec::new()));
}

fn spawn() {
    let h = thread::spawn(|| {
        let v: Vec<u64> = (0..100_000).collect(); // THREAD_VEC
        v.iter().sum::<u64>()
    });
    println!("spawn: {}", h.join().unwrap());
}

fn scope() {
    let data: Vec<u64> = (1..=8000).collect();
    let mut sums = vec![0u64; 8];
    thread::scope(|s| {
        for (chunk, out) in data.chunks(1000).zip(sums.iter_mut()) {
            s.spawn(move || {
                let v: Vec<u64> = chunk.iter().map(|x| x * 2).collect();
                *out = v.iter().sum();
            });
        }
    });
    println!("scope: {:?} {}", &sums[..2], sums.iter().sum::<u64>());
}

fn pool() {
    let (job_tx, job_rx) = mpsc::channel::<u64>();
    let (res_tx, res_rx) = mpsc::channel::<(u64, String)>();
    let job_rx = Arc::new(Mutex::new(job_rx));
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let rx = Arc::clone(&job_rx);
            let tx = res_tx.clone();
            thread::spawn(move || loop {
                let job = rx.lock().unwrap().recv();
                match job {
                    Ok(n) => tx.send((n, format!("job-{}", n * n))).unwrap(),
                    Err(_) => break,
                }
            })
        })
        .collect();
    drop(res_tx);
    for n in 0..1000 {
        job_tx.send(n).unwrap();
    }
    drop(job_tx);
    let mut total = 0u64;
    let mut bytes = 0usize;
    for (n, s) in res_rx {
        total += n;
        bytes += s.len();
    }
    for w in workers {
        w.join().unwrap();
    }
    println!("pool: {} {}", total, bytes);
}

fn tls() {
    let hs: Vec<_> = (0..4u64)
        .map(|i| {
            thread::spawn(move || {
                LOCAL.with(|l| l.borrow_mut().0.extend(0..(i + 1) * 100));
                LOCAL.with(|l| l.borrow().0.len())
            })
        })
        .collect();
    let lens: Vec<usize> = hs.into_iter().map(|h| h.join().unwrap()).collect();
    println!("tls: {:?} dropped {}", lens, DROPPED.load(Ordering::SeqCst));
}

fn panics() {
    let h = thread::spawn(|| {
        let r = panic::catch_unwind(|| {
            let v: Vec<String> = (0..10).map(|i| i.to_string()).collect();
            if v.len() == 10 {
                panic!("deliberate panic with {} strings", v.len());
            }
            v.len()
        });
        r.is_err()
    });
    println!("panic: caught {}", h.join().unwrap());
}

fn command() {
    let out = Command::new("/bin/sh")
        .arg("-c")
        .arg("echo child $((6 * 7))")
        .output()
        .expect("sh");
    print!("command: {} {}", out.status.code().unwrap(), String::from_utf8_lossy(&out.stdout));
}

fn churn() {
    let mut total = 0usize;
    for round in 0..100 {
        let h = thread::spawn(move || {
            let s: String = std::iter::repeat('x').take(round + 1).collect();
            s.len()
        });
        total += h.join().unwrap();
    }
    println!("churn: {}", total);
}

fn main() {
    let cases: Vec<String> = std::env::args().skip(1).collect();
    for c in &cases {
        match c.as_str() {
            "spawn" => spawn(),
            "scope" => scope(),
            "pool" => pool(),
            "tls" => tls(),
            "panic" => panics(),
            "command" => command(),
            "churn" => churn(),
            _ => {
                eprintln!("thread_std: unknown case {}", c);
                std::process::exit(2);
            }
        }
    }
}
