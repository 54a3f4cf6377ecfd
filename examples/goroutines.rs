//! A tiny goroutine runtime on defergc: how a Go-like language's runtime
//! embeds it.
//!
//! - `go(f)` runs `f` on a registered thread as a goroutine: its panics are
//!   its own (recovered and reported by the goroutine, as a Go program
//!   would with a top-level deferred recover), and Goexit ends it.
//! - `Chan<T>` passes GC objects between goroutines. Its buffer is root
//!   memory (`gc::alloc_uncollectable`): a GC pointer parked in a Rust
//!   `VecDeque` would be invisible to the collector.
//! - `WaitGroup` joins them.
//!
//! Run it with `cargo run --release --example goroutines`.

use defergc::{defer, gc};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};

/// Spawns `f` as a goroutine on a thread of its own.
fn go(name: &'static str, f: impl FnOnce() + Send + 'static) {
    gc::spawn(move || {
        let finished = defer::goroutine(|| {
            defer::call(|frame| {
                frame.defer_with(move |d| {
                    if let Some(v) = d.recover() {
                        println!("goroutine {name}: recovered: {v}");
                    }
                });
                f();
            })
        });
        if finished.is_none() {
            println!("goroutine {name}: Goexit");
        }
    });
}

/// A bounded channel of GC pointers whose buffer the collector scans.
struct Chan<T> {
    state: Mutex<Ring>,
    changed: Condvar,
    _items: std::marker::PhantomData<*mut T>,
}

// SAFETY: the ring is only touched under the mutex; the pointers it holds
// are GC objects any registered thread may use.
unsafe impl<T> Send for Chan<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for Chan<T> {}

struct Ring {
    /// Root memory: `cap` pointer slots.
    slots: *mut usize,
    cap: usize,
    head: usize,
    len: usize,
    closed: bool,
}

impl<T> Chan<T> {
    fn new(cap: usize) -> Arc<Chan<T>> {
        let slots = gc::alloc_uncollectable(cap * 8).as_ptr().cast();
        Arc::new(Chan {
            state: Mutex::new(Ring {
                slots,
                cap,
                head: 0,
                len: 0,
                closed: false,
            }),
            changed: Condvar::new(),
            _items: std::marker::PhantomData,
        })
    }

    fn send(&self, item: *mut T) {
        let mut ring = self.state.lock().unwrap();
        while ring.len == ring.cap {
            ring = self.changed.wait(ring).unwrap();
        }
        assert!(!ring.closed, "send on closed channel");
        let at = (ring.head + ring.len) % ring.cap;
        // SAFETY: at < cap, and the slots are ours under the lock.
        unsafe { ring.slots.add(at).write(item as usize) };
        ring.len += 1;
        self.changed.notify_all();
    }

    /// The next item, or `None` once the channel is closed and empty.
    fn recv(&self) -> Option<*mut T> {
        let mut ring = self.state.lock().unwrap();
        loop {
            if ring.len > 0 {
                // SAFETY: head < cap, a slot that holds an item.
                let item = unsafe { ring.slots.add(ring.head).replace(0) };
                ring.head = (ring.head + 1) % ring.cap;
                ring.len -= 1;
                self.changed.notify_all();
                return Some(item as *mut T);
            }
            if ring.closed {
                return None;
            }
            ring = self.changed.wait(ring).unwrap();
        }
    }

    fn close(&self) {
        self.state.lock().unwrap().closed = true;
        self.changed.notify_all();
    }
}

impl<T> Drop for Chan<T> {
    fn drop(&mut self) {
        let ring = self.state.get_mut().unwrap();
        // SAFETY: the buffer came from alloc_uncollectable and is freed once.
        unsafe { gc::free(ring.slots.cast()) };
    }
}

/// Go's sync.WaitGroup.
#[derive(Default)]
struct WaitGroup {
    count: Mutex<usize>,
    zero: Condvar,
}

impl WaitGroup {
    fn add(&self, n: usize) {
        *self.count.lock().unwrap() += n;
    }
    fn done(&self) {
        let mut c = self.count.lock().unwrap();
        *c -= 1;
        if *c == 0 {
            self.zero.notify_all();
        }
    }
    fn wait(&self) {
        let mut c = self.count.lock().unwrap();
        while *c > 0 {
            c = self.zero.wait(c).unwrap();
        }
    }
}

/// A message in GC memory: its sender and a payload.
#[repr(C)]
struct Message {
    from: u64,
    payload: [u64; 7],
}

fn message(from: u64, seq: u64) -> *mut Message {
    let m = gc::alloc(std::mem::size_of::<Message>())
        .as_ptr()
        .cast::<Message>();
    let payload = std::array::from_fn(|i| from * 1_000_000 + seq * 10 + i as u64);
    // SAFETY: a fresh object of Message's size.
    unsafe { m.write(Message { from, payload }) };
    m
}

fn main() {
    const PRODUCERS: u64 = 4;
    const PER_PRODUCER: u64 = 50_000;
    let chan = Chan::<Message>::new(64);
    let wg = Arc::new(WaitGroup::default());
    let received = Arc::new(AtomicU64::new(0));
    let checksum = Arc::new(AtomicU64::new(0));

    for p in 0..PRODUCERS {
        let (chan, wg) = (chan.clone(), wg.clone());
        wg.add(1);
        go("producer", move || {
            defer::call(|f| {
                let wg = &wg;
                f.defer(move || wg.done());
                for seq in 0..PER_PRODUCER {
                    chan.send(message(p, seq));
                }
            })
        });
    }

    let consumers = Arc::new(WaitGroup::default());
    for _ in 0..2 {
        let (chan, consumers, received, checksum) = (
            chan.clone(),
            consumers.clone(),
            received.clone(),
            checksum.clone(),
        );
        consumers.add(1);
        go("consumer", move || {
            defer::call(|f| {
                let consumers = &consumers;
                f.defer(move || consumers.done());
                while let Some(m) = chan.recv() {
                    // SAFETY: the channel kept the message alive.
                    let m = unsafe { &*m };
                    checksum.fetch_add(m.payload.iter().sum::<u64>(), Ordering::Relaxed);
                    received.fetch_add(1, Ordering::Relaxed);
                    if received.load(Ordering::Relaxed) % 50_000 == 0 {
                        gc::collect();
                    }
                }
            })
        });
    }

    // A goroutine that panics and recovers its own panic, and one that
    // leaves through Goexit after running its deferred call.
    let side = Arc::new(WaitGroup::default());
    side.add(2);
    let s = side.clone();
    go("panicky", move || {
        defer::call(|f| -> () {
            let s = &s;
            f.defer(move || s.done());
            defer::panic("something went wrong")
        })
    });
    let s = side.clone();
    go("exiting", move || {
        defer::call(|f| -> () {
            let s = &s;
            f.defer(move || s.done());
            defer::goexit()
        })
    });

    wg.wait();
    chan.close();
    consumers.wait();
    side.wait();

    let expected: u64 = (0..PRODUCERS)
        .flat_map(|p| (0..PER_PRODUCER).map(move |seq| (p, seq)))
        .map(|(p, seq)| (0..7).map(|i| p * 1_000_000 + seq * 10 + i).sum::<u64>())
        .sum();
    let got = checksum.load(Ordering::Relaxed);
    println!(
        "received {} messages, checksum {} ({}), {} collections",
        received.load(Ordering::Relaxed),
        got,
        if got == expected {
            "verified"
        } else {
            "MISMATCH"
        },
        gc::stats().collections
    );
    assert_eq!(got, expected);
}
