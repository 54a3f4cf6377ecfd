//! What the seeded stress tests share: their seed, and a generator to
//! draw from it. Test crates include it with `mod seeded;`, and the
//! library's own unit tests as `crate::seeded` (src/lib.rs).
#![allow(dead_code)] // not every test uses every helper

/// The seed in the environment variable `var` (which the test prints, so
/// that setting it repeats a run), or one from the clock. Never 0 (the
/// generator's fixed point) unless `var` says so; a `var` that is not a
/// `u64` is an error, not a new seed.
pub fn seed(var: &str) -> u64 {
    match std::env::var(var) {
        Ok(s) => s
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{var}={s:?} is not a u64")),
        Err(_) => {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
                | 1
        }
    }
}

/// xorshift64*: a small, fast generator whose whole state is the seed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A value in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}
