//! The pacer: when allocation asks for the next collection, and when an
//! allocation must wait for the running one.
//!
//! The heap may grow by the *goal distance* `max(min_trigger, live_bytes *
//! gc_percent / 100)` (Go's GOGC) over what the last marking found live,
//! counting the bytes handed to allocation buffers and large objects since
//! the last cycle started (allocation during a cycle counts towards the
//! next one: those objects were born black). A collection is requested
//! (without waiting) early enough that, at the rate the mutators allocated
//! during the last cycles, it ends as the heap reaches its goal: at the
//! goal distance less that expected allocation (at most half of it), as
//! Go's trigger does.
//!
//! A collector thread shares the machine with the mutators (two cores
//! here, and other processes), so marking may fall behind however early it
//! starts. Then the heap would grow without bound while marking runs. So a
//! cycle has an *allowance*: what the mutators
//! may allocate since it started, the goal distance less what they
//! allocated before it started, but at least [`OVERSHOOT`] goal distances;
//! once it has completed (and while a requested one has not started),
//! `OVERSHOOT + 1` goal distances since it started. An allocation that
//! needs a new block or a large object past half the allowance first
//! marks a share of the cycle's work (a *mark assist*, `collector/`);
//! past the whole allowance it marks while there is marking to take and
//! then waits, in native code, for the cycle's marking to end
//! ([`assist_zone`]), as Go parks an assist that finds no work. It does
//! not wait for the sweep: the next goal is set when marking ends, and the
//! blocks it takes it sweeps itself if the collector has not yet (waiting
//! for the sweep too makes allocations wait several times longer). These
//! assists shorten the waits but not the heap, which the allowance sets.
//! A tighter allowance than [`OVERSHOOT`]'s, Go's absolute goal (the goal
//! distance less what was allocated since the previous cycle started, at
//! least a quarter of it), lowers the peak heap but costs far more time:
//! on two shared cores the mutator allocates about as fast as the
//! collector marks. (The figures behind these choices are in the README's
//! "The precise collector's pacer".)
//!
//! What lowers the heap is assists paced as Go's are, before half the
//! allowance: a cycle should finish marking by the time the mutators have
//! allocated its *runway*, what is left of the goal distance when it
//! starts (at least a quarter of it), and its work is what the last
//! marking found live, in objects. An allocation that takes a block while
//! the cycle's marking lags its allocation (a smaller share of the work
//! marked than of the runway allocated) marks the difference first
//! ([`assist_zone`]); the collector marks alone while it keeps up. Paced
//! assists keep a heap whose marking is long near its goal, for some more
//! time. Cycles whose goal distance is below
//! [`PACED_FROM`] do not pace, unless the soft memory limit set it: their
//! overshoot is bounded by a few MiB anyway.
//!
//! Hence a bound that holds however the threads are scheduled: the heap
//! stays below the live size plus `2 * OVERSHOOT + 1` goal distances (this
//! window's allocation, and the previous window's garbage until the sweep
//! has freed it), plus a block per thread and size class and the large
//! object being allocated (`tests/precise_pacer.rs`). Objects born grey (during the
//! snapshot) are traced and so counted live by their cycle, though most
//! die at once: the goal is computed without them, or they would inflate
//! it cycle after cycle.
//!
//! A soft memory limit (Go's `SetMemoryLimit`, `GOMEMLIMIT`) caps the
//! goal distance at what the limit leaves over the live heap (at least
//! [`LIMIT_FLOOR`]), so collections come sooner as the heap nears it; with
//! no growth percentage (`GOGC=off`) it alone starts collections. Since a
//! cycle's allocation is born black, the goal alone lets the heap pass the
//! limit whenever marking outlasts the room it left; so an allocation that
//! would grow the heap past the limit first waits for cycles to free
//! memory ([`past_soft_limit`], `alloc.rs`), and the heap stays at the
//! limit, at the cost of more cycles and more marking in assists (a
//! trigger earlier still does not help).
//! The hard heap limit is the block manager's (`blocks.rs`).

use super::blocks::{self, heap};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};

/// The smallest trigger by default: no automatic collection before this
/// many bytes were allocated since the last one.
pub(crate) const DEFAULT_MIN_TRIGGER: usize = 4 << 20;

/// Percent growth over the last live size (`u32::MAX`: off).
static GC_PERCENT: AtomicU32 = AtomicU32::new(100);
/// Go's soft memory limit on the heap, in bytes (`usize::MAX`: none): the
/// goal never passes it, however little room that leaves.
static SOFT_LIMIT: AtomicUsize = AtomicUsize::new(usize::MAX);
/// The least goal distance under the soft limit, so that a heap at its
/// limit collects often rather than continuously.
const LIMIT_FLOOR: usize = 1 << 20;
static MIN_TRIGGER: AtomicUsize = AtomicUsize::new(DEFAULT_MIN_TRIGGER);
/// The goal distance: how far the heap may grow over the live size.
static GOAL: AtomicUsize = AtomicUsize::new(DEFAULT_MIN_TRIGGER);
/// Bytes of allocation after which the next collection starts.
static TRIGGER: AtomicUsize = AtomicUsize::new(DEFAULT_MIN_TRIGGER);
/// Bytes handed to allocation buffers and large objects since the last
/// collection.
static ALLOCATED_SINCE_GC: AtomicUsize = AtomicUsize::new(0);
/// The bytes the mutators may allocate since the last cycle started
/// before an allocation waits for a cycle (see the module docs);
/// `usize::MAX` with automatic collections off.
static ALLOWANCE: AtomicUsize = AtomicUsize::new(2 * DEFAULT_MIN_TRIGGER);
/// How many goal distances the mutators may allocate while a cycle runs,
/// whatever they allocated before it started. One rather than two: it
/// keeps every workload's peak heap markedly lower for a little time, and
/// the heap's goal is Go's promise (the README's "The precise collector's
/// pacer" has the figures).
const OVERSHOOT: usize = 1;
/// The next cycle's allocation budget, set when marking ends: the free
/// blocks the sweep keeps (see `blocks.rs`).
static BUDGET: AtomicUsize = AtomicUsize::new(DEFAULT_MIN_TRIGGER);
/// What the mutators allocated during recent cycles (a moving average).
static DURING_CYCLE: AtomicUsize = AtomicUsize::new(0);
/// What the mutators allocated in the running cycle before every thread
/// had snapshotted its roots: objects born grey, traced by the cycle and
/// so counted live by it, though most die at once.
static BEFORE_SNAPSHOT: AtomicUsize = AtomicUsize::new(0);

/// Heap bytes the last completed marking found live, less what was born
/// grey (as the goal counts them).
static LAST_LIVE: AtomicUsize = AtomicUsize::new(0);
/// Objects the last completed marking found live: the running cycle's
/// expected work.
static EXPECTED_WORK: AtomicU64 = AtomicU64::new(0);
/// What the mutators may allocate while the running cycle marks before its
/// marking should be complete (`usize::MAX` while none marks, or with
/// automatic collections off).
static RUNWAY: AtomicUsize = AtomicUsize::new(usize::MAX);
/// The least runway, as a fraction of the goal distance: a cycle that
/// starts late (its trigger passed while the last one was still sweeping)
/// still has a quarter of a goal distance to mark in (a half saves some
/// time for a higher peak heap).
const MIN_RUNWAY_FRACTION: usize = 4;
/// The least goal distance whose cycles pace assists. Below it, the
/// allowance's bound (a goal distance over the goal) is a few MiB, and
/// pacing costs more time than it saves heap. Chosen so that GCBench's
/// steady state does not pace and its larger trees do (see the README's
/// "The precise collector's pacer").
const PACED_FROM: usize = 8 << 20;
/// The soft memory limit set the last goal: its cycles pace assists
/// whatever their goal distance.
static NEAR_LIMIT: AtomicBool = AtomicBool::new(false);
/// Objects the collector has marked in the running cycle, as of its last
/// look at the assist state (see `collector/`).
static COLLECTOR_MARKED: AtomicU64 = AtomicU64::new(0);
/// Objects the assists have marked in the running cycle.
static ASSIST_MARKED: AtomicU64 = AtomicU64::new(0);
/// Objects an assist marks at a time past half the allowance: about one for
/// every 64 bytes of the block its thread is about to take. A paced assist
/// marks what its cycle lags by, within a half and four times this.
pub(crate) const ASSIST_BUDGET: u64 = 2048;

/// The collector's marking so far in the running cycle (its own objects,
/// without the assists').
pub(crate) fn collector_marked(objects: u64) {
    COLLECTOR_MARKED.store(objects, Ordering::Relaxed);
}

/// An assist marked `objects` in the running cycle.
pub(crate) fn assist_marked(objects: u64) {
    ASSIST_MARKED.fetch_add(objects, Ordering::Relaxed);
}

/// Applies the heap-related settings.
pub(crate) fn configure(
    heap_limit: Option<usize>,
    gc_percent: Option<u32>,
    memory_limit: Option<usize>,
    min_trigger: usize,
) {
    blocks::set_limit(heap_limit);
    GC_PERCENT.store(gc_percent.unwrap_or(u32::MAX), Ordering::Relaxed);
    SOFT_LIMIT.store(memory_limit.unwrap_or(usize::MAX), Ordering::Relaxed);
    MIN_TRIGGER.store(min_trigger, Ordering::Relaxed);
    GOAL.store(min_trigger, Ordering::Relaxed);
    TRIGGER.store(min_trigger, Ordering::Relaxed);
    set_allowance(min_trigger.saturating_mul(2));
}

/// Whether collections start on their own: a growth percentage, or a
/// soft limit (Go's `GOGC=off` with `GOMEMLIMIT` collects near the limit
/// only).
fn automatic() -> bool {
    GC_PERCENT.load(Ordering::Relaxed) != u32::MAX
        || SOFT_LIMIT.load(Ordering::Relaxed) != usize::MAX
}

/// Sets the allowance, or lifts it when automatic collections are off.
fn set_allowance(bytes: usize) {
    ALLOWANCE.store(
        if automatic() { bytes } else { usize::MAX },
        Ordering::Relaxed,
    );
}

/// Sets the pacer's growth percentage (`None`: no automatic collections);
/// returns the previous one.
pub(crate) fn set_gc_percent(percent: Option<u32>) -> Option<u32> {
    let old = GC_PERCENT.swap(percent.unwrap_or(u32::MAX), Ordering::Relaxed);
    set_allowance(GOAL.load(Ordering::Relaxed).saturating_mul(2));
    (old != u32::MAX).then_some(old)
}

/// Sets the soft memory limit (`None`: none); returns the previous one.
/// It shapes the goal from the next cycle's end on.
pub(crate) fn set_memory_limit(limit: Option<usize>) -> Option<usize> {
    let old = SOFT_LIMIT.swap(limit.unwrap_or(usize::MAX), Ordering::Relaxed);
    set_allowance(GOAL.load(Ordering::Relaxed).saturating_mul(2));
    (old != usize::MAX).then_some(old)
}

/// By how many bytes growing a heap of `heap_size` bytes by `bytes` would
/// pass the soft memory limit while the limit is worth keeping (0 if it
/// would not): while the last marking found at most three quarters of it
/// live. Above that, cycles would come every quarter of the limit's
/// allocation or sooner, each marking at least three times as much, and
/// allocations waiting for them would stall the mutators: where Go's
/// collector reaches its cap on its share of the processor and lets the
/// heap pass the limit, the heap grows.
#[inline]
pub(super) fn past_soft_limit(heap_size: usize, bytes: usize) -> usize {
    let limit = SOFT_LIMIT.load(Ordering::Relaxed);
    if limit == usize::MAX {
        return 0;
    }
    limit_holds_back(heap_size, bytes, limit, LAST_LIVE.load(Ordering::Relaxed))
}

fn limit_holds_back(heap_size: usize, bytes: usize, limit: usize, live: usize) -> usize {
    if live <= limit / 4 * 3 {
        heap_size.saturating_add(bytes).saturating_sub(limit)
    } else {
        0
    }
}

/// The soft memory limit, if any.
pub(crate) fn memory_limit() -> Option<usize> {
    let l = SOFT_LIMIT.load(Ordering::Relaxed);
    (l != usize::MAX).then_some(l)
}

/// Counts `bytes` handed to allocation.
#[inline(always)]
pub(super) fn allocated(bytes: usize) {
    ALLOCATED_SINCE_GC.fetch_add(bytes, Ordering::Relaxed);
}

/// Whether allocation since the last cycle started is past the trigger.
pub(crate) fn over_trigger() -> bool {
    automatic() && ALLOCATED_SINCE_GC.load(Ordering::Relaxed) >= TRIGGER.load(Ordering::Relaxed)
}

/// Where allocation since the last cycle started stands against the
/// allowance and the running marking.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Zone {
    /// Below half of it, with marking keeping up.
    Free,
    /// Past half of it, or ahead of marking: allocations that take a block
    /// first mark up to this many objects.
    Assist(u64),
    /// Past it: allocations wait for the running (or requested) cycle's
    /// marking to end (assisting meanwhile).
    Spent,
}

/// Where allocation since the last cycle started stands.
#[inline]
pub(crate) fn assist_zone() -> Zone {
    zone(
        ALLOCATED_SINCE_GC.load(Ordering::Relaxed),
        ALLOWANCE.load(Ordering::Relaxed),
        RUNWAY.load(Ordering::Relaxed),
        EXPECTED_WORK.load(Ordering::Relaxed),
        COLLECTOR_MARKED.load(Ordering::Relaxed) + ASSIST_MARKED.load(Ordering::Relaxed),
    )
}

/// The zone of `allocated` bytes since the cycle started, against its
/// `allowance` and `runway`, when `marked` of the `work` objects it expects
/// are marked.
fn zone(allocated: usize, allowance: usize, runway: usize, work: u64, marked: u64) -> Zone {
    if allocated >= allowance {
        return Zone::Spent;
    }
    if allocated >= allowance / 2 {
        return Zone::Assist(ASSIST_BUDGET);
    }
    if runway == usize::MAX {
        return Zone::Free;
    }
    // The work due by now, if marking is to end as the runway does.
    let due = (allocated.min(runway) as u128 * u128::from(work) / runway.max(1) as u128) as u64;
    if due > marked {
        Zone::Assist((due - marked).clamp(ASSIST_BUDGET / 2, 4 * ASSIST_BUDGET))
    } else {
        Zone::Free
    }
}

/// A cycle starts: the pacer counts allocation from here, and sets what
/// the mutators may allocate before the heap passes its goal.
pub(crate) fn cycle_started() {
    let before = ALLOCATED_SINCE_GC.swap(0, Ordering::Relaxed);
    let goal = GOAL.load(Ordering::Relaxed);
    set_allowance(goal.saturating_sub(before).max(goal * OVERSHOOT));
    COLLECTOR_MARKED.store(0, Ordering::Relaxed);
    ASSIST_MARKED.store(0, Ordering::Relaxed);
    RUNWAY.store(
        if automatic() {
            runway(goal, before, NEAR_LIMIT.load(Ordering::Relaxed))
        } else {
            usize::MAX
        },
        Ordering::Relaxed,
    );
}

/// The runway of a cycle that starts `before` bytes after the last one did,
/// for a goal distance `goal` (`usize::MAX`: it does not pace).
fn runway(goal: usize, before: usize, near_limit: bool) -> usize {
    if goal >= PACED_FROM || near_limit {
        goal.saturating_sub(before).max(goal / MIN_RUNWAY_FRACTION)
    } else {
        usize::MAX
    }
}

/// Every thread has snapshotted its roots: what was allocated since the
/// cycle started was born grey.
pub(crate) fn snapshot_taken() {
    BEFORE_SNAPSHOT.store(
        ALLOCATED_SINCE_GC.load(Ordering::Relaxed),
        Ordering::Relaxed,
    );
}

/// Ends a cycle's marking for the heap: sets the next goal distance,
/// trigger and allowance from the heap bytes found live, and the next
/// cycle's expected work from the objects found live.
pub(crate) fn end_marking(live_heap_bytes: usize, live_objects: u64) {
    RUNWAY.store(usize::MAX, Ordering::Relaxed);
    EXPECTED_WORK.store(live_objects, Ordering::Relaxed);
    let during = ALLOCATED_SINCE_GC.load(Ordering::Relaxed);
    let expected = (DURING_CYCLE.load(Ordering::Relaxed) + during) / 2;
    DURING_CYCLE.store(expected, Ordering::Relaxed);
    let percent = GC_PERCENT.load(Ordering::Relaxed);
    let min = MIN_TRIGGER.load(Ordering::Relaxed);
    let live = live_heap_bytes.saturating_sub(BEFORE_SNAPSHOT.load(Ordering::Relaxed));
    LAST_LIVE.store(live, Ordering::Relaxed);
    let mut goal = if percent == u32::MAX {
        usize::MAX
    } else {
        (live.saturating_mul(percent as usize) / 100).max(min)
    };
    let limit = SOFT_LIMIT.load(Ordering::Relaxed);
    let mut near_limit = false;
    if limit != usize::MAX {
        // Go's memory limit: the heap's goal stays under it (what the
        // cycle found live is in the heap already), the minimum trigger
        // notwithstanding.
        let room = limit.saturating_sub(live_heap_bytes).max(LIMIT_FLOOR);
        near_limit = room < goal;
        goal = goal.min(room);
    }
    NEAR_LIMIT.store(near_limit, Ordering::Relaxed);
    let goal = if goal == usize::MAX {
        min
    } else {
        GOAL.store(goal, Ordering::Relaxed);
        TRIGGER.store(goal - expected.min(goal / 2), Ordering::Relaxed);
        goal
    };
    set_allowance(goal.saturating_mul(OVERSHOOT + 1));
    BUDGET.store(goal, Ordering::Relaxed);
}

/// Ends a cycle's sweep for the heap: gives back the memory of free blocks
/// beyond what the next cycle's allocation needs.
pub(crate) fn end_sweep() {
    heap().release_idle_blocks(BUDGET.load(Ordering::Relaxed));
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: usize = 1 << 20;

    #[test]
    fn the_allowance_zones_come_first() {
        assert_eq!(zone(100 * MIB, 100 * MIB, 50 * MIB, 1000, 0), Zone::Spent);
        assert_eq!(
            zone(60 * MIB, 100 * MIB, usize::MAX, 0, 0),
            Zone::Assist(ASSIST_BUDGET)
        );
        // Past half the allowance, marking that keeps up does not matter.
        assert_eq!(
            zone(60 * MIB, 100 * MIB, 80 * MIB, 1000, 1000),
            Zone::Assist(ASSIST_BUDGET)
        );
    }

    #[test]
    fn the_soft_limit_holds_back_growth_while_it_can_be_kept() {
        let limit = 150 * MIB;
        assert_eq!(limit_holds_back(149 * MIB, MIB, limit, 100 * MIB), 0);
        assert_eq!(limit_holds_back(150 * MIB, 1, limit, 100 * MIB), 1);
        assert_eq!(
            limit_holds_back(usize::MAX - 1, 2, limit, 0),
            usize::MAX - limit
        );
        // The live heap fills most of the limit: the heap grows.
        assert_eq!(limit_holds_back(150 * MIB, MIB, limit, limit / 4 * 3), MIB);
        assert_eq!(
            limit_holds_back(150 * MIB, MIB, limit, limit / 4 * 3 + 1),
            0
        );
        assert_eq!(limit_holds_back(400 * MIB, MIB, limit, 200 * MIB), 0);
    }

    #[test]
    fn the_runway_is_what_is_left_of_the_goal_distance_at_least_a_quarter() {
        assert_eq!(runway(100 * MIB, 30 * MIB, false), 70 * MIB);
        assert_eq!(runway(100 * MIB, 90 * MIB, false), 25 * MIB);
        assert_eq!(runway(100 * MIB, 200 * MIB, false), 25 * MIB);
        // GCBench's goals at its largest trees pace; smaller ones do not,
        // unless the soft memory limit set them.
        assert_eq!(runway(12 * MIB, 6 * MIB, false), 6 * MIB);
        assert_eq!(runway(PACED_FROM, 0, false), PACED_FROM);
        assert_eq!(runway(PACED_FROM - 1, 0, false), usize::MAX);
        assert_eq!(runway(4 * MIB, 3 * MIB, true), MIB);
    }

    #[test]
    fn an_allocation_ahead_of_marking_assists_by_the_difference() {
        let work = 1_000_000;
        // A fifth of the runway allocated: a fifth of the work is due.
        assert_eq!(
            zone(10 * MIB, 200 * MIB, 50 * MIB, work, 190_000),
            Zone::Assist(10_000.clamp(ASSIST_BUDGET / 2, 4 * ASSIST_BUDGET))
        );
        assert_eq!(
            zone(10 * MIB, 200 * MIB, 50 * MIB, work, 199_000),
            Zone::Assist(ASSIST_BUDGET / 2)
        );
        assert_eq!(
            zone(10 * MIB, 200 * MIB, 50 * MIB, work, 0),
            Zone::Assist(4 * ASSIST_BUDGET)
        );
        // Marking that keeps up, or no marking, or nothing expected.
        assert_eq!(
            zone(10 * MIB, 200 * MIB, 50 * MIB, work, 200_000),
            Zone::Free
        );
        assert_eq!(zone(10 * MIB, 200 * MIB, usize::MAX, work, 0), Zone::Free);
        assert_eq!(zone(10 * MIB, 200 * MIB, 50 * MIB, 0, 0), Zone::Free);
        // Past the runway all the work is due, however much more was
        // allocated.
        assert_eq!(
            zone(80 * MIB, 200 * MIB, 50 * MIB, work, work - 100),
            Zone::Assist(ASSIST_BUDGET / 2)
        );
        assert_eq!(
            zone(80 * MIB, 200 * MIB, 50 * MIB, work, work + 5),
            Zone::Free
        );
    }
}
