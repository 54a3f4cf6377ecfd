//! The pacer's bound on the heap: however far marking falls behind the
//! mutators (three of them on this 2-core machine, with the collector
//! thread a fourth), the heap stays below the live size plus three goal
//! distances (`src/precise/heap/pacer.rs`), because an allocation past the
//! running cycle's allowance waits for it (after marking what it can: the
//! mutators here run hundreds of mark assists a run, and every live node
//! is checked afterwards). Without that wait, mutators that
//! outrun marking grow the heap by whatever they allocate while it runs
//! (GCBench on two mutators reached 270-320 MiB for about 20 MiB live).
//!
//! Its own test binary: the heap's peak is process-wide.
#![cfg(feature = "precise")]

mod common;

use common::{run_list_mutators, LIST_CELL_BYTES};
use defergc::precise;

/// Nodes each mutator keeps live throughout.
const LIVE_NODES: u64 = 120_000;
/// Garbage nodes each mutator allocates.
const GARBAGE_NODES: u64 = 3_000_000;
const MUTATORS: u64 = 3;

#[test]
fn the_heap_stays_within_its_bound_while_mutators_outrun_marking() {
    precise::init().unwrap();
    run_list_mutators(MUTATORS, LIVE_NODES, GARBAGE_NODES);
    let stats = precise::stats();
    eprintln!(
        "PEAK {} waits {} assists {} {}",
        stats.peak_heap_size, stats.alloc_waits, stats.assists, stats.assist_objects
    );
    let live = (MUTATORS * LIVE_NODES) as usize * LIST_CELL_BYTES;
    // GOGC=100: the goal distance is the live size (at least 4 MiB), and
    // the pacer keeps the heap below the live size plus three of them
    // (peaks reach 33.7-35.1 MB here, 2026-11-26, the bound with three
    // being 34.6 MB before the blocks the mutators hold); one more for
    // what the goal's live count misses or adds (the garbage lists a
    // snapshot still saw, objects born grey), a block (128 KiB) per
    // mutator, 4 MiB spare. Without the pacer's wait the peak is 168-175
    // MiB.
    let goal = live.max(4 << 20);
    let bound = live + 4 * goal + MUTATORS as usize * (128 << 10) + (4 << 20);
    assert!(
        stats.peak_heap_size <= bound,
        "peak heap {} bytes, bound {bound} (live {live}); {} allocations waited",
        stats.peak_heap_size,
        stats.alloc_waits
    );
    assert!(
        stats.collections > 0,
        "no collection ran: nothing was checked"
    );
}
