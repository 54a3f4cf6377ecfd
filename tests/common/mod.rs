//! Helpers shared by the precise collector's integration tests (each test
//! crate includes this module with `mod common;`).
#![allow(dead_code)] // not every test uses every helper

use defergc::precise::{self, Handle, TypeId};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// Runs `f` on a new thread (registered on first use, unregistered at
/// exit), so that nothing it roots outlives the test.
pub fn on_thread<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    std::thread::spawn(f).join().unwrap()
}

/// Runs a full collection and returns the number of objects it found live.
pub fn collect_live() -> u64 {
    precise::collect().unwrap();
    precise::stats().live_objects
}

/// The handle-array type.
pub fn array_type() -> TypeId {
    static T: OnceLock<TypeId> = OnceLock::new();
    *T.get_or_init(|| precise::register_handle_array_type().unwrap())
}

/// A pointer-free 16-byte object type: {value, !value}.
pub fn pair() -> TypeId {
    static PAIR: OnceLock<TypeId> = OnceLock::new();
    *PAIR.get_or_init(|| precise::register_bytes_type().unwrap())
}

/// A new pair holding `value`.
pub fn new_pair(value: u64) -> Handle {
    let h = precise::alloc_array(pair(), 16).unwrap();
    precise::write_u64(h, 0, value).unwrap();
    precise::write_u64(h, 8, !value).unwrap();
    h
}

/// Whether the pair `h` still holds `value`, unharmed.
pub fn intact(h: Handle, value: u64) -> bool {
    precise::read_u64(h, 0) == Ok(value) && precise::read_u64(h, 8) == Ok(!value)
}

/// A tiny deterministic generator (xorshift), for reproducible schedules.
/// The seed must not be 0.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A value in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Runs collection cycles back to back on a thread of its own (which never
/// registers) until stopped or dropped. Tests count the cycles they need
/// themselves (`precise::stats().collections`) or take the count from
/// [`Cycler::stop`]: how many this thread gets to run depends on the
/// machine's load.
pub struct Cycler {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<u64>>,
}

impl Cycler {
    pub fn start() -> Cycler {
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut n = 0;
            while !s.load(Ordering::Relaxed) {
                precise::gc_async();
                precise::gc_wait();
                n += 1;
            }
            n
        });
        Cycler {
            stop,
            thread: Some(thread),
        }
    }

    /// Stops the thread; the cycles it ran.
    pub fn stop(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        let thread = self.thread.take().expect("a cycler is stopped once");
        thread.join().expect("the cycler thread panicked")
    }
}

impl Drop for Cycler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
