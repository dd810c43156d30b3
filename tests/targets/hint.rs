// std::hint::black_box for the Rust targets: it is stable only from Rust
// 1.66, and the targets must build with Debian 12's rustc 1.63 too. A
// volatile read of the value is opaque to the optimiser in the same way: the
// value (and what it points to) must exist, and what comes back is unknown.
// Not a target itself: `mod hint;` in a target includes it.
#[inline(always)]
pub fn black_box<T>(x: T) -> T {
    let y = unsafe { std::ptr::read_volatile(&x) };
    std::mem::forget(x);
    y
}
