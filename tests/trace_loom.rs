//! A thread's execution-trace buffer on the real code
//! (`src/prof/trace.rs`), checked exhaustively by loom: the thread
//! appends while the writer empties the buffer (its overflow holds one
//! event under loom; a ring of two slots, so that the thread comes round
//! to slots the writer reads, or of one, so that appends go to the
//! overflow and back);
//! every event appended is taken exactly once, in the order appended,
//! and every other was refused (the ring and the overflow were full).
//! `loom_catches_a_writer_that_gives_slots_back_before_reading_them`
//! brings back a writer that advances the ring's tail before it reads
//! the slots, and
//! `loom_catches_a_writer_that_takes_the_overflow_before_the_ring` one
//! that takes the overflow before the ring's last events; each checks
//! (in a child process) that loom finds the bug.
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test --release --test trace_loom
//! ```
#![cfg(loom)]

mod child;
mod loom_check;

use defergc::go::model::{self, trace_drainer, TraceEvent, TraceKind, TraceProducer};
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

/// The thread appends three events to a buffer whose ring has `ring`
/// slots while the writer empties the buffer twice; at least `room` are
/// taken in (the room of the empty buffer), and every event appended is
/// seen once, in order.
fn appends_while_the_writer_empties(ring: usize, room: usize) {
    let producer = TraceProducer::with_capacity(ring);
    let buffer = producer.buffer().clone();
    let writer = thread::spawn(move || {
        let one = trace_drainer();
        let mut seen = buffer.take(&one);
        seen.extend(buffer.take(&one));
        seen
    });
    let appended: Vec<u64> = (1..=3).filter(|&g| producer.push(event(g))).collect();
    assert!(appended.len() >= room, "an empty buffer refused an event");
    let mut seen = writer.join().unwrap();
    seen.extend(producer.buffer().take(&trace_drainer()));
    let gs: Vec<u64> = seen.iter().map(|e| e.g).collect();
    assert_eq!(gs, appended);
}

/// A ring of two slots: the thread comes round to slots the writer reads
/// (the overflow of one is the third event's room).
fn handoff() {
    appends_while_the_writer_empties(2, 3);
}

#[test]
fn the_writer_takes_every_event_once_in_order() {
    check(handoff);
}

/// A ring of one slot: the thread's second append goes to the overflow
/// unless the writer has emptied the ring, and appends return to the ring
/// once the writer took the overflow.
fn overflow() {
    appends_while_the_writer_empties(1, 2);
}

#[test]
fn a_full_ring_overflows_and_every_event_is_taken_once_in_order() {
    check(overflow);
}

const OVERFLOW_CHILD: &str = "DEFERGC_TRACE_LOOM_OVERFLOW_CHILD";

/// A writer that takes the overflow without the ring's last events hands
/// them over after events appended later. Loom must find it.
#[test]
fn loom_catches_a_writer_that_takes_the_overflow_before_the_ring() {
    let bug = "a writer that takes the overflow before the ring";
    let test = "loom_catches_a_writer_that_takes_the_overflow_before_the_ring";
    if let Some(report) = child::loom_catches(test, OVERFLOW_CHILD, bug, || {
        model::set_overflow_first(true);
        check(overflow);
    }) {
        child::loom_line(bug, &report, |l| l.contains("panicked"));
    }
}

const EARLY_CHILD: &str = "DEFERGC_TRACE_LOOM_EARLY_CHILD";

/// A writer that gives its slots back before it reads them races the
/// thread's next append into them. Loom must find it.
#[test]
fn loom_catches_a_writer_that_gives_slots_back_before_reading_them() {
    let bug = "a writer that gives slots back before reading them";
    let test = "loom_catches_a_writer_that_gives_slots_back_before_reading_them";
    if let Some(report) = child::loom_catches(test, EARLY_CHILD, bug, || {
        model::set_early_give_back(true);
        check(handoff);
    }) {
        child::loom_line(bug, &report, |l| l.contains("panicked"));
    }
}
