//! What every mutator reads of the collector's state, and the log it
//! writes: the mark bytes that validation accepts, the mark new objects
//! are born with, the deletion barrier's flag, the barrier log and the
//! grey queue it is handed over to.
//!
//! Mutators read these on every allocation, store and validation (each a
//! relaxed load of a word alone on its cache line); only the collector
//! thread changes them, at the steps of a cycle that `collector/`
//! describes ([`prepare`], [`snapshot_taken`], [`finish`]), each followed
//! by a handshake round that makes every thread see the change.

use super::sync::{global, AtomicBool, AtomicU32, AtomicU8, Mutex, MutexGuard, Ordering};
use crate::cache::CachePadded;

global! {
    /// Low byte: the mark of the last completed cycle; next byte: the mark of
    /// the running cycle (equal outside a cycle).
    static MARKS: CachePadded<AtomicU32> = CachePadded(AtomicU32::new(0));
}
global! {
    /// Low byte: the mark new objects are born with; [`GREY`] set while they
    /// must also be logged (traced) because the snapshot is being taken.
    static ALLOC_MODE: CachePadded<AtomicU32> = CachePadded(AtomicU32::new(0));
}
const GREY: u32 = 1 << 8;
global! {
    /// The deletion barrier is on.
    static BARRIER: CachePadded<AtomicBool> = CachePadded(AtomicBool::new(false));
}
global! {
    /// The phase, for threads registering mid-cycle.
    static PHASE: AtomicU8 = AtomicU8::new(IDLE);
}
const IDLE: u8 = 0;
/// From the Snapshot round until marking is complete.
const MARKING: u8 = 1;
global! {
    /// The id of the last cycle whose marking completed.
    static COMPLETED_ID: AtomicU32 = AtomicU32::new(0);
}

/// The mark byte of a new object, and whether it must be logged (grey).
#[inline(always)]
pub(crate) fn birth_mode() -> (u8, bool) {
    let m = ALLOC_MODE.load(Ordering::Relaxed);
    (m as u8, m & GREY != 0)
}

/// Whether an object with mark `m` is live for validation: marked by the
/// last completed cycle, or by (or born during) the running one.
#[inline(always)]
pub(crate) fn is_live_mark(m: u8) -> bool {
    let marks = MARKS.load(Ordering::Relaxed);
    m == marks as u8 || m == (marks >> 8) as u8
}

/// The mark of the last completed cycle: what every live object carries
/// outside a cycle, and what sweeps keep.
#[inline(always)]
pub(crate) fn live_mark() -> u8 {
    MARKS.load(Ordering::Relaxed) as u8
}

/// The mark of the running cycle (the last completed one's outside a
/// cycle).
pub(crate) fn running_mark() -> u8 {
    (MARKS.load(Ordering::Relaxed) >> 8) as u8
}

/// The id of the last cycle whose marking completed.
#[inline(always)]
pub(crate) fn completed_id() -> u32 {
    COMPLETED_ID.load(Ordering::Relaxed)
}

/// Whether the deletion barrier is on: one relaxed load.
#[inline(always)]
pub(crate) fn barrier_on() -> bool {
    BARRIER.load(Ordering::Relaxed)
}

/// For a thread registering now: whether the barrier is on, and whether
/// the running cycle's snapshot is under way or done.
pub(crate) fn registration_view() -> (bool, bool) {
    let marking = PHASE.load(Ordering::Acquire) == MARKING;
    (BARRIER.load(Ordering::Acquire), marking)
}

fn set_alloc_mode(mark: u8, grey: bool) {
    ALLOC_MODE.store(
        u32::from(mark) | if grey { GREY } else { 0 },
        Ordering::SeqCst,
    );
}

/// Cycle step 1 (before the Prepare round): validation accepts both
/// `prev_mark` (the last completed cycle) and `mark` (this one),
/// allocation turns grey, and the barrier goes on; while it is on, root
/// memory logs what it copies between owners through `log_moves`.
pub(crate) fn prepare(prev_mark: u8, mark: u8, log_moves: fn(*const u8, usize)) {
    MARKS.store(
        u32::from(prev_mark) | u32::from(mark) << 8,
        Ordering::SeqCst,
    );
    if test_hooks::early_black() {
        set_alloc_mode(mark, false);
    } else {
        set_alloc_mode(prev_mark, true);
    }
    BARRIER.store(!test_hooks::no_barrier(), Ordering::SeqCst);
    // Copies between owners of root memory (a channel's) are barriered
    // stores too.
    crate::roots::precise::log_moves(
        (!test_hooks::no_barrier()).then_some(log_moves),
        Ordering::SeqCst,
    );
}

/// Whether a cycle is between its Prepare round and the end of its
/// marking: the marks it will leave are not decided yet. Reads the phase
/// first: [`finish`] stores it last, after the marks, so a reader that
/// sees it idle and then the barrier off validates against settled marks
/// (and a cycle that starts after that cannot snapshot before the reader's
/// next safepoint).
pub(crate) fn cycle_under_way() -> bool {
    PHASE.load(Ordering::SeqCst) == MARKING || BARRIER.load(Ordering::SeqCst)
}

/// Whether a cycle's Snapshot round has been published and its marking
/// has not completed.
#[cfg(test)]
pub(crate) fn snapshot_phase() -> bool {
    PHASE.load(Ordering::Acquire) == MARKING
}

/// Cycle step 2, before the Snapshot round: registering threads join the
/// snapshot from now on.
pub(crate) fn snapshot_started() {
    PHASE.store(MARKING, Ordering::SeqCst);
}

/// Cycle step 2, after the Snapshot round: every thread has snapshotted
/// its roots, so allocation turns black (born with `mark`).
pub(crate) fn snapshot_taken(mark: u8) {
    set_alloc_mode(mark, false);
}

/// Cycle step 4: marking of cycle `id` (mark `mark`) is complete. The
/// barrier goes off, allocation is white for the next cycle, and
/// validation accepts only `mark`.
pub(crate) fn finish(id: u32, mark: u8) {
    BARRIER.store(false, Ordering::SeqCst);
    crate::roots::precise::log_moves(None, Ordering::SeqCst);
    set_alloc_mode(mark, false);
    MARKS.store(u32::from(mark) | u32::from(mark) << 8, Ordering::SeqCst);
    COMPLETED_ID.store(id, Ordering::SeqCst);
    PHASE.store(IDLE, Ordering::SeqCst);
}

/// Entries of a thread's log handed over at once.
pub(crate) const LOG_BATCH: usize = 2048;

global! {
    /// Grey values for the marker: root snapshots, barrier logs.
    static GREY_QUEUE: Mutex<Vec<Vec<u64>>> = Mutex::new(Vec::new());
}

pub(crate) fn grey_queue() -> MutexGuard<'static, Vec<Vec<u64>>> {
    GREY_QUEUE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Gives a thread's log to the marker (leaving it empty).
pub(crate) fn hand_over_log(log: &mut Vec<u64>) {
    if !log.is_empty() {
        let batch = std::mem::replace(log, Vec::with_capacity(LOG_BATCH));
        grey_queue().push(batch);
    }
}

/// Breaking the protocol on purpose, to show that the torture test
/// notices (feature `test-hooks`, which only this crate's own tests turn
/// on: not in any build of the library that ships).
#[cfg(feature = "test-hooks")]
mod test_hooks {
    use std::sync::atomic::{AtomicBool, Ordering};

    /// The deletion barrier stays off for good.
    static NO_BARRIER: AtomicBool = AtomicBool::new(false);
    /// Black allocation from the Prepare round on, instead of grey until
    /// every thread has snapshotted.
    static EARLY_BLACK: AtomicBool = AtomicBool::new(false);

    pub(super) fn no_barrier() -> bool {
        NO_BARRIER.load(Ordering::Relaxed)
    }

    pub(super) fn early_black() -> bool {
        EARLY_BLACK.load(Ordering::Relaxed)
    }

    /// Sets the hooks (see `tests/precise_torture.rs`).
    pub fn break_protocol_for_tests(no_barrier: bool, early_black: bool) {
        NO_BARRIER.store(no_barrier, Ordering::SeqCst);
        EARLY_BLACK.store(early_black, Ordering::SeqCst);
    }
}

#[cfg(not(feature = "test-hooks"))]
mod test_hooks {
    #[inline(always)]
    pub(super) fn no_barrier() -> bool {
        false
    }

    #[inline(always)]
    pub(super) fn early_black() -> bool {
        false
    }
}

#[cfg(feature = "test-hooks")]
pub use test_hooks::break_protocol_for_tests;

/// Before a fork, after the heap locks (a leaf): the grey queue's lock,
/// kept until after the fork.
pub(super) fn lock_for_fork() {
    crate::gc::fork::held::keep(grey_queue());
}
