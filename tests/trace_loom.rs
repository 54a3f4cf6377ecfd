//! A thread's execution-trace buffer on the real code
//! (`src/prof/trace.rs`), checked exhaustively by loom: the thread
//! appends while the writer empties the buffer; every event appended is
//! taken exactly once, in the order appended.
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test --release --test trace_loom
//! ```
#![cfg(loom)]

use defergc::go::model::{TraceBuffer, TraceEvent, TraceKind};
use loom::sync::Arc;
use loom::thread;

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

#[test]
fn the_writer_takes_every_event_once_in_order() {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(3);
    }
    b.check(|| {
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
    });
}
