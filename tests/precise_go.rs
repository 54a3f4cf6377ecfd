//! The precise collector and goroutines: each goroutine is a mutator of
//! its own (its shadow stack moves with it between workers), and a
//! goroutine that is not running never holds up a collection: the
//! collector acts for it while it is parked, scanning the roots it left.
#![cfg(feature = "precise")]

use defergc::go::{self, Chan, WaitGroup};
use defergc::precise::{self, Frame, Handle, TypeId};
use serial_test::serial;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// `struct Node { next: Handle, value: u64, check: u64 }`
fn node_type() -> TypeId {
    static T: OnceLock<TypeId> = OnceLock::new();
    *T.get_or_init(|| precise::register_type(24, &[0]).unwrap())
}

fn check_of(value: u64) -> u64 {
    (value ^ 0x0BAD_5EED_CAFE_F00D)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .rotate_left(23)
}

/// A chain of `len` nodes whose values start at `base`, rooted in the
/// innermost frame of the calling goroutine.
fn chain(frame: &Frame, base: u64, len: u64) -> usize {
    let slot = frame.root(None).unwrap();
    for i in 0..len {
        let next = precise::get_root(slot).unwrap();
        let n = precise::alloc(node_type()).unwrap();
        precise::store(n, 0, next).unwrap();
        precise::write_u64(n, 8, base + i).unwrap();
        precise::write_u64(n, 16, check_of(base + i)).unwrap();
        precise::set_root(slot, n).unwrap();
    }
    slot
}

/// Walks the chain in `slot`; every node must be intact. Returns the sum
/// of its values.
fn verify(slot: usize, len: u64) -> u64 {
    let mut p: Option<Handle> = precise::get_root(slot).unwrap();
    let (mut n, mut sum) = (0, 0);
    while let Some(h) = p {
        let v = precise::read_u64(h, 8).expect("a node rooted by a parked goroutine is gone");
        assert_eq!(
            precise::read_u64(h, 16).unwrap(),
            check_of(v),
            "node lost its checksum"
        );
        sum += v;
        n += 1;
        p = precise::load(h, 0).unwrap();
    }
    assert_eq!(n, len, "the chain lost nodes");
    sum
}

/// A thousand goroutines each root a chain in their own frames and park;
/// others allocate garbage and force collections meanwhile (which must not
/// wait for the parked ones); woken, each finds its chain whole. The
/// chains are reachable only from the parked goroutines' shadow stacks.
#[test]
#[serial]
fn chains_rooted_by_parked_goroutines_survive_collections() {
    const G: u64 = 1000;
    const LEN: u64 = 50;
    let status = go::run(|| {
        let gate = Chan::<()>::new(0);
        let parked = Arc::new(WaitGroup::new());
        let done = Arc::new(WaitGroup::new());
        let total = Arc::new(AtomicU64::new(0));
        parked.add(G as i32).unwrap();
        done.add(G as i32).unwrap();
        for g in 0..G {
            let (gate, parked, done, total) =
                (gate.clone(), parked.clone(), done.clone(), total.clone());
            go::go(move || {
                let frame = Frame::new().unwrap();
                let slot = chain(&frame, g * LEN, LEN);
                parked.done().unwrap();
                // Parked here while the collections run.
                let _ = gate.recv();
                total.fetch_add(verify(slot, LEN), Ordering::Relaxed);
                drop(frame);
                done.done().unwrap();
            });
        }
        parked.wait();
        let before = precise::stats().collections;
        // Garbage from other goroutines, and full collections, while the
        // thousand are parked.
        let churned = Arc::new(WaitGroup::new());
        churned.add(4).unwrap();
        for _ in 0..4 {
            let churned = churned.clone();
            go::go(move || {
                for round in 0..20 {
                    let frame = Frame::new().unwrap();
                    chain(&frame, 0, 200);
                    drop(frame);
                    if round % 5 == 0 {
                        precise::collect().unwrap();
                    }
                    go::gosched();
                }
                churned.done().unwrap();
            });
        }
        churned.wait();
        precise::collect().unwrap();
        assert!(precise::stats().collections >= before + 5);
        gate.close();
        done.wait();
        let n = G * LEN;
        assert_eq!(total.load(Ordering::Relaxed), (n - 1) * n / 2);
    });
    assert_eq!(status, 0);
}

/// What a finished goroutine rooted is garbage once it is gone (its
/// registration ends with it), and its registration leaves the registry.
#[test]
#[serial]
fn a_finished_goroutines_roots_are_released() {
    let status = go::run(|| {
        precise::collect().unwrap();
        let base_live = precise::stats().live_objects;
        let base_threads = precise::stats().threads;
        let done = Arc::new(WaitGroup::new());
        done.add(100).unwrap();
        for g in 0..100 {
            let done = done.clone();
            go::go(move || {
                let frame = Frame::new().unwrap();
                chain(&frame, g, 100);
                precise::collect().unwrap();
                // Ends with the frame still open: the goroutine's end
                // discards it.
                std::mem::forget(frame);
                done.done().unwrap();
            });
        }
        done.wait();
        // Let the last goroutines finish their exit.
        for _ in 0..10 {
            go::gosched();
        }
        precise::collect().unwrap();
        precise::collect().unwrap();
        let s = precise::stats();
        assert!(
            s.live_objects <= base_live + 100,
            "{} objects still live after their goroutines ended (was {base_live})",
            s.live_objects
        );
        assert!(
            s.threads <= base_threads + 1,
            "{} mutators registered (was {base_threads})",
            s.threads
        );
    });
    assert_eq!(status, 0);
}

/// A goroutine blocked in a system call, and a plain thread blocked on a
/// channel, are not waited for by a collection.
#[test]
#[serial]
fn blocked_mutators_do_not_hold_up_collections() {
    let status = go::run(|| {
        let release = Chan::<()>::new(0);
        let entered = Chan::<()>::new(1);
        let (r, e) = (release.clone(), entered.clone());
        go::go(move || {
            let frame = Frame::new().unwrap();
            let slot = chain(&frame, 7, 10);
            go::syscall(|| {
                e.send(());
                // Blocks this thread until released (a channel from a
                // plain thread's point of view: the worker waits).
                let _ = r.recv();
            });
            verify(slot, 10);
        });
        let _ = entered.recv();
        // Registered, running: this goroutine collects while the other is
        // blocked in its system call.
        let _f = Frame::new().unwrap();
        precise::collect().unwrap();
        precise::collect().unwrap();
        release.close();
    });
    assert_eq!(status, 0);
}

/// A compiled program's channel lives in bdwgc's heap (so that it is
/// collected as Go's are), and its buffer holds precise handles that no
/// other root names: the precise collector reads the buffer for as long as
/// the channel lives, and forgets it once bdwgc collected the channel.
#[test]
#[serial]
fn handles_buffered_in_a_compiled_programs_channel_are_roots() {
    use defergc::ffi::{defergc_chan_make, defergc_chan_recv, defergc_chan_send};
    std::thread::spawn(|| {
        let bytes = precise::register_bytes_type().unwrap();
        let make_chan = |n: u64| {
            // SAFETY: a valid element size; the channel is kept on this
            // stack, where bdwgc sees it.
            let c = defergc_chan_make(8, 1, n as usize);
            for i in 0..n {
                let h = precise::alloc_array(bytes, 8).unwrap();
                precise::write_u64(h, 0, check_of(i)).unwrap();
                let raw = h.to_raw();
                // SAFETY: a channel of 8-byte elements, and 8 bytes.
                unsafe { defergc_chan_send(c, (&raw const raw).cast()) };
            }
            c
        };
        // Channels that die at once: bdwgc collects them, and the precise
        // collector must stop reading their buffers (no crash, no leak of
        // the handles they held).
        for _ in 0..200 {
            std::hint::black_box(make_chan(4));
        }
        let c = make_chan(16);
        for _ in 0..3 {
            defergc::gc::collect();
            precise::collect().unwrap();
        }
        for i in 0..16 {
            let mut raw = 0u64;
            // SAFETY: as above.
            let ok = unsafe { defergc_chan_recv(c, (&raw mut raw).cast()) };
            assert_eq!(ok, 1);
            let h = Handle::from_raw(raw).unwrap();
            assert_eq!(
                precise::read_u64(h, 0),
                Ok(check_of(i)),
                "element {i} of the channel's buffer was freed"
            );
        }
        defergc::gc::keep_alive(c);
        precise::unregister_thread().unwrap();
    })
    .join()
    .unwrap();
}

/// Starting goroutines that each allocate one small object takes no more
/// collections than the bytes they allocate call for: each goroutine's
/// allocation buffer holds a block, but only what it hands out counts
/// toward the next collection. (Counting each new buffer's whole block
/// made collections as many as the goroutines over a few dozen, each one
/// scanning them all: start-up grew with the square of their number.)
#[test]
#[serial]
fn starting_goroutines_that_allocate_a_little_takes_few_collections() {
    const G: u64 = 5000;
    let status = go::run(|| {
        precise::collect().unwrap();
        let gate = Chan::<()>::new(0);
        let parked = Arc::new(WaitGroup::new());
        let done = Arc::new(WaitGroup::new());
        let total = Arc::new(AtomicU64::new(0));
        parked.add(G as i32).unwrap();
        done.add(G as i32).unwrap();
        let before = precise::stats().collections;
        for g in 0..G {
            let (gate, parked, done, total) =
                (gate.clone(), parked.clone(), done.clone(), total.clone());
            go::go(move || {
                let frame = Frame::new().unwrap();
                let slot = chain(&frame, g, 1);
                parked.done().unwrap();
                let _ = gate.recv();
                total.fetch_add(verify(slot, 1), Ordering::Relaxed);
                drop(frame);
                done.done().unwrap();
            });
        }
        parked.wait();
        let cycles = precise::stats().collections - before;
        gate.close();
        done.wait();
        assert_eq!(total.load(Ordering::Relaxed), G * (G - 1) / 2);
        // 5,000 objects of 48 bytes or so: far below the smallest trigger.
        assert!(cycles <= 4, "{cycles} collections to start {G} goroutines");
    });
    assert_eq!(status, 0);
}
