//! A thread's execution-trace buffer on the real code
//! (`src/prof/trace.rs`), checked exhaustively by loom: the thread
//! appends while the writer empties the buffer; every event appended is
//! taken exactly once, in the order appended.
//! `loom_catches_a_writer_that_takes_without_the_flag` brings back a
//! writer that swaps the vector without holding the buffer's flag and
//! checks (in a child process) that loom finds the race.
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test --release --test trace_loom
//! ```
#![cfg(loom)]

mod child;
mod loom_check;

use defergc::go::model::{self, TraceBuffer, TraceEvent, TraceKind};
use loom::sync::Arc;
use loom::thread;
use loom_check::check;

fn event(g: u64) -> TraceEvent {
    TraceEvent {
        session: 1,
        kind: TraceKind::Create,
        track: 0,
        ts: g,
        dur: 0,
        g,
        arg: 0,
        reason: "",
    }
}

/// The thread appends three events while the writer empties the buffer
/// twice; every event is seen once, in order.
fn handoff() {
    let buffer = Arc::new(TraceBuffer::new());
    let writer = {
        let buffer = buffer.clone();
        thread::spawn(move || {
            let mut seen = buffer.take();
            seen.extend(buffer.take());
            seen
        })
    };
    for g in 1..=3 {
        buffer.push(event(g));
    }
    let mut seen = writer.join().unwrap();
    seen.extend(buffer.take());
    let gs: Vec<u64> = seen.iter().map(|e| e.g).collect();
    assert_eq!(gs, [1, 2, 3]);
}

#[test]
fn the_writer_takes_every_event_once_in_order() {
    check(handoff);
}

const UNLOCKED_CHILD: &str = "DEFERGC_TRACE_LOOM_UNLOCKED_CHILD";

/// A writer that swaps the vector without the flag races the thread's
/// append. Loom must find it.
#[test]
fn loom_catches_a_writer_that_takes_without_the_flag() {
    let bug = "a writer that ignores the flag";
    let test = "loom_catches_a_writer_that_takes_without_the_flag";
    if let Some(report) = child::loom_catches(test, UNLOCKED_CHILD, bug, || {
        model::set_unlocked_take(true);
        check(handoff);
    }) {
        child::loom_line(bug, &report, |l| l.contains("panicked"));
    }
}
