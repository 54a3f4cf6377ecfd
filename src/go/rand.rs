//! The scheduler's random numbers (Go's `cheaprand`): the order a select
//! polls its cases in, and where a worker starts stealing.
//!
//! One generator for the go layer: wyrand, a 64-bit state per thread. Each
//! thread's state is seeded from a process seed (from the kernel's
//! `getrandom`, or the clock and the process id when that fails) mixed
//! with a per-thread sequence number, so two threads never share a
//! sequence and two runs of a program differ. Not for cryptography.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

thread_local! {
    /// This thread's state; 0 until first use.
    static STATE: Cell<u64> = const { Cell::new(0) };
}

/// The process seed, 0 until first use.
static SEED: AtomicU64 = AtomicU64::new(0);
/// Threads seeded so far.
static THREADS: AtomicU64 = AtomicU64::new(0);

const INCREMENT: u64 = 0xa076_1d64_78bd_642f;

fn process_seed() -> u64 {
    let seed = SEED.load(Ordering::Relaxed);
    if seed != 0 {
        return seed;
    }
    let mut bytes = [0u8; 8];
    // SAFETY: getrandom writes at most 8 bytes into the 8-byte buffer.
    let got = unsafe { libc::getrandom(bytes.as_mut_ptr().cast(), 8, libc::GRND_NONBLOCK) };
    let mut seed = u64::from_ne_bytes(bytes);
    if got != 8 {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        seed = now ^ (u64::from(std::process::id()) << 32);
    }
    seed |= 1;
    // The first thread to get here wins; the others use its seed.
    match SEED.compare_exchange(0, seed, Ordering::Relaxed, Ordering::Relaxed) {
        Ok(_) => seed,
        Err(winner) => winner,
    }
}

fn mix(a: u64, b: u64) -> u64 {
    let r = u128::from(a) * u128::from(b);
    (r as u64) ^ ((r >> 64) as u64)
}

/// A random 64-bit number. Never inlined: the thread-local is read on the
/// thread this runs on (design.md invariant 10), its key a constant here.
#[inline(never)]
pub(crate) fn next() -> u64 {
    STATE.with(|s| {
        let mut x = s.get();
        if x == 0 {
            let n = THREADS.fetch_add(1, Ordering::Relaxed) + 1;
            x = mix(
                process_seed() ^ INCREMENT,
                n.wrapping_mul(0xe703_7ed1_a0b4_28db),
            ) | 1;
        }
        x = x.wrapping_add(INCREMENT);
        s.set(x);
        mix(x, x ^ 0xe703_7ed1_a0b4_28db)
    })
}

/// A random number below `n` (`n > 0`): the high half of a 64 x 64 bit
/// product, in range without a division (bias below n / 2^64).
pub(crate) fn below(n: usize) -> usize {
    ((u128::from(next()) * n as u128) >> 64) as usize
}

/// Several small random choices from one number, as a select shuffling
/// its cases makes: each choice takes the high half of the product with
/// its range and keeps the low half for the next (the low half of such a
/// product is still uniform), and a fresh number is drawn every
/// [`Choices::PER_DRAW`] choices, while the ranges' product stays far
/// below 2^64. (Under loom, select shuffles without it.)
#[cfg_attr(loom, allow(dead_code))]
pub(crate) struct Choices {
    bits: u64,
    left: u32,
}

#[cfg_attr(loom, allow(dead_code))]
impl Choices {
    const PER_DRAW: u32 = 6;

    pub(crate) fn new() -> Choices {
        Choices { bits: 0, left: 0 }
    }

    /// A number below `n` (`0 < n`; at most a few thousand for the
    /// choices to stay even).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        if self.left == 0 {
            self.bits = next();
            self.left = Self::PER_DRAW;
        }
        self.left -= 1;
        let m = u128::from(self.bits) * n as u128;
        self.bits = m as u64;
        (m >> 64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_covers_its_range_evenly() {
        let mut counts = [0u32; 8];
        for _ in 0..80_000 {
            counts[below(8)] += 1;
        }
        // Each bucket expects 10,000; 9,000..11,000 is over ten standard
        // deviations wide, so only a broken generator falls outside.
        assert!(
            counts.iter().all(|&c| (9_000..11_000).contains(&c)),
            "{counts:?}"
        );
    }

    #[test]
    fn choices_from_one_number_cover_their_ranges_evenly() {
        // A select of four cases: each case first equally often.
        let mut first = [0u32; 4];
        for _ in 0..40_000 {
            let mut c = Choices::new();
            let mut order: Vec<usize> = Vec::new();
            for i in 0..4 {
                let j = c.below(order.len() + 1);
                order.insert(j, i);
            }
            first[order[0]] += 1;
        }
        // 10,000 expected each; 9,000..11,000 is over ten deviations.
        assert!(
            first.iter().all(|&n| (9_000..11_000).contains(&n)),
            "{first:?}"
        );
    }

    #[test]
    fn threads_get_different_sequences() {
        let a: Vec<u64> = (0..4).map(|_| next()).collect();
        let b = std::thread::spawn(|| (0..4).map(|_| next()).collect::<Vec<u64>>())
            .join()
            .unwrap();
        assert_ne!(a, b);
    }
}
