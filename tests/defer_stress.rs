//! The million-defer stress tests: records and what they capture must stay
//! alive (and in order) while the collector runs.

use defergc::{defer, gc};
use serial_test::serial;
use std::cell::Cell;
use std::hint::black_box;

const MAGIC: usize = 0x005E_ED0F_DEF3;

/// A fresh GC object holding `i` (twice, the second time scrambled).
fn object(i: usize) -> *mut usize {
    let p = gc::alloc(2 * std::mem::size_of::<usize>())
        .as_ptr()
        .cast::<usize>();
    // SAFETY: a fresh two-word object.
    unsafe {
        p.write(i);
        p.add(1).write(i ^ MAGIC);
    }
    p
}

fn intact(p: *const usize, i: usize) -> bool {
    // SAFETY: p is a live two-word object (that is what is being tested).
    unsafe { p.read() == i && p.add(1).read() == i ^ MAGIC }
}

fn churn(objects: usize) {
    for _ in 0..objects {
        black_box(gc::alloc(32));
    }
}

/// What the deferred calls of one run observed.
#[derive(Default)]
struct Tally {
    /// The index the next call must have (LIFO), counting down.
    next: Cell<usize>,
    calls: Cell<usize>,
    out_of_order: Cell<usize>,
    corrupted: Cell<usize>,
}

impl Tally {
    fn starting_at(n: usize) -> Tally {
        let t = Tally::default();
        t.next.set(n);
        t
    }

    fn record(&self, i: usize, obj: *const usize) {
        self.calls.set(self.calls.get() + 1);
        if self.next.get() != i + 1 {
            self.out_of_order.set(self.out_of_order.get() + 1);
        }
        self.next.set(i);
        if !intact(obj, i) {
            self.corrupted.set(self.corrupted.get() + 1);
        }
    }

    fn assert_complete(&self, n: usize) {
        assert_eq!(self.calls.get(), n, "deferred calls run");
        assert_eq!(self.out_of_order.get(), 0, "calls out of LIFO order");
        assert_eq!(self.corrupted.get(), 0, "calls that saw a corrupted object");
        assert_eq!(self.next.get(), 0, "the last call was not index 0");
    }
}

/// Defers `n` calls in one frame, each capturing a fresh GC object holding
/// its index, with a full collection (after some garbage) every `gc_every`.
fn defer_loop(n: usize, gc_every: usize, tally: &Tally) {
    defer::call(|f| {
        for i in 0..n {
            let obj = object(i);
            f.defer(move || tally.record(i, obj));
            if gc_every != 0 && i % gc_every == gc_every - 1 {
                churn(2000);
                gc::collect();
            }
        }
    });
}

#[test]
#[serial]
fn defer_loop_stress() {
    const N: usize = 1_000_000;
    let tally = Tally::starting_at(N);
    let before = gc::stats().collections;
    defer_loop(N, 10_000, &tally);
    tally.assert_complete(N);
    if gc::BACKEND == "bdwgc" {
        assert!(gc::stats().collections >= before + N as u64 / 10_000);
    }
}

#[test]
#[serial]
fn a_panic_in_the_middle_of_draining_a_million_records() {
    const N: usize = 1_000_000;
    const BAD: usize = N / 2;
    let tally = Tally::starting_at(N);
    let recovered = defer::named(None, |f, out| {
        f.defer_with(move |d| out.set(d.recover()));
        let tally = &tally;
        for i in 0..N {
            let obj = object(i);
            f.defer(move || {
                tally.record(i, obj);
                if i == BAD {
                    // A GC pointer in the panic value must survive too.
                    defer::panic(object(i))
                }
                if i % 50_000 == 0 {
                    churn(2000);
                    gc::collect();
                }
            });
        }
        None
    });
    tally.assert_complete(N);
    let obj = recovered
        .expect("the mid-drain panic was not recovered")
        .downcast::<*mut usize>()
        .expect("wrong panic value type");
    assert!(intact(obj, BAD), "the panic value's object was corrupted");
}

#[test]
#[serial]
fn four_threads_defer_250000_each_while_collecting() {
    const N: usize = 250_000;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let collector = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut rounds = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                churn(5000);
                gc::collect();
                rounds += 1;
            }
            rounds
        })
    };
    let workers: Vec<_> = (0..4)
        .map(|t| {
            std::thread::spawn(move || {
                let tally = Tally::starting_at(N);
                defer_loop(N, if t == 0 { 25_000 } else { 0 }, &tally);
                tally.assert_complete(N);
            })
        })
        .collect();
    for w in workers {
        w.join().expect("a worker failed");
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let rounds = collector.join().unwrap();
    println!("collections while deferring: {rounds}");
}

#[test]
#[serial]
fn records_are_released_as_they_run() {
    // Two frames of a million defers each, one after the other: if records
    // were kept, the second would need twice the memory; the drained stack
    // must scan as empty between them, which the unit tests of roots check;
    // here we check the chain is reusable and consistent after the drain.
    for round in 0..2 {
        let tally = Tally::starting_at(1_000_000);
        defer_loop(1_000_000, 0, &tally);
        tally.assert_complete(1_000_000);
        let after = defer::call(|f| {
            let hit = Cell::new(false);
            defer::call(|g| g.defer(|| hit.set(true)));
            f.defer(|| {});
            hit.get()
        });
        assert!(after, "round {round}: a fresh frame did not run its call");
    }
}
