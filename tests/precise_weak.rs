//! Weak handles of the precise heap (Go's `weak.Pointer`), and its memory
//! controls (`SetGCPercent`, the soft `SetMemoryLimit`).
#![cfg(feature = "precise")]

mod common;

use common::Cycler;
use defergc::precise::{self, Error, Frame, GlobalRoot, Handle, Weak};
use serial_test::serial;
use std::collections::HashMap;

fn bytes_object(value: u64) -> Handle {
    let t = precise::register_bytes_type().unwrap();
    let h = precise::alloc_array(t, 8).unwrap();
    precise::write_u64(h, 0, value).unwrap();
    h
}

fn on_thread<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    std::thread::spawn(move || {
        let r = f();
        // (A thread that only changed settings never registered.)
        let _ = precise::unregister_thread();
        r
    })
    .join()
    .unwrap()
}

#[test]
#[serial(precise)]
fn a_weak_handle_names_its_object_until_a_collection_frees_it() {
    on_thread(|| {
        let frame = Frame::new().unwrap();
        let h = bytes_object(7);
        let slot = frame.root(h).unwrap();
        let w = Weak::make(h).unwrap();
        assert_eq!(Weak::make(h).unwrap(), w, "one object, one weak handle");
        precise::collect().unwrap();
        assert_eq!(w.value(), Ok(Some(h)));
        precise::set_root(slot, None).unwrap();
        precise::collect().unwrap();
        assert_eq!(w.value(), Ok(None), "the weak handle kept its object");
        assert_eq!(Weak::make(h), Err(Error::StaleHandle));
        // Bits that never came from make read as nothing.
        assert_eq!(Weak::from_raw(0).value(), Ok(None));
        assert_eq!(Weak::from_raw(u64::MAX).value(), Ok(None));
        assert_eq!(Weak::from_raw(0x1234_5678).value(), Ok(None));
        drop(frame);
    });
}

/// Root memory is scanned word by word for anything that looks like a
/// handle: a weak handle kept there must not look like one.
#[test]
#[serial(precise)]
fn a_weak_handle_in_root_memory_keeps_nothing_alive() {
    static SLOT: defergc::tls::StaticSlot<u64> = defergc::tls::StaticSlot::new(None);
    on_thread(|| {
        let w = {
            let frame = Frame::new().unwrap();
            let h = bytes_object(8);
            frame.root(h).unwrap();
            Weak::make(h).unwrap()
        };
        SLOT.set(w.to_raw());
        precise::collect().unwrap();
        assert_eq!(w.value(), Ok(None));
        SLOT.clear();
    });
}

/// Go's `unique.Make`, on weak handles: one canonical object per value,
/// kept while someone holds it, made again after it was collected.
#[test]
#[serial(precise)]
fn weak_handles_intern_values_as_unique_make_does() {
    on_thread(|| {
        let mut table: HashMap<u64, Weak> = HashMap::new();
        let mut intern = |v: u64| -> Handle {
            if let Some(h) = table.get(&v).and_then(|w| w.value().unwrap()) {
                return h;
            }
            let h = bytes_object(v);
            table.insert(v, Weak::make(h).unwrap());
            h
        };
        let frame = Frame::new().unwrap();
        let a = intern(1);
        frame.root(a).unwrap();
        let b = intern(2);
        let b_slot = frame.root(b).unwrap();
        precise::collect().unwrap();
        assert_eq!(intern(1), a, "a live value is interned once");
        assert_eq!(intern(2), b);
        precise::set_root(b_slot, None).unwrap();
        precise::collect().unwrap();
        let b2 = intern(2);
        assert_ne!(b2, b, "a collected value is made again");
        assert_eq!(precise::read_u64(b2, 0), Ok(2));
        assert_eq!(intern(1), a);
        // Weak handles as keys: equal for one object.
        let mut by_weak: HashMap<Weak, &str> = HashMap::new();
        by_weak.insert(Weak::make(a).unwrap(), "a");
        by_weak.insert(Weak::make(a).unwrap(), "a again");
        assert_eq!(by_weak.len(), 1);
        drop(frame);
    });
}

/// While cycles run back to back, every object a weak handle gives back
/// is really alive: rooted at once, it survives the next collections. An
/// object reachable only through weak handles when a cycle starts must
/// not be handed out while that cycle decides its fate.
#[test]
#[serial(precise)]
fn a_weak_read_during_marking_never_resurrects_a_dead_object() {
    let cycler = Cycler::start();
    let (given, gone) = on_thread(|| {
        let keep = GlobalRoot::new(None).unwrap();
        let (mut given, mut gone) = (0u32, 0u32);
        for i in 0..400u64 {
            let w = {
                let frame = Frame::new().unwrap();
                let h = bytes_object(i);
                frame.root(h).unwrap();
                let w = Weak::make(h).unwrap();
                // Every other object stays reachable through a global.
                if i % 2 == 0 {
                    keep.set(h).unwrap();
                }
                w
            };
            // Read until the object is gone (an unreachable one) or a few
            // times (a reachable one). Each object handed out is rooted
            // across a collection, then dropped again.
            for round in 0..40 {
                if round >= 20 {
                    // Unrooted across a whole cycle: gone for sure.
                    precise::collect().unwrap();
                }
                let frame = Frame::new().unwrap();
                match w.value().unwrap() {
                    Some(h) => {
                        frame.root(h).unwrap();
                        given += 1;
                        precise::collect().unwrap();
                        assert_eq!(
                            precise::read_u64(h, 0),
                            Ok(i),
                            "object {i} was handed out by its weak handle and then freed"
                        );
                    }
                    None => {
                        assert_ne!(
                            i % 2,
                            0,
                            "object {i} is reachable, its weak handle is empty"
                        );
                        gone += 1;
                        break;
                    }
                }
                drop(frame);
                if i % 2 == 0 && round == 2 {
                    break;
                }
                std::thread::yield_now();
            }
        }
        keep.set(None).unwrap();
        (given, gone)
    });
    cycler.stop();
    assert!(given >= 600, "reachable objects read back: {given}");
    assert_eq!(gone, 200, "unreachable objects whose weak handles emptied");
}

#[test]
#[serial(precise)]
fn set_gc_percent_and_the_soft_memory_limit_return_the_previous_values() {
    on_thread(|| {
        let first = precise::set_gc_percent(Some(50));
        assert_eq!(precise::set_gc_percent(None), Some(50));
        assert_eq!(precise::set_gc_percent(first), None);
        let limit = precise::set_memory_limit(Some(64 << 20));
        assert_eq!(precise::memory_limit(), Some(64 << 20));
        assert_eq!(precise::set_memory_limit(limit), Some(64 << 20));
        assert_eq!(precise::memory_limit(), limit);
    });
}

/// With automatic collections off (`GOGC=off`) a soft limit alone starts
/// them: a program that allocates 20 times the limit in garbage keeps its
/// heap near the limit instead of growing.
#[test]
#[serial(precise)]
fn a_soft_memory_limit_alone_keeps_the_heap_near_it() {
    on_thread(|| {
        let limit = 16usize << 20;
        let old_percent = precise::set_gc_percent(None);
        let old_limit = precise::set_memory_limit(Some(limit));
        precise::collect().unwrap();
        let before = precise::stats().collections;
        let t = precise::register_bytes_type().unwrap();
        for _ in 0..(20 * limit / 4096) {
            let frame = Frame::new().unwrap();
            let h = precise::alloc_array(t, 4096 - 16).unwrap();
            frame.root(h).unwrap();
        }
        let s = precise::stats();
        precise::set_memory_limit(old_limit);
        precise::set_gc_percent(old_percent);
        assert!(
            s.collections > before,
            "no collection started with only the soft limit set"
        );
        // The pacer's bound: the live size (nearly nothing) plus three goal
        // distances (each at most the limit), plus blocks in flight, when
        // the collector falls behind (heap/pacer.rs). Without collections
        // started by the limit, the heap would reach 20 times the limit.
        assert!(
            s.peak_heap_size <= 4 * limit,
            "the heap grew to {} MiB under a {} MiB soft limit",
            s.peak_heap_size >> 20,
            limit >> 20
        );
    });
}

/// `n` live 4 KiB arrays (`n` / 256 MiB), rooted in `keep`, each holding
/// its index.
fn live_pages(keep: &Frame, n: u64) -> Vec<Handle> {
    let t = precise::register_bytes_type().unwrap();
    (0..n)
        .map(|i| {
            let h = precise::alloc_array(t, 4096 - 16).unwrap();
            precise::write_u64(h, 0, i).unwrap();
            keep.root(h).unwrap();
            h
        })
        .collect()
}

/// Each array of [`live_pages`] still holds its index.
fn check_pages(live: &[Handle]) {
    for (i, &h) in live.iter().enumerate() {
        assert_eq!(precise::read_u64(h, 0).unwrap(), i as u64);
    }
}

/// A soft limit the live heap nearly fills cannot be kept: the heap grows
/// past it rather than have allocations wait for cycle after cycle (each
/// would find the heap at the limit again), and the live data is intact.
#[test]
#[serial(precise)]
fn a_soft_limit_below_the_live_heap_lets_it_grow() {
    on_thread(|| {
        // 12 MiB live under an 8 MiB limit.
        let limit = 8usize << 20;
        let t = precise::register_bytes_type().unwrap();
        let keep = Frame::new().unwrap();
        let live = live_pages(&keep, 3 * 1024);
        let old_limit = precise::set_memory_limit(Some(limit));
        precise::collect().unwrap();
        let before = precise::stats();
        for _ in 0..(64 << 20) / 4096 {
            let frame = Frame::new().unwrap();
            let h = precise::alloc_array(t, 4096 - 16).unwrap();
            frame.root(h).unwrap();
        }
        let after = precise::stats();
        precise::set_memory_limit(old_limit);
        check_pages(&live);
        // The goal distance is the limit's floor (1 MiB): about 64 cycles
        // for 64 MiB (31-82 measured), and few waits. Waiting at the limit,
        // each allocation past it would ask for a cycle of its own and
        // wait for it (585-587 of each measured).
        let cycles = after.collections - before.collections;
        let waits = after.alloc_waits - before.alloc_waits;
        assert!(cycles < 256, "{cycles} cycles for 64 MiB of garbage");
        assert!(waits < 256, "{waits} allocations waited");
    });
}

/// Under a soft limit the heap keeps wholly free blocks (what small
/// objects freed) until they have been idle a while; they count in the
/// heap, and small objects reuse them before the heap grows, but a large
/// object cannot: it gives enough of them back instead of waiting for
/// cycles that would free nothing more.
#[test]
#[serial(precise)]
fn large_objects_under_a_soft_limit_take_the_room_of_free_blocks() {
    on_thread(|| {
        // 8 MiB live under a 16 MiB limit.
        let limit = 16usize << 20;
        let t = precise::register_bytes_type().unwrap();
        let node = precise::register_type(16, &[0]).unwrap();
        let keep = Frame::new().unwrap();
        let live = live_pages(&keep, 2 * 1024);
        let old_limit = precise::set_memory_limit(Some(limit));
        // Small garbage, 64 MiB: the heap fills to the limit, what dies
        // becomes free blocks.
        let frame = Frame::new().unwrap();
        let slot = frame.root(None).unwrap();
        for _ in 0..(64 << 20) / 24 {
            frame.set(slot, precise::alloc(node).unwrap()).unwrap();
        }
        drop(frame);
        let before = precise::stats();
        // Large garbage: 1,024 arrays of 64 KiB.
        for _ in 0..1024 {
            let frame = Frame::new().unwrap();
            frame
                .root(precise::alloc_array(t, 64 << 10).unwrap())
                .unwrap();
        }
        let after = precise::stats();
        precise::set_memory_limit(old_limit);
        check_pages(&live);
        // A cycle every few MiB of the 64 (17 measured); waiting instead,
        // eight cycles for each (8,192).
        let cycles = after.collections - before.collections;
        assert!(cycles < 256, "{cycles} cycles for 1,024 large objects");
    });
}
