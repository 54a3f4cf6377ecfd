//! The collector thread under the mutators' feet: roots in tls slots,
//! defer records and panic values survive cycles that run concurrently
//! (the concurrent versions of `precise_roots.rs`), threads come and go
//! during cycles, shutdown joins the collector while threads allocate, and
//! a thread parked in native code does not stall collections.
#![cfg(feature = "precise")]

mod common;

use common::{array_type, intact, new_pair, Cycler};
use defergc::precise::{self, Error, Frame, GlobalRoot, Handle};
use defergc::{defer, tls};
use serial_test::serial;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// Allocates garbage until `cycles` more collections have completed.
fn churn_for_cycles(cycles: u64) {
    let target = precise::stats().collections + cycles;
    let mut i = 0u64;
    while precise::stats().collections < target {
        for _ in 0..1000 {
            let _ = new_pair(i);
            i += 1;
        }
    }
}

#[test]
#[serial]
fn a_handle_only_in_a_tls_slot_survives_concurrent_cycles_then_dies_when_cleared() {
    let cycler = Cycler::start();
    std::thread::spawn(|| {
        let slot = tls::alloc::<u64>(None);
        let h = new_pair(0xC0DE);
        slot.set(h.to_raw());
        churn_for_cycles(20);
        assert!(
            intact(h, 0xC0DE),
            "the object held by a tls slot was collected"
        );
        slot.clear();
        churn_for_cycles(3);
        assert_eq!(precise::read_u64(h, 0), Err(Error::StaleHandle));
    })
    .join()
    .unwrap();
    drop(cycler);
}

#[test]
#[serial]
fn handles_only_captured_by_deferred_closures_survive_concurrent_cycles() {
    let cycler = Cycler::start();
    std::thread::spawn(|| {
        let bad = std::cell::Cell::new(0);
        let before = precise::stats().collections;
        defer::call(|f| {
            for i in 0..20_000u64 {
                let h = new_pair(i);
                let bad = &bad;
                f.defer(move || {
                    if !intact(h, i) {
                        bad.set(bad.get() + 1);
                    }
                });
                // Garbage, so that cycles free and reuse cells meanwhile.
                let _ = new_pair(!i);
                precise::safepoint().unwrap();
            }
            churn_for_cycles(5);
        });
        assert_eq!(bad.get(), 0, "deferred calls saw collected objects");
        assert!(precise::stats().collections >= before + 5);
    })
    .join()
    .unwrap();
    drop(cycler);
}

#[test]
#[serial]
fn a_handle_carried_by_a_panic_value_survives_concurrent_cycles() {
    let cycler = Cycler::start();
    std::thread::spawn(|| {
        let recovered = defer::named(None, |f, out| {
            f.defer_with(move |d| out.set(d.recover()));
            // Cycles complete while the panic is in flight, the value held
            // only by it.
            f.defer(|| churn_for_cycles(10));
            defer::panic(new_pair(77).to_raw())
        });
        let raw = recovered.unwrap().downcast::<u64>().unwrap();
        assert!(
            intact(Handle::from_raw(raw).unwrap(), 77),
            "the object carried by a panic value was collected"
        );
    })
    .join()
    .unwrap();
    drop(cycler);
}

#[test]
#[serial]
fn threads_that_come_and_go_during_cycles_lose_nothing() {
    let cycler = Cycler::start();
    // A shared array (held by a global root) that short-lived threads fill
    // and check: each thread moves what its predecessor left into its own
    // frame, checks it, and leaves new objects behind as it exits.
    let shared = Arc::new(
        std::thread::spawn(|| {
            GlobalRoot::new(precise::alloc_array(array_type(), 64).unwrap()).unwrap()
        })
        .join()
        .unwrap(),
    );
    let values: Arc<[AtomicU64; 64]> = Arc::new([const { AtomicU64::new(0) }; 64]);
    // At least 200 generations of threads, and at least 20 cycles completed
    // while they came and went (counted, not timed: on a loaded machine
    // both just take longer).
    let before = precise::stats().collections;
    let mut generations = 0u64;
    while generations < 200 || precise::stats().collections < before + 20 {
        let batch: Vec<_> = (0..4u64)
            .map(|t| {
                let (shared, values) = (shared.clone(), values.clone());
                std::thread::spawn(move || {
                    let frame = Frame::new().unwrap();
                    let arr = shared.get().unwrap();
                    for s in (t as usize..64).step_by(4) {
                        let old = precise::load(arr, s * 8).unwrap();
                        if let Some(h) = old {
                            frame.root(h).unwrap();
                            let v = values[s].load(Ordering::Relaxed);
                            assert!(
                                intact(h, v),
                                "slot {s}: object left by an exited thread lost"
                            );
                        }
                        let v = generations << 8 | s as u64;
                        let n = new_pair(v);
                        let _ = new_pair(!v); // garbage
                        precise::store(arr, s * 8, n).unwrap();
                        values[s].store(v, Ordering::Relaxed);
                    }
                    // Exit with open frames and a non-empty barrier log,
                    // possibly in the middle of a cycle.
                    std::mem::forget(frame);
                })
            })
            .collect();
        for t in batch {
            t.join().unwrap();
        }
        generations += 1;
    }
    drop(cycler);
}

#[test]
#[serial]
fn shutdown_joins_the_collector_while_threads_allocate() {
    let stop = Arc::new(AtomicBool::new(false));
    let mutators: Vec<_> = (0..3u64)
        .map(|t| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let frame = Frame::new().unwrap();
                let keep = new_pair(t);
                frame.root(keep).unwrap();
                let mut i = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let _ = new_pair(i);
                    i += 1;
                    if i.is_multiple_of(4096) {
                        assert!(intact(keep, t));
                    }
                }
                assert!(intact(keep, t));
            })
        })
        .collect();
    for _ in 0..5 {
        std::thread::sleep(Duration::from_millis(20));
        precise::gc_async();
        // Returns once the requested cycle ran and the thread exited.
        precise::shutdown();
    }
    // Collections go on afterwards: a new collector thread starts.
    let before = precise::stats().collections;
    precise::gc_async();
    precise::gc_wait();
    assert!(precise::stats().collections > before);
    stop.store(true, Ordering::Relaxed);
    for m in mutators {
        m.join().unwrap();
    }
}

#[test]
#[serial]
fn a_thread_parked_in_native_code_does_not_stall_collections() {
    // The parked thread stays in native code until 30 collections have
    // completed: if a collection waited for it, they never would. Event
    // ordering, not time, is what the test checks (the timeout only turns
    // a deadlock into a failure instead of a hang).
    let (ready_tx, ready_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let parked = std::thread::spawn(move || {
        let frame = Frame::new().unwrap();
        let h = new_pair(77);
        frame.root(h).unwrap();
        let t = tls::alloc::<u64>(None);
        let in_tls = new_pair(78);
        t.set(in_tls.to_raw());
        precise::native(|| {
            ready_tx.send(()).unwrap();
            release_rx.recv().unwrap();
        })
        .unwrap();
        assert!(intact(h, 77), "the parked thread's root was not kept");
        assert!(
            intact(in_tls, 78),
            "the parked thread's tls slot was not kept"
        );
    });
    ready_rx.recv().unwrap();
    let before = precise::stats().collections;
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        for _ in 0..30 {
            for i in 0..2000 {
                let _ = new_pair(i);
            }
            precise::collect().unwrap();
        }
        done_tx.send(()).unwrap();
    });
    let done = done_rx.recv_timeout(DEADLOCK);
    release_tx.send(()).unwrap();
    parked.join().unwrap();
    assert!(
        done.is_ok(),
        "collections stalled while a thread was parked in native code"
    );
    assert!(precise::stats().collections >= before + 30);
}

/// How long a test waits for something that can only fail to happen by a
/// deadlock: generous, so that a loaded machine never trips it.
const DEADLOCK: Duration = Duration::from_secs(600);
