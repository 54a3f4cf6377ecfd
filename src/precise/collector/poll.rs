//! What an allocation asks of the collector: the allocation path's one
//! hook ([`on_alloc`]), which decides whether it marks a share (a mark
//! assist), asks for a cycle, or waits for one. The heap declares the hook
//! and calls it; the collector registers it when it starts ([`install`]),
//! so the heap names no collector.

use super::assist::ASSISTS;
use super::mark::{Marker, Tracer};
use super::thread::{collect_for_alloc, marking_target, wait_marked};
use crate::precise::heap::{self, AllocPoll, Zone, ASSIST_BUDGET};
use crate::precise::marking;
use crate::precise::mutator::{self, Mutator};
use crate::precise::stats;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Registers [`on_alloc`] as the heap's hook, when the collector starts
/// (before any thread registers, so before any allocation polls).
pub(crate) fn install() {
    heap::set_poll(on_alloc);
}

/// The allocation path's hook into the collector (the heap's
/// [`AllocPoll`] says why), on the running thread `ts` at a safepoint with
/// no heap lock held (a collection takes it). Returns whether it asked for
/// a cycle on the pacer's behalf.
fn on_alloc(ts: &Mutator, poll: AllocPoll) -> bool {
    match poll {
        AllocPoll::Memory { may_request } => {
            match heap::assist_zone() {
                Zone::Free => {}
                // Mark a share before taking the memory, if there is
                // marking to take.
                Zone::Assist(budget) => {
                    assist(ts, false, budget);
                }
                // The allowance is spent: mark while there is marking to
                // take, then wait for the cycle. The first assist waits up
                // to `ASSIST_ASK_WAIT` for marking to take even when there
                // is no cycle to wait for (the last one sweeps, the next
                // has not started): that pause holds the heap too.
                Zone::Spent => {
                    while assist(ts, true, ASSIST_BUDGET).is_some() {}
                    if let Some(target) = marking_target(false) {
                        wait_marked(ts, target);
                    }
                }
            }
            if may_request && heap::over_trigger() {
                collect_for_alloc(ts, false);
                return true;
            }
        }
        AllocPoll::SoftLimit => {
            if let Some(target) = marking_target(true) {
                while assist(ts, true, ASSIST_BUDGET).is_some() {}
                wait_marked(ts, target);
            }
        }
        AllocPoll::Exhausted => collect_for_alloc(ts, true),
    }
    false
}

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
fn assist(ts: &Mutator, ask_and_wait: bool, budget: u64) -> Option<u64> {
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
        mutator::poll(ts);
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
