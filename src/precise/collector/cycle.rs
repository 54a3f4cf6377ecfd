//! One cycle: its steps (see the collector's docs) and the marking loop
//! that runs them.

use super::mark::{Marker, Tracer};
use crate::precise::access;
use crate::precise::handles::{self, Freed};
use crate::precise::heap;
use crate::precise::marking;
use crate::precise::mutator::{self, Round};
use crate::precise::stats;
use std::time::Instant;

/// Runs one cycle on the heap; `on_marked` is called once marking has
/// ended and the pacer's next goal is set, before the sweep.
pub(super) fn run_cycle(on_marked: impl FnOnce()) {
    let started = Instant::now();
    crate::prof::trace::gc_started(crate::prof::trace::PRECISE);
    let id = marking::completed_id().wrapping_add(1);
    heap::set_lazy_sweep(false);
    heap::cycle_started();
    // 1 to 4: handshakes and marking.
    let mut marker = Marker::new(id as u8);
    marker.paces = true;
    mark_cycle(id, &mut marker);
    let mark_time = started.elapsed();

    // 4. End of marking, for the heap.
    let mut freed = Freed::new();
    // SAFETY: marking for `id` is complete and no sweep runs.
    let after = unsafe { heap::after_mark(id, &mut freed) };
    mutator::round(Round::End);

    // 5. Sweep.
    heap::free_pending_large();
    heap::set_lazy_sweep(true);
    // What marking found live (objects allocated during the cycle are not
    // counted: when marking is slow they would inflate the next trigger
    // without bound) sets the next goal; allocations waiting for this
    // cycle go on now, sweeping what they take if the collector has not.
    let live_heap = marker.heap_bytes + after.small_live_bytes;
    heap::end_marking(live_heap, marker.objects);
    on_marked();
    // A swept cell keeps its handle's index for its next object (the
    // cycle is complete: it may be reused at once); the handles of large
    // objects go back to the pool.
    heap::sweep_all_unswept(id);
    handles::release(freed);
    heap::end_sweep();
    stats::record_cycle(stats::Cycle {
        live_objects: marker.objects,
        live_bytes: marker.bytes,
        allocated: marker.allocated,
        mark_time,
        total_time: started.elapsed(),
    });
    // Leftover grey values (logged after the last flush) are candidates of
    // no cycle: drop them.
    marking::grey_queue().clear();
    crate::prof::trace::gc_ended(crate::prof::trace::PRECISE);
}

/// Steps 1 to 4 of cycle `id` (see the collector's docs, `mod.rs`): the handshake
/// rounds and the marking, until marking is complete and every thread
/// validates against the new mark.
pub(crate) fn mark_cycle(id: u32, tracer: &mut impl Tracer) {
    let (prev_mark, mark) = (id.wrapping_sub(1) as u8, id as u8);

    // 1. Prepare.
    marking::prepare(prev_mark, mark, access::log_moved_words);
    mutator::round(Round::Prepare);

    // 2. Snapshot.
    marking::snapshot_started();
    mutator::round(Round::Snapshot);
    marking::snapshot_taken(mark);
    tracer.snapshot_taken();

    // 3. Mark, until a Flush round marks nothing new. Assists mark along
    // with the collector, but never across a Flush round and its check:
    // those see the collector's marking alone, as without assists.
    tracer.open_assists();
    loop {
        drain_queue(tracer);
        tracer.close_assists();
        drain_queue(tracer);
        let before = tracer.marked();
        mutator::round(Round::Flush);
        tracer.globals();
        drain_queue(tracer);
        if tracer.marked() == before {
            break;
        }
        tracer.open_assists();
    }

    // 4. End of marking.
    marking::finish(id, mark);
}

/// Traces everything in the grey queue, and what it reaches.
fn drain_queue(tracer: &mut impl Tracer) {
    tracer.drain();
    loop {
        let batches = std::mem::take(&mut *marking::grey_queue());
        if batches.is_empty() {
            return;
        }
        for batch in batches {
            for raw in batch {
                tracer.visit(raw);
            }
            tracer.drain();
        }
    }
}
