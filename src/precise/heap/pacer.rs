//! The pacer: when allocation asks for the next collection.
//!
//! A collection is requested (without waiting) when the bytes handed to
//! allocation buffers and large objects since the last cycle started
//! exceed the trigger, `max(min_trigger, live_bytes * gc_percent / 100)`
//! (Go's GOGC); allocation during a cycle counts towards the next trigger.
//! The heap limit is the block manager's (`blocks.rs`).

use super::blocks::{self, heap};
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

/// The smallest trigger by default: no automatic collection before this
/// many bytes were allocated since the last one.
pub(crate) const DEFAULT_MIN_TRIGGER: usize = 4 << 20;

/// Percent growth over the last live size (`u32::MAX`: off).
static GC_PERCENT: AtomicU32 = AtomicU32::new(100);
static MIN_TRIGGER: AtomicUsize = AtomicUsize::new(DEFAULT_MIN_TRIGGER);
/// Bytes of allocation after which the next collection starts.
static TRIGGER: AtomicUsize = AtomicUsize::new(DEFAULT_MIN_TRIGGER);
/// Bytes handed to allocation buffers and large objects since the last
/// collection.
static ALLOCATED_SINCE_GC: AtomicUsize = AtomicUsize::new(0);

/// Applies the heap-related settings.
pub(crate) fn configure(heap_limit: Option<usize>, gc_percent: Option<u32>, min_trigger: usize) {
    blocks::set_limit(heap_limit);
    GC_PERCENT.store(gc_percent.unwrap_or(u32::MAX), Ordering::Relaxed);
    MIN_TRIGGER.store(min_trigger, Ordering::Relaxed);
    TRIGGER.store(min_trigger, Ordering::Relaxed);
}

/// Sets the pacer's growth percentage (`None`: no automatic collections).
pub(crate) fn set_gc_percent(percent: Option<u32>) {
    GC_PERCENT.store(percent.unwrap_or(u32::MAX), Ordering::Relaxed);
}

/// Counts `bytes` handed to allocation.
#[inline(always)]
pub(super) fn allocated(bytes: usize) {
    ALLOCATED_SINCE_GC.fetch_add(bytes, Ordering::Relaxed);
}

/// Whether allocation since the last cycle started is past the trigger.
pub(super) fn over_trigger() -> bool {
    GC_PERCENT.load(Ordering::Relaxed) != u32::MAX
        && ALLOCATED_SINCE_GC.load(Ordering::Relaxed) >= TRIGGER.load(Ordering::Relaxed)
}

/// A cycle starts: the pacer counts allocation from here.
pub(crate) fn cycle_started() {
    ALLOCATED_SINCE_GC.store(0, Ordering::Relaxed);
}

/// Ends a cycle for the heap: sets the pacer's next trigger from the heap
/// bytes found live, and gives back the memory of free blocks beyond what
/// the next cycle's allocation needs. Allocation since the cycle started
/// counts towards the next trigger (those objects were born black: live for
/// this cycle), so the heap peaks near `live * (1 + gc_percent / 100)` when
/// marking keeps up with allocation. When it does not, what the mutators
/// allocate during a long marking comes on top (there are no mark assists):
/// `gcbench --workload live-heap` peaks at about 340 MB for 100 MB live.
/// Starting cycles earlier by that amount (as Go's trigger ratio does) was
/// tried: 322 MB there, and GCBench ran 25% more cycles and 3% slower.
pub(crate) fn end_cycle(live_heap_bytes: usize) {
    let percent = GC_PERCENT.load(Ordering::Relaxed);
    let min = MIN_TRIGGER.load(Ordering::Relaxed);
    let trigger = if percent == u32::MAX {
        min
    } else {
        let trigger = (live_heap_bytes.saturating_mul(percent as usize) / 100).max(min);
        TRIGGER.store(trigger, Ordering::Relaxed);
        trigger
    };
    heap().release_idle_blocks(trigger);
}
