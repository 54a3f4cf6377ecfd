//! Weak pointers (Go's weak.Make / Value) and runtime.KeepAlive on the
//! bdwgc heap: the same object gives the same weak pointer, a weak pointer
//! does not keep its object alive, and a map keyed by weak pointers (Go's
//! unique.Make interning) loses exactly the entries whose objects died.

#![cfg(defergc_boehm)]

use defergc::gc::{self, Weak};
use serial_test::serial;
use std::collections::HashMap;
use std::hint::black_box;
use std::ptr::NonNull;

/// Clears the stack below the caller, where dead pointers would keep
/// garbage alive for a conservative collector.
#[inline(never)]
fn clear_stack() {
    let mut junk = [0usize; 4096];
    black_box(&mut junk);
}

/// `n` objects with weak pointers, none kept: their weak pointers.
#[inline(never)]
fn garbage_with_weak_pointers(n: usize) -> Vec<Weak> {
    (0..n)
        .map(|i| {
            let p = gc::alloc(64);
            // SAFETY: a fresh 64-byte object.
            unsafe { p.cast::<u64>().as_ptr().write(i as u64) };
            Weak::make(p)
        })
        .collect()
}

fn collect_until(mut done: impl FnMut() -> bool) -> bool {
    for _ in 0..50 {
        clear_stack();
        gc::collect();
        if done() {
            return true;
        }
    }
    false
}

#[test]
#[serial]
fn the_same_object_gives_the_same_weak_pointer() {
    let a = gc::alloc(32);
    let b = gc::alloc(32);
    assert_eq!(Weak::make(a), Weak::make(a));
    assert_ne!(Weak::make(a), Weak::make(b));
    assert_eq!(Weak::make(a).value(), Some(a));
    gc::keep_alive(a.as_ptr());
    gc::keep_alive(b.as_ptr());
}

#[test]
#[serial]
fn weak_pointers_do_not_keep_objects_alive_and_live_ones_stay() {
    const N: usize = 1000;
    // Live: pointers kept in a scanned GC array on this stack.
    let live = gc::alloc(N * 8).cast::<*mut u8>().as_ptr();
    let mut live_weak = Vec::new();
    for i in 0..N {
        let p = gc::alloc(64);
        // SAFETY: `live` has N slots.
        unsafe { live.add(i).write(p.as_ptr()) };
        live_weak.push(Weak::make(p));
    }
    let dead = garbage_with_weak_pointers(N);
    let gone = || dead.iter().filter(|w| w.value().is_none()).count();
    assert!(
        collect_until(|| gone() >= N * 9 / 10),
        "only {} of {N} unreachable objects were collected",
        gone()
    );
    for (i, w) in live_weak.iter().enumerate() {
        // SAFETY: slot i was written above.
        let p = unsafe { live.add(i).read() };
        assert_eq!(
            w.value().map(NonNull::as_ptr),
            Some(p),
            "a live object's weak pointer"
        );
    }
    gc::keep_alive(live);
}

#[test]
#[serial]
fn an_interning_map_keyed_by_weak_pointers_loses_only_dead_entries() {
    const N: usize = 500;
    let keep = gc::alloc(N * 8).cast::<*mut u8>().as_ptr();
    let mut map: HashMap<Weak, usize> = HashMap::new();
    for i in 0..N {
        let p = gc::alloc(48);
        // SAFETY: `keep` has N slots.
        unsafe { keep.add(i).write(p.as_ptr()) };
        map.insert(Weak::make(p), i);
    }
    for (w, i) in garbage_with_weak_pointers(N).into_iter().zip(N..) {
        map.insert(w, i);
    }
    assert_eq!(map.len(), 2 * N);
    // Interning: the same object finds its entry.
    // SAFETY: slot 7 was written above.
    let seventh = NonNull::new(unsafe { keep.add(7).read() }).unwrap();
    assert_eq!(map.get(&Weak::make(seventh)), Some(&7));
    collect_until(|| map.keys().filter(|w| w.value().is_none()).count() >= N * 9 / 10);
    map.retain(|w, _| w.value().is_some());
    assert!(
        map.len() >= N && map.len() <= N + N / 10,
        "{} entries left",
        map.len()
    );
    assert!(
        (0..N).all(|i| map.values().any(|&v| v == i)),
        "a live entry was lost"
    );
    gc::keep_alive(keep);
}
