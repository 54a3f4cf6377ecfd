//! Shadow stacks have no fixed capacity (100,000 nested frames, 1,000,000
//! roots in one frame), keep exactly what is rooted, and reject frames
//! popped out of order.
#![cfg(feature = "precise")]

mod common;

use common::{collect_live, on_thread, Cycler};
use defergc::precise::{self, Error, Frame, Handle, TypeId};
use serial_test::serial;
use std::sync::OnceLock;

/// A pointer-free 16-byte object holding two words.
fn pair_type() -> TypeId {
    static T: OnceLock<TypeId> = OnceLock::new();
    *T.get_or_init(|| precise::register_type(16, &[]).unwrap())
}

fn pair(a: u64) -> Handle {
    let h = precise::alloc(pair_type()).unwrap();
    precise::write_u64(h, 0, a).unwrap();
    precise::write_u64(h, 8, !a).unwrap();
    h
}

fn pair_intact(h: Handle, a: u64) -> bool {
    precise::read_u64(h, 0) == Ok(a) && precise::read_u64(h, 8) == Ok(!a)
}

#[test]
#[serial]
fn hundred_thousand_nested_frames_keep_their_roots() {
    const DEPTH: usize = 100_000;
    on_thread(|| {
        let base = collect_live();
        let mut frames = Vec::with_capacity(DEPTH);
        let mut objects = Vec::with_capacity(DEPTH);
        for i in 0..DEPTH {
            let f = precise::push_frame().unwrap();
            assert_eq!(f.depth(), i + 1);
            let h = pair(i as u64);
            precise::root(h).unwrap();
            let _garbage = pair(u64::MAX);
            frames.push(f);
            objects.push(h);
        }
        assert_eq!(collect_live(), base + DEPTH as u64);
        for (i, h) in objects.iter().enumerate() {
            assert!(pair_intact(*h, i as u64), "object of frame {i} corrupted");
        }
        // Pop the inner half: exactly their objects die.
        for f in frames.drain(DEPTH / 2..).rev() {
            precise::pop_frame(f).unwrap();
        }
        assert_eq!(collect_live(), base + (DEPTH / 2) as u64);
        assert!(objects[..DEPTH / 2]
            .iter()
            .enumerate()
            .all(|(i, h)| pair_intact(*h, i as u64)));
        assert!(objects[DEPTH / 2..]
            .iter()
            .all(|h| precise::deref(*h) == Err(Error::StaleHandle)));
        for f in frames.into_iter().rev() {
            precise::pop_frame(f).unwrap();
        }
        assert_eq!(collect_live(), base);
    });
}

#[test]
#[serial]
fn million_roots_in_one_frame_are_all_kept() {
    const ROOTS: usize = 1_000_000;
    on_thread(|| {
        let base = collect_live();
        let frame = Frame::new().unwrap();
        let mut objects = Vec::with_capacity(ROOTS);
        for i in 0..ROOTS {
            let h = pair(i as u64);
            assert_eq!(
                frame.root(h).unwrap(),
                i,
                "slots are numbered from the stack bottom"
            );
            objects.push(h);
        }
        assert_eq!(collect_live(), base + ROOTS as u64);
        for (i, h) in objects.iter().enumerate() {
            assert!(pair_intact(*h, i as u64), "root {i} corrupted");
            assert_eq!(frame.get(i).unwrap(), Some(*h));
        }
        drop(frame);
        assert_eq!(collect_live(), base);
    });
}

#[test]
#[serial]
fn replacing_a_root_releases_the_old_object() {
    on_thread(|| {
        let base = collect_live();
        let frame = Frame::new().unwrap();
        let a = pair(1);
        let slot = frame.root(a).unwrap();
        let b = pair(2);
        frame.set(slot, b).unwrap();
        assert_eq!(collect_live(), base + 1);
        assert_eq!(precise::deref(a), Err(Error::StaleHandle));
        assert!(pair_intact(b, 2));
        precise::set_root(slot, None).unwrap();
        assert_eq!(precise::get_root(slot).unwrap(), None);
        assert_eq!(collect_live(), base);
    });
}

#[test]
#[serial]
fn frames_must_be_popped_innermost_first() {
    on_thread(|| {
        let outer = precise::push_frame().unwrap();
        let inner = precise::push_frame().unwrap();
        assert_eq!(precise::pop_frame(outer), Err(Error::FrameNotTop));
        precise::pop_frame(inner).unwrap();
        assert_eq!(
            precise::pop_frame(inner),
            Err(Error::FrameNotTop),
            "popped twice"
        );
        precise::pop_frame(outer).unwrap();
        assert_eq!(precise::pop_frame(outer), Err(Error::NoFrame));
        assert_eq!(precise::root(None), Err(Error::NoFrame));

        // Guards: rooting into or popping a frame that is not innermost.
        let a = Frame::new().unwrap();
        let b = Frame::new().unwrap();
        assert_eq!(a.root(None), Err(Error::FrameNotTop));
        let bid = b.id();
        let dropped_out_of_order =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(a)));
        let message = dropped_out_of_order.expect_err("dropping an outer frame first must panic");
        let message = message
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default();
        assert!(message.starts_with("defergc:"), "{message}");
        assert_eq!(b.pop(), Ok(()));
        // The outer frame survived its failed drop: pop it by id.
        precise::pop_frame(precise::FrameId::from_depth(bid.depth() - 1)).unwrap();
        assert_eq!(precise::pop_frame(bid), Err(Error::NoFrame));
    });
}

#[test]
#[serial]
fn frame_guard_pops_on_drop_and_during_unwinding() {
    on_thread(|| {
        let base = collect_live();
        let r = std::panic::catch_unwind(|| {
            let frame = Frame::new().unwrap();
            frame.root(pair(5)).unwrap();
            panic!("unwinding through a frame");
        });
        assert!(r.is_err());
        assert_eq!(
            precise::root(None),
            Err(Error::NoFrame),
            "frame not popped by unwinding"
        );
        assert_eq!(collect_live(), base);
    });
}

#[test]
#[serial]
fn a_handle_returned_from_a_popped_frame_lives_until_the_caller_roots_it() {
    // A function roots an object in its own frame, passes a safepoint,
    // pops its frame and returns the handle; the caller roots it. No
    // snapshot may be taken between the release of the frame and the
    // caller's root: popping is no safepoint. Cycles run back to back
    // meanwhile, and the function works between its safepoints without
    // polling, so that a cycle's first round can reach it at the
    // safepoint and the second (the snapshot) wait for its next poll.
    fn busy(micros: u64) {
        let start = std::time::Instant::now();
        while start.elapsed() < std::time::Duration::from_micros(micros) {
            std::hint::spin_loop();
        }
    }
    fn make(i: u64) -> Handle {
        let frame = precise::push_frame().unwrap();
        let h = pair(i);
        precise::root(h).unwrap();
        busy(10);
        precise::safepoint().unwrap();
        busy(20);
        precise::pop_frame(frame).unwrap();
        h
    }
    let cycler = Cycler::start();
    on_thread(|| {
        let outer = Frame::new().unwrap();
        let slots: Vec<usize> = (0..64).map(|_| outer.root(None).unwrap()).collect();
        let mut held = vec![(None, 0u64); slots.len()];
        for i in 1..=20_000u64 {
            let k = (i % slots.len() as u64) as usize;
            if let (Some(h), v) = held[k] {
                assert!(
                    pair_intact(h, v),
                    "object {v} lost after its frame was popped"
                );
            }
            let h = make(i);
            outer.set(slots[k], h).unwrap();
            held[k] = (Some(h), i);
        }
        for &(h, v) in &held {
            assert!(pair_intact(h.unwrap(), v));
        }
    });
    let cycles = cycler.stop();
    assert!(cycles > 10, "only {cycles} cycles ran during the test");
}
