//! What an allocation asks of the collector: mark assists.

use super::assist::ASSISTS;
use super::mark::{Marker, Tracer};
use crate::precise::heap;
use crate::precise::marking;
use crate::precise::stats;
use crate::precise::threads::{self, ThreadState};
use std::sync::atomic::Ordering;
use std::time::Instant;

/// How long a mutator waits for the collector to open assists it asked
/// for, or to queue work for them, before it waits for the cycle instead.
const ASSIST_ASK_WAIT: std::time::Duration = std::time::Duration::from_micros(200);

/// A mark assist, by the running thread `ts` whose allocation is ahead of
/// marking or past half the pacer's allowance: marks up to `budget` objects
/// if assists are open and the grey queue has work, and returns how many
/// it marked; `None` when there is nothing to do. If assists are closed it
/// asks for them; with `ask_and_wait` it waits up to [`ASSIST_ASK_WAIT`]
/// for the collector to open them or queue work (polling safepoints
/// meanwhile). Holds no lock while it marks.
pub(crate) fn assist(ts: &ThreadState, ask_and_wait: bool, budget: u64) -> Option<u64> {
    let asked = Instant::now();
    loop {
        let marked = if ASSISTS.open.load(Ordering::Acquire) {
            ASSISTS.active.fetch_add(1, Ordering::SeqCst);
            let marked = if ASSISTS.open.load(Ordering::SeqCst) {
                assist_once(budget)
            } else {
                None
            };
            ASSISTS.active.fetch_sub(1, Ordering::SeqCst);
            marked
        } else {
            ASSISTS.wanted.store(true, Ordering::Relaxed);
            None
        };
        if marked.is_some() || !ask_and_wait || asked.elapsed() > ASSIST_ASK_WAIT {
            return marked;
        }
        // Closed, or open with nothing queued: the collector opens them,
        // or hands over part of its stack, at its next look (every
        // CHECK_EVERY steps). Poll meanwhile, so that a round waiting for
        // this thread goes on.
        threads::poll(ts);
        std::thread::yield_now();
    }
}

fn assist_once(budget: u64) -> Option<u64> {
    let Some(batch) = marking::grey_queue().pop() else {
        ASSISTS.hungry.store(true, Ordering::Relaxed);
        return None;
    };
    let mut m = Marker::new(marking::running_mark());
    m.shared = true;
    m.limit = budget;
    for raw in batch {
        m.visit(raw);
    }
    m.drain();
    m.hand_back();
    ASSISTS.objects.fetch_add(m.objects, Ordering::Relaxed);
    ASSISTS.bytes.fetch_add(m.bytes, Ordering::Relaxed);
    ASSISTS
        .heap_bytes
        .fetch_add(m.heap_bytes as u64, Ordering::Relaxed);
    stats::record_assist(m.objects);
    heap::assist_marked(m.objects);
    Some(m.objects)
}
