//! The read under which a goroutine dump walks a goroutine that may run
//! meanwhile (`src/go/dump.rs`'s `seq`: the worker stores RUNNING and
//! fences before a resume, the goroutine counts its switch out, the dump
//! reads status and count, the stack, then both again), on the real
//! code, checked exhaustively by loom:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test --release --test dump_loom
//! ```
//!
//! Checked: a dump that returns a stack returns one the goroutine wrote
//! whole (both words from one run), while the goroutine runs and parks
//! twice. `loom_catches_an_uncounted_switch` brings back a switch out
//! that does not count (status alone: parked, run, parked again looks
//! unchanged) and checks that loom finds the torn read.
#![cfg(loom)]

mod loom_check;

use defergc::go::model::Parked;
use loom::sync::Arc;
use loom::thread;
use loom_check::check;

/// A goroutine that runs twice (its stack 1, then 2) beside a dump.
fn runs_twice_beside_a_dump(counts: bool) {
    let g = Arc::new(Parked::new(counts));
    let goroutine = {
        let g = g.clone();
        thread::spawn(move || {
            for v in 1..=2 {
                g.resume();
                g.run(v);
                g.park();
            }
        })
    };
    if let Some([a, b]) = g.dump() {
        assert_eq!(a, b, "a dump read two runs' stack");
    }
    goroutine.join().unwrap();
}

#[test]
fn a_dump_reads_a_stack_of_one_run() {
    check(|| runs_twice_beside_a_dump(true));
}

#[test]
fn loom_catches_an_uncounted_switch() {
    let found = std::panic::catch_unwind(|| check(|| runs_twice_beside_a_dump(false)));
    assert!(found.is_err(), "loom found no torn read without the count");
}
