//! Helpers shared by the precise collector's integration tests (each test
//! crate includes this module with `mod common;`).
#![allow(dead_code)] // not every test uses every helper

use defergc::precise::{self, Field, Frame, Handle, TypeId};
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

/// `struct Node { next: Handle, value: u64 }` of [`run_list_mutators`]: a
/// 24-byte cell (an 8-byte header, `heap/object.rs`).
pub const LIST_NODE_BYTES: usize = 16;
pub const LIST_CELL_BYTES: usize = LIST_NODE_BYTES + 8;

/// Runs `mutators` threads at once (this one waits in native code, so
/// collections do not wait for it), each building a list of `live` nodes
/// and then allocating `garbage` nodes in short lists that die at once,
/// faster than a collector on this 2-core machine marks; afterwards each
/// checks its live list, node by node. Panics if a check fails.
pub fn run_list_mutators(mutators: u64, live: u64, garbage: u64) {
    let node = precise::register_type(LIST_NODE_BYTES, &[0]).unwrap();
    let next = Field::new(node, 0).unwrap();
    precise::native(|| {
        std::thread::scope(|s| {
            let workers: Vec<_> = (0..mutators)
                .map(|_| s.spawn(move || list_mutator(next, live, garbage)))
                .collect();
            for w in workers {
                if let Err(why) = w.join().expect("a mutator panicked") {
                    panic!("a mutator failed: {why}");
                }
            }
        })
    })
    .unwrap();
}

fn list_mutator(next: Field, live: u64, garbage: u64) -> Result<(), String> {
    let node = next.type_id();
    let frame = Frame::new().map_err(|e| e.to_string())?;
    // The live list, built front to back: head rooted, each node rooted in
    // its predecessor before the next allocation.
    let head = precise::alloc(node).map_err(|e| e.to_string())?;
    frame.root(head).map_err(|e| e.to_string())?;
    let mut tail = head;
    for i in 1..live {
        let n = precise::alloc(node).map_err(|e| e.to_string())?;
        precise::write_u64(n, 8, i).map_err(|e| e.to_string())?;
        precise::store_field(tail, next, n).map_err(|e| e.to_string())?;
        tail = n;
    }
    // Garbage: lists of 64 that die at once.
    let slot = frame.root(None).map_err(|e| e.to_string())?;
    for i in 0..garbage {
        let n = precise::alloc(node).map_err(|e| e.to_string())?;
        if i % 64 != 0 {
            if let Some(prev) = frame.get(slot).map_err(|e| e.to_string())? {
                precise::store_field(n, next, prev).map_err(|e| e.to_string())?;
            }
        }
        frame.set(slot, n).map_err(|e| e.to_string())?;
    }
    // Every live node is still there, in order.
    let mut count = 0;
    let mut at: Option<Handle> = Some(head);
    while let Some(n) = at {
        let value = precise::read_u64(n, 8).map_err(|e| e.to_string())?;
        if value != count {
            return Err(format!("live node {count} holds {value}"));
        }
        count += 1;
        at = precise::load_field(n, next).map_err(|e| e.to_string())?;
    }
    if count != live {
        return Err(format!("the live list has {count} nodes, expected {live}"));
    }
    frame.pop().map_err(|e| e.to_string())
}
