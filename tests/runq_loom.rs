//! A processor's local run queue (`src/go/runq.rs`) on the real code,
//! checked exhaustively by loom:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test --release --test runq_loom
//! ```
//!
//! A ring of four slots holds tokens in place of goroutines. Its holder
//! pushes (one at a time or a batch, spilling half of a full ring), pops
//! and peeks while thieves
//! steal half into rings of their own. Checked in every interleaving:
//! each token is taken exactly once (by a pop, a steal or a spill), the
//! holder takes its own in the order pushed, and its peeks show tokens
//! pushed after the one taken, in order. `loom_catches_a_late_copy`
//! brings back a thief that moves the ring's head before it reads the
//! slots, and checks (in a child process) that loom finds the token
//! taken twice.
#![cfg(loom)]

mod child;
mod loom_check;

use defergc::go::model::{self, RunQueue};
use loom::sync::Arc;
use loom::thread;
use loom_check::check;

/// A thief: steals once into a ring of its own and takes all it got.
fn thief(victim: Arc<RunQueue>) -> thread::JoinHandle<Vec<usize>> {
    thread::spawn(move || {
        let own = RunQueue::new();
        let mut got = Vec::new();
        if let Some(first) = victim.steal_into(&own) {
            while let Some(t) = own.pop() {
                got.push(t);
            }
            got.push(first);
        }
        assert!(
            got.windows(2).all(|w| w[0] < w[1]),
            "a stolen batch out of order: {got:?}"
        );
        got
    })
}

/// Every token from 1 to `n` taken once, across all takers.
fn conserved(n: usize, takers: &[&[usize]]) {
    let mut all: Vec<usize> = takers.iter().flat_map(|t| t.iter().copied()).collect();
    all.sort_unstable();
    assert_eq!(
        all,
        (1..=n).collect::<Vec<_>>(),
        "tokens lost or taken twice"
    );
}

/// The holder pops until its ring is empty, checking order and peeks.
fn drain(q: &RunQueue, popped: &mut Vec<usize>) {
    while let Some((t, [next, after])) = q.pop_and_peek() {
        assert!(next == 0 || next > t, "a peek at {next} after {t}");
        assert!(
            after == 0 || (next != 0 && after > next),
            "a peek at {after} after {next}"
        );
        assert!(
            popped.last().is_none_or(|&l| l < t),
            "the holder's pops out of order"
        );
        popped.push(t);
    }
}

/// A ring holding tokens 1 to 4: full.
fn full_ring() -> (Arc<RunQueue>, Vec<usize>) {
    let q = Arc::new(RunQueue::new());
    let mut spilled = Vec::new();
    for t in 1..=4 {
        q.push(t, &mut spilled);
    }
    (q, spilled)
}

/// A full ring takes two more (spilling half) while a thief steals from
/// it; every token is taken once and the spills come in order.
fn spill_beside_a_thief() {
    let (q, mut spilled) = full_ring();
    let t = thief(q.clone());
    q.push(5, &mut spilled);
    q.push(6, &mut spilled);
    settle(&q, t, &spilled, 6);
}

/// Once the thief is done the holder drains its ring: the spills came in
/// order, and every token from 1 to `n` was taken once.
fn settle(q: &RunQueue, thief: thread::JoinHandle<Vec<usize>>, spilled: &[usize], n: usize) {
    let stolen = thief.join().unwrap();
    let mut popped = Vec::new();
    drain(q, &mut popped);
    assert!(
        spilled.windows(2).all(|w| w[0] < w[1]),
        "spilled out of order: {spilled:?}"
    );
    conserved(n, &[&popped, &stolen, spilled]);
}

/// The holder pushes three and pops one while a thief steals.
#[test]
fn a_thief_and_the_holder_take_each_goroutine_once() {
    check(|| {
        let q = Arc::new(RunQueue::new());
        let mut spilled = Vec::new();
        q.push(1, &mut spilled);
        let t = thief(q.clone());
        q.push(2, &mut spilled);
        q.push(3, &mut spilled);
        let mut popped = Vec::new();
        drain(&q, &mut popped);
        let stolen = t.join().unwrap();
        drain(&q, &mut popped);
        assert!(spilled.is_empty());
        conserved(3, &[&popped, &stolen]);
    });
}

/// The holder pushes two batches while a thief steals, the second
/// overfilling the ring (half spills): every token once, the spills in
/// order, and the holder's own in order. The thief may steal from the
/// first batch as it is published, or from the second after a spill.
#[test]
fn batches_beside_a_thief_lose_nothing() {
    check(|| {
        let q = Arc::new(RunQueue::new());
        let mut spilled = Vec::new();
        let t = thief(q.clone());
        q.push_batch(&[1, 2, 3], &mut spilled);
        q.push_batch(&[4, 5, 6], &mut spilled);
        settle(&q, t, &spilled, 6);
    });
}

/// A full ring spills half while a thief steals from it.
#[test]
fn a_full_ring_spills_while_a_thief_steals() {
    check(spill_beside_a_thief);
}

/// Two thieves and the holder's pops on one ring.
#[test]
fn two_thieves_and_the_holder_take_each_goroutine_once() {
    check(|| {
        let (q, _) = full_ring();
        let a = thief(q.clone());
        let b = thief(q.clone());
        let mut popped = Vec::new();
        if let Some((t, _)) = q.pop_and_peek() {
            popped.push(t);
        }
        let (a, b) = (a.join().unwrap(), b.join().unwrap());
        drain(&q, &mut popped);
        conserved(4, &[&popped, &a, &b]);
    });
}

const BUG_CHILD: &str = "DEFERGC_RUNQ_LOOM_BUG_CHILD";

/// A thief that moves head before it reads the slots: the holder refills
/// them meanwhile and the thief takes the new tokens. Loom must find it.
#[test]
fn loom_catches_a_late_copy() {
    let bug = "a late copy";
    let test = "loom_catches_a_late_copy";
    if let Some(report) = child::loom_catches(test, BUG_CHILD, bug, || {
        model::set_late_copy(true);
        check(spill_beside_a_thief);
    }) {
        child::loom_line(bug, &report, |l| l.contains("panicked"));
    }
}
