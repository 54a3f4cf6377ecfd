//! The soft memory limit holds the heap (Go's `GOMEMLIMIT`): three
//! mutators on this 2-core machine (the collector thread a fourth) outrun
//! marking, and with GOGC=100 alone their heap would grow to twice the live
//! size and more (`tests/precise_pacer.rs`). Under a limit of 1.5 times
//! the live size, an allocation that would grow the heap past the limit
//! waits for the running cycle's marking (or asks for one) and reuses what
//! it found dead (`src/precise/heap/alloc.rs`), so the heap stays at the
//! limit; every live node is checked afterwards.
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
fn the_heap_stays_at_its_soft_limit_while_mutators_outrun_marking() {
    let live = (MUTATORS * LIVE_NODES) as usize * LIST_CELL_BYTES;
    let limit = live * 3 / 2;
    precise::init_with(precise::Config {
        memory_limit: Some(limit),
        ..precise::Config::DEFAULT
    })
    .unwrap();
    run_list_mutators(MUTATORS, LIVE_NODES, GARBAGE_NODES);
    let stats = precise::stats();
    assert!(
        stats.collections > 0,
        "no collection ran: nothing was checked"
    );
    // The limit is soft: an allocation waits for a cycle at most eight
    // times (what their sweeps free, the other mutators may take first),
    // then the heap grows by a block. Peaks reach 0.99-1.05 times the limit here
    // (12.8-13.6 MB); without the wait, 1.45-1.70 times.
    let bound = limit + limit / 8;
    assert!(
        stats.peak_heap_size <= bound,
        "peak heap {} bytes under a soft limit of {limit} (live {live}); {} allocations waited",
        stats.peak_heap_size,
        stats.alloc_waits
    );
}
