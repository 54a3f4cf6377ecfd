//! The CPU profile's sample ring (`src/prof/ring.rs`) under loom: signal
//! handlers on two threads write while the reader drains, on a ring so
//! small that writers also find it full. Every sample is read once,
//! whole, or counted as lost; none is torn, read twice or missed.
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test --release --test ring_loom
//! ```
#![cfg(loom)]

use defergc::ring_model::Ring;
use loom::sync::Arc;
use loom::thread;

fn check(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(3);
    }
    b.check(f);
}

/// Reads what is published now into `seen`.
fn drain(ring: &Ring, seen: &mut Vec<(usize, Vec<usize>)>) {
    let mut stack = Vec::new();
    while let Some(tag) = ring.pop(&mut stack) {
        seen.push((tag, stack.clone()));
    }
}

#[test]
fn every_sample_is_read_once_whole_or_counted_lost() {
    check(|| {
        let ring = Arc::new(Ring::new(2));
        let writers: Vec<_> = [(1usize, 2usize), (2, 1)]
            .into_iter()
            .map(|(w, n)| {
                let ring = ring.clone();
                thread::spawn(move || {
                    (0..n)
                        .filter(|&i| ring.push(&[w, 10 * w + i], w))
                        .map(|i| (w, vec![w, 10 * w + i]))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut seen = Vec::new();
        drain(&ring, &mut seen);
        let mut kept: Vec<_> = writers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect();
        drain(&ring, &mut seen);
        kept.sort();
        seen.sort();
        assert_eq!(seen, kept, "read is not what was kept");
        assert_eq!(ring.take_lost() as usize, 3 - kept.len());
    });
}

#[test]
fn records_are_reused_lap_after_lap() {
    check(|| {
        let ring = Arc::new(Ring::new(2));
        let r = ring.clone();
        let writer = thread::spawn(move || (0..3).filter(|&i| r.push(&[i], i)).count());
        let mut seen = Vec::new();
        drain(&ring, &mut seen);
        drain(&ring, &mut seen);
        let kept = writer.join().unwrap();
        drain(&ring, &mut seen);
        assert_eq!(seen.len(), kept);
        // In order, each whole.
        for w in seen.windows(2) {
            assert!(w[0].0 < w[1].0, "{seen:?}");
        }
        for (tag, stack) in &seen {
            assert_eq!(stack, &[*tag]);
        }
        assert_eq!(ring.take_lost() as usize, 3 - kept);
    });
}
