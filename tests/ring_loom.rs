//! The CPU profile's sample ring (`src/prof/ring.rs`) on the real code,
//! checked exhaustively by loom:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test --release --test ring_loom
//! ```
//!
//! Two writers (signal handlers on two threads) push a sample each into
//! a ring of two records while the reader drains it, then the rest once
//! they are done. Checked: every sample read is whole (its stack is the
//! one its tag names), none is read twice, and the samples read plus the
//! samples counted as lost are the samples pushed. A ring of one record
//! (the smallest, rounded up to two) behind a reader that is slow checks
//! the full ring's count. `loom_catches_an_early_publication` brings back
//! a writer that publishes its record before filling it, and checks (in
//! a child process) that loom finds the torn record.
#![cfg(loom)]

mod child;
mod loom_check;

use defergc::go::model::{self, CpuRing};
use loom::sync::Arc;
use loom::thread;
use loom_check::check;

/// The stack a writer with `tag` pushes: two words derived from it.
fn stack_of(tag: usize) -> [usize; 2] {
    [tag * 10 + 1, tag * 10 + 2]
}

/// Reads one sample if one is published; checks it is whole and new.
fn read_one(ring: &CpuRing, seen: &mut Vec<usize>) -> bool {
    let mut out = Vec::new();
    let Some(tag) = ring.pop(&mut out) else {
        return false;
    };
    assert_eq!(out, stack_of(tag), "a torn record (tag {tag})");
    assert!(!seen.contains(&tag), "sample {tag} read twice");
    seen.push(tag);
    true
}

fn two_writers_and_a_reader(capacity: usize, reads_while_writing: usize) {
    let ring = Arc::new(CpuRing::new(capacity));
    let writers: Vec<_> = (1..=2)
        .map(|tag| {
            let ring = ring.clone();
            thread::spawn(move || ring.push(&stack_of(tag), tag))
        })
        .collect();
    let mut seen = Vec::new();
    for _ in 0..reads_while_writing {
        read_one(&ring, &mut seen);
        thread::yield_now();
    }
    let kept = writers
        .into_iter()
        .map(|w| w.join().unwrap())
        .filter(|&k| k)
        .count();
    while read_one(&ring, &mut seen) {}
    assert_eq!(seen.len(), kept, "samples kept but never read");
    assert_eq!(
        ring.take_lost() as usize,
        2 - kept,
        "samples neither kept nor counted lost"
    );
}

/// Room for both: each sample is read once and whole, whatever the
/// interleaving of the writers' claims and the reader.
#[test]
fn every_sample_is_read_once_and_whole() {
    check(|| two_writers_and_a_reader(2, 2));
}

/// A full ring: the reader reads nothing while they write, so with two
/// records and three writes one is lost and counted.
#[test]
fn a_full_ring_counts_what_it_drops() {
    check(|| {
        let ring = Arc::new(CpuRing::new(2));
        let w = {
            let ring = ring.clone();
            thread::spawn(move || {
                ring.push(&stack_of(1), 1) as usize + ring.push(&stack_of(2), 2) as usize
            })
        };
        let mine = ring.push(&stack_of(3), 3) as usize;
        let kept = w.join().unwrap() + mine;
        let mut seen = Vec::new();
        while read_one(&ring, &mut seen) {}
        assert_eq!(seen.len(), kept);
        assert_eq!(kept, 2, "two records, three pushes, no reader: two kept");
        assert_eq!(ring.take_lost(), 1);
    });
}

const BUG_CHILD: &str = "DEFERGC_RING_LOOM_BUG_CHILD";

/// A writer that publishes before filling: the reader may take the
/// record half written. Loom must find it.
#[test]
fn loom_catches_an_early_publication() {
    let bug = "an early publication";
    let test = "loom_catches_an_early_publication";
    if let Some(report) = child::loom_catches(test, BUG_CHILD, bug, || {
        model::set_ring_early_publish(true);
        check(|| two_writers_and_a_reader(2, 2));
    }) {
        child::loom_line(bug, &report, |l| {
            l.contains("panicked") || l.starts_with("deadlock")
        });
    }
}
