//! The deadlock check against a parked worker firing a sleeper's timer,
//! on the real timer heap (`src/go/timer.rs`), checked exhaustively by
//! loom: at every point of the firing, the check sees the timer pending
//! (in its heap, or being fired) or the sleeper readied, never neither
//! (which reported "all goroutines are asleep" while a goroutine was
//! about to run).
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test --release --test timer_loom
//! ```
//!
//! A second model fires two due sleepers in two looks of a worker between
//! goroutines (its budget is one entry under loom): a look leaves the
//! rest due, and the check still sees a pending timer or both sleepers
//! readied (with a budget of two, its first assertion fails).
//!
//! The check reads as `deadlock::check` does: the timers
//! (`model::timers_pending`, the heaps then the count of firings), then
//! the queues (here, whether the sleeper was readied).
//! `loom_catches_an_uncounted_firing` brings back a firing that takes the
//! entries out of the heap uncounted and checks (in a child process) that
//! loom finds the check that sees neither.
#![cfg(loom)]

mod child;
mod loom_check;

use defergc::go::model::{self, Sleep};
use loom::thread;

/// The timer heaps are the process's statics made per model: one model
/// at a time.
fn check(f: impl Fn() + Sync + Send + 'static) {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    loom_check::check(f);
}

/// `n` sleepers armed, due together; a worker thread runs `fire` while
/// the check runs, in its order: timers, then queues. The check must see
/// a pending timer (in a heap, or being fired) or every sleeper readied.
fn checked_while_fired(n: usize, fire: fn()) {
    let sleeps: Vec<Sleep> = (0..n).map(|_| Sleep::arm()).collect();
    let worker = thread::spawn(fire);
    let pending = model::timers_pending();
    let readied = sleeps.iter().all(Sleep::readied);
    assert!(
        pending || readied,
        "the check saw no pending timer and a goroutine not readied"
    );
    for s in &sleeps {
        s.wait();
    }
    worker.join().unwrap();
    assert!(!model::timers_pending(), "a fired timer still counts");
}

/// A sleeper armed; a parked worker fires it while the check runs.
fn fired_while_checked() {
    checked_while_fired(1, || {
        assert!(model::fire_timers(), "the due sleep did not fire");
    });
}

#[test]
fn a_sleeper_being_fired_is_pending_or_readied() {
    check(fired_while_checked);
}

/// Two sleepers due together; a worker between two goroutines fires
/// them in two looks (its budget is one entry under loom) while the
/// check runs: the one a look leaves stays pending.
fn fired_in_looks_while_checked() {
    checked_while_fired(2, || {
        assert!(model::fire_timers_one_look(), "the first look fired none");
        assert!(
            model::timers_pending(),
            "one look fired more than its budget"
        );
        assert!(model::fire_timers_one_look(), "the second look fired none");
    });
}

#[test]
fn sleepers_fired_a_look_at_a_time_are_pending_or_readied() {
    check(fired_in_looks_while_checked);
}

const BUG_CHILD: &str = "DEFERGC_TIMER_LOOM_BUG_CHILD";

/// With the firing uncounted, loom finds the check that sees neither the
/// timer nor the sleeper (in a child process, as the other models' bug
/// checks).
#[test]
fn loom_catches_an_uncounted_firing() {
    let bug = "an uncounted firing";
    let report = child::loom_catches("loom_catches_an_uncounted_firing", BUG_CHILD, bug, || {
        model::set_uncounted_firing(true);
        check(fired_while_checked);
    });
    if let Some(report) = report {
        let found = child::loom_line(bug, &report, |l| {
            l.contains("no pending timer and a goroutine not readied")
        });
        assert!(found.is_some(), "the child failed otherwise: {report}");
    }
}
