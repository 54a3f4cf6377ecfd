//! Threads: mutators that allocate and move handles around while another
//! thread collects in a loop (every reachable object keeps its checksum),
//! table growth under concurrent dereferencing, native code that is not
//! waited for, and registration that follows the thread's life.
#![cfg(feature = "precise")]

mod common;

use common::{array_type, Rng};
use defergc::precise::{self, Frame, GlobalRoot, Handle, TypeId};
use serial_test::serial;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier, Mutex, OnceLock};
use std::time::Duration;

/// `struct Node { next: Handle, value: u64, check: u64 }`
fn node_type() -> TypeId {
    static T: OnceLock<TypeId> = OnceLock::new();
    *T.get_or_init(|| precise::register_type(24, &[0]).unwrap())
}

fn check_of(value: u64) -> u64 {
    (value ^ 0x5DEE_CE66_D1CE_4E5B)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .rotate_left(29)
}

/// Allocates a node holding `value` in front of `next`.
fn node(value: u64, next: Option<Handle>) -> Handle {
    let n = precise::alloc(node_type()).unwrap();
    precise::store(n, 0, next).unwrap();
    precise::write_u64(n, 8, value).unwrap();
    precise::write_u64(n, 16, check_of(value)).unwrap();
    n
}

/// Walks a chain, checking every node; returns its length.
fn verify_chain(mut p: Option<Handle>) -> usize {
    let mut len = 0;
    while let Some(n) = p {
        let value = precise::read_u64(n, 8).expect("node of a reachable chain is gone");
        assert_eq!(
            precise::read_u64(n, 16).unwrap(),
            check_of(value),
            "node {n:?} lost its checksum"
        );
        len += 1;
        p = precise::load(n, 0).unwrap();
    }
    len
}

const SLOTS: usize = 256;
const EXCHANGE_SLOTS: usize = 8;

/// The shared exchange: a handle array held by a global root, and the
/// length of the chain in each of its slots.
struct Exchange {
    root: GlobalRoot,
    lengths: Mutex<[usize; EXCHANGE_SLOTS]>,
}

/// One mutator: keeps `SLOTS` chains in a rooted array, replaces, extends,
/// edits, swaps them with the exchange and checks all of them, until
/// `stop` and until it has verified at least [`MIN_VERIFIED`] nodes.
/// Returns how many nodes it verified.
const MIN_VERIFIED: u64 = 2_500;

fn mutator(seed: u64, exchange: &Exchange, stop: &AtomicBool) -> u64 {
    let mut rng = Rng(seed);
    let frame = Frame::new().unwrap();
    let table = precise::alloc_array(array_type(), SLOTS).unwrap();
    frame.root(table).unwrap();
    let tmp = frame.root(None).unwrap();
    let mut lengths = [0usize; SLOTS];
    let mut verified = 0u64;
    let mut round = 0u64;
    while !stop.load(Ordering::Relaxed) || round < 200 || verified < MIN_VERIFIED {
        round += 1;
        let s = rng.below(SLOTS);
        match rng.below(16) {
            0..=5 => {
                // A new chain replaces the old one (which becomes garbage).
                let len = 1 + rng.below(12);
                let mut head = None;
                for _ in 0..len {
                    let n = node(rng.next(), head);
                    frame.set(tmp, n).unwrap();
                    head = Some(n);
                }
                precise::store(table, s * 8, head).unwrap();
                frame.set(tmp, None).unwrap();
                lengths[s] = len;
            }
            6..=8 => {
                // Push a node in front of a chain.
                let head = precise::load(table, s * 8).unwrap();
                let n = node(rng.next(), head);
                precise::store(table, s * 8, n).unwrap();
                lengths[s] += 1;
            }
            9..=10 => {
                // Edit a node in place.
                let mut p = precise::load(table, s * 8).unwrap();
                for _ in 0..rng.below(lengths[s].max(1)) {
                    p = p.and_then(|n| precise::load(n, 0).unwrap());
                }
                if let Some(n) = p {
                    let value = rng.next();
                    precise::write_u64(n, 8, value).unwrap();
                    precise::write_u64(n, 16, check_of(value)).unwrap();
                }
            }
            11 => {
                // Move a chain to another slot, or drop it.
                let d = rng.below(SLOTS);
                let head = precise::load(table, s * 8).unwrap();
                precise::store(table, s * 8, None).unwrap();
                precise::store(table, d * 8, head).unwrap();
                lengths[d] = lengths[s];
                if d != s {
                    lengths[s] = 0;
                }
            }
            12 => {
                // Swap a chain with the exchange; wait for its lock in
                // native code (its holder may be parked for a collection).
                let x = rng.below(EXCHANGE_SLOTS);
                let mut shared = precise::native(|| exchange.lengths.lock().unwrap()).unwrap();
                let ex = exchange.root.get().unwrap();
                let mine = precise::load(table, s * 8).unwrap();
                let theirs = precise::load(ex, x * 8).unwrap();
                assert_eq!(verify_chain(theirs), shared[x], "exchanged chain damaged");
                precise::store(table, s * 8, theirs).unwrap();
                precise::store(ex, x * 8, mine).unwrap();
                std::mem::swap(&mut lengths[s], &mut shared[x]);
            }
            _ => {
                for (i, len) in lengths.iter().enumerate() {
                    let head = precise::load(table, i * 8).unwrap();
                    assert_eq!(verify_chain(head), *len, "chain {i} has the wrong length");
                    verified += *len as u64;
                }
                precise::safepoint().unwrap();
            }
        }
    }
    for (i, len) in lengths.iter().enumerate() {
        assert_eq!(
            verify_chain(precise::load(table, i * 8).unwrap()),
            *len,
            "chain {i} at the end"
        );
        verified += *len as u64;
    }
    verified
}

#[test]
#[serial]
fn four_threads_allocate_and_mutate_while_another_collects_in_a_loop() {
    // At least 20 back-to-back collections while the mutators run, and at
    // least MIN_VERIFIED nodes checked by each (counted, not timed).
    const COLLECTIONS: u64 = 20;
    let exchange = Arc::new(
        std::thread::spawn(|| Exchange {
            root: GlobalRoot::new(precise::alloc_array(array_type(), EXCHANGE_SLOTS).unwrap())
                .unwrap(),
            lengths: Mutex::new([0; EXCHANGE_SLOTS]),
        })
        .join()
        .unwrap(),
    );
    let stop = Arc::new(AtomicBool::new(false));
    let collections_before = precise::stats().collections;
    let mutators: Vec<_> = (0..4u64)
        .map(|t| {
            let (exchange, stop) = (exchange.clone(), stop.clone());
            std::thread::spawn(move || mutator(0x1234_5678 + t * 0x9E37, &exchange, &stop))
        })
        .collect();
    let collector = std::thread::spawn(move || {
        for _ in 0..COLLECTIONS {
            precise::collect().unwrap();
        }
    });
    collector.join().unwrap();
    stop.store(true, Ordering::Relaxed);
    let verified: u64 = mutators.into_iter().map(|m| m.join().unwrap()).sum();
    assert!(precise::stats().collections - collections_before >= COLLECTIONS);
    assert!(verified >= 4 * MIN_VERIFIED);
    // The exchange's chains, checked once more from a fresh thread.
    let ex = exchange.clone();
    std::thread::spawn(move || {
        precise::collect().unwrap();
        let arr = ex.root.get().unwrap();
        let lengths = *ex.lengths.lock().unwrap();
        for (x, len) in lengths.iter().enumerate() {
            assert_eq!(verify_chain(precise::load(arr, x * 8).unwrap()), *len);
        }
    })
    .join()
    .unwrap();
}

#[test]
#[serial]
fn handle_table_growth_while_other_threads_dereference() {
    const READERS: u64 = 3;
    const PER_READER: usize = 2_000;
    /// New table entries to force (on top of the free ones, reused first).
    const GROWTH: usize = 2_000_000;
    let done = Arc::new(AtomicBool::new(false));
    let passes = Arc::new(AtomicU64::new(0));
    let ready = Arc::new(Barrier::new(READERS as usize + 1));
    let bytes = std::thread::spawn(|| precise::register_bytes_type().unwrap())
        .join()
        .unwrap();
    let readers: Vec<_> = (0..READERS)
        .map(|r| {
            let (done, passes, ready) = (done.clone(), passes.clone(), ready.clone());
            std::thread::spawn(move || {
                let frame = Frame::new().unwrap();
                let objects: Vec<(Handle, u64)> = (0..PER_READER)
                    .map(|i| {
                        let value = r << 32 | i as u64;
                        let h = precise::alloc_array(bytes, 8).unwrap();
                        precise::write_u64(h, 0, value).unwrap();
                        frame.root(h).unwrap();
                        (h, value)
                    })
                    .collect();
                precise::native(|| ready.wait()).unwrap();
                loop {
                    let last = done.load(Ordering::Acquire);
                    for (h, value) in &objects {
                        assert_eq!(precise::read_u64(*h, 0).unwrap(), *value);
                        let p = precise::deref(*h).unwrap();
                        // SAFETY: h is rooted, so its 8-byte payload is live.
                        assert_eq!(unsafe { p.cast::<u64>().as_ptr().read() }, *value);
                    }
                    passes.fetch_add(1, Ordering::Relaxed);
                    precise::safepoint().unwrap();
                    if last {
                        break;
                    }
                }
            })
        })
        .collect();
    let writer = std::thread::spawn(move || {
        precise::collect().unwrap();
        let s = precise::stats();
        let before = s.handle_capacity;
        let free = before - s.handles_in_use as usize;
        let frame = Frame::new().unwrap();
        precise::native(|| ready.wait()).unwrap();
        for i in 0..free + GROWTH {
            let h = precise::alloc_array(bytes, 0).unwrap();
            frame.root(h).unwrap();
            if i % 100_000 == 0 {
                std::thread::yield_now();
            }
        }
        let grown = precise::stats().handle_capacity - before;
        assert!(grown >= GROWTH, "the table grew by only {grown}");
    });
    writer.join().unwrap();
    let during = passes.load(Ordering::Relaxed);
    done.store(true, Ordering::Release);
    for r in readers {
        r.join().unwrap();
    }
    assert!(
        during >= READERS,
        "readers made no progress during growth ({during} passes)"
    );
}

#[test]
#[serial]
fn a_thread_in_native_code_is_not_waited_for_and_keeps_its_roots() {
    let (ready_tx, ready_rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let native_thread = std::thread::spawn(move || {
        let frame = Frame::new().unwrap();
        let h = node(77, None);
        frame.root(h).unwrap();
        precise::enter_native().unwrap();
        ready_tx.send(()).unwrap();
        // Blocked "in a system call" until the collections are done.
        go_rx.recv().unwrap();
        precise::leave_native().unwrap();
        assert_eq!(verify_chain(Some(h)), 1);
        assert_eq!(
            precise::read_u64(h, 8).unwrap(),
            77,
            "the native thread's root was not kept"
        );
    });
    ready_rx.recv().unwrap();
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        for _ in 0..10 {
            for i in 0..10_000 {
                node(i, None);
            }
            precise::collect().unwrap();
        }
        done_tx.send(()).unwrap();
    });
    // Only a deadlock can keep the collections from finishing: a generous
    // bound turns one into a failure instead of a hang.
    let finished = done_rx.recv_timeout(Duration::from_secs(600));
    go_tx.send(()).unwrap();
    native_thread.join().unwrap();
    assert!(
        finished.is_ok(),
        "collections waited for a thread in native code"
    );
}

#[test]
#[serial]
fn threads_are_registered_while_they_live_and_their_roots_die_with_them() {
    let base_threads = precise::stats().threads;
    let (tx, rx) = mpsc::channel();
    let (exit_tx, exit_rx) = mpsc::channel::<()>();
    let t = std::thread::spawn(move || {
        assert!(!precise::is_thread_registered());
        let frame = Frame::new().unwrap();
        let h = node(5, None);
        frame.root(h).unwrap();
        assert!(precise::is_thread_registered());
        std::mem::forget(frame); // still open when the thread exits
        precise::enter_native().unwrap();
        tx.send(h).unwrap();
        exit_rx.recv().unwrap();
    });
    let h = rx.recv().unwrap();
    assert_eq!(precise::stats().threads, base_threads + 1);
    exit_tx.send(()).unwrap();
    t.join().unwrap();
    assert_eq!(
        precise::stats().threads,
        base_threads,
        "exit did not unregister"
    );
    std::thread::spawn(move || {
        precise::collect().unwrap();
        assert_eq!(
            precise::deref(h),
            Err(precise::Error::StaleHandle),
            "a dead thread's shadow stack is still a root"
        );
    })
    .join()
    .unwrap();
}

#[test]
#[serial]
fn several_threads_collecting_at_once_take_turns() {
    let threads: Vec<_> = (0..4)
        .map(|t| {
            std::thread::spawn(move || {
                let frame = Frame::new().unwrap();
                let keep = node(t, None);
                frame.root(keep).unwrap();
                for _ in 0..50 {
                    node(0, None);
                    precise::collect().unwrap();
                    assert_eq!(precise::read_u64(keep, 8).unwrap(), t);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

static FINALIZED: AtomicU64 = AtomicU64::new(0);

/// A finalizer that uses the precise heap, as a program's may.
unsafe extern "C" fn allocates_precisely(
    _obj: *mut std::ffi::c_void,
    _data: *mut std::ffi::c_void,
) {
    let h = precise::alloc(node_type()).unwrap();
    precise::write_u64(h, 8, 1).unwrap();
    FINALIZED.fetch_add(1, Ordering::SeqCst);
}

/// A finalizable object of the base heap, garbage once this returns.
#[inline(never)]
fn one_finalizable() {
    let obj = defergc::gc::alloc(48);
    // SAFETY: a fresh object; the finalizer touches nothing of it.
    unsafe {
        defergc::gc::register_finalizer(
            obj.as_ptr(),
            Some(allocates_precisely),
            std::ptr::null_mut(),
        )
    };
}

/// Finalizers run on their own thread; one that used the precise heap
/// made that thread a mutator, which then slept until the next
/// finalizers without saying so, and every later collection waited for
/// it for ever (the finalizer thread now sleeps as a thread in native
/// code does).
#[test]
#[serial]
fn a_finalizer_that_used_the_precise_heap_does_not_hold_up_collections() {
    let before = FINALIZED.load(Ordering::SeqCst);
    one_finalizable();
    // Not run here (no `run_finalizers` on this thread): the finalizer
    // thread runs it after a collection finds the object.
    for _ in 0..600 {
        if FINALIZED.load(Ordering::SeqCst) > before {
            break;
        }
        defergc::gc::collect_with_clean_stack();
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        FINALIZED.load(Ordering::SeqCst) > before,
        "the finalizer did not run in 30 s"
    );
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        precise::collect().unwrap();
        precise::collect().unwrap();
        precise::unregister_thread().unwrap();
        let _ = tx.send(());
    });
    // Not a bound on speed: two collections of a small heap take
    // milliseconds; this only turns the hang into a failure.
    assert!(
        rx.recv_timeout(Duration::from_secs(60)).is_ok(),
        "collections did not finish in a minute: the finalizer thread is waited for"
    );
}
