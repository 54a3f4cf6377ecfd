//! The lost-object torture test of the concurrent collector.
//!
//! N mutators (2, 3, 4, then 8 on this 2-core machine: oversubscribed) keep
//! moving handles between heap objects, their root slots and each other,
//! through a shared queue, while a driver thread runs collection cycles
//! back to back. Every move is the dangerous kind: the handle is copied to
//! its new place, then the old place is cleared, so a collector that
//! misses the copy frees a live object. The moves cover every lost-object
//! case of `src/precise/collector/mod.rs`:
//!
//! - out of a table (not yet scanned) into a field of another object
//!   (maybe scanned), the table slot cleared;
//! - out of an object's field into a root slot (above the snapshot), the
//!   field cleared;
//! - out of a root slot into the heap, the root cleared (a thread not yet
//!   snapshotted storing into an object that may be new);
//! - through the shared queue to another thread, popped and stored
//!   without a safepoint in between (an object allocated by one thread,
//!   filled by another).
//!
//! Every object carries an id and a checksum, checked whenever a mutator
//! reaches it. Freed handles are stale (their generation moves on), so a
//! lost object shows up as `Error::StaleHandle` on its next use; in test
//! builds freed cells are also poisoned and stamped, and checked when
//! reused, so a write through a dangling pointer aborts with a `defergc:`
//! message instead of going unnoticed.
//!
//! The test needs at least 1,000 cycles (it runs about 2,600;
//! `DEFERGC_TORTURE_SCALE=10` runs ten times as many). To see it fail, break the
//! protocol: `DEFERGC_TORTURE_BREAK=barrier` (no deletion barrier) or
//! `DEFERGC_TORTURE_BREAK=early-black` (black allocation before every
//! thread has snapshotted its roots) makes it report lost objects.
#![cfg(feature = "precise")]

mod common;

use common::{array_type, Rng};
use defergc::precise::{self, Field, Frame, GlobalRoot, Handle, TypeId};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// `struct Obj { a: Handle, b: Handle, id: u64, check: u64 }`
fn obj_type() -> TypeId {
    static T: OnceLock<TypeId> = OnceLock::new();
    *T.get_or_init(|| precise::register_type(32, &[0, 8]).unwrap())
}

/// `Obj`'s handle field at byte `offset` (0 or 8), for the moves that
/// go through [`precise::store_field`] (the same barrier as `store`).
fn obj_field(offset: usize) -> Field {
    static F: OnceLock<[Field; 2]> = OnceLock::new();
    F.get_or_init(|| [0, 8].map(|o| Field::new(obj_type(), o).unwrap()))[offset / 8]
}

fn check_of(id: u64) -> u64 {
    (id ^ 0x2545_F491_4F6C_DD1D).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn new_obj() -> Handle {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let h = precise::alloc(obj_type()).expect("allocation failed");
    precise::write_u64(h, 16, id).unwrap();
    precise::write_u64(h, 24, check_of(id)).unwrap();
    h
}

/// Checks the object a live handle names; panics with what went wrong.
fn check(h: Handle, what: &str) {
    let id = match precise::read_u64(h, 16) {
        Ok(id) => id,
        Err(e) => panic!("lost object: {h:?} ({what}) is gone: {e}"),
    };
    let check = precise::read_u64(h, 24).unwrap();
    assert_eq!(check, check_of(id), "object {h:?} ({what}) corrupted");
    assert!(id > 0 && id < NEXT_ID.load(Ordering::Relaxed));
}

/// Checks an object and the objects its fields name.
fn check_deep(h: Handle, what: &str) {
    check(h, what);
    for field in [0, 8] {
        if let Some(child) = precise::load(h, field).expect("field of a live object") {
            check(child, what);
        }
    }
}

const ROOTS: usize = 8;
const TABLE: usize = 32;
const QUEUE: usize = 16;

/// The queue between mutators: a handle array held by a global root, its
/// slots taken under a spin lock (no safepoint while held, so a popped
/// handle is stored before its thread can reach a handshake).
struct Queue {
    root: GlobalRoot,
    lock: AtomicBool,
}

impl Queue {
    fn with<R>(&self, f: impl FnOnce(Handle) -> R) -> R {
        while self
            .lock
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            precise::safepoint().unwrap();
            std::thread::yield_now();
        }
        /// Unlocks even if `f` panics, so that the other mutators stop.
        struct Unlock<'a>(&'a AtomicBool);
        impl Drop for Unlock<'_> {
            fn drop(&mut self) {
                self.0.store(false, Ordering::Release);
            }
        }
        let _unlock = Unlock(&self.lock);
        f(self.root.get().unwrap())
    }
}

/// One mutator: returns how many objects it checked.
/// Objects each mutator checks at the least (17 mutators in all).
const MIN_CHECKS: u64 = 10_000;

fn mutator(seed: u64, queue: &Queue, stop: &AtomicBool) -> u64 {
    let mut rng = Rng(seed | 1);
    let frame = Frame::new().unwrap();
    let roots: Vec<usize> = (0..ROOTS).map(|_| frame.root(None).unwrap()).collect();
    let table = precise::alloc_array(array_type(), TABLE).unwrap();
    frame.root(table).unwrap();
    let mut checked = 0u64;
    let slot = |i: usize| i * 8;
    // At least MIN_CHECKS checks each, however the machine's load splits
    // the time between the mutators and the collector.
    while !stop.load(Ordering::Relaxed) || checked < MIN_CHECKS {
        let r = roots[rng.below(ROOTS)];
        let t = rng.below(TABLE);
        let f = 8 * rng.below(2);
        match rng.below(12) {
            0 => frame.set(r, new_obj()).unwrap(),
            1 => precise::store(table, slot(t), new_obj()).unwrap(),
            2 => {
                // Table slot -> field of another object, table slot cleared.
                let h = precise::load(table, slot(t)).unwrap();
                let target = precise::load(table, slot(rng.below(TABLE))).unwrap();
                if let (Some(h), Some(target)) = (h, target) {
                    precise::store(target, f, h).unwrap();
                    precise::store(table, slot(t), None).unwrap();
                }
            }
            3 => {
                // Field -> root slot, field cleared.
                if let Some(x) = precise::load(table, slot(t)).unwrap() {
                    let h = precise::load_field(x, obj_field(f)).unwrap();
                    frame.set(r, h).unwrap();
                    precise::store_field(x, obj_field(f), None).unwrap();
                }
            }
            4 => {
                // Root -> table, root cleared.
                let h = frame.get(r).unwrap();
                precise::store(table, slot(t), h).unwrap();
                frame.set(r, None).unwrap();
            }
            5 => {
                // Root -> field of a (maybe new) object, root cleared.
                if let Some(x) = precise::load(table, slot(t)).unwrap() {
                    let h = frame.get(r).unwrap();
                    precise::store_field(x, obj_field(f), h).unwrap();
                    frame.set(r, None).unwrap();
                }
            }
            6 => {
                // Root -> queue, root cleared.
                if let Some(h) = frame.get(r).unwrap() {
                    let q = rng.below(QUEUE);
                    let moved = queue.with(|arr| {
                        if precise::load(arr, slot(q)).unwrap().is_none() {
                            precise::store(arr, slot(q), h).unwrap();
                            true
                        } else {
                            false
                        }
                    });
                    if moved {
                        frame.set(r, None).unwrap();
                    }
                }
            }
            7 => {
                // Queue -> a field of ours (no safepoint in between), or a
                // root; the queue slot cleared.
                let q = rng.below(QUEUE);
                let x = precise::load(table, slot(t)).unwrap();
                queue.with(|arr| {
                    if let Some(h) = precise::load(arr, slot(q)).unwrap() {
                        match x {
                            Some(x) => precise::store(x, f, h).unwrap(),
                            None => frame.set(r, h).unwrap(),
                        }
                        precise::store(arr, slot(q), None).unwrap();
                    }
                });
            }
            8 => {
                // A new object filled from a root and the table, then
                // published through the queue.
                let n = new_obj();
                precise::store(n, 0, frame.get(r).unwrap()).unwrap();
                precise::store(n, 8, precise::load(table, slot(t)).unwrap()).unwrap();
                // Rooted while we may wait for the queue (a safepoint).
                frame.set(r, n).unwrap();
                precise::store(table, slot(t), None).unwrap();
                let q = rng.below(QUEUE);
                let placed = queue.with(|arr| {
                    if precise::load(arr, slot(q)).unwrap().is_none() {
                        precise::store(arr, slot(q), n).unwrap();
                        true
                    } else {
                        false
                    }
                });
                if placed {
                    frame.set(r, None).unwrap();
                }
            }
            9 => {
                // Garbage.
                precise::store(table, slot(t), None).unwrap();
            }
            10 => precise::safepoint().unwrap(),
            _ => {
                for &r in &roots {
                    if let Some(h) = frame.get(r).unwrap() {
                        check_deep(h, "root");
                        checked += 1;
                    }
                }
                for t in 0..TABLE {
                    if let Some(h) = precise::load(table, slot(t)).unwrap() {
                        check_deep(h, "table");
                        checked += 1;
                    }
                }
            }
        }
    }
    checked
}

/// Runs `threads` mutators until `cycles` more collections completed (or a
/// mutator failed). Counted, not timed: on a loaded machine it takes longer.
fn phase(queue: &Arc<Queue>, threads: usize, cycles: u64) -> (u64, u64) {
    let stop = Arc::new(AtomicBool::new(false));
    let before = precise::stats().collections;
    let mutators: Vec<_> = (0..threads)
        .map(|t| {
            let (queue, stop) = (queue.clone(), stop.clone());
            std::thread::spawn(move || mutator(0xC0FFEE + 7919 * t as u64, &queue, &stop))
        })
        .collect();
    // Back-to-back cycles, driven from an unregistered thread.
    while precise::stats().collections - before < cycles
        // A mutator only finishes early when it failed.
        && !mutators.iter().any(|m| m.is_finished())
    {
        precise::gc_async();
        precise::gc_wait();
    }
    stop.store(true, Ordering::Relaxed);
    let mut checked = 0;
    let mut failure = None;
    for m in mutators {
        match m.join() {
            Ok(n) => checked += n,
            Err(e) => failure = Some(e),
        }
    }
    if let Some(e) = failure {
        std::panic::resume_unwind(e);
    }
    (precise::stats().collections - before, checked)
}

#[test]
fn handles_moved_between_objects_roots_and_threads_survive_a_thousand_cycles() {
    match std::env::var("DEFERGC_TORTURE_BREAK").as_deref() {
        Ok("barrier") => precise::break_protocol_for_tests(true, false),
        Ok("early-black") => precise::break_protocol_for_tests(false, true),
        _ => {}
    }
    let queue = Arc::new(
        std::thread::spawn(|| Queue {
            root: GlobalRoot::new(precise::alloc_array(array_type(), QUEUE).unwrap()).unwrap(),
            lock: AtomicBool::new(false),
        })
        .join()
        .unwrap(),
    );
    let mut total_cycles = 0;
    let mut total_checked = 0;
    // DEFERGC_TORTURE_SCALE=n runs n times as many cycles (a soak).
    let scale: u64 = std::env::var("DEFERGC_TORTURE_SCALE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    for (threads, cycles) in [(2, 700), (3, 600), (4, 600), (8, 700)] {
        let (c, n) = phase(&queue, threads, cycles * scale);
        eprintln!("{threads} mutators: {c} cycles, {n} objects checked");
        total_cycles += c;
        total_checked += n;
    }
    // Whatever is left in the queue is intact too.
    let q = queue.clone();
    std::thread::spawn(move || {
        precise::collect().unwrap();
        q.with(|arr| {
            for s in 0..QUEUE {
                if let Some(h) = precise::load(arr, s * 8).unwrap() {
                    check_deep(h, "queue");
                }
            }
        })
    })
    .join()
    .unwrap();
    assert!(
        total_cycles >= 1000,
        "only {total_cycles} cycles ran (the test needs 1,000)"
    );
    assert!(total_checked > 100_000, "only {total_checked} checks");
    let s = precise::stats();
    eprintln!(
        "pauses: {} recorded, max {:?}, p99 {:?}",
        s.pause_count, s.pause_max, s.pause_p99
    );
}
