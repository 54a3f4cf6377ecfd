//! A channel's lock on the real code (`src/go/chanlock.rs`), checked
//! exhaustively by loom:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test --release --test lock_loom
//! ```
//!
//! Threads take the lock in turn, each adding to a count that is no
//! atomic but a loom cell, so loom reports two holders at once as a data
//! race. Checked: the count ends at the number of takes, the lock ends
//! free, and every thread that parked is woken (loom reports one that is
//! not as a deadlock), with unlocks that wake a sleeper to try again and
//! with unlocks that hand the lock over (a fair unlock), on a loom model
//! of the futex the lock sleeps on. `loom_catches_a_lost_handoff` brings
//! back an unlock that frees the lock without waking the sleeper,
//! `loom_catches_a_stranded_handoff` a fair unlock that, having woken no
//! one, leaves the lock handed over (held by no thread, for ever).
#![cfg(loom)]

mod child;
mod loom_check;

use defergc::go::model::{self, Lock};
use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;
use loom_check::check;

struct Counted {
    lock: Lock,
    count: UnsafeCell<usize>,
}

impl Counted {
    fn bump(&self) {
        self.lock.lock();
        // SAFETY: under the lock (loom reports a concurrent access).
        self.count.with_mut(|c| unsafe { *c += 1 });
        // SAFETY: taken above.
        unsafe { self.lock.unlock() };
    }
}

/// `threads` threads (the model's own among them), `takes` takes each,
/// on a new lock or on one as a forked child finds it (`forked`).
fn turns_on(lock: Lock, threads: usize, takes: usize) {
    // A lock handed over has no holder (a forked child's repair counts
    // its channel usable), though its word says locked.
    assert!(!lock.has_holder(), "a new or forked lock has a holder");
    let c = Arc::new(Counted {
        lock,
        count: UnsafeCell::new(0),
    });
    let others: Vec<_> = (1..threads)
        .map(|_| {
            let c = c.clone();
            thread::spawn(move || (0..takes).for_each(|_| c.bump()))
        })
        .collect();
    (0..takes).for_each(|_| c.bump());
    for t in others {
        t.join().unwrap();
    }
    // SAFETY: every other thread has ended.
    let n = c.count.with(|c| unsafe { *c });
    assert_eq!(n, threads * takes, "a take was lost");
    assert!(!c.lock.is_locked(), "the lock ended held");
}

fn turns(fair: bool, threads: usize, takes: usize) {
    turns_on(Lock::new(fair), threads, takes);
}

#[test]
fn three_threads_take_turns() {
    check(|| turns(false, 3, 1));
}

#[test]
fn three_threads_take_turns_handed_over() {
    check(|| turns(true, 3, 1));
}

#[test]
fn two_threads_take_turns_twice() {
    check(|| turns(false, 2, 2));
}

#[test]
fn two_threads_take_turns_twice_handed_over() {
    check(|| turns(true, 2, 2));
}

/// In a forked child whose parent was in a fair unlock: the lock is handed
/// over, with no holder and no one asleep; a waiter done spinning takes it.
#[test]
fn after_a_fork_two_threads_take_turns_twice() {
    check(|| turns_on(Lock::forked(false), 2, 2));
}

#[test]
fn after_a_fork_two_threads_take_turns_twice_handed_over() {
    check(|| turns_on(Lock::forked(true), 2, 2));
}

const BUG_CHILD: &str = "DEFERGC_LOCK_LOOM_BUG_CHILD";

#[test]
fn loom_catches_a_lost_handoff() {
    let bug = "an unlock that wakes no parked thread";
    let test = "loom_catches_a_lost_handoff";
    if let Some(report) = child::loom_catches(test, BUG_CHILD, bug, || {
        model::set_lost_handoff(true);
        check(|| turns(false, 2, 1));
    }) {
        child::loom_line(bug, &report, |l| {
            l.contains("panicked") || l.starts_with("deadlock")
        });
    }
}

#[test]
fn loom_catches_a_stranded_handoff() {
    let bug = "a fair unlock that leaves the lock handed to no one";
    let test = "loom_catches_a_stranded_handoff";
    if let Some(report) = child::loom_catches(test, BUG_CHILD, bug, || {
        model::set_stranded_handoff(true);
        check(|| turns_on(Lock::forked(true), 2, 1));
    }) {
        child::loom_line(bug, &report, |l| {
            l.contains("panicked") || l.starts_with("deadlock")
        });
    }
}
