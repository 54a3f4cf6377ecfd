//! Goroutines passing GC objects over a channel, with the runtime's own
//! scheduler, channels and WaitGroup (`defergc::go`).
//!
//! - `go::go(f)` starts a goroutine: its panics are its own (here
//!   recovered by a deferred call, as a Go program does), and Goexit ends
//!   it.
//! - `go::Chan<T>` passes pointers to GC objects: values waiting in a
//!   channel's buffer, or on a parked goroutine's stack, stay visible to
//!   the collector.
//! - `go::WaitGroup` joins them.
//!
//! Run it with `cargo run --release --example goroutines`.

use defergc::go::{self, Chan, WaitGroup};
use defergc::{defer, gc};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A message in GC memory: its sender and a payload.
#[repr(C)]
struct Message {
    from: u64,
    payload: [u64; 7],
}

/// A pointer to a GC object, sendable between goroutines.
#[derive(Clone, Copy)]
struct Gc(*mut Message);

// SAFETY: GC objects may be used by any registered thread; the channel
// keeps the pointer visible to the collector while it is in flight.
unsafe impl Send for Gc {}

fn message(from: u64, seq: u64) -> Gc {
    let m = gc::alloc(std::mem::size_of::<Message>())
        .as_ptr()
        .cast::<Message>();
    let payload = std::array::from_fn(|i| from * 1_000_000 + seq * 10 + i as u64);
    // SAFETY: a fresh object of Message's size.
    unsafe { m.write(Message { from, payload }) };
    Gc(m)
}

fn main() {
    go::main(|| {
        const PRODUCERS: u64 = 4;
        const PER_PRODUCER: u64 = 50_000;
        let chan = Chan::<Gc>::new(64);
        let producers = Arc::new(WaitGroup::new());
        let received = Arc::new(AtomicU64::new(0));
        let checksum = Arc::new(AtomicU64::new(0));

        producers.add(PRODUCERS as i32).unwrap();
        for p in 0..PRODUCERS {
            let (chan, producers) = (chan.clone(), producers.clone());
            go::go(move || {
                defer::call(|f| {
                    let producers = &producers;
                    f.defer(move || producers.done().unwrap());
                    for seq in 0..PER_PRODUCER {
                        chan.send(message(p, seq));
                    }
                })
            });
        }

        let consumers = Arc::new(WaitGroup::new());
        consumers.add(2).unwrap();
        for _ in 0..2 {
            let (chan, consumers, received, checksum) = (
                chan.clone(),
                consumers.clone(),
                received.clone(),
                checksum.clone(),
            );
            go::go(move || {
                defer::call(|f| {
                    let consumers = &consumers;
                    f.defer(move || consumers.done().unwrap());
                    for Gc(m) in chan.iter() {
                        // SAFETY: the channel kept the message alive.
                        let m = unsafe { &*m };
                        assert!(m.from < PRODUCERS);
                        checksum.fetch_add(m.payload.iter().sum::<u64>(), Ordering::Relaxed);
                        if received.fetch_add(1, Ordering::Relaxed) % 50_000 == 0 {
                            gc::collect();
                        }
                    }
                })
            });
        }

        // A goroutine that panics and recovers its own panic, and one that
        // leaves through Goexit after running its deferred call.
        let side = Arc::new(WaitGroup::new());
        side.add(2).unwrap();
        let s = side.clone();
        go::go(move || {
            defer::call(|f| -> () {
                let s = &s;
                f.defer(move || s.done().unwrap());
                f.defer_with(|d| {
                    if let Some(v) = d.recover() {
                        println!("goroutine {}: recovered: {v}", go::goid());
                    }
                });
                defer::panic("something went wrong")
            })
        });
        let s = side.clone();
        go::go(move || {
            defer::call(|f| -> () {
                let s = &s;
                f.defer(move || {
                    println!("goroutine {}: Goexit ran its deferred call", go::goid());
                    s.done().unwrap()
                });
                defer::goexit()
            })
        });

        producers.wait();
        chan.close();
        consumers.wait();
        side.wait();

        let expected: u64 = (0..PRODUCERS)
            .flat_map(|p| (0..PER_PRODUCER).map(move |seq| (p, seq)))
            .map(|(p, seq)| (0..7).map(|i| p * 1_000_000 + seq * 10 + i).sum::<u64>())
            .sum();
        let got = checksum.load(Ordering::Relaxed);
        println!(
            "received {} messages on {} processors, checksum {} ({}), {} collections",
            received.load(Ordering::Relaxed),
            go::gomaxprocs(),
            got,
            if got == expected {
                "verified"
            } else {
                "MISMATCH"
            },
            gc::stats().collections
        );
        assert_eq!(got, expected);
    });
}
