//! Per-thread slots: GC visibility in both directions, thread churn,
//! 100,000 slots, and the rules of thread teardown.
//!
//! Every test is serial: the churn test bounds the growth of the
//! process's memory, which tests running beside it would add to.

use defergc::{gc, tls};
use serial_test::serial;
use std::cell::RefCell;
use std::ffi::c_void;
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};

fn rss_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: usize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

#[cfg(defergc_boehm)]
mod collected {
    use super::*;

    /// Overwrites a stretch of this thread's stack so that stale copies of
    /// pointers from earlier calls do not keep objects alive.
    #[inline(never)]
    fn scrub_stack() {
        let buf = [0u8; 64 << 10];
        black_box(&buf);
    }

    fn churn(bytes: usize) {
        for _ in 0..bytes / 64 {
            black_box(gc::alloc(64));
        }
    }

    /// Collects (with churn in between) until `expected` finalizers ran;
    /// false if ten rounds were not enough.
    fn collect_until_finalized(expected: usize) -> bool {
        scrub_stack();
        (0..10).any(|_| {
            churn(256 << 10);
            gc::collect();
            gc::run_finalizers();
            FINALIZED.load(Ordering::SeqCst) >= expected
        })
    }

    static FINALIZED: AtomicUsize = AtomicUsize::new(0);

    unsafe extern "C" fn count_finalized(_obj: *mut c_void, _data: *mut c_void) {
        FINALIZED.fetch_add(1, Ordering::SeqCst);
    }

    const OBJ_WORDS: usize = 16;

    /// Allocates an object filled with `seed`-derived words, with a
    /// finalizer, and stores it only in `slot`.
    #[inline(never)]
    fn store_object(slot: tls::Slot<usize>, seed: usize) {
        let p = gc::alloc(OBJ_WORDS * 8).as_ptr().cast::<usize>();
        for i in 0..OBJ_WORDS {
            // SAFETY: the object has OBJ_WORDS words.
            unsafe { p.add(i).write(seed ^ (i * 0x9E37_79B9)) };
        }
        // SAFETY: a fresh collectable object.
        unsafe { gc::register_finalizer(p.cast(), Some(count_finalized), std::ptr::null_mut()) };
        slot.set(p as usize);
    }

    fn object_intact(p: usize, seed: usize) -> bool {
        let p = p as *const usize;
        // SAFETY: p is a live object of OBJ_WORDS words.
        (0..OBJ_WORDS).all(|i| unsafe { p.add(i).read() } == seed ^ (i * 0x9E37_79B9))
    }

    #[test]
    #[serial]
    fn object_only_in_tls_slot_survives_collection() {
        std::thread::spawn(|| {
            FINALIZED.store(0, Ordering::SeqCst);
            let slot = tls::alloc::<usize>(None);
            store_object(slot, 0xC0FFEE);
            scrub_stack();
            for round in 0..100 {
                churn(256 << 10);
                gc::collect();
                gc::run_finalizers();
                assert_eq!(
                    FINALIZED.load(Ordering::SeqCst),
                    0,
                    "object held only by a tls slot was finalized in round {round}"
                );
            }
            assert!(
                object_intact(slot.get().unwrap(), 0xC0FFEE),
                "contents changed"
            );
            // The other direction: once the slot lets go, the object dies.
            slot.clear();
            assert!(
                collect_until_finalized(1),
                "the object was not collected after the slot was cleared"
            );
        })
        .join()
        .unwrap();
    }

    const NODES: usize = 100_000;

    /// Builds a list of `NODES` nodes `{next, value}` hanging off `slot`,
    /// with a finalizer on the head (the node only the slot references;
    /// with 3 MB of nodes, some stray word may well retain the rest).
    #[inline(never)]
    fn build_list(slot: tls::Slot<usize>) {
        let mut head = 0usize;
        for i in 0..NODES {
            let node = gc::alloc(16).as_ptr().cast::<usize>();
            // SAFETY: a fresh two-word object.
            unsafe {
                node.write(head);
                node.add(1).write(i * 7 + 3);
                if i == NODES - 1 {
                    gc::register_finalizer(
                        node.cast(),
                        Some(count_finalized),
                        std::ptr::null_mut(),
                    );
                }
            }
            head = node as usize;
        }
        slot.set(head);
    }

    /// Walks the list in a frame of its own, so that no copy of a node
    /// pointer stays in the caller's (long-lived) frame.
    #[inline(never)]
    fn walk_list(slot: tls::Slot<usize>) -> (usize, bool) {
        let (mut n, mut ok, mut p) = (0, true, slot.get().unwrap_or(0));
        while p != 0 {
            // SAFETY: every node is a live two-word object.
            let (next, value) = unsafe {
                let node = p as *const usize;
                (node.read(), node.add(1).read())
            };
            ok &= value == (NODES - 1 - n) * 7 + 3;
            n += 1;
            p = next;
        }
        (n, ok)
    }

    #[test]
    #[serial]
    fn list_of_100000_nodes_only_in_tls_slot_survives_collection() {
        std::thread::spawn(|| {
            FINALIZED.store(0, Ordering::SeqCst);
            let slot = tls::alloc::<usize>(None);
            build_list(slot);
            scrub_stack();
            for _ in 0..100 {
                churn(128 << 10);
                gc::collect();
            }
            gc::run_finalizers();
            assert_eq!(
                FINALIZED.load(Ordering::SeqCst),
                0,
                "list nodes were finalized"
            );
            let (n, ok) = walk_list(slot);
            assert_eq!(n, NODES);
            assert!(ok, "a node's value changed");
            slot.clear();
            assert!(
                collect_until_finalized(1),
                "the list head was not collected after the slot was cleared"
            );
        })
        .join()
        .unwrap();
    }

    #[test]
    #[serial]
    fn hundred_thousand_slots_on_one_thread_hold_gc_objects() {
        std::thread::spawn(|| {
            let slots: Vec<tls::Slot<usize>> = (0..100_000).map(|_| tls::alloc(None)).collect();
            for (i, slot) in slots.iter().enumerate() {
                let p = gc::alloc(16).as_ptr().cast::<usize>();
                // SAFETY: a fresh two-word object.
                unsafe { p.write(i ^ 0x5555) };
                slot.set(p as usize);
            }
            scrub_stack();
            for _ in 0..5 {
                churn(1 << 20);
                gc::collect();
            }
            for (i, slot) in slots.iter().enumerate() {
                let p = slot.get().expect("slot lost its value") as *const usize;
                // SAFETY: the object is kept alive by the slot.
                assert_eq!(unsafe { p.read() }, i ^ 0x5555, "slot {i}'s object changed");
            }
        })
        .join()
        .unwrap();
    }
}

#[test]
#[serial]
fn hundred_thousand_slots_hold_plain_values() {
    std::thread::spawn(|| {
        let slots: Vec<tls::Slot<u64>> = (0..100_000).map(|_| tls::alloc(None)).collect();
        for (i, s) in slots.iter().enumerate() {
            assert_eq!(s.get(), None);
            s.set(i as u64 * 3);
        }
        gc::collect();
        assert!(slots
            .iter()
            .enumerate()
            .all(|(i, s)| s.get() == Some(i as u64 * 3)));
    })
    .join()
    .unwrap();
}

static DESTROYED: AtomicUsize = AtomicUsize::new(0);
static DOUBLE_DESTROYED: AtomicUsize = AtomicUsize::new(0);

/// Destructor for the churn test: the value is a GC object whose first
/// word counts how often it was destroyed.
fn destroy_counted(obj: usize) {
    let p = obj as *mut usize;
    // SAFETY: the slot kept the object alive; it is a live 2-word object.
    let before = unsafe { p.read() };
    // SAFETY: as above.
    unsafe { p.write(before + 1) };
    if before != 0 {
        DOUBLE_DESTROYED.fetch_add(1, Ordering::SeqCst);
    }
    DESTROYED.fetch_add(1, Ordering::SeqCst);
}

#[test]
#[serial]
fn thread_churn_runs_every_destructor_once_and_stays_bounded() {
    const THREADS: usize = 20_000;
    const ALIVE: usize = 8;
    DESTROYED.store(0, Ordering::SeqCst);
    DOUBLE_DESTROYED.store(0, Ordering::SeqCst);
    let slot = tls::alloc::<usize>(Some(destroy_counted));
    gc::collect();
    let (heap0, rss0) = (gc::stats().heap_size, rss_bytes());
    println!(
        "churn start: heap {} KiB, rss {} KiB",
        heap0 >> 10,
        rss0 >> 10
    );
    let mut peak_heap = heap0;
    for batch in 0..THREADS / ALIVE {
        let handles: Vec<_> = (0..ALIVE)
            .map(|_| {
                std::thread::spawn(move || {
                    let p = gc::alloc(16).as_ptr();
                    black_box(gc::alloc(256));
                    slot.set(p as usize);
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        if batch % 250 == 0 {
            gc::collect();
            peak_heap = peak_heap.max(gc::stats().heap_size);
        }
    }
    gc::collect();
    let (heap1, rss1) = (gc::stats().heap_size, rss_bytes());
    println!(
        "churn end:   heap {} KiB (peak {} KiB), rss {} KiB",
        heap1 >> 10,
        peak_heap >> 10,
        rss1 >> 10
    );
    assert_eq!(DESTROYED.load(Ordering::SeqCst), THREADS, "destructors run");
    assert_eq!(
        DOUBLE_DESTROYED.load(Ordering::SeqCst),
        0,
        "destructor ran twice"
    );
    assert!(
        peak_heap <= heap0 + (64 << 20),
        "heap grew from {heap0} to {peak_heap}"
    );
    assert!(rss1 <= rss0 + (64 << 20), "rss grew from {rss0} to {rss1}");
}

extern "C" fn foreign_body(arg: *mut c_void) -> *mut c_void {
    // SAFETY: arg is a Slot<usize> passed by value through a Box.
    let slot = unsafe { *Box::from_raw(arg.cast::<tls::Slot<usize>>()) };
    let p = gc::alloc(16).as_ptr();
    slot.set(p as usize);
    std::ptr::null_mut()
}

#[test]
#[serial]
fn foreign_pthreads_run_slot_destructors_at_exit() {
    DESTROYED.store(0, Ordering::SeqCst);
    DOUBLE_DESTROYED.store(0, Ordering::SeqCst);
    let slot = tls::alloc::<usize>(Some(destroy_counted));
    for _ in 0..100 {
        let arg = Box::into_raw(Box::new(slot)).cast::<c_void>();
        let mut tid: libc::pthread_t = 0;
        // SAFETY: foreign_body is an extern "C" fn that does not unwind.
        let rc = unsafe { libc::pthread_create(&mut tid, std::ptr::null(), foreign_body, arg) };
        assert_eq!(rc, 0);
        // SAFETY: a joinable thread we created.
        assert_eq!(unsafe { libc::pthread_join(tid, std::ptr::null_mut()) }, 0);
    }
    assert_eq!(DESTROYED.load(Ordering::SeqCst), 100);
    assert_eq!(DOUBLE_DESTROYED.load(Ordering::SeqCst), 0);
    gc::collect();
}

static EVENTS: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn log(event: String) {
    EVENTS.lock().unwrap().push(event);
}

static SECOND: tls::StaticSlot<u32> = tls::StaticSlot::new(Some(second_destructor));

fn second_destructor(v: u32) {
    log(format!("second destroyed {v}"));
}

fn first_destructor(v: u32) {
    log(format!(
        "first destroyed {v}, second holds {:?}",
        SECOND.get()
    ));
    // Refill another slot from a destructor: a later pass must destroy it.
    SECOND.set(v + 100);
}

#[test]
#[serial]
fn destructors_may_use_and_refill_other_slots() {
    EVENTS.lock().unwrap().clear();
    let first = tls::alloc::<u32>(Some(first_destructor));
    std::thread::spawn(move || {
        first.set(1);
    })
    .join()
    .unwrap();
    let events = EVENTS.lock().unwrap().clone();
    assert_eq!(
        events,
        vec![
            "first destroyed 1, second holds None",
            "second destroyed 101"
        ]
    );
}

static REFILLS: AtomicUsize = AtomicUsize::new(0);
static STUBBORN: tls::StaticSlot<u8> = tls::StaticSlot::new(Some(stubborn_destructor));

fn stubborn_destructor(v: u8) {
    REFILLS.fetch_add(1, Ordering::SeqCst);
    STUBBORN.set(v);
}

#[test]
#[serial]
fn a_destructor_that_always_refills_runs_a_bounded_number_of_times() {
    REFILLS.store(0, Ordering::SeqCst);
    std::thread::spawn(|| {
        STUBBORN.set(7);
    })
    .join()
    .unwrap();
    assert_eq!(REFILLS.load(Ordering::SeqCst), tls::TEARDOWN_PASSES);
}

struct UsesSlotOnDrop(tls::Slot<u32>);

impl Drop for UsesSlotOnDrop {
    fn drop(&mut self) {
        // thread_local! destructors run before slot teardown: the slot still
        // holds its value, and may be set.
        log(format!("thread_local drop sees {:?}", self.0.get()));
        self.0.set(42);
    }
}

thread_local! {
    static USER_TLS: RefCell<Option<UsesSlotOnDrop>> = const { RefCell::new(None) };
}

fn third_destructor(v: u32) {
    log(format!("slot destroyed {v}"));
}

#[test]
#[serial]
fn rust_thread_local_destructors_can_use_slots() {
    EVENTS.lock().unwrap().clear();
    let slot = tls::alloc::<u32>(Some(third_destructor));
    std::thread::spawn(move || {
        USER_TLS.with(|u| *u.borrow_mut() = Some(UsesSlotOnDrop(slot)));
        slot.set(5);
    })
    .join()
    .unwrap();
    let events = EVENTS.lock().unwrap().clone();
    assert_eq!(
        events,
        vec!["thread_local drop sees Some(5)", "slot destroyed 42"]
    );
}

#[test]
#[serial]
fn values_are_per_thread() {
    let slot = tls::alloc::<u64>(None);
    slot.set(1);
    let barrier = Arc::new(Barrier::new(4));
    let handles: Vec<_> = (0..4u64)
        .map(|t| {
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                assert_eq!(slot.get(), None);
                slot.set(t + 10);
                barrier.wait();
                slot.get()
            })
        })
        .collect();
    for (t, h) in handles.into_iter().enumerate() {
        assert_eq!(h.join().unwrap(), Some(t as u64 + 10));
    }
    assert_eq!(slot.get(), Some(1));
}

#[test]
#[serial]
fn set_take_with_and_replace() {
    let slot = tls::alloc::<String>(None);
    assert!(!slot.is_set());
    assert_eq!(slot.set("a".into()), None);
    assert_eq!(slot.set("b".into()), Some("a".into()));
    assert_eq!(slot.with(|v| v.map(|s| s.len())), Some(1));
    slot.with_mut(|v| v.unwrap().push('c'));
    assert_eq!(slot.take(), Some("bc".into()));
    assert_eq!(slot.take(), None);
    slot.with(|v| assert!(v.is_none()));
}

#[test]
#[serial]
fn replacing_a_lent_value_panics_with_a_clear_message() {
    let slot = tls::alloc::<String>(None);
    slot.set("x".into());
    let err = std::panic::catch_unwind(|| slot.with(|_| slot.set("y".into()))).unwrap_err();
    let msg = err.downcast_ref::<String>().unwrap();
    assert!(msg.starts_with("defergc: tls slot set while"), "{msg}");
    // The loan ended during unwinding: the slot is usable again.
    assert_eq!(slot.set("z".into()), Some("x".into()));
    let err = std::panic::catch_unwind(|| slot.with_mut(|_| slot.with(|_| ()))).unwrap_err();
    assert!(err
        .downcast_ref::<String>()
        .unwrap()
        .starts_with("defergc:"));
}

#[test]
#[serial]
fn static_slots_are_created_once_across_threads() {
    static SHARED: tls::StaticSlot<usize> = tls::StaticSlot::new(None);
    let barrier = Arc::new(Barrier::new(8));
    let ids: Vec<String> = (0..8)
        .map(|_| {
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                format!("{:?}", SHARED.slot())
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|h| h.join().unwrap())
        .collect();
    assert!(ids.iter().all(|id| *id == ids[0]), "{ids:?}");
}

#[test]
#[serial]
fn large_and_small_slots_share_pages_without_overlap() {
    let small: Vec<tls::Slot<u64>> = (0..10).map(|_| tls::alloc(None)).collect();
    let big = tls::alloc::<[u64; 1000]>(None);
    let more: Vec<tls::Slot<u64>> = (0..10).map(|_| tls::alloc(None)).collect();
    for (i, s) in small.iter().chain(&more).enumerate() {
        s.set(i as u64);
    }
    big.set([7; 1000]);
    for (i, s) in small.iter().chain(&more).enumerate() {
        assert_eq!(s.get(), Some(i as u64));
    }
    assert!(big.get().unwrap().iter().all(|&x| x == 7));
}
